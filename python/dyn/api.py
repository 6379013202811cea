"""dyn's public API: compile (and OptimizedModule), explain, export, run, reset, list_backends and the
counters. Capture itself lives in capture/, the graph in graph/, the op handlers in ops/."""
import types

import torch
from torch.nn.modules import module as _module_hooks  # the global module hooks live there

from . import backends as B
from .capture.children import forward_replaced
from .capture.compiled import _CompiledFunction, _select, capture, check_compile_arguments
from .capture.guard_check import _describe_guards, _guard_failure, _py_lookup
from .capture.guards import _arg_guard, _global_guards, _path_guards
from .capture.runners import _make_runner
from .capture.memory import describe as describe_memory
from .native import C as _C
from .session import current


def _stats():
    """The session's counters as they are: captures (frames traced), backend_calls (graphs handed to a
    backend), graphs_compiled (kernels built by the C++ core), graph_breaks, eager_entries (entries that
    run the frame in Python), internal_failures, graphs, compiled_graphs, recompiles; hook counters;
    host_cache (the CPU temporaries cache: hits, misses, cached_bytes)."""
    s = dict(current().counters)
    if _C is not None:
        s["hook"] = _C.hook_stats()
        if hasattr(_C, "host_cache_stats"):
            s["host_cache"] = _C.host_cache_stats()
    return s


def stats():
    """What dyn did since the last dyn.reset(): captures (frames traced), graphs (captured graphs given
    a backend), graph_breaks, compiled_graphs (graphs that run code dyn's compiler made), backward_graphs
    (of those, training graphs whose backward dyn compiled too: one autograd node per call), eager_graphs
    (graphs run eagerly: a dict per graph with the graph, where (the user's file:line), backend and
    reason; the last 256), recompiles (captures of a function whose earlier entries' guards failed),
    eager_calls (calls that ran in Python because no entry could be made for them: past the recompile
    limit, or unseen inside `dyn.run()`) with eager_call_reasons ({"fn (file:line): why": calls}),
    with mode="reduce-overhead" on CUDA: cuda_graphs (graphs recorded), cuda_graph_replays and
    cuda_graph_misses (calls run through the launch plan because an input moved), dynamic_entries
    (entries whose graph has symbolic sizes: one compile for many sizes, docs/dynamic_shapes.md),
    dynamic_fallbacks (captures that were to have symbolic sizes but specialized them) with
    dynamic_fallback_reasons ({"fn (file:line): why": captures}), and the counters of dyn._stats()."""
    session = current()
    c = session.counters
    out = {"captures": c["captures"], "graphs": c["graphs"], "graph_breaks": c["graph_breaks"],
           "compiled_graphs": c["compiled_graphs"], "backward_graphs": c["backward_graphs"],
           "eager_graphs": [run.as_dict() for run in session.eager_graphs], "recompiles": c["recompiles"],
           "eager_calls": c["eager_calls"], "eager_call_reasons": dict(session.eager_call_reasons),
           "cuda_graphs": c["cuda_graphs"], "cuda_graph_replays": c["cuda_graph_replays"],
           "cuda_graph_misses": c["cuda_graph_misses"], "dynamic_entries": c["dynamic_entries"],
           "dynamic_fallbacks": c["dynamic_fallbacks"],
           "dynamic_fallback_reasons": dict(session.dynamic_fallback_reasons)}
    out.update((k, v) for k, v in _stats().items() if k not in out)
    return out


def last_graphs():
    return list(current().last_graphs)


def reset():
    """Drops every compiled entry (the next call captures again), zeroes the counters and returns the
    buffers that compiled CPU functions' temporaries keep for reuse to the system."""
    current().reset()
    if _C is not None and hasattr(_C, "empty_host_cache"):
        _C.empty_host_cache()


def list_backends():
    return sorted(B.BACKENDS)


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
        if mod._backward_hooks or _m._global_forward_hooks or _m._global_forward_pre_hooks or \
                _m._global_backward_hooks:
            return mod(*args, **kwargs)  # hooks on the module itself: eager runs them around forward
        fwd = mod.__dict__.get("forward")
        if mod._forward_hooks or mod._forward_pre_hooks:
            # its own forward hooks (FSDP's all-gather and reshard, a user's) run eagerly around the
            # compiled forward, as Module.__call__ runs them
            with forward_replaced(mod, self._compiled_call(fwd)):
                return mod(*args, **kwargs)
        if fwd is not None:  # forward replaced on the instance: compile that callable
            return self._compiled_for(fwd)(*args, **kwargs)
        cf = self._dyn_forward
        if cf._fn is not type(mod).forward:  # forward patched on the class after compiling
            cf = self._compiled_for(type(mod).forward)
            self.__dict__["_dyn_forward"] = cf
        return cf(mod, *args, **kwargs)

    def _compiled_call(self, fwd):
        """The module's forward (its own, or `fwd` replacing it on the instance) compiled, as a callable
        of the forward's arguments (capture inlines forward above, never this)."""
        if fwd is not None:
            return self._compiled_for(fwd)
        mod = self._dyn_orig_mod
        cf = self._dyn_forward
        if cf._fn is not type(mod).forward:
            cf = self._compiled_for(type(mod).forward)
        return lambda *a, **k: cf(mod, *a, **k)

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
    fullgraph: raise dyn.Unsupported instead of running unsupported code eagerly.
    mode: torch.compile's names; "reduce-overhead" records each graph compiled for CUDA as a CUDA graph
    and replays it (dyn/cuda_graphs.py); the others compile the same way."""
    kw = dict(backend=backend, fullgraph=fullgraph, dynamic=dynamic, mode=mode, options=options)
    check_compile_arguments(**kw)
    if fn_or_module is None:  # @dyn.compile(...): the decorator
        return lambda f: compile(f, **kw)
    if not callable(fn_or_module):
        raise TypeError(f"dyn.compile: a {type(fn_or_module).__name__} object is not callable (expected a "
                        "function or an nn.Module)")
    if isinstance(fn_or_module, torch.nn.Module):
        return OptimizedModule(fn_or_module, **kw)
    return _CompiledFunction(fn_or_module, **kw)


# -- explain --------------------------------------------------------------------------------------------
class ExplainOutput:
    """graphs, ops_per_graph; backends: per graph, the backend that ran it and, where dyn's compiler did
    not, why (dicts of backend, compiled, reason, where); break_reasons; out_guards (the first entry's)."""

    def __init__(self, graphs, break_reasons, out_guards, runs=()):
        self.graphs = graphs
        self.graph_count = len(graphs)
        self.graph_break_count = len(break_reasons)
        self.break_reasons = break_reasons
        self.ops_per_graph = [g.ops() for g in graphs]
        self.out_guards = out_guards
        self.backends = [dict(backend=r.backend, compiled=r.compiled, reason=r.reason, where=r.where)
                         for r in runs]
        # per graph captured with symbolic sizes: which input dims are symbolic and the relations guarded
        self.dynamic_dims = [getattr(g, "symbolic", None) for g in graphs]
        # per graph dyn compiled: its memory plan and the peak of the call explain made (capture/memory.py)
        self.memory = [r.memory for r in runs]

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {sum(len(o) for o in self.ops_per_graph)}", "Break Reasons:"]
        for r in self.break_reasons:
            lines.append(f"  Break Reason {r['reason']}\n    User Stack: {r['filename']}:{r['lineno']}")
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph):
            lines.append(f"  Graph {i}: " + ", ".join(ops))
        lines.append("Backend per Graph:")
        for i, b in enumerate(self.backends):
            lines.append(f"  Graph {i}: {b['backend']}" + (f": {b['reason']}" if b["reason"] else ""))
        if any(self.memory):
            lines.append("Memory per Graph:")
            lines += [f"  Graph {i}: {describe_memory(m)}" for i, m in enumerate(self.memory) if m]
        for i, dims in enumerate(self.dynamic_dims):
            if dims:
                lines.append(f"Dynamic Dims of Graph {i}:")
                lines += [f"  {d}" for d in dims]
        lines.append("Out Guards:")
        for gd in self.out_guards:
            lines.append(f"  {gd}")
        return "\n".join(lines)

    __repr__ = __str__


def explain(fn, backend="dyn", options=None):
    """dyn.explain(fn)(*args) -> ExplainOutput: runs fn once under capture with `backend` and reports the
    graphs it produced, their ops, the backend that ran each (and why not dyn's compiler where it did
    not), the graph breaks with user locations, and the guards."""
    if not callable(fn):
        raise TypeError(f"dyn.explain: a {type(fn).__name__} object is not callable")
    check_compile_arguments(backend, False, None, None, options)

    def run(*args, **kwargs):
        if isinstance(fn, torch.nn.Module):
            cf = _CompiledFunction(type(fn).forward, backend=backend, options=options)
            args = (fn,) + args
        else:
            cf = _CompiledFunction(fn, backend=backend, options=options)
        cf._warned_eager = True  # the output says it
        cf._measure_memory = True
        bound = cf._bind(args, kwargs)
        if isinstance(fn, torch.nn.Module) and (fn._forward_hooks or fn._forward_pre_hooks) and \
                "forward" not in fn.__dict__:
            with forward_replaced(fn, lambda *a, **k: cf(fn, *a, **k)):  # its hooks run, as OptimizedModule's
                fn(*args[1:], **kwargs)
        else:
            cf(*args, **kwargs)
        e = cf._entries[0] if cf._entries else ()
        runs = [r for r in cf.runs if r.graph is not None]
        return ExplainOutput([r.graph for r in runs], list(cf.breaks),
                             _describe_guards(bound, e[3] if len(e) > 3 else None, e[4] if len(e) > 4 else None),
                             runs)
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
        self._run = _make_runner(tr, tmpl, _select(graph, graph, tr.index_bounds), tr.effects)

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
    if not callable(fn):
        raise TypeError(f"dyn.export: a {type(fn).__name__} object is not callable")
    prefix = ()
    if isinstance(fn, torch.nn.Module):
        cf = _CompiledFunction(type(fn).forward, backend="eager", fullgraph=True)
        prefix = (fn,)
    else:
        cf = _CompiledFunction(fn, backend="eager", fullgraph=True)
    bound = cf._bind(prefix + args, kwargs)
    tr, tmpl, graph, brk = capture(cf._func, bound, cf._session, allow_breaks=False)
    return ExportedGraph(cf, bound, tr, tmpl, graph, prefix)


class run:
    """Run-only mode: `with dyn.run():` (or `@dyn.run()`) calls compiled code whose guards match and runs
    every unseen case eagerly; nothing is captured or compiled inside."""

    def __enter__(self):
        current().run_only += 1
        return self

    def __exit__(self, *exc):
        current().run_only -= 1
        return False

    def __call__(self, fn):
        if not callable(fn):
            raise TypeError(f"dyn.run() decorates a callable, not a {type(fn).__name__} object")

        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapped
