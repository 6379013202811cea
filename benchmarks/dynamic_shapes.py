"""Variable sizes through one compiled model: how many compilations, how many eager calls, and what the graph
with symbolic sizes costs against the graph specialized to the same size (docs/dynamic_shapes.md).

For each model (benchmarks/corpus.py, --size), in one process: eager; dyn (`dyn.compile(model)`, automatic
dynamic); dyn with `dynamic=False` (one specialized graph per measured size: the reference for the
steady-state time); and torch.compile (inductor, its own automatic dynamic). Every compiler is called once at each of the
--sizes (sequence lengths for the text models, batch sizes for the vision ones); then the median time per
call at --measure sizes. Reported per compiler: compilations (dyn: captures; inductor: frames compiled),
eager calls, and the time at each measured size. With --mode train a call is a training step (forward, the
model's loss, backward; dropout off so that every compiler runs the same arithmetic): a fine-tuning loop over
batches padded to their longest sentence, or a variable batch of images; each training row also gives the host
time of the forward call and of backward() (on CUDA a step whose host time reaches its step time is bound by
launches, not kernels).

Run:  PYTHONPATH=python python benchmarks/dynamic_shapes.py --models hf_gpt2_sdpa,tv_resnet18 --json out.json
"""
import argparse
import copy
import json
import os
import statistics
import sys
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

import dyn  # noqa: E402

TEXT_SIZES = list(range(8, 40))           # 32 sequence lengths
VISION_SIZES = "1,2,3,4,6,8,12,16"         # batch sizes (--batches)


def inputs(case, n, device, train=False):
    """(args, kwargs) at size n: ids of length n (batch as the corpus case), or a batch of n images; for
    training also the loss's labels (a causal LM's ids, a masked LM's every fourth token with one padded row,
    an image's class) and BERT's attention mask."""
    x = case.args[0]
    g = torch.Generator().manual_seed(n)
    if case.family == "transformers":
        ids = torch.randint(0, int(x.max()) + 1, (x.shape[0], n), generator=g)
        kwargs = {}
        if train and case.name.startswith("hf_bert"):
            mask = torch.ones_like(ids)
            mask[0, n - n // 4:] = 0
            labels = torch.full_like(ids, -100)
            labels[:, ::4] = ids[:, ::4]
            kwargs = dict(attention_mask=mask, labels=labels)
        elif train:
            kwargs = dict(labels=ids)
        return (ids.to(device),), {k: v.to(device) for k, v in kwargs.items()}
    images = torch.randn((n,) + tuple(x.shape[1:]), generator=g).to(device)
    return (images,), ({"labels": torch.randint(0, 10, (n,), generator=g).to(device)} if train else {})


def _call(case, model, fn, train):
    """call(args, kwargs): a forward (inference), or a training step (loss and backward, the gradients of the
    model's parameters cleared first)."""
    if not train:
        return lambda a, kw: fn(*a, **kw)

    def step(a, kw):
        for p in model.parameters():
            p.grad = None
        t0 = time.perf_counter()
        if case.family == "transformers":
            loss = fn(*a, **kw).loss
        else:
            loss = torch.nn.functional.cross_entropy(fn(*a), kw["labels"])
        t1 = time.perf_counter()
        loss.backward()
        step.host.append((t1 - t0, time.perf_counter() - t1))
    step.host = []  # (forward and loss, backward()) host seconds of each call: on CUDA, launch-bound steps show here
    return step


def timed(call, args, reps, device):
    for _ in range(2):
        call(*args)
    out = []
    for _ in range(reps):
        if device == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        call(*args)
        if device == "cuda":
            torch.cuda.synchronize()
        out.append(time.perf_counter() - t)
    return statistics.median(out) * 1e3


def run(args, name):
    train = args.mode == "train"
    case = corpus.build(name, args.size, args.device)
    base = case.model.train() if train else case.model.eval()
    if train:
        corpus.no_dropout(base)
    sizes = TEXT_SIZES if case.family == "transformers" else [int(b) for b in args.batches.split(",")]
    measure = [int(s) for s in args.measure.split(",")] if args.measure else [sizes[1], sizes[len(sizes) // 2],
                                                                                 sizes[-1]]
    rows = []
    for compiler in args.compilers.split(","):
        m = copy.deepcopy(base)
        dyn.reset()
        torch._dynamo.reset()
        from torch._dynamo.utils import counters
        graphs_before = counters["stats"].get("unique_graphs", 0)  # (cumulative in the process)
        if compiler == "eager":
            fn = m
        elif compiler == "dyn":
            fn = dyn.compile(m)
        elif compiler == "dyn-static":
            fn = dyn.compile(m, dynamic=False)
        else:
            fn = torch.compile(m)
        call = _call(case, m, fn, train)
        t0 = time.perf_counter()
        with torch.set_grad_enabled(train), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for n in (measure if compiler == "dyn-static" else sizes):  # (specialized: one graph per size)
                call(*inputs(case, n, args.device, train))
            if args.device == "cuda":
                torch.cuda.synchronize()
            first = time.perf_counter() - t0
            times, host = {}, {}
            for n in measure:
                if train:
                    call.host.clear()
                times[n] = timed(call, inputs(case, n, args.device, train), args.reps, args.device)
                if train:  # medians of the timed calls' host time in the forward and in backward()
                    timed_host = call.host[2:]
                    host[n] = [round(statistics.median(h[i] for h in timed_host) * 1e3, 2) for i in (0, 1)]
        st = dyn.stats()
        row = dict(model=name, mode=args.mode, compiler=compiler, sizes=len(sizes),
                   seconds_all_sizes=round(first, 3), ms=times)
        if host:
            row["host_ms_forward_backward"] = host
        if compiler.startswith("dyn"):
            row.update(compilations=st["captures"], dynamic_entries=st["dynamic_entries"],
                       eager_calls=st["eager_calls"], eager_graphs=len(st["eager_graphs"]),
                       fallback_reasons=list(st["dynamic_fallback_reasons"]))
        elif compiler == "inductor":
            row.update(compilations=counters["stats"].get("unique_graphs", 0) - graphs_before)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="hf_gpt2_sdpa,hf_bert_sdpa,hf_llama_sdpa,tv_resnet18")
    p.add_argument("--size", default="small")
    p.add_argument("--device", default="cpu")
    p.add_argument("--compilers", default="eager,dyn,dyn-static,inductor")
    p.add_argument("--mode", choices=("eval", "train"), default="eval")
    p.add_argument("--batches", default=VISION_SIZES, help="the vision models' batch sizes")
    p.add_argument("--measure", help="sizes to time (default: three of the sizes run)")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--json")
    args = p.parse_args()
    rows = []
    for name in args.models.split(","):
        rows += run(args, name)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(argv=sys.argv, torch=torch.__version__, results=rows), f, indent=1)


if __name__ == "__main__":
    main()
