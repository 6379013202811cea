"""Guards: what an entry of the cache checks before its compiled code runs. Guard values recorded while
capturing (Is, ModuleGuard, Structure) and the guards built from a capture: per argument, on globals and
global state, and on paths (checked in C by eval_frame.c; guard_check.py has the same rules in Python)."""
import abc
import copy
import copyreg
import enum
import math
import operator
import types
from collections import OrderedDict

import torch

from .outputs import conflict_free
from .paths import _gatherer, _resolver
from .values import (_CONST_TYPES, MISSING, _is_user_dict_class, is_constant, is_constant_value, is_namedtuple,
                     is_opaque_type, is_plain_instance, strict_eq, type_attr)


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


class HasAttr:
    """Guard value (a predicate on the object at the path): it has the attribute `name` (`in_dict`: in
    its instance __dict__) or, with expect False, it has not. For reads that found no attribute
    (hasattr, getattr with a default) and for deletions, whose effect depends on it."""
    __slots__ = ("name", "expect", "in_dict")

    def __init__(self, name, expect, in_dict=False):
        self.name, self.expect, self.in_dict = name, expect, in_dict

    def __call__(self, v):
        if self.in_dict:
            d = getattr(v, "__dict__", None)
            return isinstance(d, dict) and (self.name in d) == self.expect
        return hasattr(v, self.name) == self.expect

    def __repr__(self):
        return f"{'has' if self.expect else 'has no'} attribute {self.name!r}"


class TypeIs:
    """Guard value (a predicate): the object at the path is an instance of exactly this plain class; what
    the capture read of it has guards of its own (values.is_plain_instance)."""
    __slots__ = ("type",)

    def __init__(self, t):
        self.type = t

    def __call__(self, v):
        return type(v) is self.type

    def __repr__(self):
        return f"a {self.type.__name__} (its attributes guarded one by one)"


# -- copy.deepcopy / copy.copy: what they do with a value, and the guard on the state a copy read ---------
_CONST_LEAVES = frozenset(_CONST_TYPES)  # immutable constants: copied as themselves (or an equal object)
_SEQUENCES = {tuple: "tuple", list: "list", dict: "dict", set: "set", frozenset: "frozenset",
              OrderedDict: "odict"}
_MUTABLE_KINDS = frozenset({"list", "dict", "set", "odict", "object"})
# special methods by which a class changes what copying does (any of them, anywhere in the MRO)
_COPY_HOOKS = ("__deepcopy__", "__copy__", "__setstate__", "__getnewargs_ex__", "__getnewargs__")
_OBJECT_REDUCERS = tuple(n for n in ("__reduce_ex__", "__reduce__", "__getstate__") if hasattr(object, n))
_HEAPTYPE = 1 << 9
_NOT_FOUND = MISSING
_type_lookup = type_attr


def _default_copying(t):
    """Instances of t are copied the way copy.py copies a plain object: a new object of the class
    (object.__new__, no __init__) whose instance __dict__ gets the original's items (deep copied by
    deepcopy), nothing else: no copy or pickle hook, no __slots__, no builtin base with state of its
    own, no copyreg reducer."""
    if type(t) not in (type, abc.ABCMeta) or t.__new__ is not object.__new__ or t in copyreg.dispatch_table or \
            t in copy._deepcopy_dispatch or t in copy._copy_dispatch:
        return False
    for c in t.__mro__:
        if c is not object and (not c.__flags__ & _HEAPTYPE or "__slots__" in c.__dict__):
            return False
    if any(_type_lookup(t, n) is not _NOT_FOUND for n in _COPY_HOOKS) or \
            any(_type_lookup(t, n) is not getattr(object, n) for n in _OBJECT_REDUCERS):
        return False
    return type(_type_lookup(t, "__dict__")) is types.GetSetDescriptorType


def _default_lookups(v):
    """copy.py looks its hooks up on the instance (getattr(x, "__deepcopy__"), x.__reduce_ex__, and
    object.__reduce_ex__ reads __reduce__ and __getstate__ so): with a custom __getattribute__ or
    __getattr__ they must find what the class has (checked now; they are taken to depend only on the
    object's class and state, as for every attribute dyn reads through them)."""
    t = type(v)
    if _type_lookup(t, "__getattribute__") is object.__getattribute__ and _type_lookup(t, "__getattr__") is _NOT_FOUND:
        return True
    try:
        return all(getattr(v, n, _NOT_FOUND) is _NOT_FOUND for n in _COPY_HOOKS) and \
            all(getattr(v, n, None) == getattr(object, n).__get__(v) for n in _OBJECT_REDUCERS)
    except Exception:
        return False


def copy_kind(v):
    """How copy.deepcopy and copy.copy treat v, as dyn models them: "const" (an immutable constant, a
    copy is itself or an equal one), "ident" (kept by identity: functions, classes, enum members),
    "tuple", "frozenset", "list", "dict", "set", "odict" (exact types), "object" (an instance of a
    plain class: a new object with the __dict__'s items), or None (anything else)."""
    t = type(v)
    if t in _CONST_LEAVES:
        return "const"
    kind = _SEQUENCES.get(t)
    if kind is not None:
        return kind
    if isinstance(v, type) or t in (types.FunctionType, property) or (
            t is types.BuiltinFunctionType and (v.__self__ is None or isinstance(v.__self__, types.ModuleType))):
        return "ident"
    if isinstance(v, enum.Enum) and _type_lookup(t, "__deepcopy__") is enum.Enum.__dict__.get("__deepcopy__", 0) and \
            _type_lookup(t, "__copy__") is enum.Enum.__dict__.get("__copy__", 0):
        return "ident"  # Enum's __copy__ and __deepcopy__ return the member itself
    if _default_copying(t) and _default_lookups(v):
        return "object"
    return None


def const_tuple(v):
    """A tuple of immutable constants only (nested tuples too): copied as itself, compared by strict_eq."""
    return type(v) is tuple and all(type(x) in _CONST_LEAVES or const_tuple(x) for x in v)


def copied_state(v):
    """The instance __dict__ copy.py copies (object.__reduce_ex__'s state; not a custom __getattribute__'s)."""
    return object.__getattribute__(v, "__dict__")


def copy_children(v, kind):
    """The values copying v copies: items, or a dict's keys and values, or an object's __dict__ items."""
    if kind in ("dict", "odict"):
        return list(v) + list(v.values())
    if kind == "object":
        return list(copied_state(v).values())
    return list(v)


class NoCopy(Exception):
    """A value whose copy dyn does not model (the message says what)."""


class _Node:
    """One container or object of a StateEquals snapshot: its type, keys (dicts and objects: in order,
    their types too unless all are str; a str subclass key equal to an attribute name is not told
    apart), and its items' types and values: constants by == (what == cannot tell apart, floats' signed
    zeros, NaN, complex numbers, tuples of constants, by strict_eq), functions, classes and enum members
    by identity, containers and objects by a node of their own or, reached again, by identity with the
    first. `values` holds the constants and, where a container is, the real container (a prefilter: an
    unchanged object passes == by identity; its node decides)."""
    __slots__ = ("type", "mutable", "is_obj", "keys", "key_types", "types", "values", "exact", "extra",
                 "nested")


def _snapshot(v, visit, index, budget, depth=0):
    kind = copy_kind(v)
    if kind is None or kind in ("const", "ident"):
        raise NoCopy(f"a {type(v).__name__} is not copied as a plain value")
    if depth > 32:
        raise NoCopy("it is nested more than 32 levels deep")
    node = _Node()
    node.type, node.mutable, node.is_obj = type(v), kind in _MUTABLE_KINDS, kind == "object"
    if node.mutable:
        visit(v)
        index[id(v)] = len(index)
    items = copied_state(v) if kind == "object" else v
    budget[0] -= len(items) + 1
    if budget[0] < 0:
        raise NoCopy("it holds more than 10000 items")
    node.keys = node.key_types = None
    extra = []
    if kind in ("dict", "odict", "object"):
        keys = tuple(items)
        for k in keys:
            if copy_kind(k) not in ("const", "ident") and not const_tuple(k):
                raise NoCopy(f"it holds a {type(v).__name__} key of type {type(k).__name__}")
        node.keys = keys
        if not all(type(k) is str for k in keys):
            node.key_types = tuple(map(type, keys))
            if any(type(k) in (float, complex, tuple) for k in keys):
                extra.append((-1, 3, keys))  # keys by strict_eq
        values = tuple(items.values())
    else:
        values = tuple(items)
    node.types, node.values = tuple(map(type, values)), values
    node.exact, node.nested = [], []
    for i, x in enumerate(values):
        t = type(x)
        if t in _CONST_LEAVES and t is not complex:
            node.exact.append(i)
            if t is float and x == 0.0:
                extra.append((i, 0, math.copysign(1.0, x)))
            continue
        k = copy_kind(x)
        if k == "const" or const_tuple(x):
            node.exact.append(i)
            extra.append((i, 1, x))  # complex, a tuple of constants: strict_eq
        elif k == "ident":
            extra.append((i, 2, x))
        elif k in _MUTABLE_KINDS and id(x) in index:
            node.nested.append((i, index[id(x)]))  # the same object again (aliasing, a cycle)
        elif k is None:
            raise NoCopy(f"it holds a {t.__name__}")
        else:
            node.nested.append((i, _snapshot(x, visit, index, budget, depth + 1)))
    node.extra = tuple(extra) or None
    return node


def _check_node(node, v, seen):
    if type(v) is not node.type:
        return False
    if node.mutable:
        seen.append(v)
    if node.is_obj:
        v = object.__getattribute__(v, "__dict__")
    if node.keys is not None:
        if tuple(v) != node.keys or (node.key_types is not None and tuple(map(type, v)) != node.key_types):
            return False
        vals = tuple(v.values())
    else:
        vals = tuple(v)
    if tuple(map(type, vals)) != node.types:
        return False
    if vals != node.values:
        # a container that is another object now (its node decides), or a NaN: constants by strict_eq
        want = node.values
        if not all(strict_eq(vals[i], want[i]) for i in node.exact):
            return False
    if node.extra is not None:
        for i, how, w in node.extra:
            if how == 0:
                if math.copysign(1.0, vals[i]) != w:
                    return False
            elif how == 1:
                if not strict_eq(vals[i], w):
                    return False
            elif how == 2:
                if vals[i] is not w:
                    return False
            elif not all(strict_eq(a, b) for a, b in zip(v, w)):
                return False
    for i, sub in node.nested:
        if type(sub) is int:
            if vals[i] is not seen[sub]:
                return False
        elif not _check_node(sub, vals[i], seen):
            return False
    return True


class StateEquals:
    """Guard value (a predicate on the object at the path) for copy.deepcopy of a real object: the object
    has the same type and the same state as when it was copied, all the way down: the same types
    everywhere, equal constants (strict_eq), the same keys in order, the very same functions, classes and
    enum members, and the same sharing of lists, dicts, sets and objects between its parts (a deep copy
    shares them likewise). Classes are taken as they were (their copy hooks, as everywhere in dyn)."""
    __slots__ = ("root", "what")

    def __init__(self, v, visit=None):
        """visit(obj) is called on every list, dict, set and object of the state (it may raise NoCopy)."""
        self.what = type(v).__name__
        self.root = _snapshot(v, visit or (lambda obj: None), {}, [10000])

    def __call__(self, v):
        seen = []
        try:
            if not _check_node(self.root, v, seen):
                return False
        except Exception:
            return False  # something else now (a value whose == raises)
        return len(seen) < 2 or len(set(map(id, seen))) == len(seen)

    def __repr__(self):
        return f"a {self.what} with the same state, all the way down (deep-copied)"


class DictKeys:
    """Guard value (a predicate): the object's instance __dict__ has these keys, in this order (copy.copy
    of a real object: which attributes the copy gets; their values are guarded as reads)."""
    __slots__ = ("keys",)

    def __init__(self, keys):
        self.keys = keys

    def __call__(self, v):
        try:
            return tuple(object.__getattribute__(v, "__dict__")) == self.keys
        except Exception:
            return False

    def __repr__(self):
        return f"has the attributes {list(self.keys)} in its __dict__, in this order"


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
            if tensors_by_path and (isinstance(x, torch.Tensor) or is_plain_instance(x)):
                self.items.append((0, None))  # guarded through its own path (a tensor, TypeIs)
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



def _arg_guard(a, containers=False):
    if containers and (_is_container(a) or is_plain_instance(a)):
        return None  # checked item by item by the Python guard (_container_guard), or by type (TypeIs)
    if is_opaque_type(type(a)):
        return None  # never looked at by the graph (Opaque)
    if isinstance(a, torch.Tensor):
        return (0, type(a), a.dtype, a.device, tuple(a.size()), tuple(a.stride()), a.requires_grad)
    if a is None or isinstance(a, bool):
        return (1, a)
    if isinstance(a, (int, float, str)) or (type(a) in (tuple, list) and is_constant(a)):
        return (2, type(a), copy.deepcopy(a) if isinstance(a, list) or type(a) is tuple else a)
    if type(a) is dict and all(type(k) is str and is_constant(v) for k, v in a.items()):
        return (2, dict, copy.deepcopy(a))  # a copy: the caller may mutate its dict later
    if isinstance(a, torch.device):
        return (2, torch.device, a)
    return (1, a)


def _global_guards(tr):
    """Guards on globals, closure cells and global state, checked in C: (dict or cell or getter, name,
    value, kind) with kind 1 identity, 2 same type and ==."""
    out = []
    for where, name, v in tr.global_guards:
        kind = 2 if (is_constant_value(v) and v is not None and not isinstance(v, bool)) else 1
        if kind == 2 and isinstance(v, (list, dict, set)):
            v = copy.deepcopy(v)  # mutable: compare with the value read, not the same object
        out.append((where, name, v, kind))
    # global state the graph may depend on: factories and int->float promotion use the default dtype
    out.append((torch.get_default_dtype, "default dtype", torch.get_default_dtype(), 1))
    if tr.reads_grad_mode:
        out.append((torch.is_grad_enabled, "grad mode", torch.is_grad_enabled(), 1))
    for what, (getter, v) in tr.state_reads.items():
        out.append((getter, what, v, 2))
    return tuple(out)



def _py_check_tensor(a, g):
    return (type(a) is g[1] and a.dtype is g[2] and a.size() == g[4] and a.stride() == g[5]
            and a.requires_grad is g[6] and a.device == g[3])



def _is_container(a):
    # a dict of str keys is checked key by key and item by item (the frame's **kwargs is a new dict
    # per call: an identity guard would never hold)
    return ((type(a) in (tuple, list) or is_namedtuple(a)) and not is_constant(a)) or \
        (type(a) is dict and all(type(k) is str for k in a) and not is_constant_value(a)) or \
        (isinstance(a, dict) and _is_user_dict_class(type(a)) and len(a) <= 64 and all(type(k) is str for k in a))


def _container_guard(value, dynamic=()):
    """Checks that an argument container has the same type, length (keys) and item guards. dynamic: ids of
    tensors with symbolic dims (the symbolic check guards them)."""
    t, n = type(value), len(value)
    keys = list(value) if isinstance(value, dict) else None  # a dict, or a ModelOutput: by its items
    items = []
    for x in (value.values() if isinstance(value, dict) else value):
        if id(x) in dynamic:
            items.append((4, None))
        elif _is_container(x):
            items.append((2, _container_guard(x, dynamic)))
        elif is_plain_instance(x):
            items.append((3, type(x)))  # its attributes read are guarded through their paths
        else:
            items.append((0, _arg_guard(x)))

    def check(v):
        if type(v) is not t or len(v) != n:
            return False
        if keys is not None:
            if list(v) != keys:
                return False
            v = v.values()
        for x, (kind, g) in zip(v, items):
            if kind == 2:
                if not g(x):
                    return False
            elif kind == 3:
                if type(x) is not g:
                    return False
            elif kind == 4:
                continue
            elif g[0] == 0:
                if not isinstance(x, torch.Tensor) or not _py_check_tensor(x, g):
                    return False
            elif g[0] == 1:
                if x is not g[1]:
                    return False
            elif type(x) is not g[1] or not strict_eq(x, g[2]):
                return False
        return True
    return check


def _objects_related(groups, written):
    """Real lists, dicts (one traced copy each) and plain objects reached through paths that are not
    guarded by identity must be related as while capturing: the sources of one give one object (reads
    through the second path were answered by the first) and, where one was written, it is none of the
    others (else a write through one would be missed by a read through another). groups: the sources
    of each; written: the indices of those written."""
    groups = [[_resolver(s) for s in srcs] for srcs in groups]

    def check(args):
        firsts = []
        for group in groups:
            first = group[0](args)
            if any(r(args) is not first for r in group[1:]):
                return False
            firsts.append(first)
        for k in written:
            if any(j != k and firsts[j] is firsts[k] for j in range(len(firsts))):
                return False
        return True
    return check


def _cpath(path):
    """A source path as the C guards take it: (False, arg index, step...) or (True, object, step...)."""
    return (path[0] == "obj",) + tuple(path[1:])


def _path_guards(tr, args=None, dynamic=()):
    """The guards on what the graph read through paths: (paths, extra). paths are checked in C
    (eval_frame.c check_paths): ((path, kind, value), ...) with kind 0 tensor, 1 identity, 2 strict_eq,
    3 structure, 4 predicate, 5 module (no hooks, same forward). extra(args) -> bool covers what relates
    several paths (Python). dynamic: ids of input tensors with symbolic dims (guarded by the symbolic
    check instead of by their sizes)."""
    paths, seen = [], set()

    def add(path, kind, value):
        key = (tuple(id(a) if i == 1 and path[0] == "obj" else a for i, a in enumerate(path)), kind,
               (value.name, value.expect, value.in_dict) if isinstance(value, HasAttr) else
               value.type if isinstance(value, TypeIs) else
               "state" if isinstance(value, StateEquals) else
               ("keys", value.keys) if isinstance(value, DictKeys) else None)
        if key not in seen:  # read more than once: the first read's guard covers it
            seen.add(key)
            paths.append((_cpath(path), kind, value))
    for path, value in tr.attr_guards:
        if isinstance(value, Is):
            add(path, 1, value.obj)
        elif isinstance(value, Structure):
            add(path, 3, value.as_tuple())
        elif isinstance(value, ModuleGuard):
            add(path, 5, value.forward)
        elif isinstance(value, (HasAttr, TypeIs, StateEquals, DictKeys)):
            add(path, 4, value)
        else:
            add(path, 2, copy.deepcopy(value) if isinstance(value, list) else value)
    for t, path in zip(tr.input_tensors, tr.input_sources):
        if path[0] == "arg" and (len(path) == 2 or (isinstance(path[2], (int, tuple)) and
                                                    _is_container(args[path[1]] if args else None))):
            continue  # checked by the argument guards or the container guards
        if id(t) not in dynamic:
            add(path, 0, _arg_guard(t))
    for i, a in enumerate(args or ()):
        if _arg_guard(a, True) is None and _is_container(a):
            add(("arg", i), 4, _container_guard(a, dynamic))
        elif is_plain_instance(a):
            add(("arg", i), 4, TypeIs(type(a)))
    checks = []
    for source, j in tr.input_aliases:
        # one tensor reached through two sources is one graph input: they must stay the same object
        this, that = _resolver(source), _resolver(tr.input_sources[j])
        checks.append(lambda args, this=this, that=that: this(args) is that(args))
    for j, offset in dict.fromkeys(tr.offset_guards):
        # an as_strided view at an explicit storage offset: right while the input starts there
        get = _resolver(tr.input_sources[j])
        checks.append(lambda args, get=get, offset=offset: get(args).storage_offset() == offset)
    groups = list(tr.copy_sources.items()) + list(tr.plain_sources.items())
    written = [k for k, (key, _) in enumerate(groups) if key in tr.side.changed or key in tr.side.pending]
    if written or any(len(srcs) > 1 for _, srcs in groups):
        checks.append(_objects_related([srcs for _, srcs in groups], written))
    if tr.mutation_spans is not None and len(tr.input_sources) > 1:
        # a graph that updates an input in place is only right while no other input overlaps it
        gather = _gatherer(tr.input_sources)
        free = conflict_free(*tr.mutation_spans)
        checks.append(lambda args: free(gather(args)))
    extra = None
    if checks:
        def extra(args):
            try:
                return all(c(args) for c in checks)
            except Exception:
                return False
    return tuple(paths) or None, extra
