"""Guards: what an entry of the cache checks before its compiled code runs. Guard values recorded while
capturing (Is, ModuleGuard, Structure) and the guards built from a capture: per argument, on globals and
global state, and on paths (checked in C by eval_frame.c; guard_check.py has the same rules in Python)."""
import copy
import types

import torch

from .outputs import _memory_conflict
from .paths import _gatherer, _resolver
from .values import (_is_user_dict_class, is_constant, is_constant_value, is_namedtuple, is_opaque_type,
                     is_plain_instance, strict_eq)


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


def _container_guard(value):
    """Checks that an argument container has the same type, length (keys) and item guards."""
    t, n = type(value), len(value)
    keys = list(value) if isinstance(value, dict) else None  # a dict, or a ModelOutput: by its items
    items = []
    for x in (value.values() if isinstance(value, dict) else value):
        if _is_container(x):
            items.append((2, _container_guard(x)))
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


def _path_guards(tr, args=None):
    """The guards on what the graph read through paths: (paths, extra). paths are checked in C
    (eval_frame.c check_paths): ((path, kind, value), ...) with kind 0 tensor, 1 identity, 2 strict_eq,
    3 structure, 4 predicate, 5 module (no hooks, same forward). extra(args) -> bool covers what relates
    several paths (Python)."""
    paths, seen = [], set()

    def add(path, kind, value):
        key = (tuple(id(a) if i == 1 and path[0] == "obj" else a for i, a in enumerate(path)), kind,
               (value.name, value.expect, value.in_dict) if isinstance(value, HasAttr) else
               value.type if isinstance(value, TypeIs) else None)
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
        elif isinstance(value, (HasAttr, TypeIs)):
            add(path, 4, value)
        else:
            add(path, 2, copy.deepcopy(value) if isinstance(value, list) else value)
    for t, path in zip(tr.input_tensors, tr.input_sources):
        if path[0] == "arg" and (len(path) == 2 or (isinstance(path[2], (int, tuple)) and
                                                    _is_container(args[path[1]] if args else None))):
            continue  # checked by the argument guards or the container guards
        add(path, 0, _arg_guard(t))
    for i, a in enumerate(args or ()):
        if _arg_guard(a, True) is None and _is_container(a):
            add(("arg", i), 4, _container_guard(a))
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
        spans, mutated = tr.mutation_spans
        checks.append(lambda args: not _memory_conflict(gather(args), spans, mutated))
    extra = None
    if checks:
        def extra(args):
            try:
                return all(c(args) for c in checks)
            except Exception:
                return False
    return tuple(paths) or None, extra
