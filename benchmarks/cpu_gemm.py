"""CPU GEMM: dyn's own runtime matmul (lib/Runtime/Matmul.cpp) against the `matmul` library call (ATen's
mm/bmm, MKL), with eager and torch.compile (inductor) as peers, all in one process. Each case is
relu(GEMM) (the GEMM and one fused pointwise consumer); every compiled result is checked against eager
first. The variants are timed interleaved: in each round every variant runs `calls` times and its median
is kept; the table gives the median over rounds and the spread (min-max of the round medians, in % of the
median), so that load from other processes shows as spread instead of hiding in one number.

Run: PYTHONPATH=python .venv/bin/python benchmarks/cpu_gemm.py [--rounds N] [--no-inductor] [--quick] [--cases S]
(the development machine has 2 cores shared with others: run it when the load is low and read the
spread column)
"""
import argparse
import os
import statistics
import time
import warnings

import torch
import torch.nn.functional as F

import dyn

# (label, kind, shape): kind "linear" is F.linear(x[M,K], w[N,K], b) (the weight read transposed),
# "mm" x[M,K] @ w[K,N], "bmm" a[B,M,K] @ b[B,K,N]
CASES = [
    ("F.linear 16x768 -> 2304", "linear", (16, 768, 2304)),
    ("F.linear 16x3072 -> 768", "linear", (16, 3072, 768)),
    ("F.linear 16x768 -> 50257", "linear", (16, 768, 50257)),
    ("x @ w 16x768x50257", "mm", (16, 768, 50257)),
    ("F.linear 256x768 -> 768", "linear", (256, 768, 768)),
    ("x @ w 256x768x768", "mm", (256, 768, 768)),
    ("F.linear 512x512 -> 512", "linear", (512, 512, 512)),
    ("x @ w 512x512x512", "mm", (512, 512, 512)),
    ("x @ w 1024x1024x1024", "mm", (1024, 1024, 1024)),
    ("bmm 8x(128x64 @ 64x128) (attention scores)", "bmm", (8, 128, 64, 128)),
    ("bmm 8x(128x128 @ 128x64) (attention values)", "bmm", (8, 128, 128, 64)),
    ("q @ k^T 8x(128x64 @ (128x64)^T) (batched, transposed)", "bmm_nt", (8, 128, 64, 128)),
]
QUICK = {"F.linear 16x768 -> 2304", "F.linear 256x768 -> 768", "x @ w 512x512x512", "bmm 8x(128x64 @ 64x128) (attention scores)"}


def make(kind, shape):
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    if kind == "linear":
        m, k, n = shape
        return (lambda x, w, b: torch.relu(F.linear(x, w, b))), (r(m, k), r(n, k) / k ** 0.5, r(n))
    if kind == "mm":
        m, k, n = shape
        return (lambda x, w: torch.relu(x @ w)), (r(m, k), r(k, n) / k ** 0.5)
    b, m, k, n = shape
    if kind == "bmm_nt":
        return (lambda x, y: torch.relu(x @ y.transpose(-1, -2))), (r(b, m, k), r(b, n, k) / k ** 0.5)
    return (lambda x, y: torch.relu(torch.bmm(x, y))), (r(b, m, k), r(b, k, n) / k ** 0.5)


def round_median(fn, args, calls):
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--no-inductor", action="store_true")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--cases", default="", help="only the cases whose label contains this")
    a = p.parse_args()
    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, load average {os.getloadavg()[0]:.2f} at start")
    names = ["eager"] + ([] if a.no_inductor else ["inductor"]) + ["dyn runtime", "dyn library"]
    print("| case | " + " | ".join(f"{n} ms (spread)" for n in names) + " | library vs runtime |")
    print("|---|" + "---|" * (len(names) + 1))
    for label, kind, shape in CASES:
        if a.quick and label not in QUICK or a.cases not in label:
            continue
        fn, args = make(kind, shape)
        with torch.no_grad():
            want = fn(*args)
            variants = {"eager": fn}
            if not a.no_inductor:
                variants["inductor"] = torch.compile(fn)
            variants["dyn runtime"] = dyn.compile(fn, fullgraph=True, options={"cpu_gemm": "runtime"})
            variants["dyn library"] = dyn.compile(fn, fullgraph=True, options={"cpu_gemm": "library"})
            for name, v in variants.items():
                if name.startswith("dyn"):
                    dyn.reset()
                got = v(*args)
                if name.startswith("dyn"):
                    assert dyn.stats()["compiled_graphs"] == 1 and not dyn.stats()["eager_graphs"], dyn.stats()
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
                for _ in range(2):
                    v(*args)  # warm-up
            calls = max(3, min(30, int(200 / max(1e-3, round_median(fn, args, 2)))))
            rounds = {n: [] for n in variants}
            for _ in range(a.rounds):
                for n, v in variants.items():
                    rounds[n].append(round_median(v, args, calls))
        cells, med = [], {}
        for n in names:
            xs = rounds[n]
            med[n] = statistics.median(xs)
            cells.append(f"{med[n]:.3f} ({(max(xs) - min(xs)) / med[n] * 100:.0f}%)")
        ratio = med["dyn runtime"] / med["dyn library"]
        print(f"| {label} | " + " | ".join(cells) + f" | {ratio:.2f}x |", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
