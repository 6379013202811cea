"""Capture handlers of torch functions, Tensor methods and attributes, by op family; tables.py maps
torch's callables and names to them."""
from .common import inplace, metas
from .generic import generic_call, generic_method
from .indexing import getitem, setitem
from .tables import METHODS, TENSOR_ATTRS, TORCH_FUNCS, TRACED_FUNCS

__all__ = ["METHODS", "TENSOR_ATTRS", "TORCH_FUNCS", "TRACED_FUNCS", "getitem", "setitem", "inplace", "metas",
           "generic_call", "generic_method"]
