"""Handlers of Tensor attributes (x.shape, x.dtype, x.device, x.T, ...) and of Tensor.requires_grad_."""
import torch

from ...errors import Unsupported
from ..tensor import node_requires_grad
from .registry import method, tensor_attr
from .shapes import _permute, _transpose


def _device(o, x):
    """The device eager holds x on: the graph's, or the CPU for a tensor made there (Node.host)."""
    return torch.device("cpu") if x.node.host else o.tr.device


def _requires_grad(o, x):
    return node_requires_grad(o.tr, x.node)


@method("requires_grad_")
def _requires_grad_(o, x, requires_grad=True):
    """x.requires_grad_(flag) where x's flag is that already: eager changes nothing (transformers' hook
    on the input embeddings under gradient checkpointing, on weights that train). Making a new autograd
    leaf, or detaching an input, is not captured."""
    if bool(requires_grad) == node_requires_grad(o.tr, x.node):
        return x
    raise Unsupported("Tensor.requires_grad_ changing the flag (a new autograd leaf, or an input's flag)")


tensor_attr.all({
    "shape": lambda o, x: x.meta.shape,
    "ndim": lambda o, x: x.meta.dim(),
    "dtype": lambda o, x: x.meta.dtype,
    "device": lambda o, x: _device(o, x),
    "is_cuda": lambda o, x: _device(o, x).type == "cuda",
    "is_cpu": lambda o, x: _device(o, x).type == "cpu",
    "requires_grad": lambda o, x: _requires_grad(o, x),
    "layout": lambda o, x: torch.strided,
    "T": lambda o, x: _permute(o, x, list(reversed(range(x.meta.dim())))),
    "mT": lambda o, x: _transpose(o, x, -2, -1),
    "is_sparse": lambda o, x: False,
    "is_quantized": lambda o, x: False,
    "is_meta": lambda o, x: False,
    "is_nested": lambda o, x: False,
    "is_mkldnn": lambda o, x: False,
    "is_sparse_csr": lambda o, x: False,
    "is_mps": lambda o, x: o.tr.device.type == "mps",
    "is_xpu": lambda o, x: o.tr.device.type == "xpu",
    "itemsize": lambda o, x: x.meta.element_size(),
    "nbytes": lambda o, x: x.meta.numel() * x.meta.element_size(),
})
