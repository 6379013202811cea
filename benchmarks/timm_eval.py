"""Inference of timm models beyond the corpus on the GPU: eager, dyn and inductor in one process.

For each model (random weights, batch --batch at 224 px, --dtype): the median ms per call
(triton.testing.do_bench), the first call (capture + compile) of dyn and inductor, and dyn's largest
difference from eager.

Run (GPU machine): PYTHONPATH=python python benchmarks/timm_eval.py davit_tiny --dtype bfloat16
"""
import argparse
import time

import timm
import torch
from triton.testing import do_bench

import dyn


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    a = ap.parse_args()
    dt = getattr(torch, a.dtype)
    for name in a.models:
        m = timm.create_model(name, pretrained=False).eval().cuda().to(dt)
        x = torch.randn(a.batch, 3, 224, 224, device="cuda", dtype=dt)

        def first(fn):
            torch.cuda.synchronize()
            t = time.perf_counter()
            with torch.no_grad():
                y = fn(x)
            torch.cuda.synchronize()
            return y, time.perf_counter() - t

        def ms(fn):
            with torch.no_grad():
                return do_bench(lambda: fn(x), warmup=10, rep=100, return_mode="median")

        with torch.no_grad():
            ref = m(x)
        eager = ms(m)
        d = dyn.compile(m)
        yd, dyn_first = first(d)
        dyn_ms = ms(d)
        torch._dynamo.reset()
        i = torch.compile(m)
        _, ind_first = first(i)
        ind_ms = ms(i)
        print(f"{name} bs{a.batch} {a.dtype}: eager {eager:.2f} ms, dyn {dyn_ms:.2f} ms (first {dyn_first:.1f} s, "
              f"max diff {(yd - ref).abs().max().item():.3g}), inductor {ind_ms:.2f} ms (first {ind_first:.1f} s)",
              flush=True)


if __name__ == "__main__":
    main()
