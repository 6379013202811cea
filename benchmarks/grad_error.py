"""Float32 training gradients against a float64 reference: for each corpus model (benchmarks/corpus.py), one
forward and backward of its loss by eager (torch's default math settings, and with TF32 off) and by dyn, each
parameter's gradient compared with float64 eager's: the largest absolute difference relative to the reference
gradient's largest value, for the few worst parameters of each. On CUDA, torch lets cuDNN convolutions use TF32
by default (`torch.backends.cudnn.allow_tf32`), and dyn's convolutions are cuDNN's, so a comparison of dyn with
eager alone cannot tell dyn's error from eager's own. Models with dropout draw other numbers under dyn
(docs/random.md): compare dropout-free models.

    PYTHONPATH=python python benchmarks/grad_error.py tv_resnet50 --device cuda [--size full] [--worst 4]
"""
import argparse
import copy
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402


def gradients(case, model, compiled):
    import dyn
    args, kwargs = case.inputs("train")
    model.zero_grad(set_to_none=True)
    out = (dyn.compile(model) if compiled else model)(*args, **kwargs)
    case.loss(out, "train").backward()
    return {n: p.grad.double() for n, p in model.named_parameters() if p.grad is not None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="+", help="corpus models")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--size", default="full", choices=["small", "full"])
    ap.add_argument("--worst", type=int, default=4)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    for name in args.names:
        torch.manual_seed(0)
        case = corpus.build(name, args.size).to(args.device)
        base = case.model.train()
        ref_case = copy.deepcopy(case).to(args.device, torch.float64)
        ref = gradients(ref_case, ref_case.model, False)
        runs = [("eager", False, None), ("eager, TF32 off", False, False), ("dyn", True, None)]
        if args.device != "cuda":
            runs = [r for r in runs if r[2] is None]
        default_tf32 = torch.backends.cudnn.allow_tf32
        for label, compiled, tf32 in runs:
            torch.backends.cudnn.allow_tf32 = default_tf32 if tf32 is None else tf32
            try:
                got = gradients(case, copy.deepcopy(base), compiled)
            finally:
                torch.backends.cudnn.allow_tf32 = default_tf32
            rel = sorted(((got[n] - g).abs().max().item() / max(g.abs().max().item(), 1e-30), n)
                         for n, g in ref.items())
            worst = ", ".join(f"{n} {r:.2e}" for r, n in reversed(rel[-args.worst:]))
            print(f"{name:22s} {label:16s} worst relative: {worst}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
