"""Per-call overhead of a cache hit (issue: frame capture). `x + 1` on a 16-element CPU tensor with
backend="eager" (the captured graph runs with PyTorch ops), against the plain call and against
torch.compile(backend="eager") in the same process; then the same for a module whose guards are
many (an 8-layer nn.Sequential of Linear(16, 16) + ReLU on a 4x16 input, under no_grad: 16
parameters, 8 attributes and the container's children are guarded). Median of many timed batches.

Run: PYTHONPATH=python .venv/bin/python benchmarks/guard_overhead.py
"""
import statistics
import time

import torch
import torch.nn as nn

import dyn


def f(x):
    return x + 1


def per_call_us(fn, x, calls=2000, batches=25):
    for _ in range(200):
        fn(x)
    samples = []
    for _ in range(batches):
        t = time.perf_counter()
        for _ in range(calls):
            fn(x)
        samples.append((time.perf_counter() - t) / calls * 1e6)
    return statistics.median(samples)


def main():
    x = torch.randn(16)
    plain = per_call_us(f, x)
    cf = dyn.compile(f, backend="eager")
    mine = per_call_us(cf, x)
    lookup = per_call_us(lambda a: dyn._C.lookup(cf._entries, a), (x,))  # the guards alone, in C
    mine_dyn = per_call_us(dyn.compile(f), x)
    torch._dynamo.reset()
    theirs = per_call_us(torch.compile(f, backend="eager"), x)
    print(f"# {time.strftime('%Y-%m-%d')}, torch {torch.__version__}")
    print("| call | µs per call | over plain |")
    print("|---|---|---|")
    for name, v in [("plain f(x)", plain), ("dyn.compile(backend='eager')", mine),
                    ("dyn.compile() (compiled kernel)", mine_dyn),
                    ("torch.compile(backend='eager')", theirs)]:
        print(f"| {name} | {v:.2f} | {v - plain:+.2f} |")
    print(f"| (dyn's guard check alone, C) | {lookup:.2f} | |")

    m = nn.Sequential(*[layer for _ in range(8) for layer in (nn.Linear(16, 16), nn.ReLU())])
    x = torch.randn(4, 16)
    with torch.no_grad():
        plain = per_call_us(m, x, calls=500)
        cm = dyn.compile(m, backend="eager")
        mine = per_call_us(cm, x, calls=500)
        entries = cm._dyn_forward._entries
        lookup = per_call_us(lambda a: dyn._C.lookup(entries, a), (m, x), calls=500)
        torch._dynamo.reset()
        theirs = per_call_us(torch.compile(m, backend="eager"), x, calls=500)
    print()
    print("| 8-layer Sequential, no_grad | µs per call | over plain |")
    print("|---|---|---|")
    for name, v in [("plain m(x)", plain), ("dyn.compile(m, backend='eager')", mine),
                    ("torch.compile(m, backend='eager')", theirs)]:
        print(f"| {name} | {v:.2f} | {v - plain:+.2f} |")
    e = entries[0]
    n = sum(g is not None for g in e[0]) + len(e[3] or ()) + len(e[4] or ())
    print(f"| (dyn's guard check alone, C: {n} guards, {sum(k == 0 for _, k, _ in e[4] or ())} on tensors) "
          f"| {lookup:.2f} | |")


if __name__ == "__main__":
    main()
