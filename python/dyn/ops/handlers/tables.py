"""The tables capture looks handlers up in: torch functions (TORCH_FUNCS), Tensor methods by name
(METHODS), Tensor attributes (TENSOR_ATTRS) and custom ops by name (TORCH_OPS). Each handler module
registers its handlers where it defines them (registry.py, which says how precedence is declared);
importing the modules runs their registrations, and the tables are built once here, never changed."""
import torch
import torch.nn.functional as F

from ..._ops_generated import HANDLERS, OPS
from . import registry
# the handler modules: imported for their registrations (their order decides nothing)
from . import arith, attention, attributes, class_losses, collectives, compositions, distances, factories, \
    floatbits, functional, grid_sample, indexing, inplace_methods, internals, keywords, library, linalg, losses, \
    matrix, random, rearrange, recurrent, reductions, resample, scatter, shapes, stats, take_along, views, \
    windows  # noqa: F401


def _resolve(path):
    obj = torch
    for part in path.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _register_generated():
    """The op registry's (dyn/_ops_generated.py) other PyTorch names of its ops (torch.special.expit,
    torch.arcsinh, Tensor.arcsinh, ...): an op with a signature maps them to its generated handlers
    (HANDLERS), one without to the handler registered under the op's name."""
    names = registry.names()
    for op, d in OPS.items():
        h = HANDLERS.get(d.torch_names[0]) if d.signature else names.get(op)
        if h is None:
            continue
        for name in d.torch_names:
            h_name = HANDLERS.get(name, h)
            if name.startswith("Tensor."):
                registry.method(name[len("Tensor."):])(h_name)
            elif name.startswith("torch."):
                f = _resolve(name)
                if f is not None:
                    registry.torch_function(f)(h_name)


_register_generated()
_TABLES = registry.build()
TORCH_FUNCS = _TABLES[registry.TORCH_FUNCS]  # torch callables -> handler
METHODS = _TABLES[registry.METHODS]          # Tensor method names -> handler
TENSOR_ATTRS = _TABLES[registry.TENSOR_ATTRS]
TORCH_OPS = _TABLES[registry.TORCH_OPS]

# public torch functions written in Python as compositions of ops dyn has handlers for (calling the functions
# they are given: triplet_margin_with_distance_loss's distance_function): traced into, as TorchDynamo does
TRACED_FUNCS = frozenset({F.multi_head_attention_forward, F.triplet_margin_with_distance_loss, torch.lu,
                          F.lp_pool1d, F.lp_pool2d, F.lp_pool3d,
                          F.fractional_max_pool2d, F.fractional_max_pool3d, F.fractional_max_pool2d_with_indices,
                          F.fractional_max_pool3d_with_indices})

# torch's keyword names the handlers name otherwise (keywords.py), by torch function and by method name
TORCH_KEYWORDS, METHOD_KEYWORDS = keywords.table(TORCH_FUNCS, METHODS)


def torch_handler(fn):
    """The handler of a torch callable: TORCH_FUNCS's, or for a custom op (an OpOverloadPacket or
    OpOverload that a library registered, maybe after dyn was imported) TORCH_OPS's by its name."""
    h = TORCH_FUNCS.get(fn)
    if h is None and isinstance(fn, (torch._ops.OpOverloadPacket, torch._ops.OpOverload)):
        packet = fn if isinstance(fn, torch._ops.OpOverloadPacket) else fn._overloadpacket
        h = TORCH_OPS.get(str(packet))
    return h
