"""Compiled training: graphs whose inputs require grad run as one autograd node with a dyn-compiled forward
and backward (dyn-graph-autodiff, dyn-graph-partition). Gradients are checked against eager autograd: per
OpInfo sample (float64), per autograd semantic, and over whole training loops."""
import copy
import math

import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint
from torch.testing._internal.common_methods_invocations import op_db

import dyn

# over a minute: left out of the quick loop, pytest -m "not slow" (docs/contributing.md)
pytestmark = pytest.mark.slow

OPS = {op.name + (f".{op.variant_test_name}" if op.variant_test_name else ""): op for op in op_db}

# OpInfos whose every op has a derivative rule in GraphDerivatives.td (capture records them as registered
# graph ops): each must compile with a dyn backward for its first samples and give eager's gradients.
DIFFERENTIATED = [
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "tanh", "sinh", "cosh", "atan",
    "asin", "acos", "sigmoid", "sqrt", "rsqrt", "reciprocal", "erf", "neg", "abs", "nn.functional.relu",
    "nn.functional.silu", "nn.functional.gelu", "nn.functional.leaky_relu", "nn.functional.elu",
    "nn.functional.softplus", "nn.functional.hardtanh", "add", "sub", "mul", "div.no_rounding_mode", "pow",
    "maximum", "minimum", "where", "lerp", "sum", "mean", "amax", "amin", "softmax", "log_softmax", "matmul", "mm", "dot",
    "bmm", "addmm", "nn.functional.linear", "reshape", "view", "permute", "t", "expand", "narrow", "cat",
    "nn.functional.layer_norm", "nn.functional.rms_norm", "nn.functional.nll_loss", "nn.functional.cross_entropy",
    "nn.functional.embedding", "nn.functional.mse_loss", "nn.functional.l1_loss", "nn.functional.smooth_l1_loss",
    "nn.functional.huber_loss", "nn.functional.binary_cross_entropy_with_logits", "nn.functional.kl_div",
    "nn.functional.soft_margin_loss", "transpose", "squeeze", "unsqueeze", "flatten",
    "nn.functional.hardswish", "nn.functional.hardsigmoid", "nn.functional.conv2d", "nn.functional.max_pool2d",
    "nn.functional.adaptive_avg_pool2d", "nn.functional.batch_norm", "nn.functional.scaled_dot_product_attention",
    "nn.functional.pad.constant",
]


def _leaves(args, requires):
    """Fresh leaves for the sample's tensors (same values): float tensors require grad where the sample's
    do (OpInfo marks those the op is differentiable in), or all float tensors with requires=True."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            out.append(a.detach().clone().requires_grad_(requires is True or a.requires_grad))
        elif isinstance(a, (list, tuple)) and a and all(isinstance(x, torch.Tensor) for x in a):
            out.append(type(a)(_leaves(a, requires)))
        else:
            out.append(a)
    return out


def _flat(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in _flat(x)]
    return []


def _close_or_closer(got, want, exact, atol, rtol):
    """got == want within the dtype's tolerance; where they differ beyond it, got must be within that
    tolerance of the exact value (float64) or at least as close to it as eager's want (opinfo_check's rule:
    eager's float32 kernels are not the truth either; tolerances are not widened)."""
    try:
        torch.testing.assert_close(got, want, atol=atol, rtol=rtol, equal_nan=True)
        return
    except AssertionError:
        if exact is None or got.dtype == torch.float64:
            raise
    rt, at = torch.testing._comparison.default_tolerances(got.dtype)
    rt, at = rtol if rtol is not None else rt, atol if atol is not None else at
    g, w = got.double(), want.double()
    err_g, err_w = (g - exact).abs().nan_to_num(float("inf")), (w - exact).abs().nan_to_num(float("inf"))
    ok = (err_g <= at + rt * exact.abs()) | (err_g <= err_w) | (g.isnan() & exact.isnan())
    assert bool(ok.all()), f"differs from eager and from the exact value: {float((err_g - err_w).max()):.3e}"


def check_gradients(fn, args, kwargs=None, atol=None, rtol=None, requires=True):
    """fn through dyn.compile(fullgraph=True) and eagerly, on leaves with equal values: outputs and the
    gradients of every leaf under random cotangents must agree (or, in float32, dyn be within tolerance of
    the float64 result or as close to it as eager). Returns dyn.stats() of the compiled call."""
    kwargs = kwargs or {}
    dyn.reset()
    mine, ref, exact_in = _leaves(args, requires), _leaves(args, requires), _leaves(args, requires)
    got = dyn.compile(fn, fullgraph=True)(*mine, **kwargs)
    stats = dyn.stats()
    want = fn(*ref, **kwargs)
    got_t, want_t = _flat(got), _flat(want)
    assert len(got_t) == len(want_t)
    torch.manual_seed(1)
    cts = [torch.randn_like(w) if w.requires_grad else None for w in want_t]
    exact_t, exact_g = [None] * len(want_t), None
    if any(t.dtype == torch.float32 for t in want_t):
        exact_in = [t.double().detach().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) and
                    t.is_floating_point() else t for t in exact_in]
        try:
            exact_t = [t.detach() for t in _flat(fn(*exact_in, **kwargs))]
            ex_pairs = [(e, c.double()) for e, c in zip(_flat(fn(*exact_in, **kwargs)), cts) if c is not None]
            ex_l = [t for t in _flat(exact_in) if isinstance(t, torch.Tensor) and t.requires_grad]
            exact_g = torch.autograd.grad([e for e, _ in ex_pairs], ex_l, [c for _, c in ex_pairs], allow_unused=True)
        except Exception:  # an op without a float64 kernel: compared with eager alone
            exact_t, exact_g = [None] * len(want_t), None
    for g, w, e in zip(got_t, want_t, exact_t):
        _close_or_closer(g, w, e, atol, rtol)
        assert g.requires_grad == w.requires_grad
    pairs = [(g, w, c) for g, w, c in zip(got_t, want_t, cts) if c is not None]
    if not pairs:
        return stats
    mine_l = [t for t in _flat(mine) if t.requires_grad]
    ref_l = [t for t in _flat(ref) if t.requires_grad]
    gg = torch.autograd.grad([g for g, _, _ in pairs], mine_l, [c for _, _, c in pairs], allow_unused=True)
    gw = torch.autograd.grad([w for _, w, _ in pairs], ref_l, [c for _, _, c in pairs], allow_unused=True)
    for k, (a, b) in enumerate(zip(gg, gw)):
        if b is None or b.numel() == 0:
            assert a is None or not a.any()
        else:
            _close_or_closer(a, b, exact_g[k] if exact_g is not None else None, atol, rtol)
    return stats


# Views alone are no graph (capture returns a view of the input): these are checked inside a product.
VIEWS = {"reshape", "view", "permute", "t", "expand", "narrow", "transpose", "squeeze", "unsqueeze", "flatten"}


needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
# float64 on the CPU; float32 on CUDA (the GPU's kernels and library calls, eager's default tolerances)
PLACES = [("cpu", torch.float64), pytest.param("cuda", torch.float32, marks=needs_cuda)]


@pytest.mark.parametrize("device,dtype", PLACES)
@pytest.mark.parametrize("name", DIFFERENTIATED)
def test_opinfo_gradients(name, device, dtype):
    op = OPS[name]
    torch.manual_seed(0)
    compiled = 0
    for sample in list(op.sample_inputs(device, dtype, requires_grad=True))[:8]:
        args = [sample.input, *sample.args]

        def call(*a, **kw):
            r = op.op(*a, **kw)
            return r * 2 if name in VIEWS else r
        try:
            stats = check_gradients(call, args, sample.kwargs, requires="sample")
        except dyn.Unsupported:
            continue  # a sample capture breaks on (fullgraph): not this test's subject
        compiled += stats["backward_graphs"]
        assert stats["backward_graphs"] == 0 or not stats["eager_graphs"]
    assert compiled, f"no sample of {name} compiled with a dyn backward"


# -- autograd semantics, one at a time ---------------------------------------------------------------------

def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))


def test_module_training_step_is_compiled():
    m = _mlp()
    ref = copy.deepcopy(m)
    x = torch.randn(5, 8)
    dyn.reset()
    out = dyn.compile(m)(x)
    s = dyn.stats()
    assert s["backward_graphs"] == 1 and s["eager_graphs"] == []
    assert out.requires_grad and out.grad_fn is not None
    out.square().sum().backward()
    ref(x).square().sum().backward()
    for p, q in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad)


def test_grad_accumulates_over_calls_and_retain_graph():
    m = _mlp()
    ref = copy.deepcopy(m)
    cm = dyn.compile(m)
    x = torch.randn(5, 8)
    for _ in range(2):
        cm(x).sum().backward()
        ref(x).sum().backward()
    out, want = cm(x).sum(), ref(x).sum()
    out.backward(retain_graph=True)
    out.backward()
    want.backward(retain_graph=True)
    want.backward()
    for p, q in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad)


def test_autograd_grad_hooks_and_input_gradients():
    w = torch.randn(6, 6, dtype=torch.float64, requires_grad=True)

    def f(x, w):
        return torch.tanh(x @ w).sum(-1)

    x = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.clone()))
    y = dyn.compile(f)(x, w)
    y.register_hook(lambda g: g * 2)
    gx, gw = torch.autograd.grad(y.sum(), (x, w))
    x2 = x.detach().requires_grad_(True)
    y2 = f(x2, w)
    y2.register_hook(lambda g: g * 2)
    gx2, gw2 = torch.autograd.grad(y2.sum(), (x2, w))
    torch.testing.assert_close(gx, gx2)
    torch.testing.assert_close(gw, gw2)
    assert len(seen) == 1 and torch.equal(seen[0], gx)


def test_no_grad_region_detach_and_integer_outputs():
    def f(x, w):
        with torch.no_grad():
            scale = (x * w).abs().amax()
        y = (x * w) / scale + x.detach() * w
        return y, y.argmax(-1)

    x = torch.randn(4, 5, requires_grad=True)
    w = torch.randn(4, 5, requires_grad=True)
    stats = check_gradients(f, [x, w])
    assert stats["backward_graphs"] == 1
    y, idx = dyn.compile(f)(x, w)
    assert not idx.requires_grad and idx.dtype == torch.int64


def test_double_backward_raises():
    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    y = dyn.compile(lambda t: torch.sin(t) * t)(x)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    with pytest.raises(RuntimeError):
        g.sum().backward()


def test_dropout_backward_replays_the_forward_mask():
    def f(x):
        return F.dropout(x, 0.4, training=True)

    x = torch.ones(64, 32, requires_grad=True)
    dyn.reset()
    y = dyn.compile(f)(x)
    assert dyn.stats()["backward_graphs"] == 1
    y.sum().backward()
    # eager's rule: grad = mask * 1/(1-p), and y = x * mask / (1-p) with x = 1
    torch.testing.assert_close(x.grad, y.detach())
    assert 0.3 < (y == 0).float().mean() < 0.5


def test_graph_without_a_rule_runs_eager_autograd_visibly():
    def f(x):
        return torch.cumsum(x, 1).sin()

    x = torch.randn(3, 4, requires_grad=True)
    dyn.reset()
    with pytest.warns(UserWarning, match="no derivative rule"):
        y = dyn.compile(f)(x)
    s = dyn.stats()
    assert s["backward_graphs"] == 0 and any("no derivative rule" in g["reason"] for g in s["eager_graphs"])
    y.sum().backward()
    x2 = x.detach().requires_grad_(True)
    f(x2).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad)


# -- training loops ------------------------------------------------------------------------------------------

class TinyTransformer(nn.Module):
    def __init__(self, vocab=50, d=32, heads=4, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(16, d) * 0.02)
        # bias=False: the key projection's bias has a zero gradient in exact arithmetic (softmax ignores it), so
        # AdamW would turn rounding noise into steps that differ between any two implementations
        layer = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, batch_first=True, norm_first=True,
                                           bias=False)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids, targets):
        h = self.emb(ids) + self.pos[: ids.shape[1]]
        logits = self.head(self.enc(h))
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def _train(model, batches, compiled, steps):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    fwd = dyn.compile(model) if compiled else model
    losses = []
    for k in range(steps):
        loss = fwd(*batches[k % len(batches)])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
@pytest.mark.parametrize("make", ["mlp", "transformer"])
def test_training_loop_matches_eager(make, device):
    torch.manual_seed(0)
    if make == "mlp":
        model = nn.Sequential(nn.Linear(16, 64), nn.SiLU(), nn.LayerNorm(64), nn.Linear(64, 10))
        batches = [(torch.randn(8, 16), torch.randint(0, 10, (8,))) for _ in range(2)]
        crit = nn.CrossEntropyLoss()
        net = model

        class WithLoss(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = net

            def forward(self, x, y):
                return crit(self.net(x), y)
        model = WithLoss()
    else:
        model = TinyTransformer()
        batches = [(torch.randint(0, 50, (4, 12)), torch.randint(0, 50, (4, 12))) for _ in range(2)]
    model = model.to(device)
    batches = [tuple(t.to(device) for t in b) for b in batches]
    ref = copy.deepcopy(model)
    dyn.reset()
    got = _train(model, batches, True, 20)
    s = dyn.stats()
    want = _train(ref, batches, False, 20)
    assert s["backward_graphs"] >= 1 and s["eager_graphs"] == [], s["eager_graphs"]
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-4, atol=1e-5)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
def test_large_embedding_backward_is_atens(device, tmp_path, monkeypatch):
    """An embedding whose one-hot [vocabulary, tokens] matrix would be large (an LM's) takes ATen's embedding
    backward, not a one-hot GEMM; its gradient is eager's (the same kernel)."""
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    emb = torch.nn.Embedding(50000, 16).to(device)
    ids = torch.randint(0, 50000, (4, 64), device=device)
    ids[0, :8] = 7  # repeated rows sum
    ct = torch.randn(4, 64, 16, device=device)
    want = torch.autograd.grad(emb(ids), emb.weight, ct)[0]
    dyn.reset()
    got = torch.autograd.grad(dyn.compile(emb)(ids), emb.weight, ct)[0]
    assert dyn.stats()["backward_graphs"] == 1
    torch.testing.assert_close(got, want)
    backward = "".join(p.read_text() for p in tmp_path.rglob("*backward.loop.mlir"))
    assert 'library_call "embedding_backward"' in backward and "loop.matmul" not in backward, backward[:2000]


def test_attention_with_a_learned_float_mask():
    # T5's relative position bias is an additive mask that requires grad
    q, k, v = (torch.randn(2, 3, 5, 8, dtype=torch.float64) for _ in range(3))
    bias = torch.randn(1, 3, 5, 5, dtype=torch.float64)
    stats = check_gradients(lambda q, k, v, b: F.scaled_dot_product_attention(q, k, v, attn_mask=b), [q, k, v, bias])
    assert stats["backward_graphs"] == 1 and not stats["eager_graphs"]


@pytest.mark.parametrize("device,dtype", [("cpu", torch.float32), ("cpu", torch.float64),
                                          pytest.param("cuda", torch.float32, marks=needs_cuda),
                                          pytest.param("cuda", torch.bfloat16, marks=needs_cuda)])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_backward_reads_the_forwards_log_sum_exp(device, dtype, causal, tmp_path, monkeypatch):
    """[B, H, L, E] attention without a mask trains through graph.attention_lse: eager's fused kernel
    (flash on the CPU and for bfloat16 on CUDA, memory-efficient for float32 on CUDA) keeps its
    log-sum-exp for the backward kernel, which does not run the forward again; gradients are eager's."""
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, n, 16, device=device, dtype=dtype, requires_grad=True) for n in (40, 33, 33))
    fn = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
    ct = torch.randn(2, 4, 40, 16, device=device, dtype=dtype)
    want = torch.autograd.grad(fn(q, k, v), (q, k, v), ct)
    dyn.reset()
    got = torch.autograd.grad(dyn.compile(fn)(q, k, v), (q, k, v), ct)
    s = dyn.stats()
    assert s["backward_graphs"] == 1 and s["eager_graphs"] == [], s
    for g, w in zip(got, want):  # the same kernels as eager's
        torch.testing.assert_close(g, w)
    stages = {p.name: p.read_text() for p in tmp_path.rglob("*.mlir")}
    forward = "".join(t for n, t in stages.items() if n.endswith("forward.loop.mlir"))
    backward = "".join(t for n, t in stages.items() if n.endswith("backward.loop.mlir"))
    assert forward.count('library_call "attention_lse"') == 1, forward
    assert 'library_call "attention_lse_backward"' in backward
    assert 'library_call "attention_lse"' not in backward and "attention_backward" not in backward


def test_attention_dropout_in_training_is_compiled():
    # the probabilities drop out (dyn's numbers): the backward replays the same mask, so the gradient of
    # sum(out * v-independent weights) is consistent with the output through v's linearity
    q, k = torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 8)
    v = torch.randn(2, 4, 6, 8, requires_grad=True)
    dyn.reset()
    out = dyn.compile(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.3))(q, k, v)
    assert dyn.stats()["backward_graphs"] == 1
    ct = torch.randn_like(out)
    (gv,) = torch.autograd.grad(out, v, ct)
    # out = P_dropped @ v is linear in v: <ct, out> == <gv, v>
    torch.testing.assert_close((ct * out).sum(), (gv * v).sum())


@needs_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("causal,mask", [(False, None), (True, None), (False, "bool"), (False, "float"),
                                         (False, "learned")])
def test_attention_dropout_trains_with_the_fused_kernel(dtype, causal, mask, tmp_path, monkeypatch):
    """On CUDA, attention with dropout in training runs eager's fused kernel (memory-efficient for float32 and
    with a mask, flash for halves), which draws the mask; its backward kernel reads the random state the forward
    returned, so the gradients are those of the mask the forward applied. Where SDPA's dispatch picks neither of
    those kernels (cuDNN's attention for halves on Hopper) the math path with dyn's dropout runs instead, checked
    the same way. With v the identity the output is the
    dropped-out probabilities A = P * M / (1 - p) themselves, from which every gradient follows (a float64
    oracle). A [B, 1, L, S] attention mask (a padding mask as transformers builds it, or an additive bias) is the
    memory-efficient kernel's bias; a bias that takes a gradient (T5's learned position bias) takes the math
    path, whose backward gives it one."""
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    B, H, L, p = 2, 3, 64, 0.25
    q, k = ((torch.randn(B, H, L, L, device="cuda") * 0.5).to(dtype).requires_grad_() for _ in range(2))
    v = torch.eye(L, device="cuda", dtype=dtype).expand(B, H, L, L).contiguous().requires_grad_()
    m = None
    if mask == "bool":  # the last keys of one sequence are padding
        m = torch.ones(B, 1, L, L, dtype=torch.bool, device="cuda")
        m[1, :, :, L - 20:] = False
    elif mask in ("float", "learned"):
        m = torch.randn(B, 1, L, L, device="cuda").to(dtype).requires_grad_(mask == "learned")
    fn = lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m, dropout_p=p, is_causal=causal)  # noqa: E731
    dyn.reset()
    out = dyn.compile(fn)(q, k, v, m)
    g = torch.randn_like(out)
    got = torch.autograd.grad(out, (q, k, v) + ((m,) if mask == "learned" else ()), g)
    s = dyn.stats()
    assert s["backward_graphs"] == 1 and s["eager_graphs"] == [], s
    scale = L ** -0.5
    scores = q.double() @ k.double().transpose(-1, -2) * scale
    if causal:
        scores = scores.masked_fill(~torch.ones(L, L, dtype=torch.bool, device="cuda").tril(), float("-inf"))
    if mask == "bool":
        scores = scores.masked_fill(~m, float("-inf"))
    elif mask in ("float", "learned"):
        scores = scores + m.double()
    P, A = scores.softmax(-1), out.double()
    kept = A != 0
    assert 0.65 < kept[P > 0].double().mean().item() < 0.85  # about 1 - p of the probabilities kept
    tol = dict(atol=1e-5, rtol=1e-4) if dtype == torch.float32 else dict(atol=1e-3, rtol=1e-2)
    torch.testing.assert_close(A[kept], (P / (1 - p))[kept], **tol)
    dP = g.double() * kept / (1 - p)  # dA = g v^T = g
    dS = P * (dP - (dP * P).sum(-1, keepdim=True))
    want = (dS @ k.double() * scale, dS.transpose(-1, -2) @ q.double() * scale, A.transpose(-1, -2) @ g.double())
    if mask == "learned":  # the bias's gradient: the scores', summed over the heads it is broadcast to
        want += (dS.sum(1, keepdim=True),)
    for name, gt, w in zip("qkvm", got, want):
        torch.testing.assert_close(gt.double(), w, **tol, msg=lambda m: f"grad {name}: {m}")
    stages = {f.name: f.read_text() for f in tmp_path.rglob("*.mlir")}
    forward = "".join(t for n, t in stages.items() if n.endswith("forward.loop.mlir"))
    backward = "".join(t for n, t in stages.items() if n.endswith("backward.loop.mlir"))
    probe = [torch.empty(1, 1, L, L, dtype=dtype, device="cuda")] * 3
    choice = torch._fused_sdp_choice(*probe, None if m is None else m[:1, :1], 0.0, causal)
    op = "attention_lse" if m is None else "masked_attention_lse"
    fused = (choice in (1, 2) if m is None else choice == 2) and mask != "learned"
    assert forward.count(f'library_call "{op}"') == int(fused), forward
    assert (f'library_call "{op}_backward"' in backward) == fused


def test_explain_and_debug_dumps_show_the_backward(tmp_path, monkeypatch):
    m = _mlp()
    x = torch.randn(3, 8)
    out = dyn.explain(m)(x)
    assert out.backends[0]["backend"] == "dyn (cpu, forward and backward)" and out.backends[0]["compiled"]
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    dyn.reset()
    dyn.compile(_mlp())(x).sum().backward()
    files = sorted(p.name for p in tmp_path.rglob("*.mlir"))
    assert any(f.endswith("_joint.mlir") for f in files) and any(f.endswith("_backward.mlir") for f in files)
    joint = next(tmp_path.rglob("*_joint.mlir")).read_text()
    assert "dyn.cotangent" in joint and "dyn.joint" in joint


class _ConvNet(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.c1 = nn.Conv2d(3, width, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(width)
        self.c2 = nn.Conv2d(width, width, 3, padding=1)
        self.head = nn.Linear(width, 5)

    def forward(self, x):
        h = F.relu(self.bn(self.c1(x)))
        h = F.relu(self.c2(h) + h)
        return self.head(h.mean((2, 3)))


def _backward_beside_eager(m, shape, device, dtype):
    """One square-sum backward of m compiled and of an eager copy on the same input (cuDNN without TF32):
    the input, its eager twin and the eager copy, after checking one compiled backward and no eager graph."""
    ref = copy.deepcopy(m)
    x = torch.randn(shape, device=device, dtype=dtype, requires_grad=True)
    xr = x.detach().clone().requires_grad_()
    dyn.reset()
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        dyn.compile(m)(x).square().sum().backward()
        ref(xr).square().sum().backward()
    s = dyn.stats()
    assert s["backward_graphs"] == 1 and s["eager_graphs"] == [], s
    return x, xr, ref


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
def test_convolutions_train_channels_last_with_eager_gradients(device, tmp_path, monkeypatch):
    """The forward keeps the activations it saves channels-last (as it computed them), the backward reads
    them so and runs convolution_backward channels-last: gradients equal eager's (cuDNN without TF32). On
    the GPU only convolutions with 2^24 activation elements go channels-last: the CUDA case is that large."""
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    dtype = torch.float64 if device == "cpu" else torch.float32
    m = _ConvNet(8 if device == "cpu" else 32).to(device, dtype)
    shape = (4, 3, 16, 16) if device == "cpu" else (8, 3, 256, 256)
    x, xr, ref = _backward_beside_eager(m, shape, device, dtype)
    tol = {} if device == "cpu" else dict(rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(x.grad, xr.grad, **tol)
    for (name, p), q in zip(m.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, **tol, msg=name)
    torch.testing.assert_close(m.bn.running_var, ref.bn.running_var, **tol)
    stages = {p.name: p.read_text() for p in tmp_path.rglob("*.mlir")}
    assert any("dyn.channels_last_results" in t for n, t in stages.items() if "forward." in n), sorted(stages)
    backward = "".join(t for n, t in stages.items() if "backward." in n)
    assert '"convolution_backward"' in backward and "dyn.channels_last_args" in backward


class _Stem(nn.Module):
    """A ResNet stem: a strided convolution, batch norm, ReLU and a 3x3/2 max-pool, then a convolution."""

    def __init__(self, width):
        super().__init__()
        self.c1 = nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False)
        self.bn = nn.BatchNorm2d(width)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.c2 = nn.Conv2d(width, width, 3, padding=1)
        self.head = nn.Linear(width, 5)

    def forward(self, x):
        h = self.pool(F.relu(self.bn(self.c1(x))))
        return self.head(F.relu(self.c2(h)).mean((2, 3)))


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
def test_max_pool_backward_runs_channels_last_with_eager_gradients(device, tmp_path, monkeypatch):
    """conv -> bn -> relu -> max-pool computed channels-last: the backward recomputes the pooling's indices
    in that layout and gathers each input position's gradient from the windows reaching it (no ATen
    max_pool2d_backward), channels-last too, one kernel with the ReLU's mask, whose result the batch norm's
    backward reads in place; gradients equal eager's. On the GPU only the large convolutions go
    channels-last: the CUDA case is that large."""
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    # float64 on both: the first convolution's weight gradient sums 2^19 products whose total cancels heavily
    # (its output feeds a batch norm), so float32 kernels of different orders differ beyond float32 tolerance
    dtype = torch.float64
    m = _Stem(8 if device == "cpu" else 32).to(device, dtype)
    shape = (4, 3, 32, 32) if device == "cpu" else (8, 3, 512, 512)
    x, xr, ref = _backward_beside_eager(m, shape, device, dtype)
    torch.testing.assert_close(x.grad, xr.grad)
    for (name, p), q in zip(m.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=name)
    stages = {p.name: p.read_text() for p in tmp_path.rglob("*.mlir")}
    prim = "".join(t for n, t in stages.items() if n.endswith("backward.prim.mlir"))
    loop = "".join(t for n, t in stages.items() if n.endswith("backward.loop.mlir"))
    assert '"max_pool2d_backward"' not in prim
    # channels-last: the pooled [N, H/4, W/4, C] indices gathered along H (dim 1), then along W (dim 2) into
    # [N, H/2, W/2, C], once for each of the four windows reaching a position (the cotangent too where it
    # arrives channels-last: on the CPU; on the GPU the second convolution runs in torch's order)
    n, c, hw = shape[0], m.c1.out_channels, shape[-1] // 2
    gathers = [line for line in prim.splitlines()
               if "prim.gather" in line and line.split(" : ")[1].split(",")[0].endswith("xi64>")]
    assert [line for line in gathers if "dim 2 index" in line] == \
        [line for line in gathers if f"-> tensor<{n}x{hw}x{hw}x{c}xi64>" in line], gathers
    assert len([line for line in gathers if "dim 2 index" in line]) == 4, gathers
    # the indices once in a buffer of their own, then one kernel over the input gradient
    # ([N, H/2, W/2, C]) reading them through the four windows reaching each position
    kernels = loop.split("loop.kernel")
    grad = [k for k in kernels if k.split("\n")[0].rstrip().endswith(f"[{n}, {hw}, {hw}, {c}] {{")
            and k.count("xi64>") >= 4]
    assert len(grad) == 1, [k.split("\n")[0] for k in kernels]
    # every temporary is read (by a kernel or a library call): the four windows' values, which the gradient's
    # kernel sums where it computes them, get no buffer that is only stored (4 dead stores of the gradient's
    # size each)
    allocs = re.findall(r"(%\w+) = memref\.alloc", loop)
    for a in allocs:
        uses = [line for line in loop.splitlines() if re.search(re.escape(a) + r"\b", line)]
        assert any("loop.load " + a + "[" in u or "library_call" in u or "reinterpret_cast" in u for u in uses), \
            (a, uses)


class _Checkpointed(nn.Module):
    """Three residual blocks, each run through torch.utils.checkpoint (with dropout: the backward's
    recomputation must draw the forward's numbers)."""

    def __init__(self, reentrant, p=0.0):
        super().__init__()
        self.reentrant = reentrant
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Dropout(p), nn.Linear(64, 16))
                                    for _ in range(3))

    def forward(self, x):
        for b in self.blocks:
            x = x + torch.utils.checkpoint.checkpoint(b, x, use_reentrant=self.reentrant)
        return x


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_is_captured_and_recomputed_in_the_backward(reentrant, tmp_path, monkeypatch):
    torch.manual_seed(0)
    model = _Checkpointed(reentrant)
    ref = copy.deepcopy(model)
    x = torch.randn(4, 16, requires_grad=True)
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    dyn.reset()
    out = dyn.compile(model)(x)
    out.sum().backward()
    s = dyn.stats()
    assert s["graph_breaks"] == 0 and s["backward_graphs"] == 1 and s["eager_graphs"] == []
    xr = x.detach().requires_grad_()
    want = ref(xr)
    want.sum().backward()
    torch.testing.assert_close(out, want)
    torch.testing.assert_close(x.grad, xr.grad)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad)
    # the blocks' hidden activations are not saved: the backward recomputes their GEMMs
    backward = next(tmp_path.rglob("*_backward.mlir")).read_text()
    assert backward.count("dyn.recompute") >= 6 and "tensor<4x64xf32>" not in backward.split(")")[0]


def test_checkpoint_replays_dropout_and_keeps_values():
    """With dropout, checkpointing changes nothing: the same call seed gives the same loss and gradients
    as the same model compiled without checkpoint (the recomputation draws the forward's numbers)."""
    torch.manual_seed(0)
    a = _Checkpointed(False, p=0.3)
    b = copy.deepcopy(a)
    b.forward = lambda x: _plain_forward(b, x)
    x = torch.randn(4, 16)
    results = []
    for m in (a, b):
        torch.manual_seed(1)
        loss = dyn.compile(m)(x).square().sum()
        loss.backward()
        results.append((loss.detach(), [p.grad for p in m.parameters()]))
    torch.testing.assert_close(results[0][0], results[1][0])
    for g, h in zip(results[0][1], results[1][1]):
        torch.testing.assert_close(g, h)


def _plain_forward(m, x):
    for blk in m.blocks:
        x = x + blk(x)
    return x


def test_reentrant_checkpoint_without_grad_inputs_runs_eagerly():
    model = _Checkpointed(True)
    x = torch.randn(4, 16)
    with pytest.warns(UserWarning):
        out = dyn.compile(model)(x)
    assert any("reentrant checkpoint" in b["reason"] for b in dyn.explain(model)(x).break_reasons)
    torch.testing.assert_close(out, model(x))


@pytest.mark.parametrize("device,dtype", [("cpu", torch.bfloat16),
                                          pytest.param("cuda", torch.float16, marks=needs_cuda)])
def test_autocast_training_with_grad_scaler_matches_eager(device, dtype):
    """Mixed precision as users write it: the forward under autocast with the model compiled, a GradScaler
    scaling the loss, unscaling the gradients and stepping AdamW; losses and parameters equal to eager's
    (within float32's tolerance on the CPU, where both compute the bfloat16 GEMMs alike; float16's on CUDA,
    whose half-precision gradients dyn and eager may round in another order)."""
    torch.manual_seed(0)
    base = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 4)).to(device)
    tol = dict(rtol=1.3e-6, atol=1e-5) if device == "cpu" else dict(rtol=1e-3, atol=1e-4)

    def loop(model, compiled):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        scaler = torch.amp.GradScaler(device, init_scale=2.0 ** 10)
        fn = dyn.compile(model) if compiled else model
        g = torch.Generator().manual_seed(1)
        losses = []
        for _ in range(5):
            x, y = torch.randn(6, 8, generator=g).to(device), torch.randn(6, 4, generator=g).to(device)
            opt.zero_grad()
            with torch.autocast(device, dtype=dtype):
                loss = F.mse_loss(fn(x).float(), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            losses.append(loss.item())
        return losses
    ref, model = copy.deepcopy(base), copy.deepcopy(base)
    want = loop(ref, False)
    dyn.reset()
    got = loop(model, True)
    s = dyn.stats()
    assert s["backward_graphs"] >= 1 and s["eager_graphs"] == []
    torch.testing.assert_close(got, want, **tol)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, **tol)


class _Block(nn.Module):
    """A transformer MLP block: what activation memory budgets are for."""
    def __init__(self, d=16):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.ln(x))))


def _saved_bytes(compiled_module):
    """The bytes the compiled training graph's forward returns for its backward only."""
    (_, kernel, _), = compiled_module._dyn_forward.graphs
    extra = kernel.forward.specs[kernel.num_outputs:]
    return sum(math.prod(s) * torch.empty((), dtype=d).element_size() for s, _, d in extra)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
def test_memory_budget_recomputes_more_and_keeps_eager_gradients(device):
    torch.manual_seed(0)
    ref = nn.Sequential(_Block(), _Block()).to(device, torch.float64)
    x = torch.randn(6, 16, device=device, dtype=torch.float64, requires_grad=True)
    ref(x).pow(2).sum().backward()
    saved = {}
    for budget in (1.0, 0.9, 0.0):
        dyn.reset()
        m = copy.deepcopy(ref)
        m.zero_grad()
        xc = x.detach().clone().requires_grad_()
        cm = dyn.compile(m, options={"memory_budget": budget})
        cm(xc).pow(2).sum().backward()
        assert dyn.stats()["backward_graphs"] == 1 and not dyn.stats()["eager_graphs"]
        torch.testing.assert_close(xc.grad, x.grad)
        for p, q in zip(m.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad)
        saved[budget] = _saved_bytes(cm)
    # the layer norms' outputs first, then the GEMMs' too: budget 0 keeps nothing beyond the inputs
    assert saved[1.0] > saved[0.9] > saved[0.0] == 0, saved


def test_memory_budget_is_checked():
    with pytest.raises(ValueError, match="memory_budget"):
        dyn.compile(_mlp(), options={"memory_budget": 1.5})
