"""OpInfo coverage: how many of PyTorch's OpInfos (torch.testing._internal.common_methods_invocations.op_db)
compile natively in dyn with results equal to eager's, float32 on the CPU, function variants.

Each OpInfo's function variant runs with its sample inputs through dyn.compile(backend="dyn",
fullgraph=True); an OpInfo counts when every sample eager accepts compiles natively (no graph break, no
eager fallback, no warning) and gives eager's results (test/python/opinfo_check.py: values, dtypes,
shapes, strides, aliasing, in-place updates). Every OpInfo is tried, claimed by dyn or not
(dyn.ops.claims), so the figure moves with capture and the registry, not with a list.

    PYTHONPATH=python .venv/bin/python benchmarks/opinfo_coverage.py [--samples N] [--via torch.compile]
                                                                      [--json FILE] [-v]

--samples: the first N sample inputs per OpInfo (default: all). --via torch.compile: TorchDynamo captures
and dyn's torch.compile backend (dyn/fx) compiles, which tests the op set apart from dyn's own capture.
docs/ops.md records the results.
"""
import argparse
import collections
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))

import torch  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

import opinfo_check as oc  # noqa: E402


def measure(op, limit, device="cpu", dtype=torch.float32, via="dyn.compile"):
    """("pass" | "not native" | "wrong" | "no sample", first failure or None, samples checked)."""
    checked = 0
    for sample in oc.samples(op, dtype, limit if limit else 1 << 30, device):
        try:
            checked += oc.check_sample(op, "function", sample, device, via)
        except oc.Mismatch as e:
            return e.kind, f"{e} (sample {oc.describe(sample)[:120]})", checked
        except Exception as e:  # the harness itself: reported, not counted as a pass
            return "error", f"{type(e).__name__}: {e}", checked
    return ("pass" if checked else "no sample"), None, checked


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=0, help="sample inputs per OpInfo (0: all)")
    ap.add_argument("--json", help="write the per-OpInfo results here")
    ap.add_argument("--via", choices=("dyn.compile", "torch.compile"), default="dyn.compile",
                    help="dyn's own capture, or TorchDynamo's with backend='dyn' (dyn/fx)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every OpInfo's result")
    args = ap.parse_args()

    start = time.time()
    results = []
    for op in op_db:
        if torch.float32 not in op.supported_dtypes("cpu"):
            results.append(dict(name=oc.full_name(op), op=op.name, claimed=False, status="no float32", why=None,
                                samples=0))
            continue
        claimed = "function" in oc.claimed_variants(op)
        status, why, n = measure(op, args.samples, via=args.via)
        results.append(dict(name=oc.full_name(op), op=op.name, claimed=claimed, status=status, why=why, samples=n))
        if args.verbose:
            print(f"{oc.full_name(op):40s} {'claimed' if claimed else '       '} {status:10s} {why or ''}",
                  flush=True)
    seconds = time.time() - start

    with_f32 = [r for r in results if r["status"] != "no float32"]
    passed = [r for r in with_f32 if r["status"] == "pass"]
    claimed = [r for r in with_f32 if r["claimed"]]
    by_status = collections.Counter(r["status"] for r in with_f32)
    print(f"OpInfo coverage through {args.via} (torch {torch.__version__}, float32, CPU, function variants, "
          f"{'all' if not args.samples else f'the first {args.samples}'} samples per OpInfo):")
    print(f"  op_db: {len(results)} OpInfos, {len(with_f32)} with float32 on the CPU")
    print(f"  compile natively with eager's results: {len(passed)} of {len(with_f32)} "
          f"({100 * len(passed) / len(with_f32):.1f}%), {len({r['op'] for r in passed})} "
          f"distinct op names")
    print(f"  claimed by dyn (a capture handler): {len(claimed)}; of those passing: "
          f"{sum(r['status'] == 'pass' for r in claimed)}")
    print(f"  results: {dict(by_status)}; {sum(r['samples'] for r in with_f32)} samples in {seconds:.0f} s")
    for status, title in (("wrong", "WRONG RESULTS (bugs)"), ("error", "errors of the harness itself")):
        rows = [r for r in with_f32 if r["status"] == status]
        if rows:
            print(f"  {title}:")
            for r in rows:
                print(f"    {r['name']}: {r['why']}")
    failing = [r for r in claimed if r["status"] == "not native"]
    if failing:
        print("  claimed, not native on some sample:")
        for r in failing:
            print(f"    {r['name']}: {r['why']}")
    unclaimed_pass = [r["name"] for r in passed if not r["claimed"]]
    if unclaimed_pass:
        print(f"  passing without a handler of their own (inlined to handled ops): {', '.join(unclaimed_pass)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(torch=torch.__version__, samples=args.samples, seconds=seconds, results=results), f,
                      indent=1)


if __name__ == "__main__":
    main()
