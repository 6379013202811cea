"""Training step time, peak memory and first-step time: eager, dyn and torch.compile (inductor) in one process.

A step is forward, loss, backward and (with --optimizer) the optimizer's step, on a corpus model
(benchmarks/corpus.py) or the seed loop `model(x).sum().backward(); opt.step()` of torchvision's ResNet-50
(--models seed_resnet50: batch 256 at 224 px with Adam on CUDA, batch 8 at 64 px on the CPU). Each backend
gets its own copy of the model (same weights); the steady time is the median over --reps steps, measured in
--rounds interleaved rounds (the backends' order rotating) and reported as the median of the rounds' medians.
Peak memory is what one steady step allocates at most beyond what was allocated before it
(torch.cuda.max_memory_allocated minus memory_allocated: activations, gradients, temporaries; CUDA only). Dropout and stochastic
depth stay on (each backend draws its own numbers).

With --whole-step each backend compiles the whole step function (zero_grad, forward, backward, optimizer
step) instead of the model alone: the optimizer's update is then compiled too. With --autocast bf16 the forward
and the loss run under torch.autocast (mixed-precision training; the backward outside it, as usual).

Run:  PYTHONPATH=python .venv/bin/python benchmarks/train_step.py --models tv_resnet18,hf_gpt2_sdpa
      PYTHONPATH=python python benchmarks/train_step.py --device cuda --size full --json out.json
"""
import argparse
import copy
import gc
import json
import os
import statistics
import sys
import time
import warnings

import torch
import torch._dynamo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

import dyn  # noqa: E402


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


class SeedResNet50:
    """The seed loop's model and input: `model(x).sum()` is the loss."""
    name = "seed_resnet50"

    def __init__(self, device):
        from torchvision.models import resnet50
        torch.manual_seed(0)
        self.model = resnet50().to(device)
        batch, px = (256, 224) if device == "cuda" else (8, 64)
        self.args, self.kwargs = (torch.randn(batch, 3, px, px, device=device),), {}

    def inputs(self, mode):
        return self.args, self.kwargs

    def loss(self, out, mode):
        return out.sum()


def build(name, size, device):
    if name == "seed_resnet50":
        return SeedResNet50(device)
    return corpus.build(name, size, device)


def make_step(case, model, fn, optimizer, autocast=None):
    opt = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}[optimizer](
        model.parameters(), lr=1e-4) if optimizer else None
    args, kwargs = case.inputs("train")
    device = next(model.parameters()).device.type

    def step():
        if opt is not None:
            opt.zero_grad(set_to_none=True)
        else:
            for p in model.parameters():
                p.grad = None
        with torch.autocast(device, dtype=autocast, enabled=autocast is not None):
            loss = case.loss(fn(*args, **kwargs), "train")
        loss.backward()
        if opt is not None:
            opt.step()
    return step


def measure(case, backend, device, optimizer, whole=False, autocast=None):
    model = copy.deepcopy(case.model).train()
    dyn.reset()
    torch._dynamo.reset()
    compile_fn = {"eager": lambda f: f, "dyn": dyn.compile, "inductor": torch.compile}[backend]
    if whole:  # the whole step compiled: zero_grad, forward, backward (a graph break) and the optimizer step
        step = compile_fn(make_step(case, model, model, optimizer, autocast))
    else:
        step = make_step(case, model, compile_fn(model), optimizer, autocast)
    sync(device)
    t = time.perf_counter()
    step()
    sync(device)
    first = time.perf_counter() - t
    stats = dyn.stats() if backend == "dyn" else None
    step()
    peak = None
    if device == "cuda":
        for p in model.parameters():  # the step frees the last gradients first: measured without them
            p.grad = None
        sync(device)
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        step()
        sync(device)
        peak = torch.cuda.max_memory_allocated() - before
    rec = {"first_s": first, "peak_bytes": peak, "_step": step}
    if stats is not None:
        rec.update(graphs=stats["graphs"], backward_graphs=stats["backward_graphs"],
                   eager_graphs=[g["reason"] for g in stats["eager_graphs"]], graph_breaks=stats["graph_breaks"])
    return rec


def timed(step, reps, device):
    times = []
    for _ in range(reps):
        sync(device)
        t = time.perf_counter()
        step()
        sync(device)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def run(name, size, device, backends, reps, rounds, optimizer, whole=False, autocast=None):
    case = build(name, size, device)
    rec = {"model": name, "size": size, "device": device, "optimizer": optimizer, "whole_step": whole,
           "autocast": str(autocast).replace("torch.", "") if autocast else None}
    for b in backends:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rec[b] = measure(case, b, device, optimizer, whole, autocast)
        except Exception as e:  # one backend failing must not stop the others
            rec[b] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
    live = [b for b in backends if "_step" in rec[b]]
    per = {b: [] for b in live}
    for r in range(rounds):
        order = live[r % len(live):] + live[:r % len(live)] if live else []
        for b in order:
            rec[b]["_step"]()  # warm-up after the others ran
            per[b].append(timed(rec[b]["_step"], reps, device))
    for b in live:
        rec[b].pop("_step")
        rec[b].update(time_s=statistics.median(per[b]), round_times_s=per[b])
    del case
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
    return rec


def table(records, backends):
    head = ["model"] + [f"{b} ms" for b in backends] + ["dyn/eager", "dyn/inductor"] + \
        [f"{b} peak GiB" for b in backends] + [f"{b} 1st s" for b in backends] + ["dyn graphs (backward)"]
    rows = [head]
    for r in records:
        t = {b: r.get(b, {}).get("time_s") for b in backends}
        cells = [r["model"]] + [f"{t[b] * 1e3:.1f}" if t[b] else "err" for b in backends]
        cells.append(f"{t['eager'] / t['dyn']:.2f}x" if t.get("eager") and t.get("dyn") else "-")
        cells.append(f"{t['inductor'] / t['dyn']:.2f}x" if t.get("inductor") and t.get("dyn") else "-")
        for b in backends:
            p = r.get(b, {}).get("peak_bytes")
            cells.append(f"{p / 2**30:.2f}" if p else "-")
        for b in backends:
            f = r.get(b, {}).get("first_s")
            cells.append(f"{f:.1f}" if f is not None else "-")
        d = r.get("dyn", {})
        cells.append(f"{d.get('graphs', '-')} ({d.get('backward_graphs', '-')})" +
                     (" eager: " + "; ".join(d["eager_graphs"])[:80] if d.get("eager_graphs") else ""))
        rows.append(cells)
    w = [max(len(x[c]) for x in rows) for c in range(len(head))]
    out = ["| " + " | ".join(x[c].ljust(w[c]) for c in range(len(head))) + " |" for x in rows]
    out.insert(1, "|" + "|".join("-" * (n + 2) for n in w) + "|")
    speedups = [r["eager"]["time_s"] / r["dyn"]["time_s"] for r in records
                if r.get("dyn", {}).get("time_s") and r.get("eager", {}).get("time_s")]
    ind = [r["eager"]["time_s"] / r["inductor"]["time_s"] for r in records
           if r.get("inductor", {}).get("time_s") and r.get("eager", {}).get("time_s")]
    if speedups:
        out.append(f"\ngeomean speedup over eager: dyn {statistics.geometric_mean(speedups):.2f}x"
                   + (f", inductor {statistics.geometric_mean(ind):.2f}x" if ind else ""))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--size", default="small", choices=["small", "full"])
    ap.add_argument("--models", default="all", help="comma-separated: corpus names and seed_resnet50")
    ap.add_argument("--backends", default="eager,dyn,inductor")
    ap.add_argument("--optimizer", default=None, choices=["adam", "adamw", "sgd"],
                    help="run the optimizer's step in each step (seed_resnet50: adam by default)")
    ap.add_argument("--whole-step", action="store_true",
                    help="compile the whole step (zero_grad, forward, backward, optimizer step), not just the model")
    ap.add_argument("--autocast", default=None, choices=["bf16", "fp16"],
                    help="forward and loss under torch.autocast in this dtype (mixed-precision training)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    names = corpus.NAMES if a.models == "all" else a.models.split(",")
    backends = a.backends.split(",")
    import platform
    print(f"# torch {torch.__version__}, python {platform.python_version()}, device {a.device}"
          + (f" ({torch.cuda.get_device_name()})" if a.device == "cuda" else f" ({os.cpu_count()} cores)")
          + f", size {a.size}, reps {a.reps}, rounds {a.rounds}", flush=True)
    records = []
    for name in names:
        opt = a.optimizer or ("adam" if name == "seed_resnet50" else None)
        t = time.time()
        autocast = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(a.autocast)
        records.append(run(name, a.size, a.device, backends, a.reps, a.rounds, opt, a.whole_step, autocast))
        print(f"  {name}: {time.time() - t:.0f}s", flush=True)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(records, f, indent=1)
    print(table(records, backends))


if __name__ == "__main__":
    main()
