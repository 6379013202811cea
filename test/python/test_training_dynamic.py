"""Training graphs with symbolic sizes (docs/dynamic_shapes.md, docs/autograd.md): a model trained on batches of
several sizes compiles its forward and backward once with `?` dims (the second size makes the changed dims
symbolic, as for inference; dyn.mark_dynamic from the first call), runs nothing eagerly, and computes eager's loss
and gradients. Where a training graph cannot be symbolic the capture specializes it, compiled (never eager), with
the reason reported."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn

pytestmark = pytest.mark.skipif(dyn._C is None or not getattr(dyn._C, "HAS_COMPILER", False),
                                reason="dyn._C without the compiler")


def _grads_match(model, ref, **tol):
    for (n, p), q in zip(model.named_parameters(), ref.parameters()):
        if q.grad is None:
            assert p.grad is None, n
            continue
        torch.testing.assert_close(p.grad, q.grad, msg=n, **tol)
        p.grad = None
        q.grad = None


def _symbolic_once(s):
    """One symbolic training entry, at most two captures (the first size specialized), nothing eager."""
    assert s["eager_graphs"] == [] and s["eager_calls"] == 0, s
    assert s["dynamic_entries"] == 1 and s["dynamic_fallbacks"] == 0, s["dynamic_fallback_reasons"]
    assert s["captures"] <= 2 and s["backward_graphs"] <= 2, s


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))


def test_mlp_trains_with_a_symbolic_batch():
    model = _mlp()
    ref = copy.deepcopy(model)
    dyn.reset()
    cm = dyn.compile(model)
    for n in (5, 7, 9, 12):
        x = torch.randn(n, 16)
        y = torch.randint(0, 4, (n,))
        loss = F.cross_entropy(cm(x), y)
        loss.backward()
        want = F.cross_entropy(ref(x), y)
        want.backward()
        torch.testing.assert_close(loss, want)
        _grads_match(model, ref)
    _symbolic_once(dyn.stats())


def test_loss_inside_the_graph_with_symbolic_batch_and_length():
    # the loss (cross_entropy: graph.nll_loss over `?` dims) and a mean over both symbols are in the graph
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 5))
    ref = copy.deepcopy(model)

    def step(m, x, y):
        logits = m(x)
        return F.cross_entropy(logits.flatten(0, 1), y.flatten()) + logits.square().mean()
    dyn.reset()
    fn = dyn.compile(step)
    for b, s in ((2, 3), (3, 5), (4, 7), (2, 9)):
        x, y = torch.randn(b, s, 8), torch.randint(0, 5, (b, s))
        loss = fn(model, x, y)
        loss.backward()
        want = step(ref, x, y)
        want.backward()
        torch.testing.assert_close(loss, want)
        _grads_match(model, ref)
    _symbolic_once(dyn.stats())


def test_mark_dynamic_compiles_the_training_graph_once():
    model = _mlp()
    ref = copy.deepcopy(model)
    dyn.reset()
    cm = dyn.compile(model)
    for n in (6, 10, 3):
        x = torch.randn(n, 16, requires_grad=True)
        xr = x.detach().clone().requires_grad_(True)
        dyn.mark_dynamic(x, 0)
        cm(x).square().sum().backward()
        ref(xr).square().sum().backward()
        torch.testing.assert_close(x.grad, xr.grad)  # an input's gradient has the input's runtime sizes
        _grads_match(model, ref)
    s = dyn.stats()
    assert s["captures"] == 1 and s["dynamic_entries"] == 1 and s["eager_graphs"] == [], s


def test_attention_block_trains_at_any_sequence_length():
    torch.manual_seed(0)

    class Block(nn.Module):
        def __init__(self, d=32, heads=4):
            super().__init__()
            self.heads = heads
            self.ln = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.out = nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.qkv(self.ln(x)).split(d, dim=-1)
            q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.out(a.transpose(1, 2).reshape(b, s, d))
            return x + self.mlp(x)
    model = Block()
    ref = copy.deepcopy(model)
    dyn.reset()
    cm = dyn.compile(model)
    for s in (5, 8, 11):
        x = torch.randn(2, s, 32)
        cm(x).square().mean().backward()
        ref(x).square().mean().backward()
        _grads_match(model, ref)
    _symbolic_once(dyn.stats())


def test_cnn_trains_with_a_symbolic_batch():
    # convolution_backward and adaptive pooling's backward: library calls sizing their gradients at run time
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, stride=2), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5)).double()
    ref = copy.deepcopy(model)
    dyn.reset()
    cm = dyn.compile(model)
    for n in (2, 3, 5):
        x = torch.randn(n, 3, 12, 12, dtype=torch.float64)
        y = torch.randint(0, 5, (n,))
        F.cross_entropy(cm(x), y).backward()
        F.cross_entropy(ref(x), y).backward()
        _grads_match(model, ref)
    _symbolic_once(dyn.stats())


def _classifier_over_batches(model, image):
    """Cross-entropy steps of a float64 classifier over four batch sizes of `image`-shaped inputs: gradients and
    buffers equal eager's after each, one symbolic training entry."""
    ref = copy.deepcopy(model)
    dyn.reset()
    cm = dyn.compile(model)
    for n in (2, 3, 5, 7):
        x = torch.randn(n, *image, dtype=torch.float64)
        y = torch.randint(0, 5, (n,))
        F.cross_entropy(cm(x), y).backward()
        F.cross_entropy(ref(x), y).backward()
        _grads_match(model, ref)
        for (name, b), c in zip(model.named_buffers(), ref.buffers()):
            torch.testing.assert_close(b, c, msg=name)
    _symbolic_once(dyn.stats())


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_trains_with_a_symbolic_batch(momentum):
    # batch statistics over a runtime batch: counts are sums of ones, the unbiased variance divides by n - 1,
    # the running statistics (momentum or the cumulative average) come back updated as eager's
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8, momentum=momentum),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 6),
                          nn.BatchNorm1d(6, momentum=momentum), nn.Linear(6, 5)).double()
    _classifier_over_batches(model, (3, 10, 10))


def test_cnn_stem_max_pooling_trains_with_a_symbolic_batch():
    # a torchvision stem (convolution, batch norm, ReLU, 3x3/2 max pooling with padding): the pooling's
    # backward scatters the cotangent to eager's maxima (graph.max_pool_with_indices, then ATen's
    # max_pool2d_with_indices_backward sized as its input at run time), one compile for every batch size
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.MaxPool2d(3, stride=2, padding=1), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 3 * 3, 5)).double()
    _classifier_over_batches(model, (3, 12, 12))


def test_buffer_updated_in_place_by_a_symbolic_training_graph():
    # a statically shaped buffer updated in place (a running sum of the batch's mean) beside `?` activations:
    # the training kernel returns its new value, which the runner copies into it
    class Tracked(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(6, 6)
            self.register_buffer("seen", torch.zeros(6))

        def forward(self, x):
            h = self.lin(x)
            with torch.no_grad():
                self.seen.add_(h.mean(0))
            return h.relu().sum()
    torch.manual_seed(0)
    model = Tracked()
    ref = copy.deepcopy(model)
    dyn.reset()
    cm = dyn.compile(model)
    for n in (3, 4, 7):
        x = torch.randn(n, 6)
        cm(x).backward()
        ref(x).backward()
        _grads_match(model, ref)
        torch.testing.assert_close(model.seen, ref.seen)
    _symbolic_once(dyn.stats())


def test_a_training_graph_that_cannot_be_symbolic_is_specialized_with_its_reason():
    # the gradient of a concatenation along a `?` dim is not built with dynamic sizes yet: each size gets a
    # specialized, compiled graph (never eager), and the reason is reported
    w = torch.randn(4, 3, requires_grad=True)

    def f(x, w):
        return torch.cat([x, x * 2], 0).matmul(w).square().sum()
    dyn.reset()
    fn = dyn.compile(f)
    for n in (3, 5, 6):
        x = torch.randn(n, 4, requires_grad=True)
        fn(x, w).backward()
        xr, wr = x.detach().clone().requires_grad_(True), w.detach().clone().requires_grad_(True)
        f(xr, wr).backward()
        torch.testing.assert_close(x.grad, xr.grad)
        torch.testing.assert_close(w.grad, wr.grad)
        w.grad = None
    s = dyn.stats()
    assert s["eager_graphs"] == [] and s["dynamic_entries"] == 0, s
    assert any("along the concatenated dim" in why for why in s["dynamic_fallback_reasons"]), \
        s["dynamic_fallback_reasons"]
