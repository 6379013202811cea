"""An entry whose graph has symbolic dims (docs/dynamic_shapes.md): captured once with some argument dims as
ShapeEnv symbols, compiled once with `?` dims, guarded on the relations the code relied on instead of the
sizes. What this path does not take yet raises DynamicUnsupported with the reason; the compiled function then
captures the call with its sizes as constants, as it always did, and reports why."""
import torch

from .. import backends as B
from ..autograd import DifferentiationError, TrainingKernel
from ..autograd.function import SymbolicTrainingError
from ..distributed.ddp import active_ddp, staged_training
from ..dynamic.kernel import DynamicKernel, DynamicShapeError, _device_of
from ..graph.mlir import carries_grad
from ..dynamic.symbolic import SymbolicSizes, holds_symbolic, size_expr, size_function, symbol_positions
from ..errors import Unsupported
from ..session import current
from ..ops.shape import SlicedInput
from .guards import _arg_guard, _global_guards, _path_guards
from .paths import _resolver
from .breaks import _break_runner
from .runners import _make_runner, _select


class DynamicUnsupported(Exception):
    pass


_PLAIN_TEMPLATES = ("o", "oc", "i", "src", "st", "nt", "obj", "dobj", "dt", "dq", "set", "det", "t", "l", "d", "c")


def _check_template(tmpl, updates_allowed=False):
    kind = tmpl[0]
    if kind == "m" and updates_allowed:  # inputs updated in place, copied back by the runner
        _check_template(tmpl[1])
        return
    if kind not in _PLAIN_TEMPLATES:
        raise DynamicUnsupported("an output is a view or an updated input")
    if kind == "c":
        if holds_symbolic(tmpl[1]):
            raise DynamicUnsupported("an output holds a size computed from a dynamic dim")
        return
    if kind in ("st", "nt", "set"):
        subs = tmpl[2]
    elif kind in ("t", "l"):
        subs = tmpl[1]
    elif kind == "d":
        subs = [t for _, t in tmpl[1]]
    elif kind == "det":
        subs = [tmpl[1]]
    elif kind == "obj":
        subs = [t for _, t in tmpl[2]]
    elif kind == "dobj":
        subs = [t for _, t in tmpl[3]] + [t for _, t in tmpl[2] if t[0] != "attr"]
    elif kind == "dt":
        subs = [t for _, t in tmpl[3]]
    elif kind == "dq":
        subs = tmpl[2]
    else:
        return
    for t in subs:
        _check_template(t)


def _runtime_bound(bound, sym, tr):
    """An index bound (input or function, lo, hi, ...) with symbolic sizes in it: hi, or the bounds of a
    slice of an input (SlicedInput), as functions of the captured inputs (their sizes at each call)."""
    j, lo, hi, *why = bound
    if any(holds_symbolic(v) and not isinstance(v, torch.SymInt) for v in (lo, hi)):
        raise DynamicUnsupported("an index bound depends on a dynamic dim")
    at = {}
    for s, (source, d) in sym.symbols.items():
        if source in tr.input_sources:
            at[s] = (tr.input_sources.index(source), d)

    def sizes_of(*values):
        exprs = tuple(size_expr(v) for v in values)
        if any(e.free_symbols - set(at) for e in exprs):
            raise DynamicUnsupported("an index bound depends on a size no input carries")
        try:
            f = size_function([exprs], at)
        except Exception as e:
            raise DynamicUnsupported(f"an index bound of a dynamic size: {e}") from None
        return lambda ins: f(ins)[0]
    if isinstance(j, SlicedInput):
        j.sizes = sizes_of(j.start, j.end)
    elif getattr(j, "symbolic", None):  # a computed index whose recomputation needs symbolic sizes
        j.sizes = sizes_of(*j.symbolic)
    elif holds_symbolic(j):
        raise DynamicUnsupported("an index bound depends on a dynamic dim")
    if isinstance(hi, torch.SymInt):
        hi_of = sizes_of(hi)
        hi = lambda ins: hi_of(ins)[0]  # noqa: E731
    if isinstance(lo, torch.SymInt):  # -n where negative indices wrap (x[i])
        lo_of = sizes_of(lo)
        lo = lambda ins: lo_of(ins)[0]  # noqa: E731
    return (j, lo, hi, *why)


def _static_updates(tr):
    """Whether every input the graph updates in place has static sizes (a buffer a training step updates):
    a training kernel returns their new values, which the runner copies into them."""
    return torch.is_grad_enabled() and all(
        not holds_symbolic(tuple(v.node.meta.shape)) for v in tr.mutations.values()) and all(
        not holds_symbolic(tuple(tr.graph.inputs[j].meta.shape)) for j in tr.mutations)


def _requires_grad(inputs):
    return [t.requires_grad and (t.is_floating_point() or t.is_complex()) for t in inputs]


def _training_kernel(graph, inputs, keep, memory_budget=None):
    """The graph's forward and backward compiled with `?` dims (dyn/autograd) where it is a training graph
    (grad mode on, a float input that requires grad and reaches an output), else None. Inside DDP's forward,
    cut at its gradient buckets as a specialized graph is (distributed/ddp.py: each piece's gradients are
    all-reduced while the earlier pieces' backward runs), each piece symbolic."""
    requires_grad = _requires_grad(inputs)
    if not (torch.is_grad_enabled() and any(requires_grad) and carries_grad(graph, requires_grad)):
        return None
    device = _device_of(graph, inputs)
    if device.type not in ("cpu", "cuda"):
        raise DynamicUnsupported(f"a training graph on {device.type} (symbolic training graphs run on the CPU "
                                 "and CUDA)")
    ddp = active_ddp()
    if ddp is not None:
        options = {"memory_budget": memory_budget}
        staged = staged_training(graph, inputs, ddp,
                                 lambda g, ex, layout: B._training(g, ex, _requires_grad(ex), keep, {**options, **layout},
                                                                   symbolic=True),
                                 lambda msg: current().log("ddp", msg), concrete=_concrete_shapes(graph, inputs))
        if staged is not None:
            return staged
    return TrainingKernel(graph, inputs, requires_grad, keep, symbolic=True, memory_budget=memory_budget)


def _concrete_shapes(graph, inputs):
    """shape -> the shape at this call's sizes: each symbol read where the graph's inputs carry it."""
    values = {s: inputs[k].shape[d] for s, (k, d) in symbol_positions(graph.inputs).items()}

    def concrete(shape):
        return tuple(int(size_expr(d).xreplace(values)) for d in shape)
    return concrete


def _batch_hint(cf, graph, tr):
    """The batch a `?` dim 0 of an image-like input (4-d or 5-d) is expected to have: the largest seen at
    that input, in this call and in earlier entries' (a training loop's full batches before its smaller
    last one); None without such an input. dyn-propagate-layouts weighs a convolution's channels-last
    layout at that batch."""
    hint = 0
    for t, src, node in zip(tr.input_tensors, tr.input_sources, graph.inputs):
        if t.dim() in (4, 5) and holds_symbolic(node.meta.shape[0]):
            seen = [shape[0] for record in cf._records for s, _, shape in record if s == src and len(shape) == t.dim()]
            hint = max([hint, t.shape[0], *seen])
    return hint or None


def dynamic_entry(cf, args, want, capture):
    """(arg guards, runner, extra, global guards, paths, symbolic sizes, graph, kernel) of a new entry for
    args whose input tensors have the dims want(tensor, source) gives symbolic. capture:
    capture.compiled.capture."""
    def symbolic():
        return SymbolicSizes(want)
    try:
        tr, tmpl, graph, brk = capture(cf._func, args, cf._session, not cf._fullgraph, {}, symbolic=symbolic)
    except Unsupported as e:
        raise DynamicUnsupported(f"capture with symbolic sizes: {e.reason}") from None
    sym = tr.symbolic
    if brk is not None and holds_symbolic((brk.stack, brk.locals, brk.call, brk.store)):
        # the rest of the frame runs in Python with these values: it would need the sizes as numbers
        raise DynamicUnsupported(f"a size computed from a dynamic dim lives across a graph break ({brk.reason})")
    if tr.effects and holds_symbolic(tr.effects):
        raise DynamicUnsupported("a side effect writes a size computed from a dynamic dim")
    if tr.mutations and not _static_updates(tr):
        raise DynamicUnsupported("the graph updates an input in place")
    if any(t.device.type not in ("cpu", "cuda") for t in tr.input_tensors) or (
            graph.device is not None and torch.device(graph.device).type not in ("cpu", "cuda")):
        raise DynamicUnsupported("dynamic dims run on the CPU and CUDA only")
    if not graph.nodes or not any(o.op != "input" for o in graph.outputs):
        raise DynamicUnsupported("no graph to compile")
    if not sym.live_symbols():
        raise DynamicUnsupported("every dynamic dim was specialized by the code (a guard on its value" +
                                 (f": {sym.specialized_where()}" if sym.specialized_where() else "") + ")")
    bounds = [_runtime_bound(b, sym, tr) if holds_symbolic(b) or isinstance(b[0], SlicedInput) or
              getattr(b[0], "symbolic", None) else b for b in tr.index_bounds]
    _check_template(tmpl, updates_allowed=bool(tr.mutations))
    before = sym.guard_count()
    keep = bool(cf._options.get("keep_stages", False))
    graph.batch_hint = _batch_hint(cf, graph, tr)
    try:
        kernel = _training_kernel(graph, tr.input_tensors, keep, cf._options.get("memory_budget")) or DynamicKernel(graph, keep, tr.input_tensors)
    except (DynamicShapeError, SymbolicTrainingError) as e:
        raise DynamicUnsupported(str(e)) from None
    except DifferentiationError as e:
        lines = [line.split("error: ", 1)[1] for line in str(e).splitlines() if "error: " in line]
        raise DynamicUnsupported("differentiating the graph: " + (lines[0] if lines else str(e).splitlines()[0])) \
            from None
    except (RuntimeError, NotImplementedError, TypeError) as e:
        lines = [line.split("error: ", 1)[1] for line in str(e).splitlines() if "error: " in line]
        raise DynamicUnsupported("dyn's compiler: " + (lines[0] if lines else str(e).splitlines()[0])) from None
    if tr.mutations and not getattr(kernel, "trains", False):
        raise DynamicUnsupported("the graph updates an input in place")
    if sym.guard_count() != before:
        raise DynamicUnsupported("an op's attribute depends on a dynamic dim")
    check = sym.checker(_resolver)
    guards = tuple(None if ("arg", i) in sym.made else _arg_guard(a, True) for i, a in enumerate(args))
    paths, extra = _path_guards(tr, args, sym.dynamic_ids())
    if extra is None:
        both = check
    else:
        def both(a):
            return check(a) and extra(a)
    run = _select(kernel, graph, bounds)
    runner = _make_runner(tr, tmpl, run, tr.effects) if brk is None else _break_runner(cf, tr, tmpl, run, brk)
    return guards, runner, both, _global_guards(tr), paths, sym, graph, kernel, tr
