"""Operators: binary and in-place, subscripts, unary, truth, comparisons, is and in (Frame mixin)."""
import operator
import sys
import types
from collections import OrderedDict, defaultdict

import torch

from ...ops import TensorVar
from ...ops.handlers import getitem, inplace, metas
from ..autocast import cast_arguments
from ..origins import is_torch_code
from ..values import Opaque, _contains_real_tensor, _contains_tensor, holds_internal, is_constant
from .control import SymGenerator
from .signals import TracedException

_BINOPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
           "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
           "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
           ">>": operator.rshift}
_IN_PLACE = {"+": operator.iadd, "|": operator.ior, "&": operator.iand, "-": operator.isub, "^": operator.ixor}
_ALL_IN_PLACE = {"+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv,
                 "//": operator.ifloordiv, "%": operator.imod, "**": operator.ipow, "@": operator.imatmul,
                 "&": operator.iand, "|": operator.ior, "^": operator.ixor, "<<": operator.ilshift,
                 ">>": operator.irshift}
_TENSOR_BINOPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "remainder", "**": "pow"}
_CMPOPS = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
           ">=": operator.ge}
_TENSOR_IOPS = {"+": "__iadd__", "-": "__isub__", "*": "__imul__", "/": "__itruediv__", "//": "__ifloordiv__",
                "%": "__imod__", "**": "__ipow__", "&": "__iand__", "|": "__ior__", "^": "__ixor__",
                "<<": "__ilshift__", ">>": "__irshift__", "@": "__imatmul__"}
_TENSOR_BITWISE = {"&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor", "<<": "bitwise_left_shift",
                   ">>": "bitwise_right_shift"}
_TENSOR_CMP = {"<": "lt", "<=": "le", "==": "eq", "!=": "ne", ">": "gt", ">=": "ge"}
# the operator module's functions as the operators they are (operator.add(a, b) is a + b)
OPERATOR_FUNCS = {**{f: ("binary", s) for s, f in _BINOPS.items()}, **{f: ("compare", s) for s, f in _CMPOPS.items()},
                  operator.neg: ("unary", "-"), operator.pos: ("unary", "+"), operator.invert: ("unary", "~"),
                  operator.inv: ("unary", "~")}


_UNKNOWN = object()
# dtypes of a 0-d tensor that indexes a list as Python would (its __index__)
_INDEX_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def _identity_eq(a, b, depth=0):
    """a == b where Python decides it without comparing tensors' values: identical objects (its identity
    shortcut), constants, objects whose types keep object's __eq__ (identity), and tuples or lists of
    those compared item by item up to the first unequal pair. _UNKNOWN where a tensor's value would
    decide it."""
    if a is b:
        return True
    if isinstance(a, (TensorVar, torch.Tensor)) or isinstance(b, (TensorVar, torch.Tensor)) or depth > 8:
        return _UNKNOWN
    if is_constant(a) and is_constant(b) and not isinstance(a, (tuple, list)) and not isinstance(b, (tuple, list)):
        return a == b
    for base in (tuple, list):
        if isinstance(a, base) and isinstance(b, base):
            if any(getattr(type(v), m) is not getattr(base, m) for v in (a, b) for m in ("__eq__", "__ne__")):
                return _UNKNOWN
            if len(a) != len(b):
                return False
            for x, y in zip(a, b):
                r = _identity_eq(x, y, depth + 1)
                if r is not True:
                    return r
            return True
    # object's __eq__: identity (they are not the same object); None's is identity too (on Python 3.12
    # NoneType has comparison slots of its own)
    if all(getattr(type(v), m) is getattr(object, m) for v in (a, b) if v is not None for m in ("__eq__", "__ne__")):
        return False
    return _UNKNOWN


def _numpy_number(v):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(v, (np.floating, np.integer))


class OperatorOps:
    # -- operators
    def binary(self, sym, a, b):
        if isinstance(a, TensorVar) or isinstance(b, TensorVar):
            o = self.tr.ops
            if sym in _BINOPS:
                (a, b), _ = cast_arguments(self, _BINOPS[sym], [a, b], {})  # under autocast: its casts
            if sym == "/":
                return o.truediv_operator(a, b)
            if sym in _TENSOR_BINOPS:
                return o.binary(_TENSOR_BINOPS[sym], a, b)
            if sym == "@":
                return o.matmul(a, b)
            if sym in _TENSOR_BITWISE:
                return o.binary(_TENSOR_BITWISE[sym], a, b)
            if sym == "//":
                return o.div(a, b, "floor")  # eager's floor division, integer and float
            self.fail(f"tensor operator {sym}")
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            self.fail("operator on a real tensor")
        r = _BINOPS[sym](a, b)
        if type(r) in (list, dict, set) and r is not a and r is not b:
            self._created(r)  # `xs + [y]`, `d | e`: a new container the traced code may change
        return r

    def op_BINARY_OP(self, inst):
        b, a = self.pop(), self.pop()
        sym = inst.argrepr
        if isinstance(a, TensorVar) and isinstance(b, Opaque) and _numpy_number(b.value):
            b = b.value.item()  # Tensor's operators take a numpy number as the Python number it holds
        if self.opaque_operands(a, b):  # numpy arithmetic after `.numpy()`: one op at a break
            fn = _ALL_IN_PLACE[sym[:-1]] if sym.endswith("=") and sym[:-1] in _ALL_IN_PLACE else _BINOPS[sym]
            self.push(self.call_or_break(inst, fn, [a, b], {}))
            return
        if sym.endswith("=") and sym not in ("==", "<=", ">=", "!="):
            sym = sym[:-1]
            if isinstance(a, TensorVar):
                self.push(self.inplace_binary(sym, a, b))
                return
            if type(a) in (list, dict, set) and sym in ("+", "|", "&", "-", "^") and \
                    not isinstance(b, TensorVar) and (type(a) is not list or sym == "+"):
                # list +=, dict |=, set |= &= -= ^= change the container itself (aliases see it)
                if id(a) not in self.tr.created:
                    self.mutate(a, f"in-place operator on a {type(a).__name__} not created here")
                if not isinstance(b, SymGenerator) and hasattr(type(b), "__next__") and id(b) not in self.tr.created:
                    self.fail(f"in-place operator with a {type(b).__name__}")
                self.push(_IN_PLACE[sym](a, b))
                return
        self.push(self.binary(sym, a, b))

    def opaque_operands(self, a, b):
        """An operator on a numpy value (opaque to capture) in the top frame with breaks allowed: it
        breaks the graph like a call (Python computes it, the frame resumes after it), instead of
        ending the capture there."""
        return not self.depth and self.tr.allow_breaks and (isinstance(a, Opaque) or isinstance(b, Opaque))

    def inplace_binary(self, sym, a, b):
        """a op= b on a tensor: Tensor.__iadd__ and friends update a in place (a operator torch.Tensor has
        no in-place form for, like @=, rebinds the name to a new tensor)."""
        name = _TENSOR_IOPS.get(sym)
        if name is None or not hasattr(torch.Tensor, name):
            return self.binary(sym, a, b)
        new = self.binary(sym, a, b)
        return inplace(self.tr.ops, a, new, lambda s: getattr(s, name)(metas(b)), b)

    def op_BINARY_SUBSCR(self, inst):
        idx, obj = self.pop(), self.pop()
        if self.depth or not self.tr.allow_breaks:
            self.push(self.subscr(obj, idx))
            return
        # in the top frame, an index dyn cannot capture (a __getitem__ that breaks inside, an indexing
        # op without a graph form) breaks the graph like a call: Python indexes, the frame resumes
        self.push(self.call_or_break(inst, operator.getitem, [obj, idx], {}))

    def op_BINARY_SLICE(self, inst):
        end, start, obj = self.pop(), self.pop(), self.pop()
        self.push(self.subscr(obj, slice(start, end)))

    def subscr(self, obj, idx):
        if isinstance(obj, Opaque):
            self.fail(f"indexing a {type(obj.value).__name__}")
        if isinstance(obj, TensorVar):
            return getitem(self.tr.ops, obj, idx)
        if isinstance(idx, TensorVar) and isinstance(obj, (list, tuple)) and idx.meta.dtype in _INDEX_DTYPES \
                and idx.meta.dim() == 0:
            value = self.tr.ops.constant_value(idx)  # torch.as_tensor(2): made from constants, no data read
            if value is not None:
                idx = int(value)
        if _contains_tensor(idx):
            self.fail("indexing with a tensor")
        self.tr.uses_identity(idx)  # a key
        if isinstance(obj, torch.nn.Module):
            self.guard_module_structure(obj)
        if type(obj) is defaultdict and id(obj) in self.tr.created and idx not in obj:
            return self._created(obj[idx])  # made by its (builtin) default factory: the traced code's
        getitem_fn = getattr(type(obj), "__getitem__", None)
        if isinstance(getitem_fn, types.FunctionType) and not is_torch_code(getitem_fn):
            return self.call(getitem_fn, [obj, idx], {})  # a __getitem__ in Python: inlined
        try:
            v = obj[idx]
        except (KeyError, IndexError) as e:
            raise TracedException(e)  # as eager raises it (a try block of the traced code may catch it)
        if type(v) is list and type(idx) is slice:
            self._created(v)  # a slice of a list is a new list (mutating it changes nothing else)
        src = self.tr.sources.get(id(obj))
        if src is None and type(obj) in (list, dict, OrderedDict) and id(obj) not in self.tr.created and \
                not holds_internal(obj, self.tr):
            src = self.tr.sources[id(obj)] = ("obj", obj)  # a container not reached from an argument
            self.tr.keep.append(obj)
        if src is None:
            return self.tr.wrap(v) if isinstance(v, torch.Tensor) else v
        # an item of an object reached from an argument or a global (ModuleList, ModuleDict, a config
        # dict): re-read through the same path at every call and guarded
        step = idx if type(idx) is int else ("item", idx) if type(idx) is str else None
        if step is None:
            if isinstance(v, torch.Tensor) or _contains_real_tensor(v):
                self.fail("tensor taken from a container with a non-constant index")
            return v
        path = src + (step,)
        if isinstance(v, torch.Tensor):
            return self.tr.tensor_input(v, path)
        self.tr.guard_value(path, v)
        if is_constant(v) and type(v) is not list:  # a list: its traced copy (it may change)
            return v
        return self.tr.wrap(v, path)

    def unary(self, sym, v):
        if isinstance(v, TensorVar):
            if sym == "-":
                return self.tr.ops.unary("neg", v)
            if sym == "+":
                return v
            if sym == "~" and v.meta.dtype == torch.bool:
                return self.tr.ops.unary("logical_not", v)
            if sym == "~" and not v.meta.dtype.is_floating_point:
                return self.tr.ops.unary("bitwise_not", v)
            self.fail(f"tensor unary operator {sym}")
        return {"-": operator.neg, "+": operator.pos, "~": operator.invert}[sym](v)

    def op_UNARY_NEGATIVE(self, inst):
        self.push(self.unary("-", self.pop()))

    def op_UNARY_POSITIVE(self, inst):
        self.push(self.unary("+", self.pop()))

    def op_UNARY_INVERT(self, inst):
        self.push(self.unary("~", self.pop()))

    def op_UNARY_NOT(self, inst):
        self.push(not self.truth(self.pop()))

    def truth(self, v):
        if isinstance(v, TensorVar):
            self.fail("data-dependent control flow (bool of a tensor)")
        if isinstance(v, torch.Tensor):
            self.fail("bool of a real tensor")
        return bool(v)

    def op_COMPARE_OP(self, inst):
        b, a = self.pop(), self.pop()
        if self.opaque_operands(a, b):
            self.push(self.call_or_break(inst, _CMPOPS[inst.argval], [a, b], {}))
            return
        self.tr.uses_identity(a, b)
        self.push(self.compare(inst.argval, a, b))

    def compare(self, sym, a, b):
        if isinstance(a, TensorVar) or isinstance(b, TensorVar):
            return self.tr.ops.binary(_TENSOR_CMP[sym], a, b)
        if holds_internal(a, self.tr) or holds_internal(b, self.tr):
            r = _identity_eq(a, b) if sym in ("==", "!=") else _UNKNOWN
            if r is not _UNKNOWN:
                return r if sym == "==" else not r
            # Python compares the items: tensors by value (eager), placeholders by identity (here)
            self.fail(f"comparing a {type(a).__name__} and a {type(b).__name__} that hold tensors")
        return _CMPOPS[sym](a, b)

    def op_IS_OP(self, inst):
        b, a = self.pop(), self.pop()
        if not any(x is None or x is True or x is False or x is Ellipsis for x in (a, b)):
            # `obj is None`: decided by obj's type, which is guarded already (a new cache object of
            # the same type each call must not recompile); `a is b` of two objects: by their identity
            self.tr.uses_identity(a, b)
        self.push((a is not b) if inst.arg else (a is b))

    def op_CONTAINS_OP(self, inst):
        b, a = self.pop(), self.pop()
        self.tr.uses_identity(a)
        if self.tr.plain_sources and type(b) in (list, tuple, set, frozenset, dict):
            self.tr.uses_identity(*b)  # items compared with a (by identity where they have no __eq__)
        if isinstance(a, TensorVar) and type(b) in (set, frozenset, dict) and id(b) in self.tr.created:
            # tensors hash by identity: membership in a set or dict made here is identity, as in eager
            # (in a list eager would compare values)
            r = a in b
            self.push((not r) if inst.arg else r)
            return
        if isinstance(b, TensorVar) or isinstance(a, TensorVar):
            self.fail("'in' with a tensor")
        if isinstance(b, (list, tuple)) and (holds_internal(a, self.tr) or holds_internal(b, self.tr)):
            # Python compares the items in order and stops at the first equal one
            r = False
            for item in b:
                r = _identity_eq(item, a)
                if r is not False:
                    break
            if r is _UNKNOWN:
                self.fail("'in' on a list that holds tensors (eager compares them by value)")
            self.push((not r) if inst.arg else r)
            return
        if isinstance(b, torch.nn.Module):
            self.guard_module_structure(b)
        elif isinstance(b, (Opaque, SymGenerator)) or hasattr(type(b), "__next__") and id(b) not in self.tr.created:
            self.fail(f"'in' on a {type(b).__name__}")
        elif isinstance(getattr(type(b), "__contains__", None), types.FunctionType):
            r = self.truth(self.call(type(b).__contains__, [b, a], {}))
            self.push((not r) if inst.arg else r)
            return
        r = a in b
        self.push((not r) if inst.arg else r)
