"""Handlers of F.interpolate (nearest, nearest-exact, linear, bilinear, trilinear, bicubic, area) and
F.upsample*. The linear modes and bicubic are graph.upsample (decomposed in GraphToPrim/Resample.cpp).
nearest is separable here, one spatial dim after the other, each a gather at constant source indices
(computed now, as eager's kernels compute them: UpSample.h's nearest_idx). area is adaptive average pooling.
antialias (bilinear and bicubic, 4-d) is ATen's kernel, a library call (graph.upsample2d): its windows widen with the scale; so is bilinear and
bicubic resampling of uint8 images, which ATen computes in fixed point with its own rounding."""
import torch
import torch.nn.functional as F

from ...errors import Unsupported
from ...dynamic.symbolic import meta_empty
from .registry import functional, torch_function


FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}


def _nearest_index(mode, in_size, out_size, scale):
    """The source index of each output position along one dim: eager's nearest_idx, in float32:
    floor(i * s) or floor((i + 0.5) * s) (nearest-exact), s = 1/scale or in/out."""
    dst = torch.arange(out_size)
    s = torch.tensor(1.0 / scale, dtype=torch.float32) if scale is not None and scale > 0 else \
        torch.tensor(in_size, dtype=torch.float32) / out_size
    if mode == "nearest":
        if out_size == in_size:  # eager's shortcut, whatever the scale
            idx = dst
        elif out_size == 2 * in_size:
            idx = dst // 2
        else:
            idx = torch.floor(dst.to(torch.float32) * s).to(torch.int64)
    else:
        idx = torch.floor((dst.to(torch.float32) + 0.5) * s).to(torch.int64)
    return torch.clamp(idx, max=in_size - 1)


def _resample_dim(o, x, dim, idx):
    return o.index_select(x, dim, o.dense(idx), checked=True)


def _given_scales(scale_factor, recompute_scale_factor, n):
    """The scales eager's kernel receives: the given factors (one per spatial dim) unless recomputed from
    the sizes, else None."""
    if scale_factor is None or recompute_scale_factor:
        return None
    return tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * n


@functional("interpolate")
def _interpolate(o, input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None, antialias=False):
    o.check(input)
    if antialias:
        if mode not in ("bilinear", "bicubic") or input.meta.dim() != 4:
            raise Unsupported(f"interpolate {mode!r} with antialias of a {input.meta.dim()}-d tensor")
        try:
            meta = F.interpolate(input.meta, size, scale_factor, mode, align_corners, recompute_scale_factor, True)
        except (RuntimeError, ValueError, TypeError, NotImplementedError) as e:
            raise Unsupported(f"interpolate: eager raises {type(e).__name__}: {e}") from None
        return upsample2d(o, input, mode, tuple(meta.shape[2:]), bool(align_corners),
                          _given_scales(scale_factor, recompute_scale_factor, 2), True)
    if mode not in ("nearest", "nearest-exact", "linear", "bilinear", "trilinear", "bicubic", "area"):
        raise Unsupported(f"interpolate mode {mode!r}")
    try:
        meta = F.interpolate(input.meta, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)
    except (RuntimeError, ValueError, TypeError, NotImplementedError) as e:
        raise Unsupported(f"interpolate: eager raises {type(e).__name__}: {e}") from None
    nsp = input.meta.dim() - 2
    if nsp < 1 or nsp > 3 or (mode in _DIMS and _DIMS[mode] != nsp):
        raise Unsupported(f"interpolate {mode!r} of a {input.meta.dim()}-d tensor (eager raises)")
    out_sizes = tuple(meta.shape[2:])
    if mode == "area":
        return o.adaptive_pool("avg", nsp, input, out_sizes)
    dt = input.meta.dtype
    if dt == torch.uint8 and mode in ("bilinear", "bicubic") and nsp == 2:
        return upsample2d(o, input, mode, out_sizes, bool(align_corners),
                          _given_scales(scale_factor, recompute_scale_factor, 2), False)
    if mode not in ("nearest", "nearest-exact") and dt not in FLOATS:
        raise Unsupported(f"interpolate {mode!r} of a {dt} tensor")
    given = _given_scales(scale_factor, recompute_scale_factor, nsp)
    scales = [None] * nsp if given is None else [float(v) for v in given]
    if mode in _DIMS:  # graph.upsample (Resample.cpp)
        return o.node("upsample", [input], meta_empty(tuple(meta.shape), dtype=dt, device="meta"),
                      mode="cubic" if mode == "bicubic" else "linear", output_size=out_sizes,
                      align_corners=bool(align_corners), scales=tuple(0.0 if v is None else v for v in scales))
    x = input
    for i in range(nsp):
        in_size = input.meta.shape[2 + i]
        if mode == "nearest-exact" or in_size != out_sizes[i]:
            x = _resample_dim(o, x, 2 + i, _nearest_index(mode, in_size, out_sizes[i], scales[i]))
    return o.fresh_copy(x) if x is input else x


functional("upsample")(lambda o, input, size=None, scale_factor=None, mode="nearest", align_corners=None:
    _interpolate(o, input, size, scale_factor, mode, align_corners))
functional("upsample_nearest")(lambda o, input, size=None, scale_factor=None:
    _interpolate(o, input, size, scale_factor, "nearest"))
functional("upsample_bilinear")(lambda o, input, size=None, scale_factor=None:
    _interpolate(o, input, size, scale_factor, "bilinear", True))


def upsample2d(o, input, mode, size, align_corners, scales, antialias):
    """aten.upsample_{mode}2d or aten._upsample_{mode}2d_aa (antialias) .default: one library call."""
    if input.meta.dtype not in FLOATS + (torch.uint8,):
        raise Unsupported(f"{'antialiased ' if antialias else ''}{mode} of a {input.meta.dtype} tensor")
    fn = getattr(torch.ops.aten, f"_upsample_{mode}2d_aa" if antialias else f"upsample_{mode}2d").default
    sh, sw = (None, None) if scales is None else (float(scales[0]), float(scales[1]))
    call = lambda x: fn(x, list(size), align_corners, sh, sw)  # noqa: E731
    if input.meta.dtype == torch.uint8:  # the device's kernels may take no uint8
        o.accepts(f"upsample_{mode}2d", fn, input, tuple(size), align_corners, sh, sw)
    return o.registered("upsample2d", fn, (input,),
                        {"mode": mode, "output_size": tuple(int(v) for v in size), "align_corners": align_corners,
                         "antialias": antialias, "has_scales": scales is not None, "scale_h": sh or 0.0,
                         "scale_w": sw or 0.0}, call=call)


def _aten_aa(mode):
    """aten._upsample_{mode}2d_aa, the .vec form (output_size or scale_factors) and .default."""
    def h(o, input, output_size=None, align_corners=False, scale_factors=None, scales_w=None, *, scales_h=None):
        o.check(input)
        if isinstance(scale_factors, (int, float)) or scales_h is not None or scales_w is not None:
            sh = scale_factors if isinstance(scale_factors, (int, float)) else scales_h  # .default's scales_h
            scales = None if sh is None and scales_w is None else (sh, scales_w)
            if scales is not None and None in scales:
                raise Unsupported(f"_upsample_{mode}2d_aa with one scale")
            return upsample2d(o, input, mode, tuple(output_size), bool(align_corners), scales, True)
        vec = getattr(torch.ops.aten, f"_upsample_{mode}2d_aa").vec
        try:
            meta = vec(input.meta, output_size, align_corners, scale_factors)
        except (RuntimeError, ValueError, TypeError, NotImplementedError) as e:
            raise Unsupported(f"_upsample_{mode}2d_aa: eager raises {type(e).__name__}: {e}") from None
        return upsample2d(o, input, mode, tuple(meta.shape[2:]), bool(align_corners), scale_factors, True)
    return h


for _mode in ("bilinear", "bicubic"):
    _packet = getattr(torch.ops.aten, f"_upsample_{_mode}2d_aa")
    for _f in (_packet, _packet.vec, _packet.default, getattr(torch._C._nn, f"_upsample_{_mode}2d_aa")):
        torch_function(_f)(_aten_aa(_mode))
