"""Host time of a compiled call on the GPU machine: per corpus model (eval, full size), eager's and dyn's
synchronized time per call, the host time until the call returns, and the time per call when calls are
issued back to back; then cProfile of 10 dyn calls (where the Python side spends its time).

Run (GPU machine): PYTHONPATH=python python benchmarks/gpu_host_time.py tv_vit_b_16 hf_bert_sdpa
        add --mode reduce-overhead to time dyn's CUDA graphs
"""
import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

import dyn  # noqa: E402


def times(fn, n=20):
    """(median synchronized ms, median host ms until fn returns, ms per call issued back to back)."""
    synced, host = [], []
    for _ in range(n):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        h = time.perf_counter()
        torch.cuda.synchronize()
        synced.append(time.perf_counter() - t)
        host.append(h - t)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return statistics.median(synced) * 1e3, statistics.median(host) * 1e3, (time.perf_counter() - t) / n * 1e3


class _TimedRun:
    """A compiled function whose run() records when it starts and returns (into marks)."""

    def __init__(self, compiled, marks):
        self.compiled, self.marks = compiled, marks

    def run(self, *a, **kw):
        self.marks["run"] = time.perf_counter()
        r = self.compiled.run(*a, **kw)
        self.marks["ran"] = time.perf_counter()
        return r

    def __getattr__(self, name):
        return getattr(self.compiled, name)


def phases(fn, n=20):
    """Median ms of a synchronized dyn call's phases: until the CUDA kernel's launch() is entered (guards,
    gathering the inputs), until the plan runs (inputs, outputs, workspace), the plan (host issue), until
    the call returns, and the wait for the GPU after it."""
    import dyn.backends as backends
    marks = {}
    orig = backends.DynCUDAKernel.launch

    def launch(self, inputs):
        marks["launch"] = time.perf_counter()
        if not isinstance(self.compiled, _TimedRun):
            self.compiled = _TimedRun(self.compiled, marks)
        return orig(self, inputs)
    backends.DynCUDAKernel.launch = launch
    rows = []
    try:
        fn()
        for _ in range(n):
            torch.cuda.synchronize()
            t = time.perf_counter()
            fn()
            r = time.perf_counter()
            torch.cuda.synchronize()
            e = time.perf_counter()
            rows.append((marks["launch"] - t, marks["run"] - marks["launch"], marks["ran"] - marks["run"],
                         r - marks["ran"], e - r))
    finally:
        backends.DynCUDAKernel.launch = orig
    names = ("to launch()", "to the plan", "the plan", "to return", "GPU wait")
    return ", ".join(f"{k} {statistics.median(c) * 1e3:.2f}" for k, c in zip(names, zip(*rows)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", default=["tv_vit_b_16", "hf_bert_sdpa"])
    ap.add_argument("--mode", default=None, help="dyn.compile's mode (reduce-overhead: CUDA graphs)")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"],
                    help="the parameters' and floating inputs' dtype")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    for name in a.models:
        case = corpus.build(name, "full", "cuda", dtype=None if a.dtype == "float32" else getattr(torch, a.dtype))
        case.model.eval()
        args, kwargs = case.inputs("eval")
        dyn.reset()
        f = dyn.compile(case.model, mode=a.mode)
        with torch.no_grad():
            for _ in range(3):
                f(*args, **kwargs)
                case.model(*args, **kwargs)
            e = times(lambda: case.model(*args, **kwargs))
            d = times(lambda: f(*args, **kwargs))
            print(f"{name}: eager synced {e[0]:.2f} host {e[1]:.2f} back-to-back {e[2]:.2f} ms | "
                  f"dyn synced {d[0]:.2f} host {d[1]:.2f} back-to-back {d[2]:.2f} ms")
            print(f"  dyn's synchronized call (ms): {phases(lambda: f(*args, **kwargs))}")
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(10):
                f(*args, **kwargs)
            prof.disable()
            torch.cuda.synchronize()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(18)
        print(s.getvalue()[:5000])


if __name__ == "__main__":
    main()
