"""Helpers of the test_library_* capture files: graphs and break reasons of a function, bit-exact
comparison with eager, "one graph with eager's result", and the shared input X."""
import torch

import dyn


def graphs_and_breaks(fn, *args, **kwargs):
    ex = dyn.explain(fn)(*args, **kwargs)
    return ex.graph_count, [r["reason"] for r in ex.break_reasons]


def assert_same(got, want):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    elif isinstance(want, torch.Tensor):
        assert got.dtype == want.dtype and got.shape == want.shape and got.device == want.device
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    else:
        assert got == want


def one_graph(fn, *args):
    """fn captured as one graph without a break, giving eager's result (backend="eager")."""
    want = fn(*args)
    count, reasons = graphs_and_breaks(fn, *args)
    assert (count, reasons) == (1, [])
    dyn.reset()
    assert_same(dyn.compile(fn, backend="eager")(*args), want)


X = torch.randn(4, 8, generator=torch.Generator().manual_seed(0))
