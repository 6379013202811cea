"""The tables capture looks handlers up in: torch functions (TORCH_FUNCS), Tensor methods by name
(METHODS) and Tensor attributes (TENSOR_ATTRS). Built once at import, never changed."""
import torch
import torch.nn.functional as F

from ..._ops_generated import HANDLERS, OPS
from ...errors import Unsupported
from ..tensor import node_requires_grad
from . import arith, compositions, factories, floatbits, indexing, matrix, random, rearrange, reductions, scatter, \
    shapes, stats, take_along, views
from .functional import F_H, NORM_FUNCS, _leaky_relu
from .losses import F_L
from .class_losses import F_CL
from .distances import F_D, TORCH_D
from .resample import F_R, TORCH_AA
from .inplace_methods import INPLACE
from .shapes import _broadcast_to_method, _permute, _transpose
from .windows import F_W, H_W, TORCH_W
from .attention import TORCH_ATTN
from .internals import TORCH as TORCH_INTERNALS
from .grid_sample import TORCH as TORCH_GRID
from .linalg import H_LA, INPLACE_LA, LINALG_LA
from . import collectives, keywords, library, recurrent

H = {**arith.H, **indexing.H, **shapes.H, **views.H, **factories.H, **H_W, **H_LA, **reductions.H, **rearrange.H,
     **take_along.H, **scatter.H, **matrix.H,
     **compositions.H, **library.H, **stats.H, **floatbits.H}

# torch.* function objects -> handler
TORCH_FUNCS = {}
for _name, _h in H.items():
    for _mod in (torch, torch.special, torch.linalg):
        _f = getattr(_mod, _name, None)
        if _f is not None and callable(_f) and not isinstance(_f, type):
            TORCH_FUNCS.setdefault(_f, _h)
for _name, _h in {**F_H, **F_W, **F_L, **F_CL, **F_D, **F_R, **scatter.F_SCATTER}.items():
    TORCH_FUNCS[getattr(F, _name)] = _h
TORCH_FUNCS.update(TORCH_W)
TORCH_FUNCS.update(TORCH_D)
# random ops (handlers/random.py)
for _name, _h in random.H.items():
    TORCH_FUNCS[getattr(torch, _name)] = _h
for _name, _h in random.F_R.items():
    TORCH_FUNCS[getattr(F, _name)] = _h
TORCH_FUNCS.update(NORM_FUNCS)
TORCH_FUNCS.update(TORCH_ATTN)
TORCH_FUNCS.update(TORCH_INTERNALS)
TORCH_FUNCS.update(TORCH_GRID)
TORCH_FUNCS.update(library.TORCH)
TORCH_FUNCS.update(recurrent.TORCH)
TORCH_FUNCS.update(collectives.TORCH)
TORCH_OPS = dict(library.TORCH_OPS)
TORCH_FUNCS.update(TORCH_AA)
for _name, _h in {**matrix.LINALG, **compositions.LINALG}.items():
    TORCH_FUNCS[getattr(torch.linalg, _name)] = _h
for _name, _h in {**compositions.FFT, **library.FFT}.items():
    TORCH_FUNCS[getattr(torch.fft, _name)] = _h
for _name, _h in {**LINALG_LA, **library.LINALG}.items():
    TORCH_FUNCS[getattr(torch.linalg, _name)] = _h
TORCH_FUNCS[torch.norm] = library.NORM
TORCH_FUNCS[torch.ops.aten.slice.Tensor] = views.AT_SLICE
for _name, _h in views.REFLECTED.items():
    TORCH_FUNCS[getattr(torch.Tensor, _name)] = _h
TORCH_FUNCS[torch.max] = H["max"]
TORCH_FUNCS[torch.min] = H["min"]
TORCH_FUNCS[torch.softmax] = H["softmax"]
TORCH_FUNCS[torch.log_softmax] = H["log_softmax"]
TORCH_FUNCS[torch.relu] = H["relu"]
TORCH_FUNCS[F.relu] = F_H["relu"]
TORCH_FUNCS[torch.rms_norm] = F_H["rms_norm"]  # what F.rms_norm calls (TorchDynamo's graphs name it)
for _name in ("sigmoid", "tanh"):
    TORCH_FUNCS[getattr(torch, _name)] = H[_name]
for _name, _h in INPLACE.items():
    _f = getattr(torch, _name, None)
    if _f is not None and callable(_f):
        TORCH_FUNCS[_f] = _h
TORCH_FUNCS[F.relu_] = INPLACE["relu_"]
TORCH_FUNCS[F.leaky_relu_] = lambda o, x, negative_slope=0.01: _leaky_relu(o, x, negative_slope, True)
TORCH_FUNCS[F.hardtanh_] = lambda o, x, min_val=-1.0, max_val=1.0: F_H["hardtanh"](o, x, min_val, max_val, True)

# public torch functions written in Python as compositions of ops dyn has handlers for (calling the functions
# they are given: triplet_margin_with_distance_loss's distance_function): traced into, as TorchDynamo does
TRACED_FUNCS = frozenset({F.multi_head_attention_forward, F.triplet_margin_with_distance_loss, torch.lu,
                          F.lp_pool1d, F.lp_pool2d, F.lp_pool3d,
                          F.fractional_max_pool2d, F.fractional_max_pool3d, F.fractional_max_pool2d_with_indices,
                          F.fractional_max_pool3d_with_indices})

# The registry's other PyTorch names of its ops (dyn/_ops_generated.py: torch.special.expit,
# torch.arcsinh, ...) and its generated handlers (ops with a signature)
_REGISTERED_METHODS = {}


def _resolve(path):
    obj = torch
    for part in path.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


for _op, _d in OPS.items():
    _h = HANDLERS.get(_d.torch_names[0]) if _d.signature else H.get(_op)
    if _h is None:
        continue
    for _name in _d.torch_names:
        _h_name = HANDLERS.get(_name, _h)
        if _name.startswith("Tensor."):
            _REGISTERED_METHODS[_name[len("Tensor."):]] = _h_name
        elif _name.startswith("torch."):
            _f = _resolve(_name)
            if _f is not None:
                TORCH_FUNCS[_f] = _h_name

# Tensor methods by name
METHODS = dict(H)
METHODS.update(_REGISTERED_METHODS)
for _n in ("relu", "sigmoid", "tanh"):
    METHODS[_n] = H[_n]
METHODS["softmax"] = lambda o, x, dim, dtype=None: o.softmax("softmax", x, dim, dtype)


def _requires_grad_(o, x, requires_grad=True):
    """x.requires_grad_(flag) where x's flag is that already: eager changes nothing (transformers' hook
    on the input embeddings under gradient checkpointing, on weights that train). Making a new autograd
    leaf, or detaching an input, is not captured."""
    if bool(requires_grad) == node_requires_grad(o.tr, x.node):
        return x
    raise Unsupported("Tensor.requires_grad_ changing the flag (a new autograd leaf, or an input's flag)")


METHODS["requires_grad_"] = _requires_grad_
METHODS["log_softmax"] = lambda o, x, dim, dtype=None: o.softmax("log_softmax", x, dim, dtype)
for _n in ("zeros", "ones", "empty", "full", "arange", "cat", "concat", "concatenate", "stack", "where", "tensor",
           "as_tensor", "scalar_tensor"):
    METHODS.pop(_n, None)
METHODS["broadcast_to"] = _broadcast_to_method
METHODS["where"] = lambda o, x, cond, other: o.where(cond, x, other)
METHODS.update(INPLACE)
METHODS.update(INPLACE_LA)
METHODS.update(rearrange.METHODS, norm=library.NORM)
METHODS.update(views.REFLECTED)
METHODS.update(factories.NEW)
METHODS.update(scatter.METHODS)
METHODS["__getitem__"] = indexing.getitem
METHODS["dist"] = TORCH_D[torch.dist]
METHODS.update(random.METHODS, bernoulli=random.H["bernoulli"])
METHODS["new_full"] = factories.new_full
METHODS.update(shapes.METHODS_ONLY)


# torch's keyword names the handlers name otherwise (keywords.py), by torch function and by method name
TORCH_KEYWORDS, METHOD_KEYWORDS = keywords.table(TORCH_FUNCS, METHODS)


def _device(o, x):
    """The device eager holds x on: the graph's, or the CPU for a tensor made there (Node.host)."""
    return torch.device("cpu") if x.node.host else o.tr.device


def _requires_grad(o, x):
    return node_requires_grad(o.tr, x.node)


TENSOR_ATTRS = {
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
    **views.ATTRS,
}


def torch_handler(fn):
    """The handler of a torch callable: TORCH_FUNCS's, or for a custom op (an OpOverloadPacket or
    OpOverload that a library registered, maybe after dyn was imported) TORCH_OPS's by its name."""
    h = TORCH_FUNCS.get(fn)
    if h is None and isinstance(fn, (torch._ops.OpOverloadPacket, torch._ops.OpOverload)):
        packet = fn if isinstance(fn, torch._ops.OpOverloadPacket) else fn._overloadpacket
        h = TORCH_OPS.get(str(packet))
    return h
