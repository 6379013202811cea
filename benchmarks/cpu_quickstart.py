"""CPU benchmark of the quickstart functions: eager vs torch.compile (inductor) vs dyn.

Run: PYTHONPATH=python .venv/bin/python benchmarks/cpu_quickstart.py [--no-inductor]
Reports the median wall time of repeated calls in one process, after warm-up, and the first-call
(compile) time of each compiler. Results go in docs/performance.md.
"""
import argparse
import os
import platform
import statistics
import time

import torch

import dyn


def cos_sin(x, y):
    return torch.cos(x) + torch.sin(y)


def rmsnorm(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def softmax(x):
    m = x.amax(-1, keepdim=True)
    e = torch.exp(x - m)
    return e / e.sum(-1, keepdim=True)


def median_ms(fn, args, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def first_call_s(fn, args):
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--no-inductor", action="store_true")
    a = p.parse_args()
    torch.manual_seed(0)
    cases = [
        ("cos(x)+sin(y) f32 2^24", cos_sin, (torch.randn(1 << 24), torch.randn(1 << 24))),
        ("rmsnorm f32 4096x4096", rmsnorm, (torch.randn(4096, 4096), torch.randn(4096))),
        ("softmax (hand-written) f32 4096x4096", softmax, (torch.randn(4096, 4096),)),
    ]
    print(f"# {time.strftime('%Y-%m-%d')} {platform.node()} {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, torch {torch.__version__}, threads {torch.get_num_threads()}")
    print("| case | eager ms | inductor ms | dyn ms | dyn vs eager | inductor compile s | dyn compile s |")
    print("|---|---|---|---|---|---|---|")
    for name, fn, args in cases:
        expected = fn(*args)
        compiled = dyn.compile(fn)
        dyn_compile = first_call_s(compiled, args)
        torch.testing.assert_close(compiled(*args), expected, rtol=1e-4, atol=1e-5)
        for _ in range(3):
            fn(*args)
            compiled(*args)
        eager = median_ms(fn, args, a.repeat)
        mine = median_ms(compiled, args, a.repeat)
        ind, ind_compile = float("nan"), float("nan")
        if not a.no_inductor:
            inductor = torch.compile(fn)
            ind_compile = first_call_s(inductor, args)
            for _ in range(3):
                inductor(*args)
            ind = median_ms(inductor, args, a.repeat)
        print(f"| {name} | {eager:.2f} | {ind:.2f} | {mine:.2f} | {eager / mine:.1f}x | "
              f"{ind_compile:.2f} | {dyn_compile:.2f} |")


if __name__ == "__main__":
    main()
