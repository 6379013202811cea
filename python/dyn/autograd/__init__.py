"""Compiled training: a captured graph whose inputs require grad is differentiated by dyn's core
(dyn-graph-autodiff), split into a forward and a backward function (dyn-graph-partition), and both are
compiled; one torch.autograd.Function runs them (docs/autograd.md)."""
from .function import DifferentiationError, TrainingKernel

__all__ = ["DifferentiationError", "TrainingKernel"]
