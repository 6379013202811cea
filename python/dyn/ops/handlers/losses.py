"""Handlers of the elementwise losses (F.mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div,
binary_cross_entropy, binary_cross_entropy_with_logits, soft_margin_loss): one graph op each, decomposed by Losses.cpp. Input and
target are broadcast and converted to the result's type first (eager's rule); per-element weights and the
legacy size_average/reduce arguments are not captured."""
import torch
import torch.nn.functional as F

from ...errors import Unsupported
from ..tensor import TensorVar
from ...dynamic.symbolic import meta_empty
from .registry import functional


def _loss(o, op, x, t, reduction, *, weight=None, size_average=None, reduce=None, **params):
    o.check(x)
    if not isinstance(t, TensorVar):
        raise Unsupported(f"{op} with a target that is not a tensor")
    if weight is not None or params.pop("pos_weight", None) is not None:
        raise Unsupported(f"{op} with weights")
    if size_average is not None or reduce is not None:
        raise Unsupported(f"{op} with the legacy size_average/reduce arguments")
    if reduction not in ("none", "mean", "sum", "batchmean") or (reduction == "batchmean" and op != "kl_div"):
        raise Unsupported(f"{op} with reduction={reduction!r} (eager raises)")
    o.accepts(op, getattr(F, op), x, t, reduction=reduction, **params)  # integer targets, out-of-range bce
    try:
        meta = getattr(F, op)(x.meta, t.meta, reduction=reduction, **params)
    except (RuntimeError, ValueError) as e:
        raise Unsupported(f"{op}: {e}")
    if meta.dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        raise Unsupported(f"{op} of {meta.dtype} tensors")
    shape = tuple(torch.broadcast_shapes(tuple(x.meta.shape), tuple(t.meta.shape)))
    x = o.expand(o.convert(x, meta.dtype), shape)
    t = o.expand(o.convert(t, meta.dtype), shape)
    graph_reduction = "sum" if reduction == "batchmean" else reduction
    rmeta = meta_empty(shape if reduction == "none" else (), dtype=meta.dtype, device="meta")
    r = o.node(op, [x, t], rmeta, reduction=graph_reduction, **params)
    if reduction == "batchmean" and x.meta.dim():  # F.kl_div's: the sum over the batch size
        r = o.binary("div", r, float(x.meta.shape[0]))
    return r


def _pointwise(op):
    def h(o, input, target, size_average=None, reduce=None, reduction="mean", weight=None):
        return _loss(o, op, input, target, reduction, weight=weight, size_average=size_average, reduce=reduce)
    return h


functional("mse_loss")(_pointwise("mse_loss"))
functional("l1_loss")(_pointwise("l1_loss"))
functional("soft_margin_loss")(_pointwise("soft_margin_loss"))
functional("smooth_l1_loss")(lambda o, input, target, size_average=None, reduce=None, reduction="mean", beta=1.0: _loss(
    o, "smooth_l1_loss", input, target, reduction, size_average=size_average, reduce=reduce, beta=float(beta)))
functional("huber_loss")(lambda o, input, target, reduction="mean", delta=1.0, weight=None: _loss(
    o, "huber_loss", input, target, reduction, weight=weight, delta=float(delta)))
functional("kl_div")(lambda o, input, target, size_average=None, reduce=None, reduction="mean", log_target=False: _loss(
    o, "kl_div", input, target, reduction, size_average=size_average, reduce=reduce, log_target=bool(log_target)))
functional("binary_cross_entropy")(
    lambda o, input, target, weight=None, size_average=None, reduce=None, reduction="mean": _loss(
        o, "binary_cross_entropy", input, target, reduction, weight=weight, size_average=size_average, reduce=reduce))
functional("binary_cross_entropy_with_logits")(
    lambda o, input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None: _loss(
        o, "binary_cross_entropy_with_logits", input, target, reduction, weight=weight, size_average=size_average,
        reduce=reduce, pos_weight=pos_weight))
