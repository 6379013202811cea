"""Handlers of distances and small nn functions that are compositions of graph ops: pairwise_distance, pdist,
cdist, cosine_similarity, triplet_margin_loss, bilinear, glu, prelu, softmin, local_response_norm and the
pixel/channel shuffles (reshapes and a permutation). Each is written as eager's kernel computes it
(aten/src/ATen/native/Distance.cpp, Activation.cpp, PixelShuffle.cpp, torch/nn/functional.py)."""
import math

import torch
import torch.nn.functional as F

from ...errors import Unsupported
from ..tensor import TensorVar, _norm_dim
from .reductions import H as REDUCTIONS
from ...dynamic.symbolic import meta_empty
from .registry import functional, method, torch_function


FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _meta(what, fn, *args, **kwargs):
    args = [a.meta if isinstance(a, TensorVar) else a for a in args]
    kwargs = {k: v.meta if isinstance(v, TensorVar) else v for k, v in kwargs.items()}
    try:
        return fn(*args, **kwargs)
    except (RuntimeError, ValueError, IndexError, TypeError) as e:
        raise Unsupported(f"{what}: eager raises {type(e).__name__}: {e}") from None


def _floats(o, what, *ts):
    o.check(*ts)
    for t in ts:
        if t.meta.dtype not in FLOATS:
            raise Unsupported(f"{what} of a {t.meta.dtype} tensor")


def pnorm(o, x, p, dim, keepdim=False):
    """at::norm(x, p, dim) of a float tensor: graph.vector_norm (ATen's norm is linalg_vector_norm's kernel:
    max |x| (inf), min |x| (-inf), the number of non-zeros (0), (sum |x|^p)^(1/p) otherwise)."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p != p:
        raise Unsupported(f"norm with p={p!r}")
    return REDUCTIONS["vector_norm"](o, x, p, dim, keepdim)


def _order(p, what, count):
    """p as the distance ops take it: a non-negative number; an infinite one over no elements is not
    defined."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p != p or p < 0:
        raise Unsupported(f"{what} with p={p!r}")
    if p == float("inf") and count == 0:
        raise Unsupported(f"{what}: an infinite-order norm over no elements")


@functional("pairwise_distance")
def _pairwise_distance(o, x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """norm(x1 - x2 + eps, p) over the last dim of the broadcast shape (integers: their difference in
    their type, + eps makes it float, as ATen's)."""
    o.check(x1, x2)
    meta = _meta("pairwise_distance", F.pairwise_distance, x1, x2, p, eps, keepdim)
    nd = max(x1.meta.dim(), x2.meta.dim())
    if nd == 0:
        raise Unsupported("pairwise_distance of 0-d tensors")
    d = o.binary("add", o.binary("sub", x1, x2), float(eps))
    r = pnorm(o, d, p, nd - 1, bool(keepdim))
    return o.reshape(o.convert(r, meta.dtype), tuple(meta.shape))


@functional("pdist")
def _pdist(o, input, p=2.0):
    """The p-norm distances between rows i < j of an [N, M] input, in row-major order of (i, j)."""
    _floats(o, "pdist", input)
    meta = _meta("pdist", F.pdist, input, p)
    if input.meta.dim() != 2:
        raise Unsupported("pdist of a tensor that is not 2-D (eager raises)")
    if meta.numel() == 0:
        return o.full(tuple(meta.shape), 0.0, meta.dtype)
    _order(p, "pdist", input.meta.shape[1])
    return o.node("pdist", [input], meta, p=float(p))


@torch_function(torch.cdist)
def _cdist(o, x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of [*, P, M] and [*, R, M] (batch dims broadcast), computed
    directly (eager's p = 2 matmul form, for more than 25 rows, rounds differently, within tolerance)."""
    _floats(o, "cdist", x1, x2)
    meta = _meta("cdist", torch.cdist, x1, x2, p, compute_mode)
    if x1.meta.dim() < 2 or x2.meta.dim() < 2 or p < 0:
        raise Unsupported("cdist of tensors with fewer than 2 dims, or p < 0 (eager raises)")
    _order(p, "cdist", x1.meta.shape[-1])
    batch = tuple(meta.shape[:-2])
    a = o.expand(o.convert(x1, meta.dtype), batch + tuple(x1.meta.shape[-2:]))
    b = o.expand(o.convert(x2, meta.dtype), batch + tuple(x2.meta.shape[-2:]))
    return o.node("cdist", [a, b], meta, p=float(p))


@torch_function(torch.dist)
@method("dist")
def _dist(o, input, other, p=2):
    """torch.dist: the p-norm of input - other over all elements."""
    _floats(o, "dist", input, other)
    meta = _meta("dist", torch.dist, input, other, p)
    shape = tuple(torch.broadcast_shapes(tuple(input.meta.shape), tuple(other.meta.shape)))
    _order(p, "dist", math.prod(shape))
    a, b = (o.expand(o.convert(t, meta.dtype), shape) for t in (input, other))
    return o.node("dist", [a, b], meta, p=float(p))


@functional("cosine_similarity")
def _cosine_similarity(o, x1, x2, dim=1, eps=1e-8):
    """sum((x1 / max(|x1|, eps)) * (x2 / max(|x2|, eps))) over dim, inputs broadcast first."""
    _floats(o, "cosine_similarity", x1, x2)
    meta = _meta("cosine_similarity", F.cosine_similarity, x1, x2, dim, eps)
    shape = tuple(torch.broadcast_shapes(tuple(x1.meta.shape), tuple(x2.meta.shape)))
    dt = meta.dtype
    a, b = (o.expand(o.convert(t, dt), shape) for t in (x1, x2))
    d = _norm_dim(dim, len(shape))
    na = o.clamp(pnorm(o, a, 2, d, True), float(eps), None)
    nb = o.clamp(pnorm(o, b, 2, d, True), float(eps), None)
    r = o.reduce("sum", o.binary("mul", o.binary("div", a, na), o.binary("div", b, nb)), d)
    return o.reshape(r, tuple(meta.shape))


@functional("triplet_margin_loss")
def _triplet_margin(o, anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                    reduce=None, reduction="mean"):
    """max(margin + d(a, p) - d(a, n), 0), d the pairwise distance (swap: min(d(a, n), d(p, n)))."""
    o.check(anchor, positive, negative)  # integers: through pairwise_distance, as ATen's
    if size_average is not None or reduce is not None or reduction not in ("none", "mean", "sum"):
        raise Unsupported("triplet_margin_loss with legacy arguments or an unknown reduction")
    meta = _meta("triplet_margin_loss", F.triplet_margin_loss, anchor, positive, negative, margin, p, eps, swap,
                 reduction=reduction)
    d_pos = _pairwise_distance(o, anchor, positive, p, eps)
    d_neg = _pairwise_distance(o, anchor, negative, p, eps)
    if swap:
        d_neg = o.binary("minimum", d_neg, _pairwise_distance(o, positive, negative, p, eps))
    r = o.clamp(o.binary("sub", o.binary("add", d_pos, float(margin)), d_neg), 0.0, None)
    if reduction != "none":
        r = o.reduce("mean" if reduction == "mean" else "sum", r)
    return o.reshape(o.convert(r, meta.dtype), tuple(meta.shape))


@functional("bilinear")
def _bilinear(o, input1, input2, weight, bias=None):
    """graph.bilinear: y[b, k] = sum_ij x1[b, i] W[k, i, j] x2[b, j] + bias[k], the batch dims flattened."""
    o.check(input1, input2, weight)
    if any(t.meta.dtype == torch.bool for t in (input1, input2, weight)):
        raise Unsupported("bilinear of boolean tensors")  # integers: integer GEMMs, as ATen's
    meta = _meta("bilinear", F.bilinear, input1, input2, weight, bias)
    if input1.meta.dim() < 1 or weight.meta.dim() != 3 or any(
            t.meta.dtype != input1.meta.dtype for t in (input2, weight) + ((bias,) if bias is not None else ())):
        raise Unsupported("bilinear with operands of other dtypes or ranks")
    out, in1, in2 = weight.meta.shape
    nb = math.prod(input1.meta.shape[:-1])
    a = o.reshape(input1, (nb, in1))
    b = o.reshape(input2, (nb, in2))
    operands = [a, b, weight] + ([o.reshape(bias, (out,))] if bias is not None else [])
    r = o.node("bilinear", operands, meta_empty((nb, out), dtype=meta.dtype, device="meta"))
    return o.reshape(r, tuple(meta.shape))


@functional("prelu")
def _prelu(o, input, weight):
    """graph.prelu: x > 0 ? x : w x, w one value or one per channel (dim 1)."""
    _floats(o, "prelu", input, weight)
    meta = _meta("prelu", F.prelu, input, weight)
    if weight.meta.dtype != input.meta.dtype:
        raise Unsupported("prelu with a weight of another dtype")
    o.accepts("prelu", F.prelu, input, weight)
    return o.node("prelu", [input, weight], meta.contiguous())


@functional("softmin")
def _softmin(o, input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along dim (eager negates before a dtype conversion)."""
    o.check(input)
    return o.softmax("softmax", o.unary("neg", input), dim, dtype)


@functional("local_response_norm")
def _local_response_norm(o, input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * avg of x^2 over `size` neighbouring channels)^beta, as torch.nn.functional's: the
    average an avg_pool over the zero-padded channel dim."""
    o.check(input)
    if input.meta.dtype == torch.bool or input.meta.dtype.is_complex:
        raise Unsupported(f"local_response_norm of a {input.meta.dtype} tensor")  # integers: as eager's (an integer avg_pool)
    nd = input.meta.dim()
    if nd < 3 or not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise Unsupported("local_response_norm of fewer than 3 dims or with a bad size (eager raises)")
    div = o.binary("mul", input, input)
    if nd == 3:
        div = o.reshape(div, (input.meta.shape[0], 1) + tuple(input.meta.shape[1:]))
        div = o.pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = o.avg_pool(2, div, (size, 1), 1)
        div = o.reshape(div, tuple(input.meta.shape))
    else:
        s = tuple(input.meta.shape)
        rest = 1
        for v in s[2:]:
            rest *= v
        div = o.reshape(div, (s[0], 1, s[1], s[2], rest // s[2]))
        div = o.pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = o.avg_pool(3, div, (size, 1, 1), 1)
        div = o.reshape(div, s)
    div = o.binary("pow", o.binary("add", o.binary("mul", div, float(alpha)), float(k)), float(beta))
    return o.binary("div", input, div)


def _int_arg(what, v):
    if not isinstance(v, int) or isinstance(v, bool):
        raise Unsupported(f"{what} that is not an int")
    return v


@torch_function(torch.pixel_shuffle)
@functional("pixel_shuffle")
def _pixel_shuffle(o, input, upscale_factor):
    """[*, C r^2, H, W] -> [*, C, H r, W r]: a reshape, a permutation and a reshape."""
    o.check(input)
    r = _int_arg("pixel_shuffle upscale_factor", upscale_factor)
    meta = _meta("pixel_shuffle", F.pixel_shuffle, input, r)
    s = tuple(input.meta.shape)
    b, (c, h, w) = s[:-3], s[-3:]
    n = len(b)
    x = o.reshape(input, b + (c // (r * r), r, r, h, w))
    x = o.permute(x, list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2])
    return o.reshape(x, tuple(meta.shape))


@torch_function(torch.pixel_unshuffle)
@functional("pixel_unshuffle")
def _pixel_unshuffle(o, input, downscale_factor):
    """[*, C, H r, W r] -> [*, C r^2, H, W]."""
    o.check(input)
    r = _int_arg("pixel_unshuffle downscale_factor", downscale_factor)
    meta = _meta("pixel_unshuffle", F.pixel_unshuffle, input, r)
    s = tuple(input.meta.shape)
    b, (c, h, w) = s[:-3], s[-3:]
    n = len(b)
    x = o.reshape(input, b + (c, h // r, r, w // r, r))
    x = o.permute(x, list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3])
    return o.reshape(x, tuple(meta.shape))


@torch_function(torch.channel_shuffle)
@functional("channel_shuffle")
def _channel_shuffle(o, input, groups):
    """[N, C, *] -> [N, g, C/g, *] -> swap g and C/g -> [N, C, *]."""
    o.check(input)
    g = _int_arg("channel_shuffle groups", groups)
    meta = _meta("channel_shuffle", F.channel_shuffle, input, g)
    s = tuple(input.meta.shape)
    if len(s) < 3 or g < 1 or s[1] % g:
        raise Unsupported("channel_shuffle of fewer than 3 dims or with groups not dividing the channels")
    x = o.reshape(input, (s[0], g, s[1] // g) + s[2:])
    x = o.transpose(x, 1, 2)
    return o.reshape(x, tuple(meta.shape))
