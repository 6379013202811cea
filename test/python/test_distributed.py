"""DistributedDataParallel and FSDP2 with dyn-compiled models on the CPU (gloo): two ranks launched by
torchrun, as users launch their scripts (distributed_worker.py), each training with dyn.compile beside
eager DDP/FSDP2. Parameters after 5 optimizer steps equal eager's on both ranks, every graph compiled
with its backward."""
import json
import os
import subprocess
import sys

import pytest
import torch

dist = pytest.importorskip("torch.distributed")
pytestmark = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                                reason="needs torch.distributed with gloo")

_HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = {
    # name: (parameter tolerance, how many backward graphs: "one" or "several")
    "outer_hf_gpt2_sdpa": (1e-5, "one"),         # dyn.compile(DDP(gpt2)); transformers' loss is float32
    "inner_tv_resnet18_split": (1e-9, "several"),  # DDP(dyn.compile(resnet)), small buckets: pieces
    "outer_hf_llama_sdpa_split": (1e-5, "several"),
    "outer_hf_gpt2_sdpa_split_lengths": (1e-5, "several"),  # a length per step: symbolic pieces after two
    "sequential": (1e-12, "one"),                # an nn.Sequential wrapped by DDP
    "no_sync": (1e-12, "one"),                   # gradient accumulation under ddp.no_sync()
    "unused": (1e-12, "one"),                    # find_unused_parameters=True, a parameter never read
    "static_graph": (1e-12, "one"),              # DDP(static_graph=True)
    "torch_compile_ddp": (1e-12, "several"),     # torch.compile(DDP(m), backend="dyn"): DDPOptimizer's pieces
    "whole_step": (1e-12, "one"),                # dyn.compile(step): zero_grad, DDP model, backward, AdamW step
    # FSDP2 (fully_shard per block and at the root): each block's forward compiled, its hooks eager
    "fsdp_hf_llama_sdpa": (1e-5, "several"),
    "fsdp_checkpoint": (1e-12, "several"),       # torch.utils.checkpoint inside each block
    "fsdp_mixed": (1e-4, "several"),             # bfloat16 parameters, float32 reduction (SGD steps)
    # functional collectives and dist.all_reduce inside one compiled function: one graph, no break
    "collectives": (1e-6, "none"),
}


two_gpus = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices (NCCL)")


@pytest.fixture(scope="module", params=["cpu", pytest.param("cuda", marks=two_gpus)])
def results(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.path.join(_HERE, "..", "..", "python"),
                                                                    os.environ.get("PYTHONPATH")])),
               DYN_TEST_DEVICE=request.param)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
           os.path.join(_HERE, "distributed_worker.py"), str(out), *SCENARIOS]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return [json.load(open(out / f"rank{r}.json")) for r in (0, 1)]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_ddp_trains_compiled_like_eager_ddp(results, name):
    tol, backward = SCENARIOS[name]
    for rank, res in enumerate(results):
        r = res[name]
        assert "error" not in r, f"rank {rank}: {r.get('error')}"
        assert r["param_diff"] <= tol, (rank, r["param_diff"])
        assert all(abs(a - b) <= max(tol, 1e-12) * max(1.0, abs(b)) for a, b in zip(r["loss"], r["ref_loss"]))
        s = r["stats"]
        assert s["graphs"] >= 1 and s["eager_graphs"] == [], s
        assert s["internal_failures"] == 0 and s["eager_calls"] == 0, s
        if name.endswith("_lengths"):  # the second length recompiles once, symbolic: every later one runs it
            assert s["dynamic_entries"] == 1 and s["captures"] == 2 and s["recompiles"] == 1, s
            assert s["graph_breaks"] == 0 and s["eager_entries"] == 0 and not s["dynamic_fallback_reasons"], s
        elif not name.startswith(("fsdp", "torch_compile", "whole_step")):
            assert s["graph_breaks"] == 0 and s["eager_entries"] == 0 and s["recompiles"] == 0, s
        # FSDP2: the call of each fully_shard module is a graph break by design (its hooks run eagerly);
        # the root's loop over blocks then runs eagerly, each block's forward compiled. A whole step: the
        # DDP module's call and loss.backward() break the step's graph
        if backward == "several":  # split at DDP's bucket boundaries: one autograd node per piece
            assert s["backward_graphs"] > 1, s
        elif backward == "none":
            assert s["graphs"] == 1 and s["backward_graphs"] == 0, s
            assert r["collectives"] == 5, r  # the one whose result is never read included
        else:
            assert s["backward_graphs"] >= 1, s
    # DDP keeps the ranks' replicas identical: both ranks saw the same losses of their own batches' mean
    assert results[0][name]["param_diff"] == pytest.approx(results[1][name]["param_diff"], abs=tol)


def test_bucket_split_pieces_compute_the_graph():
    """The pieces of a split graph, run one after the other, give the whole graph's outputs and
    gradients (no process group: the split is a graph transformation)."""
    import dyn
    from dyn.backends import dyn_backend
    from dyn.distributed.ddp import StagedKernel, split_graph

    torch.manual_seed(0)
    F = torch.nn.functional

    def f(x, w1, b1, w2, b2, w3, b3):
        h = torch.tanh(F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2))
        return F.linear(h, w3, b3).square().sum()
    x = torch.randn(5, 8, dtype=torch.float64)
    params = [torch.randn(*s, dtype=torch.float64).requires_grad_() for s in ((16, 8), (16,), (16, 16), (16,),
                                                                               (3, 16), (3,))]
    examples = [x, *params]
    graph = dyn.export(f, *examples).graph
    assert len(graph.inputs) == len(examples)
    starts = [len(graph.nodes) // 3, 2 * len(graph.nodes) // 3]
    pieces = split_graph(graph, starts)
    assert len(pieces) == 3
    kernels = []
    for piece in pieces:
        ex = [examples[k] if kind == "in" else torch.empty(n.meta.shape, dtype=n.meta.dtype).requires_grad_()
              for (kind, k), n in zip(piece.sources, piece.graph.inputs)]
        kernels.append(dyn_backend(piece.graph, ex))
    staged = StagedKernel(graph, pieces, kernels)
    out = staged(*examples)[0]
    out.backward()
    got = [p.grad.clone() for p in params]
    for p in params:
        p.grad = None
    want = f(*examples)
    want.backward()
    torch.testing.assert_close(out, want)
    for g, p in zip(got, params):
        torch.testing.assert_close(g, p.grad)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs CUDA"))])
def test_bucket_split_pieces_hand_over_channels_last(device):
    """Convolution blocks split at bucket boundaries: the activations (and their gradients) cross from piece
    to piece in the channels-last layout the pieces compute them in, not transposed at every cut; output and
    gradients equal eager's."""
    import types
    import torch.nn.functional as F
    import dyn
    from dyn.backends import dyn_backend
    from dyn.distributed.ddp import staged_training

    torch.manual_seed(0)
    dtype = torch.float64
    # on the GPU convolutions go channels-last from 2^24 activation elements (Pipelines.cpp)
    width, px, batch = (16, 16, 4) if device == "cpu" else (64, 128, 16)
    blocks = [(3, width, 1), (width, width, 1), (width, width, 1), (width, 32, 2)]
    shapes = [s for ci, co, _ in blocks for s in ((co, ci, 3, 3), (co,), (co,))] + [(10, 32)]
    module = torch.nn.Module()
    module.ps = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(*s, dtype=dtype, device=device) * 0.3)
                                        for s in shapes])

    def f(x, *ps):
        h = x
        for i, (_, _, stride) in enumerate(blocks):
            w, g, b = ps[3 * i:3 * i + 3]
            h = F.relu(F.batch_norm(F.conv2d(h, w, padding=1, stride=stride), None, None, g, b, training=True))
        return F.linear(h.mean((2, 3)), ps[-1]).square().sum()
    x = torch.randn(batch, 3, px, px, dtype=dtype, device=device)
    examples = [x, *module.ps]
    graph = dyn.export(f, *examples).graph
    ddp = types.SimpleNamespace(bucket_bytes_cap=20000, module=module, parameters_to_ignore=())
    staged = staged_training(graph, examples, ddp,
                             lambda g, ex, layout: dyn_backend(g, ex, {"ddp_buckets": False, **layout}),
                             lambda msg: None)
    assert staged is not None and len(staged.kernels) >= 3
    later = staged.kernels[1:]
    assert all(k.forward.reads for k in later), "a later piece reads its activation input channels-last"
    assert all(k.backward.channels_last for k in later), "and returns that input's gradient channels-last"
    out = staged(*examples)[0]
    out.backward()
    got = [p.grad.clone() for p in module.ps]
    for p in module.ps:
        p.grad = None
    want = f(*examples)
    want.backward()
    torch.testing.assert_close(out, want)
    for g, p in zip(got, module.ps):
        torch.testing.assert_close(g, p.grad)


@pytest.mark.parametrize("backend", ["dyn", "eager"])
def test_collectives_in_one_process_group_of_one(backend):
    """The collectives' graph ops on a group of one rank (in this process): the dyn backend's library calls
    and the eager backend's expressions both run c10d's functional collectives."""
    import torch.distributed._functional_collectives as fc
    import dyn
    if dist.is_initialized():
        pytest.skip("a process group is already initialized")
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        group = dist.group.WORLD

        def f(x):
            a = fc.all_reduce(x * 2, "sum", group)
            g = fc.all_gather_tensor(a, 0, group)
            y = x.clone()
            dist.all_reduce(y, op=dist.ReduceOp.MAX)
            return fc.reduce_scatter_tensor(g + 1, "avg", 0, group), y
        x = torch.randn(4, 3)
        dyn.reset()
        e = dyn.explain(f, backend=backend)(x)
        assert e.graph_count == 1 and e.graph_break_count == 0, e.break_reasons
        assert e.backends[0]["compiled"] == (backend == "dyn"), e.backends
        got = dyn.compile(f, backend=backend)(x)
        torch.testing.assert_close(got[0], x * 2 + 1)
        torch.testing.assert_close(got[1], x)
    finally:
        dist.destroy_process_group()
