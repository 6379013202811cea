"""Handlers of the indexing ops that write: scatter, scatter_add, scatter_reduce, index_add, index_copy,
index_fill, index_reduce, index_put, put, take and the _unsafe_masked_index pair. Each writing op records one
graph.scatter (GraphScatterOps.td; Scatter.cpp decomposes it) after bringing its index to the source's
shape; in-place variants write the new value with Ops.mutate."""
import math

import torch

from ...errors import Unsupported
from ..tensor import TensorVar, _norm_dim
from .common import inplace, metas
from .registry import functional, method, torch_name

H = {}  # name -> handler: torch.<name> and Tensor.<name> (registered at the end)

_INDEX_DTYPES = (torch.int32, torch.int64)
_BOOL_REDUCE = {"sum": "amax", "amax": "amax", "prod": "amin", "amin": "amin"}
_REDUCE = {"sum": "sum", "prod": "prod", "mean": "mean", "amax": "amax", "amin": "amin"}


def _meta(what, fn, *args, **kwargs):
    """fn's result on meta tensors: eager's shape and dtype rules (Unsupported where eager raises)."""
    try:
        return fn(*metas(args), **metas(kwargs))
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        raise Unsupported(f"{what}: {e}")  # eager raises


def _wrap(o, index, n):
    """Negative index values count from the end (the front ends that allow them)."""
    return o.where(o.binary("lt", index, 0), o.binary("add", index, n), index)


def scatter_node(o, x, d, index, src, reduce="none", include_self=False, *, wraps=False, checked=False):
    """graph.scatter of src (index's rank, at least its extent) at index along d into a copy of x. The index
    range is checked as gather's (eager raises out of range; the graph op writes nothing there)."""
    o.check(x, index, src)
    if index.meta.dtype not in _INDEX_DTYPES:
        raise Unsupported(f"scatter with a {index.meta.dtype} index")
    if x.meta.dim() == 0:  # eager's 1-element vector
        one = lambda t: o.reshape(t, (1,) * (1 - t.meta.dim()) + tuple(t.meta.shape))  # noqa: E731
        r = scatter_node(o, one(x), 0, one(index), one(src), reduce, include_self, wraps=wraps, checked=checked)
        return o.reshape(r, ())
    if not (index.meta.dim() == src.meta.dim() == x.meta.dim()):
        raise Unsupported("scatter with an index or src of another rank (eager raises)")
    n = x.meta.shape[d]
    if not checked:
        o.check_index_range(index, n, wraps=wraps)
    src = o.convert(src, x.meta.dtype)
    if index.meta.numel() == 0:
        return o.copy(x)
    if reduce != "none" and x.meta.dtype == torch.bool:
        # eager's bool arithmetic: a sum or amax is an or, a product or amin an and; graph.scatter combines
        # numbers, so as 0/1 bytes by amax / amin (no count to overflow)
        if reduce not in _BOOL_REDUCE:
            raise Unsupported(f"scatter {reduce} of booleans")
        # CUDA's kernels take no booleans but for a sum: eager raises there
        o.accepts(f"scatter {reduce} of booleans", torch.scatter_reduce, x, d, index, src, reduce)
        r = scatter_node(o, o.convert(x, torch.uint8), d, index, o.convert(src, torch.uint8), _BOOL_REDUCE[reduce],
                         include_self, wraps=wraps, checked=True)
        return o.convert(r, torch.bool)
    return o.node("scatter", [x, index, src], x.meta.contiguous(), reduce=reduce, dim=d,
                  include_self=bool(include_self) and reduce != "none", wraps=bool(wraps))


def _scatter_common(o, what, fn, x, dim, index, src, kind, self_too, **kw):
    meta = _meta(what, fn, x, dim, index, src, **kw)
    if isinstance(src, TensorVar):
        if src.meta.dtype != x.meta.dtype:
            raise Unsupported(f"{what} with src of another dtype (eager raises)")
        if src.meta.dim() == 0 and x.meta.dim():
            raise Unsupported(f"{what} with a 0-d src")
    else:
        src = o.full(tuple(index.meta.shape), src, x.meta.dtype)
    d = _norm_dim(dim, max(x.meta.dim(), 1))
    r = scatter_node(o, x, d, index, src, kind, self_too)
    if tuple(r.meta.shape) != tuple(meta.shape):  # eager's result has the input's shape
        raise Unsupported(f"{what}: unexpected result shape")
    return r


def _scatter(o, x, dim, index, src=None, value=None, *, reduce=None, out=None):
    if out is not None:
        raise Unsupported("scatter with out=")
    v = src if src is not None else value
    if v is None:
        raise Unsupported("scatter without src or value")
    kind = {None: "none", "add": "sum", "multiply": "prod"}.get(reduce)
    if kind is None:
        raise Unsupported(f"scatter with reduce={reduce!r} (eager raises)")
    kw = {} if reduce is None else {"reduce": reduce}
    return _scatter_common(o, "scatter", torch.scatter, x, dim, index, v, kind, kind != "none", **kw)


def _scatter_add(o, x, dim, index, src, *, out=None):
    if out is not None:
        raise Unsupported("scatter_add with out=")
    return _scatter_common(o, "scatter_add", torch.scatter_add, x, dim, index, src, "sum", True)


def _scatter_reduce(o, x, dim, index, src, reduce, *, include_self=True, out=None):
    if out is not None:
        raise Unsupported("scatter_reduce with out=")
    if reduce not in _REDUCE:
        raise Unsupported(f"scatter_reduce with reduce={reduce!r} (eager raises)")
    return _scatter_common(o, "scatter_reduce", torch.scatter_reduce, x, dim, index, src, _REDUCE[reduce],
                           include_self, reduce=reduce, include_self=include_self)


def _along(o, x, d, index, src_shape):
    """A 0-d or 1-D index along d brought to src_shape (the index varies along d only)."""
    k = index.meta.numel()
    ones = (1,) * d + (k,) + (1,) * (len(src_shape) - d - 1)
    return o.expand(o.reshape(index, ones), tuple(src_shape))


def _index_op(what, fn, reduce, wraps=False):
    """index_add / index_copy / index_reduce: source's slices along dim go to the positions index names."""
    def h(o, x, dim, index, source, *args, alpha=1, include_self=True, out=None):
        if out is not None:
            raise Unsupported(f"{what} with out=")
        kind = reduce
        kw = {"alpha": alpha} if what == "index_add" and alpha != 1 else {}
        if what == "index_reduce":
            if len(args) != 1 or args[0] not in ("prod", "mean", "amax", "amin"):
                raise Unsupported(f"index_reduce with {args!r}")
            kind, kw = args[0], {"include_self": include_self}
            args = (args[0],)
        elif args:
            raise Unsupported(f"{what} with extra arguments")
        o.check(x, index, source)
        meta = _meta(what, fn, x, dim, index, source, *args, **kw)
        if index.meta.dtype not in _INDEX_DTYPES or index.meta.dim() > 1:
            raise Unsupported(f"{what} with a {index.meta.dtype} index of rank {index.meta.dim()}")
        if source.meta.dtype != x.meta.dtype:
            raise Unsupported(f"{what} with a source of another dtype (eager raises)")
        if x.meta.dim() == 0:
            one = lambda t: o.reshape(t, (1,))  # noqa: E731
            r = h(o, one(x), 0, index, one(source), *args, alpha=alpha, include_self=include_self)
            return o.reshape(r, ())
        d = _norm_dim(dim, x.meta.dim())
        if source.meta.dim() == 0:
            source = o.reshape(source, (1,) * x.meta.dim())
        if alpha != 1 and (isinstance(alpha, bool) or not isinstance(alpha, (int, float))):
            raise Unsupported(f"{what} with alpha={alpha!r}")
        o.check_index_range(index, x.meta.shape[d], wraps=wraps)
        if what == "index_add" and x.meta.dtype != torch.bool:  # graph.index_add (GraphScatterOps.td)
            if alpha != 1 and not x.meta.dtype.is_floating_point and alpha != int(alpha):
                raise Unsupported(f"index_add of integers with alpha={alpha!r}")
            r = o.node("index_add", [x, o.reshape(index, (index.meta.numel(),)), source], x.meta.contiguous(),
                       dim=d, alpha=float(alpha))
            assert tuple(r.meta.shape) == tuple(meta.shape)
            return r
        if alpha != 1:
            raise Unsupported(f"{what} of booleans with alpha={alpha!r}")
        idx = _along(o, x, d, index, tuple(source.meta.shape))
        r = scatter_node(o, x, d, idx, source, kind, kind != "none" and (what != "index_reduce" or include_self),
                         wraps=wraps, checked=True)
        assert tuple(r.meta.shape) == tuple(meta.shape)
        return r
    return h


def _index_fill(o, x, dim, index, value):
    o.check(x, index)
    _meta("index_fill", torch.index_fill, x, dim, index, value)
    if index.meta.dtype not in _INDEX_DTYPES or index.meta.dim() > 1:
        raise Unsupported("index_fill with an index of rank > 1 or not integer")
    if isinstance(value, TensorVar):
        if value.meta.dim():
            raise Unsupported("index_fill with a value tensor of rank > 0 (eager raises)")
    elif not isinstance(value, (int, float, bool)):
        raise Unsupported(f"index_fill with a {type(value).__name__}")
    if x.meta.dim() == 0:
        return o.reshape(_index_fill(o, o.reshape(x, (1,)), 0, index, value), ())
    d = _norm_dim(dim, x.meta.dim())
    shape = tuple(x.meta.shape[:d]) + (index.meta.numel(),) + tuple(x.meta.shape[d + 1:])
    if isinstance(value, TensorVar):
        src = o.expand(o.reshape(o.convert(value, x.meta.dtype), (1,) * len(shape)), shape)
    else:
        src = o.full(shape, value, x.meta.dtype)
    return scatter_node(o, x, d, _along(o, x, d, index, shape), src, "none", wraps=True)


def _broadcast_indices(o, x, indices):
    """index_put's / x[indices]'s integer index tensors: (dims they index, their broadcast shape, the
    linear index into those dims flattened, of that shape, range-checked, whether it still wraps). Several
    index tensors are wrapped here; one is left to the scatter (its `wraps`). Indexed dims must be adjacent
    or come first (eager then moves the broadcast dims to the front)."""
    dims = [d for d, i in enumerate(indices) if i is not None]
    tensors = [indices[d] for d in dims]
    for t in tensors:
        if not isinstance(t, TensorVar) or t.meta.dtype not in _INDEX_DTYPES:
            raise Unsupported("indexing with a boolean mask or a non-integer index (a data-dependent shape)")
    if len(indices) > x.meta.dim() or not dims:
        raise Unsupported("too many or no indices (eager raises)")
    try:
        bshape = tuple(torch.broadcast_shapes(*(tuple(t.meta.shape) for t in tensors)))
    except RuntimeError:
        raise Unsupported("index tensors that do not broadcast (eager raises)")
    sizes = [x.meta.shape[d] for d in dims]
    linear = None
    for j, (t, n) in enumerate(zip(tensors, sizes)):
        o.check_index_range(t, n, wraps=True)
        t = o.convert(t, torch.int64)
        if len(tensors) > 1:
            t = _wrap(o, t, n)
        stride = math.prod(sizes[j + 1:])
        term = o.binary("mul", t, stride) if stride != 1 else t
        linear = term if linear is None else o.binary("add", linear, term)
    linear = o.expand(o.reshape(linear, (1,) * (len(bshape) - linear.meta.dim()) + tuple(linear.meta.shape)), bshape)
    return dims, bshape, linear, len(tensors) == 1


def index_put(o, x, indices, values, accumulate=False):
    """x with values written (accumulate: added) at the positions the index tensors name: the indexed dims
    flattened into one, a scatter along it at the linear index."""
    o.check(x)
    indices = list(indices)
    # None (a full slice) only comes from x[t0, :, t1] = v, checked by the caller (torch.index_put takes none)
    meta = _meta("index_put", torch.index_put, x, tuple(indices), values, accumulate) \
        if all(i is not None for i in indices) else x.meta
    if any(isinstance(i, TensorVar) and i.meta.dtype in (torch.bool, torch.uint8) for i in indices):
        return _mask_put(o, x, indices, values, accumulate)
    if x.meta.dim() == 0:
        raise Unsupported("index_put into a 0-d tensor")
    dims, bshape, linear, wraps = _broadcast_indices(o, x, indices)
    if not isinstance(values, TensorVar):
        raise Unsupported("index_put with values that are not a tensor")
    if values.meta.dtype != x.meta.dtype:
        raise Unsupported("index_put with values of another dtype (eager raises)")
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    if not adjacent:  # the indexed dims to the front (eager's result layout of x[indices])
        rest = [d for d in range(x.meta.dim()) if d not in dims]
        perm = dims + rest
        r = index_put(o, o.permute(x, perm), [indices[d] for d in dims], values, accumulate)
        inv = [perm.index(d) for d in range(len(perm))]
        return o.permute(r, inv)
    d, k = dims[0], len(dims)
    shape = tuple(x.meta.shape)
    pre, post = shape[:d], shape[d + k:]
    view_shape = pre + bshape + post
    v = values
    try:
        ok = tuple(torch.broadcast_shapes(tuple(v.meta.shape), view_shape)) == view_shape
    except RuntimeError:
        ok = False
    if not ok:
        raise Unsupported("index_put with values that do not broadcast (eager raises)")
    nb = math.prod(bshape)
    v = o.reshape(o.expand(v, view_shape), pre + (nb,) + post)
    flat = o.reshape(x, pre + (math.prod(shape[d:d + k]),) + post)
    lin = o.reshape(linear, (nb,))
    idx = o.expand(o.reshape(lin, (1,) * len(pre) + (nb,) + (1,) * len(post)), pre + (nb,) + post)
    r = scatter_node(o, flat, d, idx, v, "sum" if accumulate else "none", bool(accumulate), wraps=wraps,
                     checked=True)
    r = o.reshape(r, shape)
    assert tuple(r.meta.shape) == tuple(meta.shape)
    return r


def _mask_put(o, x, indices, values, accumulate):
    """index_put with one boolean mask over x's leading dims and values that broadcast to the dims after
    it: where(mask, values (added to x with accumulate), x). Values per selected element depend on how
    many are selected (unsupported)."""
    mask = indices[0]
    if len(indices) != 1 or mask.meta.dtype != torch.bool:
        raise Unsupported("index_put with a boolean mask among other indices")
    k = mask.meta.dim()
    if k > x.meta.dim() or tuple(mask.meta.shape) != tuple(x.meta.shape[:k]):
        raise Unsupported("index_put with a mask of another shape (eager raises)")
    rest = tuple(x.meta.shape[k:])
    v = values
    while v.meta.dim() > len(rest) and v.meta.shape[0] == 1:  # a leading 1 broadcasts to any count
        v = o.reshape(v, tuple(v.meta.shape[1:]))
    try:
        ok = v.meta.dim() <= len(rest) and tuple(torch.broadcast_shapes(tuple(v.meta.shape), rest)) == rest
    except RuntimeError:
        ok = False
    if not ok:
        raise Unsupported("index_put through a mask with a value per selected element (a count known only "
                          "at run time)")
    new = o.binary("add", x, v) if accumulate else o.expand(v, tuple(x.meta.shape))
    cond = o.reshape(mask, tuple(mask.meta.shape) + (1,) * len(rest))
    return o.where(cond, o.convert(new, x.meta.dtype), x)


def _index_put(o, x, indices, values, accumulate=False):
    return index_put(o, x, indices, values, accumulate)


def _put(o, x, index, source, accumulate=False):
    o.check(x, index, source)
    _meta("put", torch.put, x, index, source, accumulate)
    if index.meta.dtype not in _INDEX_DTYPES:
        raise Unsupported("put with a non-integer index (eager raises)")
    if index.meta.numel() == 0:
        return o.copy(x)
    if source.meta.dtype != x.meta.dtype:
        raise Unsupported("put with a source of another dtype (eager raises)")
    flat = o.reshape(x, (x.meta.numel(),))
    r = index_put(o, flat, [o.reshape(index, (index.meta.numel(),))], o.reshape(source, (source.meta.numel(),)),
                  accumulate)
    return o.reshape(r, tuple(x.meta.shape))


def _take(o, x, index, *, out=None):
    if out is not None:
        raise Unsupported("take with out=")
    o.check(x, index)
    meta = _meta("take", torch.take, x, index)
    if index.meta.dtype not in _INDEX_DTYPES:
        raise Unsupported("take with a non-integer index (eager raises)")
    if index.meta.numel() == 0:
        return o.full(tuple(meta.shape), 0, x.meta.dtype)
    flat = o.reshape(x, (x.meta.numel(),))
    return o.take_along(flat, 0, index, wraps=True)


def _stacked(o, x, indices, what):
    """The index tensors of the masked index ops as graph.masked_index takes them: int64, broadcast and
    stacked ([k, *B]) with the first indexed dim; separated index dims are moved first (eager's result
    layout; x permuted to match)."""
    dims = [d for d, i in enumerate(indices) if i is not None]
    if not dims:
        raise Unsupported(f"{what} without an index tensor")
    tensors = [o.convert(indices[d], torch.int64) for d in dims]
    try:
        bshape = tuple(torch.broadcast_shapes(*(tuple(t.meta.shape) for t in tensors)))
    except RuntimeError:
        raise Unsupported("index tensors that do not broadcast (eager raises)")
    stacked = o.cat([o.reshape(o.expand(t, bshape) if tuple(t.meta.shape) != bshape else t, (1,) + bshape)
                     for t in tensors], 0) if len(tensors) > 1 else o.reshape(tensors[0], (1,) + bshape)
    if dims == list(range(dims[0], dims[0] + len(dims))):
        return x, stacked, dims[0]
    rest = [e for e in range(x.meta.dim()) if e not in dims]
    return o.permute(x, dims + rest), stacked, 0


def _unsafe_masked_index(o, x, mask, indices, fill):
    """graph.masked_index: x[indices] where mask, else fill; indices are clamped into range."""
    o.check(x, mask)
    meta = _meta("_unsafe_masked_index", torch._unsafe_masked_index, x, mask, list(indices), fill)
    if x.meta.numel() == 0:
        raise Unsupported("_unsafe_masked_index of an empty tensor")
    indices = list(indices)
    if any(i is not None and i.meta.dtype not in _INDEX_DTYPES for i in indices):
        raise Unsupported("_unsafe_masked_index with a non-integer index")
    if isinstance(fill, TensorVar) or isinstance(fill, complex):
        raise Unsupported("_unsafe_masked_index with a fill that is not a number")
    if mask.meta.dtype != torch.bool:
        raise Unsupported("_unsafe_masked_index with a non-bool mask")
    x, stacked, d = _stacked(o, x, indices, "_unsafe_masked_index")
    return o.node("masked_index", [x, mask, stacked], meta.contiguous(), dim=d, fill=float(fill))


def _unsafe_masked_index_put_accumulate(o, x, mask, indices, values):
    """graph.masked_index_put: x with values (0 where not mask) added at the clamped indices."""
    o.check(x, mask, values)
    _meta("_unsafe_masked_index_put_accumulate", torch._unsafe_masked_index_put_accumulate, x, mask,
          list(indices), values)
    if x.meta.numel() == 0:
        return o.copy(x)
    indices = list(indices)
    if any(i is not None and i.meta.dtype not in _INDEX_DTYPES for i in indices):
        raise Unsupported("_unsafe_masked_index_put_accumulate with a non-integer index")
    if values.meta.dtype != x.meta.dtype or mask.meta.dtype != torch.bool:
        raise Unsupported("_unsafe_masked_index_put_accumulate with values of another dtype or a non-bool mask")
    dims = [d for d, i in enumerate(indices) if i is not None]
    if dims != list(range(dims[0], dims[0] + len(dims))):
        raise Unsupported("_unsafe_masked_index_put_accumulate with separated index tensors")
    _, stacked, d = _stacked(o, x, indices, "_unsafe_masked_index_put_accumulate")
    return o.node("masked_index_put", [x, mask, stacked, values], x.meta.contiguous(), dim=d)


_MASKED_SCATTER_MAX = 1 << 16  # elements: the running count is an O(n^2) masked scan (docs/op_families.md)


def _masked_scatter(o, x, mask, source):
    """graph.masked_scatter: x where ~mask; at the k-th True position (row-major, x and mask broadcast)
    source's k-th element. Source must have an element per position (else eager raises when it runs short:
    unsupported)."""
    o.check(x, mask, source)
    meta = _meta("masked_scatter", torch.masked_scatter, x, mask, source)
    if mask.meta.dtype != torch.bool or source.meta.dtype != x.meta.dtype:
        raise Unsupported("masked_scatter with a non-bool mask or a source of another dtype (eager raises)")
    shape = tuple(meta.shape)
    n = meta.numel()
    if n == 0:
        return o.full(shape, 0, x.meta.dtype)
    if source.meta.numel() < n:
        raise Unsupported("masked_scatter with fewer source elements than positions (eager raises if the mask "
                          "selects more than it holds: known only at run time)")
    if n > _MASKED_SCATTER_MAX:
        raise Unsupported(f"masked_scatter of more than {_MASKED_SCATTER_MAX} elements (its running count is "
                          "quadratic here)")
    # graph.masked_scatter (GraphScatterOps.td) of x and mask broadcast to the result's shape
    src = o.reshape(source, (source.meta.numel(),))
    return o.node("masked_scatter", [o.expand(x, shape), o.expand(mask, shape), src], meta.contiguous())


def _embedding_bag(o, input, weight, offsets=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                   mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """graph.embedding_bag: each bag's rows of weight combined (an empty bag 0). A 2-D input's rows are the
    bags (constant offsets)."""
    o.check(input, weight)
    if max_norm is not None:
        raise Unsupported("embedding_bag with max_norm (renormalizes weight in place)")
    kw = dict(offsets=metas(offsets), mode=mode, per_sample_weights=metas(per_sample_weights),
              include_last_offset=include_last_offset, padding_idx=padding_idx)
    meta = _meta("embedding_bag", torch.nn.functional.embedding_bag, input, weight, **kw)
    if input.meta.dtype not in _INDEX_DTYPES or mode not in ("sum", "mean", "max"):
        raise Unsupported(f"embedding_bag with a {input.meta.dtype} input or mode={mode!r}")
    if include_last_offset and mode != "sum":
        # eager's mean and max then take the last bag to the input's end, its sum to the last offset
        raise Unsupported(f"embedding_bag with include_last_offset and mode={mode!r}")
    num = weight.meta.shape[0]
    if padding_idx is not None and padding_idx < 0:
        padding_idx += num
    if input.meta.dim() == 2:
        bags, per = input.meta.shape
        flat = o.reshape(input, (bags * per,))
        offs = o.dense(torch.arange(0, bags * per, per) if per else torch.zeros(bags, dtype=torch.int64))
        psw = None if per_sample_weights is None else o.reshape(per_sample_weights, (bags * per,))
        last = False
    else:
        o.check(offsets)
        flat, psw, offs, last = input, per_sample_weights, offsets, bool(include_last_offset)
        # offsets[0] must be 0 (eager raises): checked before every run
        o.check_index_range(o.slice(o.convert(offs, torch.int64), 0, 0, 1, 1), 1, wraps=False)
    if flat.meta.shape[0]:
        o.check_index_range(flat, num, wraps=False)
    if psw is not None and psw.meta.dtype != weight.meta.dtype:
        raise Unsupported("embedding_bag with per_sample_weights of another dtype (eager raises)")
    operands = [weight, flat, offs] + ([psw] if psw is not None else [])
    return o.node("embedding_bag", operands, meta.contiguous(), mode=mode,
                  padding_idx=-1 if padding_idx is None else int(padding_idx), include_last_offset=last)


def _histc(o, x, bins=100, min=0, max=0, *, out=None):
    """graph.histc: counts of x's elements per equal-width bin of [min, max] (both equal: x's own min and max,
    widened by 1 where equal)."""
    o.check(x)
    meta = _meta("histc", torch.histc, x, bins, min, max)
    if out is not None:
        raise Unsupported("histc with out=")
    if not x.meta.dtype.is_floating_point and (o.tr.device.type != "cuda" or x.meta.dtype == torch.bool):
        raise Unsupported("histc of an integer tensor (eager raises)")  # (CUDA's kernel takes integers)
    if min == max and x.meta.numel() and x.meta.dtype.is_floating_point:
        # eager raises for an infinite (or NaN) range of the elements: checked before every run, as an index
        v = o.reshape(x, (x.meta.numel(),))
        lo, hi = o.reduce("amin", v, 0), o.reduce("amax", v, 0)
        finite = o.binary("logical_and", o.binary("eq", o.binary("sub", lo, lo), 0),
                          o.binary("eq", o.binary("sub", hi, hi), 0))
        o.check_index_range(o.where(finite, 0, 1), 1, wraps=False)
    for bound in (min, max):
        if isinstance(bound, bool) or not isinstance(bound, (int, float)):
            raise Unsupported(f"histc with a bound of type {type(bound).__name__}")
    # graph.histc (GraphScatterOps.td)
    return o.node("histc", [x], meta.contiguous(), bins=int(bins), min=float(min), max=float(max))


H["masked_scatter"] = _masked_scatter
H["histc"] = _histc
functional.all({"embedding_bag": _embedding_bag})


H["scatter"] = _scatter
H["scatter_add"] = _scatter_add
H["scatter_reduce"] = _scatter_reduce
H["index_add"] = _index_op("index_add", torch.index_add, "sum")
H["index_copy"] = _index_op("index_copy", torch.index_copy, "none")
H["index_reduce"] = _index_op("index_reduce", torch.index_reduce, None)
H["index_fill"] = _index_fill
H["index_put"] = _index_put
H["put"] = _put
H["take"] = _take
H["_unsafe_masked_index"] = _unsafe_masked_index
H["_unsafe_masked_index_put_accumulate"] = _unsafe_masked_index_put_accumulate


def _inplace_of(name):
    base = H[name]

    def h(o, x, *args, **kwargs):
        o.check(x)
        new = base(o, x, *args, **kwargs)
        return inplace(o, x, new, lambda s: getattr(s, name + "_")(*metas(args), **metas(kwargs)), args, kwargs)
    return h


for _n in ("scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_reduce", "index_fill",
           "index_put", "put", "masked_scatter"):
    method(_n + "_")(_inplace_of(_n))

torch_name.all(H)
