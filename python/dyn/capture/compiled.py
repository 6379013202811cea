"""dyn.compile's compiled function: the per-code cache of entries, capture on a miss, and fallbacks.

Call path (CPython 3.11/3.12 with dyn._C): the wrapper installs the PEP 523 hook with its callback and
calls the original function. The hook finds the code object's cache, checks guards in C and calls the
matching entry's runner without running the frame; on a miss it calls `_on_miss`, which captures the
frame's arguments symbolically, builds a Graph, compiles it with the backend and returns a new entry.
Without the hook (extension missing) the same entries are looked up from Python."""
import functools
import inspect
import operator
import types
import warnings

import torch

from .. import backends as B
from ..errors import Unsupported
from ..native import C as _C
from ..native import HOOK as _HOOK
from ..distributed.ddp import is_ddp_forward, is_ddp_module
from ..session import current
from . import memory, resume
from .breaks import _Break, _break_runner
from .children import (MAX_TARGETS, Dispatcher, ddp_forward_runner, forward_replaced, frame_target, interceptable,
                       is_user_function, named_targets, plain_copy)
from .marks import Marker
from .dynamic_entry import DynamicUnsupported, dynamic_entry
from ..dynamic.marks import changed_dims, dynamic_wanted, input_record
from .guard_check import _describe_guards, _guard_failure, _py_lookup
from .guards import _arg_guard, _global_guards, _path_guards
from .interpreter.frame import trace
from .outputs import _flatten_output
from .paths import _guard_tree, _resolver, _source_str
from .reports import PYTHON, GraphRun, classify, failure
from .runners import _make_runner, _prune, _select

RECOMPILE_LIMIT = 8  # entries per set of module arguments (TorchDynamo's cache_size_limit)
ENTRY_LIMIT = 64     # entries in all (TorchDynamo's accumulated_cache_size_limit is 256)
# mode names torch.compile accepts; dyn has one compilation strategy, so all compile the same way
_MODES = {None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"}


def _where(code):
    return f"{code.co_filename}:{code.co_firstlineno}"


def _device_of(args):
    """The device a capture runs on: CUDA where a tensor argument is there (CPU tensors beside it are read
    as host tensors: graph.Node.host), else the first tensor argument's, or the first tensor in an
    argument container (a wrapper's *args, a **kwargs dict), else the first parameter or buffer of a
    module argument; None when there is none (the CPU, until capture meets a CUDA tensor)."""
    def find(v, depth):
        if isinstance(v, torch.Tensor):
            yield v.device
        elif depth < 3 and isinstance(v, (tuple, list)):
            for x in v[:64]:
                yield from find(x, depth + 1)
        elif depth < 3 and type(v) is dict:
            for x in list(v.values())[:64]:
                yield from find(x, depth + 1)
    first = None
    for a in args:
        for d in find(a, 0):
            if d.type == "cuda":
                return d
            if first is None:
                first = d
    if first is not None:
        return first
    for a in args:
        if isinstance(a, torch.nn.Module):
            t = next(a.parameters(), None)
            t = t if t is not None else next(a.buffers(), None)
            if t is not None:
                return t.device
    return None


def capture(func, args, session, allow_breaks=False, callees=None, symbolic=None):
    """Traces func over bound args; returns (tracer, template, graph, graph_break). graph_break is None
    when the frame returned; else a _Break: the graph then outputs (condition or None, live tensors).
    callees (a dict, filled): the user functions the frame was seen to call."""
    session.count("captures")
    tr, out, br = trace(func, args, _device_of(args), session, allow_breaks, callees, symbolic)
    g = tr.graph

    def fail(reason, filename=func.__code__.co_filename, lineno=func.__code__.co_firstlineno):
        raise Unsupported(reason, filename, lineno)
    if br is None:
        effects = None
        if tr.side:  # side effects: their tensors are graph outputs too, replayed after the graph
            marker = Marker(tr, lambda why: fail(f"{why} in a side effect"))
            effects = tr.side.marks(marker)
            _check_no_shared_fresh(out, marker, tr, fail)
            out = (out, tuple(marker.state))
        tmpl, outs = _flatten_output(out, g, fail, tracer=tr)
        g.outputs = outs
        _prune(g)
        tr.effects = effects
        return tr, tmpl, g, None
    session.count("graph_breaks")
    brk = _Break(func, br, tr, lambda why: fail(f"{why} at a graph break ({br.reason})", br.filename, br.lineno))
    tmpl, outs = _flatten_output((br.cond, tuple(brk.state)), g, fail, tracer=tr)
    g.outputs = outs
    _prune(g)
    return tr, tmpl, g, brk


def _check_no_shared_fresh(out, marker, tr, fail):
    """A container or object the traced code made, both returned and stored by a side effect, would be
    two objects (one rebuilt for the result, one for the side effect) where eager has one: not captured."""
    made = marker.fresh_ids()
    seen = set()

    def walk(v):
        if id(v) in seen:
            return
        seen.add(id(v))
        if id(v) in made:
            fail(f"a {type(v).__name__} both returned and kept by a side effect")
        if isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        if id(v) in tr.created and type(v) in tr.created_classes:
            for x in vars(v).values():
                walk(x)
    walk(out)


def check_compile_arguments(backend, fullgraph, dynamic, mode, options):
    """dyn.compile's keyword arguments, checked where the user passes them (TypeError/ValueError naming
    the argument)."""
    if isinstance(backend, str):
        if backend not in B.BACKENDS:
            raise ValueError(f"dyn.compile: unknown backend {backend!r}; known: {sorted(B.BACKENDS)}")
    elif not callable(backend):
        raise TypeError(f"dyn.compile: backend must be a name or a callable, not {type(backend).__name__}")
    if not isinstance(fullgraph, bool):
        raise TypeError(f"dyn.compile: fullgraph must be a bool, not {type(fullgraph).__name__}")
    if dynamic not in (None, False, True):
        raise TypeError("dyn.compile: dynamic must be None, False or True")
    if not isinstance(mode, (str, type(None))) or mode not in _MODES:
        raise ValueError(f"dyn.compile: unknown mode {mode!r}; known: {sorted(m for m in _MODES if m)}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"dyn.compile: options must be a dict, not {type(options).__name__}")
    budget = (options or {}).get("memory_budget")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float)) or
                               not 0 <= budget <= 1):
        raise ValueError(f"dyn.compile: options['memory_budget'] must be a number from 0 to 1, not {budget!r}")


class _CompiledFunction:
    _dyn_is_compiled = True

    def __init__(self, fn, backend="dyn", fullgraph=False, dynamic=None, mode=None, options=None):
        check_compile_arguments(backend, fullgraph, dynamic, mode, options)
        if isinstance(backend, str):
            self._backend_name = backend
            self._backend = B.BACKENDS[backend]
            self._custom = False
        else:
            self._backend_name = getattr(backend, "__name__", "custom")
            self._backend = backend
            self._custom = True
        self._session = current()
        self._fullgraph = fullgraph
        self._dynamic = dynamic
        self._options = dict(options or {})
        if mode == "reduce-overhead":  # CUDA graphs of the compiled launch plans (dyn/cuda_graphs.py)
            self._options.setdefault("cuda_graphs", True)
        self.graphs = []  # (Graph, compiled callable or None, reason) per capture
        self.breaks = []  # dict(reason, filename, lineno) per graph break met while capturing
        self.runs = []    # GraphRun per captured graph: the backend that runs it, why not dyn's compiler
        self._warned_eager = False  # a call ran no compiled code: warned once
        self._measure_memory = False  # dyn.explain: each compiled graph's calls measured (GraphRun.memory)
        self._root = self
        self._children = {}  # user functions called at graph breaks -> their compiled functions
        self._resumes = {}   # (code, offset, stack layout, locals) -> (resume function, local names)
        self._dispatcher = Dispatcher()  # the hook's callback while a frame runs eagerly (children.py)
        self._init_frame(_frame_function(fn))
        self._dyn_inline_target = fn
        try:
            self.__wrapped__ = fn
            self.__name__ = getattr(fn, "__name__", "compiled")
            self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
            self.__doc__ = getattr(fn, "__doc__", None)
        except AttributeError:
            pass

    def _init_frame(self, fn):
        if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
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
        self._auto_dims = {}  # source -> dims whose sizes changed between entries (automatic dynamic)
        self._records = []  # per entry: its input tensors' sources and sizes (dynamic/marks.input_record)
        self._dynamic_refused = set()  # dynamic dim sets whose symbolic capture was not possible
        self.dynamic_failures = []  # why a capture with symbolic dims was not possible, per attempt
        self._cb = self._on_miss
        if _HOOK:
            _C.code_cache(self._code)[self._cb] = self._entries
        self._sig = None
        co = self._code
        self._nargs = co.co_argcount
        self._simple = not (co.co_flags & 0x0C) and co.co_kwonlyargcount == 0
        self._session.compiled.add(self)

    def _clear(self):
        del self._entries[:]
        self.graphs.clear()
        self.breaks.clear()
        self.runs.clear()
        self._warned_limit = False
        self._auto_dims.clear()
        del self._records[:]
        self._dynamic_refused.clear()
        del self.dynamic_failures[:]
        if self._root is self:
            self._children.clear()
            self._resumes.clear()
            self._dispatcher.clear()

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
            self._sig = inspect.signature(self._func, follow_wrapped=False)  # the code run is the wrapper's
        ba = self._sig.bind(*args, **kwargs)
        ba.apply_defaults()
        co = self._code
        n = co.co_argcount + co.co_kwonlyargcount + bool(co.co_flags & 4) + bool(co.co_flags & 8)
        return tuple(ba.arguments[name] for name in co.co_varnames[:n])

    # -- capture --------------------------------------------------------------------------------------
    def _on_miss(self, code, args):
        if code is not self._code:
            return None
        if self._session.run_only:  # run-only mode: unseen cases run eagerly
            self._count_eager_call("no entry in dyn.run() (run-only) mode")
            return None
        if self._entries and self._session.log_enabled("recompiles"):
            self._session.log("recompiles", f"recompiling {code.co_name} ({_where(code)}), entry "
                              f"{len(self._entries) + 1}: {_guard_failure(self._entries[-1], args)}")
        if self._at_limit(args):
            if not self._warned_limit:
                self._warned_limit = True
                many = (f"has {ENTRY_LIMIT} entries" if len(self._entries) >= ENTRY_LIMIT else
                        f"recompiled {RECOMPILE_LIMIT} times")
                warnings.warn(f"dyn: {self._code.co_name} {many} (recompile limit); new argument signatures "
                              f"run eagerly", stacklevel=3)
            self._count_eager_call("recompile limit")
            return None
        if self._entries:
            self._session.count("recompiles")
        entry, symbolic = self._dynamic_entry(code, args)
        if entry is None:
            guards = tuple(_arg_guard(a, True) for a in args)
            self._gg = self._paths = None
            fn, extra = self._compile(args)
            entry = (guards, fn, extra, self._gg, self._paths, _guard_tree(self._paths) if self._paths else None)
        if self._session.log_enabled("guards"):
            lines = _describe_guards(args, entry[3], entry[4])
            if symbolic:  # tensors with symbolic dims: checked by the relations below, not by their sizes
                lines = [f"arg{i}: tensor of dtype {a.dtype}, sizes checked by the symbolic guard"
                         if isinstance(a, torch.Tensor) and entry[0][i] is None else line
                         for i, (a, line) in enumerate(zip(args, lines))] + lines[len(args):]
            self._session.log("guards", f"guards of {code.co_name} ({_where(code)}), entry {len(self._entries) + 1}:"
                              "\n  " + "\n  ".join(lines + symbolic))
        if symbolic:  # checked first, as TorchDynamo checks its newest entry first: the sizes the specialized
            self._entries.insert(0, entry)  # entries before it do not hold for would fail their guards at every call
        else:
            self._entries.append(entry)
        return entry

    def _dynamic_entry(self, code, args):
        """(entry, lines describing its symbolic dims) for a capture with symbolic dims (dyn/dynamic), or
        (None, []) where no dim is dynamic or that capture is not possible (the reason is recorded: stats'
        dynamic_fallbacks, DYN_LOGS=dynamic, explain's dynamic_failures)."""
        if self._custom or self._backend_name != "dyn":
            return None, []
        if self._dynamic is None and self._records:
            for src, ds in changed_dims(self._records, args, _resolver).items():
                self._auto_dims.setdefault(src, set()).update(ds)
        want = dynamic_wanted(self._dynamic, args, self._auto_dims)
        if want is None:
            return None, []
        key = tuple(sorted((repr(src), tuple(sorted(d))) for src, d in self._auto_dims.items()))
        if key in self._dynamic_refused:
            return None, []
        session = self._session
        device = _device_of(args)
        try:
            if device is not None and device.type not in ("cpu", "cuda"):  # known before capturing
                raise DynamicUnsupported(f"dynamic dims run on the CPU and CUDA only (not on {device.type})")
            if _C is None or not getattr(_C, "HAS_COMPILER", False):
                raise DynamicUnsupported("dyn._C has no compiler in this build")
            guards, runner, extra, gg, paths, sym, graph, kernel, tr = dynamic_entry(self, args, want, capture)
        except DynamicUnsupported as e:
            reason = str(e)
        except Exception as e:  # a bug in this path: never a wrong result; the sizes are specialized instead
            session.counters["internal_failures"] += 1
            reason = f"internal error: {type(e).__name__}: {e}"
        else:
            session.add_graph(graph)
            self._records.append(input_record(tr.input_tensors, tr.input_sources))
            graph.symbolic = sym.describe(_source_str)
            self.graphs.append((graph, kernel, None))
            kind = getattr(kernel, "device_type", "cpu")
            trains = ", forward and backward" if getattr(kernel, "trains", False) else ""
            self._report(graph, f"dyn ({kind}{trains}, dynamic dims)", True, None)
            session.counters["dynamic_entries"] += 1
            if kind == "cuda" and self._options.get("cuda_graphs"):  # a CUDA graph would hold one size
                session.counters["cuda_graphs_skipped_dynamic"] += 1
                session.log("dynamic", f"{code.co_name} ({_where(code)}): symbolic sizes on CUDA run through "
                            "the launch plan, not a CUDA graph")
            session.log("dynamic", f"{code.co_name} ({_where(code)}): captured with symbolic sizes: " +
                        "; ".join(graph.symbolic))
            return (guards, runner, extra, gg, paths, _guard_tree(paths) if paths else None), \
                ["symbolic: " + line for line in graph.symbolic]
        self._dynamic_refused.add(key)
        session.counters["dynamic_fallbacks"] += 1
        self.dynamic_failures.append(reason)
        why = f"{code.co_name} ({_where(code)}): {reason}"
        session.dynamic_fallback_reasons[why] = session.dynamic_fallback_reasons.get(why, 0) + 1
        session.log("dynamic", f"{code.co_name} ({_where(code)}): sizes specialized, not symbolic: {reason}")
        return None, []

    def _count_eager_call(self, why):
        """A call that runs in Python because no entry may be made for it: counted (stats' eager_calls,
        by reason in eager_call_reasons) and logged (DYN_LOGS=fallbacks)."""
        session = self._session
        session.counters["eager_calls"] += 1
        reasons = session.eager_call_reasons
        key = f"{self._code.co_name} ({_where(self._code)}): {why}"
        reasons[key] = reasons.get(key, 0) + 1
        if session.log_enabled("fallbacks"):
            session.log("fallbacks", f"{key}: this call runs eagerly")

    def _at_limit(self, args):
        """Whether a new entry would pass the recompile limit. Entries made for other module objects
        (one per layer of a model whose layers run as frames of their own) are not counted: the limit is
        per set of module arguments, as TorchDynamo counts its cache per ID_MATCHed object."""
        entries = self._entries
        if len(entries) >= ENTRY_LIMIT:
            return True
        mods = [i for i, a in enumerate(args) if isinstance(a, torch.nn.Module)]
        n = sum(1 for e in entries if all(e[0][i] is not None and e[0][i][0] == 1 and e[0][i][1] is args[i]
                                           for i in mods))
        return n >= RECOMPILE_LIMIT

    def _compile(self, args):
        callees = {}
        if is_ddp_forward(self._func):
            # DDP's forward is its reducer's bookkeeping: it runs as written, the module it wraps is
            # compiled (TorchDynamo skips DDP's forward the same way)
            self._session.log("ddp", f"DistributedDataParallel.forward runs eagerly; "
                                     f"{type(args[0].module).__name__} is compiled")
            return ddp_forward_runner(args[0], self._child), None
        try:
            seg = _Segment(self, args, callees)
        except Unsupported as e:
            self._session.counters["graph_breaks"] += 1
            self._session.counters["eager_entries"] += 1
            if self._fullgraph:
                raise
            self._session.log("graph_breaks",
                              f"{self._code.co_name} runs eagerly: {e.reason} at {e.filename}:{e.lineno}")
            self.breaks.append(dict(reason=e.reason, filename=e.filename, lineno=e.lineno))
            self.graphs.append((None, None, e))
            return self._eager(self._func, args, callees), None
        except Exception as e:  # a bug in capture: never a wrong result, run eagerly
            self._session.counters["internal_failures"] += 1
            self._session.counters["eager_entries"] += 1
            if self._fullgraph:
                raise
            warnings.warn(f"dyn: capture failed internally, running {self._code.co_name} eagerly: "
                          f"{type(e).__name__}: {e}", stacklevel=4)
            return None, None
        self._gg, self._paths = seg.gg, seg.paths
        self._records.append(input_record(seg.tr.input_tensors, seg.tr.input_sources))
        if seg.needs_grad and not self._custom and self._backend_name == "dyn" and seg.loses_grad():
            reason = "its outputs require grad through inputs the graph does not read (tensors without elements)"
            self._session.counters["eager_entries"] += 1
            self.graphs.append((seg.graph, None, reason))
            self._report(seg.graph, PYTHON, False, reason)
            self._warn_eager(reason)
            return None, seg.extra
        try:
            seg.prepare()
        except Exception as e:
            if not self.runs or self.runs[-1].graph is not seg.graph:
                self._report(seg.graph, PYTHON, False, failure(self._backend_name, self._custom, e))
            self._session.counters["internal_failures"] += 1
            self._session.counters["eager_entries"] += 1
            if self._fullgraph:
                raise
            warnings.warn(f"dyn: compiling {self._code.co_name} failed, running eagerly: {e}", stacklevel=4)
            return None, seg.extra
        run = self.runs[-1] if self.runs and self.runs[-1].graph is seg.graph else None
        if seg.needs_grad and run is not None and run.fallback:
            self._warn_eager(f"its training graph runs with PyTorch's autograd: {run.reason}")
        if seg.kernel is None and seg.graph.outputs:
            self._session.counters["eager_entries"] += 1
            warnings.warn(f"dyn: no {self._backend_name} runner for device {_device_of(seg.tr.input_tensors) or 'cpu'}; "
                          f"running {self._code.co_name} eagerly", stacklevel=4)
            return None, seg.extra
        return seg.runner, seg.extra

    # -- graph breaks ---------------------------------------------------------------------------------
    def _derive(self, fn):
        """A compiled function for a frame met at a graph break (a resume function, or a user function
        that breaks inside): same backend and options; graphs and breaks are reported on this one."""
        child = _CompiledFunction.__new__(_CompiledFunction)
        child.__dict__.update({k: v for k, v in self.__dict__.items()
                               if k in ("_session", "_backend_name", "_backend", "_custom", "_fullgraph", "_options",
                                        "_dynamic")})
        child._init_frame(fn)
        child.graphs, child.breaks, child.runs, child._root = self.graphs, self.breaks, self.runs, self._root
        return child

    def _resume(self, brk, k, args):
        """(resume function, its local parameter names) for resume point k of a break: compiled, or,
        starting at an instruction dyn cannot capture, run eagerly (not re-captured) with the user
        functions it calls captured on their own. args: the first call's arguments."""
        target, names = brk.targets[k], brk.names[k]
        key = (self._func, target, tuple(brk.slots), names, brk.eager_rest)
        root = self._root
        hit = root._resumes.get(key)
        if hit is None:
            fn = resume.resume_function(self._func, brk.codes[k])
            if brk.eager_rest:
                run = self._eager(fn, args, brk.callees, copy=False)
                hit = (fn if run is None else run, names)
            else:
                hit = (self._derive(fn), names)
            root._resumes[key] = hit
        return hit

    def _eager(self, func, args, callees, copy=True):
        """A runner for func's frame run eagerly, as TorchDynamo runs a frame it skips: the user functions
        it calls (those the capture saw, and those its names reach) are captured as frames of their own
        through the frame hook; None when there are none (then the frame simply runs). func's own code
        carries dyn's cache, so a copy runs (copy=False: func's code has none, a resume function)."""
        if not _HOOK or self._fullgraph:
            return None
        code = func.__code__
        targets = dict.fromkeys(list(callees) + named_targets(code, func, args))
        n = 0
        disp = self._root._dispatcher
        for f in targets:
            if f.__code__ is code or f.__code__ is self._code or not interceptable(f):
                continue
            disp.register(self._child(f))
            n += 1
            if n >= MAX_TARGETS:
                break
        if not n:
            return None
        fn = plain_copy(func) if copy else func
        return lambda *a: disp.run(fn, a)

    def _call_through(self, fn, args, kwargs):
        """Makes a call at a graph break; a user function (function, method, module forward, __call__)
        runs as a frame of its own: compiled, so it is captured and breaks only where it must."""
        if type(fn) is functools.partial:
            return self._call_through(fn.func, [*fn.args, *args], {**fn.keywords, **kwargs})
        if fn is operator.getitem and len(args) == 2 and not kwargs and not isinstance(args[0], torch.nn.Module):
            get = getattr(type(args[0]), "__getitem__", None)  # obj[idx] at a break: a Python __getitem__
            if isinstance(get, types.FunctionType):
                fn, args = types.MethodType(get, args[0]), [args[1]]
        if is_ddp_module(fn) and not fn._forward_hooks and not fn._forward_pre_hooks:
            return self._child(type(fn).forward)(fn, *args, **kwargs)  # DDP's forward, its module compiled
        if isinstance(fn, torch.nn.Module) and "forward" not in fn.__dict__ and \
                is_user_function(type(fn).forward) and (fn._forward_hooks or fn._forward_pre_hooks):
            # hooks (FSDP's all-gather and reshard, a user's): they run eagerly, the forward compiled
            fwd = self._child(type(fn).forward)
            with forward_replaced(fn, lambda *a, **k: fwd(fn, *a, **k)):
                return fn(*args, **kwargs)
        t = frame_target(fn, sequential=True)
        if t is None or t[0].__code__ is self._code:
            return fn(*args, **kwargs)
        func, lead = t
        return self._child(func)(*lead, *args, **kwargs)

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

    def _report(self, graph, backend, compiled, reason):
        run = GraphRun(graph, backend, compiled, reason, _where(self._code),
                       fallback=not compiled and reason is not None and reason != "backend='eager'")
        self.runs.append(run)
        self._session.record(run)

    def _warn_eager(self, reason):
        """A call of the function the user compiled runs no compiled code though its graph was captured
        (a fallback, not a graph break: breaks have DYN_LOGS=graph_breaks): said once, with the reason.
        Compiler failures and missing runners warn at each new entry already."""
        if self._root is self and not self._warned_eager:
            self._warned_eager = True
            warnings.warn(f"dyn: {self._code.co_name} ({_where(self._code)}) ran no compiled code: {reason}; "
                          "calls like it run eagerly (dyn.explain and dyn.stats() tell more)", stacklevel=5)

    def _kernel(self, graph, example_inputs):
        self._session.counters["backend_calls"] += 1
        if self._custom:
            return self._backend(graph, list(example_inputs))
        return self._backend(graph, list(example_inputs), self._options)


class _Segment:
    """One captured graph: from the frame's start to its return or to a graph break. At a break the
    graph outputs (condition, live tensors); the runner then makes the call Python must make (or takes
    the branch) and calls the resume function of the rest of the frame, itself compiled on demand."""

    def __init__(self, cf, args, callees=None):
        self.cf = cf
        self.tr, self.tmpl, self.graph, self.brk = capture(cf._func, args, cf._session, not cf._fullgraph, callees)
        cf._session.add_graph(self.graph)
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
            cf._session.log("graph_breaks",
                            f"graph break in {cf._code.co_name} at {b.where[0]}:{b.where[1]}: {b.reason}")

    def loses_grad(self):
        """Whether eager's outputs would require grad only through inputs the graph dropped (operands
        without elements): the compiled graph, reading none that requires grad, would make outputs that
        do not."""
        m = self.graph.input_map
        read = self.tr.input_tensors if m is None else [self.tr.input_tensors[j] for j in m]
        if any(t.requires_grad for t in read) or not self.graph.outputs:
            return False
        if not any(o.meta.is_floating_point() or o.meta.is_complex() for o in self.graph.outputs):
            return False  # integer and boolean results never require grad (a mask made beside the activations)
        return any(t.requires_grad for t in self.tr.input_tensors)

    def prepare(self):
        """Compiles the graph with the backend (on first use) and builds the runner."""
        cf = self.cf
        kernel = None
        examples = ()
        if self.graph.outputs:
            m = self.graph.input_map
            examples = self.tr.input_tensors if m is None else [self.tr.input_tensors[j] for j in m]
            examples = [t.to(self.graph.device) if n.host else t for t, n in zip(examples, self.graph.inputs)]
            kernel = cf._kernel(self.graph, examples)
        self.kernel = kernel
        if self.graph.nodes or self.graph.outputs:
            cf.graphs.append((self.graph, kernel, None))
            cf._report(self.graph, *classify(kernel, self.graph, examples, cf._backend_name, cf._custom))
        kernel = _select(kernel, self.graph, self.tr.index_bounds)
        if kernel is not None and self.tr.outer_autocast():
            kernel = _autocast_off(kernel, self.tr.outer_autocast())
        if kernel is not None and cf._root._measure_memory and cf.runs and cf.runs[-1].graph is self.graph \
                and cf.runs[-1].compiled:
            kernel = memory.measured(kernel, cf.runs[-1])
        if self.brk is None:
            self.runner = _make_runner(self.tr, self.tmpl, kernel, self.tr.effects)
        else:
            self.runner = _break_runner(cf, self.tr, self.tmpl, kernel, self.brk)



def _autocast_off(kernel, device_types):
    """A graph captured under the caller's autocast holds autocast's casts as graph ops: it runs with
    autocast off (the eager backend's ops would be cast again: an `autocast(enabled=False)` block inside
    must stay float32)."""
    def run(*inputs):
        prev = [torch.is_autocast_enabled(d) for d in device_types]
        for d in device_types:
            torch.set_autocast_enabled(d, False)
        try:
            return kernel(*inputs)
        finally:
            for d, p in zip(device_types, prev):
                torch.set_autocast_enabled(d, p)
    return run


def _frame_function(fn):
    """What dyn.compile captures for a callable, as torch.compile: a function or method is its own
    frame; any other callable (a builtin, a functools.partial, an object with __call__) is called from
    a small Python function whose frame is captured (the call is inlined there, or breaks)."""
    if isinstance(fn, types.FunctionType) or (isinstance(fn, types.MethodType) and
                                              isinstance(fn.__func__, types.FunctionType)):
        return fn
    if not callable(fn):
        raise TypeError(f"dyn.compile: {type(fn).__name__} object is not callable")

    def call(*args, **kwargs):
        return fn(*args, **kwargs)
    return call
