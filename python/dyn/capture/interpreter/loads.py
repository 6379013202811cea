"""Loads and stores: locals, cells, globals, attributes and items (Frame mixin)."""
import sys
import types

import torch

from ...errors import Unsupported
from ...ops import METHODS, TENSOR_ATTRS, TensorVar
from ...ops.handlers import setitem
from ..origins import is_torch_code
from ..paths import _attr_steps
from ..values import NULL, BoundTensorMethod, Opaque, OpaqueMethod, _Null, holds_internal, is_constant
from .attributes import _MISSING
from .signals import PY312, GraphBreak, Restart, TracedException

# attributes of these are taken as stable (no guard): Python modules (torch.float32, math.pi),
# classes, functions
_UNGUARDED_OWNERS = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                     super)



# top-level packages whose modules, classes and functions dyn takes as fixed (their attributes are not
# guarded): the standard library and the numeric stack; everything else is user code
_TRUSTED_PACKAGES = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "scipy", "dyn", "typing_extensions"}

# values whose attributes are fixed (setting one raises)
_FIXED_TYPES = (int, float, bool, complex, str, bytes, type(None))



class LoadStoreOps:
    # -- no-ops
    def op_NOP(self, inst):
        pass

    op_RESUME = op_CACHE = op_PRECALL = op_EXTENDED_ARG = op_NOP

    def op_PUSH_NULL(self, inst):
        self.push(NULL)

    def op_KW_NAMES(self, inst):
        self.kw_names = self.code.co_consts[inst.arg]

    # -- loads/stores
    def op_LOAD_CONST(self, inst):
        self.push(inst.argval)

    def op_LOAD_FAST(self, inst):
        name = inst.argval
        if name not in self.locals:
            self.fail(f"local {name!r} referenced before assignment")
        self.push(self.locals[name])

    op_LOAD_FAST_CHECK = op_LOAD_FAST

    def op_LOAD_FAST_AND_CLEAR(self, inst):
        self.push(self.locals.pop(inst.argval, NULL))

    def op_STORE_FAST(self, inst):
        v = self.pop()
        if v is NULL:
            self.locals.pop(inst.argval, None)
        else:
            self.locals[inst.argval] = v

    def op_DELETE_FAST(self, inst):
        self.locals.pop(inst.argval, None)

    def op_MAKE_CELL(self, inst):
        name = inst.argval
        if name in self.locals:
            cell = types.CellType(self.locals.pop(name))
        else:
            cell = types.CellType()
        self.cells[name] = self._created(cell)

    def op_COPY_FREE_VARS(self, inst):
        closure = self.func.__closure__ or ()
        for name, cell in zip(self.code.co_freevars, closure):
            self.cells[name] = cell

    def op_LOAD_CLOSURE(self, inst):
        self.push(self.cells[inst.argval])

    def op_LOAD_DEREF(self, inst):
        cell = self.cells.get(inst.argval)
        if cell is None:
            self.fail(f"free variable {inst.argval!r}")
        try:
            v = cell.cell_contents
        except ValueError:
            self.fail(f"free variable {inst.argval!r} referenced before assignment")
        if inst.argval in self.code.co_freevars and id(cell) not in self.tr.created:
            self.tr.guard_cell(cell, v)
            self.tr.mutable_source(v, ("obj", cell, "cell_contents"))
            v = self.tr.external(v, ("obj", cell, "cell_contents"))
        self.push(self.tr.wrap(v) if isinstance(v, torch.Tensor) else v)

    def op_STORE_DEREF(self, inst):
        v = self.pop()
        if self.depth == 0 and inst.argval in self.code.co_freevars:
            self.fail("assignment to an enclosing function's variable")
        self.cells[inst.argval].cell_contents = v

    def op_LOAD_GLOBAL(self, inst):
        if inst.arg & 1:
            self.push(NULL)
        name = inst.argval
        if name in self.globals:
            v = self.globals[name]
            self.tr.guard_global(self.globals, name, v)
            self.tr.mutable_source(v, ("obj", self.globals, ("item", name)))
            v = self.tr.external(v, ("obj", self.globals, ("item", name)))
        elif name in self.builtins:
            v = self.builtins[name]
        else:
            self.fail(f"name {name!r} is not defined")
        self.push(self.tr.wrap(v) if isinstance(v, torch.Tensor) else v)

    def op_LOAD_NAME(self, inst):
        self.fail("LOAD_NAME (module-level code)")

    def op_STORE_GLOBAL(self, inst):
        self.side_effect(inst, "assignment to a global", ("global", self.globals, inst.argval, self.pop()))

    def op_LOAD_ATTR(self, inst):
        obj = self.pop()
        if PY312 and (inst.arg & 1):
            self.push(NULL)  # the method form: NULL, then the attribute (a call of it follows)
        try:
            self.push(self.attr_or_break(inst, obj, inst.argval))
        except AttributeError as e:
            if (isinstance(obj, type) and obj.__module__ == "builtins") or type(obj) in _FIXED_TYPES:
                # a builtin type or value never gains attributes: raised as eager raises it (a try
                # block of the traced code may catch it)
                raise TracedException(e)
            raise

    def op_LOAD_METHOD(self, inst):
        obj = self.pop()
        self.push(NULL)
        self.push(self.attr_or_break(inst, obj, inst.argval))

    def attr_or_break(self, inst, obj, name):
        """obj.name; in the top frame with breaks allowed, a read whose traced code breaks inside (a
        user property's getter calling a logger) ends the graph like a call: Python makes the read (the
        getter as a frame of its own, captured) and the frame resumes after it. The first failure
        restarts the capture so that nothing of the failed read is kept."""
        tr = self.tr
        if self.depth or not tr.allow_breaks or holds_internal(obj, tr) or self.handled(inst.offset):
            return self.getattr(obj, name)  # (a failure there: the rest of the frame runs eagerly)
        why = tr.break_at.get(inst.offset)
        if why is not None:
            prop = _user_property(obj, name)
            call = (prop.fget, (obj,), {}) if prop is not None else (getattr, (obj, name), {})
            here = self.index_of[inst.offset]
            raise GraphBreak(self, why, inst.offset, call=call, targets=(self.insts[here + 1].offset,))
        try:
            return self.getattr(obj, name)
        except Unsupported as e:
            raise Restart(inst.offset, e.locate(self.code.co_filename, self.lineno))

    def getattr(self, obj, name):
        np = sys.modules.get("numpy")
        if np is not None and type(obj) in (np.iinfo, np.finfo):
            return self.tr.wrap(getattr(obj, name))  # a dtype's limits: constants (numpy scalars stay opaque)
        if not isinstance(obj, (TensorVar, Opaque, _Null)):
            v = self.pending_attr(obj, name)  # the object's attributes as the traced code left them
            if v is not _MISSING:
                return v
        return self.generic_getattr(obj, name)

    def generic_getattr(self, obj, name):
        if isinstance(obj, TensorVar):
            if name in TENSOR_ATTRS:
                return TENSOR_ATTRS[name](self.tr.ops, obj)
            if name == "__class__":  # (a class is callable: not a method)
                return self.type_of(obj)
            if name in METHODS or callable(getattr(torch.Tensor, name, None)):
                return BoundTensorMethod(obj, name)
            if name == "grad":
                return self.grad_of(obj)
            self.fail(f"Tensor attribute or method {name!r}")
        if obj is NULL:
            self.fail("attribute of NULL")
        if isinstance(obj, Opaque):
            return OpaqueMethod(obj, name)
        prop = _user_property(obj, name)
        if prop is not None:
            return self.call(prop.fget, [obj], {})  # a user property: its getter is inlined
        try:
            v = getattr(obj, name)
        except AttributeError:
            if not isinstance(obj, _UNGUARDED_OWNERS) or _user_owner(obj):
                self.absent(obj, name)  # what ran depends on the attribute staying missing
            raise
        if name == "__dict__" and type(v) is dict and id(obj) in self.tr.created:
            return self._created(v)  # the attributes of an object made here: changed on it, copied as its own
        src = self.tr.sources.get(id(obj))
        if src is None and id(obj) in self.tr.traced:  # a field of a traced namedtuple: its traced item
            return v
        if src is None and isinstance(obj, (types.ModuleType, type, types.FunctionType)) and _user_owner(obj):
            src = self.source_of(obj)  # a user module, class or function: what is read off it is guarded
        if src is None and not isinstance(obj, _UNGUARDED_OWNERS) and not is_constant(obj) and \
                id(obj) not in self.tr.created and not isinstance(obj, (BoundTensorMethod, _Null)) and \
                not holds_internal(obj, self.tr):
            # an object not reached from an argument (a global config, a module met while iterating a
            # Sequential): its attributes are re-read from the object at every call and guarded like
            # argument attributes
            src = self.tr.sources[id(obj)] = ("obj", obj)
            self.tr.keep.append(obj)
        if src is not None:
            path = src + _attr_steps(obj, name)
            if isinstance(v, torch.Tensor):
                return self.tr.tensor_input(v, path)
            self.tr.guard_value(path, v, obj)
            if (is_constant(v) and type(v) is not list) or isinstance(v, (types.MethodType, types.FunctionType, types.BuiltinFunctionType)):
                return v
            return self.tr.wrap(v, path)
        if isinstance(v, torch.Tensor):
            return self.tr.wrap(v)
        return v

    def op_STORE_ATTR(self, inst):
        obj, value = self.pop(), self.pop()
        self.store_or_break(inst, obj, value)

    def store_or_break(self, inst, obj, value):
        """A store (or deletion, value None) on an object made here or recorded as a side effect; one that
        cannot be captured breaks the graph in the top frame and Python makes it. If it recorded writes
        before failing (an inlined __setattr__), the capture restarts to break before it cleanly."""
        kind = "attr" if inst.opname == "STORE_ATTR" else "delattr"
        if self.depth == 0 and self.tr.allow_breaks and inst.offset in self.tr.break_at:
            self.side_effect(inst, self.tr.break_at[inst.offset].reason, (kind, obj, inst.argval, value))
        version = self.tr.side.version
        try:
            if kind == "attr":
                self.store_attr(obj, inst.argval, value)  # on an object made here, or recorded (side_effects)
            else:
                self.delete_attr(obj, inst.argval)
        except Unsupported as e:
            if isinstance(obj, (TensorVar, Opaque)) or id(obj) in self.tr.created or self.depth or \
                    not self.tr.allow_breaks or self.handled(inst.offset):
                raise
            if self.tr.side.version != version:
                raise Restart(inst.offset, e.locate(self.code.co_filename, self.lineno))
            self.side_effect(inst, e.reason, (kind, obj, inst.argval, value))

    def side_effect(self, inst, why, store):
        """A store Python must make (to an attribute or a global): in the top frame the graph breaks
        here; the runner makes the store with real values and the frame resumes after it."""
        if self.depth or not self.tr.allow_breaks or self.handled(inst.offset):
            self.fail(why)
        here = self.index_of[inst.offset]
        raise GraphBreak(self, why, inst.offset, store=store, targets=(self.insts[here + 1].offset,))

    def op_STORE_SUBSCR(self, inst):
        key, obj, value = self.pop(), self.pop(), self.pop()
        if isinstance(obj, TensorVar):
            setitem(self.tr.ops, obj, key, value)
            return
        self.tr.uses_identity(key)
        fn = _python_method(obj, "__setitem__")
        if fn is not None:  # a __setitem__ in Python (transformers' ModelOutput): inlined
            self.call(fn, [obj, key, value], {})
            return
        if id(obj) not in self.tr.created:
            self.mutate(obj, "item assignment (mutation)")
        obj[key] = value

    def op_DELETE_SUBSCR(self, inst):
        key, obj = self.pop(), self.pop()
        if isinstance(obj, TensorVar):
            self.fail("item deletion on a tensor")
        fn = _python_method(obj, "__delitem__")
        if fn is not None:
            self.call(fn, [obj, key], {})
            return
        if id(obj) not in self.tr.created:
            self.mutate(obj, "item deletion (mutation)")
        del obj[key]

    def op_DELETE_ATTR(self, inst):
        self.store_or_break(inst, self.pop(), None)

    def op_DELETE_GLOBAL(self, inst):
        self.side_effect(inst, "deletion of a global", ("delglobal", self.globals, inst.argval, None))

    def op_STORE_SLICE(self, inst):  # 3.12: container[start:end] = value
        end, start, obj, value = self.pop(), self.pop(), self.pop(), self.pop()
        key = slice(start, end)
        if isinstance(obj, TensorVar):
            setitem(self.tr.ops, obj, key, value)
            return
        if id(obj) not in self.tr.created:
            self.mutate(obj, "item assignment (mutation)")
        obj[key] = value

    def op_IMPORT_NAME(self, inst):
        fromlist, level = self.pop(), self.pop()
        self.push(__import__(inst.argval, self.globals, None, fromlist, level))

    def op_IMPORT_FROM(self, inst):
        self.push(getattr(self.stack[-1], inst.argval))


def _python_method(obj, name):
    """type(obj).name when it is written in Python outside torch and dyn (inlined), else None."""
    fn = getattr(type(obj), name, None)
    if isinstance(fn, types.FunctionType) and not is_torch_code(fn):
        return fn
    return None


def _user_property(obj, name):
    """The property obj.name reads when its getter is user or library Python dyn inlines, else None."""
    prop = getattr(type(obj), name, None)
    if type(prop) is property and isinstance(prop.fget, types.FunctionType) and not is_torch_code(prop.fget):
        return prop
    return None


def _user_owner(obj):
    mod = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    return isinstance(mod, str) and mod.partition(".")[0] not in _TRUSTED_PACKAGES
