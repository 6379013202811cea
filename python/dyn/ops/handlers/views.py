"""Handlers of the view and shape ops that are other view ops by definition (movedim, ravel, atleast_Nd,
the split family, meshgrid, broadcast_tensors, as_strided where the input's memory is known), their
`*_copy` forms (the view, as a new tensor), the stacks built on cat, and the aliases that are
the tensor itself for real dtypes (conj, positive, real)."""
import torch

from ...errors import Unsupported
from ..tensor import TensorVar, _norm_dim
from .common import _out, _shape_args
from .shapes import _expand, _narrow, _permute, _reshape, _select, _split, _transpose, _unbind, _view
from ...dynamic.symbolic import meta_empty
from .registry import reflected, tensor_attr, torch_function, torch_name

H = {}  # name -> handler: torch.<name> and Tensor.<name> (registered at the end)


def _eager(what, fn, *args, **kwargs):
    """fn on meta tensors (shapes, the permutation a dim shuffle makes); Unsupported where eager raises."""
    try:
        return fn(*args, **kwargs)
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        raise Unsupported(f"{what}: {e}")


def _movedim(o, x, source, destination):
    o.check(x)
    nd = x.meta.dim()
    # sizes 1..nd tell where each dim went
    probe = meta_empty(tuple(range(1, nd + 1)), device="meta")
    moved = _eager("movedim", torch.movedim, probe, source, destination)
    return _permute(o, x, [n - 1 for n in moved.shape])


H["movedim"] = H["moveaxis"] = _movedim
H["ravel"] = lambda o, x: _view(o, o.contiguous(x), (-1,))  # eager's: contiguous().view(-1)


def _atleast(n):
    def one(o, x):
        o.check(x)
        nd = x.meta.dim()
        if nd >= n:
            return x  # eager returns the tensor itself
        shape = tuple(x.meta.shape)
        if n == 3 and nd == 2:
            shape = shape + (1,)
        elif n == 3 and nd == 1:
            shape = (1,) + shape + (1,)
        else:
            shape = (1,) * (n - nd) + shape
        return _view(o, x, shape)

    def h(o, *tensors):
        if len(tensors) == 1:
            t = tensors[0]
            if isinstance(t, TensorVar):
                return one(o, t)
            if isinstance(t, (tuple, list)):
                return tuple(one(o, x) for x in t)
        return tuple(one(o, x) for x in tensors)
    return h


for _n in (1, 2, 3):
    H[f"atleast_{_n}d"] = _atleast(_n)


def _broadcast_tensors(o, *tensors):
    o.check(*tensors)
    shape = _eager("broadcast_tensors", torch.broadcast_shapes, *(tuple(t.meta.shape) for t in tensors))
    return tuple(_expand(o, t, tuple(shape)) for t in tensors)


H["broadcast_tensors"] = _broadcast_tensors


def _split_with_sizes(o, x, split_sizes, dim=0):
    o.check(x)
    sizes = list(split_sizes)
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in sizes):
        raise Unsupported("split_with_sizes with sizes that are not non-negative ints")
    return _split(o, x, sizes, dim)


def _split_int(o, x, split_size, dim=0):
    o.check(x)
    if not isinstance(split_size, int) or isinstance(split_size, bool):
        raise Unsupported("unsafe_split with a split size that is not an int")
    _eager("split", torch.split, x.meta, split_size, dim)  # eager's checks (a size of 0 on a non-empty dim)
    return _split(o, x, split_size, dim)


H["split_with_sizes"] = H["unsafe_split_with_sizes"] = _split_with_sizes
H["unsafe_split"] = _split_int
H["unsafe_chunk"] = lambda o, x, chunks, dim=0: _split_chunks(o, x, chunks, dim)


def _split_chunks(o, x, chunks, dim):
    o.check(x)
    metas = _eager("chunk", torch.chunk, x.meta, chunks, dim)
    return _split(o, x, [m.shape[_norm_dim(dim, x.meta.dim())] for m in metas], dim)


def _tensor_split(o, x, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                  tensor_indices_or_sections=None):
    """torch.tensor_split: by a number of sections or at indices; every piece is a view (a narrow)."""
    o.check(x)
    arg = next((a for a in (indices_or_sections, sections, indices, tensor_indices_or_sections) if a is not None),
               None)
    if isinstance(arg, TensorVar):
        raise Unsupported("tensor_split at indices held in a tensor (eager reads their values)")
    if not (isinstance(arg, int) and not isinstance(arg, bool) or
            isinstance(arg, (tuple, list)) and all(isinstance(i, int) and not isinstance(i, bool) for i in arg)):
        raise Unsupported(f"tensor_split by {type(arg).__name__}")
    metas = _eager("tensor_split", torch.tensor_split, x.meta, arg, dim)
    d = _norm_dim(dim, x.meta.dim())
    n = x.meta.shape[d]
    if isinstance(arg, int):
        starts, s = [], 0
        for m in metas:
            starts.append(s)
            s += m.shape[d]
    else:
        starts = [0] + [min(max(i + n if i < 0 else i, 0), n) for i in arg]
    return tuple(_narrow(o, x, d, min(start, n), m.shape[d]) for start, m in zip(starts, metas))


H["tensor_split"] = _tensor_split


def _dim_split(name, dim_of):
    """hsplit/vsplit/dsplit: tensor_split along one dim (an int must divide it evenly: eager checks)."""
    def h(o, x, indices_or_sections, *more):
        o.check(x)
        args = (indices_or_sections,) + more
        if len(args) > 1:
            args = (list(args),)
        if isinstance(args[0], TensorVar):
            raise Unsupported(f"{name} at indices held in a tensor")
        _eager(name, getattr(torch, name), x.meta, *args)
        return _tensor_split(o, x, list(args[0]) if isinstance(args[0], (tuple, list)) else args[0],
                             dim_of(x.meta.dim()))
    return h


H["hsplit"] = _dim_split("hsplit", lambda nd: 1 if nd > 1 else 0)
H["vsplit"] = _dim_split("vsplit", lambda nd: 0)
H["dsplit"] = _dim_split("dsplit", lambda nd: 2)


def _meshgrid(o, *tensors, indexing=None):
    """torch.meshgrid: each tensor viewed along its own dim and expanded to the grid (views of the
    inputs); indexing="xy" swaps the first two dims of the grid."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    o.check(*tensors)
    if indexing not in (None, "ij", "xy"):
        raise Unsupported(f"meshgrid(indexing={indexing!r})")
    metas = _eager("meshgrid", torch.meshgrid, *(t.meta for t in tensors), indexing=indexing or "ij")
    k = len(tensors)
    xy = indexing == "xy" and k >= 2
    order = list(range(k))
    if xy:
        order[0], order[1] = 1, 0
    grid = tuple(metas[0].shape)
    out = []
    for i, t in enumerate(tensors):
        pos = order[i]  # the grid dim tensor i runs along
        shape = [1] * k
        shape[pos] = t.meta.numel()
        out.append(_expand(o, _view(o, t, tuple(shape)), grid))
    return tuple(out)


H["meshgrid"] = _meshgrid


def _same(name, ok=lambda x: True):
    """An op that returns its (real) argument itself: conj, resolve_conj, resolve_neg, real, positive."""
    def h(o, x):
        o.check(x)
        if x.meta.dtype.is_complex:
            raise Unsupported(f"{name} of a complex tensor")
        if not ok(x):
            raise Unsupported(f"{name} of a {x.meta.dtype} tensor (eager raises)")
        return x
    return h


for _n in ("conj", "resolve_conj", "resolve_neg", "real", "conj_physical"):
    H[_n] = _same(_n)
H["positive"] = _same("positive", lambda x: x.meta.dtype != torch.bool)


def _adjoint(o, x):
    o.check(x)
    if x.meta.dim() < 2:
        raise Unsupported("adjoint of a tensor with fewer than 2 dims (eager raises)")
    return _transpose(o, x, -2, -1)


H["adjoint"] = _adjoint


def _h_attr(o, x):
    """Tensor.H: the (conjugate) transpose of a matrix; eager raises for other ranks."""
    o.check(x)
    if x.meta.dim() not in (0, 2):
        raise Unsupported("Tensor.H of a tensor that is not a matrix (eager raises)")
    return _permute(o, x, list(reversed(range(x.meta.dim()))))


tensor_attr.all({"H": _h_attr, "mH": lambda o, x: _adjoint(o, x)})


# -- the view, as a new tensor (what functionalization's *_copy ops return): contiguous, like eager's
def _copy_of(view):
    def h(o, x, *args, out=None, **kwargs):
        r = view(o, x, *args, **kwargs)
        if isinstance(r, tuple):
            return tuple(o.fresh_copy(v) for v in r)
        return _out(o, out, o.fresh_copy(r), x)
    return h


def _squeeze(o, x, dim=None):
    o.check(x)
    return _view(o, x, tuple(_eager("squeeze", lambda: x.meta.squeeze() if dim is None else x.meta.squeeze(dim)).shape))


def _as_strided_h(o, x, size, stride, storage_offset=None):
    return o.as_strided(x, tuple(size), tuple(stride), storage_offset)


_VIEWS = {
    "expand": lambda o, x, size, implicit=False: _expand(o, x, tuple(size)),
    "alias": lambda o, x: o.view_op(x, ("view", tuple(x.meta.shape))),
    "narrow": _narrow,
    "view": lambda o, x, size: _view(o, x, tuple(size)) if not isinstance(size, torch.dtype) else _view(o, x, size),
    "permute": lambda o, x, dims: _permute(o, x, dims),
    "split_with_sizes": _split_with_sizes,
    "split": lambda o, x, split_size, dim=0: _split_int(o, x, split_size, dim) if isinstance(split_size, int)
    else _split_with_sizes(o, x, split_size, dim),
    "unbind": _unbind,
    "select": _select,
    "squeeze": _squeeze,
    "unsqueeze": lambda o, x, dim: _view(o, x, tuple(_eager("unsqueeze", x.meta.unsqueeze, dim).shape)),
    "transpose": _transpose,
    "t": lambda o, x: _permute(o, x, list(reversed(range(x.meta.dim())))) if x.meta.dim() <= 2 else
    _eager("t", torch.t, x.meta),
    "as_strided": _as_strided_h,
    "unfold": lambda o, x, dimension, size, step: o.unfold(x, dimension, size, step),
}
for _n, _v in _VIEWS.items():
    H[f"{_n}_copy"] = _copy_of(_v)
H["as_strided"] = _as_strided_h
H["unfold"] = lambda o, x, dimension, size, step: o.unfold(x, dimension, size, step)


# -- stacks: cat of the tensors made at least 1-, 2- or 3-d (new tensors)
def _stack(name, dim_of, prep):
    def h(o, tensors, *, out=None):
        tensors = list(tensors)
        o.check(*tensors)
        meta = _eager(name, getattr(torch, name), [t.meta for t in tensors])
        ts = [prep(o, t) for t in tensors]
        return _out(o, out, o.cat(ts, dim_of(ts)), tensors) if tuple(meta.shape) else o.cat(ts, 0)
    return h


def _column(o, t):
    if t.meta.dim() <= 1:
        return _reshape(o, t, (t.meta.numel(), 1))
    return t


H["hstack"] = _stack("hstack", lambda ts: 0 if ts[0].meta.dim() == 1 else 1, H["atleast_1d"])
H["vstack"] = H["row_stack"] = _stack("vstack", lambda ts: 0, H["atleast_2d"])
H["dstack"] = _stack("dstack", lambda ts: 2, H["atleast_3d"])
H["column_stack"] = _stack("column_stack", lambda ts: 1, _column)


def _sum_to_size(o, x, *size):
    """Tensor.sum_to_size: the sum over the dims broadcasting expanded (eager returns x itself when the
    size is x's, unless x is 0-d). A sum of integers or bools is int64 (the meta kernel says x's dtype;
    eager's sum promotes)."""
    o.check(x)
    shape = _shape_args(size)
    meta = _eager("sum_to_size", x.meta.sum_to_size, shape)
    if tuple(meta.shape) == tuple(x.meta.shape):
        if x.meta.dim():
            return x
        # a 0-d x is summed: a new tensor, integers and bools promoted to int64
        return o.fresh_copy(x) if meta.dtype == x.meta.dtype else o.convert(x, meta.dtype)
    lead = x.meta.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, n in enumerate(shape) if n == 1 and x.meta.shape[lead + i] != 1]
    r = o.reduce("sum", x, dims, keepdim=True)
    return o.reshape(r, tuple(meta.shape))


H["sum_to_size"] = _sum_to_size


def _fill(o, x, value):
    """torch.fill(x, value): a new tensor like x holding value (a number or a 0-d tensor)."""
    o.check(x)
    if isinstance(value, TensorVar):
        if value.meta.dim() != 0:
            raise Unsupported("fill with a tensor value that is not 0-d (eager raises)")
        return o.expand(o.convert(value, x.meta.dtype), tuple(x.meta.shape)) if x.meta.dim() else \
            o.fresh_copy(o.convert(value, x.meta.dtype))
    _eager("fill", torch.fill, x.meta, value)
    return o.full(tuple(x.meta.shape), value, x.meta.dtype)


H["fill"] = _fill


@torch_function(torch.ops.aten.slice.Tensor)
def _aten_slice(o, x, dim=0, start=None, end=None, step=1):
    o.check(x)
    nd = x.meta.dim()
    if nd == 0:
        raise Unsupported("slice of a 0-d tensor (eager raises)")
    d = _norm_dim(dim, nd)
    n = x.meta.shape[d]
    if not isinstance(step, int) or step <= 0:
        raise Unsupported("slice with a step that is not a positive int (eager raises)")
    # aten clamps the bounds (Python's slice does the same for ints)
    start = 0 if start is None else start
    end = n if end is None else end
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
        raise Unsupported("slice with bounds that are not ints")
    return o.view_op(x, ("getitem", (slice(None),) * d + (slice(start, end, step),)))


# -- reflected operators (2 - x calls x.__rsub__(2)): the operator with the operands swapped, as
# torch/_tensor.py defines each
def _reflected(op):
    def h(o, x, other):
        o.check(x)
        return op(o, x, other)
    return h


_rdiv = _reflected(lambda o, x, other: o.binary("mul", o.unary("reciprocal", x), other))
reflected.all({
    "__radd__": _reflected(lambda o, x, other: o.binary("add", other, x)),
    "__rmul__": _reflected(lambda o, x, other: o.binary("mul", other, x)),
    "__rsub__": _reflected(lambda o, x, other: o.binary("sub", other, x)),
    "__rdiv__": _rdiv,
    "__rtruediv__": _rdiv,  # torch.Tensor.__rtruediv__ is __rdiv__
    "__rpow__": _reflected(lambda o, x, other: o.binary("pow", other, x)),
    "__rmod__": _reflected(lambda o, x, other: o.binary("remainder", other, x)),
    "__rmatmul__": _reflected(lambda o, x, other: o.matmul(other, x)),
    **{f"__r{n}__": _reflected(lambda o, x, other, op=op: o.binary(op, other, x))
       for n, op in (("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                     ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift"))},
})

torch_name.all(H)
