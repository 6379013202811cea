"""dyn as a torch.compile backend: torch.compile(model, backend="dyn"). TorchDynamo captures the graph; its
FX graph is translated into dyn's graph dialect (translate.py) and compiled by dyn's compiler, with the
runners dyn.compile uses. Graphs whose inputs require grad are differentiated by dyn (one autograd node whose
forward and backward dyn compiled, as under dyn.compile); where dyn cannot translate or differentiate one, it
runs with PyTorch's ops and autograd. AOTAutograd's split is not used for training: dyn's compile of the
ATen graphs it makes gave a LLaMA train step wrong gradients (docs/autograd.md, known gaps); ATen graphs
(aten.py) are translated where TorchDynamo gives them. An FX graph dyn cannot take (a node without a handler, symbolic shapes, a
compiler failure) runs as it was given, with a warning, and is counted in dyn.stats()["eager_graphs"]
with the reason; compiled ones in dyn.stats()["compiled_graphs"]."""
import warnings

import torch

from .. import backends as B
from ..distributed.ddp import active_ddp
from ..dynamic.kernel import DynamicKernel, DynamicShapeError
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


def compile_fx(gm, example_inputs, options=None, what="a TorchDynamo graph"):
    """gm translated and compiled by dyn: a callable taking the graph's inputs positionally and returning
    its outputs; gm.forward (reported, warned) where dyn cannot take it. Where its inputs require grad, dyn
    differentiates it (one autograd node, dyn's forward and backward: docs/autograd.md); where dyn cannot,
    it runs with PyTorch's ops and autograd (reported, warned). Inside a fake-tensor mode (AOTAutograd's)
    the translation's meta computations and constants leave it."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    with unset_fake_temporarily():
        return _compile_fx(gm, example_inputs, options, what)


def _compile_fx(gm, example_inputs, options, what):
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
    if torch.is_grad_enabled() and active_ddp() is not None:
        # a piece of TorchDynamo's DDPOptimizer (it split the graph at DDP's buckets already): the example
        # inputs it passes between pieces are fake tensors whose requires_grad need not be the run's, so
        # every floating input is taken as requiring grad (a gradient nobody asked for is dropped by
        # autograd; one missing would be lost)
        examples = [t.detach().requires_grad_() if (t.is_floating_point() or t.is_complex()) and not t.requires_grad
                    else t for t in examples]
        options = {**(options or {}), "ddp_buckets": False}
    if graph.outputs and graph.fake_mode is not None:  # symbolic sizes (TorchDynamo's dynamic shapes)
        try:
            kernel = _dynamic_kernel(graph, examples, options)
        except (DynamicShapeError, RuntimeError, NotImplementedError) as e:
            return _fallback(gm, session, what, f"symbolic sizes: {failure('dyn', False, e)}", graph)
        session.record(GraphRun(graph, f"dyn ({kernel.device_type}, dynamic dims)", True, None, f"{WHERE}, {what}",
                                fallback=False))
    elif graph.outputs:
        try:
            kernel = B.dyn_backend(graph, examples, options)
        except Exception as e:  # the compiler failed
            return _fallback(gm, session, what, failure("dyn", False, e), graph)
        if kernel is None:
            return _fallback(gm, session, what, B.fallback_reason(graph, examples) or "no dyn runner", graph)
        if kernel is graph and getattr(graph, "no_lowering", None):  # runs with PyTorch's ops (and autograd)
            warnings.warn(f"dyn: {WHERE}: {what} runs with PyTorch ops, not dyn's compiler: {graph.no_lowering}",
                          stacklevel=3)
        backend_name, compiled, reason = classify(kernel, graph, examples, "dyn", False)
        session.record(GraphRun(graph, backend_name, compiled, reason, f"{WHERE}, {what}", fallback=not compiled))
    return _make_runner(tr.tracer, tr.template, _select(kernel, graph, tr.tracer.index_bounds))


def _dynamic_kernel(graph, examples, options):
    """The kernel of a graph with symbolic sizes (dyn/dynamic/kernel.py): inference graphs on the CPU or CUDA
    (never recorded as a CUDA graph: one holds one size)."""
    if any(t.device.type not in ("cpu", "cuda") for t in examples):
        raise DynamicShapeError("dynamic dims run on the CPU and CUDA only")
    if torch.is_grad_enabled() and any(t.requires_grad for t in examples):
        raise DynamicShapeError("a training graph (inputs require grad)")
    return DynamicKernel(graph, bool((options or {}).get("keep_stages", False)), examples)


def backend(gm, example_inputs, **options):
    """The TorchDynamo backend: gm (a torch.fx.GraphModule) and its example inputs -> a callable taking
    the graph's inputs positionally and returning its outputs."""
    current().count("backend_calls")
    return compile_fx(gm, example_inputs, options)
