"""Handlers of ops on the representation of floating-point numbers, without a bit cast in the graph dialect:
frexp and nextafter. Both need x's binary exponent E (2^E <= |x| < 2^(E+1)): floor(log2|x|) in float64,
corrected against exact powers of two (a constant table of 2^k, k in [-1074, 1023], gathered at the computed
exponents) until 2^E <= |x| < 2^(E+1) holds. Then everything is exact arithmetic on powers of two in float64
(every float16, bfloat16 and float32 is a float64, and so are the results): frexp's mantissa is x * 2^-(E+1)
(two factors, each in range), nextafter adds or subtracts x's unit in the last place of its dtype (half of it
where x is a power of two and moves toward 0)."""
import torch

from ...errors import Unsupported
from ..tensor import TensorVar

H = {}  # torch.<name> (and Tensor.<name>) -> handler

_LO, _HI = -1074, 1023  # float64's exponents of its powers of two (subnormal to largest)
# significand bits (with the implicit one) and smallest normal exponent of each dtype
_FORMAT = {torch.float64: (53, -1022), torch.float32: (24, -126), torch.bfloat16: (8, -126),
           torch.float16: (11, -14)}


def _pow2(o, k):
    """2^k exactly (float64) for an int64 tensor k in [_LO, _HI]: gathered from the constant table."""
    table = o.dense(torch.tensor([2.0 ** e for e in range(_LO, _HI + 1)], dtype=torch.float64))
    shape = tuple(k.meta.shape)
    n = k.meta.numel()
    idx = o.reshape(o.binary("sub", k, _LO), (n,))
    return o.reshape(o.index_select(table, 0, idx, checked=True), shape)


def _exponent(o, a):
    """E with 2^E <= a < 2^(E+1) for a finite a > 0 (float64); elsewhere some E in [_LO, _HI]."""
    usable = o.binary("logical_and", o.binary("gt", a, 0.0), o.binary("lt", a, float("inf")))
    lg = o.where(usable, o.unary("log2", o.where(usable, a, 1.0)), 0.0)
    e = o.convert(o.clamp(o.unary("floor", lg), float(_LO), float(_HI)), torch.int64)
    for _ in range(2):  # log2 is off by far less than one binade: two corrections each way are plenty
        e = o.where(o.binary("logical_and", o.binary("gt", _pow2(o, e), a), o.binary("gt", e, _LO)),
                    o.binary("sub", e, 1), e)
        up = o.clamp(o.binary("add", e, 1), _LO, _HI)
        e = o.where(o.binary("logical_and", o.binary("le", _pow2(o, up), a), o.binary("lt", e, _HI)), up, e)
    return e


def _frexp(o, x, *, out=None):
    """x = mantissa * 2^exponent with |mantissa| in [0.5, 1); 0, inf and NaN give (x, 0) (eager's)."""
    o.check(x)
    if out is not None:
        raise Unsupported("frexp(out=...)")
    if x.meta.dtype not in _FORMAT:
        raise Unsupported(f"frexp of a {x.meta.dtype} tensor (eager raises)")
    xd = o.convert(x, torch.float64)
    a = o.unary("abs", xd)
    finite = o.binary("logical_and", o.binary("gt", a, 0.0), o.binary("lt", a, float("inf")))
    e1 = o.binary("add", _exponent(o, a), 1)  # frexp's exponent
    k = o.unary("neg", e1)  # x * 2^k in two factors, each within float64's range
    k1 = o.div(k, 2, "floor")
    m = o.binary("mul", o.binary("mul", xd, _pow2(o, k1)), _pow2(o, o.binary("sub", k, k1)))
    mantissa = o.convert(o.where(finite, m, xd), x.meta.dtype)
    exponent = o.convert(o.where(finite, e1, 0), torch.int32)
    return torch.return_types.frexp((mantissa, exponent))


def _nextafter(o, x, other, *, out=None):
    """The next value of x's dtype after x toward other; other where they are equal, NaN where one is."""
    if not isinstance(x, TensorVar) or not isinstance(other, TensorVar):
        raise Unsupported("nextafter of a number")
    o.check(x, other)
    try:
        meta = torch.nextafter(x.meta, other.meta)
    except (RuntimeError, TypeError) as e:
        raise Unsupported(f"nextafter: {e}")  # eager raises
    o.accepts("nextafter", torch.nextafter, x, other)
    if o.needs_grad(x, other):
        raise Unsupported("nextafter of a tensor that requires grad (eager's backward raises)")
    dt = meta.dtype
    if dt not in _FORMAT:
        raise Unsupported(f"nextafter of {dt}")
    p, emin = _FORMAT[dt]
    xd, yd = o.convert(o.convert(x, dt), torch.float64), o.convert(o.convert(other, dt), torch.float64)
    shape = tuple(meta.shape)
    xd, yd = o.expand(xd, shape), o.expand(yd, shape)
    a = o.unary("abs", xd)
    e = o.binary("maximum", _exponent(o, a), emin)  # subnormals step by the smallest one
    ulp = _pow2(o, o.binary("sub", e, p - 1))
    up = o.binary("gt", yd, xd)  # the direction
    away = o.where(o.binary("gt", xd, 0.0), up, o.unary("logical_not", up))  # away from zero
    at_binade = o.binary("logical_and", o.binary("eq", a, _pow2(o, e)), o.binary("gt", e, emin))
    step = o.where(o.binary("logical_or", away, o.unary("logical_not", at_binade)), ulp,
                   o.binary("mul", ulp, 0.5))
    moved = o.where(up, o.binary("add", xd, step), o.binary("sub", xd, step))
    moved = o.where(o.binary("eq", moved, 0.0), o.binary("mul", xd, 0.0), moved)  # to 0: x's signed zero
    f64 = lambda v: o.full((), v, torch.float64)  # noqa: E731
    tiny = 2.0 ** (emin - p + 1)  # from 0: the smallest subnormal, signed as the direction
    moved = o.where(o.binary("eq", xd, 0.0), o.where(up, f64(tiny), f64(-tiny)), moved)
    big = torch.finfo(dt).max  # from an infinity: the largest finite value
    moved = o.where(o.binary("eq", a, float("inf")), o.where(o.binary("gt", xd, 0.0), f64(big), f64(-big)), moved)
    r = o.where(o.binary("eq", xd, yd), yd, moved)
    nan = o.binary("logical_or", o.binary("ne", xd, xd), o.binary("ne", yd, yd))
    r = o.where(nan, f64(float("nan")), r)
    return o.convert(r, dt)


H["frexp"] = _frexp
H["nextafter"] = _nextafter
