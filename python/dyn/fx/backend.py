"""dyn as a torch.compile backend: torch.compile(model, backend="dyn"). TorchDynamo captures the graph; its
FX graph is translated into dyn's graph dialect (translate.py) and compiled by dyn's compiler, the same
runners dyn.compile uses. An FX graph dyn cannot take (a node without a handler, symbolic shapes, inputs
that require grad: dyn's compiler has no autograd) runs as TorchDynamo gave it, with a warning, and is
counted in dyn.stats()["eager_graphs"] with the reason; compiled ones in dyn.stats()["compiled_graphs"]."""
import warnings

import torch

from .. import backends as B
from ..capture.reports import NEEDS_GRAD, TORCH_OPS, GraphRun, classify, failure
from ..capture.runners import _make_runner, _select
from ..errors import Unsupported
from ..graph import Graph
from ..session import current
from .translate import Translation

NAME = "dyn"
WHERE = "torch.compile(backend='dyn')"


def _fallback(gm, session, reason, graph=None):
    """The FX graph as TorchDynamo gave it (its PyTorch ops), reported and warned about."""
    session.record(GraphRun(graph if graph is not None else Graph(), TORCH_OPS, False, reason,
                            WHERE, fallback=True))
    warnings.warn(f"dyn: {WHERE}: a TorchDynamo graph of {len(gm.graph.nodes)} FX nodes runs with PyTorch "
                  f"ops, not dyn's compiler: {reason}", stacklevel=2)
    return gm.forward


def backend(gm, example_inputs, **options):
    """The TorchDynamo backend: gm (a torch.fx.GraphModule) and its example inputs -> a callable taking
    the graph's inputs positionally and returning its outputs."""
    session = current()
    session.count("backend_calls")
    if torch.is_grad_enabled() and any(isinstance(t, torch.Tensor) and t.requires_grad for t in example_inputs):
        return _fallback(gm, session, NEEDS_GRAD)
    try:
        tr = Translation(gm, list(example_inputs), session)
    except Unsupported as e:
        return _fallback(gm, session, e.reason)
    graph = tr.graph
    session.add_graph(graph)
    m = graph.input_map
    inputs = tr.tracer.input_tensors
    examples = inputs if m is None else [inputs[j] for j in m]
    kernel = None
    if graph.outputs:
        try:
            kernel = B.dyn_backend(graph, examples, options)
        except Exception as e:  # the compiler failed: TorchDynamo's graph runs, never a wrong result
            return _fallback(gm, session, failure("dyn", False, e), graph)
        if kernel is None:
            return _fallback(gm, session, B.fallback_reason(graph, examples) or "no dyn runner", graph)
        backend_name, compiled, reason = classify(kernel, graph, examples, "dyn", False)
        session.record(GraphRun(graph, backend_name, compiled, reason, WHERE, fallback=not compiled))
    return _make_runner(tr.tracer, tr.template, _select(kernel, graph, tr.tracer.index_bounds))
