"""Where a corpus model's first compiled call goes on the GPU: capture, dyn's compile to PTX
(_C.compile_gpu), and the first launch of the plan (the driver's PTX -> SASS for each module, the
library calls' first-call setup: cuDNN plans, cuBLAS handles) against the steady call.

Run (GPU machine): PYTHONPATH=python python benchmarks/gpu_first_call.py tv_mobilenet_v3_large tv_vit_b_16
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

import dyn  # noqa: E402
import dyn.backends as backends  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    spent = {"compile": 0.0, "first launch": 0.0}
    compile_gpu, launch = backends._C.compile_gpu, backends.DynCUDAKernel.launch
    launched = set()

    def timed_compile(*a, **kw):
        t = time.perf_counter()
        try:
            return compile_gpu(*a, **kw)
        finally:
            spent["compile"] += time.perf_counter() - t

    def timed_launch(self, inputs):
        if id(self) in launched:
            return launch(self, inputs)
        launched.add(id(self))
        torch.cuda.synchronize()
        t = time.perf_counter()
        try:
            return launch(self, inputs)
        finally:
            torch.cuda.synchronize()
            spent["first launch"] += time.perf_counter() - t
    backends._C.compile_gpu, backends.DynCUDAKernel.launch = timed_compile, timed_launch
    for name in args.models:
        case = corpus.build(name, "full", "cuda")
        model = case.model.eval()
        a, kw = case.inputs("eval")
        with torch.no_grad():
            model(*a, **kw)  # eager first: its own first-call costs are not dyn's
            torch.cuda.synchronize()
            dyn.reset()
            spent.update({"compile": 0.0, "first launch": 0.0})
            f = dyn.compile(model)
            t = time.perf_counter()
            f(*a, **kw)
            torch.cuda.synchronize()
            first = time.perf_counter() - t
            t = time.perf_counter()
            f(*a, **kw)
            torch.cuda.synchronize()
            steady = time.perf_counter() - t
        rest = first - spent["compile"] - spent["first launch"]
        print(f"{name}: first call {first:.2f} s = compile to PTX {spent['compile']:.2f} + first launch "
              f"{spent['first launch']:.2f} + capture and the rest {rest:.2f}; steady call {steady * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
