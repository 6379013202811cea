"""The compiled backward run step by step on the GPU (python/dyn/autograd/segments.py; run_held in C++): each
gradient allocated right before the first step that writes it, each saved value dropped after the last step that
reads it.

The compiled function's buffer steps are checked on any machine (the GPU compile needs no GPU); the
runs themselves, against eager's gradients, with the graph retained or not, on a CUDA device."""
import copy
import os

import pytest
import torch
import torch.nn as nn

import dyn
from dyn.autograd import segments, split
from dyn.native import C as _C

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

DEEP = """module {
  func.func @deep(%x: tensor<64x128xf32>, %w1: tensor<256x128xf32> {dyn.requires_grad},
                  %w2: tensor<256x256xf32> {dyn.requires_grad}, %w3: tensor<8x256xf32> {dyn.requires_grad})
      -> tensor<f32> {
    %w1t = graph.permute %w1 dims [1, 0] : tensor<256x128xf32> -> tensor<128x256xf32>
    %h1 = graph.matmul %x, %w1t : tensor<64x128xf32>, tensor<128x256xf32> -> tensor<64x256xf32>
    %g1 = graph.gelu %h1 {approximate = "none"} : tensor<64x256xf32> -> tensor<64x256xf32>
    %w2t = graph.permute %w2 dims [1, 0] : tensor<256x256xf32> -> tensor<256x256xf32>
    %h2 = graph.matmul %g1, %w2t : tensor<64x256xf32>, tensor<256x256xf32> -> tensor<64x256xf32>
    %g2 = graph.gelu %h2 {approximate = "none"} : tensor<64x256xf32> -> tensor<64x256xf32>
    %w3t = graph.permute %w3 dims [1, 0] : tensor<8x256xf32> -> tensor<256x8xf32>
    %y = graph.matmul %g2, %w3t : tensor<64x256xf32>, tensor<256x8xf32> -> tensor<64x8xf32>
    %l = graph.sum %y dims [0, 1] : tensor<64x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
"""


def test_buffer_steps_of_a_compiled_backward():
    if _C is None or not hasattr(_C, "compile_gpu"):
        pytest.skip("no compiler")
    _, parts = split.differentiate(DEEP)
    fns = split.functions(parts)
    sig, ir = fns["deep_backward"]
    n_in = len(split.int_array(sig, "dyn.saved")) + len(split.int_array(sig, "dyn.differentiable"))
    n_out = len(split.result_specs(sig))
    try:  # compiled as a backward is (scratch_min_bytes: a plan run step by step keeps its temporaries out of
        # its outputs, which the runner allocates at their first steps)
        c = _C.compile_gpu(ir, "deep_backward", False, n_in + n_out, "chip=sm_90 sm-count=132 threads-per-sm=2048",
                           segments.SCRATCH_MIN_BYTES)
    except RuntimeError as e:  # no CUDA toolkit on this machine
        pytest.skip(str(e).splitlines()[0])
    steps = list(c.buffer_steps)
    assert len(steps) == 2 * (n_in + n_out)
    for k in range(n_in + n_out):
        first, last = steps[2 * k], steps[2 * k + 1]
        assert -1 <= first <= last < c.num_launches
    for k in range(n_out):  # every gradient is written by some step
        assert steps[2 * (n_in + k)] >= 0
    # the first layer's weight gradient is written last, the last layer's first (the backward's order)
    assert steps[2 * (n_in + 0)] > steps[2 * (n_in + 2)]
    # a saved value dropped before the last step: the runner frees it while later steps still run
    assert any(0 <= steps[2 * j + 1] < c.num_launches - 1 for j in range(n_in))
    # the workspace's steps (what run_held holds it over): within the plan; none where no temporary is in it
    first, last = c.workspace_steps
    if c.workspace_bytes:
        assert 0 <= first <= last < c.num_launches
    # every temporary a scratch buffer: none left in the workspace, each used within the plan's steps
    s = _C.compile_gpu(ir, "deep_backward", False, n_in + n_out, "chip=sm_90 sm-count=132 threads-per-sm=2048", 1)
    scratch = list(s.scratch)
    assert scratch and s.workspace_bytes < c.workspace_bytes and s.num_launches == c.num_launches
    for k in range(len(scratch) // 3):
        assert scratch[3 * k] > 0 and 0 <= scratch[3 * k + 1] <= scratch[3 * k + 2] < s.num_launches
    if not s.workspace_bytes:
        first, last = s.workspace_steps
        assert first > last


class _MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(128, 128) for _ in range(6))

    def forward(self, x):
        for lin in self.layers:
            x = nn.functional.gelu(lin(x)) + x
        return x


def _twins(model):
    """A CUDA float64 `model`, a copy of it and an input."""
    torch.manual_seed(0)
    ref = model().cuda().double()
    return ref, copy.deepcopy(ref), torch.randn(32, 128, device="cuda", dtype=torch.float64)


def _held_calls(monkeypatch):
    """The compiled _Parts segments runs step by step (run_held) from here on."""
    calls, run = [], segments.run
    monkeypatch.setattr(segments, "run", lambda part, *a: calls.append(part) or run(part, *a))
    return calls


@needs_cuda
@pytest.mark.parametrize("retain,scratch", [(False, False), (True, False), (False, True), (True, True)])
def test_backward_in_parts_keeps_eager_gradients(retain, scratch, monkeypatch):
    if scratch:  # every temporary a scratch buffer of its own, allocated and dropped around its steps
        monkeypatch.setattr(segments, "SCRATCH_MIN_BYTES", 1)
    held = _held_calls(monkeypatch)
    ref, m, x = _twins(_MLP)
    ref(x).pow(2).sum().backward(retain_graph=retain)
    dyn.reset()
    cm = dyn.compile(m)
    loss = cm(x).pow(2).sum()
    loss.backward(retain_graph=retain)
    assert dyn.stats()["backward_graphs"] == 1 and not dyn.stats()["eager_graphs"]
    assert held and bool(held[-1].scratch) == scratch
    for p, q in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad)
    if retain:  # the saved values were kept: a second backward adds the same gradients again
        loss.backward()
        for p, q in zip(m.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, 2 * q.grad)
    else:
        with pytest.raises(RuntimeError, match="second time"):
            loss.backward()


class _NormMLP(nn.Module):
    """Linear layers with batch norms: the forward updates the running statistics in place."""
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Sequential(nn.Linear(128, 128), nn.BatchNorm1d(128)) for _ in range(4))

    def forward(self, x):
        for layer in self.layers:
            x = nn.functional.gelu(layer(x)) + x
        return x


@needs_cuda
@pytest.mark.parametrize("model", [_MLP, _NormMLP])
def test_forward_in_parts_keeps_eager_results(model, monkeypatch):
    # a forward of many saved values runs step by step (its outputs allocated as its steps need them, the
    # running statistics updated in place); results, gradients and statistics are eager's
    monkeypatch.setattr(segments, "FORWARD_MIN_OUTPUTS", 2)
    held = _held_calls(monkeypatch)
    ref, m, x = _twins(model)
    y = ref(x)
    y.pow(2).sum().backward()
    dyn.reset()
    got = dyn.compile(m)(x)
    got.pow(2).sum().backward()
    assert dyn.stats()["backward_graphs"] == 1 and not dyn.stats()["eager_graphs"]
    assert len(held) == 2  # the forward and the backward
    torch.testing.assert_close(got, y)
    for p, q in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad)
    for p, q in zip(m.buffers(), ref.buffers()):
        torch.testing.assert_close(p, q)


class _WithLoss(nn.Module):
    """Returns its loss and its logits, as an LM computing its own loss: autograd gives the logits no cotangent
    when only the loss is differentiated."""
    def __init__(self):
        super().__init__()
        self.body = _MLP()
        self.head = nn.Linear(128, 64)

    def forward(self, x, y):
        logits = self.head(self.body(x))
        return nn.functional.cross_entropy(logits, y), logits


def _stage_files(root, name):
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.split("_", 1)[-1] == name]


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
def test_backward_of_a_loss_beside_its_logits(device, monkeypatch, tmp_path):
    """The backward compiled first is the variant without the logits' cotangent (dyn-graph-zero-cotangents: no
    zeros made, none added); a backward through the logits too compiles the full one once, which then also
    serves a backward through the logits alone (the loss's cotangent made as zeros). Gradients are eager's in
    each case."""
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    ref = _WithLoss().to(device).double()
    m = copy.deepcopy(ref)
    x = torch.randn(32, 128, device=device, dtype=torch.float64)
    y = torch.randint(0, 64, (32,), device=device)
    dyn.reset()
    cm = dyn.compile(m)

    def both(model, backward):
        for p in model.parameters():
            p.grad = None
        loss, logits = model(x, y)
        backward(loss, logits)
        return logits, [p.grad for p in model.parameters()]

    cases = [(lambda loss, logits: loss.backward(), 1),
             (lambda loss, logits: (loss + logits.square().mean()).backward(), 2),
             (lambda loss, logits: logits.sin().sum().backward(), 2)]
    for backward, compiled in cases:
        want, want_grads = both(ref, backward)
        got, got_grads = both(cm, backward)
        assert dyn.stats()["backward_graphs"] == compiled and not dyn.stats()["eager_graphs"]
        torch.testing.assert_close(got, want)
        for g, w in zip(got_grads, want_grads):
            torch.testing.assert_close(g, w)
        backwards = sorted(_stage_files(tmp_path, "backward.mlir"))
        assert len(backwards) == compiled
        if compiled == 1:  # compiled with the forward: without the logits' cotangent
            assert "dyn.zero_cotangents = array<i64: 1>" in open(backwards[0]).read()
    assert "zero_cotangents" not in open(backwards[1]).read()  # the full one, compiled at the second backward
