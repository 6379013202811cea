"""Registered ops recorded as they are (Ops mixin): the op registry's generated handlers
(dyn/_ops_generated.py HANDLERS) call Ops.registered, which records one graph node with the op's
attributes; the lowering (GraphToPrim) decomposes it, the eager backend runs the PyTorch function."""
import torch

from .._ops_generated import OPS
from ..errors import Unsupported
from ..graph.opset import ELEMENT_TYPES
from .handlers.common import inplace as _inplace, _out
from .arith import _wrapped
from .tensor import TensorVar
from ..dynamic.symbolic import meta_empty


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
    if kind == "i64_array":
        if not isinstance(v, (tuple, list)) or not all(isinstance(d, int) and not isinstance(d, bool) for d in v):
            raise Unsupported(f"{op}: {name}={v!r} is not a list of ints")
        return tuple(v)
    if kind == "f64_array":
        if not isinstance(v, (tuple, list)) or not all(isinstance(d, (int, float)) and not isinstance(d, bool) for d in v):
            raise Unsupported(f"{op}: {name}={v!r} is not a list of numbers")
        return tuple(float(d) for d in v)
    raise Unsupported(f"{op}: attribute {name} of kind {kind}")


def _threshold(o, x, threshold, value):
    # ATen converts both numbers to x's type (floats truncated, ints wrapped; out of range it raises,
    # which the accepts probe saw)
    t, v = (_wrapped(int(n), x.meta.dtype) for n in (threshold, value))
    return o.where(o.binary("le", x, t), v, x)


# Activations that the registry defines on floats, as eager computes them for integer inputs (its own
# formulas: torch.nn.functional's softsign and tanhshrink, ATen's threshold kernel)
_INTEGER_FORMS = {
    "softsign": lambda o, x: o.binary("div", x, o.binary("add", o.unary("abs", x), 1)),
    "tanhshrink": lambda o, x: o.binary("sub", x, o.unary("tanh", x)),
    "threshold": _threshold,
}


class RegisteredOps:
    def registered(self, name, fn, operands, attrs, inplace=False, out=None, call=None, probe_dtypes=True):
        """Records the registered op `name` as PyTorch's `fn(*operands, **attrs)`: the result's meta from fn
        on meta tensors (PyTorch's promotion), eager's dtype checks, the attributes converted to their
        registry kinds. inplace: fn's inplace=True (the result written into operand 0). call: how PyTorch
        computes it when its arguments are not the op's attributes (call(*operands)). probe_dtypes=False: the
        caller has checked that eager's kernel takes the dtypes (a probe's small tensors would not fit)."""
        d = OPS[name]
        for x in operands:
            if not isinstance(x, TensorVar):
                raise Unsupported(f"{name}: operand of type {type(x).__name__}")
        kinds = dict(d.attrs)
        values = {k: _attr(k, name, kinds[k], v) for k, v in attrs.items()}
        if call is None:  # the registered op's own function, a stable key for both caches
            metas = lambda *xs: self.tr.session.metas.call(fn, *xs, **attrs)  # noqa: E731
            probe, probe_kw = fn, attrs
        else:
            metas, probe, probe_kw = call, call, {}
        try:
            meta = metas(*[x.meta for x in operands])
        except (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError) as e:
            raise Unsupported(f"{name}: {e}")  # eager raises
        if d.family != "library" and probe_dtypes:  # a library call's errors depend on values (a singular matrix, k > n):
            self.accepts(name, probe, *operands, **probe_kw)  # probing with ones would refuse it; eager's own raise at run time
        if isinstance(meta, tuple):  # several results (sort, linalg.eigh): torch.return_types of graph values
            if out is not None or inplace:
                raise Unsupported(f"{name} with out= or in place")
            return self.multi_result(name, operands, meta, values)
        if meta.dtype not in ELEMENT_TYPES:
            raise Unsupported(f"{name} of dtype {meta.dtype}")
        if name in _INTEGER_FORMS and not inplace and out is None and not operands[0].meta.dtype.is_floating_point:
            r = _INTEGER_FORMS[name](self, *operands, **attrs)
            if r.meta.dtype != meta.dtype or tuple(r.meta.shape) != tuple(meta.shape):
                raise Unsupported(f"{name} of a {operands[0].meta.dtype} tensor: unexpected result")
            return r
        if d.type_rule in ("float", "keeps_float") and not meta.dtype.is_floating_point:
            raise Unsupported(f"{name} with a {meta.dtype} result")
        if d.type_rule == "promote_numeric" and meta.dtype == torch.bool:
            raise Unsupported(f"{name} of booleans")
        if d.type_rule.startswith("keeps_float") and any(x.meta.dtype != meta.dtype for x in operands):
            raise Unsupported(f"{name} of mixed dtypes")
        new = self.node(name, list(operands), meta, **values)
        if d.family == "library":
            new = self.eager_layout(new, meta)
        if inplace:
            x = operands[0]
            return _inplace(self, x, new, lambda s: fn(s, *[o.meta for o in operands[1:]], **attrs, inplace=True))
        return _out(self, out, new, *operands)

    def multi_result(self, name, operands, metas, attrs):
        """One node of the op `name` with a result per tensor of `metas` (fn's result on meta tensors: a
        torch.return_types structseq or a tuple), each read by a torch_result node; returns the same
        structure of TensorVars, so that `.values` and `[1]` work as in eager."""
        for m in metas:
            if not isinstance(m, torch.Tensor) or m.dtype not in ELEMENT_TYPES:
                raise Unsupported(f"{name} returns a {getattr(m, 'dtype', type(m).__name__)} result")
        plain = tuple(meta_empty(tuple(m.shape), dtype=m.dtype, device="meta") for m in metas)
        call = self.g.add(name, [x.node for x in operands], plain[0], results=len(plain), metas=plain, **attrs)
        items = [self.eager_layout(self.var(self.g.add("torch_result", [call], m, index=k, result=k)), metas[k])
                 for k, m in enumerate(plain)]
        return type(metas)(items) if type(metas) is not tuple else tuple(items)

    def eager_layout(self, v, meta):
        """v laid out in memory as eager's result (meta's strides) when that is a permutation of a dense
        layout: LAPACK's results are column-major (the call writes row-major buffers; a permute kernel
        lays them out, ops/views.py laid_out). Otherwise v as it is (contiguous)."""
        shape, strides = tuple(meta.shape), tuple(meta.stride())
        if meta.is_contiguous() or not meta.numel():
            return v
        order = tuple(sorted(range(len(shape)), key=lambda d: (-strides[d], d)))  # dims outermost first
        dense = meta_empty([shape[d] for d in order], device="meta").permute(
            [order.index(d) for d in range(len(shape))])
        if any(a != b for a, b, n in zip(dense.stride(), strides, shape) if n > 1):
            return v
        return self.laid_out(v, order)
