"""Capture of the torch APIs library code (torchvision, timm) calls: torch._assert and the "am I compiled"
queries, autograd.Function, functional ops by keyword, module hooks, torch.tensor of Python numbers, ops
without a handler of their own (one generic torch_call node each), torch's masked and signal.windows
compositions, torch.autocast and the grad-mode decorators. Every case compares with eager PyTorch and
checks how many graphs dyn made."""
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn
from capture_helpers.library import graphs_and_breaks, assert_same, one_graph, X


# -- torch._assert, torch._check and the "am I compiled" queries ---------------------------------------
def test_torch_assert_on_python_values():
    def f(x):
        torch._assert(x.shape[0] == 4, "batch of 4")
        torch._check(x.dim() == 2, lambda: "2-D")
        return x + 1
    one_graph(f, X)


def test_torch_assert_that_fails_raises_as_eager():
    def f(x):
        torch._assert(x.shape[0] == 5, "batch of 5")
        return x + 1
    with pytest.raises(AssertionError, match="batch of 5"):
        dyn.compile(f, backend="eager")(X)


def test_torch_assert_on_a_tensor_breaks():
    def f(x):
        y = x * 2
        torch._assert(y.sum() > -1e9, "finite")
        return y + 1
    count, reasons = graphs_and_breaks(f, X)
    assert count == 2 and "data-dependent" in reasons[0]
    assert_same(dyn.compile(f, backend="eager")(X), f(X))


def test_compile_queries_are_constants():
    def f(x):
        if torch.compiler.is_compiling() and not torch.jit.is_scripting() and not torch.jit.is_tracing() \
                and not torch.compiler.is_exporting() and torch._C._get_tracing_state() is None \
                and not torch.fx._symbolic_trace.is_fx_tracing():
            return x + 1
        return x - 1
    # under dyn, as under torch.compile, is_compiling() is True: libraries take their compile paths
    count, reasons = graphs_and_breaks(f, X)
    assert (count, reasons) == (1, [])
    assert_same(dyn.compile(f, backend="eager")(X), X + 1)
    assert_same(f(X), X - 1)


def test_autocast_state_is_read_and_guarded():
    def f(x):
        return x * 2 if not torch.is_autocast_enabled("cpu") else x * 3
    cf = dyn.compile(f, backend="eager")
    assert_same(cf(X), X * 2)
    with torch.autocast("cpu"):  # the guard fails: captured again, which stops at the read (eager runs)
        assert_same(cf(X), X * 3)
    assert_same(cf(X), X * 2)


# -- torch.autograd.Function ---------------------------------------------------------------------------
class _ScaledGelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return F.gelu(x, approximate="tanh") * scale

    @staticmethod
    def backward(ctx, g):  # deliberately not gelu's derivative: dyn must not differentiate forward instead
        (x,) = ctx.saved_tensors
        return g * ctx.scale * 2, None


class _SetupContextSquare(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        return g * 3


def test_autograd_function_without_gradients_is_its_forward():
    def f(x):
        return _ScaledGelu.apply(x, 1.5) + _SetupContextSquare.apply(x)
    with torch.no_grad():
        one_graph(f, X)
    one_graph(f, X)  # X does not require grad


def test_autograd_function_with_gradients_keeps_its_backward():
    def f(x):
        return _ScaledGelu.apply(x * 2, 1.5).sum()
    x = X.clone().requires_grad_()
    count, reasons = graphs_and_breaks(f, x)
    assert any("autograd.Function _ScaledGelu" in r for r in reasons)
    x1, x2 = X.clone().requires_grad_(), X.clone().requires_grad_()
    f(x1).backward()
    dyn.compile(f)(x2).backward()
    torch.testing.assert_close(x2.grad, x1.grad)  # 2 * 1.5 * 2 everywhere: the Function's own backward


# -- functional ops by keyword -------------------------------------------------------------------------
def test_functional_ops_by_keyword():
    # torch's parameter names, as callers pass them (timm's BEiT: F.linear(x, weight=..., bias=...))
    w, b = torch.randn(X.shape[-1], X.shape[-1]), torch.randn(X.shape[-1])

    def f(x):
        y = F.linear(x, weight=w, bias=b)
        y = F.layer_norm(input=y, normalized_shape=y.shape[-1:], eps=1e-6)
        return F.softmax(input=F.relu(input=y), dim=-1) + F.tanh(input=y) * F.sigmoid(input=y)
    one_graph(f, X)


# -- module hooks -----------------------------------------------------------------------------------
def test_forward_hooks_are_traced():
    m = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    m[0].register_forward_pre_hook(lambda mod, args: (args[0] * 3,))
    m[1].register_forward_hook(lambda mod, args, out: out + 1)
    m[2].register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] - 1,), kwargs), with_kwargs=True)
    m[2].register_forward_hook(lambda mod, args, kwargs, out: out * kwargs.get("k", 2), with_kwargs=True)
    with torch.no_grad():
        one_graph(m, X)


def test_hook_added_after_compiling_recaptures():
    m = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
    h = m[0].register_forward_hook(lambda mod, args, out: out * 2)
    cf = dyn.compile(m, backend="eager")
    with torch.no_grad():
        assert_same(cf(X), m(X))
        h.remove()
        assert_same(cf(X), m(X))  # the hook is gone: the graph that ran it is not reused
        m[1].register_forward_hook(lambda mod, args, out: out - 5)
        assert_same(cf(X), m(X))


def test_global_forward_hook_is_traced():
    m = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
    h = nn.modules.module.register_module_forward_hook(
        lambda mod, args, out: out * 2 if isinstance(mod, nn.Tanh) else out)
    try:
        with torch.no_grad():
            one_graph(m, X)
    finally:
        h.remove()


def test_backward_hooks_break():
    m = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
    grads = []
    m[0].register_full_backward_hook(lambda mod, gi, go: grads.append(go[0].clone()))
    x = X.clone().requires_grad_()
    count, reasons = graphs_and_breaks(m, x)
    assert any("backward hooks" in r for r in reasons)
    dyn.compile(m, backend="eager")(x).sum().backward()
    assert len(grads) == 1


# -- torch.tensor of Python numbers ------------------------------------------------------------------
def test_torch_tensor_of_numbers_keeps_eagers_dtype():
    def f(x):
        a = torch.tensor([1, 2, 3, 4, 5, 6, 7, 8])          # int64
        b = torch.tensor(2.5)                               # the default dtype
        c = torch.tensor([[True], [False], [True], [True]])  # bool
        d = torch.tensor([0.5] * 8, dtype=torch.float64)
        e = torch.as_tensor((1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0), device=x.device)
        return x * a + b, torch.where(c, x, d), e.dtype, a.dtype, torch.scalar_tensor(3) * x
    one_graph(f, X)


def test_torch_tensor_that_requires_grad_breaks():
    def f(x):
        return x * torch.tensor(2.0, requires_grad=True)
    count, reasons = graphs_and_breaks(f, X)
    assert any("requires_grad" in r for r in reasons)


def test_numpy_at_a_graph_break():
    def f(x):
        y = x * 2
        a = y.numpy()  # leaves the graph: the graph so far runs, numpy gets the real tensor
        return torch.from_numpy(a * 3) + y
    count, reasons = graphs_and_breaks(f, X)
    # mul | the numpy product and from_numpy, each one op at a break | add: the rest is compiled
    assert count == 2 and reasons[0] == "Tensor.numpy" and not any("eagerly" in r for r in reasons)
    assert any("numpy.ndarray" in r for r in reasons)
    assert_same(dyn.compile(f, backend="eager")(X), f(X))


def test_numpy_operators_at_graph_breaks():
    def f(x):
        a = (x * 2).numpy()
        a += 1             # in place on the array: operator.iadd at a break
        big = a > 0.5      # a comparison
        t = torch.from_numpy(a) * torch.from_numpy(big)
        return t.sin() + x
    x = torch.randn(6)
    want = f(x.clone())
    cf = dyn.compile(f, backend="eager")
    for _ in range(2):
        assert_same(cf(x), want)
    count, reasons = graphs_and_breaks(f, x)
    assert count == 2 and not any("eagerly" in r for r in reasons), reasons


# -- the generic torch_call node ---------------------------------------------------------------------
def test_ops_without_a_handler_are_one_node_each():
    # (std_mean, nanmean, airy_ai, igamma, segment_reduce and _upsample_bicubic2d_aa, the examples here before,
    # have handlers now)
    def f(x):
        a = F.softplus(x) + F.elu(x)
        loss, is_target = torch.ops.aten.multilabel_margin_loss_forward(a, torch.zeros(4, 8, dtype=torch.long), 1)
        aa = torch.ops.aten.avg_pool2d_backward(x[None, None, :, :4], x[None, None], [1, 2], [1, 2], [0, 0], False,
                                                True, None)
        up = F.interpolate(x[None], scale_factor=2.0, mode="nearest")
        return aa * 2, loss, is_target, up, torch.special.ndtri(x.sigmoid())
    one_graph(f, X)
    graph = dyn.export(f, X).graph
    calls = [n.attrs["callee"] for n in graph.nodes if n.op == "torch_call"]
    assert "aten.avg_pool2d_backward" in calls and "aten.multilabel_margin_loss_forward" in calls
    text = str(graph)
    assert ':2 = graph.torch_call "aten.multilabel_margin_loss_forward"' in text
    assert 'graph.torch_call "aten.avg_pool2d_backward"(%7, %8) {args = [0 : index, 1 : index, [1 : i64, 2 : i64], ' \
        '[1 : i64, 2 : i64], [0 : i64, 0 : i64], false, true, unit]}' in text, text


def test_torch_call_gradients_match_eager():
    lin = nn.Linear(8, 8)

    def f(x):
        return (F.hardswish(lin(x)).cumsum(1) * torch.special.erfcx(x) + F.hardsigmoid(x)).sum()
    x = X.clone().requires_grad_()
    want = f(x)
    want.backward()
    gx, gw = x.grad, lin.weight.grad
    x.grad = lin.weight.grad = None
    assert graphs_and_breaks(f, x) == (1, [])
    dyn.compile(f, backend="eager")(x).backward()
    assert_same(x.grad, gx)
    assert_same(lin.weight.grad, gw)


def test_in_place_forms():
    def f(x):
        y = x * 2
        F.hardswish(y, inplace=True)  # written back
        z = x + 1
        z.erfinv_()
        w = x - 1
        torch.cumsum(x, 1, out=w)
        return y, z, w
    one_graph(f, X)


def test_in_place_on_an_input_is_written_back():
    def f(x):
        x.exp2_()
        return x * 2
    a, b = X.clone(), X.clone()
    want = f(a)
    got = dyn.compile(f, backend="eager")(b)
    assert_same(got, want)
    assert_same(b, a)


def test_random_ops_draw_eagers_numbers():
    def f(x):
        y = F.dropout(x, 0.3, training=True)
        noise = torch.empty(x.shape[0], 1).bernoulli_(0.7)  # torchvision's stochastic depth
        return y * noise + torch.rand_like(x)
    count, reasons = graphs_and_breaks(f, X)
    assert (count, reasons) == (1, [])
    cf = dyn.compile(f, backend="eager")
    for seed in range(3):
        torch.manual_seed(seed)
        want = f(X)
        torch.manual_seed(seed)
        assert_same(cf(X), want)


def test_unused_random_result_is_drawn():
    # eager draws the unused dropout's numbers anyway: the eager backend draws them too (the second
    # dropout's mask is eager's), and the compiled graph leaves the op out
    def f(x):
        F.dropout(x, 0.5, training=True)
        return F.dropout(x, 0.5, training=True) + 1
    count, reasons = graphs_and_breaks(f, X)
    assert (count, reasons) == (1, [])
    cf = dyn.compile(f, backend="eager")
    torch.manual_seed(0)
    want = f(X)
    torch.manual_seed(0)
    assert_same(cf(X), want)
    dyn.reset()
    y = dyn.compile(f)(X)
    assert dyn.stats()["eager_graphs"] == [] and dyn.stats()["compiled_graphs"] == 1
    kept, dropped = torch.isclose(y, 2 * X + 1), y == 1  # a dropout mask, scaled by 1 / (1 - p)
    assert (kept | dropped).all() and kept.any() and dropped.any()


@pytest.mark.parametrize("op,why", [
    (lambda x: torch.ops.aten.alias(x) + 1, "returns a view of its argument"),
    (lambda x: torch.nonzero(x > 0).float().sum(), "data-dependent"),
    (lambda x: x.unique().sum(), "on meta tensors"),
    (lambda x: x.t_() * 2, "changes the shape or layout"),
], ids=["view", "nonzero", "unique", "t_"])
def test_ops_the_generic_node_refuses(op, why):
    # a view of an argument, a data-dependent shape, metadata changed in place: not a torch_call node
    count, reasons = graphs_and_breaks(op, X.clone())
    assert reasons and why in " ".join(reasons)
    assert_same(dyn.compile(op, backend="eager")(X.clone()), op(X.clone()))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_hardswish_hardsigmoid_decompose_bit_exactly(dtype):
    # registered graph ops (GraphToPrim/Activations.cpp decomposes them in eager's own order)
    x = (X * 4).to(dtype)
    x[0, :4] = torch.tensor([3.0, -3.0, 6.0, -6.0]).to(dtype)

    def f(x):
        y = x * 1
        F.hardswish(y, inplace=True)
        return F.hardswish(x), F.hardsigmoid(x), y
    with torch.no_grad():
        one_graph(f, x)
        graph = dyn.export(f, x).graph
    assert "torch_call" not in graph.ops() and "hardswish" in graph.ops() and "hardsigmoid" in graph.ops()


def test_global_state_functions_are_not_nodes():
    def f(x):
        state = torch.get_rng_state()
        y = torch.rand_like(x)
        torch.set_rng_state(state)  # eager draws the same numbers again
        return y - torch.rand_like(x)
    count, reasons = graphs_and_breaks(f, X)
    assert any("global state" in r for r in reasons)
    assert_same(dyn.compile(f, backend="eager")(X), torch.zeros_like(X))


def test_dispatcher_op_is_a_node():
    one_graph(lambda x: torch.ops.aten.hardswish.default(x) * torch.ops.aten.erfinv(x), X)


def test_dyn_backend_runs_the_graph_with_pytorch_ops_and_says_why(capfd, monkeypatch):
    from conftest import has_compiler
    if not has_compiler():
        pytest.skip("dyn._C without the compiler core")

    def f(x):
        return torch.ops.aten.avg_pool2d_backward(x[None, None, :, :4], x.abs()[None, None], [1, 2], [1, 2], [0, 0],
                                                  False, True, None) * 2
    monkeypatch.setenv("DYN_LOGS", "fallbacks")
    assert_same(dyn.compile(f)(X), f(X))
    why = 'graph.torch_call "aten.avg_pool2d_backward" has no lowering in dyn\'s compiler'
    runs = dyn.stats()["eager_graphs"]
    assert len(runs) == 1 and runs[0]["backend"] == "eager (PyTorch ops)" and why in runs[0]["reason"]
    assert why in capfd.readouterr().err


# torch's Python compositions of ops that capture traces into (decided by the object: their code lives in
# torch/masked and torch/signal/windows): each OpInfo's first samples compile natively, one graph, with
# eager's results (opinfo_check compares values, dtypes, shapes, strides). masked.median (nanmedian's two
# results) is not here: it still falls back.
_TRACED_TORCH_OPINFOS = [f"masked.{n}" for n in (
    "sum prod cumsum cumprod amax amin argmax argmin mean norm var std softmax log_softmax softmin normalize "
    "logaddexp logsumexp").split()] + [f"signal.windows.{n}" for n in (
    "hamming hann bartlett blackman cosine exponential gaussian kaiser general_cosine general_hamming "
    "nuttall").split()]


@pytest.mark.parametrize("name", _TRACED_TORCH_OPINFOS)
def test_torch_masked_and_signal_windows_are_traced(name):
    from conftest import has_compiler
    if not has_compiler():
        pytest.skip("dyn._C built without the compiler core")
    import opinfo_check as oc
    from torch.testing._internal.common_methods_invocations import op_db
    op = next(o for o in op_db if oc.full_name(o) == name)
    checked = sum(oc.check_sample(op, "function", s) for s in oc.samples(op, torch.float32, 4))
    assert checked > 0


# -- torch.autocast ----------------------------------------------------------------------------------
# The casts autocast makes are graph ops (capture/autocast.py asks PyTorch which ones for each call); the
# eager backend then runs the same ops on the same dtypes as eager under autocast, so results are eager's
# bits; the dyn backend compiles what it can (its float arithmetic: the dtype's tolerance).
class _AmpNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.ln = nn.LayerNorm(8)
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = F.relu(self.bn(self.conv(x))).flatten(2).transpose(1, 2)  # conv: lower precision
        h = self.ln(h)
        q = self.lin(h)  # linear: lower precision
        a = F.scaled_dot_product_attention(q[:, None], h[:, None], h[:, None])[:, 0]
        b = torch.bmm(q, h.transpose(1, 2))
        c = torch.baddbmm(b, q, h.transpose(1, 2))
        d = torch.addmm(h[0, 0:1], q[0], self.lin.weight)
        e = torch.cat([a, h.float()]).softmax(-1)  # cat: promote (float32 here)
        # (addmm last: dyn decomposes it into a product and a sum, two roundings in bfloat16 where eager's
        # kernel rounds once: the dtype's tolerance)
        return a, c, e, F.mse_loss(a, h), F.l1_loss(c, b), torch.stack([a, q]), q @ h.transpose(1, 2), d


def _amp_step(dtype):
    def step(mod, x):
        with torch.autocast("cpu", dtype=dtype):
            return mod(x)
    return step


def _close_at(g, w, dtype):
    """Within a rounding of `dtype` (the lowest precision the value went through) at the value's magnitude
    (a difference can cancel)."""
    eps = torch.finfo(dtype).eps
    torch.testing.assert_close(g, w, rtol=eps, atol=eps * float(w.abs().max()) if w.numel() else 0)


def _same_dtypes_close(got, want, exact, dtype=None):
    """Same dtypes; values equal (the first `exact` results; all for True) or within a rounding of dtype
    (default: each result's own)."""
    assert [g.dtype for g in got] == [w.dtype for w in want]
    for k, (g, w) in enumerate(zip(got, want)):
        if exact is True or k < exact:
            assert_same(g, w)
        else:
            _close_at(g, w, dtype or w.dtype)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_autocast_block_casts_as_eager(dtype):
    torch.manual_seed(0)
    m, x = _AmpNet().eval(), torch.randn(2, 3, 4, 4)
    step = _amp_step(dtype)
    with torch.no_grad():
        want = step(m, x)
        assert graphs_and_breaks(step, m, x) == (1, [])
        assert [w.dtype for w in want] == [dtype, dtype, torch.float32, torch.float32, torch.float32, dtype,
                                           dtype, dtype]
        _same_dtypes_close(dyn.compile(step, backend="eager")(m, x), want, exact=7)
        from conftest import has_compiler
        if has_compiler():
            # dyn's compiler computes in other orders: results within a rounding of the autocast dtype
            _same_dtypes_close(dyn.compile(step)(m, x), want, exact=False, dtype=dtype)


def test_autocast_gradients_are_eagers():
    torch.manual_seed(0)
    m, x = _AmpNet(), torch.randn(2, 3, 4, 4)
    step = _amp_step(torch.bfloat16)

    def loss(mod, x):
        return sum(o.float().sum() for o in step(mod, x))
    want = loss(m, x)
    want.backward()
    want_grads = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    got = dyn.compile(loss, backend="eager")(m, x)
    got.backward()
    _close_at(got, want, torch.bfloat16)  # addmm's results differ by a bfloat16 rounding (above)
    for p, g in zip(m.parameters(), want_grads):
        _close_at(p.grad, g, torch.bfloat16)


def test_autocast_around_the_call_is_guarded():
    torch.manual_seed(0)
    m, x = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 4)).eval(), torch.randn(3, 8)
    cf = dyn.compile(m, backend="eager")
    with torch.no_grad():
        assert_same(cf(x), m(x))
        for dtype in (torch.bfloat16, torch.float16):
            with torch.autocast("cpu", dtype=dtype):  # the autocast state is guarded: captured again
                want = m(x)
                assert want.dtype == dtype
                assert_same(cf(x), want)
        with torch.autocast("cpu", enabled=False):
            assert_same(cf(x), m(x))
        assert_same(cf(x), m(x))


def _nested_off(x, w):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = x @ w
        with torch.autocast("cpu", enabled=False):
            b = a.float() @ w  # float32 again: the graph must not be cast by the caller's autocast
            on = torch.is_autocast_enabled("cpu")
        c = b @ w
    return a, b, c, on, torch.get_autocast_dtype("cpu")


def test_autocast_nested_and_disabled_regions():
    x, w = torch.randn(4, 4), torch.randn(4, 4)
    want = _nested_off(x, w)
    assert graphs_and_breaks(_nested_off, x, w) == (1, [])
    got = dyn.compile(_nested_off, backend="eager")(x, w)
    assert [t.dtype for t in got[:3]] == [torch.bfloat16, torch.float32, torch.bfloat16] and got[3:] == want[3:]
    _same_dtypes_close(got[:3], want[:3], exact=True)
    with torch.autocast("cpu", dtype=torch.float16):  # an outer autocast around the call: the same
        want = _nested_off(x, w)
        got = dyn.compile(_nested_off, backend="eager")(x, w)
    _same_dtypes_close(got[:3], want[:3], exact=True)
    assert got[3:] == want[3:]


@torch.autocast("cpu", dtype=torch.bfloat16)
def _decorated(x, w):
    return x @ w, torch.is_autocast_enabled("cpu")


def _spellings(x, w):
    with torch.amp.autocast("cpu"):
        a = x @ w
    with torch.cpu.amp.autocast(dtype=torch.float16):
        b = x @ w
    with torch.autocast(device_type="cpu", dtype=torch.float16, cache_enabled=False):
        c = torch.mm(x, w)
    d, on = _decorated(x, w)
    return a, b, c, d, on


def test_autocast_spellings_and_decorator():
    x, w = torch.randn(4, 4), torch.randn(4, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.cpu.amp.autocast is deprecated
        want = _spellings(x, w)
        assert graphs_and_breaks(_spellings, x, w) == (1, [])
        got = dyn.compile(_spellings, backend="eager")(x, w)
    assert [t.dtype for t in want[:4]] == [torch.bfloat16, torch.float16, torch.float16, torch.bfloat16]
    _same_dtypes_close(got[:4], want[:4], exact=True)
    assert got[4] is want[4] is True
    assert graphs_and_breaks(_decorated, x, w) == (1, [])  # the decorated function compiled itself
    _same_dtypes_close(dyn.compile(_decorated, backend="eager")(x, w)[:1], _decorated(x, w)[:1], exact=True)


def test_autocast_plans_come_from_torchs_registration():
    """Which arguments autocast casts, per device type, read from PyTorch (fake tensors: CUDA's plans are
    found without a GPU): lower precision (mm), float32 (CUDA's exp, CPU's mse_loss), promote (cat),
    float32 computation without a cast (CUDA's sum: fp32_set_opt_dtype), untouched (CPU's exp)."""
    from dyn.capture.autocast import _probe
    from dyn.ops import TensorVar

    class V(TensorVar):  # a stand-in with just the meta tensor the probe reads
        meta = property(lambda self: self._meta)

        def __init__(self, dtype, shape=(4, 4)):
            self._meta = torch.empty(shape, dtype=dtype, device="meta")

    f32, f16, bf16 = torch.float32, torch.float16, torch.bfloat16
    assert _probe(torch.mm, None, [V(f32), V(f32)], {}, "cpu", bf16) == ((("a", 0), bf16), (("a", 1), bf16))
    assert _probe(torch.mm, None, [V(f32), V(bf16)], {}, "cuda", f16) == ((("a", 0), f16), (("a", 1), f16))
    assert _probe(torch.exp, None, [V(f16)], {}, "cuda", f16) == ((("a", 0), f32),)
    assert _probe(torch.exp, None, [V(bf16)], {}, "cpu", bf16) == ()
    assert _probe(F.mse_loss, None, [V(bf16), V(f32)], {}, "cpu", bf16) == ((("a", 0), f32),)
    assert _probe(torch.cat, None, [[V(bf16), V(f32)]], {}, "cpu", bf16) == ((("a", 0, 0), f32),)
    assert _probe(None, "sum", [V(f16)], {}, "cuda", f16) == ((("a", 0), f32),)
    assert _probe(torch.mm, None, [V(torch.float64), V(torch.float64)], {}, "cpu", bf16) == ()
    # eager's autocast raises for this mix (its promote rule takes bf16 and f16 as incompatible)
    assert "prioritize" in _probe(torch.cat, None, [[V(bf16), V(f16)]], {}, "cpu", bf16)


# -- grad-mode decorators ------------------------------------------------------------------------------
@torch.no_grad()
def _no_grad_fn(x):
    return x * 2, torch.is_grad_enabled()


@torch.inference_mode()
def _inference_fn(x):
    return x * 3, torch.is_inference_mode_enabled()


@torch.set_grad_enabled(False)
def _sge_fn(x):
    return x * 4, torch.is_grad_enabled()


def _decorated_callers(x):
    return _no_grad_fn(x), _inference_fn(x), _sge_fn(x), (x * 5, torch.is_grad_enabled())


def test_grad_mode_decorators_are_traced():
    """@torch.no_grad(), @torch.inference_mode(), @torch.set_grad_enabled(False) on a function: torch's
    decorate_context wrapper is traced (its mode cloned without touching the real grad mode)."""
    x = torch.randn(3, requires_grad=True)
    assert graphs_and_breaks(_decorated_callers, x) == (1, [])
    assert torch.is_grad_enabled()
    want = _decorated_callers(x)
    got = dyn.compile(_decorated_callers, backend="eager")(x)
    for (g, gm), (w, wm) in zip(got, want):
        assert_same(g.detach(), w.detach())
        assert (g.requires_grad, g.is_inference(), gm) == (w.requires_grad, w.is_inference(), wm)
    assert torch.is_grad_enabled()
