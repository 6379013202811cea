"""The captured graph (graph.py), its graph-dialect MLIR text (mlir.py) and its eager interpreter (eager.py)."""
from .graph import Graph, Node

__all__ = ["Graph", "Node"]
