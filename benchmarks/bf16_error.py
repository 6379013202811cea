"""Reduced-precision inference against a float32 reference: for each model of model_sweep.py, the output of
eager, dyn and inductor with the model and inputs in bfloat16 (or --dtype float16), each compared with eager
in float32 (largest and mean absolute difference relative to the reference's largest value), and dyn's and
inductor's largest difference from eager in the same dtype. dyn's fused kernels hold 16-bit intermediates in
float32 (as inductor's do), so neither equals eager to the bit; the question is whether either is further
from the float32 result than eager is.

    PYTHONPATH=python .venv/bin/python benchmarks/bf16_error.py timm_vit_small hf_mistral [--device cuda]
"""
import argparse
import copy
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_sweep  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="+", help="models of model_sweep.py")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--no-inductor", action="store_true")
    args = ap.parse_args()
    import dyn
    warnings.simplefilter("ignore")
    dtype = getattr(torch, args.dtype)
    for n in args.names:
        torch.manual_seed(0)
        m, inputs = model_sweep.MODELS[n]()
        m = m.eval().to(args.device)
        inputs = tuple(i if i is None else i.to(args.device) for i in inputs)
        low = tuple(i if i is None or not i.is_floating_point() else i.to(dtype) for i in inputs)
        with torch.no_grad():
            ref = m(*inputs).float()
            ml = copy.deepcopy(m).to(dtype)
            outs = {"eager": ml(*low).float(), "dyn": dyn.compile(ml)(*low).float()}
            if not args.no_inductor:
                outs["inductor"] = torch.compile(ml)(*low).float()
        scale = ref.abs().max().item()

        def rel(x, to):
            d = (x - to).abs()
            return f"{d.max().item() / scale:.2e}/{d.mean().item() / scale:.2e}"
        vs_ref = " ".join(f"{k} {rel(v, ref)}" for k, v in outs.items())
        vs_eager = " ".join(f"{k} {(v - outs['eager']).abs().max().item() / scale:.1e}"
                            for k, v in outs.items() if k != "eager")
        print(f"{n:22s} vs float32 (max/mean): {vs_ref} | vs eager {args.dtype}: {vs_eager}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
