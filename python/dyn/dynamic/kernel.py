"""A graph with `?` dims compiled once by the core and run at any size: each call sizes the outputs from the
inputs that carry the graph's symbols (generated Python), and passes the compiled function the runtime
size of every dynamic buffer dim it asks for (its `buffer_sizes`)."""
import os

import torch

from ..launch import EMPTY_STRIDED_CPU, compile_native, contiguous_strides, dump_stages, gpu_target, run_compiled
from ..native import C as _C
from ..session import current
from .symbolic import size_expr, size_function, symbol_positions


class DynamicShapeError(Exception):
    """A graph the dynamic kernel cannot take (the capture then specializes the sizes instead)."""


class DynamicKernel:
    """The compiled function of a graph with symbolic sizes, on the CPU or on CUDA (the graph's device):
    callable(*inputs) -> outputs, like the static kernels (backends._DynKernel). On CUDA the launch plan
    evaluates its geometry, size operands, temporaries and library-call sizes from the buffer sizes passed
    after the buffers (docs/gpu.md); it is never recorded as a CUDA graph (a graph holds one size)."""

    def __init__(self, graph, keep_stages=False, example_inputs=None):
        if any(n.meta.dtype.is_complex for n in graph.outputs):
            raise DynamicShapeError("complex outputs")
        at = symbol_positions(graph.inputs)
        exprs = []
        for o in graph.outputs:
            row = []
            for size in o.meta.shape:
                e = size_expr(size)
                missing = e.free_symbols - set(at)
                if missing:
                    raise DynamicShapeError(f"an output size depends on {sorted(map(str, missing))}, which no "
                                            "graph input carries")
                row.append(e)
            exprs.append(tuple(row))
        self.graph = graph
        self.sizes = size_function(exprs, at)
        self.dtypes = [o.meta.dtype for o in graph.outputs]
        self.device = _device_of(graph, example_inputs)
        self.device_type = self.device.type
        self.ir = graph.mlir()
        debug = os.environ.get("DYN_COMPILE_DEBUG") == "1"
        buffers = len(graph.inputs) + len(graph.outputs)
        if self.device_type == "cpu":
            self.compiled = compile_native(_C.compile, self.ir, "forward", keep_stages or debug, 3, buffers)
        elif self.device_type == "cuda":
            self.compiled = compile_native(_C.compile_gpu, self.ir, "forward", keep_stages or debug, buffers,
                                           gpu_target(self.device))
        else:
            raise DynamicShapeError(f"dynamic dims on {self.device_type}")
        pairs = list(self.compiled.buffer_sizes)
        self.buffer_dims = list(zip(pairs[0::2], pairs[1::2]))
        counters = current().counters
        counters["graphs_compiled"] += 1
        counters["dynamic_graphs_compiled"] += 1
        counters["compile_seconds"] += self.compiled.compile_seconds
        if debug:
            dump_stages(self.compiled.stages)

    @property
    def stages(self):
        return self.compiled.stages

    def __call__(self, *inputs):
        shapes = self.sizes(inputs)
        if self.device_type == "cpu" and EMPTY_STRIDED_CPU is not None:  # torch's allocation without argument
            outs = [EMPTY_STRIDED_CPU(s, contiguous_strides(s), dt) for s, dt in zip(shapes, self.dtypes)]  # parsing
        else:
            outs = [torch.empty(s, dtype=dt, device=self.device) for s, dt in zip(shapes, self.dtypes)]
        buffers = inputs + tuple(outs)
        sizes = [buffers[b].shape[d] for b, d in self.buffer_dims]
        run_compiled(self.compiled, self.device, inputs, outs, sizes=sizes)
        return outs


def _device_of(graph, example_inputs):
    """The device the graph runs on: its tensor inputs' (CUDA where one is there), else the graph's."""
    for t in example_inputs or ():
        if isinstance(t, torch.Tensor) and t.device.type != "cpu":
            return t.device
    device = torch.device(getattr(graph, "device", None) or "cpu")
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device
