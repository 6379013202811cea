"""Handlers of indexing: x[idx] read and assigned, gather and index_select."""
import math

import torch

from ...errors import Unsupported
from ..tensor import TensorVar
from .common import _out, _tensors
from .registry import method, torch_name


def _int_tensor_index(idx):
    """(dim, [index, ...]) when idx indexes adjacent dims with integer tensors and the others with full
    slices (x[t], x[:, t], x[b, k] with broadcasting b and k), else None."""
    items = idx if isinstance(idx, tuple) else (idx,)
    found, tensors, done = None, [], False
    for d, i in enumerate(items):
        if isinstance(i, TensorVar) and i.meta.dtype in (torch.int32, torch.int64):
            if done:  # eager moves the dims of separated index tensors to the front
                raise Unsupported("integer tensors indexing dims that are not adjacent")
            found = d if found is None else found
            tensors.append(i)
        elif isinstance(i, slice) and i == slice(None):
            done = found is not None
        else:
            if any(isinstance(j, TensorVar) and j.meta.dtype in (torch.int32, torch.int64) for j in items):
                raise Unsupported("integer tensor indexing mixed with ints, slices, None or ...")
            return None
    return None if found is None else (found, tensors)


def _take_several(o, x, d, tensors):
    """x[..., i0, i1, ...] over the adjacent dims d, d+1, ...: one gather along those dims flattened, at
    i0 * (n1 * ...) + i1 * (...) + ... (negative indices counting from the end, each checked in range);
    the broadcast shape of the indices replaces the dims."""
    k, shape = len(tensors), tuple(x.meta.shape)
    dims = shape[d:d + k]
    try:
        bshape = tuple(torch.broadcast_shapes(*(tuple(t.meta.shape) for t in tensors)))
    except RuntimeError:
        raise Unsupported("index tensors that do not broadcast (eager raises)")
    linear = None
    for j, (t, n) in enumerate(zip(tensors, dims)):
        o.check_index_range(t, n, wraps=True)
        t = o.convert(t, torch.int64)
        t = o.where(o.binary("lt", t, 0), o.binary("add", t, n), t)
        stride = math.prod(dims[j + 1:])
        term = o.binary("mul", t, stride) if stride != 1 else t
        linear = term if linear is None else o.binary("add", linear, term)
    linear = o.expand(o.reshape(linear, (1,) * (len(bshape) - linear.meta.dim()) + tuple(linear.meta.shape)), bshape)
    flat = o.reshape(x, shape[:d] + (math.prod(dims),) + shape[d + k:])
    r = o.index_select(flat, d, o.reshape(linear, (math.prod(bshape),)), checked=True)
    return o.reshape(r, shape[:d] + bshape + shape[d + k:])


def _int_list(i):
    """A list or tuple of ints (nested: of such), numpy's index array, as a tensor; else None."""
    if not isinstance(i, (list, tuple)) or not i:
        return None
    try:
        t = torch.tensor(i)
    except (TypeError, ValueError, RuntimeError):
        return None
    return t if t.dtype == torch.int64 else None


def _literal_arrays(o, idx):
    """Lists and tuples of ints inside an index tuple (x[(0, 2), 1], x[:, [0, 3]]) and a list index (x[[0, 2]])
    are integer index arrays (numpy's rule): constant tensors."""
    if isinstance(idx, list):
        t = _int_list(idx)
        return idx if t is None else o.dense(t)
    if isinstance(idx, tuple):
        out = []
        for i in idx:
            t = _int_list(i)
            out.append(i if t is None else o.dense(t))
        return tuple(out)
    return idx


def _is_index_array(i):
    return isinstance(i, TensorVar) and i.meta.dtype in (torch.int32, torch.int64)


def _basic_first(o, x, idx, permute=True):
    """x[idx] with integer index arrays among ints, slices, None and ... (x[..., t], x[None, t], x[t, 1:3],
    x[1, :, t], x[t, :, u]): (x', idx') where x' is x with the basic part applied (ints select, slices
    narrow, None adds a size-1 dim: a view) and idx' only the index arrays and full slices, with the same
    result (torch's rules: the basic items act on their own dims first, ints included). With permute, index
    arrays on dims that are not adjacent come first: x' is then permuted so that they are."""
    items = list(idx) if isinstance(idx, tuple) else [idx]
    if not any(_is_index_array(i) for i in items):
        return x, idx
    if any(isinstance(i, TensorVar) and not _is_index_array(i) for i in items):
        return x, idx  # a boolean mask: the callers' rules
    real = sum(1 for i in items if i is not None and i is not Ellipsis)
    full = []
    for i in items:
        full += [slice(None)] * (x.meta.dim() - real) if i is Ellipsis else [i]
    if any(not (_is_index_array(i) or i is None or isinstance(i, (slice, int))) or isinstance(i, bool)
           for i in full):
        return x, idx  # anything else: the callers' rules
    basic = tuple(slice(None) if _is_index_array(i) else i for i in full)
    if any(i is None or i != slice(None) for i in basic):
        x = o.view_op(x, ("getitem", basic))
    rest = [slice(None) if i is None else (i if _is_index_array(i) else slice(None)) for i in full
            if not isinstance(i, int)]
    rest += [slice(None)] * (x.meta.dim() - len(rest))
    dims = [d for d, i in enumerate(rest) if _is_index_array(i)]
    if permute and dims != list(range(dims[0], dims[0] + len(dims))):  # separated: their dims go first
        others = [d for d in range(x.meta.dim()) if d not in dims]
        x = o.permute(x, dims + others)
        rest = [rest[d] for d in dims] + [slice(None)] * len(others)
    while rest and not _is_index_array(rest[-1]):
        rest.pop()
    return x, tuple(rest)


@method("__getitem__")
def getitem(o, x, idx):
    """x[idx]: basic indexing is a view; integer tensors (after the basic items are applied: _basic_first)
    gather a copy."""
    idx = _literal_arrays(o, idx)
    x, idx = _basic_first(o, x, idx)
    found = _int_tensor_index(idx)
    if found is not None:
        o.check(x)
        d, tensors = found
        if d + len(tensors) > x.meta.dim():
            raise Unsupported("too many indices")
        if len(tensors) == 1:
            return o.take_along(x, d, tensors[0], wraps=True)
        return _take_several(o, x, d, tensors)
    return o.view_op(x, ("getitem", idx))


@torch_name("gather")
def _gather(o, x, dim, index, *, sparse_grad=False, out=None):
    return _out(o, out, o.gather(x, dim, index), x, index)


@torch_name("index_select")
def _index_select(o, x, dim, index, *, out=None):
    return _out(o, out, o.index_select(x, dim, index), x, index)


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


def _index_setitem(o, x, idx, value):
    """x[t0, :, t1] = value with integer index tensors (and full slices): index_put, written in place."""
    from .scatter import index_put  # scatter's handlers build on these; imported here to keep them apart
    o.check(x)
    x, idx = _basic_first(o, x, idx, permute=False)  # x[1, t] = v: index_put on the view x[1]
    items = idx if isinstance(idx, tuple) else (idx,)
    for i in items:
        if not (isinstance(i, TensorVar) and i.meta.dtype in (torch.int32, torch.int64) or
                isinstance(i, slice) and i == slice(None)):
            raise Unsupported("index assignment with a tensor index mixed with a boolean mask")
    indices = [i if isinstance(i, TensorVar) else None for i in items]
    if isinstance(value, TensorVar):
        v = o.convert(value, x.meta.dtype)
    elif isinstance(value, (int, float, bool)):
        if not x.meta.dtype.is_floating_point and not math.isfinite(value):
            raise Unsupported(f"{value} assigned into an integer tensor")
        v = o.full((), value, x.meta.dtype)
    else:
        raise Unsupported(f"index assignment of a {type(value).__name__}")
    # eager casts value to x's dtype; index_put checks that it broadcasts to the indexed shape
    new = index_put(o, x, indices, v, False)
    o.mutate(x, new, (value,) + tuple(i for i in items if isinstance(i, TensorVar)))


def setitem(o, x, idx, value):
    """x[idx] = value: copies value into the view x[idx]."""
    if isinstance(idx, TensorVar) and idx.meta.dtype == torch.bool:
        return _mask_setitem(o, x, idx, value)
    idx = _literal_arrays(o, idx)
    if _tensors(idx):
        return _index_setitem(o, x, idx, value)
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
