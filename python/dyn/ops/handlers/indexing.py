"""Handlers of indexing: x[idx] read and assigned, gather and index_select."""
import math

import torch

from ...errors import Unsupported
from ..tensor import TensorVar
from .common import _out, _tensors

H = {}  # name -> handler


def _int_tensor_index(idx):
    """(dim, index) when idx indexes one dim with an integer tensor (x[t], x[:, t]), else None."""
    items = idx if isinstance(idx, tuple) else (idx,)
    found = None
    for d, i in enumerate(items):
        if isinstance(i, TensorVar) and i.meta.dtype in (torch.int32, torch.int64):
            if found is not None:
                raise Unsupported("indexing with several integer tensors")
            found = (d, i)
        elif not (isinstance(i, slice) and i == slice(None)):
            if any(isinstance(j, TensorVar) and j.meta.dtype in (torch.int32, torch.int64) for j in items):
                raise Unsupported("integer tensor indexing mixed with ints, slices, None or ...")
            return None
    return found


def getitem(o, x, idx):
    """x[idx]: basic indexing is a view; an integer tensor on one dim (x[t], x[:, t]) gathers a copy."""
    found = _int_tensor_index(idx)
    if found is not None:
        o.check(x)
        d, t = found
        if d >= x.meta.dim():
            raise Unsupported("too many indices")
        return o.take_along(x, d, t, wraps=True)
    return o.view_op(x, ("getitem", idx))


def _gather(o, x, dim, index, *, sparse_grad=False, out=None):
    return _out(o, out, o.gather(x, dim, index), x, index)


def _index_select(o, x, dim, index, *, out=None):
    return _out(o, out, o.index_select(x, dim, index), x, index)


H["gather"] = _gather
H["index_select"] = _index_select


def _mask_setitem(o, x, mask, value):
    """x[mask] = value with a boolean mask over x's leading dims: x becomes where(mask, value, x), written
    in place. value is a number or a tensor that broadcasts to x's dims after the mask's (one that has a
    value per selected element depends on how many are selected: unsupported)."""
    o.check(x)
    k = mask.meta.dim()
    if k > x.meta.dim() or tuple(mask.meta.shape) != tuple(x.meta.shape[:k]):
        raise Unsupported(f"boolean mask of shape {tuple(mask.meta.shape)} for a tensor of shape "
                          f"{tuple(x.meta.shape)} (eager raises)")
    rest = tuple(x.meta.shape[k:])
    if isinstance(value, TensorVar):
        v = value
        while v.meta.dim() > len(rest) and v.meta.shape[0] == 1:  # a leading 1 broadcasts to any count
            v = o.reshape(v, tuple(v.meta.shape[1:]))
        if v.meta.dim() > len(rest):
            raise Unsupported("boolean-mask assignment of a value per selected element (a count known "
                              "only at run time)")
        try:
            ok = torch.broadcast_shapes(tuple(v.meta.shape), rest) == rest
        except RuntimeError:
            ok = False
        if not ok:
            raise Unsupported(f"boolean-mask assignment of a value of shape {tuple(value.meta.shape)} "
                              f"(eager raises)")
        if value.meta.dim() and value.meta.dtype != x.meta.dtype:
            raise Unsupported("boolean-mask assignment of a tensor of another dtype (eager raises)")
        o.check_inplace(x, lambda s: s.__setitem__(mask.meta, value.meta))
        v = o.convert(v, x.meta.dtype)
    elif isinstance(value, (int, float, bool)):
        o.check_inplace(x, lambda s: s.__setitem__(mask.meta, value))
        if not x.meta.dtype.is_floating_point and not math.isfinite(value):
            raise Unsupported(f"{value} assigned into an integer tensor")
        v = o.const(value, x.meta.dtype)
    else:
        raise Unsupported(f"index assignment of a {type(value).__name__}")
    cond = o.reshape(mask, tuple(mask.meta.shape) + (1,) * len(rest))
    # a 0-d value is read before anything is written (eager too); a larger one is read while writing
    o.mutate(x, o.where(cond, v, x), (value, mask) if isinstance(value, TensorVar) and value.meta.dim() else
             (mask,))


def setitem(o, x, idx, value):
    """x[idx] = value: copies value into the view x[idx]."""
    if isinstance(idx, TensorVar) and idx.meta.dtype == torch.bool:
        return _mask_setitem(o, x, idx, value)
    if _tensors(idx):
        raise Unsupported("index assignment with a tensor index")
    view = getitem(o, x, idx)
    shape, dtype = tuple(view.meta.shape), view.meta.dtype
    if isinstance(value, TensorVar) and (value is view or (
            o._storage_of(value) is not None and o._storage_of(value) is o._storage_of(view)
            and o._layout(value) is not None and o._layout(value) == o._layout(view))):
        return  # the same memory (x[i] += 1 stores x[i] back): nothing to copy
    if isinstance(value, TensorVar):
        v = value
        while v.meta.dim() > len(shape) and v.meta.shape[0] == 1:  # eager drops leading 1-dims
            v = o.reshape(v, tuple(v.meta.shape[1:]))
        o.check_inplace(view, lambda s: s.copy_(v.meta))
        new = o.copy(o.expand(o.convert(v, dtype), shape))
    elif isinstance(value, (int, float, bool)):
        o.check_inplace(view, lambda s: s.fill_(value))
        new = o.full(shape, value, dtype)
    else:
        raise Unsupported(f"index assignment of a {type(value).__name__}")
    o.mutate(view, new, (value,))
