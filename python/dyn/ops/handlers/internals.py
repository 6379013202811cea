"""Handlers of ATen's internal forms of normalizations and softmax that PyTorch exposes as torch functions
and dispatcher ops, written with the graph ops of their public forms: native_layer_norm,
native_batch_norm and _native_batch_norm_legit (the normalized tensor and the statistics eager's kernels
save for the backward), _softmax_backward_data, _safe_softmax and native_dropout_backward. The saved
statistics are computed as eager's kernels compute them (in float32 for float16/bfloat16 inputs, rounded
once) and are not differentiable (eager's are not either). CUDA's kernels differ from the CPU's: they save
float32 statistics for every float16/bfloat16 input, batch norm in eval saves C of them where the CPU's
saves none (eval on CUDA is not captured), and _softmax_backward_data of float16/bfloat16 rounds the
product grad * output to their dtype before the sum."""
import torch

from ...errors import Unsupported
from ..tensor import TensorVar, _norm_dim
from .common import metas
from ...dynamic.symbolic import meta_empty
from .registry import torch_function


_LOW = (torch.float16, torch.bfloat16)


def _eager(what, fn, *args, **kwargs):
    try:
        return fn(*metas(args), **metas(kwargs))
    except (RuntimeError, IndexError, TypeError, ValueError, NotImplementedError) as e:
        raise Unsupported(f"{what}: {e}")  # eager raises


def _opmath(o, x):
    return o.convert(x, torch.float32) if x.meta.dtype in _LOW else x


def _saved_stats(o, x, dims, eps, dt, shape):
    """graph.norm_stats: the mean and 1 / sqrt(var + eps) over dims in x's accumulate type, rounded to the
    saved dtype dt and shaped as eager saves them; not differentiable (eager's are not either)."""
    acc = torch.float32 if x.meta.dtype in _LOW else x.meta.dtype
    kept = tuple(s for d, s in enumerate(x.meta.shape) if d not in dims)
    m = meta_empty(kept, dtype=acc, device="meta")
    stats = o.multi_result("norm_stats", [x], (m, m), {"dims": tuple(dims), "eps": float(eps)})
    return tuple(o.detach(o.convert(o.reshape(v, shape), dt)) for v in stats)


def _cuda(o):
    return torch.device(o.tr.device).type == "cuda"


def _stats_dtype(o, x, *params):
    """The dtype of the statistics eager's kernels save: on the CPU x's, or float32 for a float16/bfloat16 x
    with float32 parameters (their "mixed type"); on CUDA float32 for every float16/bfloat16 x (as the meta
    kernels say)."""
    if x.meta.dtype in _LOW and (_cuda(o) or any(isinstance(p, TensorVar) and p.meta.dtype == torch.float32
                                                 for p in params)):
        return torch.float32
    return x.meta.dtype


def _number(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise Unsupported(f"{what} {v!r} that is not a number")
    return float(v)


@torch_function(torch.native_layer_norm)
def _native_layer_norm(o, x, normalized_shape, weight, bias, eps):
    """(layer_norm(x), mean, rstd): the statistics over the normalized dims, kept as size-1 dims;
    rstd = 1 / sqrt(max(var, 0) + eps) (eager's CPU kernel)."""
    o.check(x)
    meta = _eager("native_layer_norm", torch.native_layer_norm, x, normalized_shape, weight, bias, eps)
    eps = _number(eps, "native_layer_norm eps")
    y = o.layer_norm(x, normalized_shape, weight, bias, eps)
    k = len(normalized_shape) if isinstance(normalized_shape, (tuple, list, torch.Size)) else 1
    nd = x.meta.dim()
    dims = list(range(nd - k, nd))
    dt, shape = _stats_dtype(o, x, weight, bias), tuple(meta[1].shape)
    if x.meta.numel() == 0:
        return y, o.full(shape, 0, dt), o.full(shape, 0, dt)
    return (y,) + _saved_stats(o, x, dims, eps, dt, shape)


def _batch_stats(o, x, training, eps, dt, running_mean, running_var):
    """save_mean and save_invstd of eager's batch norm: the batch's mean and 1 / sqrt(var + eps) per
    channel in training; in eval, empty tensors on the CPU (eager's CPU kernel; the meta kernel gives C
    elements) and the running statistics normalized with on CUDA (a copy of the mean, 1 / sqrt(var + eps))."""
    if not training:
        if not _cuda(o):
            return o.full((0,), 0, dt), o.full((0,), 0, dt)
        mean = o.fresh_copy(o.convert(running_mean, dt))
        return mean, o.unary("rsqrt", o.binary("add", o.convert(running_var, dt), eps))
    return _saved_stats(o, x, [0] + list(range(2, x.meta.dim())), eps, dt, (x.meta.shape[1],))


def _batch_norm(what, fn, x, weight, bias, running_mean, running_var, training, momentum, eps, o, stats=True):
    o.check(x)
    if not isinstance(training, bool):
        raise Unsupported(f"{what} training flag that is not a bool")
    if x.meta.dim() < 2 or x.meta.numel() == 0:
        raise Unsupported(f"{what} of a tensor with fewer than 2 dims or no elements")
    if not training and _cuda(o) and (running_mean is None or running_var is None):
        raise Unsupported(f"{what} in eval without running statistics on CUDA")
    args = (x, weight, bias, running_mean, running_var) if stats else (x, weight, bias)
    _eager(what, fn, *args, training, momentum, eps)
    eps = _number(eps, f"{what} eps")
    dt = _stats_dtype(o, x, weight, bias, running_mean, running_var)
    y = o.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)
    return (y,) + _batch_stats(o, x, training, eps, dt, running_mean, running_var)


@torch_function(torch.native_batch_norm)
def _native_batch_norm(o, x, weight, bias, running_mean, running_var, training, momentum, eps):
    return _batch_norm("native_batch_norm", torch.native_batch_norm, x, weight, bias, running_mean, running_var,
                       training, momentum, eps, o)


@torch_function(torch._native_batch_norm_legit)
def _native_batch_norm_legit(o, x, weight, bias, *args):
    """_native_batch_norm_legit(x, w, b, running_mean, running_var, training, momentum, eps), or its
    no_stats overload (x, w, b, training, momentum, eps)."""
    if len(args) == 3:
        return _batch_norm("_native_batch_norm_legit", torch._native_batch_norm_legit, x, weight, bias, None,
                           None, *args, o, stats=False)
    if len(args) != 5:
        raise Unsupported("_native_batch_norm_legit with other arguments")
    return _batch_norm("_native_batch_norm_legit", torch._native_batch_norm_legit, x, weight, bias, *args, o)


@torch_function(torch.ops.aten._softmax_backward_data, torch.ops.aten._softmax_backward_data.default)
def _softmax_backward_data(o, grad_output, output, dim, input_dtype):
    """The gradient of softmax at its output: (grad - sum(grad * output, dim)) * output (eager's CPU
    kernel; float16/bfloat16 in float32, rounded once to input_dtype)."""
    o.check(grad_output, output)
    meta = _eager("_softmax_backward_data", torch.ops.aten._softmax_backward_data, grad_output, output, dim,
                  input_dtype)
    if output.meta.dim() == 0:
        raise Unsupported("_softmax_backward_data of a 0-d tensor")
    d = _norm_dim(dim, output.meta.dim())
    if _cuda(o) and (output.meta.dtype in _LOW or grad_output.meta.dtype in _LOW):
        if grad_output.meta.dtype != output.meta.dtype:
            raise Unsupported("_softmax_backward_data of float16/bfloat16 with mixed dtypes on CUDA")
        # CUDA's kernel (softmax_backward_cuda_out) first rounds grad * output to their dtype, then
        # computes tmp - output * sum(tmp) in float32 and rounds once
        t = _opmath(o, o.binary("mul", grad_output, output))
        s = o.reduce("sum", t, d, True)
        return o.convert(o.binary("sub", t, o.binary("mul", _opmath(o, output), s)), meta.dtype)
    if grad_output.meta.dtype == output.meta.dtype and output.meta.dtype in (meta.dtype, torch.float32) \
            and tuple(grad_output.meta.shape) == tuple(meta.shape) == tuple(output.meta.shape):
        r = o.node("softmax_backward", [grad_output, output],
                   meta_empty(tuple(meta.shape), dtype=output.meta.dtype, device="meta"), dim=d)
        return o.convert(r, meta.dtype)  # rounded once: in output's type, or from float32
    g, out = _opmath(o, grad_output), _opmath(o, output)
    s = o.reduce("sum", o.binary("mul", g, out), d, True)
    r = o.binary("mul", o.binary("sub", g, s), out)
    return o.convert(r, meta.dtype)


@torch_function(torch.ops.aten._safe_softmax.default, torch.ops.aten._safe_softmax)
def _safe_softmax(o, x, dim, dtype=None):
    """graph.safe_softmax: softmax, with 0 in the rows whose every value is -inf."""
    o.check(x)
    meta = _eager("_safe_softmax", torch.ops.aten._safe_softmax.default, x, dim, dtype)
    r = o.softmax("safe_softmax", x, dim, dtype)
    if r.meta.dtype != meta.dtype or tuple(r.meta.shape) != tuple(meta.shape):
        raise Unsupported("_safe_softmax: unexpected result")
    return r


@torch_function(torch.ops.aten.native_dropout_backward.default, torch.ops.aten.native_dropout_backward)
def _native_dropout_backward(o, grad_output, mask, scale):
    """eager's: grad * mask * scale (the boolean mask in grad's dtype)."""
    o.check(grad_output, mask)
    _eager("native_dropout_backward", torch.ops.aten.native_dropout_backward.default, grad_output, mask, scale)
    if mask.meta.dtype != torch.bool or isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise Unsupported("native_dropout_backward with a mask that is not bool or a scale that is not a number")
    if grad_output.meta.dtype.is_floating_point and tuple(mask.meta.shape) == tuple(grad_output.meta.shape):
        return o.node("dropout_backward", [grad_output, mask], torch.empty(
            tuple(grad_output.meta.shape), dtype=grad_output.meta.dtype, device="meta"), scale=float(scale))
    return o.binary("mul", o.binary("mul", grad_output, mask), float(scale))
