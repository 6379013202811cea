"""x.diagonal() is a view (views.py's "diagonal" step): its value gathered at constant positions, writes
through it put back into the base (static_put), of graph inputs and of computed tensors; the *_scatter
ops and diag/diag_embed/trace against eager beyond the OpInfo samples."""
import pytest
import torch

import dyn
from conftest import has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")


def _native(fn, *args, graphs=1):
    got = dyn.compile(fn, backend="dyn", fullgraph=True)(*args)
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and not stats["eager_graphs"] and stats["compiled_graphs"] >= graphs, stats
    assert stats.get("internal_failures", 0) == 0, stats
    return got


def test_write_through_diagonal_of_input():
    def f(x):
        x.diagonal(1).fill_(7.0)
        x.diagonal(0, 0, 2).mul_(2.0)
        return x.sum()
    x = torch.randn(4, 5, 5)
    want_x, got_x = x.clone(), x.clone()
    want = f(want_x)
    torch.testing.assert_close(_native(f, got_x), want)
    torch.testing.assert_close(got_x, want_x)


def test_write_through_diagonal_of_computed():
    def f(x):
        y = x * 2
        d = y.diagonal(-1, -2, -1)
        d.add_(torch.arange(3.0))
        return y, d
    x = torch.randn(2, 4, 3)
    for g, w in zip(_native(f, x), f(x)):
        torch.testing.assert_close(g, w)


def test_diagonal_view_strides():
    f = lambda x: x.diagonal(2, 1, 0)  # noqa: E731
    x = torch.randn(3, 6, 2)
    got, want = _native(f, x, graphs=0), f(x)  # a view of the input: nothing to compute
    torch.testing.assert_close(got, want)
    assert got.stride() == want.stride() and got.storage_offset() == want.storage_offset()
    assert got.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_scatters_and_diag():
    def f(x, s):
        a = torch.diagonal_scatter(x, s[:3], -1)
        b = torch.slice_scatter(a, torch.zeros(4, 2), 1, 0, 4, 3)
        c = torch.select_scatter(b, s, 0, -1)
        return c, torch.diag(s, 2), torch.diag_embed(x, 1, 0, 2), torch.trace(x.int())
    x, s = torch.randn(4, 4), torch.randn(4)
    for g, w in zip(_native(f, x, s), f(x, s)):
        torch.testing.assert_close(g, w)
