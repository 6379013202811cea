"""Registered ops recorded as they are (Ops mixin): the op registry's generated handlers
(dyn/_ops_generated.py HANDLERS) call Ops.registered, which records one graph node with the op's
attributes; the lowering (GraphToPrim) decomposes it, the eager backend runs the PyTorch function."""
import torch

from .._ops_generated import OPS
from ..errors import Unsupported
from ..graph.opset import ELEMENT_TYPES
from .handlers.common import inplace as _inplace, _out
from .tensor import TensorVar


def _attr(name, op, kind, v):
    if kind == "f64":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise Unsupported(f"{op}: {name}={v!r} is not a number")
        return float(v)
    if kind == "i64":
        if isinstance(v, bool) or not isinstance(v, int):
            raise Unsupported(f"{op}: {name}={v!r} is not an int")
        return v
    if kind == "str":
        if not isinstance(v, str):
            raise Unsupported(f"{op}: {name}={v!r} is not a string")
        return v
    if kind == "bool":
        return bool(v)
    raise Unsupported(f"{op}: attribute {name} of kind {kind}")


class RegisteredOps:
    def registered(self, name, fn, operands, attrs, inplace=False, out=None):
        """Records the registered op `name` as PyTorch's `fn(*operands, **attrs)`: the result's meta from fn
        on meta tensors (PyTorch's promotion), eager's dtype checks, the attributes converted to their
        registry kinds. inplace: fn's inplace=True (the result written into operand 0)."""
        d = OPS[name]
        for x in operands:
            if not isinstance(x, TensorVar):
                raise Unsupported(f"{name}: operand of type {type(x).__name__}")
        kinds = dict(d.attrs)
        values = {k: _attr(k, name, kinds[k], v) for k, v in attrs.items()}
        try:
            meta = fn(*[x.meta for x in operands], **attrs)
        except (RuntimeError, TypeError, ValueError, NotImplementedError) as e:
            raise Unsupported(f"{name}: {e}")  # eager raises
        self.accepts(name, fn, *operands, **attrs)
        if meta.dtype not in ELEMENT_TYPES:
            raise Unsupported(f"{name} of dtype {meta.dtype}")
        if d.type_rule in ("float", "keeps_float") and not meta.dtype.is_floating_point:
            raise Unsupported(f"{name} with a {meta.dtype} result")
        if d.type_rule == "promote_numeric" and meta.dtype == torch.bool:
            raise Unsupported(f"{name} of booleans")
        if d.type_rule.startswith("keeps_float") and any(x.meta.dtype != meta.dtype for x in operands):
            raise Unsupported(f"{name} of mixed dtypes")
        new = self.node(name, list(operands), meta, **values)
        if inplace:
            x = operands[0]
            return _inplace(self, x, new, lambda s: fn(s, *[o.meta for o in operands[1:]], **attrs, inplace=True))
        return _out(self, out, new, *operands)
