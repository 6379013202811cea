"""ATen's internal forms of normalizations and softmax (handlers/internals.py) against eager beyond the
OpInfo samples: the saved statistics' dtypes with mixed float32 parameters, running statistics updated in
place in training, eval's empty statistics, the no_stats overload, the statistics cut from autograd as
eager's, _safe_softmax's rows of -inf, _softmax_backward_data in bfloat16 and native_dropout_backward."""
import pytest
import torch

import dyn
from dyn import backends as B
import opinfo_check as oc
from conftest import has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")


def _native(fn, *args):
    dyn.reset()
    got = dyn.compile(fn, backend="dyn", fullgraph=True)(*args)
    stats = dyn.stats()
    # a graph with an empty result (eval's saved statistics) runs with PyTorch ops: nothing to compute
    fallbacks = [g for g in stats["eager_graphs"] if g["reason"] != B.EMPTY]
    assert stats["graph_breaks"] == 0 and not fallbacks, stats
    assert stats.get("internal_failures", 0) == 0, stats
    return got


def _same(got, want, exact=None):
    """got equals eager's want; where it does not (bfloat16), each differing element of got is at least as
    close as eager's to `exact` (the op on float64 inputs), as the OpInfo test accepts."""
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        try:
            torch.testing.assert_close(g, w, equal_nan=True)
        except AssertionError:
            if exact is None or not oc._closer_to_exact(g, w, exact[k].double()):
                raise


@pytest.mark.parametrize("pdtype", [None, torch.float32])  # None: the parameters in x's dtype
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_native_layer_norm(dtype, pdtype):
    pdtype = pdtype or dtype
    x = torch.randn(3, 4, 5, dtype=dtype)
    w, b = torch.randn(4, 5, dtype=pdtype), torch.randn(4, 5, dtype=pdtype)
    for f in (lambda x, w, b: torch.native_layer_norm(x, (4, 5), w, b, 1e-5),
              lambda x, w, b: torch.native_layer_norm(x, [5], None, b[0], 0.1),
              lambda x, w, b: torch.native_layer_norm(x, (3, 4, 5), None, None, 1e-5)):
        try:
            want = f(x, w, b)
        except RuntimeError:
            continue
        _same(_native(f, x, w, b), want)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype,pdtype", [(torch.float32, torch.float32), (torch.float64, torch.float64),
                                          (torch.bfloat16, torch.bfloat16), (torch.bfloat16, torch.float32)])
@pytest.mark.parametrize("name", ["native_batch_norm", "_native_batch_norm_legit"])
def test_native_batch_norm_running_stats(name, dtype, pdtype, training):
    fn = getattr(torch, name)
    x = torch.randn(4, 3, 5, 2, dtype=dtype)
    params = [torch.randn(3, dtype=pdtype), torch.randn(3, dtype=pdtype), torch.randn(3, dtype=pdtype),
              torch.rand(3, dtype=pdtype) + 0.5]
    f = lambda x, w, b, rm, rv: fn(x, w, b, rm, rv, training, 0.3, 1e-5)  # noqa: E731
    p_d, p_e, p_x = [p.clone() for p in params], [p.clone() for p in params], [p.double() for p in params]
    exact = f(x.double(), *p_x)
    _same(_native(f, x, *p_d), f(x, *p_e), exact)
    # the running statistics, updated in place in training: bfloat16's update (1 - m) * old + m * batch may
    # cancel to a few ulps, where got must be at least as close to float64's as eager's
    _same(p_d, p_e, p_x)


def test_native_batch_norm_legit_no_stats_and_autograd():
    x, w, b = torch.randn(4, 3, 5), torch.randn(3), torch.randn(3)
    f = lambda x, w, b: torch._native_batch_norm_legit(x, w, b, True, 0.1, 1e-5)  # noqa: E731
    _same(_native(f, x, w, b), f(x, w, b))
    # the saved statistics are not differentiable in eager: neither in dyn
    xg = x.clone().requires_grad_()
    for g in (lambda t: torch.native_layer_norm(t, (5,), None, None, 1e-5),
              lambda t: torch.native_batch_norm(t, None, None, None, None, True, 0.1, 1e-5)):
        got = dyn.compile(g, backend="dyn", fullgraph=True)(xg)
        assert [t.requires_grad for t in got] == [t.requires_grad for t in g(xg)] == [True, False, False]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_safe_softmax_rows_of_minus_inf(dtype):
    x = torch.randn(3, 4, dtype=dtype)
    x[1] = float("-inf")
    x[2, :2] = float("-inf")
    f = lambda t: (torch.ops.aten._safe_softmax.default(t, 1), torch.ops.aten._safe_softmax.default(t, 0),  # noqa: E731
                   torch.ops.aten._safe_softmax.default(t, -1, torch.float64))
    _same(_native(f, x), f(x))


_DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", _DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 3, 1500)])  # CUDA: warp rows up to 1024, block rows above
def test_softmax_backward_data(dtype, device, shape):
    x, g = torch.randn(shape, dtype=dtype, device=device), torch.randn(shape, dtype=dtype, device=device)
    y = torch.softmax(x, 1)
    f = lambda g, y: (torch.ops.aten._softmax_backward_data(g, y, 1, dtype),  # noqa: E731
                      torch.ops.aten._softmax_backward_data.default(g, y, -1, dtype))
    _same(_native(f, g, y), f(g, y))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_native_dropout_backward(dtype):
    g, mask = torch.randn(4, 5, dtype=dtype), torch.rand(4, 5) > 0.3
    f = lambda g, m: (torch.ops.aten.native_dropout_backward.default(g, m, 1 / 0.7),  # noqa: E731
                      torch.ops.aten.native_dropout_backward(g[0], m[0], 0.0))
    _same(_native(f, g, mask), f(g, mask))
