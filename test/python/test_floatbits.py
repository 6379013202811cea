"""frexp and nextafter without a bit cast (handlers/floatbits.py): bit-exact against eager on the values where
the representation matters: zeros of both signs, infinities, NaN, subnormals, powers of two (nextafter's
step halves toward zero there), the largest finite values, in every floating dtype."""
import pytest
import torch

import dyn
from conftest import has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


def _values(dt):
    fi = torch.finfo(dt)
    v = [0., -0., float("inf"), -float("inf"), float("nan"), 1., -1., 0.75, -5., 4., -4., 1e-3, 12345.678,
         fi.max, -fi.max, fi.tiny, -fi.tiny, fi.tiny / 2, fi.smallest_normal * fi.eps, -fi.smallest_normal * fi.eps,
         fi.tiny * 3.5, fi.max / 3]
    return torch.tensor(v, dtype=torch.float64).to(dt)


def _native(fn, *args):
    dyn.reset()
    got = dyn.compile(fn, backend="dyn", fullgraph=True)(*args)
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and not stats["eager_graphs"] and stats["compiled_graphs"] >= 1, stats
    return got


def _bit_equal(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    same = (got == want) & (torch.signbit(got) == torch.signbit(want)) | (got.isnan() & want.isnan())
    assert bool(same.all()), (got[~same], want[~same])


@pytest.mark.parametrize("dtype", DTYPES)
def test_frexp_bit_exact(dtype):
    x = _values(dtype)
    got, want = _native(lambda t: torch.frexp(t), x), torch.frexp(x)
    assert type(got) is type(want)
    _bit_equal(got.mantissa, want.mantissa)
    assert torch.equal(got.exponent, want.exponent)
    m, e = _native(lambda t: t.frexp(), x.view(2, -1))
    _bit_equal(m, want.mantissa.view(2, -1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_nextafter_bit_exact(dtype):
    x = _values(dtype)
    a, b = x.view(-1, 1).expand(-1, len(x)).contiguous(), x.view(1, -1).expand(len(x), -1).contiguous()
    _bit_equal(_native(lambda a, b: torch.nextafter(a, b), a, b), torch.nextafter(a, b))
    _bit_equal(_native(lambda a, b: a.nextafter(b[0]), a, b), a.nextafter(b[0]))  # broadcast


def test_nextafter_requiring_grad_breaks():
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(dyn.Unsupported, match="requires grad"):
        dyn.compile(lambda x: torch.nextafter(x, x + 1), backend="dyn", fullgraph=True)(x)
