"""Symbolic bytecode evaluator (the InstructionTranslator): runs a function's CPython 3.11/3.12
bytecode over symbolic values. Tensors are TensorVars (graph nodes over meta tensors); everything
else is a real Python value and constant-folds. Calls into user Python functions and nn.Module
forwards are inlined. Anything unsupported raises Unsupported with the user's file:line."""
import builtins
import copy
import dis
import functools
import math
import operator
import struct
import sys
import types
from collections import OrderedDict

import torch

from .errors import Unsupported
from .graph import Graph
from . import handlers
from .handlers import METHODS, TENSOR_ATTRS, TORCH_FUNCS
from .tensor_ops import Ops, TensorVar

PY312 = sys.version_info >= (3, 12)


class _Null:
    def __repr__(self):
        return "NULL"


NULL = _Null()
MAX_STEPS = 200000
MAX_DEPTH = 40


# attributes of these are taken as stable (no guard): Python modules (torch.float32, math.pi),
# classes, functions
_UNGUARDED_OWNERS = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                     super)


def is_opaque_type(t):
    """Values dyn passes along without looking inside (numpy arrays and numpy scalars that are not
    Python numbers): a graph never depends on them, any use except passing them ends capture."""
    return getattr(t, "__module__", "") == "numpy" and not issubclass(t, (int, float, bool, complex))


class Opaque:
    """Stands for an opaque value during capture. Every operation that would look at it raises, so
    the capture breaks (or falls back) instead of computing with the placeholder."""
    __slots__ = ("value", "__weakref__")

    def __init__(self, value):
        self.value = value

    def _no(self, *a, **k):
        raise TypeError(f"dyn cannot look inside a {type(self.value).__name__}")

    __bool__ = __len__ = __iter__ = __str__ = __format__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = \
        __ge__ = __contains__ = __getitem__ = __call__ = __index__ = __float__ = __int__ = _no
    __hash__ = object.__hash__

    def __repr__(self):
        return f"<opaque {type(self.value).__name__}>"


class OpaqueMethod:
    __slots__ = ("obj", "name")

    def __init__(self, obj, name):
        self.obj, self.name = obj, name


class BoundTensorMethod:
    __slots__ = ("tensor", "name")

    def __init__(self, tensor, name):
        self.tensor, self.name = tensor, name


# builtins that are pure and may be called on constant arguments
_PURE_BUILTINS = {getattr(builtins, n) for n in (
    "len isinstance issubclass range tuple list dict set frozenset int float bool str min max abs "
    "enumerate zip reversed sorted getattr hasattr round divmod pow all any sum iter next slice type "
    "callable repr format hash id ord chr map filter").split()}
_PURE_MODULES = ("math", "operator", "_operator", "itertools", "functools")
# results of pure calls that hold no traced values (everything else a pure call returns is "created")
_REAL_RESULTS = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, torch.finfo, torch.iinfo,
                 torch.no_grad, torch.enable_grad, torch.inference_mode)

_BINOPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
           "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
           "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
           ">>": operator.rshift}
_TENSOR_BINOPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "remainder", "**": "pow"}
_CMPOPS = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
           ">=": operator.ge}
_TENSOR_IOPS = {"+": "__iadd__", "-": "__isub__", "*": "__imul__", "/": "__itruediv__", "//": "__ifloordiv__",
                "%": "__imod__", "**": "__ipow__", "&": "__iand__", "|": "__ior__", "^": "__ixor__",
                "<<": "__ilshift__", ">>": "__irshift__", "@": "__imatmul__"}
_TENSOR_CMP = {"<": "lt", "<=": "le", "==": "eq", "!=": "ne", ">": "gt", ">=": "ge"}
_CONST_TYPES = (int, float, bool, str, type(None), torch.dtype, torch.device, torch.Size, torch.memory_format,
                torch.layout, type(Ellipsis), slice, complex, bytes)


def is_constant(v):
    if isinstance(v, _CONST_TYPES):
        return True
    if isinstance(v, (tuple, list)):
        return all(is_constant(x) for x in v)
    return False


def is_namedtuple(v):
    return isinstance(v, tuple) and type(v) is not tuple and hasattr(type(v), "_fields") and \
        hasattr(type(v), "_make")


def is_constant_value(v, budget=None):
    """is_constant, and also dicts and sets of constants (at most 4096 items in all): values a guard
    compares by equality with a copy."""
    budget = budget if budget is not None else [4096]
    if isinstance(v, _CONST_TYPES):
        return True
    t = type(v)
    if t not in (tuple, list, dict, set, frozenset):
        return False
    budget[0] -= len(v)
    if budget[0] < 0:
        return False
    if t is dict:
        return all(isinstance(k, _CONST_TYPES) and is_constant_value(x, budget) for k, x in v.items())
    return all(is_constant_value(x, budget) for x in v)


def strict_eq(a, b):
    """Equality for guarded constants (the C guards' strict_eq): same types all the way down, so 2 is
    not 2.0 and (2,) is not (2.0,); floats by their bits, so 0.0 is not -0.0 and a NaN matches itself."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return struct.pack("<d", a) == struct.pack("<d", b)
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(strict_eq(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return len(a) == len(b) and all(strict_eq(ka, kb) and strict_eq(va, vb)
                                        for (ka, va), (kb, vb) in zip(a.items(), b.items()))
    return a == b


class Is:
    """Guard value: the object at the guarded path is this very object."""
    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj


class ModuleGuard:
    """Guard value for an inlined module: no hooks on it and forward still resolves to `forward`."""
    __slots__ = ("forward",)

    def __init__(self, forward):
        self.forward = forward

    def check(self, m):
        for name in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks"):
            d = getattr(m, name, None)
            if d is not None and (not isinstance(d, dict) or d):
                return False
        f = getattr(m, "forward", None)
        if isinstance(f, types.MethodType):
            return f.__func__ is self.forward and f.__self__ is m
        return f is self.forward


class Structure:
    """Guard value for a container read during capture: same type, the same keys in order (dict) or
    length, equal constant items and the very same objects elsewhere. Tensors read through the
    container with a path of their own are guarded there (tensors_by_path)."""
    __slots__ = ("type", "keys", "items")

    def __init__(self, v, tensors_by_path):
        self.type = type(v)
        if self.type in (set, frozenset):
            self.keys, self.items = None, set(v)  # set == compares members by == (identity for objects)
            return
        self.keys = list(v) if isinstance(v, dict) else len(v)  # dicts and OrderedDicts: keys in order
        self.items = []
        for x in (v.values() if isinstance(v, dict) else v):
            if tensors_by_path and isinstance(x, torch.Tensor):
                self.items.append((0, None))
            elif is_constant_value(x):
                self.items.append((2, copy.deepcopy(x)))
            else:
                self.items.append((1, x))

    def as_tuple(self):
        """The guard as eval_frame.c's check_structure takes it: (type, keys tuple / length / None,
        items: ((kind, value), ...) or the set's copy)."""
        if self.keys is None:
            return (self.type, None, self.items)
        keys = tuple(self.keys) if issubclass(self.type, dict) else self.keys
        return (self.type, keys, tuple(self.items))

    @staticmethod
    def check_tuple(t, v):
        s = Structure.__new__(Structure)
        s.type, s.keys, s.items = t[0], (list(t[1]) if issubclass(t[0], dict) else t[1]), t[2]
        return s.check(v)

    def check(self, v):
        if type(v) is not self.type:
            return False
        if self.keys is None:
            return v == self.items
        if isinstance(v, dict):
            if len(v) != len(self.keys) or list(v) != self.keys:
                return False
            v = v.values()
        elif len(v) != self.keys:
            return False
        for x, (kind, want) in zip(v, self.items):
            if kind == 1:
                if x is not want:
                    return False
            elif kind == 2 and not strict_eq(x, want):
                return False
        return True


def _contains_real_tensor(v):
    if isinstance(v, torch.Tensor):
        return True
    if type(v) in (tuple, list):
        return any(_contains_real_tensor(x) for x in v)
    if type(v) is dict:
        return any(_contains_real_tensor(x) for x in v.values())
    return False


def _contains_tensor(v):
    if isinstance(v, TensorVar):
        return True
    if isinstance(v, (tuple, list)):
        return any(_contains_tensor(x) for x in v)
    if isinstance(v, dict):
        return any(_contains_tensor(x) for x in v.values())
    return False


class Tracer:
    """State of one capture: the graph, its inputs and where they come from, and what was read."""

    def __init__(self, device):
        self.graph = Graph()
        self.ops = Ops(self)
        self.device = device
        self.input_vars = {}   # id(real tensor) -> TensorVar
        self.input_tensors = []  # real tensors, in graph input order
        self.input_sources = []  # per graph input: ('arg', i, *attrs) or ('obj', tensor)
        self.sources = {}      # id(obj) -> source path of non-tensor objects reached from arguments
        self.keep = []         # keep objects alive while their ids are keys
        self.attr_guards = []  # (path, value) of constants read off argument objects
        self.created = set()   # ids of containers created during tracing (safe to mutate)
        self.steps = 0
        self.allow_breaks = False
        self.global_guards = []  # (globals dict or closure cell, name or None, value read)
        self.global_keys = set()
        self.break_at = {}  # offset of a top-frame call -> Unsupported: break the graph there
        self.eager_at = {}  # offset of a top-frame instruction -> Unsupported: the rest runs eagerly from it
        self.mutations = {}  # graph input index -> its TensorVar, for inputs updated in place
        self.grad_mutations = set()  # inputs updated by an op autograd records (not running statistics)
        self.input_aliases = []  # (source, input index): an input reached again through another source
        self.traced = set()  # ids of the traced copies wrap() made of real containers
        self.reads_grad_mode = False  # the graph depends on the caller's grad mode (guarded when set)
        self.grad_modes = []  # grad mode set by the `with torch.no_grad()/enable_grad()` blocks entered
        self.mutation_spans = None  # (bytes spanned per input, inputs updated in place), set by the frontend
        self.index_bounds = []  # (input index, lo, hi): index inputs whose values must lie in [lo, hi)
        self.created_classes = set()  # user classes instantiated while capturing

    def grad_enabled(self):
        """The grad mode the traced code runs under: its own with-block's, else the caller's (read)."""
        if self.grad_modes:
            return self.grad_modes[-1]
        self.reads_grad_mode = True
        return torch.is_grad_enabled()

    def guard_global(self, d, name, v):
        key = (id(d), name)
        if key not in self.global_keys:
            self.global_keys.add(key)
            self.global_guards.append((d, name, v))

    def guard_cell(self, cell, v):
        key = (id(cell), None)
        if key not in self.global_keys:
            self.global_keys.add(key)
            self.global_guards.append((cell, None, v))

    def guard_value(self, path, v, owner=None):
        """Guards what was read at `path`: constants by equality, other objects by identity (a method
        bound to the owner by its function: a new method object is made at every attribute read)."""
        if isinstance(v, TensorVar) or id(v) in self.traced:
            return  # already traced from its source (a traced container has its Structure guard)
        bound_here = owner is not None and getattr(v, "__self__", None) is owner
        if is_constant(v):
            self.attr_guards.append((path, v))
        elif isinstance(v, types.MethodType) and bound_here:
            self.attr_guards.append((path + ("__func__",), Is(v.__func__)))
        elif isinstance(v, types.BuiltinMethodType) and bound_here:
            pass  # a method of the owner's type (the owner's guard covers its type)
        elif not isinstance(v, torch.Tensor):
            self.attr_guards.append((path, Is(v)))

    def external(self, v):
        """A global or closure value: tensors become graph inputs; containers are traced item by item
        with their items guarded (the variable itself is guarded by the caller)."""
        if isinstance(v, torch.Tensor):
            return self.wrap(v)
        if type(v) in (list, tuple, dict, OrderedDict) and not is_constant_value(v):
            return self.wrap(v, ("obj", v))
        return v

    def tensor_input(self, t, source):
        v = self.input_vars.get(id(t))
        if v is not None:
            if source is not None and not _same_source(source, self.input_sources[v.input_index]):
                self.input_aliases.append((source, v.input_index))
            return v
        if type(t) not in (torch.Tensor, torch.nn.Parameter) or t.layout != torch.strided:
            raise Unsupported(f"unsupported tensor type {type(t).__name__}")
        if t.device != self.device:
            raise Unsupported(f"tensor on {t.device} while capturing for {self.device}")
        if t.is_complex() or t.dtype not in (torch.float32, torch.float64, torch.float16, torch.bfloat16,
                                             torch.int64, torch.int32, torch.bool):
            raise Unsupported(f"dtype {t.dtype}")
        meta = torch.empty(t.shape, dtype=t.dtype, device="meta")
        node = self.graph.add_input(meta, _source_str(source))
        v = TensorVar(self, node)
        v.input_index = node.index
        self.input_vars[id(t)] = v
        self.input_tensors.append(t)
        self.input_sources.append(source if source is not None else ("obj", t))
        self.keep.append(t)
        return v

    def wrap(self, value, source=None):
        """A real value entering the trace (argument, attribute, global)."""
        if isinstance(value, torch.Tensor):
            return self.tensor_input(value, source)
        if id(value) in self.traced:
            return value
        if source is not None and (type(value) in (tuple, list, dict, OrderedDict, set, frozenset) or
                                   is_namedtuple(value)) and \
                not is_constant(value) and not (_in_argument(source) and (
                    type(value) in (tuple, list) or is_namedtuple(value) or _contains_real_tensor(value))):
            # a container reached through an attribute, item or global: its length, keys and items are
            # guarded (argument containers have guards of their own, frontend._container_guard)
            traced = (type(value) in (tuple, list, dict) or is_namedtuple(value)) and len(value) <= 64 and (
                type(value) is not dict or (all(type(k) is str for k in value) and _contains_real_tensor(value)))
            self.attr_guards.append((source, Structure(value, traced)))
        if source is not None and (type(value) in (tuple, list) or is_namedtuple(value)) and \
                not is_constant(value) and len(value) <= 64:
            # a container argument: its items are traced (and guarded) one by one; the list is
            # treated as read-only (mutating it is unsupported)
            items = [self.wrap(x, source + (k,)) for k, x in enumerate(value)]
            if is_namedtuple(value):
                items = type(value)._make(items)
            elif type(value) is tuple:
                items = tuple(items)
            else:
                self.sources[id(items)] = source
            self.traced.add(id(items))
            self.keep.append(items)
            return items
        if source is not None and type(value) is dict and len(value) <= 64 and \
                all(type(k) is str for k in value) and _contains_real_tensor(value):
            d = {k: self.wrap(x, source + (("item", k),)) for k, x in value.items()}
            self.sources[id(d)] = source
            self.traced.add(id(d))
            self.keep.append(d)
            return d
        if is_opaque_type(type(value)):
            op = Opaque(value)
            if source is not None:
                self.sources[id(op)] = source
            self.keep.append(op)
            return op
        if source is not None and type(value) in (list, dict):
            self.sources.setdefault(id(value), source)  # the real container, after a graph break
            self.keep.append(value)
        if source is not None and not is_constant(value) and not isinstance(value, TensorVar):
            if id(value) not in self.sources:
                self.sources[id(value)] = source
                self.keep.append(value)
        return value


def _in_argument(source):
    """The source is an argument or an item of an argument container (guarded by the argument guards)."""
    return source[0] == "arg" and all(type(a) in (int, tuple) for a in source[2:])


def _same_source(a, b):
    return len(a) == len(b) and all(x is y or (type(x) in (str, int, tuple) and type(x) is type(y) and x == y)
                                    for x, y in zip(a, b))


def _steps_str(steps):
    """Path steps as Python source: .attr, [index], ['key']; a module's _parameters/_buffers/_modules
    item reads as the attribute it is (.weight)."""
    out, k = [], 0
    while k < len(steps):
        a = steps[k]
        if a in _MODULE_DICTS and k + 1 < len(steps) and isinstance(steps[k + 1], tuple):
            out.append("." + str(steps[k + 1][1]))
            k += 2
            continue
        out.append(f"[{a}]" if isinstance(a, int) else f"[{a[1]!r}]" if isinstance(a, tuple) else "." + a)
        k += 1
    return "".join(out)


def _source_str(src):
    if src is None or (src[0] == "obj" and len(src) == 2):
        return "<tensor constant>"
    if src[0] == "obj":
        return f"<{type(src[1]).__name__}>" + _steps_str(src[2:])
    if src[0] == "arg":
        return f"arg{src[1]}" + _steps_str(src[2:])
    return str(src)


# errors a handler may raise on inputs it cannot capture: reported as unsupported, never propagated
_CAPTURE_ERRORS = (TypeError, ValueError, IndexError, KeyError, AttributeError, RuntimeError, OverflowError,
                   NotImplementedError, ZeroDivisionError, AssertionError)


class Frame:
    """Symbolic execution of one code object."""

    def __init__(self, tracer, func, args, kwargs, depth=0, bound_locals=None, generator=False):
        self.tr = tracer
        self.func = func
        self.code = func.__code__
        self.depth = depth
        if depth > MAX_DEPTH:
            raise Unsupported("inlining too deep (recursion?)")
        co = self.code
        if co.co_flags & (0x80 | 0x200 | 0x100) or (co.co_flags & 0x20 and not generator):  # coroutine/async
            raise Unsupported(f"generator or coroutine {co.co_name}")
        self.generator = generator
        self.globals = func.__globals__
        self.builtins = self.globals.get("__builtins__", builtins)
        if isinstance(self.builtins, types.ModuleType):
            self.builtins = self.builtins.__dict__
        self.locals = bound_locals if bound_locals is not None else self._bind(func, args, kwargs)
        self.cells = {}
        self.stack = []
        self.kw_names = None
        self.insts = list(dis.get_instructions(co))
        self.index_of = {inst.offset: i for i, inst in enumerate(self.insts)}
        self._handled = None
        self.lineno = co.co_firstlineno

    def _bind(self, func, args, kwargs):
        import inspect
        co = func.__code__
        nargs = co.co_argcount + co.co_kwonlyargcount + bool(co.co_flags & 0x04) + bool(co.co_flags & 0x08)
        if not kwargs and not (co.co_flags & 0x04) and co.co_kwonlyargcount == 0 and \
                len(args) == co.co_argcount:
            return dict(zip(co.co_varnames, args))
        try:
            sig = inspect.signature(func, follow_wrapped=False)
            ba = sig.bind(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise Unsupported(f"cannot bind arguments of {co.co_name}: {e}")
        ba.apply_defaults()
        return {n: ba.arguments[n] for n in co.co_varnames[:nargs] if n in ba.arguments}

    def fail(self, reason):
        raise Unsupported(reason, self.code.co_filename, self.lineno)

    def handled(self, offset):
        """Whether an exception at offset is caught in this frame (a try body, a with block): a call,
        store or branch there must be made inside the frame's own code, never by a graph-break runner."""
        if self._handled is None:
            self._handled = [(e.start, e.end) for e in dis.Bytecode(self.code).exception_entries]
        return any(a <= offset < b for a, b in self._handled)

    # -- stack helpers
    def pop(self):
        return self.stack.pop()

    def popn(self, n):
        if n == 0:
            return []
        vals = self.stack[-n:]
        del self.stack[-n:]
        return vals

    def push(self, v):
        self.stack.append(v)

    def run(self, pc=0):
        insts = self.insts
        while True:
            self.tr.steps += 1
            if self.tr.steps > MAX_STEPS:
                self.fail("too many instructions")
            inst = insts[pc]
            pos = inst.positions
            if pos is not None and pos.lineno is not None:
                self.lineno = pos.lineno
            op = inst.opname
            handler = getattr(self, "op_" + op, None)
            top = self.depth == 0 and self.tr.allow_breaks
            before = list(self.stack) if top else None
            try:
                if top and inst.offset in self.tr.eager_at:
                    raise self.tr.eager_at[inst.offset]
                if handler is None:
                    self.fail(f"unsupported bytecode {op}")
                try:
                    r = handler(inst)
                except Unsupported as e:
                    raise e.locate(self.code.co_filename, self.lineno)
                except _CAPTURE_ERRORS as e:
                    self.fail(f"{type(e).__name__} while capturing {op}: {e}")
            except Unsupported as e:
                if not top or not self.tr.graph.nodes:
                    raise
                # the graph so far is worth keeping: break before this instruction; the rest of the
                # frame (this instruction included) runs eagerly in a resume function
                self.stack = before
                raise GraphBreak(self, e, inst.offset, targets=(inst.offset,), eager_rest=True)
            if r is None:
                pc += 1
            elif isinstance(r, _Return):
                return r.value
            elif isinstance(r, _Yield):
                r.pc = pc + 1
                return r
            else:
                pc = r

    def jump(self, inst):
        return self.index_of[inst.argval]

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
            handlers.setitem(self.tr.ops, obj, key, value)
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
            handlers.setitem(self.tr.ops, obj, key, value)
            return
        if id(obj) not in self.tr.created:
            self.fail("item assignment (mutation)")
        obj[key] = value

    def op_IMPORT_NAME(self, inst):
        fromlist, level = self.pop(), self.pop()
        self.push(__import__(inst.argval, self.globals, None, fromlist, level))

    def op_IMPORT_FROM(self, inst):
        self.push(getattr(self.stack[-1], inst.argval))

    # -- stack manipulation
    def op_POP_TOP(self, inst):
        self.pop()

    def op_COPY(self, inst):
        self.push(self.stack[-inst.arg])

    def op_SWAP(self, inst):
        i = inst.arg
        self.stack[-1], self.stack[-i] = self.stack[-i], self.stack[-1]

    def op_END_FOR(self, inst):
        self.popn(2)

    # -- building containers
    def _created(self, v):
        self.tr.created.add(id(v))
        self.tr.keep.append(v)
        return v

    def op_BUILD_TUPLE(self, inst):
        self.push(tuple(self.popn(inst.arg)))

    def op_BUILD_LIST(self, inst):
        self.push(self._created(list(self.popn(inst.arg))))

    def op_BUILD_SET(self, inst):
        self.push(self._created(set(self.popn(inst.arg))))

    def op_BUILD_MAP(self, inst):
        items = self.popn(2 * inst.arg)
        self.push(self._created({items[i]: items[i + 1] for i in range(0, len(items), 2)}))

    def op_BUILD_CONST_KEY_MAP(self, inst):
        keys = self.pop()
        vals = self.popn(inst.arg)
        self.push(self._created(dict(zip(keys, vals))))

    def op_BUILD_SLICE(self, inst):
        self.push(slice(*self.popn(inst.arg)))

    def op_BUILD_STRING(self, inst):
        self.push("".join(self.popn(inst.arg)))

    def op_FORMAT_VALUE(self, inst):
        spec = self.pop() if (inst.arg & 0x04) else ""
        v = self.pop()
        if isinstance(v, TensorVar):
            self.fail("formatting a tensor")
        conv = inst.arg & 0x03
        v = {0: lambda x: x, 1: str, 2: repr, 3: ascii}[conv](v)
        self.push(format(v, spec))

    def op_LIST_APPEND(self, inst):
        v = self.pop()
        self.stack[-inst.arg].append(v)

    def op_LIST_EXTEND(self, inst):
        v = self.pop()
        if isinstance(v, TensorVar):
            self.fail("iterating over a tensor")
        self.stack[-inst.arg].extend(v)

    def op_SET_UPDATE(self, inst):
        v = self.pop()
        self.stack[-inst.arg].update(v)

    def op_SET_ADD(self, inst):
        v = self.pop()
        self.stack[-inst.arg].add(v)

    def op_DICT_UPDATE(self, inst):
        v = self.pop()
        self.stack[-inst.arg].update(v)

    op_DICT_MERGE = op_DICT_UPDATE

    def op_MAP_ADD(self, inst):
        v = self.pop()
        k = self.pop()
        self.stack[-inst.arg][k] = v

    def op_LIST_TO_TUPLE(self, inst):
        self.push(tuple(self.pop()))

    def op_CALL_INTRINSIC_1(self, inst):
        name = inst.argrepr
        if name == "INTRINSIC_LIST_TO_TUPLE":
            self.push(tuple(self.pop()))
        elif name == "INTRINSIC_UNARY_POSITIVE":
            self.push(self.unary("+", self.pop()))
        else:
            self.fail(f"CALL_INTRINSIC_1 {name}")

    def op_UNPACK_SEQUENCE(self, inst):
        seq = self.pop()
        if isinstance(seq, TensorVar):
            self.fail("unpacking a tensor")
        items = list(seq)
        if len(items) != inst.arg:
            self.fail("unpack length mismatch")
        self.stack.extend(reversed(items))

    def op_UNPACK_EX(self, inst):
        seq = self.pop()
        if isinstance(seq, TensorVar):
            self.fail("unpacking a tensor")
        items = list(seq)
        before, after = inst.arg & 0xFF, inst.arg >> 8
        if len(items) < before + after:
            self.fail("unpack length mismatch")
        mid = items[before:len(items) - after]
        vals = items[:before] + [self._created(mid)] + items[len(items) - after:]
        self.stack.extend(reversed(vals))

    # -- operators
    def binary(self, sym, a, b):
        if isinstance(a, TensorVar) or isinstance(b, TensorVar):
            o = self.tr.ops
            if sym in _TENSOR_BINOPS:
                return o.binary(_TENSOR_BINOPS[sym], a, b)
            if sym == "@":
                return o.matmul(a, b)
            if sym in ("&", "|") and all(not isinstance(x, TensorVar) or x.meta.dtype == torch.bool for x in (a, b)):
                return o.binary("logical_and" if sym == "&" else "logical_or", a, b)
            if sym == "//":
                return o.div(a, b, "floor")  # eager's floor division, integer and float
            self.fail(f"tensor operator {sym}")
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            self.fail("operator on a real tensor")
        return _BINOPS[sym](a, b)

    def op_BINARY_OP(self, inst):
        b, a = self.pop(), self.pop()
        sym = inst.argrepr
        if sym.endswith("=") and sym not in ("==", "<=", ">=", "!="):
            sym = sym[:-1]
            if isinstance(a, TensorVar):
                self.push(self.inplace_binary(sym, a, b))
                return
            if isinstance(a, list) and id(a) not in self.tr.created:
                self.fail("in-place operator on a list not created here")
        self.push(self.binary(sym, a, b))

    def inplace_binary(self, sym, a, b):
        """a op= b on a tensor: Tensor.__iadd__ and friends update a in place (a operator torch.Tensor has
        no in-place form for, like @=, rebinds the name to a new tensor)."""
        name = _TENSOR_IOPS.get(sym)
        if name is None or not hasattr(torch.Tensor, name):
            return self.binary(sym, a, b)
        new = self.binary(sym, a, b)
        return handlers.inplace(self.tr.ops, a, new, lambda s: getattr(s, name)(handlers._metas(b)), b)

    def op_BINARY_SUBSCR(self, inst):
        idx, obj = self.pop(), self.pop()
        self.push(self.subscr(obj, idx))

    def op_BINARY_SLICE(self, inst):
        end, start, obj = self.pop(), self.pop(), self.pop()
        self.push(self.subscr(obj, slice(start, end)))

    def subscr(self, obj, idx):
        if isinstance(obj, Opaque):
            self.fail(f"indexing a {type(obj.value).__name__}")
        if isinstance(obj, TensorVar):
            return handlers.getitem(self.tr.ops, obj, idx)
        if _contains_tensor(idx):
            self.fail("indexing with a tensor")
        if isinstance(obj, torch.nn.Module):
            self.guard_module_structure(obj)
        v = obj[idx]
        src = self.tr.sources.get(id(obj))
        if src is None and type(obj) in (list, dict, OrderedDict) and id(obj) not in self.tr.created:
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
        if is_constant(v):
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
        sym = inst.argval
        if isinstance(a, TensorVar) or isinstance(b, TensorVar):
            self.push(self.tr.ops.binary(_TENSOR_CMP[sym], a, b))
        else:
            self.push(_CMPOPS[sym](a, b))

    def op_IS_OP(self, inst):
        b, a = self.pop(), self.pop()
        self.push((a is not b) if inst.arg else (a is b))

    def op_CONTAINS_OP(self, inst):
        b, a = self.pop(), self.pop()
        if isinstance(a, TensorVar) and type(b) in (set, frozenset, dict) and id(b) in self.tr.created:
            # tensors hash by identity: membership in a set or dict made here is identity, as in eager
            # (in a list eager would compare values)
            r = a in b
            self.push((not r) if inst.arg else r)
            return
        if isinstance(b, TensorVar) or isinstance(a, TensorVar):
            self.fail("'in' with a tensor")
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

    # -- control flow
    def _cond_jump(self, inst, jump_if):
        v = self.pop()
        if isinstance(v, TensorVar) and self.depth == 0 and self.tr.allow_breaks and "NONE" not in inst.opname:
            if self.handled(inst.offset):
                # the rest of the frame runs from this branch, eagerly, inside its try
                self.fail("data-dependent branch on a tensor inside a try block")
            here = self.index_of[inst.offset]
            target = self.jump(inst)
            if "FALSE" in inst.opname:
                true_pc, false_pc = here + 1, target
            else:
                true_pc, false_pc = target, here + 1
            raise GraphBreak(self, "data-dependent branch on a tensor", inst.offset, cond=v,
                             targets=(self.insts[true_pc].offset, self.insts[false_pc].offset))
        if "NONE" in inst.opname:
            c = v is None
            if "NOT_NONE" in inst.opname:
                c = not c
        else:
            c = self.truth(v)
            if "FALSE" in inst.opname:
                c = not c
        return self.jump(inst) if c else None

    def op_POP_JUMP_IF_TRUE(self, inst):
        return self._cond_jump(inst, True)

    op_POP_JUMP_IF_FALSE = op_POP_JUMP_IF_NONE = op_POP_JUMP_IF_NOT_NONE = op_POP_JUMP_IF_TRUE
    op_POP_JUMP_FORWARD_IF_TRUE = op_POP_JUMP_FORWARD_IF_FALSE = op_POP_JUMP_IF_TRUE
    op_POP_JUMP_BACKWARD_IF_TRUE = op_POP_JUMP_BACKWARD_IF_FALSE = op_POP_JUMP_IF_TRUE
    op_POP_JUMP_FORWARD_IF_NONE = op_POP_JUMP_FORWARD_IF_NOT_NONE = op_POP_JUMP_IF_TRUE
    op_POP_JUMP_BACKWARD_IF_NONE = op_POP_JUMP_BACKWARD_IF_NOT_NONE = op_POP_JUMP_IF_TRUE

    def op_JUMP_IF_TRUE_OR_POP(self, inst):
        c = self.truth(self.stack[-1])
        if "FALSE" in inst.opname:
            c = not c
        if c:
            return self.jump(inst)
        self.pop()

    op_JUMP_IF_FALSE_OR_POP = op_JUMP_IF_TRUE_OR_POP

    def op_JUMP_FORWARD(self, inst):
        return self.jump(inst)

    op_JUMP_BACKWARD = op_JUMP_BACKWARD_NO_INTERRUPT = op_JUMP = op_JUMP_NO_INTERRUPT = op_JUMP_FORWARD

    def op_GET_ITER(self, inst):
        self.push(self.iterate(self.pop()))

    def iterate(self, v):
        """iter(v) during capture. Iterators made outside the captured code (a generator passed in)
        are never advanced here: that would consume them at capture time."""
        if isinstance(v, TensorVar):
            self.fail("iterating over a tensor")
        if isinstance(v, Opaque):
            self.fail(f"iterating over a {type(v.value).__name__}")
        if isinstance(v, SymGenerator) or id(v) in self.tr.created:
            it = iter(v)
            return it if it is v else self._created(it)
        if hasattr(type(v), "__next__"):
            self.fail(f"iterating over a {type(v).__name__} made outside the compiled code")
        if isinstance(v, torch.nn.Module):
            self.guard_module_structure(v)
        elif not isinstance(v, (tuple, list, dict, set, frozenset, str, range, bytes, type({}.keys()),
                                type({}.values()), type({}.items()))):
            it_fn = getattr(type(v), "__iter__", None)
            if not isinstance(it_fn, types.FunctionType):
                self.fail(f"iterating over a {type(v).__name__}")
            return self.iterate(self.call(it_fn, [v], {}))  # a user class's __iter__, inlined
        return self._created(iter(v))

    def source_of(self, obj):
        """The source path of a real object the capture reads from: the one it was reached through,
        else the object itself (a global, an object met while iterating), re-read from it at every call."""
        src = self.tr.sources.get(id(obj))
        if src is None and id(obj) not in self.tr.created:
            src = self.tr.sources[id(obj)] = ("obj", obj)
            self.tr.keep.append(obj)
        return src

    def guard_module_structure(self, mod):
        """Iterating, indexing or taking len() of a module container (Sequential, ModuleList, ...) reads its
        children: guard which modules, parameters and buffers it holds."""
        src = self.source_of(mod)
        if src is None:
            return
        for name in ("_modules", "_parameters", "_buffers"):
            d = getattr(mod, name, None)
            if type(d) is dict:
                self.tr.attr_guards.append((src + (name,), Structure(d, False)))

    def op_GET_YIELD_FROM_ITER(self, inst):
        self.push(self.iterate(self.pop()))

    def op_SEND(self, inst):
        """yield from: the delegate's next item, or its return value and a jump past the loop."""
        value = self.pop()
        if value is not None:
            self.fail("send() of a value into a generator")
        try:
            item = next(self.stack[-1])
        except StopIteration as e:
            if not PY312:
                self.pop()  # 3.11 pops the delegate here, 3.12 at END_SEND
            self.push(e.value)
            return self.jump(inst)
        self.push(item)

    def op_END_SEND(self, inst):
        value = self.pop()
        self.pop()
        self.push(value)

    def op_YIELD_VALUE(self, inst):
        if not self.generator:
            self.fail("yield")
        return _Yield(self.pop())

    def op_RETURN_GENERATOR(self, inst):
        if not self.generator:
            self.fail("generator")
        self.push(None)  # popped by the POP_TOP that follows (the value sent to start the generator)

    def op_FOR_ITER(self, inst):
        it = self.stack[-1]
        try:
            v = next(it)
        except StopIteration:
            self.pop()
            target = self.jump(inst)
            if self.insts[target].opname == "END_FOR":
                target += 1
            return target
        if isinstance(v, torch.Tensor):
            v = self.tr.wrap(v)
        self.push(v)

    def op_RETURN_VALUE(self, inst):
        return _Return(self.pop())

    def op_RETURN_CONST(self, inst):
        return _Return(inst.argval)

    # -- functions
    def op_MAKE_FUNCTION(self, inst):
        code = self.pop()
        if not PY312 and isinstance(code, str):  # 3.10-style qualname
            code = self.pop()
        flags = inst.arg
        closure = self.pop() if flags & 0x08 else None
        if flags & 0x04:
            self.pop()
        kwdefaults = self.pop() if flags & 0x02 else None
        defaults = self.pop() if flags & 0x01 else None
        fn = types.FunctionType(code, self.globals, code.co_name, defaults, closure)
        if kwdefaults:
            fn.__kwdefaults__ = kwdefaults
        self.push(self._created(fn))

    def op_CALL(self, inst):
        argc = inst.arg
        args = self.popn(argc)
        b, a = self.pop(), self.pop()
        if a is NULL:
            fn = b
        else:
            fn, args = a, [b] + args
        kwargs = {}
        if self.kw_names:
            names = self.kw_names
            self.kw_names = None
            vals = args[len(args) - len(names):]
            args = args[:len(args) - len(names)]
            kwargs = dict(zip(names, vals))
        self.push(self.call_or_break(inst, fn, args, kwargs))

    def call_or_break(self, inst, fn, args, kwargs):
        """In the top frame with breaks allowed, a call dyn cannot capture (print, .item(), numpy, a user
        function that breaks inside) ends the graph: Python makes the call and the frame resumes after
        it. The first failure restarts the capture so that no partial effect of the call is kept."""
        tr = self.tr
        if self.depth or not tr.allow_breaks:
            return self.call(fn, args, kwargs)
        if self.handled(inst.offset):  # inside a try: the rest of the frame runs from this call, eagerly
            try:
                return self.call(fn, args, kwargs)
            except (Unsupported, *_CAPTURE_ERRORS) as e:
                why = e if isinstance(e, Unsupported) else Unsupported(f"{type(e).__name__} while capturing: {e}")
                raise Restart(inst.offset, why.locate(self.code.co_filename, self.lineno), eager=True)
        if fn is print:
            tr.break_at.setdefault(inst.offset, Unsupported("print"))
        why = tr.break_at.get(inst.offset)
        if why is not None:
            here = self.index_of[inst.offset]
            raise GraphBreak(self, why, inst.offset, call=(fn, tuple(args), kwargs),
                             targets=(self.insts[here + 1].offset,))
        try:
            return self.call(fn, args, kwargs)
        except Unsupported as e:
            e.locate(self.code.co_filename, self.lineno)
            raise Restart(inst.offset, e)
        except _CAPTURE_ERRORS as e:
            raise Restart(inst.offset, Unsupported(f"{type(e).__name__} while capturing a call: {e}",
                                                   self.code.co_filename, self.lineno))

    def op_CALL_FUNCTION_EX(self, inst):
        kwargs = self.pop() if inst.arg & 1 else {}
        args = self.pop()
        fn = self.pop()
        if self.stack and self.stack[-1] is NULL:
            self.pop()
        if isinstance(args, TensorVar) or isinstance(kwargs, TensorVar):
            self.fail("*args from a tensor")
        self.push(self.call_or_break(inst, fn, list(args), dict(kwargs)))

    def call(self, fn, args, kwargs):
        tr = self.tr
        if isinstance(fn, BoundTensorMethod):
            if fn.name not in METHODS:
                self.fail(f"Tensor.{fn.name}")
            return METHODS[fn.name](tr.ops, fn.tensor, *args, **kwargs)
        if isinstance(fn, TensorVar):
            self.fail("calling a tensor")
        if isinstance(fn, (Opaque, OpaqueMethod)) or (
                not isinstance(fn, (types.FunctionType, torch.nn.Module)) and
                any(isinstance(a, (Opaque, OpaqueMethod)) for a in list(args) + list(kwargs.values()))):
            what = fn.obj.value if isinstance(fn, OpaqueMethod) else next(
                (a.value for a in list(args) + list(kwargs.values()) if isinstance(a, Opaque)), fn)
            if isinstance(fn, OpaqueMethod):
                name = f"{type(fn.obj.value).__name__}.{fn.name}"
            else:
                name = _callable_name(fn.value if isinstance(fn, Opaque) else fn)
            self.fail(f"call {name} with a {type(what).__module__}.{type(what).__name__}")
        if getattr(type(fn), "_dyn_is_compiled", False):  # another dyn.compile'd function: inline what it wraps
            return self.call(fn._dyn_inline_target, args, kwargs)
        if type(fn) is functools.partial:
            pargs = [tr.wrap(a) if isinstance(a, torch.Tensor) else a for a in fn.args]
            pkw = {k: tr.wrap(a) if isinstance(a, torch.Tensor) else a for k, a in fn.keywords.items()}
            return self.call(fn.func, pargs + list(args), {**pkw, **kwargs})
        if fn is super and not args:
            return self.zero_arg_super()
        if isinstance(fn, type) and _is_user_class(fn):
            return self.instantiate(fn, args, kwargs)
        if isinstance(fn, type) and issubclass(fn, tuple) and hasattr(fn, "_fields") and \
                getattr(fn.__new__, "__module__", "").startswith("namedtuple_"):
            return fn(*args, **kwargs)  # a namedtuple: its generated __new__ only builds the tuple
        if fn in _ITERATING_BUILTINS if _hashable(fn) else False:
            args = [self.iterate(a) if _needs_iterate(a) else a for a in args]
            if fn in (sorted, min, max) and kwargs.get("key") is not None and not (
                    _hashable(kwargs["key"]) and kwargs["key"] in _PURE_BUILTINS):
                return self.call_with_key(fn, args, kwargs)
        if fn is len and len(args) == 1 and not isinstance(args[0], TensorVar):
            obj = args[0]
            if isinstance(obj, torch.nn.Module):
                self.guard_module_structure(obj)
            elif isinstance(getattr(type(obj), "__len__", None), types.FunctionType):
                return self.call(type(obj).__len__, [obj], {})
        h = TORCH_FUNCS.get(fn) if _hashable(fn) else None
        if h is not None:
            if not any(_contains_tensor(a) for a in args) and not any(_contains_tensor(v) for v in kwargs.values()) \
                    and fn.__name__ not in ("zeros", "ones", "full", "empty", "arange"):
                self.fail(f"torch.{fn.__name__} without tensor arguments")
            return h(tr.ops, *args, **kwargs)
        if isinstance(fn, types.MethodType) and isinstance(fn.__self__, torch.Tensor):
            self.fail("method of a real tensor")
        if isinstance(fn, torch.nn.Module):
            return self.call_module(fn, args, kwargs)
        if isinstance(fn, types.MethodType):
            return self.call(fn.__func__, [fn.__self__] + list(args), kwargs)
        if isinstance(fn, types.FunctionType):
            mod = getattr(fn, "__module__", "") or ""
            if (mod.startswith("torch") and not mod.startswith("torch.nn.modules")) or mod.startswith("dyn"):
                self.fail(f"call to unsupported torch function {mod}.{fn.__qualname__}")
            if fn.__code__.co_flags & 0x20:  # a generator function: runs lazily as it is consumed
                return self._created(SymGenerator(Frame(tr, fn, args, kwargs, self.depth + 1, generator=True)))
            return Frame(tr, fn, args, kwargs, self.depth + 1).run()
        if isinstance(fn, types.BuiltinMethodType) and type(fn.__self__) in _CONTAINER_METHODS:
            obj = fn.__self__
            if fn.__name__ not in _CONTAINER_METHODS[type(obj)]:
                self.fail(f"{type(obj).__name__}.{fn.__name__}")
            if fn.__name__ in _MUTATING and id(obj) not in tr.created:
                self.fail(f"{type(obj).__name__}.{fn.__name__} on a container not created here (mutation)")
            r = fn(*args, **kwargs)
            if not is_constant(r):
                self._created(r)  # views and iterators over traced containers hold traced values
            return r
        if fn is isinstance:
            obj, cls = args
            if isinstance(obj, TensorVar):
                if obj.input_index is not None:  # the input's exact type is guarded (Parameter or Tensor)
                    return isinstance(tr.input_tensors[obj.input_index], cls)
                return isinstance(torch.empty(0), cls)
        if fn is len and args and isinstance(args[0], TensorVar):
            if args[0].meta.dim() == 0:
                self.fail("len() of a 0-d tensor")
            return args[0].meta.shape[0]
        if fn is getattr and len(args) >= 2:
            if len(args) == 3:
                try:
                    return self.getattr(args[0], args[1])
                except Unsupported:
                    raise
                except AttributeError:
                    return args[2]
            return self.getattr(args[0], args[1])
        if fn is hasattr and isinstance(args[0], TensorVar):
            return args[1] in TENSOR_ATTRS or args[1] in METHODS
        pure = (_hashable(fn) and fn in _PURE_BUILTINS) or \
            (getattr(fn, "__module__", None) in _PURE_MODULES and callable(fn)) or \
            fn in (torch.Size, torch.device, torch.finfo, torch.iinfo, torch.is_grad_enabled, torch.no_grad,
                   torch.enable_grad, torch.inference_mode, torch.get_default_dtype) if _hashable(fn) else False
        if fn is torch.is_grad_enabled:
            return tr.grad_enabled()
        if isinstance(fn, GradModeExit):
            return fn.exit()
        if pure:
            if fn in (min, max, sum) and len(args) >= 1 and id(args[0]) in tr.created and \
                    hasattr(type(args[0]), "__next__"):
                args = [self._created(list(args[0]))] + list(args[1:])  # consumed whole anyway
            if fn in (min, max, sum, abs, bool, float, int) and any(_contains_tensor(a) for a in args):
                if fn in (float, int, bool):
                    self.fail(f"{fn.__name__}() of a tensor (data-dependent)")
                if fn is abs:
                    return tr.ops.unary("abs", args[0])
                if fn is sum:
                    acc = args[1] if len(args) > 1 else 0
                    for x in args[0]:
                        acc = self.binary("+", acc, x)
                    return acc
                self.fail(f"{fn.__name__}() over tensors (data-dependent)")
            if fn in (map, filter):
                self.fail("map/filter")
            r = fn(*args, **kwargs)
            if not is_constant(r) and not isinstance(r, _REAL_RESULTS):
                self._created(r)  # containers, iterators and views over traced values
            return r
        if isinstance(fn, type) and fn in (tuple, list, dict, set):
            return fn(*args, **kwargs)
        if isinstance(fn, types.MethodWrapperType) and fn.__name__ == "__init__" and \
                type(fn.__self__) in tr.created_classes and not args and not kwargs:
            return None  # object.__init__ (super().__init__() of a user class made here)
        call = getattr(type(fn), "__call__", None)
        if isinstance(call, types.FunctionType) and not isinstance(fn, type):
            return self.call(call, [fn] + list(args), kwargs)  # an instance of a user class with __call__
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
        self.fail(f"call to unsupported function {name}")

    def zero_arg_super(self):
        """super() inside a method: the class from the __class__ cell, the first argument."""
        cell = self.cells.get("__class__")
        if cell is None or not self.code.co_varnames:
            self.fail("super() outside a method")
        first = self.code.co_varnames[0]
        obj = self.locals[first] if first in self.locals else self.cells[first].cell_contents
        return super(cell.cell_contents, obj)

    def op_LOAD_SUPER_ATTR(self, inst):  # 3.12: super().name and super(cls, obj).name
        obj, cls, sup = self.pop(), self.pop(), self.pop()
        if sup is not super:
            self.fail("LOAD_SUPER_ATTR with a super other than the builtin")
        v = self.getattr(super(cls, obj), inst.argval)
        if inst.arg & 1:
            self.push(NULL)
        self.push(v)

    def instantiate(self, cls, args, kwargs):
        """cls(*args) for a plain user class: a new object made while capturing, its __init__ inlined.
        It lives only inside the capture (returning it or keeping it across a graph break is unsupported)."""
        obj = object.__new__(cls)
        self._created(obj)
        self.tr.created_classes.add(cls)
        init = getattr(cls, "__init__")
        if init is not object.__init__:
            self.call(init, [obj] + list(args), kwargs)
        elif args or kwargs:
            self.fail(f"{cls.__name__}() takes no arguments")
        return obj

    def call_with_key(self, fn, args, kwargs):
        """sorted/min/max with a user key function: the keys are computed by inlining it and must be
        Python values (ordering by tensor values is data-dependent)."""
        kwargs = dict(kwargs)
        key = kwargs.pop("key")
        items = list(args[0]) if len(args) == 1 else list(args)
        keys = [self.call(key, [x], {}) for x in items]
        if any(_contains_tensor(k) for k in keys):
            self.fail(f"{fn.__name__}() with a key that depends on tensor values")
        order = list(range(len(items)))
        if fn is sorted:
            order.sort(key=lambda i: keys[i], reverse=kwargs.pop("reverse", False))
            return self._created([items[i] for i in order])
        if not items:
            if "default" in kwargs:
                return kwargs["default"]
            self.fail(f"{fn.__name__}() of an empty sequence")
        return items[fn(order, key=lambda i: keys[i])]

    def call_module(self, mod, args, kwargs):
        from torch.nn.modules import module as _m
        if mod._forward_hooks or mod._forward_pre_hooks or getattr(mod, "_backward_hooks", None) or \
                _m._global_forward_hooks or _m._global_forward_pre_hooks:
            self.fail("module hooks")
        # inlining forward assumed no hooks and this forward: a hook registered or forward patched
        # later re-captures (one module guard per module, checked in C)
        src = self.source_of(mod)
        for name in ("_global_forward_hooks", "_global_forward_pre_hooks"):
            self.tr.attr_guards.append((("obj", _m, name), Structure(getattr(_m, name), False)))
        fwd = mod.__dict__.get("forward", type(mod).forward)
        if src is not None:
            self.tr.attr_guards.append((src, ModuleGuard(fwd)))
        if "forward" in mod.__dict__:
            return self.call(fwd, args, kwargs)
        if not isinstance(fwd, types.FunctionType):
            self.fail(f"forward of {type(mod).__name__}")
        return Frame(self.tr, fwd, [mod] + list(args), kwargs, self.depth + 1).run()

    # -- unsupported with a clear reason
    def op_RAISE_VARARGS(self, inst):
        self.fail("raise")

    def op_LOAD_ASSERTION_ERROR(self, inst):
        self.fail("assertion failed (or assert with a data-dependent condition)")

    def op_BEFORE_WITH(self, inst):
        """`with torch.no_grad():` / `with torch.enable_grad():` are traced: the ops inside are marked with
        the grad mode they run under. Other context managers are unsupported."""
        mgr = self.pop()
        if type(mgr) not in (torch.no_grad, torch.enable_grad):
            self.fail(f"with statement ({type(mgr).__name__})")
        self.push(GradModeExit(self.tr, type(mgr) is torch.enable_grad))
        self.push(None)  # what __enter__ returns


_CONTAINER_METHODS = {
    list: {"append", "extend", "insert", "pop", "copy", "index", "count", "reverse", "clear"},
    dict: {"get", "keys", "values", "items", "update", "setdefault", "pop", "copy", "clear"},
    set: {"add", "update", "discard", "copy", "union", "intersection", "difference", "issubset"},
    tuple: {"index", "count"},
    str: {"format", "join", "split", "strip", "startswith", "endswith", "lower", "upper", "replace"},
}
_MUTATING = {"append", "extend", "insert", "pop", "reverse", "clear", "update", "setdefault", "add", "discard"}


_ITERATING_BUILTINS = {list, tuple, set, frozenset, dict, enumerate, zip, sorted, reversed, sum, min, max, any,
                       all, iter, next, map, filter}


def _needs_iterate(a):
    """An argument an iterating builtin would iterate with code dyn must see (or must not run)."""
    return isinstance(a, torch.nn.Module) or (
        not isinstance(a, (tuple, list, dict, set, frozenset, str, range, bytes, TensorVar, SymGenerator))
        and (hasattr(type(a), "__next__") or isinstance(getattr(type(a), "__iter__", None), types.FunctionType)))


# top-level packages whose modules, classes and functions dyn takes as fixed (their attributes are not
# guarded): the standard library and the numeric stack; everything else is user code
_TRUSTED_PACKAGES = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "scipy", "dyn", "typing_extensions"}


_MODULE_DICTS = ("_parameters", "_buffers", "_modules")


def _attr_steps(obj, name):
    """Path steps for obj.name. A module's parameters, buffers and submodules are read from its dicts
    (what Module.__getattr__ does, without its Python call): the guards re-read them fast."""
    if isinstance(obj, torch.nn.Module) and name not in obj.__dict__ and not hasattr(type(obj), name):
        for d in _MODULE_DICTS:
            if name in obj.__dict__.get(d, ()):
                return (d, ("item", name))
    return (name,)


def _user_owner(obj):
    mod = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    return isinstance(mod, str) and mod.partition(".")[0] not in _TRUSTED_PACKAGES


def _is_user_class(cls):
    """A plain Python class (not torch's, not a builtin's subclass, default metaclass and __new__)."""
    if type(cls) is not type or cls.__new__ is not object.__new__:
        return False
    for c in cls.__mro__:
        if c is object:
            continue
        mod = getattr(c, "__module__", "") or ""
        if mod == "builtins" or mod.startswith(("torch", "dyn", "numpy", "scipy")) or \
                any(n in c.__dict__ for n in ("__slots__", "__setattr__", "__delattr__", "__getattribute__")):
            return False
    return True


def _callable_name(f):
    """How a break reason names a function: scipy.special.erf, numpy ufunc add, Tensor.numpy."""
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__
    if type(f).__name__ == "ufunc":
        return f"numpy ufunc {name}"
    if name.startswith("_VariableFunctionsClass."):
        return "torch." + f.__name__
    mod = getattr(f, "__module__", None)
    return f"{mod}.{name}" if isinstance(mod, str) and mod not in ("builtins",) else name


def _hashable(fn):
    try:
        hash(fn)
        return True
    except TypeError:
        return False


class GraphBreak(Exception):
    """The top frame stops capture at instruction `offset`: before a call Python must make (`call`
    = (fn, args, kwargs)), or at a jump on a tensor (`cond`). `targets` are the offsets where the frame
    resumes (after the call; or the true and the false side). The stack and locals are the frame's at
    that point, without the call's operands or the condition."""

    def __init__(self, frame, why, offset, call=None, cond=None, targets=(), store=None, eager_rest=False):
        super().__init__(str(why))
        self.reason = why.reason if isinstance(why, Unsupported) else why
        self.filename = getattr(why, "filename", None) or frame.code.co_filename
        self.lineno = getattr(why, "lineno", None) or frame.lineno
        self.offset, self.call, self.cond, self.targets, self.store = offset, call, cond, targets, store
        self.eager_rest = eager_rest
        self.locals, self.stack = dict(frame.locals), list(frame.stack)
        self.cells = {n: c for n, c in frame.cells.items() if n in frame.code.co_cellvars}
        self.code = frame.code


class Restart(Exception):
    """Capture again from the start, breaking the graph at `offset` this time: before the call there
    (or, when eager, running the rest of the frame from that instruction eagerly)."""

    def __init__(self, offset, why, eager=False):
        super().__init__(str(why))
        self.offset, self.why, self.eager = offset, why, eager


class _Return:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class GradModeExit:
    """The __exit__ of a traced grad-mode block: the ops made inside are marked with its mode."""

    def __init__(self, tracer, enabled):
        self.tr, self.enabled, self.outer = tracer, enabled, tracer.graph.mode_attrs
        tracer.grad_modes.append(enabled)
        tracer.graph.mode_attrs = {**self.outer, "grad_enabled": enabled}

    def exit(self):
        self.tr.grad_modes.pop()
        self.tr.graph.mode_attrs = self.outer


class _Yield:
    __slots__ = ("value", "pc")

    def __init__(self, value):
        self.value, self.pc = value, None


class SymGenerator:
    """A user generator (or generator expression) called during capture: each next() resumes its frame
    symbolically up to the next yield, so it runs lazily and in step with its consumer, as in Python."""

    def __init__(self, frame):
        self.frame, self.pc, self.done = frame, 0, False

    def __iter__(self):
        return self

    def __next__(self):
        if self.done:
            raise StopIteration
        if self.pc:
            self.frame.push(None)  # the value of the yield expression (nothing is ever sent)
        try:
            r = self.frame.run(self.pc)
        except BaseException:
            self.done = True
            raise
        if isinstance(r, _Yield):
            self.pc = r.pc
            return r.value
        self.done = True
        raise StopIteration(r)  # with the generator's return value (`x = yield from gen()`)


def trace(func, args, device, allow_breaks=False):
    """Captures func(*args) where args are the frame's bound arguments in code order. Returns
    (tracer, output_structure, graph_break) where graph_break is a GraphBreak or None."""
    co = func.__code__
    nargs = co.co_argcount + co.co_kwonlyargcount + bool(co.co_flags & 0x04) + bool(co.co_flags & 0x08)
    break_at, eager_at = {}, {}
    for _ in range(16):
        tr = Tracer(device)
        tr.allow_breaks = allow_breaks
        tr.break_at = dict(break_at)
        tr.eager_at = dict(eager_at)
        wrapped = [tr.wrap(a, ("arg", i)) for i, a in enumerate(args)]
        frame = Frame(tr, func, (), {}, 0, dict(zip(co.co_varnames[:nargs], wrapped)))
        try:
            return tr, frame.run(0), None
        except GraphBreak as b:
            return tr, None, b
        except Restart as r:
            (eager_at if r.eager else break_at)[r.offset] = r.why
    raise Unsupported("too many graph breaks", co.co_filename, co.co_firstlineno)
