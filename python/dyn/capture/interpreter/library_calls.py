"""Builtins and standard-library helpers libraries lean on, traced with their Python semantics (Frame
mixin): map and filter (lazy, their function inlined per item as it is consumed), functools.reduce,
functools.lru_cache/cache'd functions (the wrapped function inlined), functions marked with
torch._dynamo.assume_constant_result (called, their constant value used), torch.autograd.Function's
apply (custom_functions.py), the collections containers
OrderedDict, defaultdict and deque made by the traced code, class statements in the frame, and
copy.deepcopy / copy.copy of Python values (made at capture, the state they copied guarded)."""
import builtins
import collections
import copy
import dis
import functools
import inspect
import itertools
import logging
import sys
import types

import torch

from ...ops import TensorVar
from . import custom_functions
from ..guards import (_NOT_FOUND, DictKeys, NoCopy, StateEquals, _type_lookup, copied_state, copy_children,
                      copy_kind)
from ..values import NULL, holds_internal, is_constant

NOT_HANDLED = object()
# containers of collections the traced code may make, and their methods it may call on them
CONTAINERS = (collections.OrderedDict, collections.defaultdict, collections.deque)
_DICT = {"get", "keys", "values", "items", "update", "setdefault", "pop", "popitem", "copy", "clear"}
CONTAINER_METHODS = {
    collections.OrderedDict: _DICT | {"move_to_end"},
    collections.defaultdict: _DICT,
    collections.deque: {"append", "appendleft", "pop", "popleft", "extend", "extendleft", "rotate", "clear",
                        "copy", "count", "index", "insert", "remove", "reverse"},
}
MUTATING = {"appendleft", "popleft", "extendleft", "rotate", "move_to_end", "popitem", "remove"}
# default factories a defaultdict may call from C (anything else would run Python dyn does not see)
_FACTORIES = (list, dict, set, int, float, tuple, str, collections.OrderedDict, collections.deque)


# standard-library introspection libraries call around their forwards (transformers' inspect.signature of
# a forward): run as Python runs it on real objects (it reads them and makes new ones; no side effect)
_INTROSPECTION = frozenset({inspect.signature, inspect.unwrap, inspect.getfullargspec, sys.getrecursionlimit})
# what a class body may do to be run as it is: bind names to constants, functions and other names
_CLASS_BODY_OPS = frozenset("""RESUME NOP CACHE EXTENDED_ARG LOAD_NAME STORE_NAME LOAD_CONST RETURN_VALUE RETURN_CONST
MAKE_FUNCTION LOAD_CLOSURE BUILD_TUPLE BUILD_LIST BUILD_MAP BUILD_CONST_KEY_MAP STORE_DEREF LOAD_DEREF
LOAD_CLASSDEREF LOAD_FROM_DICT_OR_DEREF COPY_FREE_VARS MAKE_CELL POP_TOP LIST_EXTEND""".split())


class SymMap:
    """map(fn, *iterables) / filter(fn, iterable) made while capturing: lazy, each item's call inlined
    when its consumer asks for it (so it interleaves with the consumer as in Python)."""

    def __init__(self, frame, fn, iterators, keep):
        self.frame, self.fn, self.iterators, self.keep = frame, fn, iterators, keep

    def __iter__(self):
        return self

    def __next__(self):
        if self.keep is None:  # map
            items = [next(it) for it in self.iterators]
            return self.frame.call(self.fn, items, {})
        while True:  # filter
            x = next(self.iterators[0])
            r = x if self.fn is None else self.frame.call(self.fn, [x], {})
            if isinstance(r, TensorVar):
                self.frame.fail("filter with a predicate on tensor values (data-dependent)")
            if bool(r):
                return x


# logging.Logger's emitting methods: a call is made after the graph (side_effects), as TorchDynamo reorders
# logging calls, instead of breaking the graph at the handler's lock (not `exception`: it reads the
# exception being handled, gone after the graph)
_LOGGER_METHODS = frozenset(getattr(logging.Logger, n) for n in
                            ("debug", "info", "warning", "warn", "error", "critical", "log"))


def _logging_call(fn, args):
    """(function, args) when fn(*args) emits a log record of a logging.Logger: one of its emitting methods,
    or an lru_cache'd helper taking the logger first (transformers' logger.warning_once / info_once, whose
    cache makes the record appear once per message); else None."""
    if isinstance(fn, types.MethodType) and isinstance(fn.__self__, logging.Logger):
        fn, args = fn.__func__, [fn.__self__] + list(args)
    if not args or not isinstance(args[0], logging.Logger):
        return None
    if fn in _LOGGER_METHODS or isinstance(fn, functools._lru_cache_wrapper):
        return fn, list(args)
    return None


class LibraryCalls:
    def call_library(self, fn, args, kwargs):
        """Calls with a traced meaning here; NOT_HANDLED for anything else."""
        logged = _logging_call(fn, args)
        if logged is not None and not any(isinstance(v, TensorVar) for v in list(args) + list(kwargs.values())):
            # the record is emitted after the graph, with the same arguments (eager emits it here: the
            # order against the graph's own prints and logs is not kept, as in TorchDynamo)
            self.tr.side.call(logged[0], logged[1], kwargs)
            return None
        if custom_functions.is_function_apply(fn):
            return custom_functions.apply(self, fn.__self__, args, kwargs)
        if custom_functions.is_ctx_method(fn):
            return fn(*args, **kwargs)  # what forward saves and marks, on the capture-time ctx
        if fn is copy.deepcopy or fn is copy.copy:
            return self.copy_value(fn is copy.deepcopy, args, kwargs)
        if fn is map or fn is filter:
            return self.lazy_map(fn, args, kwargs)
        if fn is functools.reduce:
            return self.reduce(*args, **kwargs)
        target = fn.__wrapped__ if isinstance(fn, functools._lru_cache_wrapper) else fn
        if getattr(target, "_dynamo_marked_constant", False) and \
                all(is_constant(a) for a in list(args) + list(kwargs.values())):
            # torch._dynamo.assume_constant_result (transformers' install probes): its value, called now
            r = fn(*args, **kwargs)
            if is_constant(r):
                return r
        if isinstance(fn, functools._lru_cache_wrapper) and getattr(fn.__wrapped__, "__module__", None) == "typing" \
                and all(_type_like(a) for a in list(args) + list(kwargs.values())):
            return fn(*args, **kwargs)  # List[torch.Tensor] (torch.jit.annotate in timm's CrossViT): a type
        if isinstance(fn, functools._lru_cache_wrapper):
            # the cache only saves work: the wrapped function is traced, whatever the arguments (tensors
            # and objects would be cached by identity; TorchDynamo inlines it the same way)
            return self.call(fn.__wrapped__, list(args), kwargs)
        if fn is collections.namedtuple and not any(holds_internal(a, self.tr) for a in list(args) + list(kwargs.values())):
            # a namedtuple class made of constants: made now, once (its calls are traced like a class
            # statement's); named after the caller's module as eager names it
            kwargs = dict(kwargs)
            kwargs.setdefault("module", self.globals.get("__name__"))
            return fn(*args, **kwargs)
        if isinstance(fn, types.BuiltinMethodType) and fn.__name__ == "fromkeys" and \
                fn.__self__ in (dict, collections.OrderedDict, collections.defaultdict) and args:
            # only the keys are looked at (hashed); the value, whatever it is, is put under each
            keys = self.call(list, [args[0]], {})
            if not all(is_constant(k) for k in keys):
                self.fail(f"{fn.__self__.__name__}.fromkeys() of keys that are not constants")
            return self._created(fn(keys, *args[1:], **kwargs))
        if isinstance(fn, types.BuiltinMethodType) and fn.__self__ is itertools.chain and \
                fn.__name__ == "from_iterable" and len(args) == 1 and not kwargs and type(args[0]) in (list, tuple) \
                and all(type(a) in (list, tuple) for a in args[0]):
            # lists of lists: nothing runs while the chain is consumed (the items are traced values)
            return self._created(fn(args[0]))
        np = sys.modules.get("numpy")
        if np is not None and (fn is np.iinfo or fn is np.finfo) and len(args) == 1 and not kwargs and \
                (isinstance(args[0], (str, np.dtype)) or isinstance(args[0], type) and issubclass(args[0], np.generic)):
            # numpy's limits of a dtype: constants (np.iinfo(np.int16).max)
            return fn(*args)
        if fn is tuple.__new__ and len(args) == 2 and not kwargs and isinstance(args[0], type) and \
                issubclass(args[0], tuple) and hasattr(args[0], "_fields"):
            # a namedtuple's _make (its _replace): the items, as list() takes them, in the class's tuple
            return tuple.__new__(args[0], self.call(list, [args[1]], {}))
        if fn in CONTAINERS:
            return self.make_container(fn, args, kwargs)
        if fn in _INTROSPECTION and not any(holds_internal(a, self.tr) for a in list(args) + list(kwargs.values())):
            return self._created(fn(*args, **kwargs))
        if fn is builtins.__build_class__:
            return self.build_class(*args, **kwargs)
        return NOT_HANDLED

    # -- copy.deepcopy, copy.copy ---------------------------------------------------------------------
    def copy_value(self, deep, args, kwargs):
        """copy.deepcopy(x) / copy.copy(x) of constants, functions and classes, tuples, lists, dicts, sets,
        OrderedDicts and instances of plain classes that copy.py copies by their __dict__ (guards.copy_kind),
        made now; the new lists, dicts, sets and objects are objects made while capturing (the traced code
        may change them). Objects made by the traced code hold what it put there. deepcopy of a real object
        (a config read from a module) copies its real state, guarded whole (guards.StateEquals): a call
        where it changed captures again. copy.copy of a real object holds what the traced code reads of
        its attributes (_attributes_read). Tensors (deepcopy), dyn's placeholders and objects with copy
        hooks of their own are not copied: the graph breaks there."""
        what = "copy.deepcopy" if deep else "copy.copy"
        if deep:
            memo = args[1] if len(args) == 2 else kwargs.get("memo")
            if not 1 <= len(args) <= 2 or set(kwargs) - {"memo"} or (len(args) == 2 and kwargs) or memo is not None:
                return NOT_HANDLED  # with a memo of the caller's: copy.py traced as it is
        elif len(args) != 1 or kwargs:
            return NOT_HANDLED
        x = args[0]
        tr = self.tr
        kind = self._copy_kind(x, what)
        if not deep:
            if kind in ("const", "ident", "tuple", "frozenset"):
                return x  # copy.copy of an immutable value is the value itself
            if id(x) in tr.created or id(x) in tr.traced:
                r = copy.copy(x)  # its items, whatever they are (tensors too), in a new container or object
            elif kind == "object":
                r = object.__new__(type(x))
                copied_state(r).update(self._attributes_read(x, what))
            else:
                self.fail(f"{what} of a {type(x).__name__} not made while capturing")
            self._mark_copied(r, False, set())
            return r
        roots, walked = [], set()
        self._copy_walk(x, kind, what, roots, walked, 0)
        if len(roots) > 1:
            self.fail(f"{what} of a value holding several objects not made while capturing (their sharing "
                      "is not guarded)")
        for root in roots:
            self._guard_copied(root, what, walked)
        try:
            r = copy.deepcopy(x)
        except Exception as e:  # eager raises it too
            self.fail(f"{what} of a {type(x).__name__} raised {type(e).__name__}: {e}")
        if type(r) is not type(x) or (kind == "object" and list(copied_state(r)) != list(copied_state(x))):
            self.fail(f"{what} of a {type(x).__name__} did not copy it as a plain object")
        self._mark_copied(r, True, set())
        return r

    def _attributes_read(self, obj, what):
        """The instance __dict__ of a real object as the traced code reads it: each attribute read through
        the object's path (guarded as reads are: tensors are graph inputs, lists and dicts their traced
        copies, so the copy and the original share them as in eager), and which attributes it has, in
        order, guarded (DictKeys)."""
        state = copied_state(obj)
        name = type(obj).__name__
        if self.tr.side.has_attrs(obj):
            self.fail(f"{what} of a {name} with attribute writes pending")
        if len(state) > 64:
            self.fail(f"{what} of a {name} with more than 64 attributes")
        for k, v in state.items():
            d = _type_lookup(type(obj), k)
            if type(k) is not str or hasattr(type(d), "__set__") or hasattr(type(d), "__delete__") or \
                    getattr(obj, k, _NOT_FOUND) is not v:
                self.fail(f"{what} of a {name} whose attribute {k!r} is not read from its __dict__")
        self.tr.attr_guards.append((self.source_of(obj), DictKeys(tuple(state))))
        return {k: self.getattr(obj, k) for k in state}

    def _copy_kind(self, v, what, inner=False):
        of = f"{what} of a value holding" if inner else f"{what} of"
        if isinstance(v, TensorVar):
            self.fail(f"{of} a tensor")
        if v is NULL or type(v).__module__.startswith("dyn."):
            self.fail(f"{of} a {type(v).__name__} (a value standing for others while capturing)")
        kind = copy_kind(v)
        if kind is None:
            self.fail(f"{of} a {type(v).__name__} (its copy is made by hooks, slots or state dyn does not model)")
        return kind

    def _copy_walk(self, v, kind, what, roots, visited, depth):
        """The real lists, dicts, sets and objects (not made while capturing) that deep-copying v copies
        (roots): what the copy depends on beyond the traced code's own values."""
        if kind in ("const", "ident") or id(v) in visited:
            return
        if depth > 32:
            self.fail(f"{what} of a value nested more than 32 levels deep")
        visited.add(id(v))
        if kind in ("list", "dict", "set", "odict", "object") and id(v) not in self.tr.created and \
                id(v) not in self.tr.traced:
            roots.append(v)
            return
        for x in copy_children(v, kind):
            self._copy_walk(x, self._copy_kind(x, what, True), what, roots, visited, depth + 1)

    def _guard_copied(self, root, what, walked):
        """Guards the whole state a copy of a real object depends on, on its source. Its parts must be as
        the traced code left them (no write pending), and none of them may be copied a second time as the
        traced copy the traced code holds of it (walked: what else the copy copies), which would be
        another object in the copy where eager's has one."""
        tr = self.tr

        def visit(obj):
            if tr.side.has_attrs(obj):
                raise NoCopy(f"the traced code wrote attributes of a {type(obj).__name__} it holds")
            c = tr.copies.get(id(obj))
            if c is not None and (id(c) in tr.side.changed or tr.side.has_attrs(c)):
                raise NoCopy(f"the traced code changed a {type(obj).__name__} it holds")
            if c is not None and id(c) in walked:
                raise NoCopy(f"a {type(obj).__name__} it holds is also copied as the traced code's copy of it")
            if id(obj) in tr.created:
                raise NoCopy(f"it holds a {type(obj).__name__} made while capturing")
        try:
            guard = StateEquals(root, visit)
        except NoCopy as e:
            self.fail(f"{what} of a {type(root).__name__}: {e}")
        tr.attr_guards.append((self.source_of(root), guard))

    def _mark_copied(self, v, deep, seen):
        """The lists, dicts, sets and objects a copy made are made while capturing (those of a deep copy
        all the way down; copy.copy makes only the outer one)."""
        kind = copy_kind(v)
        if kind in (None, "const", "ident") or id(v) in seen:
            return
        seen.add(id(v))
        if kind in ("list", "dict", "set", "odict", "object"):
            self._created(v)
            if kind == "object":
                self.tr.created_classes.add(type(v))
        if deep:
            for x in copy_children(v, kind):
                self._mark_copied(x, True, seen)

    def op_LOAD_BUILD_CLASS(self, inst):
        self.push(builtins.__build_class__)

    def build_class(self, body, name, *bases, **kwds):
        """A class statement: its body (names, constants, functions: nothing that calls or imports) runs
        as Python runs it, making a plain class; methods are traced when called."""
        if kwds or any(b is not object and b not in self.tr.created_classes and b is not torch.autograd.Function
                       and not (type(b) is type and b.__module__ == self.globals.get("__name__")) for b in bases):
            # (torch.autograd.Function's metaclass only makes the class's backward class: torch.masked
            # defines one per call, used only for a MaskedTensor)
            self.fail(f"class {name} with a metaclass or bases from elsewhere")
        # @staticmethod/@classmethod (3.11, 3.12: `LOAD_NAME staticmethod; ...; MAKE_FUNCTION; CALL 0`) are
        # the only calls a body may make: no PUSH_NULL (every other call pushes one), names loaded are the
        # builtin decorators (not shadowed) or __name__, one call per decorator
        decorators = {"staticmethod": staticmethod, "classmethod": classmethod}
        calls, loads, others = 0, 0, False
        for inst in dis.get_instructions(body.__code__):
            if inst.opname == "LOAD_NAME" and inst.argval in decorators:
                if self.globals.get(inst.argval, decorators[inst.argval]) is not decorators[inst.argval]:
                    self.fail(f"class {name} whose body calls {inst.argval}")
                loads += 1
            elif inst.opname == "LOAD_NAME" and inst.argval != "__name__":
                others = True
            elif inst.opname == "CALL":
                calls += 1
            elif inst.opname not in _CLASS_BODY_OPS and inst.opname != "PRECALL":
                self.fail(f"class {name} whose body runs {inst.opname}")
        if calls and (calls > loads or others):
            self.fail(f"class {name} whose body makes calls")
        cls = builtins.__build_class__(body, name, *bases)
        self.tr.created_classes.add(cls)
        return cls

    def lazy_map(self, fn, args, kwargs):
        if kwargs or len(args) < 2 or (fn is filter and len(args) != 2):
            self.fail(f"{fn.__name__}() with these arguments")
        its = [self.iterate(a) for a in args[1:]]
        return self._created(SymMap(self, args[0], its, None if fn is map else True))

    def reduce(self, function, iterable, *initial):
        it = self.iterate(iterable)
        if initial:
            acc = initial[0]
        else:
            try:
                acc = next(it)
            except StopIteration:
                self.fail("reduce() of an empty iterable with no initial value (eager raises)")
        for x in it:
            acc = self.call(function, [acc, x], {})
        return acc

    def make_container(self, cls, args, kwargs):
        if cls is collections.defaultdict and args and args[0] is not None and args[0] not in _FACTORIES:
            self.fail("defaultdict with a default factory that is not a builtin container or number type")
        first = 1 if cls is collections.defaultdict else 0
        args = list(args)
        if len(args) > first and not isinstance(args[first], (dict, list, tuple)):
            args[first] = list(self.iterate(args[first]))  # consumed whole by the constructor anyway
        return self._created(cls(*args, **kwargs))


def _type_like(v):
    """A class, a typing construct or a constant (typing's cached subscriptions are pure on them)."""
    if isinstance(v, tuple):
        return all(_type_like(x) for x in v)
    return isinstance(v, type) or type(v).__module__ == "typing" or is_constant(v)
