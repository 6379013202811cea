"""Capture handlers of torch functions, Tensor methods and attributes, by op family. Each module
registers its handlers (registry.py); tables.py maps torch's callables and names to them."""
from .common import inplace, metas
from .generic import generic_call, generic_method
from .indexing import getitem, setitem
from .keywords import rename
from .tables import METHOD_KEYWORDS, METHODS, TENSOR_ATTRS, TORCH_FUNCS, TORCH_KEYWORDS, TRACED_FUNCS, torch_handler

__all__ = ["METHODS", "TENSOR_ATTRS", "TORCH_FUNCS", "TRACED_FUNCS", "getitem", "setitem", "inplace", "metas",
           "generic_call", "generic_method", "rename", "METHOD_KEYWORDS", "TORCH_KEYWORDS", "torch_handler"]
