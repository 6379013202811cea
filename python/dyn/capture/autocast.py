"""torch.autocast in captured code: the casts eager's autocast makes, made explicit in the graph.

Under autocast (a `with torch.autocast(...)` block the traced code enters, or the caller's autocast state,
read and guarded) every call of a PyTorch op on floating tensors of the graph's device asks PyTorch itself
what autocast does to it: the op runs once on fake tensors (FakeTensorMode, no data: the same shapes,
dtypes and device) with autocast set as the traced code has it, and the casts autocast's kernel makes
(the `aten._to_copy` of an argument that the same run without autocast does not make) are recorded. The
capture then converts those arguments (`graph.convert`) and captures the op as it would without autocast.
So which ops run in lower precision, which in float32 and which promote is torch's own registration
(aten/src/ATen/autocast_mode.cpp, per device type), never a list kept here. Ops that compute in float32
without casting their argument (CUDA's `sum`, `softmax`, `cumsum`...: `fp32_set_opt_dtype`) are
recognized by their result: autocast gives float32 where the op would give the half type; their
lower-precision arguments are converted to float32, which computes the same. Anything else that does not
match (an op whose result under autocast the recorded casts do not explain, or that fails on fake
tensors) is unsupported: a graph break, and eager runs the call under the block's autocast.

Results per (op, arguments' dtypes and shapes, device, autocast dtype) are kept in the session."""
import logging

import torch

from ..errors import Unsupported
from ..ops import TensorVar
from .values import holds_internal

_HALF = (torch.float16, torch.bfloat16)
_ELIGIBLE = (torch.float16, torch.bfloat16, torch.float32)  # autocast never casts float64


def global_state(device_type):
    """The caller's autocast state for a device type (enabled, dtype): what the guard compares."""
    return (torch.is_autocast_enabled(device_type), torch.get_autocast_dtype(device_type))


def _tensors(v, path, out, depth=0):
    if isinstance(v, TensorVar):
        out.append((path, v))
    elif type(v) in (list, tuple) and depth < 2:
        for i, x in enumerate(v):
            _tensors(x, path + (i,), out, depth + 1)


def _replace(v, path, new):
    if not path:
        return new
    items = list(v)
    items[path[0]] = _replace(items[path[0]], path[1:], new)
    return type(v)(items)


def _sig(v):
    if isinstance(v, TensorVar):
        return ("T", v.meta.dtype, tuple(v.meta.shape), tuple(v.meta.stride()))
    if type(v) in (list, tuple):
        return (type(v).__name__,) + tuple(_sig(x) for x in v)
    if type(v) in (int, float, bool, complex):
        return (type(v).__name__,)  # autocast's choice depends on dtypes, never on a number's value
    try:
        hash(v)
    except TypeError:
        return ("?", type(v).__name__)
    return (type(v).__name__, v)


def cast_arguments(frame, fn, args, kwargs, method=None):
    """args and kwargs of a call of fn (or of Tensor.<method>, args[0] being the tensor) with the casts
    autocast would make applied; unchanged outside autocast."""
    tr = frame.tr
    dev = tr.device.type
    found = []
    _tensors(list(args), ("a",), found)
    for k, v in kwargs.items():
        _tensors(v, ("k", k), found)
    if not any(t.meta.dtype in _ELIGIBLE for _, t in found):
        return args, kwargs
    enabled, lp = tr.autocast_state(dev)
    if not enabled:
        return args, kwargs
    key = (method if method is not None else fn, dev, lp, _sig(tuple(args)),
           tuple(sorted((k, _sig(v)) for k, v in kwargs.items())))
    cache = tr.session.autocast_plans
    try:
        plan = cache.get(key)
    except TypeError:
        key, plan = None, None
    if plan is None:
        if any(holds_internal(v, tr) and not isinstance(v, (TensorVar, list, tuple))
               for v in list(args) + list(kwargs.values())):
            frame.fail(f"{_name(fn, method)} under autocast with a value made while capturing")
        plan = _probe(fn, method, args, kwargs, tr.device, lp)
        if key is not None:
            cache[key] = plan
    if isinstance(plan, str):
        frame.fail(plan)
    if not plan:
        return args, kwargs
    args, kwargs = list(args), dict(kwargs)
    for path, dtype in plan:
        if path[0] == "a":
            t = _get(args, path[1:])
            args = _replace(args, path[1:], tr.ops.convert(t, dtype))
        else:
            t = _get(kwargs[path[1]], path[2:])
            kwargs[path[1]] = _replace(kwargs[path[1]], path[2:], tr.ops.convert(t, dtype))
    return args, kwargs


def _get(v, path):
    for i in path:
        v = v[i]
    return v


def _name(fn, method):
    return f"Tensor.{method}" if method else getattr(fn, "__name__", type(fn).__name__)


def _probe(fn, method, args, kwargs, device, lp):
    """((path, dtype), ...): the arguments autocast converts and to what; or a string: why this call
    under autocast is not captured."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._python_dispatch import TorchDispatchMode

    class Record(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.casts = []

        def __torch_dispatch__(self, func, types, a=(), kw=None):
            kw = kw or {}
            if func is torch.ops.aten._to_copy.default and a:
                self.casts.append((id(a[0]), kw.get("dtype")))
            return func(*a, **kw)

    name = _name(fn, method)

    def run(autocast, conv=None):
        """(output dtypes, casts of the arguments as {path: dtype}) of one fake run."""
        conv = conv or {}
        with FakeTensorMode():
            paths = {}

            def fake(v, path):
                if isinstance(v, TensorVar):
                    m = v.meta
                    t = torch.empty_strided(m.shape, m.stride(), dtype=conv.get(path, m.dtype), device=device)
                    paths[id(t)] = path
                    return t
                if type(v) in (list, tuple):
                    return type(v)(fake(x, path + (i,)) for i, x in enumerate(v))
                return v
            fa = [fake(v, ("a", i)) for i, v in enumerate(args)]
            fk = {k: fake(v, ("k", k)) for k, v in kwargs.items()}
            dev = torch.device(device).type
            prev = global_state(dev)
            torch.set_autocast_enabled(dev, autocast)
            torch.set_autocast_dtype(dev, lp)
            try:
                with Record() as rec:
                    out = getattr(fa[0], method)(*fa[1:], **fk) if method else fn(*fa, **fk)
            finally:
                torch.set_autocast_enabled(dev, prev[0])
                torch.set_autocast_dtype(dev, prev[1])
        outs = []
        _out_dtypes(out, outs)
        casts = {}
        for i, d in rec.casts:
            if i in paths:
                if casts.get(paths[i], d) != d:
                    raise Unsupported(f"{name} under autocast casts an argument twice")
                casts[paths[i]] = d
        return outs, casts

    quiet = logging.getLogger("torch._subclasses.fake_tensor")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # a meta kernel refusing mixed dtypes logs an error before raising
    try:
        try:  # casts the op makes itself (an argument converted by its own decomposition)
            plain_casts = run(False)[1]
        except Exception:  # without autocast the op refuses these dtypes (baddbmm of bf16 and f32)
            plain_casts = {}
        auto_out, auto_casts = run(True)
        plan = {p: d for p, d in auto_casts.items() if plain_casts.get(p) != d}
        got, _ = run(False, plan)
        if got != auto_out:
            # fp32_set_opt_dtype (CUDA's sum, softmax...): float32 from half arguments without a cast
            plan = dict(plan)
            for p, t in _paths(args, kwargs):
                if plan.get(p, t.meta.dtype) in _HALF:
                    plan[p] = torch.float32
            got, _ = run(False, plan)
            if got != auto_out:
                return f"{name} under autocast: its result's dtype is not explained by casts of its arguments"
    except Unsupported as e:
        return e.reason
    except Exception as e:  # eager's autocast raises too (an unsupported mix of dtypes), or no fake kernel
        return f"{name} under autocast: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    finally:
        quiet.setLevel(level)
    return tuple(sorted(plan.items(), key=lambda pd: repr(pd[0])))


def _paths(args, kwargs):
    found = []
    _tensors(list(args), ("a",), found)
    for k, v in kwargs.items():
        _tensors(v, ("k", k), found)
    return found


def _out_dtypes(out, acc):
    if isinstance(out, torch.Tensor):
        acc.append(out.dtype)
    elif isinstance(out, (list, tuple)):
        for x in out:
            _out_dtypes(x, acc)
    else:
        acc.append(type(out).__name__)
