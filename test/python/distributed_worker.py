"""One rank of test_distributed.py, launched as users launch theirs: `torchrun --nproc-per-node=2
distributed_worker.py OUT_DIR [SCENARIO ...]` (gloo on the CPU; with DYN_TEST_DEVICE=cuda, NCCL, one GPU
per rank). Each scenario trains a model with dyn.compile and the same
model with eager DDP side by side (same weights, each rank its own data) and writes, per rank,
OUT_DIR/rank<R>.json: {scenario: {"loss": [...], "ref_loss": [...], "param_diff": max |p - p_ref|,
"stats": dyn.stats() of that scenario}} or {"error": traceback}. Float64, so that compiled and eager
gradients agree to rounding."""
import contextlib
import copy
import importlib.util
import json
import os
import sys
import traceback

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import dyn

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("dyn_corpus_ddp", os.path.join(_HERE, "..", "..", "benchmarks", "corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

STEPS = 5
DEVICE = os.environ.get("DYN_TEST_DEVICE", "cpu")


_no_dropout, _double = corpus.no_dropout, corpus.double


class Unused(torch.nn.Module):
    """A parameter the forward never reads (DDP's find_unused_parameters) beside a small MLP."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.unused = torch.nn.Linear(8, 16), torch.nn.Linear(16, 4), torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.b(torch.nn.functional.gelu(self.a(x)))


class Block(torch.nn.Module):
    def __init__(self, d, checkpoint=False):
        super().__init__()
        self.norm, self.a, self.b, self.checkpoint = torch.nn.LayerNorm(d), torch.nn.Linear(d, 4 * d), \
            torch.nn.Linear(4 * d, d), checkpoint

    def mlp(self, x):
        return self.b(torch.nn.functional.gelu(self.a(self.norm(x))))

    def forward(self, x):
        if self.checkpoint:
            return x + torch.utils.checkpoint.checkpoint(self.mlp, x, use_reentrant=False)
        return x + self.mlp(x)


class Blocks(torch.nn.Module):
    def __init__(self, d=16, n=3, checkpoint=False):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(d, checkpoint) for _ in range(n)])
        self.head = torch.nn.Linear(d, 4)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def _fully_shard(model, blocks, **kw):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    mesh = init_device_mesh(DEVICE, (dist.get_world_size(),))
    for b in blocks(model):
        fully_shard(b, mesh=mesh, **kw)
    fully_shard(model, mesh=mesh, **kw)
    return model


def _batches(rank, shape, n):
    g = torch.Generator().manual_seed(100 + rank)
    return [torch.randn(*shape, generator=g, dtype=torch.float64) for _ in range(n)]


def _corpus_case(name):
    case = corpus.build(name, "small").to(DEVICE)
    case.model.double().train()
    _no_dropout(case.model)
    args, kwargs = case.inputs("train")
    args = [_double(a) for a in args]
    kwargs = {k: _double(v) for k, v in kwargs.items()}
    return case, (lambda out: case.loss(out, "train")), args, kwargs


def _train(model, opt, step_inputs, loss_fn, accumulate=1, sync=None):
    losses = []
    for i, (args, kwargs) in enumerate(step_inputs):
        last = (i + 1) % accumulate == 0
        ctx = sync() if (sync is not None and not last) else contextlib.nullcontext()
        with ctx:
            loss = loss_fn(model(*args, **kwargs))
            loss.backward()
        losses.append(loss.item())
        if last:
            opt.step()
            opt.zero_grad()
    return losses


def scenario(name, rank):
    """(compiled model, eager DDP model, step inputs, loss function, train options)."""
    if name.startswith("outer_") or name.startswith("inner_"):  # outer_<corpus name>: dyn.compile(DDP(m))
        how, model_name = name.split("_", 1)
        lengths = model_name.endswith("_lengths")  # each step its own sequence length: symbolic after two
        model_name = model_name.removesuffix("_lengths")
        split = model_name.endswith("_split")
        model_name = model_name.removesuffix("_split")
        case, loss_fn, args, kwargs = _corpus_case(model_name)
        cap = dict(bucket_cap_mb=0.05) if split else {}  # small buckets: the graph splits in pieces
        ref = DDP(copy.deepcopy(case.model), **cap)
        m = dyn.compile(DDP(case.model, **cap)) if how == "outer" else DDP(dyn.compile(case.model), **cap)
        # each rank its own batch: the tokens or images shifted per rank
        inputs = []
        for s in range(STEPS):
            a = [torch.roll(x, shifts=rank + s, dims=0) if isinstance(x, torch.Tensor) else x for x in args]
            kw = kwargs
            if lengths:  # a causal LM's ids and labels cut to a length per step (the same on both ranks)
                n = args[0].shape[1] - 2 * s
                a = [a[0][:, :n].contiguous()] + a[1:]  # (a data loader's batches: contiguous)
                kw = {k: v[:, :n].contiguous() if isinstance(v, torch.Tensor) and v.dim() == 2 else v
                      for k, v in kwargs.items()}
            inputs.append((a, kw))
        return m, ref, inputs, loss_fn, {}
    if name == "sequential":
        seq = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.LayerNorm(32),
                                  torch.nn.Linear(32, 4)).double().to(DEVICE)
        ref = DDP(copy.deepcopy(seq))
        return dyn.compile(DDP(seq)), ref, [((x,), {}) for x in _batches(rank, (6, 8), STEPS)], \
            (lambda out: out.square().mean()), {}
    if name == "no_sync":
        m0 = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4)).double().to(DEVICE)
        ref = DDP(copy.deepcopy(m0))
        ddp = DDP(m0)
        return dyn.compile(ddp), ref, [((x,), {}) for x in _batches(rank, (6, 8), 2 * STEPS)], \
            (lambda out: out.square().mean()), dict(accumulate=2, sync=(ddp.no_sync, ref.no_sync))
    if name == "static_graph":  # DDP(static_graph=True): the reducer records the first step's order
        m0 = Blocks(checkpoint=False).double().to(DEVICE)
        ref = DDP(copy.deepcopy(m0), static_graph=True)
        return dyn.compile(DDP(m0, static_graph=True)), ref, [((x,), {}) for x in _batches(rank, (6, 16), STEPS)], \
            (lambda out: out.square().mean()), {}
    if name == "torch_compile_ddp":  # torch.compile(DDP(m), backend="dyn"): TorchDynamo's DDPOptimizer splits
        m0 = Blocks(d=256, n=3).double().to(DEVICE)  # 4 MiB of parameters: buckets of 1 MiB make pieces
        ref = DDP(copy.deepcopy(m0), bucket_cap_mb=1)
        return torch.compile(DDP(m0, bucket_cap_mb=1), backend="dyn"), ref, \
            [((x,), {}) for x in _batches(rank, (6, 256), STEPS)], (lambda out: out.square().mean()), {}
    if name == "unused":
        m0 = Unused().double().to(DEVICE)
        ref = DDP(copy.deepcopy(m0), find_unused_parameters=True)
        return dyn.compile(DDP(m0, find_unused_parameters=True)), ref, \
            [((x,), {}) for x in _batches(rank, (6, 8), STEPS)], (lambda out: out.square().mean()), {}
    if name == "fsdp_hf_llama_sdpa":  # fully_shard per decoder layer and at the root (FSDP2)
        case, loss_fn, args, kwargs = _corpus_case("hf_llama_sdpa")
        ref = copy.deepcopy(case.model)
        layers = lambda m: m.model.layers  # noqa: E731
        m = dyn.compile(_fully_shard(case.model, layers))
        _fully_shard(ref, layers)
        inputs = [([torch.roll(args[0], shifts=rank + s, dims=0)], kwargs) for s in range(STEPS)]
        return m, ref, inputs, loss_fn, {}
    if name in ("fsdp_checkpoint", "fsdp_mixed"):
        model = Blocks(checkpoint=name == "fsdp_checkpoint").to(DEVICE)
        kw = {}
        if name == "fsdp_mixed":  # bfloat16 parameters in forward and backward, float32 gradient reduction
            from torch.distributed.fsdp import MixedPrecisionPolicy
            kw = dict(mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32))
        else:
            model = model.double()
        ref = copy.deepcopy(model)
        blocks = lambda m: m.blocks  # noqa: E731
        m = dyn.compile(_fully_shard(model, blocks, **kw))
        _fully_shard(ref, blocks, **kw)
        dtype = torch.float32 if name == "fsdp_mixed" else torch.float64
        # SGD for bfloat16: AdamW's normalized steps would turn rounding differences into whole steps
        return m, ref, [((x.to(dtype),), {}) for x in _batches(rank, (6, 16), STEPS)], \
            (lambda out: out.float().square().mean()), dict(sgd=name == "fsdp_mixed")
    raise ValueError(name)


def _to_device(v):
    if isinstance(v, torch.Tensor):
        return v.to(DEVICE)
    if isinstance(v, (list, tuple)):
        return type(v)(_to_device(x) for x in v)
    if isinstance(v, dict):
        return {k: _to_device(x) for k, x in v.items()}
    return v


def run(name, rank):
    torch.manual_seed(0)
    dyn.reset()
    m, ref, inputs, loss_fn, opts = scenario(name, rank)
    inputs = _to_device(inputs)
    make = (lambda ps: torch.optim.SGD(ps, lr=1e-2)) if opts.pop("sgd", False) else \
        (lambda ps: torch.optim.AdamW(ps, lr=1e-3))
    opt, ref_opt = make(m.parameters()), make(ref.parameters())
    sync = opts.pop("sync", None)
    losses = _train(m, opt, inputs, loss_fn, sync=sync and sync[0], **opts)
    stats = dyn.stats()
    ref_losses = _train(ref, ref_opt, inputs, loss_fn, sync=sync and sync[1], **opts)
    full = lambda p: p.full_tensor() if hasattr(p, "full_tensor") else p  # noqa: E731  (FSDP2's DTensors)
    diff = max((full(a) - full(b)).abs().max().item() for a, b in zip(m.parameters(), ref.parameters()))
    stats["eager_graphs"] = [str(g.get("reason")) + "\n" + str(g.get("graph"))[:3000] for g in stats["eager_graphs"]]
    return dict(loss=losses, ref_loss=ref_losses, param_diff=diff,
                stats={k: v for k, v in stats.items() if k in ("graphs", "graph_breaks", "backward_graphs",
                                                              "eager_graphs", "eager_entries", "eager_calls",
                                                              "internal_failures", "recompiles", "captures",
                                                              "dynamic_entries", "dynamic_fallback_reasons")})


def collectives(rank):
    """Collectives inside one compiled function, against the same function run eagerly."""
    import torch.distributed._functional_collectives as fc
    world = dist.get_world_size()
    group = dist.group.WORLD

    def f(x, y):
        a = fc.all_reduce(torch.relu(x) * 2, "sum", group)
        g = fc.all_gather_tensor(a + 1, 0, group)
        r = fc.reduce_scatter_tensor(g * y[:1], "sum", 0, group)
        z = x.clone()
        dist.all_reduce(z, op=dist.ReduceOp.MAX)
        fc.all_reduce(y, "avg", group)  # never read: still issued, as every rank's eager code does
        return r.sin(), z - x

    dyn.reset()
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(4, 3, generator=g).to(DEVICE)
    y = torch.randn(world * 4, 3, generator=g).to(DEVICE)
    got = dyn.compile(f)(x, y)
    stats = dyn.stats()
    ops = [n.op for g in dyn.last_graphs() for n in g.nodes]
    issued = sum(op in ("all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor") for op in ops)
    want = f(x, y)
    want = [fc.wait_tensor(w) if hasattr(w, "wait") else w for w in want]
    diff = max((a - b).abs().max().item() for a, b in zip(got, want))
    return dict(loss=[], ref_loss=[], param_diff=diff, collectives=issued, stats={k: stats[k] for k in (
        "graphs", "graph_breaks", "backward_graphs", "eager_entries", "eager_calls", "internal_failures", "recompiles")}
        | {"eager_graphs": [str(e.get("reason")) for e in stats["eager_graphs"]]})


def whole_step(rank):
    """The whole step compiled (zero_grad, the DDP model, loss.backward(), AdamW's step) beside the same
    step run eagerly on a copy of the model."""
    torch.manual_seed(0)
    dyn.reset()
    m0 = Blocks().double().to(DEVICE)
    models = [DDP(copy.deepcopy(m0)), DDP(m0)]
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-3) for m in models]

    def step(model, opt, x):
        opt.zero_grad()
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        return loss
    compiled = dyn.compile(step)
    losses = [[], []]
    for x in _batches(rank, (6, 16), STEPS):
        x = x.to(DEVICE)
        losses[0].append(step(models[0], opts[0], x).item())
        losses[1].append(compiled(models[1], opts[1], x).item())
    stats = dyn.stats()
    diff = max((a - b).abs().max().item() for a, b in zip(models[1].parameters(), models[0].parameters()))
    return dict(loss=losses[1], ref_loss=losses[0], param_diff=diff, stats={k: stats[k] for k in (
        "graphs", "graph_breaks", "backward_graphs", "eager_entries", "eager_calls", "internal_failures", "recompiles")}
        | {"eager_graphs": [str(e.get("reason")) for e in stats["eager_graphs"]]})


def main():
    out_dir, names = sys.argv[1], sys.argv[2:]
    if DEVICE == "cuda":
        local = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(local)
        dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    else:
        dist.init_process_group("gloo")
    rank = dist.get_rank()
    results = {}
    for name in names:
        try:
            special = {"collectives": collectives, "whole_step": whole_step}
            results[name] = special[name](rank) if name in special else run(name, rank)
        except Exception:
            results[name] = dict(error=traceback.format_exc())
        dist.barrier()
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(results, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
