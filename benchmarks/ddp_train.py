"""Distributed training step time: eager, torch.compile (inductor) and dyn, one after the other in one
torchrun job, under DistributedDataParallel or FSDP2 (fully_shard per block).

Each compiler gets a fresh copy of the model (same weights on every rank, each rank its own batch), Adam,
and is timed over --steps steps after --warmup (the first step, compilation included, reported apart).
A step is `zero_grad; loss = model(batch); loss.backward(); opt.step()`. Peak memory is
torch.cuda.max_memory_allocated during the timed steps, per rank (rank 0 reported). Rank 0 prints one
line per compiler and writes --json.

Models: seed_resnet50 (torchvision ResNet-50, --batch images of 224 px per GPU, cross entropy),
hf_gpt2_sdpa / hf_llama_sdpa (benchmarks/corpus.py full configs, --batch x --seq tokens per GPU, called with
use_cache=False unless --cache).

Run:  torchrun --nproc-per-node=2 benchmarks/ddp_train.py --model seed_resnet50 --batch 128
      torchrun --nproc-per-node=2 benchmarks/ddp_train.py --model hf_llama_sdpa --wrap fsdp --bf16
      (CPU: --device cpu, gloo; small configs with --size small)
"""
import argparse
import copy
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

import dyn  # noqa: E402


def build(args, device, rank):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(10 + rank)
    if args.model == "seed_resnet50":
        import torchvision
        model = torchvision.models.resnet50()
        px = 224 if args.size == "full" else 64
        x = torch.randn(args.batch, 3, px, px, generator=g).to(device)
        y = torch.randint(0, 1000, (args.batch,), generator=g).to(device)
        return model, (lambda m: torch.nn.functional.cross_entropy(m(x), y)), lambda m: []
    case = corpus.build(args.model, args.size)
    vocab = case.model.config.vocab_size
    ids = torch.randint(0, vocab, (args.batch, args.seq), generator=g).to(device)
    blocks = (lambda m: list(m.model.layers)) if "llama" in args.model else (lambda m: list(m.transformer.h))
    # no KV cache in training (a step that does not decode): with one, transformers builds a DynamicCache per
    # forward and torch.compile recompiles each decoder layer on its state (recompile limit, then eager)
    return case.model, (lambda m: m(ids, labels=ids, use_cache=args.cache)["loss"]), blocks


def wrap(model, blocks, args, device):
    if args.wrap == "none":  # the same step without DDP: what the wrapping itself costs
        return model
    if args.wrap == "ddp":
        return DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    kw = dict(mesh=mesh)
    if args.bf16:
        kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for b in blocks(model):
        fully_shard(b, **kw)
    fully_shard(model, **kw)
    return model


def run(compiler, args, device, rank):
    model, loss_fn, blocks = build(args, device, rank)
    model = model.to(device).train()
    use_autocast = args.bf16 and args.wrap != "fsdp"
    wrapped = wrap(model, blocks, args, device)
    if compiler == "inductor":
        step_model = torch.compile(wrapped)
    elif compiler == "dyn":
        step_model = dyn.compile(wrapped)
    elif compiler == "dyn_whole":  # one autograd node for the whole graph: no overlap of the all-reduces
        step_model = dyn.compile(wrapped, options={"ddp_buckets": False})
    else:
        step_model = wrapped
    opt = torch.optim.Adam(wrapped.parameters(), lr=1e-4)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device.type, torch.bfloat16, enabled=use_autocast):
            loss = loss_fn(step_model)
        loss.backward()
        opt.step()
        return loss

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()
    dist.barrier()
    t0 = time.perf_counter()
    step()
    sync()
    first = time.perf_counter() - t0
    for _ in range(args.warmup):
        step()
    sync()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(args.steps):
        dist.barrier()
        t = time.perf_counter()
        loss = step()
        sync()
        times.append(time.perf_counter() - t)
    peak = torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else None
    timeline = profile_step(step, sync, args, compiler, rank) if args.profile and device.type == "cuda" else None
    s = dyn.stats() if compiler.startswith("dyn") else {}
    out = dict(compiler=compiler, step_ms=1e3 * statistics.median(times), first_s=first, peak_gib=peak,
               loss=loss.item(), graphs=s.get("graphs"), backward_graphs=s.get("backward_graphs"),
               eager_graphs=len(s.get("eager_graphs", [])), graph_breaks=s.get("graph_breaks"),
               eager_reasons=[str(g.get("reason"))[:400] for g in s.get("eager_graphs", [])])
    if timeline is not None:
        out["timeline"] = timeline
    del step_model, wrapped, model, opt
    if device.type == "cuda":
        torch.cuda.empty_cache()
    dyn.reset()
    return out


def _merge(intervals):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def _length(intervals):
    return sum(b - a for a, b in intervals)


def _intersect(xs, ys):
    out, i, j = [], 0, 0
    while i < len(xs) and j < len(ys):
        a, b = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        if a < b:
            out.append([a, b])
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return out


def profile_step(step, sync, args, compiler, rank, columns=100):
    """One more step under torch.profiler (every rank runs it; rank 0 keeps the trace): the GPU time of the
    collectives' kernels (NCCL), of the other kernels, how much of the first ran while the second did, and a
    text timeline of the step (one character per 1/columns of it: '#' busy more than half the slice,
    '+' some of it, '.' idle)."""
    from torch.profiler import ProfilerActivity, profile
    dist.barrier()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        sync()
    if rank != 0:
        return None
    path = os.path.join(args.profile, f"trace-{args.model}-{args.wrap}-{compiler}-world{dist.get_world_size()}.json")
    os.makedirs(args.profile, exist_ok=True)
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel" and "dur" in e]
    comm = _merge([e["ts"], e["ts"] + e["dur"]] for e in kernels if "nccl" in e["name"].lower())
    work = _merge([e["ts"], e["ts"] + e["dur"]] for e in kernels if "nccl" not in e["name"].lower())
    if not kernels:
        return None
    t0 = min(e["ts"] for e in kernels)
    t1 = max(e["ts"] + e["dur"] for e in kernels)
    width = (t1 - t0) / columns

    def row(intervals):
        chars = []
        for k in range(columns):
            busy = _length(_intersect(intervals, [[t0 + k * width, t0 + (k + 1) * width]])) / width
            chars.append("#" if busy > 0.5 else "+" if busy > 0.02 else ".")
        return "".join(chars)
    overlapped = _length(_intersect(comm, work))
    return dict(gpu_span_ms=(t1 - t0) / 1e3, compute_ms=_length(work) / 1e3, comm_ms=_length(comm) / 1e3,
                comm_overlapped_ms=overlapped / 1e3, compute_row=row(work), comm_row=row(comm), trace=path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="seed_resnet50")
    p.add_argument("--wrap", choices=["ddp", "fsdp", "none"], default="ddp")
    p.add_argument("--size", default="full")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--bf16", action="store_true", help="DDP: autocast bfloat16; FSDP: bfloat16 parameters")
    p.add_argument("--compilers", default="eager,dyn,inductor")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--device", default="cuda")
    p.add_argument("--json")
    p.add_argument("--cache", action="store_true", help="transformers: use_cache=True in the training forward")
    p.add_argument("--profile", help="a folder: profile one more step per compiler (CUDA), rank 0's trace and a "
                   "summary of its communication/computation overlap")
    args = p.parse_args()
    local = int(os.environ.get("LOCAL_RANK", 0))
    if args.device == "cuda":
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
        dist.init_process_group("nccl", device_id=device)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    results = []
    for c in args.compilers.split(","):
        r = run(c, args, device, rank)
        r.update(world=world, model=args.model, wrap=args.wrap, batch=args.batch, bf16=args.bf16)
        results.append(r)
        if rank == 0:
            print(json.dumps(r), flush=True)
    if rank == 0 and args.json:
        with open(args.json, "w") as f:
            json.dump(dict(argv=sys.argv, torch=torch.__version__, results=results), f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
