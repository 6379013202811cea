"""Handlers of tensor factories: zeros/ones/full/empty (and their _like forms), arange."""
import torch

from ...errors import Unsupported
from .common import _check_device, _out, _shape_args, _tensors

H = {}  # name -> handler


def _like(value):
    def h(o, x, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None, pin_memory=None):
        return o.full(x.meta.shape, value, dtype or x.meta.dtype)
    return h


H["zeros_like"] = H["empty_like"] = _like(0)
H["ones_like"] = _like(1)
H["full_like"] = lambda o, x, fill_value, *, dtype=None, **k: o.full(x.meta.shape, fill_value, dtype or x.meta.dtype)


def _factory(value):
    def h(o, *size, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=None, out=None):
        _check_device(o, device)
        if requires_grad:
            raise Unsupported("factory with requires_grad=True")
        return o.full(_shape_args(size), value, dtype or torch.get_default_dtype())
    return h


H["zeros"] = H["empty"] = _factory(0)
H["ones"] = _factory(1)


def _full(o, size, fill_value, *, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=None):
    _check_device(o, device)
    if requires_grad:
        raise Unsupported("full(requires_grad=True)")
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
    _check_device(o, device)
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


def _constant_data(v, depth=0):
    """Python numbers and bools, nested in lists and tuples (what torch.tensor takes as data here)."""
    if isinstance(v, (bool, int, float)):
        return True
    return depth < 8 and isinstance(v, (list, tuple)) and all(_constant_data(x, depth + 1) for x in v)


def _tensor(o, data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """torch.tensor of Python numbers: eager makes it (dtype inferred as eager infers it) and it enters
    the graph as a constant on the graph's device."""
    if not _constant_data(data):
        raise Unsupported("torch.tensor of values that are not Python numbers")
    _check_device(o, device, "torch.tensor")
    if requires_grad:
        raise Unsupported("torch.tensor(requires_grad=True)")
    try:
        values = torch.tensor(data, dtype=dtype)
    except (RuntimeError, TypeError, ValueError, OverflowError) as e:
        raise Unsupported(f"torch.tensor: {e}")  # eager raises
    return o.dense(values)


H["tensor"] = _tensor
H["as_tensor"] = lambda o, data, dtype=None, device=None: _tensor(o, data, dtype=dtype, device=device)
H["scalar_tensor"] = lambda o, s, *, dtype=None, device=None, **k: _tensor(
    o, s, dtype=dtype if dtype is not None else torch.get_default_dtype(), device=device)
