"""Captured ops keep eager PyTorch's semantics at its edges: bool arithmetic (on the compiled backend too),
dtypes of decompositions (masked_fill, hardtanh of integers, reductions with dtype=), Python numbers an
integer dtype cannot hold, gradients of decompositions at bounds, ties and zeros (backend="eager"),
tensors without elements, and new tensor objects from views. Every result is compared with eager; where
eager raises, dyn raises the same exception type (the op is not captured, so eager runs it)."""
import collections
import warnings

import pytest
import torch
import torch.nn.functional as F

import dyn
from conftest import BACKENDS, has_compiler

needs_compiler = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")

B = torch.tensor([True, False, True, True])
C = torch.tensor([True, True, False, True])
I64 = torch.tensor([-7, 5, 3, -2])
NAN = float("nan")


def _outcome(fn, *args):
    try:
        return fn(*[a.clone() for a in args])
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return type(e)


def check(fn, *args, backend="eager", captured=True, compiled=True):
    """dyn's result (value, dtype, shape) or exception type is eager's; no internal failure or failed
    compile (those warn and run eagerly, hiding what dyn computes). Where eager succeeds, `captured`: the
    whole function was captured (no graph break, nothing run eagerly), and with backend="dyn",
    `compiled`: by the C++ core."""
    want = _outcome(fn, *args)
    before = dyn._stats()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="dyn:")
        got = _outcome(dyn.compile(fn, backend=backend), *args)
    after = dyn._stats()
    if isinstance(want, type):
        assert got is want, f"eager raises {want.__name__}, dyn gave {got!r}"
        return
    assert not isinstance(got, type), f"dyn raised {got.__name__}, eager gave {want!r}"
    if captured:
        assert after["graph_breaks"] == before["graph_breaks"]
        assert after["eager_entries"] == before["eager_entries"]
        if backend == "dyn" and compiled:
            assert after["graphs_compiled"] > before["graphs_compiled"]
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
        torch.testing.assert_close(g, w, equal_nan=True)


# -- booleans ---------------------------------------------------------------------------------------
BOOL_OPS = {
    "add": lambda a, c: a + c,
    "add_self": lambda a, c: a + a,
    "add_true": lambda a, c: a + True,
    "add3": lambda a, c: a + c + a,
    "add_alpha": lambda a, c: torch.add(a, c, alpha=True),
    "mul": lambda a, c: a * c,
    "maximum": lambda a, c: torch.maximum(a, c),
    "minimum": lambda a, c: torch.minimum(a, c),
    "max": lambda a, c: a.max(),
    "min": lambda a, c: c.min(),
    "amax0": lambda a, c: a.amax(0),
    "amin_keepdim": lambda a, c: torch.stack([a, c]).amin(1, keepdim=True),
    "amax_2d": lambda a, c: torch.stack([a, c, a & c]).amax(0),
    "sum": lambda a, c: a.sum(),
    "sum_bool": lambda a, c: torch.stack([a, c]).sum(0, dtype=torch.bool),
    "prod": lambda a, c: a.prod(),
    "bool_plus_int": lambda a, c: a + a.long() * 3,
    "bool_times_float": lambda a, c: a * 2.5,
    "where": lambda a, c: torch.where(a, c, False) + a,
    "compare": lambda a, c: (a > c, a <= c),
    "sub": lambda a, c: a - c,
    "rsub": lambda a, c: 1 - a,
    "abs": lambda a, c: a.abs(),
    "builtin_abs": lambda a, c: abs(a),
    "relu": lambda a, c: torch.relu(a),
    "floor": lambda a, c: a.floor(),
    "pow_bool": lambda a, c: a ** c,
    "clamp_bool_bound": lambda a, c: a.clamp(min=True),
    "matmul": lambda a, c: a @ c,
    "hardtanh": lambda a, c: F.hardtanh(a),
    "mean": lambda a, c: a.mean(),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(BOOL_OPS))
def test_bool_arithmetic(name, backend):
    """bool + bool is logical or, max of bools is any (the compiled backend's i1 lowering included); what
    eager refuses for bools (sub, abs, relu, ...) raises the same way."""
    check(BOOL_OPS[name], B, C, backend=backend)


# -- dtypes of decompositions -------------------------------------------------------------------------
def _setitem_float(a):
    a[0] = 2.7
    return a


def _mask_setitem_float(a):
    a[a > 0] = -2.7
    return a


DTYPE_CASES = {
    "sum_int32": (lambda a: (a > 0).sum(dtype=torch.int32), I64),
    "sum_dim_int32": (lambda a: (a > 0).sum(0, dtype=torch.int32), I64),
    "prod_int32": (lambda a: a.prod(dtype=torch.int32), I64),
    "prod_dim_int32": (lambda a: a.reshape(2, 2).prod(1, dtype=torch.int32), I64),
    "mean_float64": (lambda a: a.mean(dtype=torch.float64), I64),
    "sum_float16": (lambda a: a.float().sum(dtype=torch.float16), I64),
    "amax_dtype": (lambda a: a.amax(dtype=torch.int32), I64),
    "masked_fill_float_into_int": (lambda a: a.masked_fill(a > 0, 2.7), I64),
    "masked_fill_negative": (lambda a: a.masked_fill(a > 0, -2.7), I64),
    "masked_fill_overflow": (lambda a: a.masked_fill(a > 0, 1e20), I64),
    "masked_fill_inf": (lambda a: a.masked_fill(a > 0, float("inf")), I64),
    "masked_fill_bool": (lambda a: (a > 0).masked_fill(a < 0, 2), I64),
    "masked_fill_tensor_value": (lambda a: a.masked_fill(a > 0, (a[0] * 0.3).float()), I64),
    "masked_fill_int_mask": (lambda a: a.masked_fill((a > 0).int(), 1), I64),
    "masked_fill_in_place": (lambda a: a.masked_fill_(a > 0, 2.7), I64),
    "masked_fill_half_overflow": (lambda a: a.half().masked_fill(a > 0, 1e5), I64),
    "fill_float_into_int": (lambda a: a.fill_(-2.7), I64),
    "fill_overflow": (lambda a: a.fill_(1e20), I64),
    "fill_half_overflow": (lambda a: a.half().fill_(1e5), I64),
    "full_like_half_overflow": (lambda a: torch.full_like(a.half(), 1e5), I64),
    "setitem_float_into_int": (_setitem_float, I64),
    "mask_setitem_float_into_int": (_mask_setitem_float, I64),
    "clamp_int_float_bounds": (lambda a: a.clamp(0.5, 2.5), I64),
    "clamp_in_place_int_float_bounds": (lambda a: a.clamp_(0.5, 2.5), I64),
    "hardtanh_int": (lambda a: F.hardtanh(a, -1.5, 2.5), I64),
    "relu6_int": (lambda a: F.relu6(a), I64),
    "hardtanh_min_above_max": (lambda a: F.hardtanh(a.float(), 1.0, -1.0), I64),
    "leaky_relu_int": (lambda a: F.leaky_relu(a), I64),
    "int_pow_negative": (lambda a: a ** -1, I64),
    "maximum_with_a_number": (lambda a: torch.maximum(a, 2), I64),
    "int32_plus_huge": (lambda a: a.int() + 2 ** 40, I64),
    "int32_plus_huge_plus_5": (lambda a: a.int() + (2 ** 40 + 5), I64),
    "int32_lt_huge": (lambda a: a.int() < 2 ** 40, I64),
    "int32_times_huge": (lambda a: a.int() * (2 ** 33 + 1), I64),
    "int32_clamp_huge": (lambda a: a.int().clamp(max=2 ** 40), I64),
    "int32_masked_fill_huge": (lambda a: a.int().masked_fill(a > 0, 2 ** 40), I64),
    "int64_plus_too_big": (lambda a: a + 2 ** 70, I64),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
def test_decomposition_dtypes(name, backend):
    fn, x = DTYPE_CASES[name]
    check(fn, x, backend=backend, captured=name not in NOT_CAPTURED)


# eager wraps a Python int an int32 tensor cannot hold in these (and raises in others): run eagerly
NOT_CAPTURED = {"int32_plus_huge", "int32_plus_huge_plus_5", "int32_lt_huge", "int32_times_huge"}


# -- gradients (backend="eager") ----------------------------------------------------------------------
X = torch.tensor([NAN, 0., 1., 0.5, 2., -1., -0.0, 6.0])
LO = torch.tensor([0., 0., 1., NAN, 3., -1., 0., 7.])
HI = torch.tensor([1., 1., 0.5, 1., 2., NAN, 0., 8.])
FINITE = torch.tensor([0., 1., 0.5, 2., -1., -0.0, 6.0, 1.0])
GRAD_CASES = {
    "clamp": (lambda x: x.clamp(0, 1), X),
    "clamp_min": (lambda x: x.clamp(min=0), X),
    "clamp_max": (lambda x: x.clamp_max(1), X),
    "clamp_nan_bound": (lambda x: x.clamp(NAN, 1), X),
    "clamp_lo_above_hi": (lambda x: x.clamp(1, 0), X),
    "clamp_tensor_bounds": (lambda x: x.clamp(LO, HI), X),
    "clip": (lambda x: x.clip(-1, 0.5), X),
    "clamp_in_place_of_computed": (lambda x: (x * 1).clamp_(0, 1), X),
    "hardtanh": (lambda x: F.hardtanh(x), X),
    "hardtanh_0_1": (lambda x: F.hardtanh(x, 0., 1.), X),
    "relu6": (lambda x: F.relu6(x), X),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), X),
    "fmod": (lambda x: torch.fmod(x, 0.75), X),
    "fmod_negative_divisor": (lambda x: torch.fmod(x, -0.75), X),
    "fmod_zero_dim_divisor": (lambda x: torch.fmod(x, torch.tensor(2.0)), FINITE),
    "div_floor": (lambda x: torch.div(x, 0.75, rounding_mode="floor"), X),
    "div_trunc": (lambda x: torch.div(x, 0.75, rounding_mode="trunc"), X),
    "div_floor_tensor": (lambda x: torch.div(x, HI, rounding_mode="floor"), X),
    "floordiv_operator": (lambda x: x // 0.75, X),
    "floor_divide": (lambda x: torch.floor_divide(x, 0.75), X),
    "max_dim_tie": (lambda x: x.reshape(2, 4).max(dim=1).values, torch.tensor([1., 1., 0., 1., 2., 2., 2., 0.])),
    "min_dim_tie": (lambda x: x.reshape(2, 4).min(1)[0], torch.tensor([1., 1., 0., 0., 2., 2., 2., 0.])),
    "max_all_nan": (lambda x: x.max(), X),
    "max_all_tie": (lambda x: x.max(), torch.tensor([1., 3., 3., 0.])),
    "amax_tie": (lambda x: x.reshape(2, 4).amax(1), torch.tensor([1., 1., 0., 1., 2., 2., 2., 0.])),
    "normalize_zero_row": (lambda x: F.normalize(x.reshape(2, 4), dim=1), torch.tensor([0., 0., 0., 0., 1., 2., 0., 0.])),
    "normalize_dim0": (lambda x: F.normalize(x.reshape(4, 2), dim=0), torch.tensor([0., 1., 0., 2., 0., 0., 0., 0.])),
    "std_constant_row": (lambda x: x.reshape(2, 4).std(1), torch.tensor([1., 1., 1., 1., 1., 2., 3., 4.])),
    "std_constant": (lambda x: x.std(), torch.ones(8)),
}


def _grad_outcome(fn, x):
    x = x.clone().requires_grad_()
    try:
        y = fn(x)
    except Exception as e:  # noqa: BLE001
        return ("forward raises", type(e))
    try:
        y.sum().backward()
    except Exception as e:  # noqa: BLE001
        return (y.detach(), y.requires_grad, "backward raises", type(e))
    return (y.detach(), y.requires_grad, x.grad)


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_of_decompositions(name):
    """Gradients through the captured graph are eager's own (clamp's subgradient at the bounds, hardtanh's
    zero there, max(dim)'s one index, a zero vector's finite normalize gradient, ...)."""
    fn, x = GRAD_CASES[name]
    want = _grad_outcome(fn, x)
    got = _grad_outcome(dyn.compile(fn, backend="eager"), x)
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        if isinstance(w, torch.Tensor):
            torch.testing.assert_close(g, w, equal_nan=True)
        else:
            assert g == w, (got, want)


def test_plain_decompositions_without_grad():
    """Without a gradient to get right, clamp and normalize stay the plain maximum/minimum and sqrt."""
    cf = dyn.compile(lambda x: (x.clamp(0, 1), F.normalize(x, dim=0)), backend="eager")
    x = torch.randn(5)
    got, want = cf(x), (x.clamp(0, 1), F.normalize(x, dim=0))
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)
    ops = [n.op for g, k, e in cf.graphs if g is not None for n in g.nodes]
    assert "where" not in ops and "detach" not in ops


# -- tensors without elements -------------------------------------------------------------------------
EMPTY_SHAPES = [(0,), (0, 6), (6, 0), (0, 0), (2, 0, 3)]
EMPTY_OPS = {
    "add": lambda x: x + 1,
    "exp": lambda x: x.exp(),
    "relu": lambda x: torch.relu(x),
    "sum": lambda x: x.sum(),
    "sum_first": lambda x: x.sum(0),
    "sum_last": lambda x: x.sum(-1),
    "mean_last": lambda x: x.mean(-1),
    "prod_last": lambda x: x.prod(-1),
    "amax_first": lambda x: x.amax(0),
    "max": lambda x: x.max(),
    "softmax": lambda x: x.softmax(-1),
    "mm_t": lambda x: x.reshape(x.shape[0], -1) @ x.reshape(x.shape[0], -1).t(),
    "t_mm": lambda x: x.reshape(x.shape[0], -1).t() @ x.reshape(x.shape[0], -1),
    "bmm": lambda x: torch.matmul(x.reshape(1, x.shape[0], -1), x.reshape(1, x.shape[0], -1).transpose(1, 2)),
    "cat": lambda x: torch.cat([x, x + 1], 0),
    "cat_last": lambda x: torch.cat([x, x * 2], -1),
    "where": lambda x: torch.where(x > 0, x, 0.0),
    "slice": lambda x: x[1:] * 2,
    "permute": lambda x: x.permute(*reversed(range(x.dim()))) * 2,
    "expand": lambda x: x.unsqueeze(0).expand(3, *x.shape) + 0,
    "layer_norm": lambda x: F.layer_norm(x, x.shape[-1:]),
    "convert_compare": lambda x: ((x > 0).sum(-1), x.to(torch.int32) + 1),
    "with_a_non_empty_output": lambda x: (x.sum(), torch.ones(3) * 2),
    "empty_value_inside": lambda x: x.sum() + torch.ones(3)[3:].sum(),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(EMPTY_OPS))
def test_tensors_without_elements(name, shape, backend):
    """Nothing crashes (x @ x.t() of a (0, 6) tensor used to segfault the compiled backend)."""
    x = torch.randn(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # eager's own warnings (var of no elements)
        check(EMPTY_OPS[name], x, backend=backend, compiled=False)  # PyTorch ops run what has no elements


@needs_compiler
@pytest.mark.parametrize("split", [4, 0])
def test_empty_operand_of_cat_is_dropped(split):
    """Phi-3's rotary embedding: the part of q past the rotary dims is an empty slice cat-ed back on; the
    cat adds nothing from it, so the graph keeps no value without elements and is compiled (an empty
    value the outputs need would make PyTorch's ops run the whole graph)."""
    def f(q, w):
        rot, rest = q[..., :split], q[..., split:]
        return torch.cat([torch.sin(rot) * 2, rest], dim=-1) @ w
    q, w = torch.randn(2, 3, 4), torch.randn(4, 5)
    dyn.reset()
    torch.testing.assert_close(dyn.compile(f, fullgraph=True)(q, w), f(q, w))
    assert dyn.stats()["eager_graphs"] == []


@needs_compiler
def test_compile_refuses_a_function_it_cannot_call_with_bare_pointers():
    """A buffer with a zero-size dim before the last has dynamic strides in MLIR's canonical layout, so its
    function takes memref descriptors: _C.compile reports it instead of building a call that crashes."""
    ir = """module {
  func.func @forward(%arg0: tensor<6x0xf32>) -> (tensor<6x0xf32>) {
    %0 = graph.exp %arg0 : tensor<6x0xf32> -> tensor<6x0xf32>
    return %0 : tensor<6x0xf32>
  }
}
"""
    with pytest.raises(RuntimeError, match="one pointer per buffer"):
        dyn._C.compile(ir, "forward", False)


# -- views are new tensor objects -------------------------------------------------------------------------
IDENTITY_CASES = {
    "view_as": lambda x: x.view_as(x),
    "ellipsis": lambda x: x[...],
    "full_slice": lambda x: x[:],
    "reshape_same": lambda x: x.reshape(2, 3),
    "view_same": lambda x: x.view(2, 3),
    "expand_same": lambda x: x.expand(2, 3),
    "permute_identity": lambda x: x.permute(0, 1),
    "transpose_same_dim": lambda x: x.transpose(1, 1),
    "t_of_1d": lambda x: x[0].t(),
    "squeeze_nothing": lambda x: x.squeeze(),
    "flatten_one_dim": lambda x: x.flatten(1),
    "contiguous": lambda x: x.contiguous(),
    "to_same_dtype": lambda x: x.to(torch.float32),
    "float_of_float": lambda x: x.float(),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(IDENTITY_CASES))
def test_view_identity_like_eager(name, backend):
    """x.view_as(x) and x[...] are new tensor objects sharing x's memory (eager); flatten(1) of a 2-D
    tensor, contiguous() and to() of the same dtype return x itself."""
    fn = IDENTITY_CASES[name]
    x = torch.ones(2, 3)
    want = fn(x)
    got = dyn.compile(fn, backend=backend)(x)
    assert (got is x) == (want is x)
    assert got.data_ptr() == want.data_ptr() and got.shape == want.shape
    got.add_(1)  # shares x's memory
    assert x[0, 0].item() == 2.0


# -- the same on the GPU (skipped without CUDA) ---------------------------------------------------------
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@needs_cuda
@pytest.mark.parametrize("name", sorted(BOOL_OPS))
def test_bool_arithmetic_cuda(name):
    # CUDA's abs takes bools (the CPU's raises): not captured, eager computes it
    check(BOOL_OPS[name], B.cuda(), C.cuda(), backend="dyn", captured=name not in ("abs", "builtin_abs"))


@needs_cuda
@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(EMPTY_OPS))
def test_tensors_without_elements_cuda(name, shape):
    x = torch.randn(shape, device="cuda")
    fn = EMPTY_OPS[name]
    if name in ("with_a_non_empty_output", "empty_value_inside"):
        return  # they make CPU tensors
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(fn, x, backend="dyn", compiled=False)


# Python numbers in arithmetic: PyTorch computes x / 0.975 and x ** 0.5 differently from the same with a 0-d
# tensor (CUDA divides by a number as x * (1 / b), the reciprocal rounded from double; pow by a number takes
# sqrt, rsqrt or multiplies for 0.5, -0.5, 2, 3, -1, -2), and number / x is x.reciprocal() * number. The
# eager backend hands PyTorch the number as eager does: the same bits, on the CPU and on CUDA.
NUMBER_OPS = {
    "div": lambda x: x / 0.975,
    "div_": lambda x: x.clone().div_(0.9875) * 2,
    "torch_div": lambda x: torch.div(x, 0.85),
    "pow_half": lambda x: x ** 0.5,
    "pow_three": lambda x: x ** 3,
    "pow_minus_two": lambda x: x.pow(-2),
    "pow_fraction": lambda x: x ** 1.7,
    "rdiv": lambda x: 0.975 / x,
    "stochastic_depth_like": lambda x: x * (torch.ones(x.shape[0], 1) / 0.9625),
}


@pytest.mark.parametrize("device", ["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
@pytest.mark.parametrize("name", NUMBER_OPS)
def test_python_numbers_compute_as_eager(name, device):
    fn = NUMBER_OPS[name]
    x = torch.rand(64, 1000, device=device) * 10 + 0.01
    if name == "stochastic_depth_like":
        fn = lambda x: x * (torch.ones(x.shape[0], 1, device=x.device) / 0.9625)  # noqa: E731
    got = dyn.compile(fn, backend="eager", fullgraph=True)(x)
    assert torch.equal(got, fn(x))


@pytest.mark.parametrize("device", ["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
@pytest.mark.parametrize("exponent", [2, 3, 0.5, -0.5, -1, -2])
def test_pow_by_special_numbers_compiles_as_eager(exponent, device):
    """dyn's kernels compute x ** e for the exponents that eager's pow kernels special-case as eager does
    (x * x, x * x * x, sqrt, 1 / sqrt, 1 / x, 1 / (x * x)): the same bits, natively compiled."""
    x = torch.rand(64, 1000, device=device) * 10 + 0.01
    fn = lambda t: t ** exponent  # noqa: E731
    compiled = dyn.compile(fn, fullgraph=True)
    got = compiled(x)
    assert dyn.stats()["compiled_graphs"] >= 1 and not dyn.stats()["eager_graphs"]
    expected = fn(x)
    if exponent == 0.5 and device == "cpu":
        # eager's CPU sqrt is MKL's vsSqrt, which is not correctly rounded (about one result in six is 1 ulp
        # off); dyn's is the correctly rounded square root (the f64 one rounded to f32 is)
        torch.testing.assert_close(got, expected, rtol=1.2e-7, atol=0)
        expected = x.double().sqrt().float()
    assert torch.equal(got, expected), (got - expected).abs().max()


def _ordered_kwargs(x):
    return collections.OrderedDict(a=x + 1, b=x * 2)


def _ordered_items(x):
    d = collections.OrderedDict()
    d["b"] = x * 2
    d["a"] = x + 1
    return d


def _default_list(x):
    d = collections.defaultdict(list)
    d["a"].append(x + 1)
    return d


def _default_int(x):
    return collections.defaultdict(int, {"n": 3}), x * 2


@pytest.mark.parametrize("backend", ["eager", "dyn"])
@pytest.mark.parametrize("fn", [_ordered_kwargs, _ordered_items, _default_list, _default_int])
def test_returned_containers_keep_their_type(fn, backend):
    """An OrderedDict or a defaultdict the function returns is one of its type (with its factory), its
    keys in eager's order: not a plain dict."""
    x = torch.ones(2)
    got, want = dyn.compile(fn, backend=backend)(x), fn(x)
    g, w = (got[0], want[0]) if isinstance(want, tuple) else (got, want)
    assert type(g) is type(w) and list(g) == list(w)
    assert getattr(g, "default_factory", None) is getattr(w, "default_factory", None)
    for k in w:
        torch.testing.assert_close(g[k], w[k])


@pytest.mark.parametrize("fn", [
    lambda x: (x + 1) if x.type() == "torch.FloatTensor" else x,
    lambda x: (x.type("torch.DoubleTensor") * 2, x.type(torch.int64), x.type()),
    lambda x: x.to(torch.promote_types(x.dtype, torch.float64)) * 2,
    lambda x: x + int(torch.can_cast(x.dtype, torch.int32)),
], ids=["type_name", "type_conversions", "promote_types", "can_cast"])
def test_type_names_and_dtype_functions_fold_without_a_break(fn):
    """Tensor.type() (its legacy name, from dtype and device), Tensor.type(name or dtype) and torch's
    functions of dtypes alone are constants while capturing: one graph (fullgraph)."""
    x = torch.ones(3)
    got, want = dyn.compile(fn, fullgraph=True)(x), fn(x)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        if isinstance(w, torch.Tensor):
            assert g.dtype == w.dtype
            torch.testing.assert_close(g, w)
        else:
            assert g == w
