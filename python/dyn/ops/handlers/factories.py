"""Handlers of tensor factories: zeros/ones/full/empty (and their _like forms), arange."""
import torch

from ...errors import Unsupported
from .common import _check_device, _out, _shape_args, _tensors, on_host
from .generic import generic_call
from ..tensor import TensorVar
from .registry import method, torch_name


def _like_host(o, x, device):
    """Whether a tensor made like x (on x's device unless `device` is given) is on the host."""
    return x.node.host if device is None else _check_device(o, device)


def _like(value):
    def h(o, x, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None, pin_memory=None):
        return on_host(o.full(x.meta.shape, value, dtype or x.meta.dtype), _like_host(o, x, device))
    return h


torch_name("zeros_like", "empty_like")(_like(0))
torch_name("ones_like")(_like(1))
torch_name("full_like")(lambda o, x, fill_value, *, dtype=None, device=None, **k: on_host(
    o.full(x.meta.shape, fill_value, dtype or x.meta.dtype), _like_host(o, x, device)))


def _factory(value):
    def h(o, *size, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=None, out=None):
        host = _check_device(o, device)
        if requires_grad:
            raise Unsupported("factory with requires_grad=True")
        return on_host(o.full(_shape_args(size), value, dtype or torch.get_default_dtype()), host)
    return h


torch_name("zeros", "empty", methods=False)(_factory(0))
torch_name("ones", methods=False)(_factory(1))


@torch_name("full", methods=False)
def _full(o, size, fill_value, *, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=None):
    host = _check_device(o, device)
    if requires_grad:
        raise Unsupported("full(requires_grad=True)")
    if dtype is None:
        dtype = torch.bool if isinstance(fill_value, bool) else torch.int64 if isinstance(fill_value, int) \
            else torch.get_default_dtype()
    return on_host(o.full(tuple(size), fill_value, dtype), host)


@torch_name("arange", methods=False)
def _arange(o, *args, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
            **kwargs):
    """torch.arange: its bounds are Python numbers (shapes are constants), so the values are eager's own,
    computed now, and enter the graph as a constant tensor."""
    if _tensors(args, kwargs):
        # bounds computed from constants (Funnel's pooled positions) are numbers known now
        known = {k: o.constant_value(v) if isinstance(v, TensorVar) else None for k, v in enumerate(args)}
        if any(isinstance(v, TensorVar) and (known[k] is None or known[k].numel() != 1) for k, v in enumerate(args)) \
                or _tensors((), kwargs):
            raise Unsupported("arange with a tensor bound")
        args = tuple(known[k].item() if known[k] is not None else v for k, v in enumerate(args))
    host = _check_device(o, device)
    if requires_grad:
        raise Unsupported("arange(requires_grad=True)")
    if layout not in (None, torch.strided):
        raise Unsupported(f"arange(layout={layout})")
    if any(isinstance(a, torch.SymInt) for a in args) or any(isinstance(v, torch.SymInt) for v in kwargs.values()):
        return _out(o, out, on_host(_symbolic_arange(o, *args, dtype=dtype, **kwargs), host and out is None))
    try:
        values = torch.arange(*args, dtype=dtype, **kwargs)
    except (RuntimeError, TypeError, ValueError, OverflowError, NotImplementedError) as e:
        raise Unsupported(f"arange: {e}")  # eager raises
    return _out(o, out, on_host(o.dense(values), host and out is None))


def _symbolic_arange(o, start, end=None, step=1, *, dtype=None):
    """torch.arange with a bound that is a symbolic size (a capture with dynamic dims): graph.iota of the
    runtime length, then start + i * step in the graph."""
    if end is None:
        start, end = 0, start
    if not all(isinstance(v, (int, torch.SymInt)) and not isinstance(v, bool) for v in (start, end, step)) or \
            not isinstance(step, int) or step <= 0:
        raise Unsupported("arange of a dynamic size with bounds that are not ints or a step that is not a positive int")
    n = (end - start + step - 1) // step if step != 1 else end - start
    if not n >= 2:  # a guard: sizes 0 and 1 stay specialized
        raise Unsupported("arange of a dynamic size that may hold fewer than 2 elements")
    dtype = dtype or torch.int64
    r = o.iota(n, torch.int64)
    if step != 1:
        r = o.binary("mul", r, step)
    if not (isinstance(start, int) and start == 0):
        r = o.binary("add", r, start)
    return o.convert(r, dtype) if dtype != torch.int64 else r


def _computed(name):
    """torch.linspace/logspace/eye: arguments that are Python numbers (shapes are constants), so the values
    are eager's own, computed now, and enter the graph as a constant tensor (as arange's)."""
    fn = getattr(torch, name)

    def h(o, *args, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          **kwargs):
        if name == "linspace" and _tensors(args, kwargs):
            return _out(o, out, _linspace_tensors(o, *args, dtype=dtype, layout=layout, device=device,
                                                  requires_grad=requires_grad, **kwargs))
        if _tensors(args, kwargs):  # bounds held in tensors: the generic node (eager's op)
            kw = dict(kwargs, dtype=dtype, device=device, requires_grad=requires_grad)
            if layout is not None:
                kw["layout"] = layout
            return generic_call(o, fn, args, dict(kw, out=out) if out is not None else kw)
        host = _check_device(o, device)
        if requires_grad:
            raise Unsupported(f"{name}(requires_grad=True)")
        if layout not in (None, torch.strided):
            raise Unsupported(f"{name}(layout={layout})")
        try:
            values = fn(*args, dtype=dtype, **kwargs)
        except (RuntimeError, TypeError, ValueError, OverflowError, NotImplementedError) as e:
            raise Unsupported(f"{name}: {e}")  # eager raises
        return _out(o, out, on_host(o.dense(values), host and out is None))
    return h


def _linspace_tensors(o, start, end, steps, *, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.linspace with bounds held in 0-d tensors (eager reads their values as numbers): the values
    computed in the graph as eager's CPU kernel computes them, in the result's type (in float64 for
    integers; float16/bfloat16 are not captured): step = (end - start) / (steps - 1), start + i * step in the
    first half, end - (steps - 1 - i) * step in the second; one step is start."""
    if _check_device(o, device):
        raise Unsupported("linspace on the CPU in a graph on CUDA with bounds held in tensors")
    if requires_grad or layout not in (None, torch.strided):
        raise Unsupported("linspace with requires_grad=True or a layout")
    if isinstance(steps, bool) or not isinstance(steps, int):
        raise Unsupported(f"linspace with steps={steps!r}")

    def probe(v):
        return torch.zeros((), dtype=v.meta.dtype) if isinstance(v, TensorVar) else v
    try:
        meta = torch.linspace(probe(start), probe(end), steps, dtype=dtype)
    except (RuntimeError, TypeError, ValueError) as e:
        raise Unsupported(f"linspace: {e}")  # eager raises
    dt = meta.dtype
    if steps == 0:
        return o.full((0,), 0, dt)
    ct = dt if dt.is_floating_point else torch.float64

    def bound(v):
        if isinstance(v, TensorVar):
            return o.convert(o.convert(v, dt), ct)  # the number, as the result's type (Scalar.to<scalar_t>)
        return o.convert(o.full((), v, dt), ct)
    s, e = bound(start), bound(end)
    if steps == 1:
        return o.reshape(o.convert(s, dt), (1,))
    if dt in (torch.float16, torch.bfloat16):
        # eager's vectorized kernel rounds base + k * step per vector of the CPU's width
        raise Unsupported(f"linspace of {dt} with bounds held in tensors")
    step = o.binary("div", o.binary("sub", e, s), steps - 1)
    i = o.dense(torch.arange(steps, dtype=ct))
    lo = o.binary("add", s, o.binary("mul", step, i))
    hi = o.binary("sub", e, o.binary("mul", step, o.dense(torch.arange(steps - 1, -1, -1, dtype=ct))))
    r = o.where(o.dense(torch.arange(steps) < steps // 2), lo, hi)
    return o.convert(r, dt)


for _n in ("linspace", "logspace", "eye"):
    torch_name(_n)(_computed(_n))


@torch_name("empty_permuted")
def _empty_permuted(o, size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    """torch.empty_permuted: uninitialized, its dims laid out in memory in physical_layout's order."""
    size, order = tuple(size), tuple(physical_layout)
    if sorted(order) != list(range(len(size))):
        raise Unsupported("empty_permuted with a layout that is not a permutation of the dims (eager raises)")
    x = _factory(0)(o, size, dtype=dtype, device=device, layout=layout, requires_grad=requires_grad,
                    pin_memory=pin_memory)
    return x if order == tuple(range(len(size))) else o.laid_out(x, order)


def _new(value):
    """Tensor.new_zeros/new_ones/new_empty: x's dtype (and device) unless given."""
    def h(o, x, *size, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=False):
        host = _like_host(o, x, device)
        if requires_grad:
            raise Unsupported("new_* tensor with requires_grad=True")
        return on_host(o.full(_shape_args(size), value, dtype or x.meta.dtype), host)
    return h


method.all({"new_zeros": _new(0), "new_ones": _new(1), "new_empty": _new(0)})


@method("new_full")
def new_full(o, x, size, fill_value, dtype=None, device=None, **k):
    host = _like_host(o, x, device)
    return on_host(o.full(tuple(size), fill_value, dtype or x.meta.dtype), host)


def _constant_data(v, depth=0):
    """Python numbers and bools, nested in lists and tuples (what torch.tensor takes as data here)."""
    if isinstance(v, (bool, int, float)):
        return True
    return depth < 8 and isinstance(v, (list, tuple)) and all(_constant_data(x, depth + 1) for x in v)


@torch_name("tensor", methods=False)
def _tensor(o, data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """torch.tensor of Python numbers: eager makes it (dtype inferred as eager infers it) and it enters
    the graph as a constant on the graph's device. torch.tensor(t) of a tensor is a detached copy of its
    values on its device (what eager makes, with a warning to call clone().detach())."""
    if isinstance(data, TensorVar) and device is None and not requires_grad:
        y = o.fresh_copy(o.view_op(data, ("detach",)))
        return y if dtype is None or dtype == data.meta.dtype else o.convert(y, dtype)
    if isinstance(data, range):
        data = list(data)
    if not _constant_data(data):
        raise Unsupported("torch.tensor of values that are not Python numbers")
    host = _check_device(o, device, "torch.tensor")
    if requires_grad:
        raise Unsupported("torch.tensor(requires_grad=True)")
    try:
        values = torch.tensor(data, dtype=dtype)
    except (RuntimeError, TypeError, ValueError, OverflowError) as e:
        raise Unsupported(f"torch.tensor: {e}")  # eager raises
    return on_host(o.dense(values), host)


@method("new_tensor")
def _new_tensor(o, x, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """Tensor.new_tensor of Python numbers (Funnel's cls position): x's dtype and device unless given."""
    host = _like_host(o, x, device)
    if requires_grad or not _constant_data(data):
        raise Unsupported("new_tensor of values that are not Python numbers, or with requires_grad=True")
    try:
        values = torch.tensor(data, dtype=dtype or x.meta.dtype)
    except (RuntimeError, TypeError, ValueError, OverflowError) as e:
        raise Unsupported(f"new_tensor: {e}")  # eager raises
    return on_host(o.dense(values), host)


torch_name("as_tensor", methods=False)(
    lambda o, data, dtype=None, device=None: _tensor(o, data, dtype=dtype, device=device))
torch_name("scalar_tensor", methods=False)(lambda o, s, *, dtype=None, device=None, **k: _tensor(
    o, s, dtype=dtype if dtype is not None else torch.get_default_dtype(), device=device))
