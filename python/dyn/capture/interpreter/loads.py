"""Loads and stores: locals, cells, globals, attributes and items (Frame mixin)."""
import sys
import types

import torch

from ...ops import METHODS, TENSOR_ATTRS, TensorVar
from ...ops.handlers import setitem
from ..paths import _attr_steps
from ..values import NULL, BoundTensorMethod, Opaque, OpaqueMethod, _Null, is_constant
from .signals import PY312, GraphBreak

# attributes of these are taken as stable (no guard): Python modules (torch.float32, math.pi),
# classes, functions
_UNGUARDED_OWNERS = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                     super)



# top-level packages whose modules, classes and functions dyn takes as fixed (their attributes are not
# guarded): the standard library and the numeric stack; everything else is user code
_TRUSTED_PACKAGES = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "scipy", "dyn", "typing_extensions"}



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
            v = self.tr.external(v)
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
            v = self.tr.external(v)
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
        method = PY312 and (inst.arg & 1)
        v = self.getattr(obj, inst.argval)
        if method:
            self.push(NULL)
        self.push(v)

    def op_LOAD_METHOD(self, inst):
        obj = self.pop()
        self.push(NULL)
        self.push(self.getattr(obj, inst.argval))

    def getattr(self, obj, name):
        if isinstance(obj, TensorVar):
            if name in TENSOR_ATTRS:
                return TENSOR_ATTRS[name](self.tr.ops, obj)
            if name in METHODS or callable(getattr(torch.Tensor, name, None)):
                return BoundTensorMethod(obj, name)
            self.fail(f"Tensor attribute or method {name!r}")
        if obj is NULL:
            self.fail("attribute of NULL")
        if isinstance(obj, Opaque):
            return OpaqueMethod(obj, name)
        prop = getattr(type(obj), name, None)
        if type(prop) is property and isinstance(prop.fget, types.FunctionType) and \
                not (prop.fget.__module__ or "").startswith(("torch", "dyn")):
            return self.call(prop.fget, [obj], {})  # a user property: its getter is inlined
        v = getattr(obj, name)
        src = self.tr.sources.get(id(obj))
        if src is None and id(obj) in self.tr.traced:  # a field of a traced namedtuple: its traced item
            return v
        if src is None and isinstance(obj, (types.ModuleType, type, types.FunctionType)) and _user_owner(obj):
            src = self.source_of(obj)  # a user module, class or function: what is read off it is guarded
        if src is None and not isinstance(obj, _UNGUARDED_OWNERS) and not is_constant(obj) and \
                id(obj) not in self.tr.created and not isinstance(obj, (BoundTensorMethod, _Null)):
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
            if is_constant(v) or isinstance(v, (types.MethodType, types.FunctionType, types.BuiltinFunctionType)):
                return v
            return self.tr.wrap(v, path)
        if isinstance(v, torch.Tensor):
            return self.tr.wrap(v)
        return v

    def op_STORE_ATTR(self, inst):
        obj, value = self.pop(), self.pop()
        if isinstance(obj, (TensorVar, Opaque)):
            self.fail("attribute assignment on a tensor")
        if id(obj) in self.tr.created:
            if type(obj) not in self.tr.created_classes:
                self.fail(f"attribute assignment on a {type(obj).__name__} made while capturing")
            if hasattr(getattr(type(obj), inst.argval, None), "__set__"):
                self.fail(f"assignment to the property {type(obj).__name__}.{inst.argval}")
            object.__setattr__(obj, inst.argval, value)  # an instance of a user class made here
            return
        self.side_effect(inst, "attribute assignment (side effect)", ("attr", obj, inst.argval, value))

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
        if id(obj) not in self.tr.created:
            self.fail("item assignment (mutation)")
        obj[key] = value

    def op_DELETE_SUBSCR(self, inst):
        key, obj = self.pop(), self.pop()
        if isinstance(obj, TensorVar) or id(obj) not in self.tr.created:
            self.fail("item deletion (mutation)")
        del obj[key]

    def op_DELETE_ATTR(self, inst):
        obj = self.pop()
        if isinstance(obj, (TensorVar, Opaque)):
            self.fail("attribute deletion on a tensor")
        if id(obj) in self.tr.created:
            if type(obj) not in self.tr.created_classes or hasattr(getattr(type(obj), inst.argval, None), "__delete__"):
                self.fail(f"attribute deletion on a {type(obj).__name__} made while capturing")
            object.__delattr__(obj, inst.argval)
            return
        self.side_effect(inst, "attribute deletion (side effect)", ("delattr", obj, inst.argval, None))

    def op_DELETE_GLOBAL(self, inst):
        self.side_effect(inst, "deletion of a global", ("delglobal", self.globals, inst.argval, None))

    def op_STORE_SLICE(self, inst):  # 3.12: container[start:end] = value
        end, start, obj, value = self.pop(), self.pop(), self.pop(), self.pop()
        key = slice(start, end)
        if isinstance(obj, TensorVar):
            setitem(self.tr.ops, obj, key, value)
            return
        if id(obj) not in self.tr.created:
            self.fail("item assignment (mutation)")
        obj[key] = value

    def op_IMPORT_NAME(self, inst):
        fromlist, level = self.pop(), self.pop()
        self.push(__import__(inst.argval, self.globals, None, fromlist, level))

    def op_IMPORT_FROM(self, inst):
        self.push(getattr(self.stack[-1], inst.argval))


def _user_owner(obj):
    mod = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    return isinstance(mod, str) and mod.partition(".")[0] not in _TRUSTED_PACKAGES
