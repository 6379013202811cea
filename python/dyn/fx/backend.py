"""dyn as a torch.compile backend: torch.compile(model, backend="dyn"). TorchDynamo captures the graph; its
FX graph is translated into dyn's graph dialect (translate.py) and compiled by dyn's compiler, with the
runners dyn.compile uses. Graphs whose inputs require grad are differentiated by dyn (one autograd node whose
forward and backward dyn compiled, as under dyn.compile); where dyn's core cannot differentiate one, it goes
through AOTAutograd (PyTorch's core ATen decompositions), whose forward and backward graphs are translated
(aten.py) and compiled the same way. An FX graph dyn cannot take (a node without a handler, symbolic shapes, a
compiler failure) runs as it was given, with a warning, and is counted in dyn.stats()["eager_graphs"]
with the reason; compiled ones in dyn.stats()["compiled_graphs"]."""
import warnings

import torch

from .. import backends as B
from ..capture.reports import TORCH_OPS, GraphRun, classify, failure
from ..capture.runners import _make_runner, _select
from ..errors import Unsupported
from ..graph import Graph
from ..session import current
from .translate import Translation

NAME = "dyn"
WHERE = "torch.compile(backend='dyn')"


def _fallback(gm, session, what, reason, graph=None):
    """The FX graph as it was given (its PyTorch ops), reported and warned about."""
    session.record(GraphRun(graph if graph is not None else Graph(), TORCH_OPS, False, reason,
                            f"{WHERE}, {what}", fallback=True))
    warnings.warn(f"dyn: {WHERE}: {what} of {len(gm.graph.nodes)} FX nodes runs with PyTorch ops, not dyn's "
                  f"compiler: {reason}", stacklevel=3)
    return gm.forward


def compile_fx(gm, example_inputs, options=None, what="a TorchDynamo graph", differentiated=False):
    """gm translated and compiled by dyn: a callable taking the graph's inputs positionally and returning
    its outputs; gm.forward (reported, warned) where dyn cannot take it. AOTAutograd calls its compilers
    inside its fake-tensor mode: the translation's meta computations and constants leave it.
    differentiated: gm's inputs require grad and dyn differentiates it (one autograd node, dyn's forward
    and backward); None where dyn's core cannot differentiate it (the caller then uses AOTAutograd)."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    with unset_fake_temporarily():
        return _compile_fx(gm, example_inputs, options, what, differentiated)


def _compile_fx(gm, example_inputs, options, what, differentiated=False):
    session = current()
    try:
        tr = Translation(gm, list(example_inputs), session)
    except Unsupported as e:
        return _fallback(gm, session, what, e.reason)
    except Exception as e:  # a bug in the translation: the graph runs as given, never a wrong result
        session.count("internal_failures")
        return _fallback(gm, session, what, f"translation failed internally: {type(e).__name__}: {e}")
    graph = tr.graph
    session.add_graph(graph)
    m = graph.input_map
    inputs = tr.tracer.input_tensors
    examples = inputs if m is None else [inputs[j] for j in m]
    kernel = None
    if graph.outputs:
        try:
            kernel = B.dyn_backend(graph, examples, options)
        except Exception as e:  # the compiler failed
            return _fallback(gm, session, what, failure("dyn", False, e), graph)
        if kernel is None:
            return _fallback(gm, session, what, B.fallback_reason(graph, examples) or "no dyn runner", graph)
        if differentiated and kernel is graph:
            session.log("fallbacks", f"{WHERE}, {what}: dyn cannot differentiate it ({graph.no_lowering}); "
                                     "AOTAutograd's forward and backward graphs are compiled instead")
            return None
        backend_name, compiled, reason = classify(kernel, graph, examples, "dyn", False)
        session.record(GraphRun(graph, backend_name, compiled, reason, f"{WHERE}, {what}", fallback=not compiled))
    return _make_runner(tr.tracer, tr.template, _select(kernel, graph, tr.tracer.index_bounds))


def _training(gm, example_inputs, options):
    """AOTAutograd splits the graph into forward and backward ATen graphs (core ATen decompositions);
    dyn compiles each."""
    from torch._decomp import core_aten_decompositions
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func

    def compiler(what):
        return lambda g, ins: make_boxed_func(compile_fx(g, ins, options, what))
    return aot_autograd(fw_compiler=compiler("an AOTAutograd forward graph"),
                        bw_compiler=compiler("an AOTAutograd backward graph"),
                        decompositions=core_aten_decompositions())(gm, example_inputs)


def backend(gm, example_inputs, **options):
    """The TorchDynamo backend: gm (a torch.fx.GraphModule) and its example inputs -> a callable taking
    the graph's inputs positionally and returning its outputs."""
    current().count("backend_calls")
    if torch.is_grad_enabled() and any(isinstance(t, torch.Tensor) and t.requires_grad for t in example_inputs):
        # dyn differentiates the graph itself (dyn-graph-autodiff); AOTAutograd's split where it cannot
        run = compile_fx(gm, example_inputs, options, differentiated=True)
        return run if run is not None else _training(gm, example_inputs, options)
    return compile_fx(gm, example_inputs, options)
