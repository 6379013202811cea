"""Where a corpus model's train step under dyn's eager backend differs from eager: the largest |difference| of
the output and of the gradients, against eager itself (run twice: PyTorch's own run-to-run noise, cuDNN's
nondeterministic backward algorithms included) and against dyn.compile(backend="eager"), with the model's
random ops (dropout, stochastic depth) as they are and with their probabilities set to 0, and with cuDNN
deterministic or not. A difference that eager shows against itself is not dyn's.

Run:  PYTHONPATH=python .venv/bin/python benchmarks/train_parity.py --device cpu --models tv_efficientnet_b0
      PYTHONPATH=python python benchmarks/train_parity.py --device cuda --size full --json out.json (GPU)
"""
import argparse
import copy
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import models  # noqa: E402

import dyn  # noqa: E402


def no_random(model):
    """The model with every dropout and stochastic-depth probability set to 0 (no draws)."""
    for m in model.modules():
        if hasattr(m, "p") and isinstance(m.p, float):
            m.p = 0.0
    return model


def train_step(case, model, fn):
    for p in model.parameters():
        p.grad = None
    models.seed()
    out = models.step(case, fn, "train")
    return models.result(case, model, out, "train")


def compare(case, random, backend):
    """max |diff| (out, grad) of one train step of a fresh copy run by `backend` ("eager": PyTorch again)
    against eager's on another fresh copy."""
    base = case.model if random else no_random(copy.deepcopy(case.model))
    ref_model = copy.deepcopy(base)
    ref = train_step(case, ref_model, ref_model)
    m = copy.deepcopy(base)
    fn = m if backend == "pytorch" else dyn.compile(m, backend=backend)
    got = train_step(case, m, fn)
    return models.max_diff(ref, got)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--size", default="small", choices=("small", "full"))
    ap.add_argument("--models", default="tv_efficientnet_b0,tv_mobilenet_v3_large")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    rows = []
    for name in args.models.split(","):
        for deterministic in (False, True):
            torch.backends.cudnn.deterministic = deterministic
            torch.backends.cudnn.benchmark = False
            case = corpus.build(name, args.size, args.device)
            case.model.train(True)
            for random in (True, False):
                for backend in ("pytorch", "eager"):
                    d = compare(case, random, backend)
                    row = dict(model=name, deterministic=deterministic, random=random,
                               against="eager again" if backend == "pytorch" else "dyn backend=eager", **d)
                    rows.append(row)
                    print(f"{name:22s} cudnn.deterministic={deterministic!s:5s} random ops={random!s:5s} "
                          f"{row['against']:18s} out {d['out']:.3g} grad {d['grad']:.3g}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
