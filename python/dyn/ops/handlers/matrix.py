"""Handlers of diagonals and of the *_scatter ops: diagonal (a view), diagonal_copy, diag, diag_embed, diagflat,
trace, and select_scatter, slice_scatter, diagonal_scatter, as_strided_scatter. Their positions are strided
views of the input's row-major element numbers (the shapes are constants), so reads are gathers and writes
one graph.as_strided_scatter (into zeros for diag_embed, diag and diagflat)."""
import torch

from ...errors import Unsupported
from ..tensor import TensorVar, _norm_dim
from ..views import _positions
from .common import _out, metas
from .registry import linalg, torch_name


def _eager(what, fn, *args, **kwargs):
    """fn on meta tensors (eager's result shape and dtype); Unsupported where eager raises."""
    try:
        return fn(*metas(args), **metas(kwargs))
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        raise Unsupported(f"{what}: {e}")  # eager raises


def _ints(what, *vals):
    for v in vals:
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise Unsupported(f"{what} with an argument that is not an int ({type(v).__name__})")


@torch_name("diagonal")
def _diagonal(o, x, offset=0, dim1=0, dim2=1):
    """x.diagonal(...): a view (the "diagonal" step of views.py: its value gathered, writes put back)."""
    o.check(x)
    _ints("diagonal", offset, dim1, dim2)
    _eager("diagonal", torch.diagonal, x, offset, dim1, dim2)
    nd = x.meta.dim()
    return o.view_op(x, ("diagonal", offset, _norm_dim(dim1, nd), _norm_dim(dim2, nd)))


@linalg("diagonal")
def _linalg_diagonal(o, A, *, offset=0, dim1=-2, dim2=-1):
    return _diagonal(o, A, offset, dim1, dim2)


@torch_name("diagonal_copy")
def _diagonal_copy(o, x, offset=0, dim1=0, dim2=1, *, out=None):
    o.check(x)
    _ints("diagonal_copy", offset, dim1, dim2)
    meta = _eager("diagonal_copy", torch.diagonal, x, offset, dim1, dim2)
    r = o.static_take(x, _positions(x).diagonal(offset, dim1, dim2))
    assert tuple(r.meta.shape) == tuple(meta.shape)
    return _out(o, out, r, x)


def _zeros(o, shape, dtype):
    return o.full(tuple(shape), False if dtype == torch.bool else 0, dtype)


@torch_name("diag_embed")
def _diag_embed(o, x, offset=0, dim1=-2, dim2=-1):
    """x's last dim on the diagonal (offset, dim1, dim2) of new zero matrices."""
    o.check(x)
    _ints("diag_embed", offset, dim1, dim2)
    meta = _eager("diag_embed", torch.diag_embed, x, offset, dim1, dim2)
    z = _zeros(o, meta.shape, x.meta.dtype)
    pos = torch.arange(meta.numel()).reshape(tuple(meta.shape)).diagonal(offset, dim1, dim2)
    return o.static_put(z, pos, x)


@torch_name("diag")
def _diag(o, x, diagonal=0, *, out=None):
    """torch.diag: a 1-D input on the diagonal of a square matrix; a 2-D input's diagonal (a copy)."""
    o.check(x)
    _ints("diag", diagonal)
    meta = _eager("diag", torch.diag, x, diagonal)
    if x.meta.dim() == 2:
        return _out(o, out, o.static_take(x, _positions(x).diagonal(diagonal)), x)
    z = _zeros(o, meta.shape, x.meta.dtype)
    pos = torch.arange(meta.numel()).reshape(tuple(meta.shape)).diagonal(diagonal)
    return _out(o, out, o.static_put(z, pos, x), x)


@torch_name("diagflat")
def _diagflat(o, x, offset=0):
    o.check(x)
    _ints("diagflat", offset)
    _eager("diagflat", torch.diagflat, x, offset)
    return _diag(o, o.reshape(x, (x.meta.numel(),)), offset)


@torch_name("trace")
def _trace(o, x):
    """graph.trace: the sum of a matrix's diagonal (integers sum in int64, as eager)."""
    o.check(x)
    meta = _eager("trace", torch.trace, x)
    o.accepts("trace", torch.trace, x)
    return o.node("trace", [x], meta)


def _scatter_into(what, fn, positions):
    """input with src written at positions(input's element numbers, *args) (a new tensor)."""
    def h(o, x, src, *args, **kwargs):
        o.check(x, src)
        if not isinstance(src, TensorVar):
            raise Unsupported(f"{what} with a src that is not a tensor")
        meta = _eager(what, fn, x, src, *args, **kwargs)
        pos = positions(o, x, *args, **kwargs)
        if tuple(pos.shape) != tuple(src.meta.shape) or src.meta.dtype != x.meta.dtype:
            raise Unsupported(f"{what} with a src of another shape or dtype (eager raises)")
        r = o.static_put(x, pos, src)
        assert tuple(r.meta.shape) == tuple(meta.shape)
        return r
    return h


def _select_pos(o, x, dim, index):
    _ints("select_scatter", dim, index)
    return _positions(x).select(dim, index)


def _slice_pos(o, x, dim=0, start=None, end=None, step=1):
    _ints("slice_scatter", dim, start, end, step)
    d = _norm_dim(dim, x.meta.dim())
    return _positions(x)[(slice(None),) * d + (slice(start, end, step),)]


def _diagonal_pos(o, x, offset=0, dim1=0, dim2=1):
    _ints("diagonal_scatter", offset, dim1, dim2)
    return _positions(x).diagonal(offset, dim1, dim2)


def _as_strided_pos(o, x, size, stride, storage_offset=None):
    """as_strided over x's memory: where that is x's elements in row-major order from offset 0 (a
    contiguous graph input: its strides are guarded, its storage offset guarded here). A computed
    tensor's layout in eager (x.t() + 1 is column-major) is not modelled: unsupported."""
    size, stride = tuple(size), tuple(stride)
    _ints("as_strided_scatter", *size, *stride, storage_offset)
    if x.view is not None:
        raise Unsupported("as_strided_scatter of a view (its memory layout)")
    if x.input_index is not None:
        t = o.tr.input_tensors[x.input_index]
        if not t.is_contiguous() or t.storage_offset() != 0:
            raise Unsupported("as_strided_scatter of a non-contiguous input")
        o.tr.offset_guards.append((x.input_index, 0))
    else:
        raise Unsupported("as_strided_scatter of a computed tensor (dyn does not model its memory layout)")
    try:
        return torch.arange(x.meta.numel()).as_strided(size, stride, storage_offset or 0)
    except RuntimeError as e:
        raise Unsupported(f"as_strided_scatter: {e}")  # eager raises


torch_name("select_scatter")(_scatter_into("select_scatter", torch.select_scatter, _select_pos))
torch_name("slice_scatter")(_scatter_into("slice_scatter", torch.slice_scatter, _slice_pos))
torch_name("diagonal_scatter")(_scatter_into("diagonal_scatter", torch.diagonal_scatter, _diagonal_pos))
torch_name("as_strided_scatter")(_scatter_into("as_strided_scatter", torch.as_strided_scatter, _as_strided_pos))
