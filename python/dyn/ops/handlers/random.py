"""Handlers of random ops: torch.rand/randn/randint (and _like), torch.normal of numbers, torch.bernoulli,
Tensor.uniform_/normal_/exponential_/random_(from, to)/cauchy_/log_normal_/geometric_, F.dropout/dropout1d/2d/3d (nn.Dropout*). Each records
graph.random / graph.bernoulli / graph.dropout (graph/random.py: the compiled graph draws Philox numbers
from a seed taken from torch's generator at each call; the eager backend runs PyTorch's op). Forms whose
eager numbers these cannot reproduce on the eager backend (a generator argument, a non-contiguous
destination) are left to the generic node. Inside torch.testing's wrapper_set_seed (Graph.eager_seed set) each
of them records one seeded_random node instead: eager's own draw from the wrapper's seed (_seeded); torch.normal
of tensors, multinomial, rrelu and alpha_dropout have that form only."""
import torch
import torch.nn.functional as F

from ..._ops_generated import HANDLERS
from ...errors import Unsupported
from ...graph.random import next_offset
from .common import _graph_device, _out, _shape_args, inplace
from ..tensor import TensorVar
from .generic import generic_call
from ...dynamic.symbolic import meta_empty
from .registry import functional, in_torch, method


_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_INTS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _node(o, op, inputs, shape, dtype, callee, **attrs):
    """A random node: its offset distinct in the graph, `seeded` (never dropped unused: eager draws anyway),
    made on the graph's device by the eager backend. Inside wrapper_set_seed: eager's draw (_seeded)."""
    meta = meta_empty(tuple(shape), dtype=dtype, device="meta")
    if o.g.eager_seed is not None:
        return _seeded(o, op, inputs, meta, attrs)
    o.g.device = o.tr.device  # made on the graph's device, as constants are (a graph of no inputs has no other)
    attrs.update(o.g._on_device())
    return o.node(op, inputs, meta, offset=next_offset(o.g), seeded=True, callee=callee, **attrs)


_FILLS = ("uniform", "normal", "exponential", "integers", "cauchy", "geometric", "log_normal")


def _seeded_node(o, kind, inputs, meta, a=0.0, b=0.0, n=0):
    """One draw of eager's from Graph.eager_seed (GraphLibraryOps.td seeded_random / seeded_normal)."""
    if kind not in _FILLS + ("multinomial", "normal_tensors", "normal_tensor_mean", "normal_tensor_std") and not o.dest_shadow(inputs[0]).is_contiguous():
        raise Unsupported(f"{kind} of a tensor that is not contiguous (eager draws in its memory order)")
    seed = o.g.take_eager_seed(kind)
    if kind == "normal_tensors":
        return o.node("seeded_normal", list(inputs), meta, seed=seed)
    return o.node("seeded_random", list(inputs), meta, kind=kind, seed=seed, a=float(a), b=float(b), n=int(n))


def _seeded(o, op, inputs, meta, attrs):
    """The Philox node `op` as eager's draw: fills of a tensor of the result's shape (its values unused),
    bernoulli(p), and dropout in eager's form (in place or not, per element or per feature map)."""
    if op == "random":
        carrier = o.full(tuple(meta.shape), 0, meta.dtype)
        return _seeded_node(o, attrs["distribution"], (carrier,), meta, attrs["a"], attrs["b"])
    if op == "bernoulli":
        return _seeded_node(o, "bernoulli", inputs, meta)
    feature = attrs["feature_dims"]
    kind = ("dropout" if feature == -1 else "feature_dropout") + ("_" if attrs["eager_inplace"] else "")
    return _seeded_node(o, kind, inputs, meta, attrs["p"], 0.0, feature)


def _random(o, shape, dtype, distribution, a, b, callee):
    if dtype not in (_FLOATS + _INTS if distribution == "integers" else _FLOATS):
        raise Unsupported(f"{callee} of dtype {dtype}")
    if any(d == 0 for d in shape):
        return o.full(shape, 0, dtype)  # nothing drawn (eager draws nothing either)
    return _node(o, "random", (), shape, dtype, callee, distribution=distribution, a=float(a), b=float(b))


def _plain(generator, layout, pin_memory):
    if generator is not None:
        raise Unsupported("random op with a generator argument")
    if layout not in (None, torch.strided):
        raise Unsupported(f"random op with layout={layout}")


def _factory(distribution, name):
    def h(o, *size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
        _plain(generator, layout, pin_memory)
        _graph_device(o, device, "random draw")
        if requires_grad:
            raise Unsupported(f"torch.{name}(requires_grad=True)")
        r = _random(o, _shape_args(size), dtype or torch.get_default_dtype(), distribution, 0, 1, f"torch.{name}")
        return _out(o, out, r)
    return h


in_torch("rand")(_factory("uniform", "rand"))
in_torch("randn")(_factory("normal", "randn"))


def _dense_like(o, x, name):
    """x's layout is the result's (empty_like keeps it): the graph's row-major numbers are eager's only for a
    contiguous x."""
    if not o.dest_shadow(x).is_contiguous():
        raise Unsupported(f"{name} of a tensor that is not contiguous")


def _like(distribution, name):
    def h(o, x, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
          pin_memory=False, generator=None):
        o.check(x)
        _plain(generator, layout, pin_memory)
        if device is not None:
            _graph_device(o, device, "random draw")
        if requires_grad or memory_format not in (None, torch.preserve_format, torch.contiguous_format):
            raise Unsupported(f"torch.{name} with requires_grad or memory_format")
        if memory_format is None or memory_format == torch.preserve_format:
            _dense_like(o, x, name)
        return _random(o, tuple(x.meta.shape), dtype or x.meta.dtype, distribution, 0, 1, f"torch.{name}")
    return h


in_torch("rand_like")(_like("uniform", "rand_like"))
in_torch("randn_like")(_like("normal", "randn_like"))


def _int_bounds(low, high, dtype, name):
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)):
        raise Unsupported(f"{name} with bounds that are not Python ints")
    if low >= high:
        raise Unsupported(f"{name} with low >= high (eager raises)")
    if dtype in _INTS:
        info = torch.iinfo(dtype)
        if low < info.min or high - 1 > info.max:
            raise Unsupported(f"{name}: bounds outside {dtype} (eager raises)")
    if max(abs(low), abs(high)) >= 2 ** 62:
        raise Unsupported(f"{name} with bounds of 2**62 or more")


@in_torch("randint")
def _randint(o, *args, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False, size=None, low=None, high=None):
    """torch.randint(high, size) / randint(low, high, size)."""
    args = list(args)
    if size is None and args:
        size = args.pop()
    if high is None and args:
        high = args.pop()
    if low is None:
        low = args.pop() if args else 0
    if size is None or high is None or args:
        raise Unsupported("randint with unexpected arguments")
    _plain(generator, layout, pin_memory)
    _graph_device(o, device, "random draw")
    dtype = dtype or torch.int64
    _int_bounds(low, high, dtype, "torch.randint")
    if requires_grad:
        raise Unsupported("torch.randint(requires_grad=True)")
    return _out(o, out, _random(o, tuple(size), dtype, "integers", low, high, "torch.randint"))


@in_torch("randint_like")
def _randint_like(o, x, *args, low=None, high=None, dtype=None, layout=None, device=None, requires_grad=False,
                  memory_format=None, pin_memory=False, generator=None):
    o.check(x)
    args = list(args)
    if high is None and args:
        high = args.pop()
    if low is None:
        low = args.pop() if args else 0
    if high is None or args:
        raise Unsupported("randint_like with unexpected arguments")
    _plain(generator, layout, pin_memory)
    if device is not None:
        _graph_device(o, device, "random draw")
    if requires_grad or memory_format not in (None, torch.preserve_format, torch.contiguous_format):
        raise Unsupported("torch.randint_like with requires_grad or memory_format")
    if memory_format is None or memory_format == torch.preserve_format:
        _dense_like(o, x, "randint_like")
    dtype = dtype or x.meta.dtype
    _int_bounds(low, high, dtype, "torch.randint_like")
    return _random(o, tuple(x.meta.shape), dtype, "integers", low, high, "torch.randint_like")


@in_torch("normal")
def _normal(o, *args, **kwargs):
    """torch.normal(mean, std, size) of Python numbers; tensor means and stds: eager's draw inside
    wrapper_set_seed, else the generic node."""
    tensors = [v for v in args[:2] if isinstance(v, TensorVar)]
    if len(args) == 2 and not kwargs and tensors and o.g.eager_seed is not None and \
            all(v.meta.dtype in _FLOATS for v in tensors) and \
            all(isinstance(v, TensorVar) or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in args):
        mean, std = args
        o.check(*tensors)
        try:
            meta = torch.normal(*[v.meta if isinstance(v, TensorVar) else v for v in args])
        except (RuntimeError, ValueError, TypeError) as e:
            raise Unsupported(f"torch.normal: {e}")  # eager raises
        if len(tensors) == 2:
            return _seeded_node(o, "normal_tensors", (mean, std), meta)
        if isinstance(mean, TensorVar):  # normal(mean tensor, std number)
            return _seeded_node(o, "normal_tensor_mean", (mean,), meta, std)
        return _seeded_node(o, "normal_tensor_std", (std,), meta, mean)
    numbers = len(args) >= 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in args[:2])
    if not numbers or len(args) + ("size" in kwargs) != 3 or len(args) > 3:
        return generic_call(o, torch.normal, args, kwargs)
    return _normal_numbers(o, *args, **kwargs)


def _normal_numbers(o, mean, std, size, *, generator=None, out=None, dtype=None, layout=None, device=None,
                    requires_grad=False, pin_memory=False):
    _plain(generator, layout, pin_memory)
    _graph_device(o, device, "random draw")
    if std < 0:
        raise Unsupported("torch.normal with std < 0 (eager raises)")
    if requires_grad:
        raise Unsupported("torch.normal(requires_grad=True)")
    return _out(o, out, _random(o, tuple(size), dtype or torch.get_default_dtype(), "normal", mean, std,
                                "torch.normal"))


@in_torch("bernoulli")
@method("bernoulli")
def _bernoulli(o, x, *args, generator=None, out=None, **kwargs):
    """torch.bernoulli(p) of a float tensor p; bernoulli(x, p=float) and generators: the generic node."""
    if args or kwargs or generator is not None or x.meta.dtype not in _FLOATS:
        return generic_call(o, torch.bernoulli, (x,) + args, dict(kwargs, generator=generator, out=out))
    o.check(x)
    if o.needs_grad(x):
        raise Unsupported("torch.bernoulli of a tensor that requires grad")
    if x.meta.numel() == 0:
        return _out(o, out, o.full(tuple(x.meta.shape), 0, x.meta.dtype))
    return _out(o, out, _node(o, "bernoulli", (x,), x.meta.shape, x.meta.dtype, "torch.bernoulli"))


def _fill_random(name, distribution, defaults):
    """Tensor.<name>(a, b): x filled in place with random numbers."""
    def h(o, x, *args, generator=None, **kwargs):
        o.check(x)
        params = list(defaults)
        keys = {"uniform_": ("from", "to"), "normal_": ("mean", "std"), "exponential_": ("lambd",),
                "random_": ("from", "to"), "cauchy_": ("median", "sigma"), "geometric_": ("p",),
                "log_normal_": ("mean", "std")}[name]
        for i, v in enumerate(args):
            params[i] = v
        for k, v in kwargs.items():
            if k not in keys:
                raise Unsupported(f"Tensor.{name}({k}=...)")
            params[keys.index(k)] = v
        if generator is not None:
            raise Unsupported(f"Tensor.{name} with a generator")
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in params if v is not None):
            raise Unsupported(f"Tensor.{name} with parameters that are not numbers")
        if not o.dest_shadow(x).is_contiguous():
            raise Unsupported(f"Tensor.{name} of a tensor that is not contiguous")
        a, b = (params + [0])[:2]
        if a is None:
            raise Unsupported(f"Tensor.{name} without its parameter (eager raises)")
        dtype = x.meta.dtype
        if distribution == "integers":
            if b is None or dtype not in _INTS + _FLOATS:
                raise Unsupported(f"Tensor.{name} without bounds")
            _int_bounds(a, b, dtype, f"Tensor.{name}")
        elif distribution == "uniform" and a > b:
            raise Unsupported(f"Tensor.{name} with from > to (eager raises)")
        elif distribution == "normal" and b < 0:
            raise Unsupported(f"Tensor.{name} with std < 0 (eager raises)")
        elif distribution == "exponential" and not a > 0:
            raise Unsupported(f"Tensor.{name} with lambd <= 0 (eager raises)")
        elif distribution == "geometric" and not 0 < a < 1:
            raise Unsupported(f"Tensor.{name} with p outside (0, 1) (eager raises)")
        elif distribution in ("cauchy", "log_normal") and not b > 0:
            raise Unsupported(f"Tensor.{name} with a scale <= 0 (eager raises)")
        new = _random(o, tuple(x.meta.shape), dtype, distribution, a, b, f"Tensor.{name}")
        return inplace(o, x, new, lambda s: getattr(s, name)(*params))
    return h


method("uniform_")(_fill_random("uniform_", "uniform", [0.0, 1.0]))
method("normal_")(_fill_random("normal_", "normal", [0.0, 1.0]))
method("exponential_")(_fill_random("exponential_", "exponential", [1.0]))
method("random_")(_fill_random("random_", "integers", [0, None]))
method("cauchy_")(_fill_random("cauchy_", "cauchy", [0.0, 1.0]))
method("geometric_")(_fill_random("geometric_", "geometric", [None]))
method("log_normal_")(_fill_random("log_normal_", "log_normal", [1.0, 2.0]))


@method("bernoulli_")
def _bernoulli_(o, x, p=0.5, *, generator=None):
    """Tensor.bernoulli_(p) of a float tensor with a number p (torchvision's stochastic depth fills an
    empty tensor so): a graph.bernoulli of p, written into x. A tensor p and generators: the generic node."""
    o.check(x)
    if generator is not None or isinstance(p, bool) or not isinstance(p, (int, float)) or \
            x.meta.dtype not in _FLOATS:
        return generic_call(o, torch.Tensor.bernoulli_, (x, p), dict(generator=generator))
    if not 0 <= p <= 1:
        raise Unsupported("Tensor.bernoulli_ with p outside [0, 1] (eager raises)")
    if not o.dest_shadow(x).is_contiguous():
        raise Unsupported("Tensor.bernoulli_ of a tensor that is not contiguous")
    probs = o.full(tuple(x.meta.shape), float(p), x.meta.dtype)
    new = _node(o, "bernoulli", (probs,), x.meta.shape, x.meta.dtype, "Tensor.bernoulli_", fill_p=float(p))
    return inplace(o, x, new, lambda s: s.bernoulli_(p))


def _dropout_node(o, x, p, fn, feature_dims, inplace_=False):
    """x with elements (or feature maps) zeroed with probability p, the rest scaled by 1/(1-p).
    eager_inplace: the eager backend runs eager's in-place form (on CUDA, F.dropout(inplace=True) draws
    through bernoulli_, the out-of-place form through the fused native_dropout: other numbers)."""
    if p == 1:  # eager: input * 0, no draw
        return o.binary("mul", x, 0)
    return _node(o, "dropout", (x,), x.meta.shape, x.meta.dtype, f"F.{fn}", p=float(p),
                 feature_dims=feature_dims, fn=fn, eager_inplace=bool(inplace_))


def _dropout_args(o, x, p, training, name):
    o.check(x)
    if not isinstance(p, (int, float)) or isinstance(p, bool) or not 0 <= p <= 1:
        raise Unsupported(f"{name} with p={p!r} (eager raises)")
    if not isinstance(training, bool):
        raise Unsupported(f"{name} with training={training!r}")
    if training and x.meta.dtype not in _FLOATS:
        raise Unsupported(f"{name} of {x.meta.dtype}")


def _dropout(o, x, p=0.5, training=True, inplace_=False, fn="dropout", feature_dims=-1):
    _dropout_args(o, x, p, training, f"F.{fn}")
    if not training or p == 0 or x.meta.numel() == 0:
        return x  # eager returns its input
    new = _dropout_node(o, x, p, fn, feature_dims, inplace_)
    if not inplace_:
        return new
    return inplace(o, x, new, lambda s: getattr(F, fn)(s, p, True, True))


functional("dropout")(lambda o, x, p=0.5, training=True, inplace=False: _dropout(o, x, p, training, inplace))
in_torch("dropout")(lambda o, x, p, train: _dropout(o, x, p, train))  # torch.dropout


def _feature(fn, batched_rank):
    """F.dropout1d/2d/3d: one draw per channel, the leading dims of a batched (N, C, ...) input (2) or an
    unbatched (C, ...) one (1); other ranks eager warns about or rejects: the generic node."""
    def h(o, x, p=0.5, training=True, inplace=False):
        o.check(x)
        rank = x.meta.dim()
        if rank not in (batched_rank, batched_rank - 1):
            return generic_call(o, getattr(F, fn), (x,), dict(p=p, training=training, inplace=inplace))
        # dropout2d reads a 3-d input as (N, C, L), not as an unbatched (C, H, W) one (eager warns)
        batched = rank == batched_rank or fn == "dropout2d"
        return _dropout(o, x, p, training, inplace, fn, 2 if batched else 1)
    return h


functional("dropout1d")(_feature("dropout1d", 3))
functional("dropout2d")(_feature("dropout2d", 4))
functional("dropout3d")(_feature("dropout3d", 5))


@in_torch("multinomial")
def _multinomial(o, input, num_samples, replacement=False, *, generator=None, out=None):
    """torch.multinomial: eager's draw inside wrapper_set_seed, else the generic node."""
    if o.g.eager_seed is None or generator is not None or out is not None or not isinstance(input, TensorVar):
        return generic_call(o, torch.multinomial, (input, num_samples, replacement),
                            dict(generator=generator, out=out))
    o.check(input)
    try:
        meta = torch.multinomial(input.meta, num_samples, replacement)
    except (RuntimeError, ValueError, TypeError) as e:
        raise Unsupported(f"torch.multinomial: {e}")  # eager raises
    return _seeded_node(o, "multinomial", (input,), meta, 0.0, float(bool(replacement)), num_samples)


@functional("rrelu")
def _rrelu(o, x, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """F.rrelu: out of training leaky_relu with the mean slope (eager's rrelu_with_noise); in training,
    eager's draw inside wrapper_set_seed; otherwise the generic node."""
    if not training and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (lower, upper)):
        return HANDLERS["torch.nn.functional.leaky_relu"](o, x, (float(lower) + float(upper)) / 2, inplace)
    if not (training and not inplace and o.g.eager_seed is not None and isinstance(x, TensorVar)):
        return generic_call(o, F.rrelu, (x,), dict(lower=lower, upper=upper, training=training, inplace=inplace))
    o.check(x)
    if x.meta.dtype not in _FLOATS:
        raise Unsupported(f"F.rrelu of {x.meta.dtype}")
    return _seeded_node(o, "rrelu", (x,), x.meta, lower, upper)


def _alpha(fn, kind):
    """F.alpha_dropout / feature_alpha_dropout: the input itself when nothing is dropped (eager returns it);
    eager's draw inside wrapper_set_seed; otherwise the generic node."""
    def h(o, x, p=0.5, training=False, inplace=False):
        _dropout_args(o, x, p, training, f"F.{fn}")
        if not training or p == 0 or x.meta.numel() == 0:
            return x
        if inplace or o.g.eager_seed is None:
            return generic_call(o, getattr(F, fn), (x,), dict(p=p, training=training, inplace=inplace))
        return _seeded_node(o, kind, (x,), x.meta, p)
    return h


functional("alpha_dropout")(_alpha("alpha_dropout", "alpha_dropout"))
functional("feature_alpha_dropout")(_alpha("feature_alpha_dropout", "feature_alpha_dropout"))
