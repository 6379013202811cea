"""Runners: a compiled graph wrapped to be called with the frame's arguments. Inputs are gathered from
their sources, unused inputs dropped, index inputs range-checked, and the frame's result rebuilt from the
template outputs.py made."""
import weakref
from collections import OrderedDict, defaultdict, deque

import torch
from torch.autograd.graph import increment_version

from .paths import _gatherer, _resolver
from .side_effects import replay


def _rebuilder(tmpl):
    kind = tmpl[0]
    if kind == "o":
        k = tmpl[1]
        return lambda outs, ins, args: outs[k]
    if kind == "oc":
        k = tmpl[1]
        return lambda outs, ins, args: outs[k].clone()
    if kind == "i":
        j, fresh = tmpl[1], tmpl[2]
        if fresh:
            return lambda outs, ins, args: ins[j].clone()
        return lambda outs, ins, args: ins[j]
    if kind in ("vi", "vo"):
        k, size, stride, off = tmpl[1:]
        if kind == "vi":
            return lambda outs, ins, args: ins[k].as_strided(size, stride, ins[k].storage_offset() + off)
        return lambda outs, ins, args: outs[k].as_strided(size, stride, outs[k].storage_offset() + off)
    if kind == "c":
        v = tmpl[1]
        return lambda outs, ins, args: v
    if kind == "src":  # an object the frame reached from its arguments: the same object, re-read
        get = _resolver(tmpl[1])
        return lambda outs, ins, args: get(args)
    if kind == "m":
        return _mutation_rebuilder(tmpl)
    if kind == "st":
        cls, subs = tmpl[1], [_rebuilder(t) for t in tmpl[2]]
        return lambda outs, ins, args: cls([s(outs, ins, args) for s in subs])
    if kind == "nt":
        cls, subs = tmpl[1], [_rebuilder(t) for t in tmpl[2]]
        return lambda outs, ins, args: cls._make([s(outs, ins, args) for s in subs])
    if kind == "obj":  # a new instance per call with the attributes __init__ set while capturing
        cls, subs = tmpl[1], [(k, _rebuilder(t)) for k, t in tmpl[2]]

        def make(outs, ins, args):
            o = object.__new__(cls)
            o.__dict__.update((k, s(outs, ins, args)) for k, s in subs)
            return o
        return make
    if kind == "dobj":  # a dict subclass (ModelOutput): its items as dict's own, then its attributes
        cls, attrs = tmpl[1], [(k, _rebuilder(t)) for k, t in tmpl[3]]
        items = [(k, t[1] if t[0] == "attr" else None, None if t[0] == "attr" else _rebuilder(t)) for k, t in tmpl[2]]
        base = OrderedDict if issubclass(cls, OrderedDict) else dict

        def make_dict(outs, ins, args):
            o = base.__new__(cls)
            d = {k: s(outs, ins, args) for k, s in attrs}
            for k, a, s in items:
                base.__setitem__(o, k, d[a] if s is None else s(outs, ins, args))
            o.__dict__.update(d)
            return o
        return make_dict
    if kind == "dt":  # an OrderedDict or a defaultdict (with its factory)
        cls, factory, subs = tmpl[1], tmpl[2], [(k, _rebuilder(t)) for k, t in tmpl[3]]
        if cls is defaultdict:
            return lambda outs, ins, args: defaultdict(factory, [(k, s(outs, ins, args)) for k, s in subs])
        return lambda outs, ins, args: cls([(k, s(outs, ins, args)) for k, s in subs])
    if kind == "dq":
        maxlen, subs = tmpl[1], [_rebuilder(t) for t in tmpl[2]]
        return lambda outs, ins, args: deque([s(outs, ins, args) for s in subs], maxlen)
    if kind == "set":
        cls, subs = tmpl[1], [_rebuilder(t) for t in tmpl[2]]
        return lambda outs, ins, args: cls(s(outs, ins, args) for s in subs)
    if kind == "det":
        sub = _rebuilder(tmpl[1])
        return lambda outs, ins, args: sub(outs, ins, args).detach()
    subs = [(_rebuilder(t) if kind != "d" else (t[0], _rebuilder(t[1]))) for t in tmpl[1]]
    if kind == "t":
        return lambda outs, ins, args: tuple(s(outs, ins, args) for s in subs)
    if kind == "l":
        return lambda outs, ins, args: [s(outs, ins, args) for s in subs]
    return lambda outs, ins, args: {k: s(outs, ins, args) for k, s in subs}


def _mutation_rebuilder(tmpl):
    """('m', inner, writes, prep): see _flatten_output."""
    _, inner_t, writes, prep = tmpl
    inner = _rebuilder(inner_t)
    contig, clones, spans, mutated = prep["contig"], prep["clones"], prep["spans"], prep["mutated"]
    dests = set(mutated)
    # (input j, from a graph output?, its index): src ('o', k) or ('i', jj)
    grad_writes = [(j, src[0] == "o", src[1]) for j, src, detach in writes if not detach]
    nograd_writes = [(j, src[0] == "o", src[1]) for j, src, detach in writes if detach]

    def run(outs, ins, args):  # the entry's guards checked that no other input overlaps a mutated one
        if contig or clones:
            outs = list(outs)
            for k in contig:
                if not outs[k].is_contiguous():
                    outs[k] = outs[k].contiguous()
            outs += [ins[j].clone(memory_format=torch.contiguous_format) for j in clones]
        r = inner(outs, ins, args)
        if writes:
            def source(i):  # input i's value from before the writes
                return ins[i].clone() if i in dests else ins[i]
            gsrc = [(j, outs[i] if o else source(i)) for j, o, i in grad_writes]
            nsrc = [(j, outs[i] if o else source(i)) for j, o, i in nograd_writes]
            # the compiled code wrote the input itself (in-place updates: _DynKernel.aliases, _Part.aliases):
            # its version counter is bumped, as eager's in-place op does (one call for all of them)
            written = []
            for j, t in gsrc:
                if t is ins[j] and not t.requires_grad:  # autograd would record nothing for the copy
                    written.append(t)
                else:
                    ins[j].copy_(t)
            if nsrc:
                with torch.no_grad():
                    for j, t in nsrc:
                        if t is ins[j]:
                            written.append(t)
                        else:
                            ins[j].copy_(t)
            if written:
                increment_version(written)
        return r
    return run


def _make_runner(tr, tmpl, kernel, effects=None):
    if effects:
        return _effects_runner(tr, tmpl, kernel, effects)
    gather = _gatherer(tr.input_sources)
    rebuild = _rebuilder(tmpl)
    arg_only = all(p[0] == "arg" and len(p) == 2 for p in tr.input_sources)
    idxs = [p[1] for p in tr.input_sources] if arg_only else None
    single = tmpl[0] == "o" and tmpl[1] == 0

    if kernel is None:
        def run(*args):
            return rebuild((), gather(args), args)
        return run
    if arg_only and single:
        def run(*args):
            return kernel(*[args[i] for i in idxs])[0]
        return run
    if arg_only:
        def run(*args):
            ins = [args[i] for i in idxs]
            return rebuild(kernel(*ins), ins, args)
        return run

    def run(*args):
        ins = gather(args)
        return rebuild(kernel(*ins), ins, args)
    return run



def _effects_runner(tr, tmpl, kernel, effects):
    """The graph returns (result, tensors of the side effects); the side effects are made after it."""
    gather = _gatherer(tr.input_sources)
    rebuild = _rebuilder(tmpl)

    def run(*args):
        ins = gather(args)
        r, state = rebuild(kernel(*ins) if kernel is not None else (), ins, args)
        replay(effects, state, args, {})
        return r
    return run


# ops that other processes wait for: run even where nothing reads their result (docs/distributed.md)
COLLECTIVES = frozenset({"all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor"})


def _prune(g):
    """Drops dead nodes and unused inputs. g.input_map lists, per remaining graph input, its index among
    the captured inputs (None when all are used). A random op whose result is unused stays: eager draws
    its numbers anyway, and a graph run with PyTorch's ops (the eager backend, a fallback) must draw them
    too, or every later draw would shift; compiled code leaves it out (its numbers come from the call's
    seed and the op's own offset). A collective whose result is unused becomes an extra output (one no
    caller reads): the other ranks wait for it, so compiled code must run it too."""
    def closure(roots):
        live, keep = set(roots), []
        for n in reversed(g.nodes):
            if n in live:
                keep.append(n)
                live.update(n.inputs)
        return live, keep
    live, keep = closure(set(g.outputs) | {n for n in g.nodes if n.attrs.get("seeded")})
    dead = [n for n in g.nodes if n.op in COLLECTIVES and n not in live]
    if dead:
        g.outputs = list(g.outputs) + dead
        live, keep = closure(set(g.outputs) | {n for n in g.nodes if n.attrs.get("seeded")})
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
    host_in = [k for k, n in enumerate(graph.inputs) if n.host]
    if kernel is not None and host_in:
        kernel = _host_inputs(kernel, host_in, graph.device)
    m = getattr(graph, "input_map", None)
    if kernel is not None and m is not None:
        kernel = (lambda k: lambda *ins: k(*[ins[j] for j in m]))(kernel)
    host = graph.host_outputs()
    if kernel is not None and host:
        kernel = _host_outputs(kernel, host)
    if not index_bounds:
        return kernel
    check = _index_checker(index_bounds)
    if kernel is None:  # the gathered values are unused: eager still raises on a bad index
        return lambda *ins: (check(ins), [])[1]
    return lambda *ins: (check(ins), kernel(*ins))[1]


def _host_inputs(kernel, host, device):
    """CPU tensors read by a graph on CUDA (Node.host), moved there for the run."""
    def run(*ins):
        ins = list(ins)
        for k in host:
            ins[k] = ins[k].to(device, non_blocking=True)
        return kernel(*ins)
    return run


def _host_outputs(kernel, host):
    """The outputs eager holds on the CPU (Node.host), moved there from the GPU."""
    def run(*ins):
        outs = list(kernel(*ins))
        for k in host:
            outs[k] = outs[k].cpu()
        return outs
    return run


def _index_checker(bounds):
    """Eager raises on an index out of range where compiled gathers would clamp it: the index inputs
    are checked before each run (on CUDA by a device-side assert, like eager's own kernels: no sync).
    A check whose tensors are the very ones it passed last time, unmodified (same objects, same version
    counters and data), is not repeated: a module's position-ids buffer, or one input passed call after
    call, is checked once; a bound is an input index, or a function of the inputs whose `reads` names
    the inputs it reads (without it, it runs every time). In a graph with symbolic sizes, hi may be a
    function of the inputs too, and a bound function's `sizes(ins)` the sizes it depends on: the check is
    repeated when those change."""
    bounds = list(dict.fromkeys(bounds))  # j: an input index, or a function computing the index
    reads = [(j,) if type(j) is int else getattr(j, "reads", None) for j, *_ in bounds]
    passed = [None] * len(bounds)  # per bound: what it read when it last passed, and the sizes then

    def state(ts):
        try:
            return [(weakref.ref(t), t._version, t.data_ptr()) for t in ts]
        except (RuntimeError, TypeError):  # an inference tensor has no version counter
            return None

    def unchanged(last, ts):
        return last is not None and all(r() is t and v == t._version and p == t.data_ptr()
                                        for (r, v, p), t in zip(last, ts))

    def check(ins):
        for k, (j, lo, hi, *why) in enumerate(bounds):  # why: eager's message where it raises its own
            ts = None if reads[k] is None else [ins[i] for i in reads[k]]
            sizes = getattr(j, "sizes", None)
            if callable(hi):  # a bound computed from the inputs' sizes (a graph with symbolic sizes)
                hi = hi(ins)
            if callable(lo):
                lo = lo(ins)
            key = (tuple(sizes(ins)) if sizes is not None else None, lo, hi)
            if ts is not None and passed[k] is not None and passed[k][1] == key and unchanged(passed[k][0], ts):
                continue
            t = ins[j] if type(j) is int else j(ins)
            if not t.numel():
                continue
            if t.is_cuda:
                torch._assert_async(((t >= lo) & (t < hi)).all(), why[0] if why else "dyn: index out of range")
            else:
                mn, mx = torch.aminmax(t)
                if int(mn) < lo or int(mx) >= hi:
                    if why:
                        raise RuntimeError(why[0])
                    raise IndexError(f"index out of range in self (dyn: an index is outside [{lo}, {hi}))")
            if ts is not None:  # (a failed CUDA assert poisons the context: nothing runs after it)
                st = state(ts)
                passed[k] = None if st is None else (st, key)
    return check
