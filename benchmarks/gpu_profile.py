"""Where a corpus model's GPU time goes, eager beside dyn (and inductor with --inductor): torch.profiler
over a few steady eval calls, or train steps (forward, loss, backward) with --mode train; --models seed_resnet50 is the seed loop's model
(batch 256 at 224 px).

For each model: the number of kernels per call and the CUDA time per call of eager and of dyn, and the
kernels that take the most time in each (dyn's own kernels are launched through the CUDA driver API;
the profiler's activity trace records them like any other, named by their PTX entry). Library calls
(ATen's GEMMs, convolutions, attention) show up under ATen's kernel names in both columns.

Run (GPU machine): PYTHONPATH=python python benchmarks/gpu_profile.py --models tv_convnext_tiny,hf_bert_sdpa
"""
import argparse
import collections
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_step  # noqa: E402

import dyn  # noqa: E402


def kernels(fn, calls, trace=None):
    """{kernel name: (count, total us)} over `calls` calls of fn, after two warm-up calls; with `trace` (a
    path), the host's activity too, written there as a Chrome trace (where the GPU waits for the host)."""
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    activities = [ProfilerActivity.CUDA] + ([ProfilerActivity.CPU] if trace else [])
    with profile(activities=activities) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    if trace:
        prof.export_chrome_trace(trace)
    agg = collections.defaultdict(lambda: [0, 0.0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            a = agg[e.name]
            a[0] += 1
            a[1] += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
    return agg


# kernels of GEMM and convolution libraries (cuBLAS, cuDNN, CUTLASS), by name: what neither compiler generates
LIBRARY = ("gemm", "conv", "cudnn", "cutlass", "xmma", "sm90_", "sm80_", "flash", "fmha", "attention")


def report(label, agg, calls, top):
    n = sum(c for c, _ in agg.values()) / calls
    us = sum(t for _, t in agg.values()) / calls
    lib = sum(t for name, (_, t) in agg.items() if any(k in name.lower() for k in LIBRARY)) / calls
    print(f"  {label}: {n:.0f} kernels/call, {us / 1000:.2f} ms GPU time/call "
          f"(GEMM/conv/attention libraries {lib / 1000:.2f} ms, the rest {(us - lib) / 1000:.2f} ms)")
    for name, (c, t) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"    {t / calls / 1000:7.3f} ms  {c / calls:5.1f}x  {name[:110]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="tv_convnext_tiny,tv_efficientnet_b0,tv_vit_b_16,hf_bert_sdpa")
    ap.add_argument("--size", default="full", choices=["small", "full"])
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--mode", default="eval", choices=["eval", "train"])
    ap.add_argument("--inductor", action="store_true", help="also torch.compile's (inductor's) kernels")
    ap.add_argument("--trace", metavar="DIR", help="write each backend's Chrome trace (host and GPU) to DIR")
    ap.add_argument("--text-dims", help="BATCH,SEQ of the transformers' token inputs (default: the corpus's)")
    args = ap.parse_args()
    if args.text_dims:
        import corpus
        dims = tuple(int(v) for v in args.text_dims.split(","))
        corpus._text_dims = lambda size: dims
    for name in args.models.split(","):
        case = train_step.build(name, args.size, "cuda")  # a corpus model or the seed loop's ResNet-50
        model = case.model.train(args.mode == "train")
        a, kw = case.inputs(args.mode)
        compiled = dyn.compile(model)

        def run(fn):
            if args.mode == "train":
                for p in model.parameters():
                    p.grad = None
                case.loss(fn(*a, **kw), "train").backward()
                return None
            with torch.no_grad():
                return fn(*a, **kw)

        def eager():
            return run(model)

        def compiled_call():
            return run(compiled)

        def trace(backend):
            return os.path.join(args.trace, f"{name}-{args.mode}-{backend}.json") if args.trace else None

        if args.trace:
            os.makedirs(args.trace, exist_ok=True)
        print(f"{name} ({args.mode}, {args.size}):")
        report("eager", kernels(eager, args.calls, trace("eager")), args.calls, args.top)
        report("dyn", kernels(compiled_call, args.calls, trace("dyn")), args.calls, args.top)
        if args.inductor:
            ind = torch.compile(model)
            report("inductor", kernels(lambda: run(ind), args.calls, trace("inductor")), args.calls, args.top)
        print("  dyn.stats:", {k: v for k, v in dyn.stats().items() if k in ("graphs", "compiled_graphs", "eager_graphs")})
        sys.stdout.flush()


if __name__ == "__main__":
    main()
