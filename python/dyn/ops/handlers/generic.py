"""PyTorch ops without a handler of their own: one generic `torch_call` node each (ops/torch_call.py).
In-place forms (`x.foo_(...)`, `F.foo(x, inplace=True)`) are the out-of-place op written back with
Ops.mutate, `out=` is written like every handler's; random ops are refused in those two forms."""
import inspect
import types

import torch

from ...errors import Unsupported
from ..tensor import TensorVar
from ..torch_call import callee_name
from .common import _out

# Tensor methods that are not ops on values: data-dependent, leaving the graph, or acting on autograd,
# storage or the tensor object itself
_NOT_OPS = frozenset("""item tolist numpy backward register_hook register_post_accumulate_grad_hook retain_grad
requires_grad_ data_ptr storage untyped_storage storage_offset stride cpu cuda pin_memory share_memory_
record_stream set_ resize_ resize_as_ get_device is_pinned is_shared apply_ map_ map2_ copy_ detach_
element_size dim_order nonzero_static""".split())


# torch functions that read or change global state (the random generator, defaults, files): never a node,
# and never run on meta tensors while capturing
_STATE_FUNCS = frozenset("""manual_seed seed initial_seed get_rng_state set_rng_state set_default_dtype
set_default_tensor_type set_default_device set_num_threads set_num_interop_threads set_printoptions
use_deterministic_algorithms save load set_flush_denormal set_warn_always""".split())


def _inplace_flag(fn, args, kwargs):
    """(bound arguments, True) when a Python op is called with inplace=True, else (None, False)."""
    if "inplace" not in getattr(getattr(fn, "__code__", None), "co_varnames", ()):
        return None, False
    try:
        ba = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return None, False
    return ba, ba.arguments.get("inplace") is True


def generic_call(o, fn, args, kwargs):
    """fn(*args, **kwargs) for a torch function or dispatcher op with no handler."""
    if getattr(fn, "__name__", None) in _STATE_FUNCS:
        raise Unsupported(f"{callee_name(fn)} (global state)")
    kwargs = dict(kwargs)
    out = kwargs.pop("out", None)
    ba, flag = _inplace_flag(fn, args, kwargs)
    if flag:  # F.foo(x, inplace=True)
        return _inplace(o, fn, ba.args, ba.kwargs, ba.args[0] if ba.args else None, out)
    name = getattr(fn, "__name__", "")
    if isinstance(fn, types.BuiltinFunctionType) and name.endswith("_") and not name.endswith("__"):
        return _inplace(o, fn, args, kwargs, args[0] if args else None, out)  # torch.foo_(x, ...)
    r = o.torch_call(fn, args, kwargs)
    if out is not None:
        _no_random(o, r, fn)
    return _out(o, out, r, *args, *kwargs.values())


def generic_method(o, x, name, args, kwargs):
    """x.name(*args, **kwargs) for a Tensor method with no handler; name_ writes x in place."""
    if name in _NOT_OPS or name.startswith("__"):
        raise Unsupported(f"Tensor.{name}")
    fn = getattr(torch.Tensor, name, None)
    if fn is None:
        raise Unsupported(f"Tensor.{name}")
    if name.endswith("_"):
        return _inplace(o, fn, (x,) + tuple(args), kwargs, x, None, f"torch.Tensor.{name}")
    kwargs = dict(kwargs)
    out = kwargs.pop("out", None)
    r = o.torch_call(fn, (x,) + tuple(args), kwargs, f"torch.Tensor.{name}")
    if out is not None:
        _no_random(o, r, fn)
    return _out(o, out, r, x, *args, *kwargs.values())


def _inplace(o, fn, args, kwargs, x, out, name=None):
    """An op that writes x: one torch_call node for x's new value, written back with Ops.mutate."""
    if not isinstance(x, TensorVar) or out is not None:
        raise Unsupported(f"{name or callee_name(fn)} in place on a {type(x).__name__} or with out=")
    new = o.torch_call(fn, args, kwargs, name, inplace=x)
    try:
        return o.mutate(x, new, [a for a in list(args) + list(kwargs.values()) if isinstance(a, TensorVar)])
    except Unsupported:
        _drop(o, new)
        raise


def _no_random(o, r, fn):
    """out= of a random op: not captured (its node is taken out before the graph can keep it)."""
    if isinstance(r, TensorVar) and r.node.attrs.get("seeded"):
        _drop(o, r)
        raise Unsupported(f"{callee_name(fn)} with out= (random)")


def _drop(o, r):
    """Takes back the node just added for r (a random node is never dropped by pruning)."""
    if o.g.nodes and o.g.nodes[-1] is r.node:
        o.g.nodes.pop()
