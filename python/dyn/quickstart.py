"""Quickstart: compile cos(x)+sin(y) and a hand-written rmsnorm, print the IR after each pipeline
stage, check against eager and time eager vs dyn.

    PYTHONPATH=python .venv/bin/python -m dyn.quickstart [--no-ir] [--repeat N]
"""
import argparse
import statistics
import time

import torch

import dyn


def cos_sin(x, y):
    return torch.cos(x) + torch.sin(y)


def rmsnorm(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def _median_ms(fn, args, repeat):
    for _ in range(3):
        fn(*args)
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--no-ir", action="store_true", help="do not print the IR of each stage")
    p.add_argument("--repeat", type=int, default=20)
    a = p.parse_args(argv)
    torch.manual_seed(0)
    cases = [
        ("cos(x) + sin(y)", cos_sin, (torch.randn(1 << 22), torch.randn(1 << 22))),
        ("rmsnorm float32", rmsnorm, (torch.randn(2048, 1024), torch.randn(1024))),
        ("rmsnorm float64", rmsnorm, (torch.randn(2048, 1024, dtype=torch.float64),
                                      torch.randn(1024, dtype=torch.float64))),
    ]
    for name, fn, args in cases:
        compiled = dyn.compile(fn, fullgraph=True, options={"keep_stages": True})
        t = time.perf_counter()
        out = compiled(*args)
        first = time.perf_counter() - t
        torch.testing.assert_close(out, fn(*args), rtol=1e-4, atol=1e-5)
        print(f"== {name}: matches eager; first call (capture + compile) {first:.3f} s")
        if not a.no_ir:
            for stage, ir in compiled.stages()[0]:
                print(f"---- after stage: {stage}")
                print(ir)
        eager = _median_ms(fn, args, a.repeat)
        mine = _median_ms(compiled, args, a.repeat)
        print(f"   eager {eager:.3f} ms   dyn {mine:.3f} ms   ({eager / mine:.2f}x)\n")


if __name__ == "__main__":
    main()
