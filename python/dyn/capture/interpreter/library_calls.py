"""Builtins and standard-library helpers libraries lean on, traced with their Python semantics (Frame
mixin): map and filter (lazy, their function inlined per item as it is consumed), functools.reduce,
functools.lru_cache/cache'd functions (the wrapped function inlined), the collections containers
OrderedDict, defaultdict and deque made by the traced code, and class statements in the frame."""
import builtins
import collections
import dis
import functools
import inspect
import sys

import torch

from ...ops import TensorVar
from ..values import holds_internal, is_constant

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


class LibraryCalls:
    def call_library(self, fn, args, kwargs):
        """Calls with a traced meaning here; NOT_HANDLED for anything else."""
        if fn is map or fn is filter:
            return self.lazy_map(fn, args, kwargs)
        if fn is functools.reduce:
            return self.reduce(*args, **kwargs)
        if isinstance(fn, functools._lru_cache_wrapper):
            # the cache only saves work: the wrapped function gives the same value for the same
            # (hashable, constant) arguments; other arguments would be cached by identity
            if not all(is_constant(a) for a in list(args) + list(kwargs.values())):
                self.fail(f"lru_cache'd {getattr(fn, '__qualname__', fn)} with non-constant arguments")
            return self.call(fn.__wrapped__, list(args), kwargs)
        if fn in CONTAINERS:
            return self.make_container(fn, args, kwargs)
        if fn in _INTROSPECTION and not any(holds_internal(a, self.tr) for a in list(args) + list(kwargs.values())):
            return self._created(fn(*args, **kwargs))
        if fn is builtins.__build_class__:
            return self.build_class(*args, **kwargs)
        return NOT_HANDLED

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
