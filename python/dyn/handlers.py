"""Tables from torch functions / Tensor method names to capture handlers. A handler is called as
handler(ops, *args, **kwargs) with TensorVars for tensors and returns a TensorVar or constant."""
import math

import torch
import torch.nn.functional as F

from .errors import Unsupported
from .graph import UNARY
from .tensor_ops import TensorVar, _norm_dim, _norm_dims

H = {}  # name -> handler


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, torch.Size)):
        return tuple(shape[0])
    return tuple(shape)


for _op in UNARY:
    H[_op] = (lambda op: lambda o, x, *, out=None: o.unary(op, x))(_op)
H["negative"] = H["neg"]
H["absolute"] = H["abs"]


def _binary(op):
    def h(o, a, b, *, out=None):
        return o.binary(op, a, b)
    return h


for _op in "mul pow maximum minimum remainder eq ne lt le gt ge logical_and logical_or".split():
    H[_op] = _binary(_op)
H.update(multiply=H["mul"], greater=H["gt"], greater_equal=H["ge"], less=H["lt"], less_equal=H["le"],
         not_equal=H["ne"], max_elementwise=H["maximum"])


def _add(op):
    def h(o, a, b, *, alpha=1, out=None):
        if alpha != 1:
            b = o.binary("mul", b, alpha)
        return o.binary(op, a, b)
    return h


H["add"] = _add("add")
H["sub"] = H["subtract"] = _add("sub")


def _div(o, a, b, *, rounding_mode=None, out=None):
    r = o.binary("div", a, b)
    if rounding_mode is None:
        return r
    if rounding_mode == "floor" and r.meta.dtype.is_floating_point:
        return o.unary("floor", r)
    raise Unsupported(f"div rounding_mode={rounding_mode!r}")


H["div"] = H["divide"] = H["true_divide"] = _div
H["square"] = lambda o, x: o.binary("mul", x, x)


def _reduce(op):
    def h(o, x, dim=None, keepdim=False, *, dtype=None, out=None):
        if op in ("amax", "amin") and isinstance(dim, (tuple, list)) and len(dim) == 0:
            dim = None
        return o.reduce(op, x, dim, keepdim, dtype)
    return h


for _op in "sum mean amax amin prod".split():
    H[_op] = _reduce(_op)


class ValuesIndices:
    """Result of max/min(dim): .values (or [0]) is captured; the indices are not (no argmax op)."""

    def __init__(self, values, name):
        self.values, self._name = values, name

    @property
    def indices(self):
        raise Unsupported(f"indices of {self._name}(dim)")

    def __getitem__(self, i):
        if i == 0:
            return self.values
        raise Unsupported(f"indices of {self._name}(dim)")

    def __iter__(self):
        raise Unsupported(f"unpacking {self._name}(dim) (indices)")

    def __len__(self):
        return 2


def _maxmin(red, elem):
    def h(o, x, dim=None, keepdim=False, *, out=None):
        if isinstance(dim, TensorVar):
            return o.binary(elem, x, dim)
        if dim is None:
            return o.reduce(red, x, None, False)
        return ValuesIndices(o.reduce(red, x, dim, keepdim), red[1:])
    return h


H["max"] = _maxmin("amax", "maximum")
H["min"] = _maxmin("amin", "minimum")


def _var(o, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    return o.var_(x, dim, unbiased, keepdim, correction)


H["var"] = _var
H["std"] = lambda o, *a, **k: o.unary("sqrt", _var(o, *a, **k))
H["softmax"] = lambda o, x, dim, dtype=None: o.softmax("softmax", x, dim, dtype)
H["log_softmax"] = lambda o, x, dim, dtype=None: o.softmax("log_softmax", x, dim, dtype)
H["matmul"] = H["mm"] = H["bmm"] = lambda o, a, b, *, out=None: o.matmul(a, b)
H["where"] = lambda o, c, a, b: o.where(c, a, b)


def _clamp(o, x, min=None, max=None):
    return o.clamp(x, min, max)


H["clamp"] = H["clip"] = _clamp
H["clamp_min"] = lambda o, x, m: o.clamp(x, m, None)
H["clamp_max"] = lambda o, x, m: o.clamp(x, None, m)
H["masked_fill"] = lambda o, x, mask, value: o.where(mask, value, x)
H["log2"] = lambda o, x: o.binary("div", o.unary("log", x), math.log(2))
H["log10"] = lambda o, x: o.binary("div", o.unary("log", x), math.log(10))


def _reshape(o, x, *shape):
    return o.reshape(x, _shape_args(shape))


def _view(o, x, *shape):
    if len(shape) == 1 and isinstance(shape[0], torch.dtype):
        raise Unsupported("view(dtype)")
    return o.reshape(x, _shape_args(shape))


H["reshape"] = _reshape
H["view"] = _view
H["view_as"] = H["reshape_as"] = lambda o, x, other: o.reshape(x, tuple(other.meta.shape))
H["flatten"] = lambda o, x, start_dim=0, end_dim=-1: o.reshape(x, x.meta.flatten(start_dim, end_dim).shape)
H["unsqueeze"] = lambda o, x, dim: o.reshape(x, x.meta.unsqueeze(dim).shape)


def _squeeze(o, x, dim=None):
    return o.reshape(x, (x.meta.squeeze() if dim is None else x.meta.squeeze(dim)).shape)


H["squeeze"] = _squeeze
H["permute"] = lambda o, x, *dims: o.permute(x, _shape_args(dims))
H["transpose"] = H["swapaxes"] = H["swapdims"] = lambda o, x, a, b: o.transpose(x, a, b)
H["t"] = lambda o, x: o.transpose(x, 0, 1)
H["expand"] = lambda o, x, *sizes: o.expand(x, _shape_args(sizes))
H["expand_as"] = lambda o, x, other: o.expand(x, tuple(other.meta.shape))
H["broadcast_to"] = lambda o, x, shape: o.expand(x, tuple(shape))
H["contiguous"] = lambda o, x, memory_format=None: x
H["detach"] = lambda o, x: x
H["clone"] = lambda o, x, memory_format=None: TensorVar(x.tracer, x.node, fresh=True)


def _to(o, x, *args, **kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise Unsupported(f"to() with {sorted(kwargs)}")
    for a in args:
        if isinstance(a, torch.dtype):
            dtype = a
        elif isinstance(a, (str, torch.device)):
            device = a
        elif isinstance(a, TensorVar):
            dtype = a.meta.dtype
        elif a is not None and not isinstance(a, bool):
            raise Unsupported(f"to({type(a).__name__})")
    if device is not None and torch.device(device).type != o.tr.device.type:
        raise Unsupported(f"device change to {device}")
    return o.convert(x, dtype) if dtype is not None else x


H["to"] = _to
for _n, _dt in dict(float=torch.float32, double=torch.float64, half=torch.float16, bfloat16=torch.bfloat16,
                    int=torch.int32, long=torch.int64, bool=torch.bool).items():
    H[_n] = (lambda dt: lambda o, x, memory_format=None: o.convert(x, dt))(_dt)
H["type_as"] = lambda o, x, other: o.convert(x, other.meta.dtype)


def _type(o, x, dtype=None, non_blocking=False):
    if not isinstance(dtype, torch.dtype):
        raise Unsupported("Tensor.type() without a dtype")
    return o.convert(x, dtype)


H["type"] = _type
# metadata (constants, guarded by the shape/dtype guards)
H["size"] = lambda o, x, dim=None: x.meta.shape if dim is None else x.meta.shape[dim]
H["dim"] = H["ndimension"] = lambda o, x: x.meta.dim()
H["numel"] = H["nelement"] = lambda o, x: x.meta.numel()
H["element_size"] = lambda o, x: x.meta.element_size()
H["is_floating_point"] = lambda o, x: x.meta.is_floating_point()
H["is_complex"] = lambda o, x: False
H["is_contiguous"] = lambda o, x, memory_format=None: True
H["cat"] = H["concat"] = H["concatenate"] = lambda o, xs, dim=0, *, out=None: o.cat(xs, dim)
H["stack"] = lambda o, xs, dim=0, *, out=None: o.stack(xs, dim)


def _chunk(o, x, chunks, dim=0):
    d = _norm_dim(dim, x.meta.dim())
    n = x.meta.shape[d]
    step = -(-n // chunks) if chunks else n
    return tuple(o.slice(x, d, s, min(s + step, n), 1) for s in range(0, n, max(step, 1)))


def _split(o, x, split_size, dim=0):
    d = _norm_dim(dim, x.meta.dim())
    n = x.meta.shape[d]
    if isinstance(split_size, int):
        sizes = [min(split_size, n - s) for s in range(0, n, split_size)]
    else:
        sizes = list(split_size)
    out, s = [], 0
    for k in sizes:
        out.append(o.slice(x, d, s, s + k, 1))
        s += k
    return tuple(out)


H["chunk"] = _chunk
H["split"] = _split


def _like(value):
    def h(o, x, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None, pin_memory=None):
        return o.full(x.meta.shape, value, dtype or x.meta.dtype)
    return h


H["zeros_like"] = H["empty_like"] = _like(0)
H["ones_like"] = _like(1)
H["full_like"] = lambda o, x, fill_value, *, dtype=None, **k: o.full(x.meta.shape, fill_value, dtype or x.meta.dtype)


def _factory(value):
    def h(o, *size, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=None, out=None):
        if device is not None and torch.device(device).type != o.tr.device.type:
            raise Unsupported("factory on another device")
        return o.full(_shape_args(size), value, dtype or torch.get_default_dtype())
    return h


H["zeros"] = H["empty"] = _factory(0)
H["ones"] = _factory(1)


def _full(o, size, fill_value, *, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=None):
    if dtype is None:
        dtype = torch.bool if isinstance(fill_value, bool) else torch.int64 if isinstance(fill_value, int) \
            else torch.get_default_dtype()
    return o.full(tuple(size), fill_value, dtype)


H["full"] = _full

# torch.nn.functional


def _inplace_ok(inplace):
    if inplace:
        raise Unsupported("in-place functional op")


F_H = {}
F_H["relu"] = lambda o, x, inplace=False: (_inplace_ok(inplace), o.unary("relu", x))[1]
F_H["gelu"] = lambda o, x, approximate="none": o.gelu(x, approximate)
F_H["silu"] = lambda o, x, inplace=False: (_inplace_ok(inplace), o.silu(x))[1]
F_H["sigmoid"] = lambda o, x: o.unary("sigmoid", x)
F_H["tanh"] = lambda o, x: o.unary("tanh", x)
F_H["softmax"] = lambda o, x, dim=None, _stacklevel=3, dtype=None: o.softmax("softmax", x, dim, dtype)
F_H["log_softmax"] = lambda o, x, dim=None, _stacklevel=3, dtype=None: o.softmax("log_softmax", x, dim, dtype)
F_H["linear"] = lambda o, x, w, b=None: o.linear(x, w, b)
F_H["layer_norm"] = lambda o, x, shape, weight=None, bias=None, eps=1e-5: o.layer_norm(x, shape, weight, bias, eps)
F_H["rms_norm"] = lambda o, x, shape, weight=None, eps=None: o.rms_norm(x, shape, weight, eps)


def _dropout(o, x, p=0.5, training=True, inplace=False):
    if training and p > 0:
        raise Unsupported("dropout in training mode (random numbers)")
    return x


F_H["dropout"] = _dropout


def _leaky_relu(o, x, negative_slope=0.01, inplace=False):
    _inplace_ok(inplace)
    return o.where(o.binary("gt", x, 0), x, o.binary("mul", x, negative_slope))


F_H["leaky_relu"] = _leaky_relu
F_H["hardtanh"] = lambda o, x, min_val=-1.0, max_val=1.0, inplace=False: o.clamp(x, min_val, max_val)
F_H["relu6"] = lambda o, x, inplace=False: o.clamp(x, 0.0, 6.0)


def _normalize(o, x, p=2.0, dim=1, eps=1e-12, out=None):
    if p != 2:
        raise Unsupported("normalize with p != 2")
    n = o.unary("sqrt", o.reduce("sum", o.binary("mul", x, x), dim, True))
    return o.binary("div", x, o.clamp(n, eps, None))


F_H["normalize"] = _normalize

# torch.* function objects -> handler
TORCH_FUNCS = {}
for _name, _h in H.items():
    for _mod in (torch, torch.special, torch.linalg):
        _f = getattr(_mod, _name, None)
        if _f is not None and callable(_f) and not isinstance(_f, type):
            TORCH_FUNCS.setdefault(_f, _h)
for _name, _h in F_H.items():
    TORCH_FUNCS[getattr(F, _name)] = _h
TORCH_FUNCS[torch.max] = H["max"]
TORCH_FUNCS[torch.min] = H["min"]
TORCH_FUNCS[torch.softmax] = H["softmax"]
TORCH_FUNCS[torch.log_softmax] = H["log_softmax"]
TORCH_FUNCS[torch.relu] = H["relu"]
TORCH_FUNCS[F.relu] = F_H["relu"]
for _name in ("sigmoid", "tanh"):
    TORCH_FUNCS[getattr(torch, _name)] = H[_name]

# Tensor methods by name
METHODS = dict(H)
for _n in ("relu", "sigmoid", "tanh"):
    METHODS[_n] = H[_n]
METHODS["softmax"] = lambda o, x, dim, dtype=None: o.softmax("softmax", x, dim, dtype)
METHODS["log_softmax"] = lambda o, x, dim, dtype=None: o.softmax("log_softmax", x, dim, dtype)
for _n in ("zeros", "ones", "empty", "full", "cat", "concat", "concatenate", "stack", "where"):
    METHODS.pop(_n, None)
METHODS["where"] = lambda o, x, cond, other: o.where(cond, x, other)
METHODS["new_zeros"] = lambda o, x, *size, dtype=None, **k: o.full(_shape_args(size), 0, dtype or x.meta.dtype)
METHODS["new_ones"] = lambda o, x, *size, dtype=None, **k: o.full(_shape_args(size), 1, dtype or x.meta.dtype)
METHODS["new_full"] = lambda o, x, size, fill_value, dtype=None, **k: o.full(tuple(size), fill_value,
                                                                             dtype or x.meta.dtype)

def _requires_grad(o, x):
    tr = o.tr
    if x.node.op == "input":
        return bool(tr.input_tensors[x.node.index].requires_grad)
    # computed: an over-approximation (graph-mode and grad-requiring inputs are guarded)
    return torch.is_grad_enabled() and any(t.requires_grad for t in tr.input_tensors)


TENSOR_ATTRS = {
    "shape": lambda o, x: x.meta.shape,
    "ndim": lambda o, x: x.meta.dim(),
    "dtype": lambda o, x: x.meta.dtype,
    "device": lambda o, x: o.tr.device,
    "is_cuda": lambda o, x: o.tr.device.type == "cuda",
    "is_cpu": lambda o, x: o.tr.device.type == "cpu",
    "requires_grad": lambda o, x: _requires_grad(o, x),
    "layout": lambda o, x: torch.strided,
    "T": lambda o, x: o.permute(x, list(reversed(range(x.meta.dim())))),
    "mT": lambda o, x: o.transpose(x, -2, -1),
    "is_sparse": lambda o, x: False,
    "is_quantized": lambda o, x: False,
    "is_meta": lambda o, x: False,
}
