"""Handlers of statistics that are compositions of captured ops, recorded as those ops as eager's kernels
compute them: var_mean and std_mean (the variance's and the mean's reductions), nansum and nanmean (NaNs
as zeros, the mean over the values that are not NaN), cov and corrcoef (eager's formulas,
ATen's Correlation.cpp)."""
import torch

from ...errors import Unsupported
from ..tensor import TensorVar, _norm_dims
from .common import _out, metas

H = {}  # torch.<name> (and Tensor.<name>) -> handler


def _eager(what, fn, *args, **kwargs):
    """fn on meta tensors (eager's result shape and dtype); Unsupported where eager raises."""
    try:
        return fn(*metas(args), **metas(kwargs))
    except (RuntimeError, IndexError, TypeError, ValueError, NotImplementedError) as e:
        raise Unsupported(f"{what}: {e}")  # eager raises


def _var_args(dim, unbiased, keepdim, correction):
    """torch.var's overloads: (dim, unbiased, keepdim), (unbiased) and (dim, *, correction, keepdim)."""
    if isinstance(dim, bool):  # var_mean(x, unbiased)
        dim, unbiased = None, dim
    if correction is not None and unbiased is not None:
        raise Unsupported("var with both unbiased and correction (eager raises)")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if isinstance(correction, bool) or not isinstance(correction, (int, float)):
        raise Unsupported(f"var with correction={correction!r}")
    return dim, correction, bool(keepdim)


def _var_mean(sqrt):
    name = "std_mean" if sqrt else "var_mean"
    fn = getattr(torch, name)

    def h(o, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
        o.check(x)
        dim, correction, keepdim = _var_args(dim, unbiased, keepdim, correction)
        meta = _eager(name, fn, x, dim, correction=correction, keepdim=keepdim)
        if not x.meta.dtype.is_floating_point:
            raise Unsupported(f"{name} of a {x.meta.dtype} tensor")
        dims = _norm_dims(dim, x.meta.dim()) if x.meta.dim() else None
        if x.meta.dim() == 0:
            xv, dims = o.reshape(x, (1,)), [0]
        else:
            xv = x
        var = o.var_(xv, dims, None, keepdim, correction)
        mean = o.reduce("mean", xv, dims, keepdim)
        r = (o.sqrt0(var) if sqrt else var, mean)
        out = []
        for v, m in zip(r, meta):
            v = o.reshape(v, tuple(m.shape))
            if v.meta.dtype != m.dtype:
                raise Unsupported(f"{name}: unexpected dtype")
            out.append(v)
        return tuple(out)
    return h


H["var_mean"] = _var_mean(False)
H["std_mean"] = _var_mean(True)


def _nansum_of(o, x, dims, keepdim, dtype):
    if x.meta.dtype.is_floating_point:
        x = o.where(o.binary("ne", x, x), 0, x)
    if dtype is not None:
        x = o.convert(x, dtype)
    return o.reduce("sum", x, dims, keepdim)


def _nansum(o, x, dim=None, keepdim=False, *, dtype=None, out=None):
    o.check(x)
    meta = _eager("nansum", torch.nansum, x, dim, bool(keepdim), dtype=dtype)
    if isinstance(dim, (tuple, list)) and not len(dim):
        dim = None  # eager: over every dim
    r = _nansum_of(o, x, _norm_dims(dim, x.meta.dim()) if x.meta.dim() else None, bool(keepdim), dtype)
    r = o.convert(o.reshape(r, tuple(meta.shape)), meta.dtype)
    return _out(o, out, o.fresh_copy(r) if r is x else r, x)


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


H["nansum"] = _nansum
H["nanmean"] = _nanmean
