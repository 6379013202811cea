"""Handlers of F.grid_sample, torch.grid_sampler, torch.grid_sampler_2d and torch.grid_sampler_3d: one
graph.grid_sampler (GraphOps.td), decomposed by GraphToPrim/GridSample.cpp as eager's kernels compute it. Its
`cuda_rules` picks the coordinate arithmetic of eager's CUDA kernels (else the CPU's: they differ for NaN and
non-finite coordinates). A grid that requires grad is not captured (eager's backward zeroes the
coordinates' gradient at the clipped and reflected edges)."""
import torch
import torch.nn.functional as F

from ...errors import Unsupported
from ..tensor import TensorVar
from .common import metas
from .registry import torch_function


_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
_FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def _grid_sampler(o, x, grid, mode, padding, align):
    o.check(x, grid)
    nd = x.meta.dim() - 2
    if nd not in (2, 3) or grid.meta.dim() != nd + 2:
        raise Unsupported("grid_sampler of other ranks (eager raises)")
    fn = torch.grid_sampler_2d if nd == 2 else torch.grid_sampler_3d
    for v in (mode, padding):
        if isinstance(v, bool) or not isinstance(v, int):
            raise Unsupported(f"grid_sampler with mode or padding_mode {v!r}")
    if not isinstance(align, bool):
        raise Unsupported(f"grid_sampler with align_corners={align!r}")
    try:
        meta = fn(*metas((x, grid)), mode, padding, align)
    except (RuntimeError, TypeError, ValueError, NotImplementedError) as e:
        raise Unsupported(f"grid_sampler: {e}")  # eager raises
    if x.meta.dtype not in _FLOATS or grid.meta.dtype != x.meta.dtype:
        raise Unsupported(f"grid_sampler of {x.meta.dtype} and {grid.meta.dtype} (eager raises)")
    if mode not in (0, 1, 2) or padding not in (0, 1, 2) or (mode == 2 and nd == 3):
        raise Unsupported(f"grid_sampler with mode {mode} and padding {padding} (eager raises)")
    if o.needs_grad(grid):
        raise Unsupported("grid_sampler of a grid that requires grad")
    if meta.numel() == 0 or 0 in tuple(x.meta.shape[2:]):
        if meta.numel():
            raise Unsupported("grid_sampler of an empty input")
        return o.full(tuple(meta.shape), 0, meta.dtype)
    cuda = torch.device(o.tr.device).type == "cuda"
    return o.node("grid_sampler", [x, grid], meta.contiguous(), mode=mode, padding=padding, align_corners=align,
                  cuda_rules=cuda)


@torch_function(F.grid_sample)
def _grid_sample(o, input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in _MODES or padding_mode not in _PADDINGS:
        raise Unsupported(f"grid_sample with mode={mode!r}, padding_mode={padding_mode!r} (eager raises)")
    if isinstance(input, TensorVar) and mode == "bicubic" and input.meta.dim() != 4:
        raise Unsupported("grid_sample bicubic of a tensor that is not 4-d (eager raises)")
    return _grid_sampler(o, input, grid, _MODES[mode], _PADDINGS[padding_mode], bool(align_corners))


def _dims(nd, fn):
    def h(o, input, grid, interpolation_mode, padding_mode, align_corners):
        if not isinstance(input, TensorVar) or input.meta.dim() != nd + 2:
            raise Unsupported(f"{fn.__name__} of a tensor that is not {nd + 2}-d (eager raises)")
        return _grid_sampler(o, input, grid, interpolation_mode, padding_mode, align_corners)
    return h


torch_function(torch.grid_sampler)(
    lambda o, input, grid, interpolation_mode, padding_mode, align_corners: _grid_sampler(
        o, input, grid, interpolation_mode, padding_mode, align_corners))
torch_function(torch.grid_sampler_2d)(_dims(2, torch.grid_sampler_2d))
torch_function(torch.grid_sampler_3d)(_dims(3, torch.grid_sampler_3d))
