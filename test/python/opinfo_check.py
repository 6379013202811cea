"""Drives PyTorch's OpInfos (torch.testing._internal.common_methods_invocations.op_db) through
dyn.compile(backend="dyn", fullgraph=True) and compares every result with eager's. Shared by
test/python/test_opinfo.py (the ops dyn claims, strict) and benchmarks/opinfo_coverage.py (all of op_db).

One sample is checked by `check_sample`; it raises Mismatch, whose `kind` says what differs:

- "not native": capture raised dyn.Unsupported (a graph break under fullgraph=True), the dyn backend ran
  the graph eagerly (a fallback, dyn.stats()["eager_graphs"]), capture or the compiler failed internally,
  or dyn warned.
- "wrong": a result differs from eager's: structure, dtype, shape, device, value (torch.testing.assert_close
  with its default tolerances for the dtype, NaNs equal), memory layout, aliasing, or the values of the
  inputs afterwards (in-place updates).

Layout and aliasing: an output that eager returns as a view of an input must be a view of the same input
with the same sizes, strides and storage offset in dyn too; an output eager returns as a new tensor must be
new in dyn too (`x.to(dtype, copy=True)`, `x.float(memory_format=...)`). Strides of new tensors are compared
(dims of size 1 left out) when every tensor input is contiguous: eager then defines them (contiguous, or
the memory format asked for). For non-contiguous inputs eager's TensorIterator propagates the inputs'
layout while dyn returns contiguous results: values are compared, strides not (docs/ops.md)."""
import copy
import itertools
import os
import warnings

import torch

import dyn
from dyn import backends as B
from dyn.ops import TENSOR_ATTRS
from dyn.ops.claims import claims

VARIANTS = ("function", "method", "inplace")
# ops whose results have no defined values (uninitialized memory): their metadata is compared
NO_VALUES = {"empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided", "empty_permuted"}
# random ops: compiled, they draw Philox numbers from a seed taken from torch's generator, not eager's
# numbers (docs/random.md); their metadata is compared here, their distributions in test_random.py. Their
# function variants call torch.testing's wrapper_set_seed, inside which dyn draws eager's numbers: values
# compared.
RANDOM = {"uniform", "normal", "exponential", "cauchy", "geometric", "log_normal", "bernoulli", "rand_like", "randn_like", "randint_like", "randint",
          "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d"}


class Mismatch(AssertionError):
    def __init__(self, kind, message):
        self.kind = kind
        super().__init__(f"{kind}: {message}")


def full_name(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def variant_callable(op, kind):
    """The OpInfo's variant as torch's callable (function) or Tensor method name (method, inplace)."""
    if kind == "function":
        return op.op
    v = op.method_variant if kind == "method" else op.inplace_variant
    return getattr(v, "__name__", None) if v is not None else None


def _wrapped(fn):
    """The op a torch.testing wrapper calls alone (`lambda x, *args: x.contiguous(*args)`, `lambda x: x.T`,
    `lambda c, x, y, **k: torch.where(c, x, y, **k)`): ("method", name) or ("function", callable); None
    for anything else (a wrapper calling several things, setting the seed)."""
    code = getattr(fn, "__code__", None)
    if code is None or os.path.join("torch", "testing", "_internal", "") not in code.co_filename:
        return None
    names = code.co_names
    if len(names) == 1:
        return "method", names[0]
    if names and names[0] == "torch":
        f = torch
        for n in names[1:]:
            f = getattr(f, n, None)
        return ("function", f) if callable(f) else None
    return None


def _claimed_function(fn):
    """dyn claims an OpInfo's function variant: a torch callable with a handler, or a torch.testing
    wrapper (which capture traces into like user code) of one op dyn claims."""
    if claims(function=fn):
        return True
    w = _wrapped(fn)
    if w is None:
        return False
    if w[0] == "function":
        return claims(function=w[1])
    return claims(method=w[1]) or w[1] in TENSOR_ATTRS


def claimed_variants(op):
    """The variants of an OpInfo that dyn claims to capture (dyn.ops.claims)."""
    out = []
    if _claimed_function(op.op):
        out.append("function")
    for kind in ("method", "inplace"):
        name = variant_callable(op, kind)
        if name is not None and claims(method=name):
            out.append(kind)
    return out


def make_caller(op, kind):
    """A fresh Python function calling the variant the way user code does: fn(*args) or x.name(*args)."""
    if kind == "function":
        fn = op.op

        def call(*args, **kwargs):
            return fn(*args, **kwargs)
        return call
    name = variant_callable(op, kind)

    def call_method(x, *args, **kwargs):
        return getattr(x, name)(*args, **kwargs)
    return call_method


def samples(op, dtype, limit, device="cpu", seed=0):
    """The first `limit` sample inputs (seeded), without gradients."""
    torch.manual_seed(seed)
    return list(itertools.islice(op.sample_inputs(device, dtype, requires_grad=False), limit))


def _tensors(v, out):
    if isinstance(v, torch.Tensor) and v.layout == torch.strided:
        out.append(v)
    elif isinstance(v, (tuple, list)):
        for x in v:
            _tensors(x, out)
    elif isinstance(v, dict):
        for x in v.values():
            _tensors(x, out)
    return out


def _all_tensors(v):
    if isinstance(v, torch.Tensor):
        yield v
    elif isinstance(v, (tuple, list)):
        for x in v:
            yield from _all_tensors(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from _all_tensors(x)


def _alias(t, inputs):
    """Index of the input t shares memory with, else None."""
    if t.numel() == 0 or t.layout != torch.strided:
        return None
    p = t.untyped_storage().data_ptr()
    for i, x in enumerate(inputs):
        if x.numel() and x.untyped_storage().data_ptr() == p:
            return i
    return None


def _strides(t):
    return tuple(s for n, s in zip(t.shape, t.stride()) if n > 1)


def _error(t, exact):
    """|t - exact| elementwise, in float64: 0 where both are the same (infinities, NaNs), inf where t alone
    is NaN."""
    t = t.double()
    e = (t - exact).abs()
    e[(t == exact) | (t.isnan() & exact.isnan())] = 0
    return e.nan_to_num(nan=float("inf"))


def _closer_to_exact(got, want, exact):
    """Where dyn and eager differ beyond the dtype's tolerance, whether dyn is, at every such element, at
    least as close as eager to `exact` (eager's op on the inputs in float64). Eager's low-precision kernels
    round intermediates (bf16 batch_norm's statistics) or are wrong (bf16 fmod gives NaN for some finite
    operands); a result closer to the exact value is not a wrong one. Tolerances are not widened."""
    if exact is None or not want.is_floating_point() or exact.shape != want.shape:
        return False
    differ = ~torch.isclose(got.double(), want.double(), rtol=_rtol(want.dtype), atol=_atol(want.dtype),
                            equal_nan=True)
    return bool((_error(got, exact)[differ] <= _error(want, exact)[differ]).all())


def _rtol(dtype):
    return torch.testing._comparison.default_tolerances(dtype)[0]


def _atol(dtype):
    return torch.testing._comparison.default_tolerances(dtype)[1]


def _exact_reference(call, args, kwargs):
    """call on the inputs with floating tensors converted to float64 (None where that raises)."""
    def up(v):
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            return v.detach().to(torch.float64)
        if isinstance(v, (tuple, list)):
            return type(v)(up(x) for x in v)
        if isinstance(v, dict):
            return {k: up(x) for k, x in v.items()}
        return v
    a, k = up(copy.deepcopy((args, kwargs)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call(*a, **k)
    except Exception:
        return None


def _compare(got, want, where, ctx, path=()):
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            raise Mismatch("wrong", f"{where}: a {type(got).__name__}, eager gives a tensor")
        if got.dtype != want.dtype or got.shape != want.shape or got.device != want.device:
            raise Mismatch("wrong", f"{where}: {got.dtype} {tuple(got.shape)} on {got.device}, eager gives "
                                    f"{want.dtype} {tuple(want.shape)} on {want.device}")
        ga, wa = _alias(got, ctx["dyn_ins"]), _alias(want, ctx["eager_ins"])
        if ga != wa:
            what = lambda a: "a new tensor" if a is None else f"a view of input {a}"  # noqa: E731
            raise Mismatch("wrong", f"{where}: {what(ga)}, eager gives {what(wa)}")
        if wa is not None:
            if got.stride() != want.stride() or got.storage_offset() != want.storage_offset():
                raise Mismatch("wrong", f"{where}: view with strides {got.stride()} offset {got.storage_offset()}"
                                        f", eager's has {want.stride()} offset {want.storage_offset()}")
        elif ctx["layout_defined"] and want.numel() and _strides(got) != _strides(want):
            raise Mismatch("wrong", f"{where}: strides {got.stride()}, eager gives {want.stride()}")
        if ctx["values"]:
            try:
                torch.testing.assert_close(got, want, equal_nan=True, check_stride=False)
            except AssertionError as e:
                if not _closer_to_exact(got, want, ctx["reference"](path)):
                    raise Mismatch("wrong", f"{where}: {' '.join(str(e).split())}") from None
        return
    if isinstance(want, (tuple, list)):
        if type(got) is not type(want) or len(got) != len(want):
            raise Mismatch("wrong", f"{where}: {type(got).__name__} of {len(got) if hasattr(got, '__len__') else '?'}"
                                    f", eager gives {type(want).__name__} of {len(want)}")
        for k, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{where}[{k}]", ctx, path + (k,))
        return
    if type(got) is not type(want) or got != want:
        raise Mismatch("wrong", f"{where}: {got!r}, eager gives {want!r}")


def _compile(call, via):
    """call compiled by dyn: through dyn's own capture, or through TorchDynamo (torch.compile's capture,
    dyn's backend: dyn/fx)."""
    if via == "dyn.compile":
        return dyn.compile(call, backend="dyn", fullgraph=True)
    torch._dynamo.reset()  # one code object for every sample: no recompile limit, no automatic dynamic shapes
    return torch.compile(call, backend="dyn", fullgraph=True)


def check_sample(op, kind, sample, device="cpu", via="dyn.compile"):
    """Runs one sample through eager and through dyn (via "dyn.compile" or "torch.compile"); raises
    Mismatch where they differ. Returns False when eager itself raises for the sample (nothing to
    compare), True otherwise."""
    call = make_caller(op, kind)
    args, kwargs = (sample.input, *sample.args), dict(sample.kwargs)
    if any(t.layout != torch.strided for t in _all_tensors((args, kwargs))):
        raise Mismatch("not native", "a sparse (not strided) input: dyn captures strided tensors")
    e_args, e_kwargs = copy.deepcopy((args, kwargs))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = call(*e_args, **e_kwargs)
    except Exception:
        return False
    d_args, d_kwargs = copy.deepcopy((args, kwargs))
    dyn.reset()
    compiled = _compile(call, via)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = compiled(*d_args, **d_kwargs)
        except dyn.Unsupported as e:
            raise Mismatch("not native", f"Unsupported: {e.reason}") from None
        except torch._dynamo.exc.Unsupported as e:  # a TorchDynamo graph break (fullgraph=True)
            raise Mismatch("not native", f"TorchDynamo: {' '.join(str(e).split())[:300]}") from None
        except Exception as e:
            raise Mismatch("not native", f"{type(e).__name__}: {' '.join(str(e).split())[:300]}") from None
    stats = dyn.stats()
    fallbacks = [g["reason"] for g in stats["eager_graphs"] if g["reason"] != B.EMPTY]
    if fallbacks:
        raise Mismatch("not native", f"fallback: {fallbacks[0]}")
    if stats["internal_failures"]:
        raise Mismatch("not native", "internal failure")
    empty = sum(g["reason"] == B.EMPTY for g in stats["eager_graphs"])
    if via != "dyn.compile" and stats["compiled_graphs"] + empty < stats["graphs"]:
        raise Mismatch("not native", "a graph not compiled by dyn")
    dyn_warnings = [str(w.message) for w in caught if str(w.message).startswith("dyn")]
    if dyn_warnings:
        raise Mismatch("not native", f"warning: {dyn_warnings[0]}")
    e_ins, d_ins = _tensors((e_args, e_kwargs), []), _tensors((d_args, d_kwargs), [])
    cache = []

    def reference(path):
        if not cache:
            cache.append(_exact_reference(call, args, kwargs))
        r = cache[0]
        for k in path:
            r = r[k] if isinstance(r, (tuple, list)) and k < len(r) else None
        return r.double() if isinstance(r, torch.Tensor) else None
    ctx = dict(dyn_ins=d_ins, eager_ins=e_ins, values=op.name not in NO_VALUES and (op.name not in RANDOM or kind == "function"), reference=reference,
               layout_defined=all(t.is_contiguous() for t in _tensors((args, kwargs), [])))
    if kind == "inplace" and (got is d_args[0]) != (want is e_args[0]):
        raise Mismatch("wrong", "the in-place variant does not return its input, as eager's does")
    _compare(got, want, "result", ctx)
    for k, (g, w) in enumerate(zip(d_ins, e_ins)):
        if ctx["values"] and w is not want:  # an in-place result: compared above
            try:
                torch.testing.assert_close(g, w, equal_nan=True, check_stride=False)
            except AssertionError as e:
                raise Mismatch("wrong", f"input {k} afterwards: {' '.join(str(e).split())}") from None
    return True


def describe(sample):
    """A short description of a sample for messages: shapes and non-tensor arguments."""
    def d(v):
        if isinstance(v, torch.Tensor):
            s = f"T{list(v.shape)}"
            if v.layout != torch.strided:
                return s + f"({v.layout})"
            return s + ("" if v.is_contiguous() else "nc")
        if isinstance(v, (tuple, list)):
            return "(" + ", ".join(d(x) for x in v) + ")"
        return repr(v)
    parts = [d(sample.input)] + [d(a) for a in sample.args] + [f"{k}={d(v)}" for k, v in sample.kwargs.items()]
    return ", ".join(parts)
