"""Handlers of torch.nn.functional ops."""
import math

import torch
import torch.nn.functional as F

from ...errors import Unsupported
from ..tensor import TensorVar
from .common import _out, inplace
from .reductions import H as REDUCTIONS
from ..._ops_generated import HANDLERS
from ..norms import batch_norm_counted
from .registry import functional, torch_function


def _f_inplace(o, x, flag, new, fname, *args):
    """A torch.nn.functional op with inplace=flag."""
    if not flag:
        return new
    return inplace(o, x, new, lambda s: getattr(F, fname)(s, *args, inplace=True))


# torch.nn.functional
F_H = {}  # torch.nn.functional name -> handler (registered at the end)
# (parameters named as torch's, which callers pass by keyword: timm's BEiT calls F.linear(x, weight=...))
F_H["relu"] = lambda o, input, inplace=False: _f_inplace(o, input, inplace, o.unary("relu", input), "relu")
F_H["sigmoid"] = lambda o, input: o.unary("sigmoid", input)
F_H["tanh"] = lambda o, input: o.unary("tanh", input)
F_H["softmax"] = lambda o, input, dim=None, _stacklevel=3, dtype=None: o.softmax("softmax", input, dim, dtype)
F_H["log_softmax"] = lambda o, input, dim=None, _stacklevel=3, dtype=None: o.softmax("log_softmax", input, dim, dtype)
F_H["linear"] = lambda o, input, weight, bias=None: o.linear(input, weight, bias)
F_H["layer_norm"] = lambda o, input, normalized_shape, weight=None, bias=None, eps=1e-5: \
    o.layer_norm(input, normalized_shape, weight, bias, eps)
F_H["rms_norm"] = lambda o, input, normalized_shape, weight=None, eps=None: \
    o.rms_norm(input, normalized_shape, weight, eps)


def _embedding(o, index, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
               sparse=False):
    """weight's rows at index. padding_idx, scale_grad_by_freq and sparse change only the gradient: taken
    when weight needs none (the eager backend differentiates a plain gather); with a gradient, the
    padding row is read detached (eager's backward leaves it zero), the others are not captured."""
    o.check(index, weight)
    if max_norm is not None:
        raise Unsupported("embedding with max_norm (renormalizes weight in place)")
    if weight.meta.dim() != 2:
        raise Unsupported("embedding with a weight that is not 2-D (eager raises)")
    if (padding_idx is not None or scale_grad_by_freq or sparse) and o.needs_grad(weight):
        if scale_grad_by_freq or sparse:
            raise Unsupported("embedding with scale_grad_by_freq or sparse, differentiated")
        n = weight.meta.shape[0]
        if not -n <= padding_idx < n:
            raise Unsupported("embedding padding_idx out of range (eager raises)")
        rows = o.dense(torch.arange(n).reshape(n, 1))
        pad = o.binary("eq", rows, padding_idx % n)
        weight = o.where(pad, o.detach(weight), weight)  # the same values, no gradient into the padding row
    return o.take_along(weight, 0, index, wraps=False)


F_H["embedding"] = _embedding


def _leaky_relu(o, x, negative_slope=0.01, inplace=False):
    """The registry's generated handler of F.leaky_relu (graph.leaky_relu)."""
    return HANDLERS["torch.nn.functional.leaky_relu"](o, x, negative_slope, inplace)


def _hardtanh(o, x, min_val=-1.0, max_val=1.0, inplace=False, fn=F.hardtanh):
    """hardtanh / relu6: graph.hardtanh of floats (eager's gradient, zero at the bounds, from the eager
    backend's F.hardtanh); integer tensors keep their dtype, clamped with the bounds truncated as eager's
    kernel converts them."""
    o.check(x)
    if not isinstance(min_val, (int, float)) or not isinstance(max_val, (int, float)):
        raise Unsupported("hardtanh bounds that are not numbers")
    if not (math.isfinite(min_val) and math.isfinite(max_val)):
        raise Unsupported("hardtanh with a bound that is not finite")
    if min_val > max_val:
        raise Unsupported("hardtanh with min_val > max_val (eager raises)")
    if x.meta.dtype.is_floating_point:
        return o.registered("hardtanh", F.hardtanh, (x,), dict(min_val=min_val, max_val=max_val), inplace=inplace)
    o.accepts(fn.__name__, fn, x)  # bools raise
    return _f_inplace(o, x, inplace, o.clamp(x, int(min_val), int(max_val)), "hardtanh", min_val, max_val)


F_H["hardtanh"] = _hardtanh
F_H["relu6"] = lambda o, x, inplace=False: _hardtanh(o, x, 0.0, 6.0, inplace, F.relu6)


def _batch_norm(o, x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                eps=1e-5):
    """F.batch_norm: one graph.batch_norm (ops/norms.py); in training the running statistics (when given)
    are written back, as eager's kernel updates them in place."""
    o.check(x)
    if x.meta.numel() == 0 and x.meta.is_floating_point() and all(
            t is None or isinstance(t, TensorVar) and t.meta.numel() == 0 for t in (running_mean, running_var)):
        # an empty batch with no statistics to update: eager returns an empty tensor (where it accepts the
        # shapes: its meta kernel checks them)
        try:
            r = F.batch_norm(x.meta, *(t.meta if isinstance(t, TensorVar) else t
                                       for t in (running_mean, running_var, weight, bias)), training, momentum, eps)
        except (RuntimeError, ValueError, TypeError, IndexError) as e:
            raise Unsupported(f"batch_norm: {e}")
        return o.full(tuple(r.shape), 0, r.dtype)
    return o.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)


F_H["batch_norm"] = _batch_norm
torch_function(batch_norm_counted)(lambda o, x, rm, rv, w, b, count, eps: o.batch_norm(
    x, rm, rv, w, b, True, None, eps, num_batches_tracked=count))
F_H["instance_norm"] = lambda o, x, running_mean=None, running_var=None, weight=None, bias=None, \
    use_input_stats=True, momentum=0.1, eps=1e-5: o.instance_norm(x, running_mean, running_var, weight, bias,
                                                                  use_input_stats, momentum, eps)
F_H["group_norm"] = lambda o, x, num_groups, weight=None, bias=None, eps=1e-5: o.group_norm(
    x, num_groups, weight, bias, eps)


def _normalize(o, x, p=2.0, dim=1, eps=1e-12, out=None):
    """x / max(norm_p(x, dim), eps), the norm as eager's torch.norm (graph.vector_norm)."""
    o.check(x)
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p != p:
        raise Unsupported(f"normalize with p={p!r}")
    n = REDUCTIONS["vector_norm"](o, x, p, dim, True)
    return _out(o, out, o.binary("div", x, o.clamp(n, eps, None)), x)


F_H["normalize"] = _normalize

functional.all(F_H)
torch_function(torch.rms_norm)(F_H["rms_norm"])  # what F.rms_norm calls (TorchDynamo's graphs name it)
functional("leaky_relu_")(lambda o, x, negative_slope=0.01: _leaky_relu(o, x, negative_slope, True))
functional("hardtanh_")(lambda o, x, min_val=-1.0, max_val=1.0: F_H["hardtanh"](o, x, min_val, max_val, True))
