"""Handlers of views and shape ops, dtype conversions, metadata queries, cat/stack and split."""
import torch

from ...errors import Unsupported
from ..tensor import TensorVar, _norm_dim
from .common import _check_device, _out, _shape_args, on_host
from .registry import method, torch_name


def _resolved(o, x, shape):
    o.check(x)
    return tuple(x.meta.reshape(shape).shape)


@torch_name("reshape")
def _reshape(o, x, *shape):
    return o.view_op(x, ("reshape", _resolved(o, x, _shape_args(shape))))


@torch_name("view")
def _view(o, x, *shape):
    if len(shape) == 1 and isinstance(shape[0], torch.dtype):
        raise Unsupported("view(dtype)")
    return o.view_op(x, ("view", _resolved(o, x, _shape_args(shape))))


def _permute(o, x, dims):
    o.check(x)
    dims = [_norm_dim(d, x.meta.dim()) for d in dims]
    if sorted(dims) != list(range(x.meta.dim())):
        raise Unsupported(f"permute with dims {dims}")
    return o.view_op(x, ("permute", dims))


@torch_name("transpose", "swapaxes", "swapdims")
def _transpose(o, x, a, b):
    o.check(x)
    nd = x.meta.dim()
    p = list(range(nd))
    a, b = _norm_dim(a, nd), _norm_dim(b, nd)
    if nd:
        p[a], p[b] = p[b], p[a]
    return _permute(o, x, p)


@torch_name("t")
def _t(o, x):
    o.check(x)
    if x.meta.dim() > 2:
        raise Unsupported("t() of a tensor with more than 2 dims")
    return _permute(o, x, list(reversed(range(x.meta.dim()))))


def _expand(o, x, shape):
    o.check(x)
    return o.view_op(x, ("expand", tuple(x.meta.expand(tuple(shape)).shape)))


def _dim_index(nd, d, idx):
    return (slice(None),) * d + (idx,)


@torch_name("narrow")
def _narrow(o, x, dim, start, length):
    o.check(x)
    d = _norm_dim(dim, x.meta.dim())
    n = x.meta.shape[d]
    if isinstance(start, TensorVar):
        raise Unsupported("narrow with a tensor start")
    if start < 0:
        start += n
    if not (0 <= start <= n and 0 <= length and start + length <= n):
        raise Unsupported("narrow out of range")
    return o.view_op(x, ("getitem", _dim_index(x.meta.dim(), d, slice(start, start + length))))


@torch_name("select")
def _select(o, x, dim, index):
    o.check(x)
    d = _norm_dim(dim, x.meta.dim())
    if x.meta.dim() == 0:
        raise Unsupported("select on a 0-d tensor")
    return o.view_op(x, ("getitem", _dim_index(x.meta.dim(), d, int(index))))


@torch_name("unbind")
def _unbind(o, x, dim=0):
    o.check(x)
    d = _norm_dim(dim, x.meta.dim())
    return tuple(_select(o, x, d, i) for i in range(x.meta.shape[d]))


torch_name("view_as")(lambda o, x, other: _view(o, x, tuple(other.meta.shape)))
torch_name("reshape_as")(lambda o, x, other: _reshape(o, x, tuple(other.meta.shape)))


@torch_name("flatten")
def _flatten(o, x, start_dim=0, end_dim=-1):
    o.check(x)
    shape = tuple(x.meta.flatten(start_dim, end_dim).shape)  # raises where eager raises
    if x.meta.dim() and _norm_dim(start_dim, x.meta.dim()) == _norm_dim(end_dim, x.meta.dim()):
        return x  # eager returns x itself
    return _reshape(o, x, shape)


torch_name("unsqueeze")(lambda o, x, dim: _view(o, x, tuple(x.meta.unsqueeze(dim).shape)))


@torch_name("squeeze")
def _squeeze(o, x, dim=None):
    o.check(x)
    return _view(o, x, tuple((x.meta.squeeze() if dim is None else x.meta.squeeze(dim)).shape))


torch_name("permute")(lambda o, x, *dims: _permute(o, x, _shape_args(dims)))


def _sizes(sizes, size, what):
    """Sizes given as varargs (x.expand(3, 4)), one sequence (x.expand((3, 4))) or size=."""
    if size is not None:
        if sizes:
            raise Unsupported(f"{what} with sizes given twice")
        sizes = (size,)
    shape = _shape_args(sizes)
    if not all(isinstance(d, (int, torch.SymInt)) and not isinstance(d, bool) for d in shape):
        raise Unsupported(f"{what} with sizes that are not ints")
    return shape


torch_name("expand")(lambda o, x, *sizes, size=None, implicit=False: _expand(o, x, _sizes(sizes, size, "expand")))
torch_name("expand_as")(lambda o, x, other: _expand(o, x, tuple(other.meta.shape)))
torch_name("broadcast_to", methods=False)(lambda o, x, size: _expand(o, x, _sizes((), size, "broadcast_to")))


@method("broadcast_to")
def _broadcast_to_method(o, x, *sizes, size=None):
    """Tensor.broadcast_to, which also takes the sizes as varargs (torch.broadcast_to does not)."""
    return _expand(o, x, _sizes(sizes, size, "broadcast_to"))


@torch_name("unflatten")
def _unflatten(o, x, dim, sizes):
    o.check(x)
    if not isinstance(sizes, (tuple, list, torch.Size)) or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in sizes):
        raise Unsupported("unflatten with sizes that are not a sequence of ints")
    try:
        shape = tuple(x.meta.unflatten(dim, tuple(sizes)).shape)
    except (RuntimeError, IndexError, TypeError) as e:
        raise Unsupported(f"unflatten: {e}")  # eager raises
    return _view(o, x, shape)  # splitting one dim is a view whatever the layout


def _memory_format(fmt, what):
    """The memory formats dyn lays out: contiguous (its own results), channels_last(_3d) (Ops.laid_out)."""
    if fmt not in (None, torch.preserve_format, torch.contiguous_format, torch.channels_last,
                   torch.channels_last_3d):
        raise Unsupported(f"{what} with memory_format={fmt}")
    return fmt


def _in_layout(o, x, fmt, copy):
    """x as eager's x.to(memory_format=fmt, copy=copy) gives it: x itself where it is laid out so already
    and no copy is asked; else a new tensor in that layout."""
    if fmt in (torch.channels_last, torch.channels_last_3d):
        if not copy and o.in_format(x, fmt):
            return x
        return o.laid_out(x, fmt)
    return o.fresh_copy(x) if copy else x


@torch_name("contiguous")
def _contiguous(o, x, memory_format=torch.contiguous_format):
    fmt = _memory_format(memory_format, "contiguous()")
    if fmt in (torch.channels_last, torch.channels_last_3d):
        return _in_layout(o, x, fmt, False)
    return o.contiguous(x)


@torch_name("clone")
def _clone(o, x, *, memory_format=None):
    fmt = _memory_format(memory_format, "clone()")
    if fmt in (torch.channels_last, torch.channels_last_3d):
        return o.laid_out(x, fmt)
    return o.fresh_copy(x)


torch_name("detach")(lambda o, x: o.view_op(x, ("detach",)))


def _to_args(x, args, kwargs):
    """Tensor.to's three signatures, positional or by keyword: (dtype, non_blocking, copy), (device, dtype,
    non_blocking, copy) and (other, non_blocking, copy); memory_format by keyword. Returns (device, dtype,
    copy, memory_format)."""
    kwargs = dict(kwargs)
    args = list(args)
    device = dtype = None
    if args and isinstance(args[0], TensorVar):
        device = args.pop(0)  # other: its dtype and device
        dtype = device.meta.dtype
    elif args and isinstance(args[0], torch.dtype):
        dtype = args.pop(0)
    elif args and (args[0] is None or isinstance(args[0], (str, torch.device, int))) and \
            not isinstance(args[0], bool):
        device = args.pop(0)
        if args and (args[0] is None or isinstance(args[0], torch.dtype)):
            dtype = args.pop(0)
    names = ["non_blocking", "copy"]
    if len(args) > len(names):
        raise Unsupported(f"to() with arguments {args!r}")
    for name, value in zip(names, args):
        if name in kwargs:
            raise Unsupported(f"to() given {name} twice (eager raises)")
        kwargs[name] = value
    if "other" in kwargs:
        other = kwargs.pop("other")
        if not isinstance(other, TensorVar):
            raise Unsupported("to(other=...) that is not a tensor")
        dtype, device = other.meta.dtype, other
    dtype = kwargs.pop("dtype", dtype)
    device = kwargs.pop("device", device)
    kwargs.pop("non_blocking", None)
    copy = kwargs.pop("copy", False)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise Unsupported(f"to() with {sorted(kwargs)}")
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise Unsupported(f"to() with dtype {dtype!r}")
    if not isinstance(copy, bool):
        raise Unsupported(f"to() with copy={copy!r}")
    return device, dtype, copy, memory_format


def _target_host(o, x, device):
    """Whether x moved to `device` (a device, a tensor whose device it is, None: x's own) is on the host (the
    CPU, in a graph on CUDA); a device the graph cannot hold raises Unsupported."""
    if device is None:
        return x.node.host
    if isinstance(device, TensorVar):
        return device.node.host
    dev, graph = torch.device(device).type, o.tr.device.type
    if dev == "cpu" and graph == "cuda":
        return True
    if dev != graph:
        raise Unsupported(f"device change to {device}")
    return dev == "cuda" and _check_device(o, device, "a tensor moved")  # another CUDA device raises


def _moved(o, x, host):
    """x on the host or on the graph's device: x itself where it is there already, else a new tensor (eager
    copies it across)."""
    if x.node.host == host:
        return x
    return on_host(o.copy(x), host) if host else _on_device(o.copy(x))


def _on_device(x):
    x.node.host = False
    return x


@torch_name("to")
def _to(o, x, *args, **kwargs):
    o.check(x)
    device, dtype, copy, memory_format = _to_args(x, args, kwargs)
    fmt = _memory_format(memory_format, "to()")
    host = _target_host(o, x, device)
    r = o.convert(x, dtype) if dtype is not None else x
    moved = _moved(o, r, host)
    return _in_layout(o, moved, fmt, copy and moved is x)


def _cuda(o, x, device=None, non_blocking=False, memory_format=torch.preserve_format):
    if o.tr.device.type != "cuda":
        raise Unsupported("Tensor.cuda() in a graph on the CPU")
    _check_device(o, device if device is not None else "cuda", "Tensor.cuda()")
    return _in_layout(o, _moved(o, x, False), _memory_format(memory_format, "cuda()"), False)


def _cpu(o, x, memory_format=torch.preserve_format):
    return _in_layout(o, _moved(o, x, o.tr.device.type == "cuda"), _memory_format(memory_format, "cpu()"), False)


def _conversion(dtype, name):
    def h(o, x, memory_format=torch.preserve_format):
        fmt = _memory_format(memory_format, f"{name}()")
        r = o.convert(x, dtype)
        return _in_layout(o, r, fmt, False)
    return h


for _n, _dt in dict(float=torch.float32, double=torch.float64, half=torch.float16, bfloat16=torch.bfloat16,
                    int=torch.int32, long=torch.int64, short=torch.int16, char=torch.int8, byte=torch.uint8,
                    bool=torch.bool).items():
    torch_name(_n)(_conversion(_dt, _n))
torch_name("type_as")(lambda o, x, other: _moved(o, o.convert(x, other.meta.dtype), other.node.host))
method.all({"cuda": _cuda, "cpu": _cpu})


@torch_name("type")
def _type(o, x, dtype=None, non_blocking=False):
    """x.type(): the legacy type name ("torch.FloatTensor", "torch.cuda.FloatTensor"), a constant of the
    tensor's dtype and device; x.type(dtype) or x.type("torch.DoubleTensor"): a conversion on x's device."""
    on_cuda = o.tr.device.type == "cuda" and not x.node.host
    if dtype is None:
        name = torch.empty(0, dtype=x.meta.dtype).type()
        return name.replace("torch.", "torch.cuda.", 1) if on_cuda else name
    if isinstance(dtype, str):
        cls = getattr(torch.cuda if dtype.startswith("torch.cuda.") else torch, dtype.rpartition(".")[2], None)
        if cls is None or not isinstance(getattr(cls, "dtype", None), torch.dtype) or \
                dtype.startswith("torch.cuda.") != on_cuda:
            raise Unsupported(f"Tensor.type({dtype!r}) (another device, or not a tensor type name)")
        dtype = cls.dtype
    elif isinstance(dtype, type(torch.FloatTensor)) and isinstance(getattr(dtype, "dtype", None), torch.dtype) and \
            getattr(dtype, "is_cuda", False) == on_cuda:
        dtype = dtype.dtype  # a legacy tensor type of this device (torch.HalfTensor)
    if not isinstance(dtype, torch.dtype):
        raise Unsupported(f"Tensor.type() of a {type(dtype).__name__}")
    return o.convert(x, dtype)


# metadata (constants, guarded by the shape/dtype guards)
torch_name("size")(lambda o, x, dim=None: x.meta.shape if dim is None else x.meta.shape[dim])
torch_name("dim", "ndimension")(lambda o, x: x.meta.dim())


@torch_name("__len__")
def _len(o, x):
    if x.meta.dim() == 0:
        raise Unsupported("len() of a 0-d tensor")  # eager raises TypeError
    return x.meta.shape[0]


torch_name("numel", "nelement")(lambda o, x: x.meta.numel())
torch_name("element_size")(lambda o, x: x.meta.element_size())
torch_name("is_floating_point")(lambda o, x: x.meta.is_floating_point())
torch_name("is_complex")(lambda o, x: False)


@torch_name("is_contiguous")
def _is_contiguous(o, x, memory_format=None):
    """From the real strides for inputs and their views; computed tensors are taken as contiguous."""
    if memory_format not in (None, torch.contiguous_format):
        raise Unsupported(f"is_contiguous({memory_format})")
    if x.view is not None:
        return x.view.shadow.is_contiguous() if x.view.shadow is not None else True
    if x.input_index is not None:
        return x.tracer.input_tensors[x.input_index].is_contiguous()
    return True


torch_name("cat", "concat", "concatenate", methods=False)(
    lambda o, xs, dim=0, *, out=None: _out(o, out, o.cat(xs, dim), xs))
torch_name("stack", methods=False)(lambda o, xs, dim=0, *, out=None: _out(o, out, o.stack(xs, dim), xs))


@torch_name("chunk")
def _chunk(o, x, chunks, dim=0):
    o.check(x)
    d = _norm_dim(dim, x.meta.dim())
    n = x.meta.shape[d]
    step = -(-n // chunks) if chunks else n
    return tuple(_narrow(o, x, d, s, min(s + step, n) - s) for s in range(0, n, max(step, 1)))


@torch_name("split")
def _split(o, x, split_size, dim=0):
    o.check(x)
    d = _norm_dim(dim, x.meta.dim())
    n = x.meta.shape[d]
    if isinstance(split_size, int):
        sizes = [min(split_size, n - s) for s in range(0, n, split_size)] if split_size > 0 else [n]
    else:
        sizes = list(split_size)
        if sum(sizes) != n:
            raise Unsupported("split sizes do not add up to the dim's size")
    out, s = [], 0
    for k in sizes:
        out.append(_narrow(o, x, d, s, k))
        s += k
    return tuple(out)
