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

# every test on the CPU, and on CUDA where there is a device (the same graphs through the GPU pipeline's launch
# plan, which sizes kernels, temporaries and library calls from the runtime sizes)
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                 reason="needs a CUDA device"))]
on_devices = pytest.mark.parametrize("device", DEVICES)


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


def _trains_over_lengths(model, lengths, width, device):
    """Steps of `model` on [2, length, width] inputs (loss: the outputs' mean square) compiled and eagerly: equal
    gradients at every length, one symbolic training entry."""
    ref = copy.deepcopy(model)
    dyn.reset()
    cm = dyn.compile(model)
    for s in lengths:
        x = torch.randn(2, s, width, device=device)
        cm(x).square().mean().backward()
        ref(x).square().mean().backward()
        _grads_match(model, ref)
    _symbolic_once(dyn.stats())


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))


@on_devices
def test_mlp_trains_with_a_symbolic_batch(device):
    model = _mlp().to(device)
    ref = copy.deepcopy(model)
    dyn.reset()
    cm = dyn.compile(model)
    for n in (5, 7, 9, 12):
        x = torch.randn(n, 16, device=device)
        y = torch.randint(0, 4, (n,), device=device)
        loss = F.cross_entropy(cm(x), y)
        loss.backward()
        want = F.cross_entropy(ref(x), y)
        want.backward()
        torch.testing.assert_close(loss, want)
        _grads_match(model, ref)
    _symbolic_once(dyn.stats())


@on_devices
def test_loss_inside_the_graph_with_symbolic_batch_and_length(device):
    # the loss (cross_entropy: graph.nll_loss over `?` dims) and a mean over both symbols are in the graph
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 5)).to(device)
    ref = copy.deepcopy(model)

    def step(m, x, y):
        logits = m(x)
        return F.cross_entropy(logits.flatten(0, 1), y.flatten()) + logits.square().mean()
    dyn.reset()
    fn = dyn.compile(step)
    for b, s in ((2, 3), (3, 5), (4, 7), (2, 9)):
        x, y = torch.randn(b, s, 8, device=device), torch.randint(0, 5, (b, s), device=device)
        loss = fn(model, x, y)
        loss.backward()
        want = step(ref, x, y)
        want.backward()
        torch.testing.assert_close(loss, want)
        _grads_match(model, ref)
    _symbolic_once(dyn.stats())


@on_devices
def test_mark_dynamic_compiles_the_training_graph_once(device):
    model = _mlp().to(device)
    ref = copy.deepcopy(model)
    dyn.reset()
    cm = dyn.compile(model)
    for n in (6, 10, 3):
        x = torch.randn(n, 16, device=device, requires_grad=True)
        xr = x.detach().clone().requires_grad_(True)
        dyn.mark_dynamic(x, 0)
        cm(x).square().sum().backward()
        ref(xr).square().sum().backward()
        torch.testing.assert_close(x.grad, xr.grad)  # an input's gradient has the input's runtime sizes
        _grads_match(model, ref)
    s = dyn.stats()
    assert s["captures"] == 1 and s["dynamic_entries"] == 1 and s["eager_graphs"] == [], s


@on_devices
def test_attention_block_trains_at_any_sequence_length(device):
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
    _trains_over_lengths(Block().to(device), (5, 8, 11), 32, device)


@on_devices
@pytest.mark.parametrize("mask", ["causal", "window", "offset"])
def test_causal_mask_from_aranges_trains_through_the_fused_kernel(device, mask, tmp_path, monkeypatch):
    """A causal mask built from aranges of the symbolic length (transformers' sdpa_mask under compilation) is
    read as is_causal (ops/causal.py): the symbolic forward runs eager's fused kernel keeping its log-sum-exp for
    the backward kernel (graph.attention_lse, sized at run time). A sliding window or a shifted diagonal is no
    causal mask: it stays a mask. Gradients are eager's either way."""
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)

    class Attention(nn.Module):
        def __init__(self, d=32, heads=4):
            super().__init__()
            self.heads, self.qkv, self.out = heads, nn.Linear(d, 3 * d), nn.Linear(d, d)

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = (t.view(b, s, self.heads, -1).transpose(1, 2) for t in self.qkv(x).split(d, dim=-1))
            pos = torch.arange(s, device=x.device)
            m = pos[None, :] <= (pos[:, None] + 1 if mask == "offset" else pos[:, None])
            if mask == "window":
                m = m & (pos[:, None] - pos[None, :] < 3)
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=m[None, None].expand(b, 1, s, s))
            return self.out(a.transpose(1, 2).reshape(b, s, d))
    _trains_over_lengths(Attention().to(device), (5, 8, 11), 32, device)
    symbolic = [p.read_text() for p in tmp_path.rglob("*forward.loop.mlir") if "x?x" in p.read_text()]
    assert symbolic
    assert all(('library_call "attention_lse"' in t) == (mask == "causal") for t in symbolic), symbolic


@on_devices
def test_strided_slices_beside_a_symbolic_dim_train(device):
    """Strided slices of a static dim beside a `?` one (a rotary embedding's interleaved halves, x[..., ::2] and
    x[..., 1::2]; a step of 3 whose last stride runs past the dim): their cotangents are the gradient interleaved
    with zeros, built with runtime sizes, so the graph stays symbolic."""
    torch.manual_seed(0)

    class Interleaved(nn.Module):
        def __init__(self, d=16):
            super().__init__()
            self.lin = nn.Linear(d, d)

        def forward(self, x):
            h = self.lin(x)
            a, b, c = h[..., ::2], h[..., 1::2], h[..., 2::3]
            return torch.cat([a * 2 - b, a + b * 3, c.exp()], dim=-1)
    _trains_over_lengths(Interleaved().to(device), (5, 8, 11), 16, device)


@on_devices
def test_large_vocabulary_embedding_trains_through_the_library_at_any_length(device, tmp_path, monkeypatch):
    """An embedding of 20,000 rows read by a `?` number of tokens: its weight gradient is ATen's embedding
    backward over the tokens' rows (graph.embedding_backward with `?` tokens), not a one-hot GEMM of the whole
    vocabulary times the tokens (GPT-2's 50,257 rows: a 0.2 ms GEMM per step on an H200); a small table (the
    positions) keeps the one-hot GEMM. Repeated ids accumulate as in eager."""
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)

    class Lm(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens, self.positions, self.head = nn.Embedding(20000, 16), nn.Embedding(64, 16), nn.Linear(16, 5)

        def forward(self, ids):
            return self.head(self.tokens(ids) + self.positions(torch.arange(ids.shape[1], device=ids.device)))
    model = Lm().to(device)
    ref = copy.deepcopy(model)
    dyn.reset()
    cm = dyn.compile(model)
    for s in (5, 8, 11):
        ids = torch.randint(0, 20000, (2, s), device=device)
        ids[1, 0] = ids[0, 0]  # a repeated id
        cm(ids).square().mean().backward()
        ref(ids).square().mean().backward()
        _grads_match(model, ref)
    _symbolic_once(dyn.stats())
    symbolic = [p.read_text() for p in tmp_path.rglob("*backward.mlir") if "x?x" in p.read_text() or "<?x" in p.read_text()]
    assert symbolic and all(t.count("graph.embedding_backward") == 1 for t in symbolic), symbolic


@on_devices
def test_cnn_trains_with_a_symbolic_batch(device):
    # convolution_backward and adaptive pooling's backward: library calls sizing their gradients at run time
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, stride=2), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5)).double().to(device)
    ref = copy.deepcopy(model)
    dyn.reset()
    cm = dyn.compile(model)
    for n in (2, 3, 5):
        x = torch.randn(n, 3, 12, 12, dtype=torch.float64, device=device)
        y = torch.randint(0, 5, (n,), device=device)
        F.cross_entropy(cm(x), y).backward()
        F.cross_entropy(ref(x), y).backward()
        _grads_match(model, ref)
    _symbolic_once(dyn.stats())


def _classifier_over_batches(model, image, device):
    """Cross-entropy steps of a float64 classifier over four batch sizes of `image`-shaped inputs: gradients and
    buffers equal eager's after each, one symbolic training entry."""
    model = model.to(device)
    ref = copy.deepcopy(model)
    dyn.reset()
    cm = dyn.compile(model)
    for n in (2, 3, 5, 7):
        x = torch.randn(n, *image, dtype=torch.float64, device=device)
        y = torch.randint(0, 5, (n,), device=device)
        F.cross_entropy(cm(x), y).backward()
        F.cross_entropy(ref(x), y).backward()
        _grads_match(model, ref)
        for (name, b), c in zip(model.named_buffers(), ref.buffers()):
            torch.testing.assert_close(b, c, msg=name)
    _symbolic_once(dyn.stats())


@on_devices
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_trains_with_a_symbolic_batch(momentum, device):
    # batch statistics over a runtime batch: counts are sums of ones, the unbiased variance divides by n - 1,
    # the running statistics (momentum or the cumulative average) come back updated as eager's
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8, momentum=momentum),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 6),
                          nn.BatchNorm1d(6, momentum=momentum), nn.Linear(6, 5)).double()
    _classifier_over_batches(model, (3, 10, 10), device)


@on_devices
def test_cnn_stem_max_pooling_trains_with_a_symbolic_batch(device):
    # a torchvision stem (convolution, batch norm, ReLU, 3x3/2 max pooling with padding): the pooling's
    # backward scatters the cotangent to eager's maxima (graph.max_pool_with_indices, then ATen's
    # max_pool2d_with_indices_backward sized as its input at run time), one compile for every batch size
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.MaxPool2d(3, stride=2, padding=1), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 3 * 3, 5)).double()
    _classifier_over_batches(model, (3, 12, 12), device)


@on_devices
def test_buffer_updated_in_place_by_a_symbolic_training_graph(device):
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
    model = Tracked().to(device)
    ref = copy.deepcopy(model)
    dyn.reset()
    cm = dyn.compile(model)
    for n in (3, 4, 7):
        x = torch.randn(n, 6, device=device)
        cm(x).backward()
        ref(x).backward()
        _grads_match(model, ref)
        torch.testing.assert_close(model.seen, ref.seen)
    _symbolic_once(dyn.stats())


@on_devices
def test_concatenation_along_a_symbolic_dim_trains(device):
    # the cotangent of a concatenation along a `?` dim is cut between runtime offsets (graph.dynamic_slice), a
    # slice of it to static bounds gets the cotangent padded to the runtime length
    w = torch.randn(4, 3, device=device, requires_grad=True)

    def f(x, w):
        return torch.cat([x, x * 2, x[:1]], 0).matmul(w).square().sum()
    _function_over_batches(f, w, device)
    _symbolic_once(dyn.stats())


def _function_over_batches(f, w, device):
    """f(x, w) compiled and eagerly for x of 3, 5 and 6 rows: equal gradients of x and w."""
    dyn.reset()
    fn = dyn.compile(f)
    for n in (3, 5, 6):
        x = torch.randn(n, 4, device=device, requires_grad=True)
        fn(x, w).backward()
        xr, wr = x.detach().clone().requires_grad_(True), w.detach().clone().requires_grad_(True)
        f(xr, wr).backward()
        torch.testing.assert_close(x.grad, xr.grad)
        torch.testing.assert_close(w.grad, wr.grad)
        w.grad = None


@on_devices
def test_learned_positions_sliced_to_a_symbolic_length_train(device):
    # a learned position table cut to the sequence length (pos[:, :x.shape[1]]): its gradient is the cotangent
    # padded with zeros to the table's length at run time
    class Positions(nn.Module):
        def __init__(self):
            super().__init__()
            self.pos = nn.Parameter(torch.randn(1, 32, 8))
            self.lin = nn.Linear(8, 8)

        def forward(self, x):
            return self.lin(x + self.pos[:, :x.shape[1]]).tanh()
    torch.manual_seed(0)
    _trains_over_lengths(Positions().to(device), (5, 9, 17), 8, device)


def test_a_training_graph_that_cannot_be_symbolic_is_specialized_with_its_reason():
    # the gradient of an attention mask of another rank than the scores' is not built with dynamic sizes yet:
    # each size gets a specialized, compiled graph (never eager), and the reason is reported
    w = torch.randn(3, 3, requires_grad=True)

    def f(x, w):
        q = x[:, None, :].expand(-1, 3, -1)
        return F.scaled_dot_product_attention(q, q * 2, q + 1, attn_mask=w).square().sum()
    _function_over_batches(f, w, "cpu")
    s = dyn.stats()
    assert s["eager_graphs"] == [] and s["dynamic_entries"] == 0, s
    assert any("where its mask needs a gradient" in why for why in s["dynamic_fallback_reasons"]), \
        s["dynamic_fallback_reasons"]
