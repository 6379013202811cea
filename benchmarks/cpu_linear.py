"""nn.Linear shapes of a GPT-2-small forward (16 tokens) on the CPU: eager, torch.compile (inductor)
and dyn, same process, median of timed calls after warm-up. A known gap of dyn's CPU matmul: the
decomposition matmul(x, w.t()) materializes the transposed weight at every call, and the runtime
matmul (lib/Runtime/Matmul.cpp) streams all of B once per row of A, which tall-skinny products
(few tokens, wide weights) pay in full.

Run: PYTHONPATH=python .venv/bin/python benchmarks/cpu_linear.py
"""
import statistics
import time

import torch
import torch.nn.functional as F

import dyn

SHAPES = [(16, 768, 2304), (16, 768, 3072), (16, 3072, 768), (16, 768, 50257)]  # tokens, in, out


def ms(fn, *args, reps=10):
    fn(*args)
    fn(*args)
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def linear(x, w, b):
    return F.linear(x, w, b)


def matmul(x, wt):
    return x @ wt


def main():
    torch.manual_seed(0)
    print(f"# {time.strftime('%Y-%m-%d')}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print("| case | eager ms | inductor ms | dyn ms | dyn vs eager |")
    print("|---|---|---|---|---|")
    with torch.no_grad():
        for t, k, n in SHAPES:
            x, w, b = torch.randn(t, k), torch.randn(n, k), torch.randn(n)
            wt = w.t().contiguous()
            for name, fn, args in ((f"F.linear {t}x{k} -> {n}", linear, (x, w, b)),
                                   (f"x @ w {t}x{k}x{n} (w contiguous)", matmul, (x, wt))):
                torch._dynamo.reset()
                e = ms(fn, *args)
                i = ms(torch.compile(fn), *args)
                d = ms(dyn.compile(fn), *args)
                print(f"| {name} | {e:.2f} | {i:.2f} | {d:.2f} | {e / d:.2f}x |")


if __name__ == "__main__":
    main()
