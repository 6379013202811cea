"""torch.take_along_dim: graph.gather after broadcasting the input and the index over the other dims."""
import torch

from ...errors import Unsupported
from ..tensor import _norm_dim
from .common import _out
from .registry import torch_name


@torch_name("take_along_dim")
def _take_along_dim(o, x, indices, dim=None, *, out=None):
    """x.gather(dim, indices) with both broadcast to one shape except along dim (without dim: of the
    flattened x, at the flattened indices). Index values are range-checked as gather's (eager raises)."""
    o.check(x, indices)
    try:
        meta = torch.take_along_dim(x.meta, indices.meta, dim)
    except (RuntimeError, IndexError) as e:
        raise Unsupported(f"take_along_dim: {e}")  # eager raises
    if dim is None:
        r = o.gather(o.reshape(x, (x.meta.numel(),)), 0, o.reshape(indices, (indices.meta.numel(),)))
        return _out(o, out, o.reshape(r, tuple(meta.shape)), x, indices)
    if x.meta.dim() != indices.meta.dim():
        raise Unsupported("take_along_dim with an index of another rank (eager raises)")
    d = _norm_dim(dim, x.meta.dim())
    xs, ins = list(x.meta.shape), list(indices.meta.shape)
    try:
        shape = list(torch.broadcast_shapes(tuple(xs[:d] + [1] + xs[d + 1:]), tuple(ins[:d] + [1] + ins[d + 1:])))
    except RuntimeError as e:
        raise Unsupported(f"take_along_dim: {e}")
    xb = o.expand(x, tuple(shape[:d] + [xs[d]] + shape[d + 1:]))
    ib = o.expand(indices, tuple(shape[:d] + [ins[d]] + shape[d + 1:]))
    return _out(o, out, o.gather(xb, d, ib), x, indices)
