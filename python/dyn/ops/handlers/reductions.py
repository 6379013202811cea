"""Handlers of the composite reductions (graph.all/any/argmax/argmin/logsumexp/vector_norm) and the scans
(graph.cumulative, graph.cumulative_index): each records one graph op, with the result's meta from the real
op on meta tensors; dyn-convert-graph-to-prim decomposes them (CompositeReductions.cpp, Scans.cpp)."""
import math

import torch

from ...errors import Unsupported
from ..tensor import TensorVar, _norm_dim, _norm_dims
from .common import _out
from ...dynamic.symbolic import meta_empty
from .registry import torch_name

H = {}  # name -> handler: torch.<name> and Tensor.<name> (registered at the end; others build on it)


def _meta(what, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except (RuntimeError, TypeError, ValueError, IndexError) as e:
        raise Unsupported(f"{what}: {e}")  # eager raises


def _as_vector(o, x):
    """A 0-d tensor as a 1-element vector (the graph's reductions take rank >= 1)."""
    return o.reshape(x, (1,)) if x.meta.dim() == 0 else x


def _reduction(o, op, x, dims, keepdim, meta, **attrs):
    """graph.<op> of x over dims, reshaped to meta's shape (a 0-d input reduces as a vector)."""
    if x.meta.dim() == 0:
        x, dims = o.reshape(x, (1,)), [0]
    r = o.node(op, [x], meta_empty(_reduced(x.meta.shape, dims, keepdim), dtype=meta.dtype, device="meta"),
               dims=dims, keepdim=keepdim, **attrs)
    return o.reshape(r, tuple(meta.shape))


def _reduced(shape, dims, keepdim):
    return tuple(1 if i in dims else s for i, s in enumerate(shape) if keepdim or i not in dims)


def _logical(op):
    def h(o, x, dim=None, keepdim=False, *, out=None):
        o.check(x)
        meta = _meta(op, getattr(torch, op), x.meta, **({} if dim is None else {"dim": dim}), keepdim=bool(keepdim))
        if meta.dtype not in (torch.bool, torch.uint8):
            raise Unsupported(f"{op} of a {x.meta.dtype} tensor gives {meta.dtype}")
        # eager's all/any of uint8 give uint8 (0 or 1): the boolean result, converted
        as_bool = meta_empty(meta.shape, dtype=torch.bool, device="meta")
        if isinstance(dim, (tuple, list)) and not len(dim):  # over no dim: each element is tested alone
            r = o.convert(x, torch.bool)
        else:
            r = _reduction(o, op, x, _norm_dims(dim, x.meta.dim()), bool(keepdim), as_bool)
        r = o.convert(r, meta.dtype)
        return _out(o, out, o.fresh_copy(r) if r is x else r, x)
    return h


H["all"] = _logical("all")
H["any"] = _logical("any")


def _arg(op):
    def h(o, x, dim=None, keepdim=False, *, out=None):
        o.check(x)
        o.accepts(op, getattr(torch, op), x)  # eager's CPU argmax has no bool kernel
        meta = _meta(op, getattr(torch, op), x.meta, dim, bool(keepdim))
        if x.meta.numel() == 0:
            raise Unsupported(f"{op} of an empty tensor (eager raises)")
        if dim is None or x.meta.dim() == 0:
            x, d = o.reshape(x, (x.meta.numel(),)), 0
        else:
            d = _norm_dim(dim, x.meta.dim())
        if x.meta.shape[d] == 0:
            raise Unsupported(f"{op} over an empty dim (eager raises)")
        shape = _reduced(x.meta.shape, [d], bool(keepdim))
        r = o.node(op, [x], meta_empty(shape, dtype=torch.int64, device="meta"), dim=d, keepdim=bool(keepdim))
        return _out(o, out, o.reshape(r, tuple(meta.shape)), x)
    return h


H["argmax"] = _arg("argmax")
H["argmin"] = _arg("argmin")


def _logsumexp(o, x, dim=None, keepdim=False, *, out=None):
    o.check(x)
    if dim is None:
        raise Unsupported("logsumexp without dim")
    meta = _meta("logsumexp", torch.logsumexp, x.meta, dim, bool(keepdim))
    x = o.convert(x, meta.dtype)  # integers: in the default float type, as eager
    return _out(o, out, _reduction(o, "logsumexp", x, _norm_dims(dim, x.meta.dim()), bool(keepdim), meta), x)


H["logsumexp"] = _logsumexp


def _vector_norm(o, x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    o.check(x)
    if isinstance(ord, TensorVar) or not isinstance(ord, (int, float)) or isinstance(ord, bool):
        raise Unsupported(f"vector_norm with ord={ord!r}")
    if x.meta.dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        raise Unsupported(f"vector_norm of a {x.meta.dtype} tensor (eager raises)")
    meta = _meta("vector_norm", torch.linalg.vector_norm, x.meta, ord, dim, bool(keepdim), dtype=dtype)
    dims = _norm_dims(dim, x.meta.dim())
    if math.isinf(ord) and x.meta.dim() and math.prod(x.meta.shape[d] for d in dims) == 0:
        raise Unsupported("an infinite-order norm over no elements (eager raises)")
    x = o.convert(x, meta.dtype)
    return _out(o, out, _reduction(o, "vector_norm", x, dims, bool(keepdim), meta, ord=float(ord)), x)


H["vector_norm"] = _vector_norm


def _norm(o, x, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: a vector norm, except the nuclear norm and matrix norms of other orders (not captured)."""
    o.check(x)
    if isinstance(dim, int):
        dim = [dim]
    if p == "fro":
        if dim is not None and len(dim) > 2:
            raise Unsupported("Frobenius norm over more than 2 dims (eager raises)")
        p = 2
    elif isinstance(p, str):
        raise Unsupported(f"norm with p={p!r}")
    if p is None:
        p = 2
    meta = _meta("norm", torch.norm, x.meta, p, dim, bool(keepdim), dtype=dtype)
    r = _vector_norm(o, x if dtype is None else o.convert(x, dtype), p, dim, keepdim)
    if tuple(r.meta.shape) != tuple(meta.shape) or r.meta.dtype != meta.dtype:
        raise Unsupported("norm whose result is not the vector norm's")
    return _out(o, out, r, x)


NORM = _norm  # torch.norm and Tensor.norm only (torch.linalg.norm takes matrix norms: not this)


# -- scans -------------------------------------------------------------------------------------------
def _scan(kind, fn):
    def h(o, x, dim, *, dtype=None, out=None):
        o.check(x)
        kw = {"dtype": dtype} if dtype is not None else {}
        meta = _meta(fn.__name__, fn, x.meta, dim, **kw)
        o.accepts(fn.__name__, fn, x, _norm_dim(dim, x.meta.dim()), **kw)  # logcumsumexp of integers raises
        x = o.convert(x, meta.dtype)  # integers and booleans sum in int64, as eager
        if x.meta.dim() == 0:
            return _out(o, out, o.fresh_copy(x), x)
        r = o.node("cumulative", [x], meta.contiguous(), kind=kind, dim=_norm_dim(dim, x.meta.dim()))
        return _out(o, out, r, x)
    return h


H["cumsum"] = _scan("sum", torch.cumsum)
H["cumprod"] = _scan("prod", torch.cumprod)
H["logcumsumexp"] = _scan("logsumexp", torch.logcumsumexp)


def _scan_indexed(kind, fn):
    """cummax/cummin: eager's torch.return_types.cummax/cummin of the running values and their indices."""
    def h(o, x, dim, *, out=None):
        o.check(x)
        if out is not None:
            raise Unsupported(f"{fn.__name__}(out=...)")
        o.accepts(fn.__name__, fn, x, _norm_dim(dim, x.meta.dim()))
        meta = _meta(fn.__name__, fn, x.meta, dim)
        kind_t = getattr(torch.return_types, fn.__name__)
        if x.meta.dim() == 0:
            return kind_t((o.fresh_copy(x), o.full((), 0, torch.int64)))
        d = _norm_dim(dim, x.meta.dim())
        values = o.node("cumulative", [x], meta.values.contiguous(), kind=kind, dim=d)
        indices = o.node("cumulative_index", [x], meta.indices.contiguous(), kind=kind, dim=d)
        return kind_t((values, indices))
    return h


H["cummax"] = _scan_indexed("max", torch.cummax)
H["cummin"] = _scan_indexed("min", torch.cummin)

torch_name.all(H)
