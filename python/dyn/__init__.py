"""dyn: capture PyTorch programs from running bytecode into the graph dialect and compile them.

    compiled = dyn.compile(fn)            # or @dyn.compile / @dyn.compile(fullgraph=True)
    compiled = dyn.compile(module)        # shares parameters and buffers with `module`
"""
from .errors import Unsupported
from .graph import Graph
from .frontend import (ExplainOutput, OptimizedModule, compile, explain, list_backends, reset, _stats,
                       last_graphs)
from . import backends as _backends

try:
    from . import _C
except ImportError:
    _C = None

__all__ = ["compile", "reset", "list_backends", "Unsupported", "Graph", "explain", "ExplainOutput",
           "OptimizedModule"]
