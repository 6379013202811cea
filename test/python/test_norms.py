"""Normalization ops (graph.layer_norm, rms_norm, batch_norm, instance_norm, group_norm): captured as one
op each; backend="eager" runs PyTorch's kernels, so results, gradients and running statistics are eager's
bits; the dyn backend compiles them (no fallback) within the usual tolerances."""
import copy
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn


class SmallCNN(nn.Module):
    def __init__(self, momentum=0.1):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8, momentum=momentum)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8, momentum=momentum)
        self.gn = nn.GroupNorm(2, 8)
        self.inorm = nn.InstanceNorm2d(8, affine=True, track_running_stats=True)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)) + x)
        x = self.inorm(self.gn(x))
        return self.fc(x.mean((2, 3)))


class Block(nn.Module):
    def __init__(self, d=16, heads=2):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        # ReLU: capture still decomposes GELU in Python (not eager's bits; the registry moves it)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.ReLU(), nn.Linear(4 * d, d))
        self.rms = nn.RMSNorm(d)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return self.rms(x + self.mlp(self.ln2(x)))


def _train_steps(model, make_input, steps=3):
    """(outputs, gradients, buffers) of `steps` forward/backward passes of model and of its dyn.compile'd
    copy (backend="eager"), and the graph counts."""
    ref = copy.deepcopy(model)
    compiled = dyn.compile(model, backend="eager")
    outs = []
    for step in range(steps):
        x = make_input(step)
        for m, f in ((ref, ref), (model, compiled)):
            m.zero_grad()
            y = f(x)
            y.square().sum().backward()
            outs.append(y.detach())
    return outs, ref, model


@pytest.mark.parametrize("momentum", [0.1, None])  # None: the cumulative average
def test_cnn_batch_norm_train_eager_backend_equal(momentum):
    torch.manual_seed(0)
    model = SmallCNN(momentum).train()
    e = dyn.explain(copy.deepcopy(model), backend="eager")(torch.randn(4, 3, 8, 8))
    assert len(e.graphs) == 1 and not e.break_reasons
    ops = e.graphs[0].ops()
    assert ops.count("batch_norm") == 2 and "group_norm" in ops and "instance_norm" in ops
    outs, ref, model = _train_steps(model, lambda s: torch.randn(4, 3, 8, 8))
    for a, b in zip(outs[0::2], outs[1::2]):
        assert torch.equal(a, b)
    for (n, p), q in zip(model.named_parameters(), ref.parameters()):
        assert torch.equal(p.grad, q.grad), n
    for (n, b), c in zip(model.named_buffers(), ref.buffers()):
        assert torch.equal(b, c), n


def test_transformer_block_layer_norm_train_eager_backend_equal():
    torch.manual_seed(0)
    model = Block().train()
    e = dyn.explain(copy.deepcopy(model), backend="eager")(torch.randn(2, 5, 16))
    assert len(e.graphs) == 1 and not e.break_reasons
    assert e.graphs[0].ops().count("layer_norm") == 2 and "rms_norm" in e.graphs[0].ops()
    outs, ref, model = _train_steps(model, lambda s: torch.randn(2, 5, 16))
    for a, b in zip(outs[0::2], outs[1::2]):
        assert torch.equal(a, b)
    for (n, p), q in zip(model.named_parameters(), ref.parameters()):
        assert torch.equal(p.grad, q.grad), n


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_batch_norm_running_stats_compiled(dtype, momentum):
    """Training mode without autograd (no_grad): the dyn backend compiles batch_norm and updates the running
    statistics; eval mode normalizes with them."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 6, 3), nn.BatchNorm2d(6, momentum=momentum), nn.ReLU()).to(dtype)
    ref = copy.deepcopy(model)
    compiled = dyn.compile(model, backend="dyn", fullgraph=True)
    tol = dict(atol=2e-2, rtol=2e-2) if dtype == torch.bfloat16 else dict(atol=1e-5, rtol=1e-5)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to eager fails the test
        for train in (True, True, False):
            model.train(train)
            ref.train(train)
            x = torch.randn(4, 3, 8, 8, dtype=dtype)
            torch.testing.assert_close(compiled(x), ref(x), **tol)
            for b, c in zip(model.buffers(), ref.buffers()):
                torch.testing.assert_close(b, c, **tol)


_FUNCS = {
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (6, 8), w, b), lambda dt: (
        torch.randn(4, 6, 8, dtype=dt), torch.randn(6, 8), torch.randn(6, 8))),
    "rms_norm": (lambda x, w: F.rms_norm(x, (8,), w), lambda dt: (torch.randn(4, 6, 8, dtype=dt), torch.randn(8))),
    "rms_norm_default_eps": (lambda x: F.rms_norm(x, (8,)), lambda dt: (torch.randn(4, 6, 8, dtype=dt),)),
    "group_norm": (lambda x, w, b: F.group_norm(x, 3, w, b), lambda dt: (
        torch.randn(2, 6, 5, 5, dtype=dt), torch.randn(6), torch.randn(6))),
    "instance_norm": (lambda x: F.instance_norm(x), lambda dt: (torch.randn(2, 6, 5, 5, dtype=dt),)),
    "instance_norm_stats": (lambda x, rm, rv: F.instance_norm(x, rm, rv, None, None, True, 0.3), lambda dt: (
        torch.randn(3, 6, 4, dtype=dt), torch.randn(6), torch.rand(6) + 0.5)),
    "instance_norm_eval": (lambda x, rm, rv: F.instance_norm(x, rm, rv, None, None, False), lambda dt: (
        torch.randn(3, 6, 4, dtype=dt), torch.randn(6), torch.rand(6) + 0.5)),
    "batch_norm_eval": (lambda x, rm, rv, w, b: F.batch_norm(x, rm, rv, w, b, False), lambda dt: (
        torch.randn(2, 6, 5, 5, dtype=dt), torch.randn(6), torch.rand(6) + 0.5, torch.randn(6), torch.randn(6))),
    "batch_norm_train": (lambda x, rm, rv: F.batch_norm(x, rm, rv, None, None, True, 0.2), lambda dt: (
        torch.randn(3, 6, 4, dtype=dt), torch.randn(6), torch.rand(6) + 0.5)),
    "batch_norm_train_no_stats": (lambda x, w, b: F.batch_norm(x, None, None, w, b, True), lambda dt: (
        torch.randn(3, 6, 4, dtype=dt), torch.randn(6), torch.randn(6))),
}


def _low(args, dt):
    """Parameters of an f16/bf16 input stay f32 (eager's mixed type); of others, the input's dtype."""
    return tuple(a if i == 0 or dt in (torch.float16, torch.bfloat16) else a.to(dt) for i, a in enumerate(args))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("name", sorted(_FUNCS))
def test_norm_functions(name, dtype):
    fn, make = _FUNCS[name]
    torch.manual_seed(0)
    args = _low(make(dtype), dtype)
    ref_args, eager_args, dyn_args = (copy.deepcopy(args) for _ in range(3))
    ref = fn(*ref_args)
    e = dyn.explain(fn, backend="eager")(*copy.deepcopy(args))
    assert len(e.graphs) == 1 and name.partition("_norm")[0] + "_norm" in e.graphs[0].ops()
    # the eager backend: eager's bits, statistics written back
    got = dyn.compile(fn, backend="eager", fullgraph=True)(*eager_args)
    assert torch.equal(got, ref)
    for a, b in zip(eager_args, ref_args):
        assert torch.equal(a, b)
    # dyn's compiler: no fallback, eager's values within tolerance
    tol = dict(atol=2e-2, rtol=2e-2) if dtype == torch.bfloat16 else dict(atol=1e-5, rtol=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = dyn.compile(fn, backend="dyn", fullgraph=True)(*dyn_args)
    assert got.dtype == ref.dtype
    torch.testing.assert_close(got, ref, **tol)
    for a, b in zip(dyn_args, ref_args):
        torch.testing.assert_close(a, b, **tol)


def test_norm_graph_text():
    def f(x, rm, rv):
        return F.batch_norm(x, rm, rv, None, None, True, 0.5)
    e = dyn.explain(f, backend="eager")(torch.randn(2, 3, 4), torch.zeros(3), torch.ones(3))
    text = str(e.graphs[0])
    assert "graph.batch_norm %arg0 running_mean %arg1 running_var %arg2 training momentum" in text
    assert "-> tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>" in text
