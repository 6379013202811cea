"""graph.scatter (GraphScatterOps.td, Scatter.cpp) against eager beyond the OpInfo samples: repeated
indices (plain scatter keeps the last write, as eager's CPU kernel; the reductions combine every write),
integer dtypes (mean rounds down), index_put with separated and negative indices, and out-of-range
indices (eager raises; dyn raises before running the kernel, as it does for gather)."""
import pytest
import torch

import dyn
from conftest import has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")


def _native(fn, *args):
    got = dyn.compile(lambda *a: fn(*a), backend="dyn", fullgraph=True)(*args)
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and not stats["eager_graphs"] and stats["compiled_graphs"] >= 1, stats
    assert stats.get("internal_failures", 0) == 0, stats
    return got


# every position of dim 0 gets 0, 1 or several writes
INDEX = torch.tensor([[0, 2, 2], [2, 0, 2], [0, 0, 3], [2, 2, 2]])


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.int64])
def test_scatter_reduce_repeated(reduce, include_self, dtype):
    torch.manual_seed(0)
    x = torch.randint(-9, 9, (5, 3)).to(dtype)
    src = torch.randint(-9, 9, (4, 3)).to(dtype)
    fn = lambda x, i, s: torch.scatter_reduce(x, 0, i, s, reduce, include_self=include_self)  # noqa: E731
    torch.testing.assert_close(_native(fn, x, INDEX, src), fn(x, INDEX, src))


def test_scatter_last_write_wins():
    x, src = torch.zeros(5, 3), torch.arange(12.0).reshape(4, 3)
    fn = lambda x, i, s: x.scatter(0, i, s)  # noqa: E731
    torch.testing.assert_close(_native(fn, x, INDEX, src), fn(x, INDEX, src))


def test_scatter_value_and_smaller_index():
    x = torch.randn(6, 5)
    i = torch.tensor([[4, 0], [1, 1]])  # smaller than x and src in both dims
    fn = lambda x, i: x.scatter(1, i, 2.5).scatter_add(0, i, torch.ones(3, 3))  # noqa: E731
    torch.testing.assert_close(_native(fn, x, i), fn(x, i))


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_separated_and_negative(accumulate):
    """Two broadcasting index tensors on dims 0 and 1, negative values counting from the end; repeated
    positions only where they accumulate."""
    x = torch.randn(4, 5, 3)
    a = torch.tensor([0, -1, 0]) if accumulate else torch.tensor([0, -1, 1])
    b = torch.tensor([[1], [-5]])
    v = torch.randn(2, 3, 3)
    fn = lambda x, a, b, v: torch.index_put(x, (a, b), v, accumulate=accumulate)  # noqa: E731
    torch.testing.assert_close(_native(fn, x, a, b, v), fn(x, a, b, v))


def test_index_add_int_and_index_fill_negative():
    x = torch.arange(12).reshape(3, 4)
    fn = lambda x, i: x.index_add(1, i, torch.ones(3, 3, dtype=torch.int64), alpha=3).index_fill(0, -i[:1], -7)  # noqa: E731
    i = torch.tensor([3, 0, 3])
    torch.testing.assert_close(_native(fn, x, i), fn(x, i))


def test_out_of_range_raises_as_eager():
    fn = lambda x, i, s: torch.scatter_add(x, 0, i, s)  # noqa: E731
    c = dyn.compile(fn, backend="dyn")
    x, s = torch.zeros(4, 3), torch.ones(1, 3)
    torch.testing.assert_close(c(x, torch.tensor([[0, 1, 3]]), s), fn(x, torch.tensor([[0, 1, 3]]), s))
    for bad in ([[0, 1, 4]], [[-1, 0, 0]]):
        with pytest.raises(RuntimeError):  # eager's message: "index 4 is out of bounds ..."
            fn(x, torch.tensor(bad), s)
        with pytest.raises(IndexError):  # dyn's, as for gather: "an index is outside [0, 4)"
            c(x, torch.tensor(bad), s)


def test_setitem_with_index_tensors_and_lists():
    def f(x, i, j):
        y = x.clone()
        y[i, :, j] = 5.0           # separated index tensors: eager moves their dims to the front
        y[:, [0, 2]] = y[:, [2, 0]] * 2
        y[[1, 0], 1] = torch.ones(4)
        return y, y[(0, 1), (1, 2)], y[:, :, (0, 3)]
    x = torch.randn(2, 3, 4)
    i, j = torch.tensor([1, -2]), torch.tensor([[3], [0]])
    for g, w in zip(_native(f, x, i, j), f(x, i, j)):
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_modes(mode):
    F = torch.nn.functional
    w = torch.randn(7, 3)
    idx = torch.tensor([1, 3, 3, 0, 6, 2, 5])
    offsets = torch.tensor([0, 2, 2, 5])  # an empty bag
    def f(w, idx, offsets):
        return (F.embedding_bag(idx, w, offsets, mode=mode, padding_idx=3),
                F.embedding_bag(idx, w, offsets, mode="sum", include_last_offset=True),
                F.embedding_bag(idx.reshape(7, 1), w, mode=mode))
    for g, wnt in zip(_native(f, w, idx, offsets), f(w, idx, offsets)):
        torch.testing.assert_close(g, wnt)


def test_masked_scatter_and_histc():
    def f(x, m, s):
        return torch.masked_scatter(x, m, s), torch.histc(x, 7), torch.histc(x, 4, -0.5, 0.5)
    x, s = torch.randn(6, 5), torch.randn(40)
    m = x > 0.3
    for g, w in zip(_native(f, x, m, s), f(x, m, s)):
        torch.testing.assert_close(g, w)


def test_histc_infinite_range_raises_as_eager():
    f = lambda x: torch.histc(x, 3)  # noqa: E731
    c = dyn.compile(f, backend="dyn")
    x = torch.tensor([0.0, 1.0, 2.0])
    torch.testing.assert_close(c(x), f(x))
    x = torch.tensor([0.0, float("inf"), 2.0])
    with pytest.raises(RuntimeError):
        f(x)
    with pytest.raises(IndexError):  # dyn's check before the kernel (the range as an index)
        c(x)
