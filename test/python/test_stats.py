"""Statistics captured as compositions of graph ops (handlers/stats.py) against eager beyond the OpInfo
samples: var_mean/std_mean overloads, nansum/nanmean with NaNs, integers, dtype= and dims."""
import warnings

import pytest
import torch

import dyn
from conftest import has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")


def _native(fn, *args):
    dyn.reset()
    got = dyn.compile(fn, backend="dyn", fullgraph=True)(*args)
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and not stats["eager_graphs"] and stats["compiled_graphs"] >= 1, stats
    assert stats.get("internal_failures", 0) == 0, stats
    return got


def _same(got, want):
    assert type(got) is type(want)
    if isinstance(want, torch.Tensor):
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got, want, equal_nan=True)
        return
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_var_mean_overloads(name, dtype):
    fn = getattr(torch, name)
    x = torch.randn(3, 4, 5, dtype=dtype)
    for f in (lambda t: fn(t), lambda t: fn(t, 1), lambda t: fn(t, False), lambda t: fn(t, (0, 2), True, True),
              lambda t: fn(t, dim=-1, correction=0, keepdim=True), lambda t: fn(t, None, correction=2.5),
              lambda t: fn(t[0, 0, 0])):
        _same(_native(f, x), f(x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_nansum_nanmean_with_nans(dtype):
    x = torch.randn(4, 5, dtype=dtype)
    x[0, 1] = x[2, 3] = x[2, 4] = float("nan")
    x[3] = float("nan")  # a row of NaNs: nanmean 0 / 0 is NaN, nansum 0
    for f in (lambda t: torch.nansum(t), lambda t: t.nansum(1), lambda t: torch.nansum(t, (0, 1), keepdim=True),
              lambda t: torch.nanmean(t), lambda t: t.nanmean(dim=1, keepdim=True), lambda t: torch.nanmean(t, 0),
              lambda t: torch.nansum(t, 1, dtype=torch.float64), lambda t: torch.nanmean(t[1, 2])):
        _same(_native(f, x), f(x))


def test_nansum_integers_and_out():
    x = torch.randint(-50, 50, (3, 4), dtype=torch.int32)
    for f in (lambda t: torch.nansum(t), lambda t: torch.nansum(t, 0),
              lambda t: torch.nansum(t, 1, dtype=torch.float32)):
        _same(_native(f, x), f(x))
    with pytest.raises(dyn.Unsupported):
        dyn.compile(lambda t: torch.nanmean(t), backend="dyn", fullgraph=True)(x)  # eager raises for integers
    y = torch.randn(3, 4)
    out_d, out_e = torch.empty(4), torch.empty(4)
    _native(lambda t, o: torch.nansum(t, 0, out=o), y, out_d)
    torch.nansum(y, 0, out=out_e)
    torch.testing.assert_close(out_d, out_e)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_cov_weights_and_corrcoef(dtype):
    x = torch.randn(3, 6).mul(4).to(dtype)
    fw, aw = torch.randint(1, 5, (6,)), torch.rand(6, dtype=torch.float64 if dtype == torch.float64 else torch.float32)
    for f in (lambda x, fw, aw: torch.cov(x), lambda x, fw, aw: torch.cov(x, correction=0, fweights=fw),
              lambda x, fw, aw: torch.cov(x, correction=2, aweights=aw),
              lambda x, fw, aw: torch.cov(x[1], correction=1, fweights=fw, aweights=aw),
              lambda x, fw, aw: torch.cov(x[:, :2], correction=5),  # degrees of freedom <= 0: divided by 0
              lambda x, fw, aw: torch.corrcoef(x), lambda x, fw, aw: torch.corrcoef(x[0])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = f(x, fw, aw)
            got = _native(f, x, fw, aw)
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got, want, equal_nan=True)


def test_cov_checks_weights_before_each_run():
    """eager raises for negative weights and weights summing to zero (data-dependent): the compiled graph
    checks them before it runs, as eager's kernel does."""
    f = dyn.compile(lambda x, fw, aw: torch.cov(x, fweights=fw, aweights=aw), backend="dyn", fullgraph=True)
    x = torch.randn(2, 4)
    fw, aw = torch.tensor([1, 2, 1, 3]), torch.tensor([0.5, 0.1, 0.2, 0.9])
    torch.testing.assert_close(f(x, fw, aw), torch.cov(x, fweights=fw, aweights=aw))
    for bad_fw, bad_aw in ((torch.tensor([1, -2, 1, 3]), aw), (fw, torch.tensor([0.5, -0.1, 0.2, 0.9])),
                           (fw, torch.zeros(4))):
        with pytest.raises(RuntimeError):
            torch.cov(x, fweights=bad_fw, aweights=bad_aw)
        with pytest.raises(RuntimeError, match="cov"):
            f(x, bad_fw, bad_aw)
