"""dyn: capture PyTorch programs from running bytecode into the graph dialect and compile them.

    compiled = dyn.compile(fn)            # or @dyn.compile / @dyn.compile(fullgraph=True)
    compiled = dyn.compile(module)        # shares parameters and buffers with `module`
    torch.compile(model, backend="dyn")   # TorchDynamo captures, dyn compiles (dyn/fx)
"""
from .api import (ExplainOutput, ExportedGraph, OptimizedModule, _stats, compile, explain, export, last_graphs,
                  list_backends, reset, run, stats)
from .dynamic.marks import mark_dynamic
from .errors import Unsupported
from .graph import Graph
from .native import C as _C
from .fx.registration import register as _register_torch_compile_backend

_register_torch_compile_backend()  # torch.compile(model, backend="dyn")

__all__ = ["compile", "reset", "list_backends", "Unsupported", "Graph", "explain", "ExplainOutput",
           "export", "ExportedGraph", "run", "OptimizedModule", "stats", "mark_dynamic"]
