"""Tables from torch functions / Tensor method names to capture handlers. A handler is called as
handler(ops, *args, **kwargs) with TensorVars for tensors and returns a TensorVar or constant."""
import math

import torch
import torch.nn.functional as F

from .errors import Unsupported
from .graph import UNARY
from .tensor_ops import SCALARS, TensorVar, _norm_dim, _norm_dims, node_requires_grad

H = {}  # name -> handler


def _tensors(*vals):
    out = []
    for v in vals:
        if isinstance(v, TensorVar):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            out += _tensors(*v)
        elif isinstance(v, dict):
            out += _tensors(*v.values())
    return out


def _out(o, out, r, *operands):
    """`out=`: r is written into out, which eager returns."""
    if out is None:
        return r
    if not isinstance(out, TensorVar) or not isinstance(r, TensorVar):
        raise Unsupported("out= that is not one tensor")
    if tuple(out.meta.shape) != tuple(r.meta.shape) or out.meta.dtype != r.meta.dtype:
        raise Unsupported("out= with another shape or dtype than the result (eager resizes or casts)")
    return o.mutate(out, r, _tensors(*operands))


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, torch.Size)):
        return tuple(shape[0])
    return tuple(shape)


for _op in UNARY:
    H[_op] = (lambda op: lambda o, x, *, out=None: _out(o, out, o.unary(op, x), x))(_op)
H["negative"] = H["neg"]
H["absolute"] = H["abs"]


def _binary(op):
    def h(o, a, b, *, out=None):
        o.accepts(op, getattr(torch, op), a, b)  # torch.maximum(x, 2) raises, x.maximum(2) too
        return _out(o, out, o.binary(op, a, b), a, b)
    return h


for _op in "mul pow maximum minimum remainder eq ne lt le gt ge logical_and logical_or".split():
    H[_op] = _binary(_op)
H.update(multiply=H["mul"], greater=H["gt"], greater_equal=H["ge"], less=H["lt"], less_equal=H["le"],
         not_equal=H["ne"], max_elementwise=H["maximum"])


def _add(op):
    def h(o, a, b, *, alpha=1, out=None):
        o.accepts(op, getattr(torch, op), a, b, alpha=alpha)  # sub of bools, a float alpha for ints
        b0 = b
        if alpha != 1:
            b = o.binary("mul", b, alpha)
        return _out(o, out, o.binary(op, a, b), a, b0)
    return h


H["add"] = _add("add")
H["sub"] = H["subtract"] = _add("sub")


def _div(o, a, b, *, rounding_mode=None, out=None):
    return _out(o, out, o.div(a, b, rounding_mode, grad="zero"), a, b)


H["div"] = H["divide"] = _div
H["true_divide"] = lambda o, a, b, *, out=None: _out(o, out, o.div(a, b), a, b)
H["floor_divide"] = lambda o, a, b, *, out=None: _out(o, out, o.div(a, b, "floor"), a, b)
H["fmod"] = lambda o, a, b, *, out=None: _out(o, out, o.fmod(a, b), a, b)
H["square"] = lambda o, x: o.binary("mul", x, x)


def _reduce(op):
    def h(o, x, dim=None, keepdim=False, *, dtype=None, out=None):
        if op in ("amax", "amin") and isinstance(dim, (tuple, list)) and len(dim) == 0:
            dim = None
        return _out(o, out, o.reduce(op, x, dim, keepdim, dtype), x)
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
        if out is not None and not isinstance(dim, TensorVar) and dim is not None:
            raise Unsupported(f"{red[1:]}(dim, out=...)")
        if isinstance(dim, TensorVar):
            return _out(o, out, o.binary(elem, x, dim), x, dim)
        if o.needs_grad(x):
            # max(dim): eager's gradient goes to the index it returns, amax's is split among ties; max():
            # split among ties as amax's, but given to the NaNs where the maximum is NaN (amax's is NaN)
            raise Unsupported(f"{red[1:]}() of a tensor that requires grad (eager's gradient at ties or NaN "
                              f"differs from {red}'s)")
        if dim is None:
            return _out(o, out, o.reduce(red, x, None, False), x)
        return ValuesIndices(o.reduce(red, x, dim, keepdim), red[1:])
    return h


H["max"] = _maxmin("amax", "maximum")
H["min"] = _maxmin("amin", "minimum")


def _var(o, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    return o.var_(x, dim, unbiased, keepdim, correction)


H["var"] = _var
H["std"] = lambda o, *a, **k: o.sqrt0(_var(o, *a, **k))
H["softmax"] = lambda o, x, dim, dtype=None: o.softmax("softmax", x, dim, dtype)
H["log_softmax"] = lambda o, x, dim, dtype=None: o.softmax("log_softmax", x, dim, dtype)
H["matmul"] = H["mm"] = H["bmm"] = lambda o, a, b, *, out=None: _out(o, out, o.matmul(a, b), a, b)
H["where"] = lambda o, c, a, b: o.where(c, a, b)


def _clamp(o, x, min=None, max=None):
    return o.clamp(x, min, max)


H["clamp"] = H["clip"] = _clamp
H["clamp_min"] = lambda o, x, m: o.clamp(x, m, None)
H["clamp_max"] = lambda o, x, m: o.clamp(x, None, m)


def _masked_fill(o, x, mask, value):
    """masked_fill keeps x's dtype and shape: the value is converted to it as eager converts it (2.7 into an
    integer tensor is 2; a value the dtype cannot hold raises)."""
    o.check(x, mask)
    if mask.meta.dtype != torch.bool:
        raise Unsupported("masked_fill with a mask that is not bool (eager raises)")
    try:
        ok = torch.broadcast_shapes(tuple(x.meta.shape), tuple(mask.meta.shape)) == tuple(x.meta.shape)
    except RuntimeError:
        ok = False
    if not ok:
        raise Unsupported("masked_fill with a mask that does not broadcast to the tensor (eager raises)")
    if isinstance(value, TensorVar):
        if value.meta.dim():
            raise Unsupported("masked_fill with a value tensor that is not 0-d (eager raises)")
        o.accepts("masked_fill", torch.Tensor.masked_fill, x, mask, value)
        v = o.convert(value, x.meta.dtype)
    elif isinstance(value, SCALARS):
        try:
            conv = torch.zeros(2, dtype=x.meta.dtype).masked_fill(torch.ones(2, dtype=torch.bool), value)[0].item()
        except (RuntimeError, TypeError, OverflowError) as e:
            raise Unsupported(f"masked_fill: {e}")  # eager raises
        v = o.const(conv, x.meta.dtype)
    else:
        raise Unsupported(f"masked_fill with a {type(value).__name__}")
    return o.where(mask, v, x)


H["masked_fill"] = _masked_fill
H["log2"] = lambda o, x: o.binary("div", o.unary("log", x), math.log(2))
H["log10"] = lambda o, x: o.binary("div", o.unary("log", x), math.log(10))


# Views: the result shares the memory of its base (in-place ops through either are seen by both)
def _resolved(o, x, shape):
    o.check(x)
    return tuple(x.meta.reshape(shape).shape)


def _reshape(o, x, *shape):
    return o.view_op(x, ("reshape", _resolved(o, x, _shape_args(shape))))


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


def _transpose(o, x, a, b):
    o.check(x)
    nd = x.meta.dim()
    p = list(range(nd))
    a, b = _norm_dim(a, nd), _norm_dim(b, nd)
    if nd:
        p[a], p[b] = p[b], p[a]
    return _permute(o, x, p)


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


def _select(o, x, dim, index):
    o.check(x)
    d = _norm_dim(dim, x.meta.dim())
    if x.meta.dim() == 0:
        raise Unsupported("select on a 0-d tensor")
    return o.view_op(x, ("getitem", _dim_index(x.meta.dim(), d, int(index))))


def _unbind(o, x, dim=0):
    o.check(x)
    d = _norm_dim(dim, x.meta.dim())
    return tuple(_select(o, x, d, i) for i in range(x.meta.shape[d]))


def _int_tensor_index(idx):
    """(dim, index) when idx indexes one dim with an integer tensor (x[t], x[:, t]), else None."""
    items = idx if isinstance(idx, tuple) else (idx,)
    found = None
    for d, i in enumerate(items):
        if isinstance(i, TensorVar) and i.meta.dtype in (torch.int32, torch.int64):
            if found is not None:
                raise Unsupported("indexing with several integer tensors")
            found = (d, i)
        elif not (isinstance(i, slice) and i == slice(None)):
            if any(isinstance(j, TensorVar) and j.meta.dtype in (torch.int32, torch.int64) for j in items):
                raise Unsupported("integer tensor indexing mixed with ints, slices, None or ...")
            return None
    return found


def getitem(o, x, idx):
    """x[idx]: basic indexing is a view; an integer tensor on one dim (x[t], x[:, t]) gathers a copy."""
    found = _int_tensor_index(idx)
    if found is not None:
        o.check(x)
        d, t = found
        if d >= x.meta.dim():
            raise Unsupported("too many indices")
        return o.take_along(x, d, t, wraps=True)
    return o.view_op(x, ("getitem", idx))


def _gather(o, x, dim, index, *, sparse_grad=False, out=None):
    return _out(o, out, o.gather(x, dim, index), x, index)


def _index_select(o, x, dim, index, *, out=None):
    return _out(o, out, o.index_select(x, dim, index), x, index)


H["gather"] = _gather
H["index_select"] = _index_select


def _mask_setitem(o, x, mask, value):
    """x[mask] = value with a boolean mask over x's leading dims: x becomes where(mask, value, x), written
    in place. value is a number or a tensor that broadcasts to x's dims after the mask's (one that has a
    value per selected element depends on how many are selected: unsupported)."""
    o.check(x)
    k = mask.meta.dim()
    if k > x.meta.dim() or tuple(mask.meta.shape) != tuple(x.meta.shape[:k]):
        raise Unsupported(f"boolean mask of shape {tuple(mask.meta.shape)} for a tensor of shape "
                          f"{tuple(x.meta.shape)} (eager raises)")
    rest = tuple(x.meta.shape[k:])
    if isinstance(value, TensorVar):
        v = value
        while v.meta.dim() > len(rest) and v.meta.shape[0] == 1:  # a leading 1 broadcasts to any count
            v = o.reshape(v, tuple(v.meta.shape[1:]))
        if v.meta.dim() > len(rest):
            raise Unsupported("boolean-mask assignment of a value per selected element (a count known "
                              "only at run time)")
        try:
            ok = torch.broadcast_shapes(tuple(v.meta.shape), rest) == rest
        except RuntimeError:
            ok = False
        if not ok:
            raise Unsupported(f"boolean-mask assignment of a value of shape {tuple(value.meta.shape)} "
                              f"(eager raises)")
        if value.meta.dim() and value.meta.dtype != x.meta.dtype:
            raise Unsupported("boolean-mask assignment of a tensor of another dtype (eager raises)")
        o.check_inplace(x, lambda s: s.__setitem__(mask.meta, value.meta))
        v = o.convert(v, x.meta.dtype)
    elif isinstance(value, (int, float, bool)):
        o.check_inplace(x, lambda s: s.__setitem__(mask.meta, value))
        if not x.meta.dtype.is_floating_point and not math.isfinite(value):
            raise Unsupported(f"{value} assigned into an integer tensor")
        v = o.const(value, x.meta.dtype)
    else:
        raise Unsupported(f"index assignment of a {type(value).__name__}")
    cond = o.reshape(mask, tuple(mask.meta.shape) + (1,) * len(rest))
    # a 0-d value is read before anything is written (eager too); a larger one is read while writing
    o.mutate(x, o.where(cond, v, x), (value, mask) if isinstance(value, TensorVar) and value.meta.dim() else
             (mask,))


def setitem(o, x, idx, value):
    """x[idx] = value: copies value into the view x[idx]."""
    if isinstance(idx, TensorVar) and idx.meta.dtype == torch.bool:
        return _mask_setitem(o, x, idx, value)
    if _tensors(idx):
        raise Unsupported("index assignment with a tensor index")
    view = getitem(o, x, idx)
    shape, dtype = tuple(view.meta.shape), view.meta.dtype
    if isinstance(value, TensorVar) and (value is view or (
            o._storage_of(value) is not None and o._storage_of(value) is o._storage_of(view)
            and o._layout(value) is not None and o._layout(value) == o._layout(view))):
        return  # the same memory (x[i] += 1 stores x[i] back): nothing to copy
    if isinstance(value, TensorVar):
        v = value
        while v.meta.dim() > len(shape) and v.meta.shape[0] == 1:  # eager drops leading 1-dims
            v = o.reshape(v, tuple(v.meta.shape[1:]))
        o.check_inplace(view, lambda s: s.copy_(v.meta))
        new = o.copy(o.expand(o.convert(v, dtype), shape))
    elif isinstance(value, (int, float, bool)):
        o.check_inplace(view, lambda s: s.fill_(value))
        new = o.full(shape, value, dtype)
    else:
        raise Unsupported(f"index assignment of a {type(value).__name__}")
    o.mutate(view, new, (value,))


H["reshape"] = _reshape
H["view"] = _view
H["view_as"] = lambda o, x, other: _view(o, x, tuple(other.meta.shape))
H["reshape_as"] = lambda o, x, other: _reshape(o, x, tuple(other.meta.shape))


def _flatten(o, x, start_dim=0, end_dim=-1):
    o.check(x)
    shape = tuple(x.meta.flatten(start_dim, end_dim).shape)  # raises where eager raises
    if x.meta.dim() and _norm_dim(start_dim, x.meta.dim()) == _norm_dim(end_dim, x.meta.dim()):
        return x  # eager returns x itself
    return _reshape(o, x, shape)


H["flatten"] = _flatten
H["unsqueeze"] = lambda o, x, dim: _view(o, x, tuple(x.meta.unsqueeze(dim).shape))


def _squeeze(o, x, dim=None):
    o.check(x)
    return _view(o, x, tuple((x.meta.squeeze() if dim is None else x.meta.squeeze(dim)).shape))


H["squeeze"] = _squeeze
H["permute"] = lambda o, x, *dims: _permute(o, x, _shape_args(dims))
H["transpose"] = H["swapaxes"] = H["swapdims"] = _transpose
H["t"] = _t


def _sizes(sizes, size, what):
    """Sizes given as varargs (x.expand(3, 4)), one sequence (x.expand((3, 4))) or size=."""
    if size is not None:
        if sizes:
            raise Unsupported(f"{what} with sizes given twice")
        sizes = (size,)
    shape = _shape_args(sizes)
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
        raise Unsupported(f"{what} with sizes that are not ints")
    return shape


H["expand"] = lambda o, x, *sizes, size=None, implicit=False: _expand(o, x, _sizes(sizes, size, "expand"))
H["expand_as"] = lambda o, x, other: _expand(o, x, tuple(other.meta.shape))
H["broadcast_to"] = lambda o, x, size: _expand(o, x, _sizes((), size, "broadcast_to"))  # torch.broadcast_to


def _broadcast_to_method(o, x, *sizes, size=None):
    """Tensor.broadcast_to, which also takes the sizes as varargs (torch.broadcast_to does not)."""
    return _expand(o, x, _sizes(sizes, size, "broadcast_to"))


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


H["unflatten"] = _unflatten
H["narrow"] = _narrow
H["select"] = _select
H["unbind"] = _unbind
H["contiguous"] = lambda o, x, memory_format=None: o.contiguous(x)
H["detach"] = lambda o, x: o.view_op(x, ("detach",))
H["clone"] = lambda o, x, memory_format=None: o.fresh_copy(x)


def _to(o, x, *args, **kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    copy = kwargs.pop("copy", False)
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
    r = o.convert(x, dtype) if dtype is not None else x
    return o.fresh_copy(r) if copy and r is x else r


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


def _is_contiguous(o, x, memory_format=None):
    """From the real strides for inputs and their views; computed tensors are taken as contiguous."""
    if memory_format not in (None, torch.contiguous_format):
        raise Unsupported(f"is_contiguous({memory_format})")
    if x.view is not None:
        return x.view.shadow.is_contiguous() if x.view.shadow is not None else True
    if x.input_index is not None:
        return x.tracer.input_tensors[x.input_index].is_contiguous()
    return True


H["is_contiguous"] = _is_contiguous
H["cat"] = H["concat"] = H["concatenate"] = lambda o, xs, dim=0, *, out=None: _out(o, out, o.cat(xs, dim), xs)
H["stack"] = lambda o, xs, dim=0, *, out=None: _out(o, out, o.stack(xs, dim), xs)


def _chunk(o, x, chunks, dim=0):
    o.check(x)
    d = _norm_dim(dim, x.meta.dim())
    n = x.meta.shape[d]
    step = -(-n // chunks) if chunks else n
    return tuple(_narrow(o, x, d, s, min(s + step, n) - s) for s in range(0, n, max(step, 1)))


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


def _arange(o, *args, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
            **kwargs):
    """torch.arange: its bounds are Python numbers (shapes are constants), so the values are eager's own,
    computed now, and enter the graph as a constant tensor."""
    if _tensors(args, kwargs):
        raise Unsupported("arange with a tensor bound")
    if device is not None and torch.device(device).type != o.tr.device.type:
        raise Unsupported("factory on another device")
    if requires_grad:
        raise Unsupported("arange(requires_grad=True)")
    if layout not in (None, torch.strided):
        raise Unsupported(f"arange(layout={layout})")
    try:
        values = torch.arange(*args, dtype=dtype, **kwargs)
    except (RuntimeError, TypeError, ValueError, OverflowError, NotImplementedError) as e:
        raise Unsupported(f"arange: {e}")  # eager raises
    return _out(o, out, o.dense(values))


H["arange"] = _arange


def _triangle(lower):
    """tril / triu: where(col - row <= diagonal (>= for triu), x, 0) over the last two dims, with the
    row and column numbers as small constants broadcast against each other."""
    def h(o, x, diagonal=0, *, out=None):
        o.check(x)
        if isinstance(diagonal, bool) or not isinstance(diagonal, int):
            raise Unsupported(f"{'tril' if lower else 'triu'} with a diagonal that is not an int")
        try:
            (torch.tril if lower else torch.triu)(x.meta, diagonal)
        except RuntimeError as e:
            raise Unsupported(str(e))  # eager raises (fewer than 2 dims)
        n, m = x.meta.shape[-2:]
        keep = torch.ones(n, m, dtype=torch.bool)
        keep = keep.tril(diagonal) if lower else keep.triu(diagonal)
        zero = False if x.meta.dtype == torch.bool else 0
        if bool(keep.all()):
            r = o.fresh_copy(x)
        elif not bool(keep.any()):
            r = o.full(tuple(x.meta.shape), zero, x.meta.dtype)
        else:
            rows = o.dense(torch.arange(n).reshape(n, 1))
            cols = o.dense(torch.arange(m).reshape(1, m))
            mask = o.binary("le" if lower else "ge", o.binary("sub", cols, rows), diagonal)
            r = o.where(mask, x, zero)
        return _out(o, out, r, x)
    return h


H["tril"] = _triangle(True)
H["triu"] = _triangle(False)

H["addcmul"] = lambda o, x, t1, t2, *, value=1, out=None: _out(
    o, out, o.binary("add", x, o.binary("mul", o.binary("mul", t1, value) if value != 1 else t1, t2)), x, t1, t2)
H["addcdiv"] = lambda o, x, t1, t2, *, value=1, out=None: _out(
    o, out, o.binary("add", x, o.binary("div", o.binary("mul", t1, value) if value != 1 else t1, t2)), x, t1, t2)


# -- in-place ops: the new value is computed like the out-of-place op's, checked against eager's rules by
# running the real in-place op on a meta tensor laid out like the destination (dtype cast, broadcast,
# overlap), and written with Ops.mutate (views, graph inputs, writeback)
def _metas(v):
    if isinstance(v, TensorVar):
        return v.meta
    if type(v) in (tuple, list):
        return type(v)(_metas(x) for x in v)
    if type(v) is dict:
        return {k: _metas(x) for k, x in v.items()}
    return v


def inplace(o, x, new, check, *operands, grad=True):
    """x updated in place to `new`; check(meta) runs eager's in-place op on a meta copy of x. Returns x."""
    o.check(x, new)
    o.check_inplace(x, check)
    if not torch.can_cast(new.meta.dtype, x.meta.dtype):
        raise Unsupported(f"in-place op: result type {new.meta.dtype} can't be cast to {x.meta.dtype}")
    return o.mutate(x, new, _tensors(*operands), grad=grad)


def _inplace_method(name, base):
    def h(o, x, *args, **kwargs):
        o.check(x)
        new = base(o, x, *args, **kwargs)
        return inplace(o, x, new, lambda s: getattr(s, name)(*_metas(args), **_metas(kwargs)), args, kwargs)
    return h


INPLACE = {}
for _n in UNARY + ("add sub mul div true_divide floor_divide fmod tril triu pow remainder clamp clamp_min clamp_max "
                   "clip masked_fill square "
                   "log2 log10 eq ne lt le gt ge logical_and logical_or addcmul addcdiv negative absolute multiply "
                   "subtract divide greater greater_equal less less_equal not_equal").split():
    if _n in H and hasattr(torch.Tensor, _n + "_"):
        INPLACE[_n + "_"] = _inplace_method(_n + "_", H[_n])


def _zero_(o, x):
    o.check(x)
    return inplace(o, x, o.full(tuple(x.meta.shape), 0, x.meta.dtype), lambda s: s.zero_())


def _fill_(o, x, value):
    o.check(x)
    if isinstance(value, TensorVar):
        new = o.expand(o.convert(value, x.meta.dtype), tuple(x.meta.shape))
    elif isinstance(value, (int, float, bool)):
        new = o.full(tuple(x.meta.shape), value, x.meta.dtype)
    else:
        raise Unsupported(f"fill_ with a {type(value).__name__}")
    if new is value:
        new = o.copy(value)  # x's own node: no other TensorVar holds it
    return inplace(o, x, new, lambda s: s.fill_(_metas(value)), value)


def _copy_(o, x, src, non_blocking=False):
    o.check(x, src)
    new = o.expand(o.convert(src, x.meta.dtype), tuple(x.meta.shape))
    if new is src:
        new = o.copy(src)  # x's own node: no other TensorVar holds it
    return inplace(o, x, new, lambda s: s.copy_(src.meta), src)


INPLACE["zero_"] = _zero_
INPLACE["fill_"] = _fill_
INPLACE["copy_"] = _copy_


def _f_inplace(o, x, flag, new, fname, *args):
    """A torch.nn.functional op with inplace=flag."""
    if not flag:
        return new
    return inplace(o, x, new, lambda s: getattr(F, fname)(s, *args, inplace=True))


# torch.nn.functional
F_H = {}
F_H["relu"] = lambda o, x, inplace=False: _f_inplace(o, x, inplace, o.unary("relu", x), "relu")
F_H["gelu"] = lambda o, x, approximate="none": o.gelu(x, approximate)
F_H["silu"] = lambda o, x, inplace=False: _f_inplace(o, x, inplace, o.silu(x), "silu")
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


def _embedding(o, index, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
               sparse=False):
    """weight's rows at index. padding_idx, scale_grad_by_freq and sparse change only the gradient: taken
    when weight needs none (the eager backend differentiates a plain gather)."""
    o.check(index, weight)
    if max_norm is not None:
        raise Unsupported("embedding with max_norm (renormalizes weight in place)")
    if (padding_idx is not None or scale_grad_by_freq or sparse) and o.needs_grad(weight):
        raise Unsupported("embedding with padding_idx, scale_grad_by_freq or sparse, differentiated")
    if weight.meta.dim() != 2:
        raise Unsupported("embedding with a weight that is not 2-D (eager raises)")
    return o.take_along(weight, 0, index, wraps=False)


F_H["embedding"] = _embedding


def _leaky_relu(o, x, negative_slope=0.01, inplace=False):
    o.check(x)
    o.accepts("leaky_relu", F.leaky_relu, x, negative_slope)  # integers raise
    new = o.where(o.binary("gt", x, 0), x, o.binary("mul", x, negative_slope))
    return _f_inplace(o, x, inplace, new, "leaky_relu", negative_slope)


F_H["leaky_relu"] = _leaky_relu


def _hardtanh_value(o, x, fn, min_val, max_val, *args):
    """hardtanh / relu6: x's dtype kept (integer bounds truncated, as eager's kernel converts them); the
    gradient is zero at the bounds (hardtanh_backward), unlike clamp's."""
    o.check(x)
    if not isinstance(min_val, (int, float)) or not isinstance(max_val, (int, float)):
        raise Unsupported("hardtanh bounds that are not numbers")
    if not (math.isfinite(min_val) and math.isfinite(max_val)):
        raise Unsupported("hardtanh with a bound that is not finite")
    if min_val > max_val:
        raise Unsupported("hardtanh with min_val > max_val (eager raises)")
    o.accepts(fn.__name__, fn, x, *args)  # bools raise
    if not x.meta.dtype.is_floating_point:
        return o.clamp(x, int(min_val), int(max_val))
    return o.clamp(x, min_val, max_val, open_bounds=True)


F_H["hardtanh"] = lambda o, x, min_val=-1.0, max_val=1.0, inplace=False: _f_inplace(
    o, x, inplace, _hardtanh_value(o, x, F.hardtanh, min_val, max_val, min_val, max_val), "hardtanh", min_val,
    max_val)
F_H["relu6"] = lambda o, x, inplace=False: _f_inplace(o, x, inplace, _hardtanh_value(o, x, F.relu6, 0.0, 6.0),
                                                      "relu6")


def _batch_norm(o, x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                eps=1e-5):
    """F.batch_norm. In training mode the batch statistics normalize, and the running statistics (when
    given) are updated in place: mean and unbiased variance, new = momentum * batch + (1 - momentum) * old."""
    o.check(x)
    nd = x.meta.dim()
    if nd < 2 or not x.meta.is_floating_point():
        raise Unsupported("batch_norm of a tensor with fewer than 2 dims or an integer dtype")
    if (running_mean is None) != (running_var is None):
        raise Unsupported("batch_norm with only one of running_mean and running_var")
    if not isinstance(momentum, (int, float)) or isinstance(momentum, bool) or not isinstance(eps, (int, float)):
        raise Unsupported("batch_norm momentum or eps that is not a number")  # eager raises for None
    if eps <= 0:
        raise Unsupported("batch_norm eps must be positive")
    c = x.meta.shape[1]
    for t in (running_mean, running_var, weight, bias):
        if t is not None:
            o.check(t)
            if tuple(t.meta.shape) != (c,):
                raise Unsupported("batch_norm parameter or statistic of a wrong shape")
    dims = [0] + list(range(2, nd))
    n = x.meta.numel() // c if c else 0
    bshape = (1, c) + (1,) * (nd - 2)
    xc, low = o._upcast(x)
    cdt = xc.meta.dtype
    if training:
        if n <= 1:
            raise Unsupported("batch_norm in training mode with one value per channel (eager raises)")
        mean = o.reduce("mean", xc, dims, True)
        d = o.binary("sub", xc, mean)
        ssq = o.reduce("sum", o.binary("mul", d, d), dims, True)
        var = o.binary("div", ssq, float(n))
        y = o.binary("mul", d, o.unary("rsqrt", o.binary("add", var, float(eps))))
        if running_mean is not None:
            m = float(momentum)
            new_mean = o.binary("add", o.binary("mul", o.convert(o.reshape(mean, (c,)), running_mean.meta.dtype), m),
                                o.binary("mul", running_mean, 1.0 - m))
            unbiased = o.binary("div", o.reshape(ssq, (c,)), float(n - 1))
            new_var = o.binary("add", o.binary("mul", o.convert(unbiased, running_var.meta.dtype), m),
                               o.binary("mul", running_var, 1.0 - m))
            reads = (x, weight, bias)
            o.mutate(running_mean, new_mean, _tensors(*reads, running_var), grad=False)
            o.mutate(running_var, new_var, _tensors(*reads, running_mean), grad=False)
    else:
        if running_mean is None:
            raise Unsupported("batch_norm in eval mode without running statistics (eager raises)")
        rm = o.reshape(o.convert(running_mean, cdt), bshape)
        rv = o.reshape(o.convert(running_var, cdt), bshape)
        y = o.binary("mul", o.binary("sub", xc, rm), o.unary("rsqrt", o.binary("add", rv, float(eps))))
    if weight is not None:
        y = o.binary("mul", y, o.reshape(o.convert(weight, cdt), bshape))
    if bias is not None:
        y = o.binary("add", y, o.reshape(o.convert(bias, cdt), bshape))
    return o.convert(y, x.meta.dtype)


F_H["batch_norm"] = _batch_norm


def _normalize(o, x, p=2.0, dim=1, eps=1e-12, out=None):
    if p != 2:
        raise Unsupported("normalize with p != 2")
    o.check(x)
    # sqrt0 and clamp's subgradient: a zero vector's gradient is finite, as eager's norm backward gives
    n = o.sqrt0(o.reduce("sum", o.binary("mul", x, x), dim, True))
    return _out(o, out, o.binary("div", x, o.clamp(n, eps, None)), x)


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
for _name, _h in INPLACE.items():
    _f = getattr(torch, _name, None)
    if _f is not None and callable(_f):
        TORCH_FUNCS[_f] = _h
TORCH_FUNCS[F.relu_] = INPLACE["relu_"]
TORCH_FUNCS[F.leaky_relu_] = lambda o, x, negative_slope=0.01: _leaky_relu(o, x, negative_slope, True)
TORCH_FUNCS[F.hardtanh_] = lambda o, x, min_val=-1.0, max_val=1.0: F_H["hardtanh"](o, x, min_val, max_val, True)

# Tensor methods by name
METHODS = dict(H)
for _n in ("relu", "sigmoid", "tanh"):
    METHODS[_n] = H[_n]
METHODS["softmax"] = lambda o, x, dim, dtype=None: o.softmax("softmax", x, dim, dtype)
METHODS["log_softmax"] = lambda o, x, dim, dtype=None: o.softmax("log_softmax", x, dim, dtype)
for _n in ("zeros", "ones", "empty", "full", "arange", "cat", "concat", "concatenate", "stack", "where"):
    METHODS.pop(_n, None)
METHODS["broadcast_to"] = _broadcast_to_method
METHODS["where"] = lambda o, x, cond, other: o.where(cond, x, other)
METHODS.update(INPLACE)
METHODS["new_zeros"] = lambda o, x, *size, dtype=None, **k: o.full(_shape_args(size), 0, dtype or x.meta.dtype)
METHODS["new_ones"] = lambda o, x, *size, dtype=None, **k: o.full(_shape_args(size), 1, dtype or x.meta.dtype)
METHODS["new_full"] = lambda o, x, size, fill_value, dtype=None, **k: o.full(tuple(size), fill_value,
                                                                             dtype or x.meta.dtype)

def _requires_grad(o, x):
    return node_requires_grad(o.tr, x.node, {})


_node_requires_grad = node_requires_grad


TENSOR_ATTRS = {
    "shape": lambda o, x: x.meta.shape,
    "ndim": lambda o, x: x.meta.dim(),
    "dtype": lambda o, x: x.meta.dtype,
    "device": lambda o, x: o.tr.device,
    "is_cuda": lambda o, x: o.tr.device.type == "cuda",
    "is_cpu": lambda o, x: o.tr.device.type == "cpu",
    "requires_grad": lambda o, x: _requires_grad(o, x),
    "layout": lambda o, x: torch.strided,
    "T": lambda o, x: _permute(o, x, list(reversed(range(x.meta.dim())))),
    "mT": lambda o, x: _transpose(o, x, -2, -1),
    "is_sparse": lambda o, x: False,
    "is_quantized": lambda o, x: False,
    "is_meta": lambda o, x: False,
}
