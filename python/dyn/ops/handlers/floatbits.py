"""Handlers of ops on the representation of floating-point numbers: frexp and nextafter record graph.frexp and
graph.nextafter (GraphSpecialOps.td), decomposed without a bit cast by GraphToPrim/FloatBits.cpp."""
import torch

from ...errors import Unsupported
from ..tensor import TensorVar
from .registry import torch_name


_FLOATS = (torch.float64, torch.float32, torch.bfloat16, torch.float16)


@torch_name("frexp")
def _frexp(o, x, *, out=None):
    """graph.frexp: x = mantissa * 2^exponent with |mantissa| in [0.5, 1); 0, inf and NaN give (x, 0)."""
    o.check(x)
    if out is not None:
        raise Unsupported("frexp(out=...)")
    if x.meta.dtype not in _FLOATS:
        raise Unsupported(f"frexp of a {x.meta.dtype} tensor (eager raises)")
    return o.multi_result("frexp", [x], torch.frexp(x.meta), {})


@torch_name("nextafter")
def _nextafter(o, x, other, *, out=None):
    """graph.nextafter: the next value of x's dtype after x toward other; other where they are equal, NaN
    where one is."""
    if not isinstance(x, TensorVar) or not isinstance(other, TensorVar):
        raise Unsupported("nextafter of a number")
    o.check(x, other)
    try:
        meta = torch.nextafter(x.meta, other.meta)
    except (RuntimeError, TypeError) as e:
        raise Unsupported(f"nextafter: {e}")  # eager raises
    o.accepts("nextafter", torch.nextafter, x, other)
    if o.needs_grad(x, other):
        raise Unsupported("nextafter of a tensor that requires grad (eager's backward raises)")
    dt = meta.dtype
    if dt not in _FLOATS:
        raise Unsupported(f"nextafter of {dt}")
    shape = tuple(meta.shape)
    operands = [o.expand(o.convert(v, dt), shape) for v in (x, other)]
    return o.node("nextafter", operands, meta.contiguous())
