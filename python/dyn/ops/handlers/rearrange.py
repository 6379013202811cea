"""Handlers of the ops that copy elements to new positions: flip (fliplr, flipud), roll, repeat (tile,
repeat_interleave with an int count). Each records graph.flip / graph.roll / graph.repeat; Rearrange.cpp
decomposes them into gathers, slices and broadcasts."""
import math

import torch

from ...errors import Unsupported
from ..tensor import TensorVar, _norm_dim
from .common import _out, _shape_args
from .registry import method, torch_name

H = {}  # name -> handler: torch.<name> and Tensor.<name> (registered at the end; others build on it)


def _ints(what, vals):
    if isinstance(vals, (int, TensorVar)) and not isinstance(vals, bool):
        vals = (vals,)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        raise Unsupported(f"{what} with arguments that are not ints")
    return tuple(vals)


def _flip(o, x, *dims, out=None, **kw):
    o.check(x)
    if "dims" in kw:
        dims = (kw.pop("dims"),)
    if kw or not dims:
        raise Unsupported(f"flip with arguments {sorted(kw)}")
    dims = _ints("flip", dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims)
    try:
        meta = torch.flip(x.meta, dims)
    except (RuntimeError, IndexError) as e:
        raise Unsupported(f"flip: {e}")  # eager raises (repeated or out-of-range dims)
    nd = [_norm_dim(d, x.meta.dim()) for d in dims] if x.meta.dim() else []
    if not nd or x.meta.numel() == 0:
        return _out(o, out, o.fresh_copy(x), x)
    return _out(o, out, o.node("flip", [x], meta.contiguous(), dims=sorted(nd)), x)


def _flip_dim(d, min_rank):
    def h(o, x):
        o.check(x)
        if x.meta.dim() < min_rank:
            raise Unsupported(f"flip{'lr' if d else 'ud'} of a tensor with fewer than {min_rank} dims (eager raises)")
        return _flip(o, x, d)
    return h


H["flip"] = _flip
H["fliplr"] = _flip_dim(1, 2)
H["flipud"] = _flip_dim(0, 1)


def _roll(o, x, shifts, dims=None):
    o.check(x)
    shifts = _ints("roll", shifts)
    try:
        meta = torch.roll(x.meta, shifts, dims)
    except (RuntimeError, IndexError) as e:
        raise Unsupported(f"roll: {e}")
    if dims is None:  # the flattened tensor rolls, then takes the shape back
        if len(shifts) != 1:
            raise Unsupported("roll without dims and several shifts (eager raises)")
        flat = o.reshape(x, (x.meta.numel(),))
        return o.reshape(_roll(o, flat, shifts, (0,)), tuple(x.meta.shape))
    dims = _ints("roll", dims)
    if x.meta.dim() == 0 or x.meta.numel() == 0:
        return o.fresh_copy(x)
    dims = [_norm_dim(d, x.meta.dim()) for d in dims]
    return o.node("roll", [x], meta.contiguous(), shifts=list(shifts), dims=dims)


H["roll"] = _roll


def _repeat_op(o, x, repeats):
    repeats = tuple(int(r) for r in repeats)
    meta = x.meta.repeat(repeats)
    if all(r == 1 for r in repeats) and len(repeats) == x.meta.dim():
        return o.fresh_copy(x)
    return o.node("repeat", [x], meta.contiguous(), repeats=list(repeats))


@method("repeat")
def _repeat(o, x, *sizes):
    o.check(x)
    sizes = _ints("repeat", _shape_args(sizes))
    try:
        x.meta.repeat(sizes)
    except RuntimeError as e:
        raise Unsupported(f"repeat: {e}")  # fewer counts than dims, negative counts: eager raises
    return _repeat_op(o, x, sizes)


def _tile(o, x, dims):
    o.check(x)
    dims = _ints("tile", dims)
    if len(dims) < x.meta.dim():  # tile pads the counts with leading ones
        dims = (1,) * (x.meta.dim() - len(dims)) + dims
    return _repeat(o, x, *dims)


def _repeat_interleave(o, x, repeats=None, dim=None, *, output_size=None):
    """x's elements each repeated `repeats` times along dim (a flattened x without dim): x with a new dim
    of `repeats` after dim, merged into it. A tensor of counts gives a data-dependent shape: not captured."""
    if not isinstance(x, TensorVar):
        raise Unsupported("repeat_interleave of counts only (a data-dependent shape)")
    if isinstance(repeats, TensorVar) or not isinstance(repeats, int) or isinstance(repeats, bool):
        raise Unsupported("repeat_interleave with a tensor of counts")
    if repeats < 0:
        raise Unsupported("repeat_interleave with a negative count (eager raises)")
    if dim is None:
        x, d = o.reshape(x, (x.meta.numel(),)), 0
    else:
        d = _norm_dim(dim, x.meta.dim())
        if x.meta.dim() == 0:
            x = o.reshape(x, (1,))
    shape = tuple(x.meta.shape)
    if output_size is not None and output_size != shape[d] * repeats:
        raise Unsupported("repeat_interleave with an output_size that is not the result's (eager raises)")
    wide = o.reshape(x, shape[:d + 1] + (1,) + shape[d + 1:])
    counts = [1] * wide.meta.dim()
    counts[d + 1] = repeats
    r = _repeat_op(o, wide, counts)
    return o.reshape(r, shape[:d] + (shape[d] * repeats,) + shape[d + 1:])


H["tile"] = _tile
H["repeat_interleave"] = _repeat_interleave

torch_name.all(H)
