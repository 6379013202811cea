"""Handlers of in-place ops: the new value is computed like the out-of-place op's, checked against
eager's rules by running the real in-place op on a meta tensor laid out like the destination (dtype cast,
broadcast, overlap), and written with Ops.mutate (views, graph inputs, writeback)."""
import torch

from ...errors import Unsupported
from ...graph.opset import UNARY
from ..tensor import TensorVar
from .arith import H
from .common import metas, inplace
from .registry import functional, torch_inplace


def _inplace_method(name, base):
    def h(o, x, *args, **kwargs):
        o.check(x)
        new = base(o, x, *args, **kwargs)
        return inplace(o, x, new, lambda s: getattr(s, name)(*metas(args), **metas(kwargs)), args, kwargs)
    return h


INPLACE = {}  # Tensor.<name>_ -> handler (registered at the end)
for _n in list(UNARY) + ("add sub mul div true_divide floor_divide fmod tril triu pow remainder clamp clamp_min clamp_max "
                   "clip masked_fill square lerp "
                   "log2 log10 eq ne lt le gt ge logical_and logical_or addcmul addcdiv negative absolute multiply "
                   "subtract divide greater greater_equal less less_equal not_equal bitwise_and bitwise_or "
                   "bitwise_xor bitwise_left_shift bitwise_right_shift").split():
    if _n in H and hasattr(torch.Tensor, _n + "_"):
        INPLACE[_n + "_"] = _inplace_method(_n + "_", H[_n])


def _zero_(o, x):
    o.check(x)
    return inplace(o, x, o.full(tuple(x.meta.shape), 0, x.meta.dtype), lambda s: s.zero_())


def _fill_(o, x, value):
    o.check(x)
    if isinstance(value, TensorVar):
        new = o.expand(o.convert(value, x.meta.dtype), tuple(x.meta.shape))
    elif isinstance(value, (int, float, bool)):
        new = o.full(tuple(x.meta.shape), value, x.meta.dtype)
    else:
        raise Unsupported(f"fill_ with a {type(value).__name__}")
    if new is value:
        new = o.copy(value)  # x's own node: no other TensorVar holds it
    return inplace(o, x, new, lambda s: s.fill_(metas(value)), value)


def _copy_(o, x, src, non_blocking=False):
    o.check(x, src)
    new = o.expand(o.convert(src, x.meta.dtype), tuple(x.meta.shape))
    if new is src:
        new = o.copy(src)  # x's own node: no other TensorVar holds it
    return inplace(o, x, new, lambda s: s.copy_(src.meta), src)


INPLACE["zero_"] = _zero_
INPLACE["fill_"] = _fill_
INPLACE["copy_"] = _copy_

torch_inplace.all(INPLACE)  # Tensor.<name>_, and torch.<name>_ where torch has it
functional("relu_")(INPLACE["relu_"])
