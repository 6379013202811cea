"""Ops captured as compositions of other graph ops (handlers/compositions.py) against eager beyond the
OpInfo samples: rot90's layout (eager returns a transposed view of the flipped copy), bucketize of NaN
and of values on a boundary, isin with numbers, diff with prepend/append, trapezoid over a 2-D x."""
import pytest
import torch

import dyn
from conftest import has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")


def _native(fn, *args):
    got = dyn.compile(fn, backend="dyn", fullgraph=True)(*args)
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and not stats["eager_graphs"] and stats["compiled_graphs"] >= 1, stats
    assert stats.get("internal_failures", 0) == 0, stats
    return got


@pytest.mark.parametrize("k", [-1, 1, 2, 3, 5])
def test_rot90_layout(k):
    f = lambda x: torch.rot90(x, k, (2, 0))  # noqa: E731
    x = torch.randn(3, 4, 5)
    got, want = _native(f, x), f(x)
    torch.testing.assert_close(got, want)
    assert got.stride() == want.stride()


@pytest.mark.parametrize("right", [False, True])
def test_bucketize_nan_and_ties(right):
    f = lambda x, b: torch.bucketize(x, b, right=right, out_int32=True)  # noqa: E731
    x = torch.tensor([[float("nan"), 1.0, 2.5], [-9.0, 3.0, float("inf")]])
    b = torch.tensor([1.0, 2.0, 3.0])
    torch.testing.assert_close(_native(f, x, b), f(x, b))


def test_isin_numbers_and_invert():
    f = lambda x, t: (torch.isin(x, t, invert=True), torch.isin(x, 3), torch.isin(2, t))  # noqa: E731
    x, t = torch.tensor([[1, 2, 3], [4, 5, 6]]), torch.tensor([2, 6, 7])
    for g, w in zip(_native(f, x, t), f(x, t)):
        torch.testing.assert_close(g, w)


def test_diff_and_trapezoid():
    def f(y, x, p):
        return (torch.diff(y, 2, 0, prepend=p, append=y[:1]), torch.trapezoid(y, x, dim=0),
                torch.cumulative_trapezoid(y, dx=0.5, dim=1), torch.diff(y > 0, dim=1))
    y, x, p = torch.randn(4, 5), torch.randn(4, 5).cumsum(0), torch.randn(2, 5)
    for g, w in zip(_native(f, y, x, p), f(y, x, p)):
        torch.testing.assert_close(g, w)


def test_cartesian_prod():
    a, b, c = torch.randn(3), torch.randn(2), torch.randn(4)
    f = lambda a, b, c: torch.cartesian_prod(a, b, c)  # noqa: E731
    torch.testing.assert_close(_native(f, a, b, c), f(a, b, c))
    i, j = torch.arange(3), torch.tensor([5, 7])
    torch.testing.assert_close(_native(lambda i, j: torch.cartesian_prod(i, j), i, j), torch.cartesian_prod(i, j))
    got = dyn.compile(lambda t: torch.cartesian_prod(t), backend="dyn", fullgraph=True)(a)
    assert got is a  # one tensor: eager returns it itself


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bool])
def test_combinations(dtype):
    x = torch.randn(5).mul(5).to(dtype)
    for r in range(1, 5):
        for wr in (False, True):
            f = lambda t: torch.combinations(t, r, wr)  # noqa: E731
            got, want = _native(f, x), f(x)
            assert got.dtype == want.dtype and got.shape == want.shape
            torch.testing.assert_close(got, want)
    for f in (lambda t: torch.combinations(t[:1], 2), lambda t: torch.combinations(t, 0)):  # empty results
        got, want = dyn.compile(f, backend="dyn", fullgraph=True)(x), f(x)
        assert got.shape == want.shape and got.dtype == want.dtype


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32])
def test_linspace_with_tensor_bounds(dtype):
    """torch.linspace with bounds in 0-d tensors: computed in the graph as eager's kernel (handlers/factories.py)."""
    s, e = torch.tensor(-2.5), torch.tensor(7)
    for steps in (2, 3, 10, 51, 200):
        for f in (lambda s, e: torch.linspace(s, e, steps, dtype=dtype),
                  lambda s, e: torch.linspace(s, 4.3, steps, dtype=dtype),
                  lambda s, e: torch.linspace(-1, e, steps, dtype=dtype),
                  lambda s, e: torch.linspace(e, s, steps, dtype=dtype)):
            got, want = _native(f, s, e), f(s, e)
            assert got.dtype == want.dtype
            torch.testing.assert_close(got, want)
    f = lambda s, e: torch.linspace(s, e, 1)  # noqa: E731  one step: start
    torch.testing.assert_close(_native(f, s, e), f(s, e))
    with pytest.raises(dyn.Unsupported, match="bfloat16"):  # eager's bfloat16 kernel rounds per vector
        dyn.compile(lambda s, e: torch.linspace(s, e, 50, dtype=torch.bfloat16), backend="dyn", fullgraph=True)(s, e)
