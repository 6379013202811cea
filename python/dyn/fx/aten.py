"""ATen ops (AOTAutograd's forward and backward graphs after PyTorch's core ATen decompositions) mapped to
capture's handlers. Only overloads checked to take the torch-level function's arguments in the same order
and meaning are mapped by name (SAME_AS_TORCH); the others have adapters here. An op not in the table has
no handler: the graph then runs as AOTAutograd gave it. The registered graph ops name their ATen ops in the
op registry (dyn/_ops_generated.py, `aten.<name>` in torch_names); the others are listed here."""
import torch

from .._ops_generated import HANDLERS, OPS
from ..errors import Unsupported
from ..ops import METHODS, TORCH_FUNCS
from ..ops.handlers import getitem

aten = torch.ops.aten

# ATen ops whose every overload has the torch-level function's (or Tensor method's) signature: the
# registry's (captured by the handler of torch.<name>) and these
SAME_AS_TORCH = tuple(n for n, d in OPS.items() if f"aten.{n}" in d.torch_names and not d.signature) + tuple((
    "fmod clamp_min clamp_max mm bmm view permute t transpose unsqueeze "
    "squeeze expand clone cat stack split select gather index_select full arange "
    "zeros_like ones_like full_like masked_fill"
).split())


def _torch_handler(name):
    """The handler of torch.<name>, else of Tensor.<name> (called the same way: self first)."""
    f = getattr(torch, name, None)
    h = TORCH_FUNCS.get(f) if f is not None and callable(f) else None
    return h if h is not None else METHODS.get(name)


def _check_device(o, device):
    if device is not None and torch.device(device).type != o.tr.device.type:
        raise Unsupported(f"a tensor made on {device} in a graph on {o.tr.device}")


def _softmax(op):
    def h(o, x, dim, half_to_float):
        if half_to_float:
            raise Unsupported(f"_{op} with half_to_float")
        return o.softmax(op, x, dim)
    return h


def _scalar_tensor(o, value, *, dtype=None, layout=None, device=None, pin_memory=None):
    _check_device(o, device)
    return o.full((), value, dtype or torch.get_default_dtype())


def _to_copy(o, x, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
             memory_format=None):
    _check_device(o, device)
    if memory_format not in (None, torch.preserve_format, torch.contiguous_format):
        raise Unsupported(f"_to_copy(memory_format={memory_format})")
    r = o.convert(x, dtype) if dtype is not None else x
    return o.fresh_copy(r) if r is x else r


def _copy(o, x, src, non_blocking=False):
    """The functional copy_: src converted to x's dtype and broadcast to its shape, as a new tensor."""
    o.check(x, src)
    new = o.expand(o.convert(src, x.meta.dtype), tuple(x.meta.shape))
    return o.fresh_copy(new) if new is src else new


def _slice(o, x, dim=0, start=None, end=None, step=1):
    o.check(x)
    d = dim % max(x.meta.dim(), 1)
    return getitem(o, x, (slice(None),) * d + (slice(start, end, step),))


def _rsub(o, x, other, alpha=1):
    return o.binary("sub", other, o.binary("mul", x, alpha) if alpha != 1 else x)


def _empty(o, size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    _check_device(o, device)
    return o.full(tuple(size), 0, dtype or torch.get_default_dtype())  # any value: eager's is undefined


ADAPTERS = {
    aten._softmax: _softmax("softmax"),
    aten._log_softmax: _softmax("log_softmax"),
    aten.scalar_tensor: _scalar_tensor,
    aten._to_copy: _to_copy,
    aten.copy: _copy,
    aten.slice: _slice,
    aten.rsub: _rsub,
    aten.empty: _empty,
    aten.alias: lambda o, x: METHODS["view"](o, x, tuple(x.meta.shape)),
    aten._unsafe_view: lambda o, x, size: METHODS["reshape"](o, x, tuple(size)),
    aten.lift_fresh_copy: lambda o, x: o.fresh_copy(x),
    aten.split_with_sizes: lambda o, x, sizes, dim=0: _torch_handler("split")(o, x, list(sizes), dim),
    aten.detach: lambda o, x: x,
}


# native_layer_norm as capture records torch.native_layer_norm: graph.layer_norm and graph.norm_stats
ADAPTERS[aten.native_layer_norm] = TORCH_FUNCS[torch.native_layer_norm]


def aten_handler(target):
    """The handler for an ATen OpOverload (called handler(ops, *args, **kwargs)), None when there is none."""
    packet = getattr(target, "overloadpacket", None)
    if packet is None:
        return None
    h = ADAPTERS.get(packet)
    if h is not None:
        return h
    name = packet.__name__
    h = HANDLERS.get(f"aten.{name}")  # registered ops with a generated handler
    if h is not None:
        return h
    if name in SAME_AS_TORCH:
        return _torch_handler(name)
    # ATen's internal ops that capture handles as torch calls (native_layer_norm, _softmax_backward_data, ...)
    return TORCH_FUNCS.get(target) or TORCH_FUNCS.get(packet)


def is_aten(target):
    return isinstance(target, torch._ops.OpOverload)

