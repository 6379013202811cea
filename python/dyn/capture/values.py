"""Values while capturing that are not tensors: NULL (the call protocol's empty slot), opaque values
dyn passes along without looking inside, bound tensor methods, and the rules for Python constants (what
folds, what guards compare by equality)."""
import abc
import struct
import types
from collections import OrderedDict

import torch

from ..ops import TensorVar
from .origins import is_numeric_library, is_torch_class


class _Null:
    def __repr__(self):
        return "NULL"


NULL = _Null()


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



def _contains_real_tensor(v):
    if isinstance(v, torch.Tensor):
        return True
    if type(v) in (tuple, list):
        return any(_contains_real_tensor(x) for x in v)
    if type(v) is dict:
        return any(_contains_real_tensor(x) for x in v.values())
    return False


def holds_internal(v, tracer, depth=0):
    """Whether v is, or holds in a container, a value that stands for something only while capturing: a
    symbolic tensor, a bound tensor method, a generator being traced, NULL, any other dyn object, or an
    instance of a user class the traced code made (its attributes may be symbolic). Such values must
    never reach a real function: it would compute with dyn's placeholders."""
    if isinstance(v, TensorVar) or type(v).__module__.startswith("dyn."):
        return True
    t = type(v)
    if t in (tuple, list, set, frozenset) or is_namedtuple(v):
        return depth < 16 and any(holds_internal(x, tracer, depth + 1) for x in v)
    if t is dict:
        return depth < 16 and any(holds_internal(k, tracer, depth + 1) or holds_internal(x, tracer, depth + 1)
                                  for k, x in v.items())
    if t is slice:
        return any(holds_internal(x, tracer, depth + 1) for x in (v.start, v.stop, v.step))
    return t in tracer.created_classes and id(v) in tracer.created


def _contains_tensor(v):
    if isinstance(v, TensorVar):
        return True
    if isinstance(v, (tuple, list)):
        return any(_contains_tensor(x) for x in v)
    if isinstance(v, dict):
        return any(_contains_tensor(x) for x in v.values())
    return False


def _dict_base(cls):
    """dict or OrderedDict for a subclass of one of them, else None."""
    if not isinstance(cls, type) or not issubclass(cls, dict):
        return None
    return OrderedDict if issubclass(cls, OrderedDict) else dict


def _is_user_dict_class(cls):
    """A user (or library) subclass of dict or OrderedDict built like a plain class: transformers'
    ModelOutput (a dataclass whose __init__, __post_init__, __setattr__ and __getitem__ are Python)."""
    base = _dict_base(cls)
    if base is None or cls is base or type(cls) not in (type, abc.ABCMeta) or cls.__new__ is not base.__new__ or \
            getattr(cls, "__abstractmethods__", None):
        return False
    for c in cls.__mro__:
        if c in (object, dict, OrderedDict, abc.ABC):
            continue
        if getattr(c, "__module__", None) in ("builtins", "collections") or is_torch_class(c) or \
                is_numeric_library(c) or \
                "__slots__" in c.__dict__ or "__getattribute__" in c.__dict__ or \
                any(not isinstance(c.__dict__.get(n, _fn), types.FunctionType)
                    for n in ("__setattr__", "__delattr__", "__init__", "__post_init__", "__getitem__", "__setitem__")):
            return False
    return True


def _fn():
    pass



MISSING = object()  # "no such attribute" (type_attr, and reads that found none)


def type_attr(t, name):
    """The attribute `name` of type t as type lookup finds it (no descriptor called), or MISSING."""
    for c in t.__mro__:
        if name in c.__dict__:
            return c.__dict__[name]
    return MISSING

def is_plain_instance(v):
    """An instance of a plain Python class (default metaclass, object.__new__, an instance __dict__, no
    __slots__ and no custom attribute lookup) outside torch, dyn and the numeric stack: a dataclass, a
    transformers cache made by the traced code. What a capture reads of it is guarded through its path,
    so its type is guarded rather than its identity (a new object of the class per call hits)."""
    t = type(v)
    if type(t) not in (type, abc.ABCMeta) or t.__new__ is not object.__new__ or not hasattr(v, "__dict__") or \
            isinstance(v, (torch.nn.Module, BaseException)):
        return False
    for c in t.__mro__:
        if c is object or c is abc.ABC:
            continue
        mod = c.__module__ or ""
        if mod == "builtins" or mod.partition(".")[0] in ("torch", "dyn", "numpy", "scipy") or \
                any(n in c.__dict__ for n in ("__slots__", "__getattr__", "__getattribute__")):
            return False
    return True
