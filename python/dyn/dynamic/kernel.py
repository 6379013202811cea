"""A graph with `?` dims compiled once by the core and run at any size: each call sizes the outputs from the
inputs that carry the graph's symbols (generated Python), and passes the compiled function the runtime
size of every dynamic buffer dim it asks for (its `buffer_sizes`)."""
import os

import torch

from ..launch import EMPTY_STRIDED_CPU, contiguous_strides, dump_stages
from ..native import C as _C
from ..session import current
from .symbolic import size_expr, size_function, symbol_positions


class DynamicShapeError(Exception):
    """A graph the dynamic kernel cannot take (the capture then specializes the sizes instead)."""


class DynamicCPUKernel:
    """The CPU function of a graph with symbolic sizes: callable(*inputs) -> outputs, like the static
    kernels (backends._DynKernel)."""
    device_type = "cpu"

    def __init__(self, graph, keep_stages=False):
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
        self.ir = graph.mlir()
        debug = os.environ.get("DYN_COMPILE_DEBUG") == "1"
        self.compiled = _C.compile(self.ir, "forward", keep_stages or debug, 3,
                                   len(graph.inputs) + len(graph.outputs))
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
        ins = [t.contiguous() for t in inputs]
        if EMPTY_STRIDED_CPU is not None:  # torch's allocation without argument parsing (1.5 us, not 6)
            outs = [EMPTY_STRIDED_CPU(s, contiguous_strides(s), dt) for s, dt in zip(self.sizes(ins), self.dtypes)]
        else:
            outs = [torch.empty(s, dtype=dt) for s, dt in zip(self.sizes(ins), self.dtypes)]
        buffers = ins + outs
        self.compiled.run(ins, outs + [buffers[b].shape[d] for b, d in self.buffer_dims])
        return outs
