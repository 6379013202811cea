"""Handlers of F.grid_sample, torch.grid_sampler, torch.grid_sampler_2d and torch.grid_sampler_3d: every
output point is a sum of gathers from the input at indices computed from the grid, times weights computed
from it, as eager's kernels compute them (aten/src/ATen/native/GridSampler.h): the grid unnormalized to
pixel coordinates (align_corners or not), border and reflection padding applied to the coordinates,
bilinear (trilinear) weights of the 2^d neighbours, nearest (rounded half to even), bicubic (2-d, A = -0.75,
padding applied to each of the 4x4 taps); taps outside the input read 0. float16/bfloat16 are computed in
float32 and rounded once. A grid that requires grad is not
captured (eager's backward zeroes the coordinates' gradient at the clipped and reflected edges)."""
import torch
import torch.nn.functional as F

from ...errors import Unsupported
from ..tensor import TensorVar
from .common import metas

TORCH = {}  # torch callables -> handler

_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
_A = -0.75  # the cubic convolution's coefficient (eager's)
_FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
_LOW = (torch.float16, torch.bfloat16)


class _Coords:
    """How eager's kernel computes source coordinates. The CPU's 2-d kernel is vectorized
    (GridSamplerKernel.cpp): its own unnormalize and reflect formulas, a NaN clipped to 0, no downgrade of
    non-finite coordinates. The CPU's 3-d kernel (GridSampler.h): std::max/std::min clip a NaN to size - 1,
    and safe_downgrade_to_int_range makes a coordinate that is not finite (or out of the int range) -100.
    CUDA's kernels (GridSampler.cuh): fmaxf clips a NaN to 0, then the downgrade."""

    def __init__(self, o, nd):
        self.o = o
        cuda = torch.device(o.tr.device).type == "cuda"
        self.vectorized = nd == 2 and not cuda
        self.nan_to_zero = nd == 2 or cuda
        self.downgrade = nd == 3 or cuda

    def unnormalize(self, g, size, align):
        """[-1, 1] to the centers of the corner pixels (align_corners) or to the edges of the image."""
        o = self.o
        if self.vectorized:
            if align:
                return o.binary("mul", o.binary("add", g, 1.0), (size - 1) / 2)
            return o.binary("sub", o.binary("mul", o.binary("add", g, 1.0), size / 2), 0.5)
        if align:
            return o.binary("mul", o.binary("div", o.binary("add", g, 1.0), 2.0), float(size - 1))
        return o.binary("div", o.binary("sub", o.binary("mul", o.binary("add", g, 1.0), float(size)), 1.0), 2.0)

    def clip(self, x, size):
        """min(size - 1, max(x, 0)), a NaN clipped to 0 or to size - 1 as the kernel does."""
        o = self.o
        hi = float(size - 1)
        if self.nan_to_zero:
            x = o.where(o.binary("gt", x, 0.0), x, 0.0)
        else:
            x = o.where(o.binary("lt", x, 0.0), 0.0, x)  # std::max(x, 0): x unless x < 0
        return o.where(o.binary("lt", x, hi), x, hi)  # x only where x < hi

    def reflect(self, x, size, align):
        """x reflected by the image's bounds until it lies between them (then clipped)."""
        o = self.o
        twice_low, twice_high = (0, 2 * (size - 1)) if align else (-1, 2 * size - 1)
        if twice_low == twice_high:
            return o.binary("mul", x, 0.0)
        if self.vectorized:  # |x - low| folded by the double span, then the nearer of extra and span - extra
            twice_span = float(twice_high - twice_low)
            a = o.unary("abs", x if align else o.binary("add", x, 0.5))
            flips = o.unary("trunc", o.binary("div", a, twice_span))
            extra = o.binary("sub", a, o.binary("mul", flips, twice_span))
            r = o.binary("minimum", extra, o.binary("sub", twice_span, extra))
            return r if align else o.binary("sub", r, 0.5)
        lo, span = twice_low / 2, (twice_high - twice_low) / 2
        a = o.unary("abs", o.binary("sub", x, lo))
        extra = o.fmod(a, span)
        flips = o.unary("floor", o.binary("div", a, span))
        half = o.binary("mul", o.unary("floor", o.binary("div", flips, 2.0)), 2.0)
        odd = o.binary("ne", o.binary("sub", flips, half), 0.0)
        return o.where(odd, o.binary("add", o.binary("sub", span, extra), lo), o.binary("add", extra, lo))

    def pad(self, x, size, padding, align):
        """compute_coordinates: border clips, reflection reflects then clips; zeros leaves x."""
        if padding == 1:
            return self.clip(x, size)
        if padding == 2:
            return self.clip(self.reflect(x, size, align), size)
        return x

    def source(self, g, size, padding, align):
        """grid_sampler_compute_source_index."""
        x = self.pad(self.unnormalize(g, size, align), size, padding, align)
        if not self.downgrade:
            return x
        o = self.o
        ok = o.binary("logical_and", o.binary("logical_and", o.binary("eq", x, x), o.binary("le", x, 2147483646.0)),
                      o.binary("ge", x, -2147483648.0))
        return o.where(ok, x, -100.0)


class _Sampler:
    """The gathers of one grid_sampler call: the input viewed as (N, C, P), taps read at (N, 1, Q) positions."""

    def __init__(self, o, x, sizes, q):
        self.o, self.sizes = o, sizes  # sizes: the input's spatial sizes, outermost first (D, H, W)
        n, c = x.meta.shape[:2]
        p = 1
        for s in sizes:
            p *= s
        self.flat = o.reshape(x, (n, c, p))
        self.shape = (n, c, q)

    def tap(self, coords):
        """x at the integer-valued float coordinates (outermost first), 0 where one is outside the input:
        a (N, C, Q) tensor."""
        o = self.o
        inside, index = None, None
        for c, s in zip(coords, self.sizes):
            ok = o.binary("logical_and", o.binary("ge", c, 0.0), o.binary("lt", c, float(s)))
            inside = ok if inside is None else o.binary("logical_and", inside, ok)
            i = o.convert(o.where(ok, c, 0.0), torch.int64)
            index = i if index is None else o.binary("add", o.binary("mul", index, s), i)
        v = o.gather(self.flat, 2, o.expand(index, self.shape), checked=True)
        return o.where(inside, v, o.full((), 0, v.meta.dtype))


def _cubic_coefficients(o, t):
    """get_cubic_upsample_coefficients: the weights of the taps at -1, 0, 1, 2 for the fraction t."""
    def cc1(x):  # |x| <= 1
        return o.binary("add", o.binary("mul", o.binary("mul", o.binary("sub", o.binary("mul", x, _A + 2), _A + 3),
                                                            x), x), 1.0)

    def cc2(x):  # 1 < |x| < 2
        return o.binary("sub", o.binary("mul", o.binary("add", o.binary("mul", o.binary("sub", o.binary("mul", x, _A),
                                                                                           5 * _A), x), 8 * _A), x),
                        4 * _A)
    return [cc2(o.binary("add", t, 1.0)), cc1(t), cc1(o.binary("sub", 1.0, t)), cc2(o.binary("sub", 2.0, t))]


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
    sizes = tuple(x.meta.shape[2:])
    out_sizes = tuple(grid.meta.shape[1:-1])
    if meta.numel() == 0 or 0 in sizes:
        if meta.numel():
            raise Unsupported("grid_sampler of an empty input")
        return o.full(tuple(meta.shape), 0, meta.dtype)
    if x.meta.dtype in _LOW:  # computed in float32, rounded once (closer to the exact values than eager's)
        x, grid = o.convert(x, torch.float32), o.convert(grid, torch.float32)
    n = x.meta.shape[0]
    q = 1
    for s in out_sizes:
        q *= s
    # the grid's coordinates, x (W) first in the grid, outermost (D, H) first here
    g = [o.reshape(o.slice(grid, nd + 1, k, k + 1, 1), (n, 1, q)) for k in reversed(range(nd))]
    smp = _Sampler(o, x, sizes, q)
    cs = _Coords(o, nd)
    if mode == 2:
        r = _bicubic(o, cs, smp, g, sizes, padding, align)
    else:
        src = [cs.source(c, s, padding, align) for c, s in zip(g, sizes)]
        if mode == 1:
            r = smp.tap([o.unary("round", c) for c in src])  # std::nearbyint: half to even
        else:
            r = _linear(o, smp, src)
    return o.convert(o.reshape(r, tuple(meta.shape)), meta.dtype)


def _linear(o, smp, src):
    """Bilinear / trilinear: the 2^d neighbours, weighted by the distances to the opposite ones, summed in
    eager's order (nw, ne, sw, se; t before b)."""
    lo = [o.unary("floor", c) for c in src]
    hi = [o.binary("add", f, 1.0) for f in lo]
    r = None
    nd = len(src)
    for k in range(2 ** nd):
        bits = [(k >> (nd - 1 - d)) & 1 for d in range(nd)]  # 0: the low neighbour in dim d
        coords = [hi[d] if b else lo[d] for d, b in enumerate(bits)]
        w = None
        for d, b in enumerate(bits):
            f = o.binary("sub", src[d], lo[d]) if b else o.binary("sub", hi[d], src[d])
            w = f if w is None else o.binary("mul", w, f)
        t = o.binary("mul", smp.tap(coords), w)
        r = t if r is None else o.binary("add", r, t)
    return r


def _bicubic(o, cs, smp, g, sizes, padding, align):
    """The 4x4 taps around the unnormalized coordinate (padding applied to each), interpolated along x in
    each row, then along y."""
    (gy, gx), (h, w) = g, sizes
    iy, ix = cs.unnormalize(gy, h, align), cs.unnormalize(gx, w, align)
    y0, x0 = o.unary("floor", iy), o.unary("floor", ix)
    cy = _cubic_coefficients(o, o.binary("sub", iy, y0))
    cx = _cubic_coefficients(o, o.binary("sub", ix, x0))

    def bounded(c, size):
        return o.unary("trunc", cs.pad(c, size, padding, align))
    r = None
    for i in range(4):
        yy = bounded(o.binary("add", y0, float(i - 1)), h)
        row = None
        for j in range(4):
            xx = bounded(o.binary("add", x0, float(j - 1)), w)
            t = o.binary("mul", smp.tap([yy, xx]), cx[j])
            row = t if row is None else o.binary("add", row, t)
        t = o.binary("mul", row, cy[i])
        r = t if r is None else o.binary("add", r, t)
    return r


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


TORCH[F.grid_sample] = _grid_sample
TORCH[torch.grid_sampler] = lambda o, input, grid, interpolation_mode, padding_mode, align_corners: _grid_sampler(
    o, input, grid, interpolation_mode, padding_mode, align_corners)
TORCH[torch.grid_sampler_2d] = _dims(2, torch.grid_sampler_2d)
TORCH[torch.grid_sampler_3d] = _dims(3, torch.grid_sampler_3d)
