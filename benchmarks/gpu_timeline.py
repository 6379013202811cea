"""Where a corpus model's GPU stream waits, eager beside dyn: one torch.profiler trace (CPU and CUDA) of a
few back-to-back eval calls.

For each backend: the host time per call (until the call returns), the stream's span per call, the time
the stream runs kernels in it, and the longest idle gaps with the kernels on both sides (a gap after a
library call's last kernel is the host preparing the next one). Then the library calls' ATen ops with
their argument shapes and strides, and the GEMM kernels each backend's cuBLAS picked, so a different
kernel choice for the same GEMM shows up.

Run (GPU machine): PYTHONPATH=python python benchmarks/gpu_timeline.py --models timm_vit_base
"""
import argparse
import collections
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

import dyn  # noqa: E402

ATEN_OPS = ("aten::addmm", "aten::mm", "aten::bmm", "aten::baddbmm", "aten::linear",
            "aten::scaled_dot_product_attention", "aten::convolution", "aten::cudnn_convolution",
            "aten::copy_", "aten::add_")


def trace(fn, calls, synced):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        for i in range(calls):
            with record_function(f"call{i}"):
                fn()
                if synced:
                    torch.cuda.synchronize()
        torch.cuda.synchronize()
    return prof.events()


def latency(kernels, marks):
    """Mean us from a call's start to its first kernel's start (calls synchronized one by one)."""
    waits = []
    for m in marks:
        first = next((k for k in kernels if k.time_range.start >= m.time_range.start), None)
        if first is not None:
            waits.append(first.time_range.start - m.time_range.start)
    return sum(waits) / max(1, len(waits))


def analyse(label, events, calls, top, sequence=0, synced=False):
    kernels = sorted((e for e in events if e.device_type == torch.autograd.DeviceType.CUDA),
                     key=lambda e: e.time_range.start)
    marks = sorted((e for e in events if e.name.startswith("call") and e.name[4:].isdigit()),
                   key=lambda e: e.time_range.start)
    host = [m.time_range.end - m.time_range.start for m in marks]
    span = kernels[-1].time_range.end - kernels[0].time_range.start if kernels else 0
    busy, gaps, end = 0.0, [], None
    for k in kernels:
        s, t = k.time_range.start, k.time_range.end
        if end is not None and s > end:
            gaps.append((s - end, prev.name, k.name))
        busy += max(0.0, t - max(s, end if end is not None else s))
        if end is None or t > end:
            end, prev = t, k
    if synced:
        print(f"  {label}, synchronized calls: {sum(host) / len(host) / 1e3:.2f} ms/call, the first kernel starts "
              f"{latency(kernels, marks):.0f} us after the call does")
        return
    print(f"  {label}: {len(kernels) / calls:.0f} kernels/call, host {sum(host) / len(host) / 1e3:.2f} ms/call, "
          f"stream span {span / calls / 1e3:.2f} ms/call, busy {busy / calls / 1e3:.2f}, "
          f"idle {(span - busy) / calls / 1e3:.2f} in {len(gaps) / calls:.0f} gaps/call")
    by_pair = collections.defaultdict(lambda: [0, 0.0])
    for g, a, b in gaps:
        p = by_pair[(a[:60], b[:60])]
        p[0] += 1
        p[1] += g
    for (a, b), (n, g) in sorted(by_pair.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"    idle {g / calls:8.1f} us/call in {n / calls:4.1f} gaps: {a}  ->  {b}")
    ops = collections.Counter()
    for e in events:
        if e.device_type == torch.autograd.DeviceType.CPU and e.name in ATEN_OPS:
            ops[(e.name, str(e.input_shapes)[:150])] += 1
    for (name, shapes), n in sorted(ops.items(), key=lambda kv: -kv[1])[:top]:
        print(f"    {n / calls:5.1f}x {name} {shapes}")
    gemm = collections.defaultdict(lambda: [0, 0.0])
    for k in kernels:
        if any(s in k.name.lower() for s in ("gemm", "sgemm", "cutlass", "splitk", "xmma", "sm90")):
            g = gemm[k.name[:120]]
            g[0] += 1
            g[1] += k.time_range.end - k.time_range.start
    for name, (n, us) in sorted(gemm.items(), key=lambda kv: -kv[1][1]):
        print(f"    gemm {us / calls / 1e3:7.3f} ms {n / calls:5.1f}x {name}")
    if sequence:
        last = [k for k in kernels if k.time_range.start >= marks[-1].time_range.start] if marks else kernels
        print(f"    the first {sequence} kernels of the last call (us, name):")
        for k in last[:sequence]:
            print(f"      {k.time_range.end - k.time_range.start:7.1f}  {k.name[:100]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="timm_vit_base")
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--top", type=int, default=14)
    ap.add_argument("--mode", default=None, help="dyn.compile's mode")
    ap.add_argument("--synced", action="store_true", help="also trace calls synchronized one by one")
    ap.add_argument("--sequence", type=int, default=0, help="print this many kernels of one call, in order")
    args = ap.parse_args()
    for name in args.models.split(","):
        case = corpus.build(name, "full", "cuda")
        model = case.model.eval()
        a, kw = case.inputs("eval")
        dyn.reset()
        compiled = dyn.compile(model, mode=args.mode)
        print(f"{name} (eval, full):")
        for label, f in (("eager", model), ("dyn", compiled)):
            def call(f=f):
                with torch.no_grad():
                    return f(*a, **kw)
            analyse(label, trace(call, args.calls, False), args.calls, args.top, args.sequence)
            if args.synced:
                analyse(label, trace(call, args.calls, True), args.calls, args.top, synced=True)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
