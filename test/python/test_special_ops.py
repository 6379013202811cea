"""Pointwise math and torch.special functions of GraphSpecialOps.td: compiled natively (no graph break, no
fallback) and equal to eager, in float32, float64 and bfloat16, on edge values (signed zeros, NaN, +-inf,
poles) and over wide ranges. The special functions compute in float64 (docs/special-functions.md): eager's
values within the default torch.testing tolerances."""
import pytest
import torch

import dyn

torch.manual_seed(0)
NAN, INF = float("nan"), float("inf")
EDGE = torch.tensor([0.0, -0.0, NAN, INF, -INF, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 1e-30, -3.7, 25.5, 30.0])
X = torch.cat([EDGE, torch.randn(200) * 4, torch.linspace(-40, 40, 161)])
POS = torch.cat([torch.tensor([0.0, INF, NAN, 1e-8, 1.0, 2.0, 9.99, 10.0]), torch.rand(100) * 30,
                 torch.linspace(0.01, 3, 60)])
UNIT = torch.cat([torch.tensor([0.0, -0.0, 1.0, -1.0, NAN, 1.5, -1.5, 0.999999, -0.7, 0.7]),
                  torch.rand(200) * 2 - 1])
PROB = torch.cat([torch.tensor([0.0, 1.0, 0.5, 1e-10, 1 - 1e-7, -0.1, 1.1, NAN]), torch.rand(200)])
Y = torch.cat([torch.tensor([0.0, 0.0, -0.0, -0.0, NAN, INF, 1.0, -1.0, 0.0, 3.0, -INF, INF, 0.0, 2.0, 1.0]),
               torch.randn(361) * 4])
# Bessel and Airy functions: wide ranges, both sides of their splits (2, 5, +-2.09), and large arguments
# (eager's float32 phase x - pi/4 is rounded to float32 there)
XB = torch.cat([X, torch.tensor([1e-6, 2.0, 5.0, 2.09, -2.09, 8.3, 103.0, 104.0, 120.5, -150.25, 1e3 + 0.3,
                                 12345.678, -7.7e4, 1e5, 3e6, 4.9, 5.1, 1.99, 2.01]),
                torch.rand(200) * 10, -torch.rand(100) * 10, torch.rand(50) * 1e3])
BESSEL = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
          "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai"]

UNARY = {
    "deg2rad": (torch.deg2rad, X), "rad2deg": (torch.rad2deg, X), "sinc": (torch.sinc, X),
    "special_sinc": (torch.special.sinc, X), "angle": (torch.angle, X), "entr": (torch.special.entr, X),
    "signbit": (torch.signbit, X), "isreal": (torch.isreal, X), "nan_to_num": (torch.nan_to_num, X),
    "nan_to_num_values": (lambda x: torch.nan_to_num(x, 1.5, 100.0, -100.0), X),
    "logit": (torch.logit, UNIT), "logit_eps": (lambda x: torch.logit(x, 0.2), UNIT),
    "erfinv": (torch.erfinv, UNIT), "ndtr": (torch.special.ndtr, X), "ndtri": (torch.special.ndtri, PROB),
    "log_ndtr": (torch.special.log_ndtr, X), "erfcx": (torch.special.erfcx, X),
    "lgamma": (torch.lgamma, X), "gammaln": (torch.special.gammaln, POS), "digamma": (torch.digamma, X),
    "psi": (torch.special.psi, POS),
    **{f"polygamma{n}": ((lambda n: lambda x: torch.polygamma(n, x))(n), X) for n in (0, 2, 3, 4)},
    # eager's trigamma at the negative integers is pi^2 / sin(pi x)^2 of a rounded pi x (a large finite
    # number that depends on the dtype); dyn gives +inf there (docs/special-functions.md)
    "polygamma1": (lambda x: torch.polygamma(1, x), torch.where((X < 0) & (X == X.round()), X + 0.25, X)),
    "polygamma_method": (lambda x: x.polygamma(2), POS),
    "mvlgamma": (lambda x: torch.mvlgamma(x, 3), POS + 1.01),
    "i0": (torch.i0, X), "i0e": (torch.special.i0e, X), "i1": (torch.special.i1, X),
    "i1e": (torch.special.i1e, X), "modified_bessel_i0": (torch.special.modified_bessel_i0, X),
    "modified_bessel_i1": (torch.special.modified_bessel_i1, X),
    "spherical_bessel_j0": (torch.special.spherical_bessel_j0, X),
    **{name: (getattr(torch.special, name), XB) for name in BESSEL},
}
BINARY = {
    "atan2": torch.atan2, "arctan2": torch.arctan2, "fmax": torch.fmax, "fmin": torch.fmin,
    "heaviside": torch.heaviside, "xlog1py": torch.special.xlog1py, "float_power": torch.float_power,
    "ldexp": lambda a, b: torch.ldexp(a, b.nan_to_num().clamp(-20, 20).round()),
    "isclose": lambda a, b: torch.isclose(a, b, rtol=1e-5, atol=1e-7),
    "isclose_nan": lambda a, b: torch.isclose(a, b, equal_nan=True),
    "logical_xor": torch.logical_xor,
    "zeta": torch.special.zeta,
}
DTYPES = [torch.float32, torch.float64, torch.bfloat16]
# eager's bfloat16 kernel rounds intermediate steps: dyn breaks the graph rather than differ
HALF_BREAKS = {"ndtr", "polygamma1", "polygamma2", "polygamma3", "polygamma4", "polygamma_method"}


def _native(fn, *args):
    compiled = dyn.compile(lambda *a: fn(*a), backend="dyn", fullgraph=True)
    got = compiled(*args)
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and not stats["eager_graphs"] and stats["compiled_graphs"] >= 1, stats
    assert stats.get("internal_failures", 0) == 0, stats
    return got


def _check(got, want, dtype):
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = dict(rtol=1.6e-2, atol=1e-5) if dtype == torch.bfloat16 else {}
    torch.testing.assert_close(got, want, equal_nan=True, **tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dtype):
    fn, x = UNARY[name]
    x = x.to(dtype)
    try:
        want = fn(x)
    except NotImplementedError:
        pytest.skip(f"eager has no {dtype} kernel")
    if dtype == torch.bfloat16 and name in HALF_BREAKS:
        with pytest.raises(dyn.Unsupported, match="eager's kernel rounds intermediate steps"):
            dyn.compile(fn, fullgraph=True)(x)
        return
    _check(_native(fn, x), want, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name, dtype):
    fn = BINARY[name]
    a, b = X.to(dtype), Y.to(dtype)
    if name == "isclose":
        b = (X + Y * 1e-6 * X.abs()).to(dtype)  # near a: some within the tolerances, some not
    try:
        want = fn(a, b)
    except NotImplementedError:
        pytest.skip(f"eager has no {dtype} kernel (test_no_half_kernel)")
    _check(_native(fn, a, b), want, dtype)


def test_atan2_signed_zeros_and_infinities():
    y = torch.tensor([0.0, -0.0, 0.0, -0.0, INF, -INF, INF, 1.0, -1.0, 0.0])
    x = torch.tensor([0.0, 0.0, -0.0, -0.0, INF, INF, -INF, 0.0, -0.0, -1.0])
    got = _native(torch.atan2, y, x)
    want = torch.atan2(y, x)
    torch.testing.assert_close(got, want)
    assert torch.equal(torch.signbit(got), torch.signbit(want))


@pytest.mark.parametrize("name", ["signbit", "nan_to_num", "fmax", "heaviside", "logical_xor", "deg2rad",
                                  "lgamma", "isclose"])
def test_integer_tensors(name):
    x = torch.arange(-7, 8, dtype=torch.int64)
    y = torch.arange(7, -8, -1, dtype=torch.int64)
    fn = {"fmax": lambda a: torch.fmax(a, y), "heaviside": lambda a: torch.heaviside(a, y),
          "logical_xor": lambda a: torch.logical_xor(a, y), "isclose": lambda a: torch.isclose(a, y, atol=2)
          }.get(name, getattr(torch, name))
    got, want = _native(fn, x), fn(x)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got, want)


def test_polygamma_order_out_of_range_breaks():
    x = torch.rand(5) + 0.5
    with pytest.raises(dyn.Unsupported, match="polygamma of order"):
        dyn.compile(lambda t: torch.polygamma(5, t), fullgraph=True)(x)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16], ids=str)
def test_small_integer_dtypes(dtype):
    """int8 and int16 through capture and the CPU path: conversions, eager's promotion, wrap-around."""
    info = torch.iinfo(dtype)
    a = torch.tensor([info.max, info.min, -1, 0, 1, 100, -100, 7], dtype=dtype)
    b = torch.tensor([1, -1, info.max, 3, info.min, 100, 2, -7], dtype=dtype)
    f = torch.tensor([1.7, -2.9, 100.2, -0.5, 3.0, 12.9, -7.1, 0.0])
    cases = {
        "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "sub": lambda a, b: a - b, "neg": lambda a, b: -a,
        "abs": lambda a, b: a.abs(), "max": lambda a, b: torch.maximum(a, b), "lt": lambda a, b: a < b,
        "sum": lambda a, b: a.sum(), "div": lambda a, b: a / b, "promote": lambda a, b: a + b.long() * 2,
        "float": lambda a, b: a.float() * 0.5, "scalar": lambda a, b: a * 3 + 1,
        "where": lambda a, b: torch.where(a > b, a, b), "amax": lambda a, b: a.amax(),
    }
    for name, fn in cases.items():
        got, want = _native(fn, a, b), fn(a, b)
        assert got.dtype == want.dtype and torch.equal(got, want), name
    conv = {torch.int8: (lambda t: t.char()), torch.int16: (lambda t: t.short())}[dtype]
    got, want = _native(conv, f), conv(f)
    assert got.dtype == dtype and torch.equal(got, want)


def _zeta_operands():
    """Orders x (below 1, at 1, integers, fractions, large, +inf, NaN) against shifts q (positive, tiny,
    zero, negative integers, negative fractions, +-inf, NaN), every pair."""
    xs = torch.tensor([0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.5, 12.0, 40.0, 200.0, 1e20, INF, NAN])
    qs = torch.tensor([1.0, 2.0, 0.5, 1e-17, 1e-300, 0.0, -0.0, -1.0, -3.0, -0.5, -1.5, -2.25, -7.9, -40.3,
                       -1e-20, 9.0, 9.5, 1e3, 1e20, INF, -INF, NAN])
    x, q = torch.meshgrid(xs, qs, indexing="ij")
    return (torch.cat([x.flatten(), torch.rand(300) * 10 + 1, torch.randint(2, 9, (100,)).double()]),
            torch.cat([q.flatten(), torch.rand(300) * 20 - 2, torch.rand(100) * -30]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_zeta(dtype):
    x, q = (t.to(dtype) for t in _zeta_operands())
    _check(_native(torch.special.zeta, x, q), torch.special.zeta(x, q), dtype)


def test_zeta_scalar_and_integer_operands():
    x = torch.arange(2, 8)
    q = torch.tensor([1.0, 2.5, -1.5, 3.0, 0.25, 10.0])
    for fn in (lambda a, b: torch.special.zeta(a, b), lambda a, b: torch.special.zeta(a, 2.0),
               lambda a, b: torch.special.zeta(3.0, b)):
        got, want = _native(fn, x, q), fn(x, q)
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, equal_nan=True)


@pytest.mark.parametrize("name", BESSEL + ["zeta"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_no_half_kernel(name, dtype):
    """Eager has no float16/bfloat16 kernel for these: dyn does not compile them either (eager raises)."""
    fn = getattr(torch.special, name)
    x = torch.rand(8).to(dtype) + 1
    args = (x, x) if name == "zeta" else (x,)
    with pytest.raises(dyn.Unsupported):
        dyn.compile(fn, fullgraph=True)(*args)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name", BESSEL + ["zeta"])
def test_gpu(name, dtype):
    """The GPU path: the same prim expansion through PTX, against eager's CUDA kernels."""
    fn = getattr(torch.special, name)
    if name == "zeta":
        args = tuple(t.to(dtype).cuda() for t in _zeta_operands())
    else:
        args = (XB.to(dtype).cuda(),)
    got = _native(fn, *args)
    assert got.device.type == "cuda"
    want = fn(*args)
    if name == "zeta" and dtype == torch.float32:
        # eager's float32 zeta computes in float32 on CUDA and in its CPU kernel's way on the CPU, and the
        # two disagree at some extreme operands (NaN against a number); dyn computes in float64 on both
        # targets: where eager's kernels disagree it must give the CPU kernel's value
        cpu = fn(*(a.cpu() for a in args)).cuda()
        disagree = ~torch.isclose(want, cpu, equal_nan=True)
        want = torch.where(disagree, cpu, want)
    _check(got, want, dtype)
