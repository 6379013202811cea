"""Normalizations (Ops mixin): layer_norm, rms_norm, batch_norm, instance_norm and group_norm are graph
ops of their own (GraphNormOps.td): the eager backend runs PyTorch's kernels (eager's bits and gradients),
dyn-convert-graph-to-prim decomposes them. batch_norm and instance_norm with running statistics in
training return the updated statistics too; capture writes them back as eager's kernels write in place."""
import math
import types

import torch

from ..errors import Unsupported
from ..dynamic.symbolic import meta_empty

FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
_LOW = (torch.float16, torch.bfloat16)


def _number(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise Unsupported(f"{what} {v!r} that is not a number")
    return float(v)


def _meta(x):
    return meta_empty(tuple(x.meta.shape), dtype=x.meta.dtype, device="meta")


class NormOps:
    def _norm_params(self, what, x, params, shape, any_float=False):
        """x a float tensor; params (None or tensors) shaped `shape`, of one dtype that is x's, or f32 beside
        an f16/bf16 input (eager's CPU kernels raise for other mixes)."""
        self.check(x)
        if x.meta.dtype not in FLOATS:
            raise Unsupported(f"{what} of a {x.meta.dtype} tensor")
        given = [p for p in params if p is not None]
        self.check(*given)
        for p in given:
            if tuple(p.meta.shape) != tuple(shape):
                raise Unsupported(f"{what} parameter of shape {tuple(p.meta.shape)}, not {tuple(shape)} (eager raises)")
            if any_float:
                if p.meta.dtype not in FLOATS:
                    raise Unsupported(f"{what} parameter of dtype {p.meta.dtype}")
            elif p.meta.dtype != x.meta.dtype and not (x.meta.dtype in _LOW and p.meta.dtype == torch.float32):
                raise Unsupported(f"{what} of {x.meta.dtype} with a {p.meta.dtype} parameter (eager raises)")
        if not any_float and len({p.meta.dtype for p in given}) > 1:
            raise Unsupported(f"{what} with parameters of different dtypes (eager raises)")

    @staticmethod
    def _normalized_rank(x, normalized_shape, what):
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        if not isinstance(shape, (tuple, list, torch.Size)) or \
                not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
            raise Unsupported(f"{what} normalized_shape {normalized_shape!r}")
        k = len(shape)
        if k < 1 or k > x.meta.dim() or tuple(x.meta.shape[x.meta.dim() - k:]) != tuple(shape):
            raise Unsupported(f"{what} normalized_shape {tuple(shape)} is not the input's trailing shape "
                              "(eager raises)")
        return k, tuple(shape)

    def _norm_node(self, op, x, operands, **attrs):
        return self.node(op, [x] + [p for p in operands if p is not None], _meta(x),
                         weight=operands[0] is not None, bias=len(operands) > 1 and operands[1] is not None,
                         **attrs)

    def layer_norm(self, x, normalized_shape, w=None, b=None, eps=1e-5):
        self.check(x)
        k, shape = self._normalized_rank(x, normalized_shape, "layer_norm")
        self._norm_params("layer_norm", x, (w, b), shape)
        return self._norm_node("layer_norm", x, [w, b], normalized_rank=k, eps=_number(eps, "layer_norm eps"))

    def rms_norm(self, x, normalized_shape, w=None, eps=None):
        self.check(x)
        k, shape = self._normalized_rank(x, normalized_shape, "rms_norm")
        self._norm_params("rms_norm", x, (w,), shape, any_float=True)
        if eps is None:  # the machine epsilon of the type eager computes in (f32 for f16/bf16)
            eps = torch.finfo(torch.float32 if x.meta.dtype in _LOW else x.meta.dtype).eps
        return self._norm_node("rms_norm", x, [w], normalized_rank=k, eps=_number(eps, "rms_norm eps"))

    def group_norm(self, x, num_groups, w=None, b=None, eps=1e-5):
        self.check(x)
        if x.meta.dim() < 2:
            raise Unsupported("group_norm of a tensor with fewer than 2 dims (eager raises)")
        c = x.meta.shape[1]
        if isinstance(num_groups, bool) or not isinstance(num_groups, int) or num_groups < 1 or c % num_groups:
            raise Unsupported(f"group_norm with {num_groups!r} groups of {c} channels (eager raises)")
        if x.meta.numel() == 0:
            raise Unsupported("group_norm of an empty tensor")
        self._norm_params("group_norm", x, (w, b), (c,))
        return self._norm_node("group_norm", x, [w, b], groups=num_groups, eps=_number(eps, "group_norm eps"))

    def _channel_norm(self, op, x, rm, rv, w, b, stats_from_input, momentum, eps, count=None):
        """batch_norm / instance_norm: the node, and the running statistics written back when it updates
        them (in training: eager's kernel writes them in place, outside autograd)."""
        if x.meta.dim() < 2:
            raise Unsupported(f"{op} of a tensor with fewer than 2 dims or an integer dtype")
        if (rm is None) != (rv is None):
            raise Unsupported(f"{op} with only one of running_mean and running_var")
        c = x.meta.shape[1]
        self._norm_params(op, x, (w, b, rm, rv), (c,))
        eps = _number(eps, f"{op} eps")
        updates = stats_from_input and rm is not None
        attrs = dict(eps=eps, running_mean=rm is not None, running_var=rm is not None)
        if updates and count is None:
            attrs["momentum"] = _number(momentum, f"{op} momentum")
        elif op == "instance_norm":
            attrs["momentum"] = _number(momentum, f"{op} momentum") if isinstance(momentum, (int, float)) else 0.1
        if op == "batch_norm":
            attrs["training"] = bool(stats_from_input)
        else:
            attrs["use_input_stats"] = bool(stats_from_input)
        if not updates:  # the count only sets the momentum of the statistics' update
            return self._norm_node(op, x, [w, b, rm, rv], **attrs)
        operands = [w, b, rm, rv] + ([count] if count is not None else [])
        attrs["num_batches_tracked"] = count is not None
        metas = (_meta(x), _meta(rm), _meta(rv))
        call = self.g.add(op, [x.node] + [p.node for p in operands if p is not None], metas[0], results=3,
                          metas=metas, weight=w is not None, bias=b is not None, **attrs)
        y, new_mean, new_var = (self.var(self.g.add("torch_result", [call], m, index=k, result=k,
                                                     **({"no_grad": True} if k else {})))
                                for k, m in enumerate(metas))
        reads = [t for t in (x, w, b) if t is not None]
        self.mutate(rm, new_mean, reads + [rv], grad=False)
        self.mutate(rv, new_var, reads + [rm], grad=False)
        return y

    def batch_norm(self, x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                   eps=1e-5, num_batches_tracked=None):
        """F.batch_norm; num_batches_tracked (the count after this batch) stands for momentum
        1 / num_batches_tracked (nn.BatchNorm's cumulative average)."""
        self.check(x)
        if not isinstance(training, bool):
            raise Unsupported("batch_norm training flag that is not a bool")
        if x.meta.dim() >= 2 and training:
            c = x.meta.shape[1]
            if (x.meta.numel() // c if c else 0) <= 1:
                raise Unsupported("batch_norm in training mode with one value per channel (eager raises)")
        if not training and running_mean is None:
            raise Unsupported("batch_norm in eval mode without running statistics (eager raises)")
        if num_batches_tracked is not None:
            self.check(num_batches_tracked)
            if num_batches_tracked.meta.dtype != torch.int64 or num_batches_tracked.meta.dim() != 0:
                raise Unsupported("num_batches_tracked that is not a 0-d int64 tensor")
        elif training and running_mean is not None and (
                isinstance(momentum, bool) or not isinstance(momentum, (int, float))):
            raise Unsupported("batch_norm momentum that is not a number")  # eager raises for None
        return self._channel_norm("batch_norm", x, running_mean, running_var, weight, bias, training, momentum,
                                  eps, num_batches_tracked)

    def instance_norm(self, x, running_mean=None, running_var=None, weight=None, bias=None,
                      use_input_stats=True, momentum=0.1, eps=1e-5):
        self.check(x)
        if not isinstance(use_input_stats, bool):
            raise Unsupported("instance_norm use_input_stats that is not a bool")
        if use_input_stats and math.prod(x.meta.shape[2:]) <= 1:
            raise Unsupported("instance_norm with one spatial element (eager raises)")
        if not use_input_stats and running_mean is None:
            raise Unsupported("instance_norm without input statistics or running statistics (eager raises)")
        if use_input_stats and running_mean is not None and (
                isinstance(momentum, bool) or not isinstance(momentum, (int, float))):
            raise Unsupported("instance_norm momentum that is not a number")
        return self._channel_norm("instance_norm", x, running_mean, running_var, weight, bias, use_input_stats,
                                  momentum, eps)


# nn.BatchNorm's cumulative average (momentum None): its forward reads float(num_batches_tracked), a
# data-dependent Python number. Capture traces batch_norm_forward in its place (SUBSTITUTES), which passes
# the count itself to batch_norm_counted: one graph.batch_norm with num_batches_tracked, no graph break.
def batch_norm_counted(input, running_mean, running_var, weight, bias, num_batches_tracked, eps):
    """F.batch_norm in training with momentum 1 / num_batches_tracked (the count after this batch)."""
    return torch.nn.functional.batch_norm(input, running_mean, running_var, weight, bias, True,
                                          1.0 / float(num_batches_tracked), eps)


_BatchNorm = torch.nn.modules.batchnorm._BatchNorm
# torch's own forward as another function object (the same code): traced as it is written
_torch_batch_norm_forward = types.FunctionType(
    _BatchNorm.forward.__code__, _BatchNorm.forward.__globals__, "forward", _BatchNorm.forward.__defaults__,
    _BatchNorm.forward.__closure__)


def batch_norm_forward(self, input):
    """_BatchNorm.forward, the cumulative average through batch_norm_counted."""
    if self.momentum is None and self.training and self.track_running_stats and \
            self.num_batches_tracked is not None:
        self._check_input_dim(input)
        self.num_batches_tracked.add_(1)
        return batch_norm_counted(input, self.running_mean, self.running_var, self.weight, self.bias,
                                  self.num_batches_tracked, self.eps)
    return _torch_batch_norm_forward(self, input)


SUBSTITUTES = {_BatchNorm.forward: batch_norm_forward}
