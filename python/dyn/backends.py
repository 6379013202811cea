"""Backends: turn a captured Graph into a callable(*inputs) -> list of outputs."""
import os
import warnings

import torch

from .graph.eager import python_function
from .graph.graph import Graph
from .graph.random import draw_seed, has_random
from .graph.layouts import input_layout, strided_graph
from .graph.mlir import carries_grad
from .autograd import DifferentiationError, TrainingKernel
from .autograd.function import SymbolicTrainingError
from .cuda_graphs import GraphReplay
from .distributed.ddp import active_ddp, staged_training
from .launch import EMPTY_STRIDED_CPU, compile_native, contiguous_strides, dump_stages, gpu_target, run_compiled
from .native import C as _C
from .native import have_compiler
from .session import current



class _DynKernel:
    """A graph compiled by the C++ core. Inputs are read through their strides where the example inputs
    have a layout graph/layouts.py can read (expanded, transposed, sliced: no copy), else made contiguous
    (free when they already are); outputs are preallocated with torch.empty on the inputs' device."""

    def __init__(self, graph, keep_stages=False, example_inputs=None, cpu_gemm=None):
        if not have_compiler():
            raise RuntimeError("dyn._C was built without the compiler core")
        self.graph = graph  # as captured: what a failed call runs eagerly
        self.layouts = [None] * len(graph.inputs)
        if example_inputs is not None and len(example_inputs) == len(graph.inputs):
            self.layouts = [input_layout(t) for t in example_inputs]
        # capture guards strides, so a call sees the example's; checked anyway, cheaply (tuples)
        self.strides = [None if lay is None else tuple(t.stride()) for lay, t in
                        zip(self.layouts, example_inputs or ())]
        self.strided = any(lay is not None for lay in self.layouts)
        compiled = strided_graph(graph, self.layouts) if self.strided else graph
        # outputs without elements (an empty cache tensor a model returns) are made here, not computed
        self.live = [k for k, o in enumerate(graph.outputs) if o.meta.numel() > 0]
        if len(self.live) < len(graph.outputs):
            compiled = _live_subgraph(compiled, [compiled.outputs[k] for k in self.live])
        # outputs that update an input: the fusion says which it may write into the input itself
        live_index = {k: i for i, k in enumerate(self.live)}
        position = {id(n): j for j, n in enumerate(graph.inputs)}
        updates = {live_index[k]: position[id(n)] for k, n in (getattr(graph, "updates", None) or {}).items()
                   if k in live_index and id(n) in position and self.layouts[position[id(n)]] is None}
        self.ir = compiled.mlir(updates=updates)
        if cpu_gemm is not None:  # options={"cpu_gemm": ...}: which CPU GEMM f32/f64 products call
            if cpu_gemm not in ("runtime", "library"):
                raise ValueError(f"cpu_gemm must be 'runtime' or 'library', not {cpu_gemm!r}")
            assert self.ir.startswith("module {")
            self.ir = f'module attributes {{dyn.cpu_gemm = "{cpu_gemm}"}} {{' + self.ir[len("module {"):]
        self.out_specs = [(tuple(o.meta.shape), contiguous_strides(tuple(o.meta.shape)), o.meta.dtype)
                          for o in graph.outputs]
        # random ops: the compiled function's last input is this call's seed (graph/random.py)
        self.seeded = has_random(compiled)
        debug = os.environ.get("DYN_COMPILE_DEBUG") == "1"
        self.compiled = self._compile(keep_stages or debug,
                                      len(graph.inputs) + self.seeded + len(self.live))
        # (graph output, input) pairs whose output is written into the input where it is contiguous
        self.aliases = [(self.live[i], j) for i, j in enumerate(getattr(self.compiled, "in_place", ())) if j >= 0]
        counters = current().counters
        counters["graphs_compiled"] += 1
        counters["compile_seconds"] += self.compiled.compile_seconds
        if debug:
            dump_stages(self.compiled.stages)

    def _seed(self, device):
        """[this call's seed] for a graph with random ops, drawn from torch's generator of device; else []."""
        return [draw_seed(device)] if self.seeded else []

    def _inputs(self, inputs):
        """The buffers of a call: a strided input's first element (its layout's base), else the input
        made contiguous."""
        if not self.strided:
            return [t.contiguous() for t in inputs]
        ins = []
        for t, lay, st in zip(inputs, self.layouts, self.strides):
            if lay is None:
                ins.append(t.contiguous())
            elif tuple(t.stride()) != st:
                raise RuntimeError(f"an input's strides {tuple(t.stride())} differ from the compiled {st}")
            else:
                ins.append(t)
        return ins

    @property
    def stages(self):
        return self.compiled.stages

    def _outputs(self, device, inputs=None):
        """Tensors for every output, and the list of those the compiled function writes: fresh ones, or,
        given the call's inputs, the input itself for an output that updates it in place (self.aliases)
        where the input is contiguous (16-byte aligned on the GPU), as the compiled code reads it."""
        taken = {}
        if inputs is not None:
            for k, j in self.aliases:
                t = inputs[j]
                if t.is_contiguous() and (t.device.type == "cpu" or t.data_ptr() % 16 == 0):
                    taken[k] = t
        specs = self.out_specs
        if device == "cpu" and EMPTY_STRIDED_CPU is not None:  # 1.5 us an output where torch.empty takes 6
            outs = [taken[k] if k in taken else EMPTY_STRIDED_CPU(*specs[k]) for k in range(len(specs))] \
                if taken else [EMPTY_STRIDED_CPU(s, st, d) for s, st, d in specs]
        else:
            outs = [taken[k] if k in taken else torch.empty(specs[k][0], dtype=specs[k][2], device=device)
                    for k in range(len(specs))] if taken else \
                [torch.empty(s, dtype=d, device=device) for s, _, d in specs]
        return outs, [outs[k] for k in self.live]

    def _failed(self, inputs, error):
        """A library call failed at run time (the kernels themselves cannot): this call's outputs are
        undefined, so the graph runs with PyTorch's ops instead, with a warning the first time."""
        counters = current().counters
        counters["internal_failures"] += 1
        if not self.__dict__.get("_warned"):
            self._warned = True
            warnings.warn(f"dyn: a compiled graph failed at run time, running it eagerly: {error}", stacklevel=3)
        return self.graph(*inputs)


_CPU = torch.device("cpu")


class DynCPUKernel(_DynKernel):
    """Host code JIT-compiled by the core, run on the CPU tensors' memory."""
    device_type = "cpu"

    def _compile(self, keep_stages, num_buffers):
        return compile_native(_C.compile, self.ir, "forward", keep_stages, 3, num_buffers)

    def __call__(self, *inputs):
        outs, written = self._outputs("cpu", inputs)
        try:
            run_compiled(self.compiled, _CPU, inputs, written, self._inputs, self._seed("cpu"), not self.strided)
        except RuntimeError as e:
            return self._failed(inputs, e)
        return outs


class DynCUDAKernel(_DynKernel):
    """PTX kernels on CUDA tensors of one device: outputs come from torch's caching allocator,
    kernels go on torch's current stream, nothing synchronizes. With cuda_graphs (mode="reduce-overhead")
    the launches and library calls are recorded once as a CUDA graph and replayed (cuda_graphs.py)."""
    device_type = "cuda"

    def __init__(self, graph, keep_stages=False, example_inputs=None, cpu_gemm=None, cuda_graphs=False):
        self.target = gpu_target(next((t.device for t in example_inputs or () if t.is_cuda), graph.device))
        super().__init__(graph, keep_stages, example_inputs, cpu_gemm)
        self.replay = GraphReplay(self) if cuda_graphs else None

    def _compile(self, keep_stages, num_buffers):
        return compile_native(_C.compile_gpu, self.ir, "forward", keep_stages, num_buffers, self.target)

    def __call__(self, *inputs):
        if self.replay is not None:
            outs = self.replay(inputs)
            if outs is not None:
                return outs
        return self.launch(inputs)

    def launch(self, inputs):
        """One call through the launch plan, on fresh outputs and a fresh workspace."""
        device = inputs[0].device if inputs else _graph_device(self.graph)
        outs, written = self._outputs(device, inputs)
        try:
            run_compiled(self.compiled, device, inputs, written, self._aligned_inputs, self._seed(device),
                         not self.strided)
        except RuntimeError as e:
            return self._failed(inputs, e)
        return outs

    def _aligned_inputs(self, inputs):
        """Kernels move contiguous neighbours with 16-byte accesses: an input that starts at an unaligned
        address (a view with an offset) is copied to a fresh allocation, in its layout."""
        ins = self._inputs(inputs)
        return [t if t.data_ptr() % 16 == 0 else _aligned_copy(t, lay) for t, lay in zip(ins, self.layouts)]


def _aligned_copy(t, layout):
    """t in a fresh allocation (aligned by torch's allocator) with the same layout: a contiguous clone,
    or for a strided input its elements written into a new base, stride-0 dims once."""
    if layout is None:
        return t.clone()
    base = torch.empty(layout.base_shape, dtype=t.dtype, device=t.device)
    sizes, strides = layout.reduced
    base.as_strided(sizes, strides).copy_(t.as_strided(sizes, strides, t.storage_offset()))
    return base


def _graph_device(graph):
    """The device of a graph without tensor inputs (its constants'), with its index on CUDA."""
    device = torch.device(getattr(graph, "device", None) or "cpu")
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


def _has_empty(graph):
    """Whether a value the compiled function would compute with has no elements: an empty input, or an
    empty value an output with elements needs. Empty values that are only returned (T5's empty key/value
    caches) are made by the runner instead (_live_subgraph)."""
    if any(n.meta.numel() == 0 for n in graph.inputs):
        return True
    return any(n.meta.numel() == 0 for n in _live(o for o in graph.outputs if o.meta.numel() > 0))


def _live(outputs):
    """The nodes the given outputs need, themselves included (id -> node)."""
    live, stack = {}, list(outputs)
    while stack:
        n = stack.pop()
        if id(n) not in live:
            live[id(n)] = n
            stack.extend(n.inputs)
    return live.values()


def _live_subgraph(graph, outputs):
    """A copy of graph returning `outputs` (nodes of graph), without the nodes none of them needs."""
    live = {id(n) for n in _live(outputs)}
    g = Graph()
    g.device = graph.device
    new = {}
    for n, src in zip(graph.inputs, graph.input_sources):
        new[id(n)] = g.add_input(n.meta, src)
    for n in graph.nodes:
        if id(n) in live:
            new[id(n)] = g.add(n.op, [new[id(i)] for i in n.inputs], n.meta, **n.attrs)
    g.outputs = [new[id(o)] for o in outputs]
    return g


def _plan(graph, example_inputs):
    """(runner factory, device, None) when the dyn backend compiles the graph, else (None, device, why not)."""
    devices = {t.device for t in example_inputs}
    if len(devices) > 1:  # eager decides what that means
        return None, None, "inputs on several devices (" + ", ".join(sorted(map(str, devices))) + ")"
    device = devices.pop() if devices else _graph_device(graph)
    if _has_empty(graph):
        # nothing to compute on the empty values; the compiled calling convention cannot pass every empty
        # buffer, and a GPU launch of no threads fails
        return None, device, EMPTY
    runner = current().runners.get(device.type) or _RUNNERS.get(device.type)
    if runner is None:
        return None, device, f"no dyn runner for device {device.type}"
    return runner, device, None


EMPTY = "a tensor without elements (PyTorch's ops run it: nothing to compute)"


def fallback_reason(graph, example_inputs):
    """Why the dyn backend does not compile this graph (None: it does)."""
    return getattr(graph, "no_lowering", None) or _plan(graph, example_inputs)[2]


# what the compiler says of an op capture kept whole (graph.torch_call): it has no lowering
NO_LOWERING = "has no lowering in dyn's compiler"


def dyn_backend(graph, example_inputs, options=None):
    """The graph compiled by the C++ core for its device's runner; the graph itself (run with PyTorch ops)
    when it holds a tensor without elements or an op the compiler has no lowering for (its diagnostic is
    the reason); None (the frame runs eagerly) where dyn has no runner."""
    runner, device, why = _plan(graph, example_inputs)
    if runner is None:
        return graph if why is EMPTY else None
    keep = bool((options or {}).get("keep_stages", False))
    requires_grad = [t.requires_grad and (t.is_floating_point() or t.is_complex()) for t in example_inputs]
    if torch.is_grad_enabled() and any(requires_grad) and runner in _RUNNERS.values() and \
            carries_grad(graph, requires_grad):
        ddp = active_ddp()
        if ddp is not None and (options or {}).get("ddp_buckets", True):
            piece_options = {**(options or {}), "ddp_buckets": False}
            staged = staged_training(graph, example_inputs, ddp,
                                     lambda g, ex, layout: dyn_backend(g, ex, {**piece_options, **layout}),
                                     lambda msg: current().log("ddp", msg))
            if staged is not None:
                return staged
        return _training(graph, example_inputs, requires_grad, keep, options or {})
    try:
        if isinstance(runner, type) and issubclass(runner, DynCUDAKernel):
            return runner(graph, keep, example_inputs, None, bool((options or {}).get("cuda_graphs")))
        if isinstance(runner, type) and issubclass(runner, _DynKernel):
            return runner(graph, keep, example_inputs, (options or {}).get("cpu_gemm"))
        return runner(graph, keep)
    except RuntimeError as e:
        found = [line.split("error: ", 1)[1] for line in str(e).splitlines() if NO_LOWERING in line and
                 "error: " in line]
        if not found:
            raise
        graph.no_lowering = found[0]
        return graph


def _training(graph, example_inputs, requires_grad, keep, options, symbolic=False):
    """The graph differentiated and compiled as a forward and a backward function (dyn/autograd); the graph
    itself (PyTorch ops and their autograd) where the core cannot differentiate or lower it, the reason
    kept as the fallback's. options: memory_budget, and a DDP piece's layout hints (TrainingKernel);
    symbolic: the graph has `?` dims (a DDP piece of a symbolic graph)."""
    try:
        return TrainingKernel(graph, example_inputs, requires_grad, keep, symbolic=symbolic,
                              memory_budget=options.get("memory_budget"),
                              layout_free_outputs=options.get("layout_free_outputs", ()),
                              channels_last_inputs=options.get("channels_last_inputs", ()))
    except (DifferentiationError, RuntimeError, SymbolicTrainingError) as e:
        lines = [line.split("error: ", 1)[1] for line in str(e).splitlines() if "error: " in line]
        graph.no_lowering = lines[0] if lines else str(e).splitlines()[0]
        return graph


def eager_backend(graph, example_inputs, options=None):
    """The graph run with PyTorch ops, as one generated Python function (graph/eager.py)."""
    return python_function(graph)


_RUNNERS = {"cpu": DynCPUKernel, "cuda": DynCUDAKernel}
BACKENDS = {"dyn": dyn_backend, "eager": eager_backend}


def register_runner(device_type, factory):
    """Hook point for other devices: factory(graph, keep_stages) -> callable(*inputs) -> outputs. Kept
    in the session (a registry that changes at runtime), ahead of the built-in runners."""
    current().runners[device_type] = factory
