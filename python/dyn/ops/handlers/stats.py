"""Handlers of statistics that are compositions of captured ops, recorded as those ops as eager's kernels
compute them: var_mean and std_mean (graph.var or graph.std, and graph.mean), nansum (graph.nansum) and
nanmean (nansum over the count of values that are not NaN), cov and corrcoef (eager's formulas,
ATen's Correlation.cpp)."""
import torch

from ...errors import Unsupported
from ..tensor import _norm_dims
from .common import _out, metas
from ...dynamic.symbolic import meta_empty
from .registry import torch_name


def _eager(what, fn, *args, **kwargs):
    """fn on meta tensors (eager's result shape and dtype); Unsupported where eager raises."""
    try:
        return fn(*metas(args), **metas(kwargs))
    except (RuntimeError, IndexError, TypeError, ValueError, NotImplementedError) as e:
        raise Unsupported(f"{what}: {e}")  # eager raises


def _var_mean(sqrt):
    name = "std_mean" if sqrt else "var_mean"
    fn = getattr(torch, name)

    def h(o, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
        """graph.var (graph.std) and graph.mean: eager's kernel computes both in one pass."""
        o.check(x)
        if isinstance(dim, bool):  # var_mean(x, unbiased)
            dim, unbiased = None, dim
        kw = {k: v for k, v in (("unbiased", unbiased), ("correction", correction)) if v is not None}
        _eager(name, fn, x, dim, keepdim=bool(keepdim), **kw)  # eager's argument checks
        var = o.var_(x, dim, unbiased, keepdim, correction, sqrt=sqrt)
        xv, dims = (o.reshape(x, (1,)), [0]) if x.meta.dim() == 0 else (x, _norm_dims(dim, x.meta.dim()))
        mean = o.reshape(o.reduce("mean", xv, dims, bool(keepdim)), tuple(var.meta.shape))
        return var, mean
    return h


torch_name("var_mean")(_var_mean(False))
torch_name("std_mean")(_var_mean(True))


def _nansum_of(o, x, dims, keepdim, dtype):
    if x.meta.dtype.is_floating_point:
        x = o.where(o.binary("ne", x, x), 0, x)
    if dtype is not None:
        x = o.convert(x, dtype)
    return o.reduce("sum", x, dims, keepdim)


@torch_name("nansum")
def _nansum(o, x, dim=None, keepdim=False, *, dtype=None, out=None):
    """graph.nansum over dim (None or no dims: all), of x in dtype when given."""
    o.check(x)
    meta = _eager("nansum", torch.nansum, x, dim, bool(keepdim), dtype=dtype)
    if isinstance(dim, (tuple, list)) and not len(dim):
        dim = None  # eager: over every dim
    xv, dims = (o.reshape(x, (1,)), [0]) if x.meta.dim() == 0 else (x, _norm_dims(dim, x.meta.dim()))
    if dtype is not None:
        xv = o.convert(xv, dtype)
    shape = tuple(1 if i in dims else n for i, n in enumerate(xv.meta.shape) if keepdim or i not in dims)
    r = o.node("nansum", [xv], meta_empty(shape, dtype=meta.dtype, device="meta"), dims=tuple(dims),
               keepdim=bool(keepdim))
    return _out(o, out, o.reshape(r, tuple(meta.shape)), x)


@torch_name("nanmean")
def _nanmean(o, x, dim=None, keepdim=False, *, dtype=None, out=None):
    """eager's: nansum(x) / (the number of values that are not NaN), the count an int64 tensor."""
    o.check(x)
    meta = _eager("nanmean", torch.nanmean, x, dim, bool(keepdim), dtype=dtype)
    if not x.meta.dtype.is_floating_point:
        raise Unsupported(f"nanmean of a {x.meta.dtype} tensor (eager raises)")
    if isinstance(dim, (tuple, list)) and not len(dim):
        dim = None
    dims = _norm_dims(dim, x.meta.dim()) if x.meta.dim() else None
    s = _nansum_of(o, x, dims, bool(keepdim), dtype)
    count = o.reduce("sum", o.convert(o.binary("eq", x, x), torch.int64), dims, bool(keepdim))
    r = o.binary("div", s, count)
    r = o.convert(o.reshape(r, tuple(meta.shape)), meta.dtype)
    return _out(o, out, r, x)


def _cov_probe(x, fweights, aweights, correction):
    """eager's cov on tensors of the operands' shapes and dtypes filled with ones: its result dtype, and
    Unsupported where eager raises for the operands' shapes, dtypes or ranks."""
    def ones(v):
        return None if v is None else torch.ones(tuple(v.meta.shape), dtype=v.meta.dtype)
    try:
        return torch.cov(ones(x), correction=correction, fweights=ones(fweights), aweights=ones(aweights)).dtype
    except (RuntimeError, TypeError, ValueError) as e:
        raise Unsupported(f"cov: {e}")  # eager raises


def _cov_of(o, x, correction=1, fweights=None, aweights=None):
    """ATen's cov (Correlation.cpp): the observations' (weighted) mean subtracted, the product with the
    (weighted) transpose divided by the normalization factor, which is 0 where it is <= 0 (eager then
    warns). Weights are checked before every run as eager checks them (not negative, a sum that is not 0)."""
    o.check(x)
    for w in (fweights, aweights):
        if w is not None:
            o.check(w)
    if isinstance(correction, bool) or not isinstance(correction, int):
        raise Unsupported(f"cov with correction={correction!r}")
    dtype = _cov_probe(x, fweights, aweights, correction)
    xin = x if x.meta.dim() == 2 else o.reshape(x, (1, x.meta.numel()))
    n = xin.meta.shape[1]
    w = fweights
    if aweights is not None:
        w = aweights if w is None else o.binary("mul", w, aweights)
    if w is not None:
        if n == 0:
            raise Unsupported("cov with weights of no observations (eager raises: they sum to zero)")
        w = o.reshape(w, (n,))
        w_sum = o.reduce("sum", w)
        ok = o.binary("ne", w_sum, 0)
        for v in (fweights, aweights):
            if v is not None:
                ok = o.binary("logical_and", ok, o.binary("ge", o.reduce("amin", v), 0))
        o.check_values(ok, "cov(): fweights and aweights cannot be negative and the weights cannot sum to zero")
        avg = o.binary("div", o.reduce("sum", o.binary("mul", xin, w), 1), w_sum)
        if aweights is not None and correction != 0:
            aw = o.reshape(aweights, (n,))
            norm = o.binary("sub", w_sum, o.binary("div", o.binary("mul", o.reduce("sum", o.binary("mul", w, aw)),
                                                                     correction), w_sum))
        else:
            norm = o.binary("sub", w_sum, correction)
        norm = o.where(o.binary("le", norm, 0), o.full((), 0, norm.meta.dtype), norm)
    else:
        avg = o.binary("div", o.reduce("sum", xin, 1), o.full((), n, torch.int64))
        norm = o.full((), max(n - correction, 0), torch.int64)
    xc = o.binary("sub", xin, o.reshape(avg, (avg.meta.shape[0], 1)))
    c = o.matmul(xc, o.transpose(o.binary("mul", xc, w) if w is not None else xc, 0, 1))
    r = o.binary("div", c, norm)
    if r.meta.dtype != dtype:
        raise Unsupported(f"cov: a {r.meta.dtype} result where eager's is {dtype}")
    return o.reshape(r, tuple(s for s in r.meta.shape if s != 1))


@torch_name("cov")
def _cov(o, x, *, correction=1, fweights=None, aweights=None):
    return _cov_of(o, x, correction, fweights, aweights)


@torch_name("corrcoef")
def _corrcoef(o, x):
    """ATen's corrcoef: cov / sqrt(diag) by rows, then by columns, clipped to [-1, 1]; c / c for one
    variable."""
    c = _cov_of(o, x)
    if c.meta.dim() == 0:
        return o.binary("div", c, c)
    k = c.meta.shape[0]
    eye = o.dense(torch.eye(k, dtype=torch.bool))
    d = o.reduce("sum", o.where(eye, c, o.full((), 0, c.meta.dtype)), 1)  # the diagonal
    std = o.unary("sqrt", d)
    c = o.binary("div", c, o.reshape(std, (k, 1)))
    c = o.binary("div", c, o.reshape(std, (1, k)))
    return o.clamp(c, -1, 1)
