"""Captured tensor ops: symbolic tensors (tensor.py), the op builders that add graph nodes (core.py and
its families) and the handlers of torch functions and Tensor methods (handlers/)."""
from .core import Ops
from .handlers import METHODS, TENSOR_ATTRS, TORCH_FUNCS
from .tensor import TensorVar

__all__ = ["Ops", "TensorVar", "METHODS", "TENSOR_ATTRS", "TORCH_FUNCS"]
