"""Markers: how values the traced code holds are handed to Python code that runs after a graph (the code
after a graph break, the side effects replayed after a graph). A Marker turns traced values into markers
once, at capture; `unmark` turns markers back into real values at every call: live tensors are graph
outputs (StateRef), objects reached from the arguments are re-read through their source (_Src),
containers the traced code built are made anew (_Fresh, one per container and call)."""
import types

from ..ops import TensorVar
from .paths import _resolver
from .values import (NULL, BoundTensorMethod, Opaque, OpaqueMethod, _contains_tensor, _dict_base, holds_internal,
                     is_constant)


class _Src:
    """An object the traced code reached from the frame's arguments: re-read at every call."""
    __slots__ = ("get",)

    def __init__(self, path):
        self.get = _resolver(path)


class _Fresh:
    """A list/dict/set the traced code created: a new one at every call (one per marker)."""
    __slots__ = ("kind", "items")

    def __init__(self, kind, items):
        self.kind, self.items = kind, items


class _Made:
    """An instance of a plain class the traced code made: made anew at every call (one per marker)."""
    __slots__ = ("cls", "items", "attrs")

    def __init__(self, cls):
        self.cls, self.items, self.attrs = cls, None, []


class _Method:
    __slots__ = ("obj", "name", "func")

    def __init__(self, obj, name, func=None):
        self.obj, self.name, self.func = obj, name, func


_ITER_TYPES = (type(iter(())), type(iter([])), type(iter(range(0))), zip, enumerate, reversed,
               type(iter({})), type({}.items()), type(iter({}.items())), type(iter({}.values())),
               type(iter(set())), map, filter)


class StateRef:
    """The k-th live tensor handed from a graph to the code after it."""
    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k


class Marker:
    """Marks values of one capture; `state` lists the tensors the graph must output for them (in StateRef
    order). `fail(why)` is called for a value that cannot be handed over (it raises)."""

    def __init__(self, tracer, fail):
        self.tr, self.fail = tracer, fail
        self.state, self._index, self._fresh = [], {}, {}

    def fresh_ids(self):
        """ids of the containers made by the traced code that were marked (made anew at every call)."""
        return set(self._fresh)

    def mark(self, v):
        tr, fail, mark = self.tr, self.fail, self.mark
        if isinstance(v, TensorVar):
            k = self._index.get(v.node)
            if k is None:
                k = self._index[v.node] = len(self.state)
                self.state.append(v)
            return StateRef(k)
        if v is NULL:
            fail("NULL value")
        src = tr.sources.get(id(v))
        if src is not None:
            return _Src(src)
        if type(v) is tuple:
            return tuple(mark(x) for x in v)
        if type(v) in (list, dict, set) and id(v) in tr.created:
            m = self._fresh.get(id(v))
            if m is None:
                m = self._fresh[id(v)] = _Fresh(type(v), None)
                m.items = [(k, mark(x)) for k, x in v.items()] if type(v) is dict else [mark(x) for x in v]
            return m
        if type(v) is slice and holds_internal(v, tr):
            fail("a slice holding a tensor")
        if is_constant(v):
            return v  # a list here is a real one (a global's, a module's): the very object, mutable
        if isinstance(v, BoundTensorMethod):
            return _Method(mark(v.tensor), v.name)
        if isinstance(v, OpaqueMethod):
            return _Method(mark(v.obj), v.name)
        if isinstance(v, Opaque):
            fail("an opaque value with no source")
        if isinstance(v, (types.BuiltinMethodType, types.MethodWrapperType)) and type(v.__self__) in (list, dict, set):
            return _Method(mark(v.__self__), v.__name__)
        if isinstance(v, types.MethodType):
            return _Method(mark(v.__self__), None, v.__func__)
        if isinstance(v, types.FunctionType) and id(v) in tr.created and \
                (v.__closure__ or not is_constant(v.__defaults__ or ())):
            fail("a function defined in the frame")
        if id(v) in tr.created and type(v) in tr.created_classes:
            # an instance of a plain class (a dataclass, a ModelOutput, a DynamicCache) the traced code
            # made: a new one per call with the same items and attributes (one per marker, so an object
            # reached twice stays one)
            m = self._fresh.get(id(v))
            if m is None:
                m = self._fresh[id(v)] = _Made(type(v))
                if isinstance(v, dict):
                    m.items = [(k, mark(x)) for k, x in dict.items(v)]
                m.attrs = [(k, mark(x)) for k, x in vars(v).items()]
            return m
        if isinstance(v, _ITER_TYPES) or id(v) in tr.created and not isinstance(v, types.FunctionType):
            fail(f"a live {type(v).__name__}")
        if isinstance(v, (list, dict, set, tuple)) or _contains_tensor(v):
            fail(f"a live {type(v).__name__}")
        if type(v) is range or not type(v).__module__.startswith("dyn."):
            return v  # a real object the frame holds (module, function, class, library object)
        fail(f"a live {type(v).__name__}")  # an object standing for values while capturing


def unmark(v, state, args, memo):
    if isinstance(v, StateRef):
        return state[v.k]
    t = type(v)
    if t is tuple:
        return tuple(unmark(x, state, args, memo) for x in v)
    if t is _Src:
        return v.get(args)
    if t is _Fresh:
        r = memo.get(id(v))
        if r is None:
            if v.kind is dict:
                r = memo[id(v)] = {}
                r.update((k, unmark(x, state, args, memo)) for k, x in v.items)
            else:
                r = memo[id(v)] = v.kind()
                items = [unmark(x, state, args, memo) for x in v.items]
                r.extend(items) if v.kind is list else r.update(items)
        return r
    if t is _Made:
        r = memo.get(id(v))
        if r is None:
            base = _dict_base(v.cls)
            r = memo[id(v)] = base.__new__(v.cls) if base is not None else object.__new__(v.cls)
            for k, x in v.items or ():
                base.__setitem__(r, k, unmark(x, state, args, memo))
            r.__dict__.update((k, unmark(x, state, args, memo)) for k, x in v.attrs)
        return r
    if t is _Method:
        obj = unmark(v.obj, state, args, memo)
        return types.MethodType(v.func, obj) if v.func is not None else getattr(obj, v.name)
    return v

