"""dyn: capture PyTorch programs from running bytecode into the graph dialect and compile them.

    compiled = dyn.compile(fn)            # or @dyn.compile / @dyn.compile(fullgraph=True)
    compiled = dyn.compile(module)        # shares parameters and buffers with `module`
"""
from .errors import Unsupported
from .graph import Graph
from .frontend import (ExplainOutput, ExportedGraph, OptimizedModule, compile, explain, export,
                       list_backends, reset, run, _stats, last_graphs)
from . import backends as _backends

try:
    from . import _C
except ImportError:
    _C = None

__all__ = ["compile", "reset", "list_backends", "Unsupported", "Graph", "explain", "ExplainOutput",
           "export", "ExportedGraph", "run", "OptimizedModule"]
