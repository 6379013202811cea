"""dyn.compile: the wrapper, guards, the per-code cache and fallbacks.

Call path (CPython 3.11/3.12 with dyn._C): the wrapper installs the PEP 523 hook with its callback and
calls the original function. The hook finds the code object's cache, checks guards in C and calls the
matching entry's runner without running the frame; on a miss it calls `_on_miss`, which captures the
frame's arguments symbolically, builds a Graph, compiles it with the backend and returns a new entry.
Without the hook (extension missing) the same entries are looked up from Python."""
import copy
import inspect
import keyword
import operator
import os
import sys
import types
import warnings
import weakref

import torch
from torch.nn.modules import module as _module_hooks  # the global module hooks live there

from . import backends as B
from . import resume
from . import symbolic
from .errors import Unsupported
from .graph import Graph
from .symbolic import is_constant, strict_eq
from .tensor_ops import TensorVar

try:
    from . import _C
except ImportError:
    _C = None

_HOOK = _C is not None and getattr(_C, "HOOK_SUPPORTED", 0) and (3, 11) <= sys.version_info[:2] <= (3, 12)
RECOMPILE_LIMIT = 8
# mode names torch.compile accepts; dyn has one compilation strategy, so all compile the same way
_MODES = {None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"}
_run_only = [0]  # depth of `with dyn.run():`


def _log_enabled(kind):
    kinds = {k.strip() for k in os.environ.get("DYN_LOGS", "").split(",")}
    return kind in kinds or "all" in kinds


def _log(kind, msg):
    """DYN_LOGS=graph_breaks,recompiles,guards (or all): one line per event on stderr."""
    if _log_enabled(kind):
        print(f"[dyn:{kind}] {msg}", file=sys.stderr)


def _where(code):
    return f"{code.co_filename}:{code.co_firstlineno}"
_wrappers = weakref.WeakSet()
_counters = {"captures": 0, "graph_breaks": 0, "eager_entries": 0, "backend_calls": 0,
             "internal_failures": 0}
_last_graphs = []


def _stats():
    """Counters: captures (frames traced), backend_calls (graphs handed to a backend),
    graphs_compiled (by the C++ core), graph_breaks, eager_entries, hook counters."""
    s = dict(_counters)
    s.update(B.stats)
    if _C is not None:
        s["hook"] = _C.hook_stats()
    return s


def last_graphs():
    return list(_last_graphs)


def reset():
    """Drops every compiled entry (the next call captures again) and zeroes the counters."""
    for w in list(_wrappers):
        w._clear()
    for k in _counters:
        _counters[k] = 0
    B.stats["graphs_compiled"] = 0
    B.stats["compile_seconds"] = 0.0
    _last_graphs.clear()


def list_backends():
    return sorted(B.BACKENDS)


# -- guards --------------------------------------------------------------------------------------------
def _arg_guard(a, containers=False):
    if containers and _is_container(a):
        return None  # checked item by item by the Python guard (_container_guard)
    if symbolic.is_opaque_type(type(a)):
        return None  # never looked at by the graph (symbolic.Opaque)
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
        kind = 2 if (symbolic.is_constant_value(v) and v is not None and not isinstance(v, bool)) else 1
        if kind == 2 and isinstance(v, (list, dict, set)):
            v = copy.deepcopy(v)  # mutable: compare with the value read, not the same object
        out.append((where, name, v, kind))
    # global state the graph may depend on: factories and int->float promotion use the default dtype
    out.append((torch.get_default_dtype, "default dtype", torch.get_default_dtype(), 1))
    if tr.reads_grad_mode:
        out.append((torch.is_grad_enabled, "grad mode", torch.is_grad_enabled(), 1))
    return tuple(out)


def _read_global(where, name):
    if name is None:
        return where.cell_contents
    if callable(where):
        return where()
    return where[name]


def _check_globals(gg):
    if gg is None:
        return True
    for where, name, want, kind in gg:
        try:
            v = _read_global(where, name)
        except (ValueError, KeyError):
            return False
        if v is not want and (kind != 2 or not strict_eq(v, want)):
            return False
    return True


def _py_check_tensor(a, g):
    return (type(a) is g[1] and a.dtype is g[2] and a.size() == g[4] and a.stride() == g[5]
            and a.requires_grad is g[6] and a.device == g[3])


def _py_lookup(entries, args):
    for e in entries:
        guards = e[0]
        if len(guards) != len(args):
            continue
        ok = True
        for a, g in zip(args, guards):
            if g is None:
                continue
            k = g[0]
            if k == 0:
                ok = _py_check_tensor(a, g)
            elif k == 1:
                ok = a is g[1]
            else:
                ok = type(a) is g[1] and strict_eq(a, g[2])
            if not ok:
                break
        if ok and len(e) > 3:
            ok = _check_globals(e[3])
        if ok and len(e) > 4:
            ok = _check_paths(e[4], args)
        if ok and len(e) > 2 and e[2] is not None:
            try:
                ok = bool(e[2](args))
            except Exception:
                ok = False
        if ok:
            return e
    return None


def _describe_arg(i, a):
    g = _arg_guard(a)
    if g[0] == 0:
        return (f"arg{i}: tensor dtype={g[2]} device={g[3]} size={g[4]} stride={g[5]} "
                f"requires_grad={g[6]}")
    if g[0] == 1:
        return (f"arg{i}: is {type(a).__name__} object" if a is not None and not isinstance(a, bool)
                else f"arg{i}: is {a!r}")
    return f"arg{i}: == {a!r}"


def _describe_guards(args, gg=None, paths=None):
    out = [_describe_arg(i, a) for i, a in enumerate(args)]
    for cpath, kind, want in paths or ():
        what = {0: lambda: f"tensor dtype={want[2]} device={want[3]} size={want[4]} stride={want[5]} "
                           f"requires_grad={want[6]}",
                1: lambda: f"is {type(want).__name__} object", 2: lambda: f"== {want!r}",
                3: lambda: f"{want[0].__name__} with the same " + ("keys " + repr(list(want[1])) if want[0] is dict
                                                                   else "items") + " and items",
                4: lambda: "container with the same items",
                5: lambda: f"module without hooks, forward {getattr(want, '__qualname__', want)}"}[kind]()
        out.append(f"{_cpath_str(cpath)}: {what}")
    for where, name, v, kind in gg or ():
        if callable(where):
            out.append(f"{name}: is {v}")
            continue
        what = f"global {name} ({where.get('__name__', '?')})" if name is not None else "closure cell"
        out.append(f"{what}: {'==' if kind == 2 else 'is'} {v!r}" if kind == 2 else
                   f"{what}: is {type(v).__name__} object")
    return out


def _guard_failure(entry, args):
    """Why `args` miss `entry`: the first guard that fails, in words."""
    guards = entry[0]
    if len(guards) != len(args):
        return f"{len(args)} arguments, was {len(guards)}"
    for i, (a, g) in enumerate(zip(args, guards)):
        if g is None:
            continue
        if g[0] == 0:
            if not isinstance(a, torch.Tensor):
                return f"arg{i} is a {type(a).__name__}, was a tensor"
            for what, now, was in (("dtype", a.dtype, g[2]), ("device", a.device, g[3]),
                                   ("size", tuple(a.size()), g[4]), ("stride", tuple(a.stride()), g[5]),
                                   ("requires_grad", a.requires_grad, g[6])):
                if now != was:
                    return f"arg{i}.{what} is {now}, was {was}"
        elif g[0] == 1 and a is not g[1]:
            return f"arg{i} is another object than {g[1]!r}" if not isinstance(a, (bool, type(None))) \
                else f"arg{i} is {a!r}, was {g[1]!r}"
        elif g[0] == 2 and (type(a) is not g[1] or not strict_eq(a, g[2])):
            return f"arg{i} == {a!r}, was {g[2]!r}"
    if len(entry) > 3 and not _check_globals(entry[3]):
        for where, name, want, kind in entry[3]:
            if not _check_globals(((where, name, want, kind),)):
                if callable(where):
                    return f"{name} is {where()}, was {want}"
                return f"global {name} changed" if name is not None else "a closure variable changed"
    for cpath, kind, want in (entry[4] if len(entry) > 4 else None) or ():
        if not _check_path(cpath, kind, want, args):
            return f"{_cpath_str(cpath)} {_PATH_CHANGE[kind]}"
    return "several inputs alias differently (the same tensor, or overlapping memory)"


_PATH_CHANGE = {0: "is another kind of tensor (type, dtype, device, size, stride or requires_grad)",
                1: "is another object", 2: "changed value", 3: "changed (length, keys or items)",
                4: "changed (length, keys or items)", 5: "has hooks now, or another forward"}


def _cpath_str(cpath):
    root = f"<{type(cpath[1]).__name__}>" if cpath[0] else f"arg{cpath[1]}"
    return root + symbolic._steps_str(cpath[2:])


def _resolver(path):
    """args -> the value at path: ('arg', i, step...) or ('obj', object, step...); a step is an attribute
    name or an item index."""
    steps = path[2:]
    if path[0] == "obj":
        t = path[1]
        if not steps:
            return lambda args: t
        if all(isinstance(a, str) for a in steps):
            get_attr = operator.attrgetter(".".join(steps))
            return lambda args: get_attr(t)
        base = lambda args: t  # noqa: E731
    else:
        i = path[1]
        if not steps:
            return operator.itemgetter(i)
        if all(isinstance(a, str) for a in steps):
            get = operator.attrgetter(".".join(steps))
            return lambda args: get(args[i])
        base = operator.itemgetter(i)

    def resolve(args):
        v = base(args)
        for a in steps:
            v = v[a] if isinstance(a, int) else v[a[1]] if isinstance(a, tuple) else getattr(v, a)
        return v
    return resolve


def _gatherer(paths):
    """args -> [the value at each path], as one generated function (the runners' hot path)."""
    ns, exprs = {}, []
    for k, path in enumerate(paths):
        if path[0] == "obj":
            ns[f"o{k}"] = path[1]
            e = f"o{k}"
        else:
            e = f"args[{path[1]}]"
        for a in path[2:]:
            if type(a) is str and a.isidentifier() and not keyword.iskeyword(a):
                e += f".{a}"
            elif type(a) is str:
                e = f"getattr({e}, {a!r})"
            elif type(a) is int:
                e += f"[{a}]"
            else:
                ns[f"k{k}_{len(e)}"] = a[1]
                e += f"[k{k}_{len(e)}]"
        exprs.append(e)
    exec(f"def gather(args):\n    return [{', '.join(exprs)}]\n", ns)
    return ns["gather"]


def _is_container(a):
    return ((type(a) in (tuple, list) or symbolic.is_namedtuple(a)) and not is_constant(a)) or \
        (type(a) is dict and all(type(k) is str for k in a) and symbolic._contains_real_tensor(a))


def _container_guard(value):
    """Checks that an argument container has the same type, length (keys) and item guards."""
    t, n = type(value), len(value)
    keys = list(value) if t is dict else None
    items = []
    for x in (value.values() if t is dict else value):
        if _is_container(x):
            items.append((2, _container_guard(x)))
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
        key = (tuple(id(a) if i == 1 and path[0] == "obj" else a for i, a in enumerate(path)), kind)
        if key not in seen:  # read more than once: the first read's guard covers it
            seen.add(key)
            paths.append((_cpath(path), kind, value))
    for path, value in tr.attr_guards:
        if isinstance(value, symbolic.Is):
            add(path, 1, value.obj)
        elif isinstance(value, symbolic.Structure):
            add(path, 3, value.as_tuple())
        elif isinstance(value, symbolic.ModuleGuard):
            add(path, 5, value.forward)
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
    checks = []
    for source, j in tr.input_aliases:
        # one tensor reached through two sources is one graph input: they must stay the same object
        this, that = _resolver(source), _resolver(tr.input_sources[j])
        checks.append(lambda args, this=this, that=that: this(args) is that(args))
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


def _check_path(cpath, kind, want, args):
    """One path guard in Python (the same rules as eval_frame.c check_paths): the lookup without the
    frame hook, and the words of a guard failure."""
    try:
        v = _resolver(("obj" if cpath[0] else "arg",) + cpath[1:])(args)
    except (AttributeError, KeyError, IndexError, TypeError):
        return False
    if kind == 0:
        return isinstance(v, torch.Tensor) and _py_check_tensor(v, want)
    if kind == 1:
        return v is want
    if kind == 2:
        return strict_eq(v, want)
    if kind == 3:
        return symbolic.Structure.check_tuple(want, v)
    if kind == 5:
        return symbolic.ModuleGuard(want).check(v)
    return bool(want(v))


def _check_paths(paths, args):
    return paths is None or all(_check_path(p, k, w, args) for p, k, w in paths)


# -- outputs --------------------------------------------------------------------------------------------
def _flatten_output(out, graph, fail, tracer=None):
    """Returns (template, output nodes). Template leaves: ('o', k) graph output k; ('oc', k) a copy of graph
    output k (another tensor with the same value); ('i', j, fresh) graph input j (a copy when fresh);
    ('vi', j, size, stride, offset) a view of graph input j (offset counted from its storage offset), as
    eager's view of that input; ('vo', k, size, stride, offset) a view of graph output k (when the base
    of views is returned or several views of it are); ('det', leaf) the leaf detached from autograd;
    ('c', value) a constant; containers ('t'|'l', [...]),
    ('d', [(key, ...)]).
    With inputs updated in place (tracer.mutations) or views needing a base that is not a plain graph
    output, the template is ('m', inner, writes, prep): the inner value is built first (copies of inputs
    see the values from before the call), then each (j, src, detach) of writes copies the final value
    src (('o', k), or ('i', jj) graph input jj's value from before the call) into the real input j,
    detach: without autograd. prep: dict(contig=[k: graph outputs made contiguous, bases of 'vo'],
    clones=[j: copies of inputs appended to the outputs, bases of 'vo'], spans=[bytes spanned per input],
    mutated=[j]) - inputs updated in place must not share memory with other inputs."""
    outs = []
    index = {}

    def out_index(n):
        k = index.get(n)
        if k is None:
            k = index[n] = len(outs)
            outs.append(n)
        return k

    # the tensors returned, grouped by the memory they share (views and their base)
    found, seen = [], set()

    def collect(v):
        if isinstance(v, TensorVar):
            if id(v) not in seen:
                seen.add(id(v))
                found.append(v)
        elif type(v) in (tuple, list) or symbolic.is_namedtuple(v):
            for x in v:
                collect(x)
        elif isinstance(v, dict):
            for x in v.values():
                collect(x)
        elif _is_made_object(v, tracer):
            for x in vars(v).values():
                collect(x)
    collect(out)
    members = {}
    for v in found:
        st = _storage_of(v)
        if st is not None and st.input_index is None:
            members.setdefault(st, []).append(v)
    shared = [st for st, vs in members.items() if len(vs) > 1]
    bases, claimed, contig, clones = {}, {}, [], []
    n_clones = sum(1 for st in shared if st.node.op == "input")
    for st in shared:
        if any(v.view is not None and not v.view.exact for v in members[st]):
            fail("returning a tensor together with a view of it made by reshape/flatten/contiguous (eager "
                 "makes a view or a copy depending on a layout dyn does not model)")
        if st.node.op == "input":  # a copy of an input (clone) views were taken of: a copy made per call
            bases[st] = len(clones) - n_clones  # counted from the end of the extended outputs
            clones.append(st.node.index)
        else:
            bases[st] = out_index(st.node)
            claimed[st.node] = st
            contig.append(bases[st])

    def plain(v):
        n = v.node
        if n.op == "input":
            return ("i", n.index, True)  # not the input itself: a copy of its value
        owner = claimed.get(n)
        if owner is None:
            claimed[n] = v
        elif owner is not v:
            return ("oc", out_index(n))
        return ("o", out_index(n))

    def leaf(v):
        info = v.view
        if info is not None:
            st = info.storage
            s = info.shadow
            if st.input_index is not None:
                if not info.exact:
                    fail("returning a view of an input dyn cannot lay out")
                return ("vi", st.input_index, tuple(s.shape), tuple(s.stride()), s.storage_offset())
            if st in bases:
                return ("vo", bases[st], tuple(s.shape), tuple(s.stride()), s.storage_offset())
            return plain(v)
        if v.input_index is not None:
            return ("i", v.input_index, False)
        if v.alias is not None and v.alias in bases:
            return ("o", bases[v.alias])
        return plain(v)

    def walk(v):
        if isinstance(v, TensorVar):
            r = leaf(v)
            if v.view is not None and any(step[0] == "detach" for step in v.view.steps):
                r = ("det", r)
            return r
        if isinstance(v, tuple) and type(v) is tuple:
            return ("t", [walk(x) for x in v])
        if symbolic.is_namedtuple(v):
            return ("nt", type(v), [walk(x) for x in v])
        if _is_made_object(v, tracer):  # a user object (a dataclass) made by the traced code
            return ("obj", type(v), [(k, walk(x)) for k, x in vars(v).items()])
        if isinstance(v, list):
            return ("l", [walk(x) for x in v])
        if isinstance(v, dict) and all(is_constant(k) for k in v):
            return ("d", [(k, walk(x)) for k, x in v.items()])
        if is_constant(v):
            return ("c", v)
        fail(f"returning a {type(v).__name__}")

    tmpl = walk(out)
    writes = []
    mutations = getattr(tracer, "mutations", None) or {}
    for j, v in mutations.items():
        n = v.node
        if n.op == "input":
            if n.index != j:
                writes.append((j, ("i", n.index), j not in tracer.grad_mutations))
        else:
            writes.append((j, ("o", out_index(n)), j not in tracer.grad_mutations))
    if not writes and not contig and not clones:
        return tmpl, outs
    spans, mutated = [], [j for j, _, _ in writes]
    if writes:
        spans = [_span(t) for t in tracer.input_tensors]
        tracer.mutation_spans = (spans, mutated)
        if _memory_conflict(tracer.input_tensors, spans, mutated):
            fail("in-place update of an input that shares memory with another input")
        if any(j in mutated for _, j in getattr(tracer, "input_aliases", ())):
            fail("in-place update of an input the frame reaches through several arguments or attributes")
    return ("m", tmpl, writes, dict(contig=contig, clones=clones, spans=spans, mutated=mutated)), outs


def _is_made_object(v, tracer):
    """An instance of a plain user class that the traced code constructed (symbolic.Frame.instantiate)."""
    return tracer is not None and type(v) in tracer.created_classes and id(v) in tracer.created


def _storage_of(v):
    return v.view.storage if v.view is not None else v.alias


def _span(t):
    """Bytes from the first to past the last element of t (0 when empty)."""
    if t.numel() == 0:
        return 0
    return (sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride())) + 1) * t.element_size()


def _memory_conflict(ins, spans, mutated):
    """Whether an input in `mutated` overlaps (by address range) another input."""
    mut = set(mutated)
    iv = sorted((ins[i].data_ptr(), ins[i].data_ptr() + n, i) for i, n in enumerate(spans) if n)
    for a in range(len(iv)):
        start, end, i = iv[a]
        for b in range(a + 1, len(iv)):
            s2, e2, i2 = iv[b]
            if s2 >= end:
                break
            if i in mut or i2 in mut:
                return True
    return False


def _rebuilder(tmpl):
    kind = tmpl[0]
    if kind == "o":
        k = tmpl[1]
        return lambda outs, ins: outs[k]
    if kind == "oc":
        k = tmpl[1]
        return lambda outs, ins: outs[k].clone()
    if kind == "i":
        j, fresh = tmpl[1], tmpl[2]
        if fresh:
            return lambda outs, ins: ins[j].clone()
        return lambda outs, ins: ins[j]
    if kind in ("vi", "vo"):
        k, size, stride, off = tmpl[1:]
        if kind == "vi":
            return lambda outs, ins: ins[k].as_strided(size, stride, ins[k].storage_offset() + off)
        return lambda outs, ins: outs[k].as_strided(size, stride, outs[k].storage_offset() + off)
    if kind == "c":
        v = tmpl[1]
        return lambda outs, ins: v
    if kind == "m":
        return _mutation_rebuilder(tmpl)
    if kind == "nt":
        cls, subs = tmpl[1], [_rebuilder(t) for t in tmpl[2]]
        return lambda outs, ins: cls._make([s(outs, ins) for s in subs])
    if kind == "obj":  # a new instance per call with the attributes __init__ set while capturing
        cls, subs = tmpl[1], [(k, _rebuilder(t)) for k, t in tmpl[2]]

        def make(outs, ins):
            o = object.__new__(cls)
            o.__dict__.update((k, s(outs, ins)) for k, s in subs)
            return o
        return make
    if kind == "det":
        sub = _rebuilder(tmpl[1])
        return lambda outs, ins: sub(outs, ins).detach()
    subs = [(_rebuilder(t) if kind != "d" else (t[0], _rebuilder(t[1]))) for t in tmpl[1]]
    if kind == "t":
        return lambda outs, ins: tuple(s(outs, ins) for s in subs)
    if kind == "l":
        return lambda outs, ins: [s(outs, ins) for s in subs]
    return lambda outs, ins: {k: s(outs, ins) for k, s in subs}


def _mutation_rebuilder(tmpl):
    """('m', inner, writes, prep): see _flatten_output."""
    _, inner_t, writes, prep = tmpl
    inner = _rebuilder(inner_t)
    contig, clones, spans, mutated = prep["contig"], prep["clones"], prep["spans"], prep["mutated"]
    dests = set(mutated)
    grad_writes = [(j, src) for j, src, detach in writes if not detach]
    nograd_writes = [(j, src) for j, src, detach in writes if detach]

    def run(outs, ins):  # the entry's guards checked that no other input overlaps a mutated one
        if contig or clones:
            outs = list(outs)
            for k in contig:
                if not outs[k].is_contiguous():
                    outs[k] = outs[k].contiguous()
            outs += [ins[j].clone(memory_format=torch.contiguous_format) for j in clones]
        r = inner(outs, ins)
        if writes:
            def source(src):
                if src[0] == "o":
                    return outs[src[1]]
                t = ins[src[1]]
                return t.clone() if src[1] in dests else t  # its value from before the writes
            gsrc = [(j, source(src)) for j, src in grad_writes]
            nsrc = [(j, source(src)) for j, src in nograd_writes]
            for j, t in gsrc:
                ins[j].copy_(t)
            if nsrc:
                with torch.no_grad():
                    for j, t in nsrc:
                        ins[j].copy_(t)
        return r
    return run


def _make_runner(tr, tmpl, kernel):
    gather = _gatherer(tr.input_sources)
    rebuild = _rebuilder(tmpl)
    arg_only = all(p[0] == "arg" and len(p) == 2 for p in tr.input_sources)
    idxs = [p[1] for p in tr.input_sources] if arg_only else None
    single = tmpl[0] == "o" and tmpl[1] == 0

    if kernel is None:
        def run(*args):
            return rebuild((), gather(args))
        return run
    if arg_only and single:
        def run(*args):
            return kernel(*[args[i] for i in idxs])[0]
        return run
    if arg_only:
        def run(*args):
            ins = [args[i] for i in idxs]
            return rebuild(kernel(*ins), ins)
        return run

    def run(*args):
        ins = gather(args)
        return rebuild(kernel(*ins), ins)
    return run


def _device_of(args):
    for a in args:
        if isinstance(a, torch.Tensor):
            return a.device
    return torch.device("cpu")


_LIVE_OBJECTS = (torch.nn.Module, types.FunctionType, types.MethodType, types.BuiltinFunctionType, type,
                 types.ModuleType)


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


class _Method:
    __slots__ = ("obj", "name", "func")

    def __init__(self, obj, name, func=None):
        self.obj, self.name, self.func = obj, name, func


_ITER_TYPES = (type(iter(())), type(iter([])), type(iter(range(0))), zip, enumerate, reversed,
               type(iter({})), type({}.items()), type(iter({}.items())), type(iter({}.values())),
               type(iter(set())), map, filter)


def capture(func, args, allow_breaks=False):
    """Traces func over bound args; returns (tracer, template, graph, graph_break). graph_break is None
    when the frame returned; else a _Break: the graph then outputs (condition or None, live tensors)."""
    _counters["captures"] += 1
    device = _device_of(args)
    tr, out, br = symbolic.trace(func, args, device, allow_breaks)
    g = tr.graph

    def fail(reason, filename=func.__code__.co_filename, lineno=func.__code__.co_firstlineno):
        raise Unsupported(reason, filename, lineno)
    if br is None:
        tmpl, outs = _flatten_output(out, g, fail, tracer=tr)
        g.outputs = outs
        _prune(g)
        return tr, tmpl, g, None
    _counters["graph_breaks"] += 1
    brk = _Break(func, br, tr, lambda why: fail(f"{why} at a graph break ({br.reason})", br.filename, br.lineno))
    tmpl, outs = _flatten_output((br.cond, tuple(brk.state)), g, fail, tracer=tr)
    g.outputs = outs
    _prune(g)
    return tr, tmpl, g, brk


class _Break:
    """What a resume needs from a graph break: markers for the call and the stack and locals (StateRef
    for live tensors the graph outputs, _Src for objects re-read from the arguments, _Fresh for
    containers built by the traced code) and the resume points."""

    def __init__(self, func, br, tr, fail):
        self.reason, self.where, self.offset = br.reason, (br.filename, br.lineno), br.offset
        self.eager_rest = br.eager_rest
        self.state, index, fresh = [], {}, {}
        co = func.__code__

        def mark(v):
            if isinstance(v, TensorVar):
                k = index.get(v.node)
                if k is None:
                    k = index[v.node] = len(self.state)
                    self.state.append(v)
                return StateRef(k)
            if v is symbolic.NULL:
                fail("NULL value")
            src = tr.sources.get(id(v))
            if src is not None:
                return _Src(src)
            if type(v) is tuple:
                return tuple(mark(x) for x in v)
            if type(v) in (list, dict, set) and id(v) in tr.created:
                m = fresh.get(id(v))
                if m is None:
                    m = fresh[id(v)] = _Fresh(type(v), None)
                    m.items = [(k, mark(x)) for k, x in v.items()] if type(v) is dict else [mark(x) for x in v]
                return m
            if is_constant(v):
                return copy.deepcopy(v) if type(v) is list else v
            if isinstance(v, symbolic.BoundTensorMethod):
                return _Method(mark(v.tensor), v.name)
            if isinstance(v, symbolic.OpaqueMethod):
                return _Method(mark(v.obj), v.name)
            if isinstance(v, symbolic.Opaque):
                fail("an opaque value with no source")
            if isinstance(v, types.BuiltinMethodType) and type(v.__self__) in (list, dict, set):
                return _Method(mark(v.__self__), v.__name__)
            if isinstance(v, types.MethodType):
                return _Method(mark(v.__self__), None, v.__func__)
            if isinstance(v, types.FunctionType) and id(v) in tr.created and \
                    (v.__closure__ or not is_constant(v.__defaults__ or ())):
                fail("a function defined in the frame")
            if isinstance(v, _ITER_TYPES) or id(v) in tr.created and not isinstance(v, types.FunctionType):
                fail(f"a live {type(v).__name__}")
            if isinstance(v, (list, dict, set, tuple)) or symbolic._contains_tensor(v):
                fail(f"a live {type(v).__name__}")
            if type(v) is range or not type(v).__module__.startswith("dyn."):
                return v  # a real object the frame holds (module, function, class, library object)
            fail(f"a live {type(v).__name__}")  # an object standing for values while capturing

        self.call = self.store = None
        if br.call is not None:
            fn, a, kw = br.call
            self.call = (mark(fn), [mark(x) for x in a], {k: mark(x) for k, x in kw.items()})
        if br.store is not None:
            kind, obj, name, value = br.store
            self.store = (kind, obj if kind in ("global", "delglobal") else mark(obj), name, mark(value))
        self.slots, self.stack = [], []
        for v in br.stack:
            if v is symbolic.NULL:
                self.slots.append(resume.NULL_SLOT)
            elif isinstance(v, _ITER_TYPES):
                self.slots.append(resume.ITER_SLOT)
                self.stack.append(tuple(mark(x) for x in v))  # the rest of the loop; consumed here
            else:
                self.slots.append(resume.VALUE)
                self.stack.append(mark(v))
        if br.call is not None:
            self.slots.append(resume.VALUE)  # the call's result
        bound = dict(br.locals)
        for name, cell in br.cells.items():
            try:
                bound[name] = cell.cell_contents
            except ValueError:
                pass
        self.targets, self.names = br.targets, []
        for t in br.targets:
            live, in_loop = resume.analyze(co, t, br.offset)
            if in_loop:
                fail("graph break inside a loop (the frame runs eagerly)")
            self.names.append(tuple(n for n in dict.fromkeys(co.co_varnames + co.co_cellvars)
                                    if n in live and n in bound))
        names = set().union(*self.names)
        self.locals = {n: mark(bound[n]) for n in names}
        self.code = co
        try:  # built now so that a frame that cannot resume runs eagerly from its start
            self.codes = [resume.resume_code(co, t, self.slots, n) for t, n in zip(self.targets, self.names)]
        except Unsupported as e:
            fail(e.reason)


def _unmark(v, state, args, memo):
    if isinstance(v, StateRef):
        return state[v.k]
    t = type(v)
    if t is tuple:
        return tuple(_unmark(x, state, args, memo) for x in v)
    if t is _Src:
        return v.get(args)
    if t is _Fresh:
        r = memo.get(id(v))
        if r is None:
            if v.kind is dict:
                r = memo[id(v)] = {}
                r.update((k, _unmark(x, state, args, memo)) for k, x in v.items)
            else:
                r = memo[id(v)] = v.kind()
                items = [_unmark(x, state, args, memo) for x in v.items]
                r.extend(items) if v.kind is list else r.update(items)
        return r
    if t is _Method:
        obj = _unmark(v.obj, state, args, memo)
        return types.MethodType(v.func, obj) if v.func is not None else getattr(obj, v.name)
    return v


class StateRef:
    """The k-th live tensor handed from a graph to the code after its break."""
    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k


def _prune(g):
    """Drops dead nodes and unused inputs. g.input_map lists, per remaining graph input, its index among
    the captured inputs (None when all are used)."""
    live = set(g.outputs)
    keep = []
    for n in reversed(g.nodes):
        if n in live:
            keep.append(n)
            live.update(n.inputs)
    g.nodes = list(reversed(keep))
    g.input_map = None
    used = [n for n in g.inputs if n in live]
    if len(used) != len(g.inputs):
        g.input_map = [n.index for n in used]
        g.input_sources = [g.input_sources[j] for j in g.input_map]
        for k, n in enumerate(used):
            n.name = f"%arg{k}"
        g.inputs = used


def _select(kernel, graph, index_bounds=()):
    """The kernel as a callable over all captured inputs; index inputs are range-checked first."""
    m = getattr(graph, "input_map", None)
    if kernel is not None and m is not None:
        kernel = (lambda k: lambda *ins: k(*[ins[j] for j in m]))(kernel)
    if not index_bounds:
        return kernel
    check = _index_checker(index_bounds)
    if kernel is None:  # the gathered values are unused: eager still raises on a bad index
        return lambda *ins: (check(ins), [])[1]
    return lambda *ins: (check(ins), kernel(*ins))[1]


def _index_checker(bounds):
    """Eager raises on an index out of range where compiled gathers would clamp it: the index inputs
    are checked before each run (on CUDA by a device-side assert, like eager's own kernels: no sync)."""
    bounds = sorted(set(bounds))

    def check(ins):
        for j, lo, hi in bounds:
            t = ins[j]
            if not t.numel():
                continue
            if t.is_cuda:
                torch._assert_async(((t >= lo) & (t < hi)).all(), "dyn: index out of range")
            else:
                mn, mx = torch.aminmax(t)
                if int(mn) < lo or int(mx) >= hi:
                    raise IndexError(f"index out of range in self (dyn: an index is outside [{lo}, {hi}))")
    return check


class _CompiledFunction:
    _dyn_is_compiled = True

    def __init__(self, fn, backend="dyn", fullgraph=False, dynamic=None, mode=None, options=None):
        if isinstance(backend, str):
            if backend not in B.BACKENDS:
                raise ValueError(f"unknown backend {backend!r}; known: {list_backends()}")
            self._backend_name = backend
            self._backend = B.BACKENDS[backend]
            self._custom = False
        elif callable(backend):
            self._backend_name = getattr(backend, "__name__", "custom")
            self._backend = backend
            self._custom = True
        else:
            raise TypeError("backend must be a name or a callable")
        if mode not in _MODES:
            raise ValueError(f"unknown mode {mode!r}; known: {sorted(m for m in _MODES if m)}")
        if dynamic not in (None, False, True):
            raise TypeError("dynamic must be None, False or True")
        self._fullgraph = fullgraph
        self._dynamic = dynamic
        self._options = dict(options or {})
        self.graphs = []  # (Graph, compiled callable or None, reason) per capture
        self.breaks = []  # dict(reason, filename, lineno) per graph break met while capturing
        self._root = self
        self._children = {}  # user functions called at graph breaks -> their compiled functions
        self._resumes = {}   # (code, offset, stack layout, locals) -> (resume function, local names)
        self._init_frame(fn)
        try:
            self.__wrapped__ = fn
            self.__name__ = getattr(fn, "__name__", "compiled")
            self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
            self.__doc__ = getattr(fn, "__doc__", None)
        except AttributeError:
            pass

    def _init_frame(self, fn):
        if isinstance(fn, types.MethodType):
            self._func = fn.__func__
        elif isinstance(fn, types.FunctionType):
            self._func = fn
        else:
            raise TypeError(f"dyn.compile: cannot compile {type(fn).__name__}")
        self._fn = fn
        self._dyn_inline_target = fn
        self._code = self._func.__code__
        self._entries = []
        self._warned_limit = False
        self._cb = self._on_miss
        if _HOOK:
            _C.code_cache(self._code)[self._cb] = self._entries
        self._sig = None
        co = self._code
        self._nargs = co.co_argcount
        self._simple = not (co.co_flags & 0x0C) and co.co_kwonlyargcount == 0
        _wrappers.add(self)

    def _clear(self):
        del self._entries[:]
        self.graphs.clear()
        self.breaks.clear()
        self._warned_limit = False
        if self._root is self:
            self._children.clear()
            self._resumes.clear()

    def __get__(self, obj, objtype=None):
        """@dyn.compile on a method in a class body: bound like the function it wraps."""
        return self if obj is None else types.MethodType(self, obj)

    # -- call -----------------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if _HOOK:
            prev = _C.set_eval_frame(self._cb)
            try:
                return self._fn(*args, **kwargs)
            finally:
                _C.set_eval_frame(prev)
        bound = self._bind(args, kwargs)
        lookup = _C.lookup if _C is not None else _py_lookup
        e = lookup(self._entries, bound)
        if e is None:
            e = self._on_miss(self._code, bound)
        if e is None or e[1] is None:
            return self._fn(*args, **kwargs)
        return e[1](*bound)

    def _bind(self, args, kwargs):
        if isinstance(self._fn, types.MethodType):
            args = (self._fn.__self__,) + tuple(args)
        if not kwargs and self._simple and len(args) == self._nargs:
            return tuple(args)
        if self._sig is None:
            self._sig = inspect.signature(self._func)
        ba = self._sig.bind(*args, **kwargs)
        ba.apply_defaults()
        co = self._code
        n = co.co_argcount + co.co_kwonlyargcount + bool(co.co_flags & 4) + bool(co.co_flags & 8)
        return tuple(ba.arguments[name] for name in co.co_varnames[:n])

    # -- capture --------------------------------------------------------------------------------------
    def _on_miss(self, code, args):
        if code is not self._code or _run_only[0]:
            return None  # run-only mode: unseen cases run eagerly
        if self._entries and _log_enabled("recompiles"):
            _log("recompiles", f"recompiling {code.co_name} ({_where(code)}), entry {len(self._entries) + 1}: "
                 f"{_guard_failure(self._entries[-1], args)}")
        if len(self._entries) >= RECOMPILE_LIMIT:
            if not self._warned_limit:
                self._warned_limit = True
                warnings.warn(f"dyn: {self._code.co_name} recompiled {RECOMPILE_LIMIT} times "
                              f"(recompile limit); new argument signatures run eagerly", stacklevel=3)
            return None
        guards = tuple(_arg_guard(a, True) for a in args)
        self._gg = self._paths = None
        fn, extra = self._compile(args)
        entry = (guards, fn, extra, self._gg, self._paths)
        if _log_enabled("guards"):
            _log("guards", f"guards of {code.co_name} ({_where(code)}), entry {len(self._entries) + 1}:\n  " +
                 "\n  ".join(_describe_guards(args, self._gg, self._paths)))
        self._entries.append(entry)
        return entry

    def _compile(self, args):
        try:
            seg = _Segment(self, args)
        except Unsupported as e:
            _counters["graph_breaks"] += 1
            _counters["eager_entries"] += 1
            if self._fullgraph:
                raise
            _log("graph_breaks", f"{self._code.co_name} runs eagerly: {e.reason} at {e.filename}:{e.lineno}")
            self.breaks.append(dict(reason=e.reason, filename=e.filename, lineno=e.lineno))
            self.graphs.append((None, None, e))
            return None, None
        except Exception as e:  # a bug in capture: never a wrong result, run eagerly
            _counters["internal_failures"] += 1
            _counters["eager_entries"] += 1
            if self._fullgraph:
                raise
            warnings.warn(f"dyn: capture failed internally, running {self._code.co_name} eagerly: "
                          f"{type(e).__name__}: {e}", stacklevel=4)
            return None, None
        self._gg, self._paths = seg.gg, seg.paths
        if seg.needs_grad and not self._custom and self._backend_name == "dyn":
            _counters["eager_entries"] += 1
            self.graphs.append((seg.graph, None, "inputs require grad"))
            return None, seg.extra  # the dyn core has no autograd: eager keeps gradients right
        try:
            seg.prepare()
        except Exception as e:
            _counters["internal_failures"] += 1
            _counters["eager_entries"] += 1
            if self._fullgraph:
                raise
            warnings.warn(f"dyn: compiling {self._code.co_name} failed, running eagerly: {e}", stacklevel=4)
            return None, seg.extra
        if seg.kernel is None and seg.graph.outputs:
            _counters["eager_entries"] += 1
            warnings.warn(f"dyn: no {self._backend_name} runner for device {_device_of(seg.tr.input_tensors)}; "
                          f"running {self._code.co_name} eagerly", stacklevel=4)
            return None, seg.extra
        return seg.runner, seg.extra

    # -- graph breaks ---------------------------------------------------------------------------------
    def _derive(self, fn):
        """A compiled function for a frame met at a graph break (a resume function, or a user function
        that breaks inside): same backend and options; graphs and breaks are reported on this one."""
        child = _CompiledFunction.__new__(_CompiledFunction)
        child.__dict__.update({k: v for k, v in self.__dict__.items()
                               if k in ("_backend_name", "_backend", "_custom", "_fullgraph", "_options")})
        child._init_frame(fn)
        child.graphs, child.breaks, child._root = self.graphs, self.breaks, self._root
        return child

    def _resume(self, brk, k):
        """(compiled resume function, its local parameter names) for resume point k of a break."""
        target, names = brk.targets[k], brk.names[k]
        key = (self._func, target, tuple(brk.slots), names, brk.eager_rest)
        root = self._root
        hit = root._resumes.get(key)
        if hit is None:
            fn = resume.resume_function(self._func, brk.codes[k])
            # starting at an instruction dyn cannot capture: the rest runs eagerly, not re-captured
            hit = root._resumes[key] = (fn if brk.eager_rest else self._derive(fn), names)
        return hit

    def _call_through(self, fn, args, kwargs):
        """Makes a call at a graph break; a user function (or module forward) is itself compiled."""
        root = self._root
        if isinstance(fn, torch.nn.Module):
            from torch.nn.modules import module as _m
            fwd = type(fn).forward
            if _is_user_function(fwd) and "forward" not in fn.__dict__ and not (
                    fn._forward_hooks or fn._forward_pre_hooks or fn._backward_hooks or
                    _m._global_forward_hooks or _m._global_forward_pre_hooks or _m._global_backward_hooks):
                return self._child(fwd)(fn, *args, **kwargs)
        elif isinstance(fn, types.MethodType) and _is_user_function(fn.__func__):
            return self._child(fn.__func__)(fn.__self__, *args, **kwargs)
        elif _is_user_function(fn) and fn.__code__ is not self._code:
            return self._child(fn)(*args, **kwargs)
        return fn(*args, **kwargs)

    def _child(self, fn):
        root = self._root
        c = root._children.get(fn)
        if c is None:
            c = root._children[fn] = self._derive(fn)
        return c

    def stages(self):
        """[(stage, ir), ...] for each graph compiled by the dyn backend; needs
        options={"keep_stages": True}."""
        return [k.stages for g, k, e in self.graphs if k is not None and hasattr(k, "stages")]

    def _kernel(self, graph, example_inputs):
        _counters["backend_calls"] += 1
        if self._custom:
            return self._backend(graph, list(example_inputs))
        return self._backend(graph, list(example_inputs), self._options)


class _Segment:
    """One captured graph: from the frame's start to its return or to a graph break. At a break the
    graph outputs (condition, live tensors); the runner then makes the call Python must make (or takes
    the branch) and calls the resume function of the rest of the frame, itself compiled on demand."""

    def __init__(self, cf, args):
        self.cf = cf
        self.tr, self.tmpl, self.graph, self.brk = capture(cf._func, args, not cf._fullgraph)
        _last_graphs.append(self.graph)
        del _last_graphs[:-16]
        rg = any(t.requires_grad for t in self.tr.input_tensors)
        self.needs_grad = rg and torch.is_grad_enabled()
        self.tr.reads_grad_mode |= rg  # outputs require grad or not with the grad mode
        self.paths, self.extra = _path_guards(self.tr, args)
        self.gg = _global_guards(self.tr)
        self.kernel = None
        self.runner = None
        if self.brk is not None:
            b = self.brk
            cf.breaks.append(dict(reason=b.reason + (" (the rest of the frame runs eagerly)" if b.eager_rest else ""),
                                  filename=b.where[0], lineno=b.where[1]))
            _log("graph_breaks", f"graph break in {cf._code.co_name} at {b.where[0]}:{b.where[1]}: {b.reason}")

    def prepare(self, eager_on_failure=False):
        """Compiles the graph with the backend (on first use) and builds the runner."""
        cf = self.cf
        kernel = None
        if self.graph.outputs:
            m = self.graph.input_map
            examples = self.tr.input_tensors if m is None else [self.tr.input_tensors[j] for j in m]
            try:
                kernel = cf._kernel(self.graph, examples)
            except Exception as e:
                if not eager_on_failure or cf._fullgraph:
                    raise
                warnings.warn(f"dyn: compiling a graph of {cf._code.co_name} failed, running it with "
                              f"PyTorch ops: {e}", stacklevel=5)
                kernel = self.graph
            if kernel is None and eager_on_failure:
                kernel = self.graph
        self.kernel = kernel
        if self.graph.nodes or self.graph.outputs:
            cf.graphs.append((self.graph, kernel, None))
        kernel = _select(kernel, self.graph, self.tr.index_bounds)
        if self.brk is None:
            self.runner = _make_runner(self.tr, self.tmpl, kernel)
        else:
            self.runner = _break_runner(cf, self.tr, self.tmpl, kernel, self.brk)


def _break_runner(cf, tr, tmpl, kernel, brk):
    gather = _gatherer(tr.input_sources)
    rebuild = _rebuilder(tmpl)
    resumes = [None] * len(brk.targets)
    call, store, stack, local_marks = brk.call, brk.store, brk.stack, brk.locals

    def resume_at(k):
        if resumes[k] is None:
            resumes[k] = cf._resume(brk, k)
        return resumes[k]

    def run(*args):
        ins = gather(args)
        cond, state = rebuild(kernel(*ins) if kernel is not None else (), ins)
        memo = {}
        vals = [_unmark(v, state, args, memo) for v in stack]
        if call is not None:
            fn, cargs, ckw = call
            fn = _unmark(fn, state, args, memo)
            cargs = [_unmark(v, state, args, memo) for v in cargs]
            ckw = {k: _unmark(v, state, args, memo) for k, v in ckw.items()}
            vals.append(cf._call_through(fn, cargs, ckw))
            k = 0
        elif store is not None or cond is None:
            if store is not None:
                kind, obj, name, value = store
                value = _unmark(value, state, args, memo)
                if kind == "global":
                    obj[name] = value
                elif kind == "delglobal":
                    del obj[name]
                elif kind == "delattr":
                    delattr(_unmark(obj, state, args, memo), name)
                else:
                    setattr(_unmark(obj, state, args, memo), name, value)
            k = 0
        else:
            k = 0 if cond else 1
        rc, names = resume_at(k)
        return rc(*vals, *[_unmark(local_marks[n], state, args, memo) for n in names])
    return run


_SKIP_MODULES = ("torch", "dyn", "numpy", "scipy", "builtins", "typing", "functools")


def _is_user_function(f):
    if not isinstance(f, types.FunctionType):
        return False
    mod = getattr(f, "__module__", None) or ""
    return not mod.startswith(_SKIP_MODULES) and "site-packages" not in f.__code__.co_filename


class OptimizedModule(torch.nn.Module):
    """A compiled view of an nn.Module: shares the original's parameters, buffers and submodules (same
    dicts, so named_parameters() and state_dict() keys are unchanged)."""

    def __init__(self, mod, **kw):
        super().__init__()
        d = self.__dict__
        d["_parameters"] = mod._parameters
        d["_buffers"] = mod._buffers
        d["_modules"] = mod._modules
        d["_dyn_orig_mod"] = mod
        d["training"] = mod.training
        d["_dyn_kw"] = kw
        d["_dyn_forward"] = _CompiledFunction(type(mod).forward, **kw)

    def forward(self, *args, **kwargs):
        mod, _m = self._dyn_orig_mod, _module_hooks
        if mod._forward_hooks or mod._forward_pre_hooks or mod._backward_hooks or \
                _m._global_forward_hooks or _m._global_forward_pre_hooks or _m._global_backward_hooks:
            return mod(*args, **kwargs)  # hooks on the module itself: eager runs them around forward
        fwd = mod.__dict__.get("forward")
        if fwd is not None:  # forward replaced on the instance: compile that callable
            return self._compiled_for(fwd)(*args, **kwargs)
        cf = self._dyn_forward
        if cf._fn is not type(mod).forward:  # forward patched on the class after compiling
            cf = self._compiled_for(type(mod).forward)
            self.__dict__["_dyn_forward"] = cf
        return cf(mod, *args, **kwargs)

    def _compiled_for(self, fn):
        cache = self.__dict__.setdefault("_dyn_compiled", {})
        cf = cache.get(fn)
        if cf is None:
            if not isinstance(fn, (types.FunctionType, types.MethodType)):
                return fn  # some other callable: called as it is
            cf = cache[fn] = _CompiledFunction(fn, **self.__dict__["_dyn_kw"])
        return cf

    @property
    def graphs(self):
        return self._dyn_forward.graphs

    def stages(self):
        return self._dyn_forward.stages()

    def train(self, mode=True):
        self._dyn_orig_mod.train(mode)
        self.__dict__["training"] = mode
        return self

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_dyn_orig_mod"], name)

    def __repr__(self):
        return f"OptimizedModule({self._dyn_orig_mod!r})"


def compile(fn_or_module=None, *, backend="dyn", fullgraph=False, dynamic=None, mode=None, options=None):
    """Compiles a function or nn.Module. Usable as dyn.compile(fn), @dyn.compile and @dyn.compile(...).

    backend: "dyn" (the C++ core), "eager" (run the captured graph with PyTorch ops) or a callable
    backend(graph: dyn.Graph, example_inputs) -> callable(*inputs) -> outputs.
    fullgraph: raise dyn.Unsupported instead of running unsupported code eagerly."""
    kw = dict(backend=backend, fullgraph=fullgraph, dynamic=dynamic, mode=mode, options=options)
    if fn_or_module is None:
        return lambda f: compile(f, **kw)
    if isinstance(fn_or_module, torch.nn.Module):
        return OptimizedModule(fn_or_module, **kw)
    return _CompiledFunction(fn_or_module, **kw)


# -- explain --------------------------------------------------------------------------------------------
class ExplainOutput:
    def __init__(self, graphs, break_reasons, out_guards):
        self.graphs = graphs
        self.graph_count = len(graphs)
        self.graph_break_count = len(break_reasons)
        self.break_reasons = break_reasons
        self.ops_per_graph = [g.ops() for g in graphs]
        self.out_guards = out_guards

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {sum(len(o) for o in self.ops_per_graph)}", "Break Reasons:"]
        for r in self.break_reasons:
            lines.append(f"  Break Reason {r['reason']}\n    User Stack: {r['filename']}:{r['lineno']}")
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph):
            lines.append(f"  Graph {i}: " + ", ".join(ops))
        lines.append("Out Guards:")
        for gd in self.out_guards:
            lines.append(f"  {gd}")
        return "\n".join(lines)

    __repr__ = __str__


def explain(fn):
    """dyn.explain(fn)(*args) -> ExplainOutput: runs fn once under capture (with the eager backend) and
    reports the graphs it produced, their ops, the graph breaks with user locations, and the guards."""
    def run(*args, **kwargs):
        recorded = []

        def recorder(graph, example_inputs):
            recorded.append(graph)
            return graph
        if isinstance(fn, torch.nn.Module):
            cf = _CompiledFunction(type(fn).forward, backend=recorder)
            args = (fn,) + args
        else:
            cf = _CompiledFunction(fn, backend=recorder)
        bound = cf._bind(args, kwargs)
        cf(*args, **kwargs)
        e = cf._entries[0] if cf._entries else ()
        return ExplainOutput(recorded, list(cf.breaks),
                             _describe_guards(bound, e[3] if len(e) > 3 else None, e[4] if len(e) > 4 else None))
    return run


# -- export ---------------------------------------------------------------------------------------------
class ExportedGraph:
    """dyn.export's result: the whole function as one graph. Callable with the original function's
    arguments (parameters and buffers are read from the module at each call); str() is graph-dialect
    MLIR; .graph is the dyn.Graph."""

    def __init__(self, cf, bound, tr, tmpl, graph, prefix=()):
        self.graph = graph
        self._cf = cf
        self._prefix = prefix
        paths, extra = _path_guards(tr, bound)
        self._guards = (tuple(_arg_guard(a, True) for a in bound), None, extra, _global_guards(tr), paths)
        self._run = _make_runner(tr, tmpl, _select(graph, graph, tr.index_bounds))

    def __call__(self, *args, **kwargs):
        bound = self._cf._bind(self._prefix + args, kwargs)
        if _py_lookup([self._guards], bound) is None:
            raise ValueError("dyn.export: arguments do not match the exported graph ("
                             f"{_guard_failure(self._guards, bound)})")
        return self._run(*bound)

    def __str__(self):
        return str(self.graph)

    __repr__ = __str__


def export(fn, *args, **kwargs):
    """One whole graph for fn(*args, **kwargs), or dyn.Unsupported naming the user's line that would
    break it. Works for functions and nn.Modules."""
    prefix = ()
    if isinstance(fn, torch.nn.Module):
        cf = _CompiledFunction(type(fn).forward, backend="eager", fullgraph=True)
        prefix = (fn,)
    else:
        cf = _CompiledFunction(fn, backend="eager", fullgraph=True)
    bound = cf._bind(prefix + args, kwargs)
    tr, tmpl, graph, brk = capture(cf._func, bound, allow_breaks=False)
    return ExportedGraph(cf, bound, tr, tmpl, graph, prefix)


class run:
    """Run-only mode: `with dyn.run():` (or `@dyn.run()`) calls compiled code whose guards match and runs
    every unseen case eagerly; nothing is captured or compiled inside."""

    def __enter__(self):
        _run_only[0] += 1
        return self

    def __exit__(self, *exc):
        _run_only[0] -= 1
        return False

    def __call__(self, fn):
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapped
