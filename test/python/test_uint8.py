"""torch.uint8 tensors in compiled graphs (the graph dialect's ui8): images read as bytes, byte masks,
wrapping arithmetic. Kernels compute uint8 in i32 and wrap each op's result into [0, 255] as eager's
uint8 arithmetic does (PrimToLoop); compares, divisions and conversions see the unsigned value.

Each function runs as one native graph (no break, no eager graph, no warning) with eager's values and
dtypes, on the CPU and, where torch sees one, on CUDA."""
import warnings

import pytest
import torch

import dyn

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _bytes(*shape, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, shape, generator=g, dtype=torch.uint8).to(device)


def _check(fn, *args):
    def fresh():
        return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    want = fn(*fresh())
    dyn.reset()
    cf = dyn.compile(fn, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to eager warns
        got = cf(*fresh())
    assert dyn.stats()["eager_graphs"] == []
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.dtype == w.dtype and g.shape == w.shape and g.device == w.device, (g, w)
        torch.testing.assert_close(g, w, rtol=0, atol=0) if not w.is_floating_point() \
            else torch.testing.assert_close(g, w)


# Each case: (name, function of two uint8 tensors a, b of shape (4, 33)).
CASES = {
    "add_wraps": lambda a, b: a + b,
    "sub_wraps": lambda a, b: a - b,
    "mul_wraps": lambda a, b: a * b,
    "chain_wraps_before_compare": lambda a, b: ((a + b) > 100, (a * 3) // 2, (a - b) % 7),
    "neg_and_not": lambda a, b: (-a, ~a, torch.bitwise_not(b)),
    "bitwise": lambda a, b: (a & b, a | b, a ^ b, a & 0x0F, 0xF0 | a, torch.bitwise_xor(a, 255),
                             a.bitwise_and(b), (a > 3) & (b < 9), (a > 3) ^ True),
    "shifts": lambda a, b: (a << 3, a >> 2, a << (b % 12), a >> (b % 12), torch.bitwise_left_shift(a, 1),
                            a.long() << (b % 70), a.to(torch.int8) >> (b % 12), (a.to(torch.int8) << 5) >> 1),
    "compare": lambda a, b: (a < b, a >= b, a == b, a > 127, a <= 200),
    "max_min": lambda a, b: (torch.maximum(a, b), torch.minimum(a, b), a.clamp(30, 200),
                             a.clamp(min=100)),
    # integer division by a tensor: its divisor checked for zeros before each run on the CPU (eager raises)
    "divisions": lambda a, b: (a / (b + 1), torch.div(a, 7, rounding_mode="floor"), a // 3,
                               torch.div(a, 5, rounding_mode="trunc"), torch.remainder(a, 9), a % 200,
                               torch.fmod(a, 6), (a + b) // 2, a // (b | 1), a % (b | 1),
                               torch.fmod(a.long() - 128, (b.long() - 128) | 1),
                               torch.div(a.long() - 128, (b.long() - 128) | 1, rounding_mode="floor")),
    "abs_sign": lambda a, b: (a.abs(), a.sign(), torch.square(a)),
    "reductions": lambda a, b: (a.sum(), a.sum(1), a.sum(0, dtype=torch.uint8), a.prod(1, dtype=torch.uint8),
                                a.amax(1), a.amin(0), a.max(), a.argmax(1), a.argmin(0)),
    "max_dim": lambda a, b: tuple(a.max(1)) + tuple(b.min(0)),
    "cumsum": lambda a, b: (a.cumsum(1), a.cumsum(1, dtype=torch.uint8)),
    "where_mask": lambda a, b: (torch.where(a > b, a, b), a.masked_fill(b > 128, 255)),
    "to_float": lambda a, b: (a.float() / 255, a.to(torch.float16), a.double() - 128, a.to(torch.bfloat16)),
    "to_ints": lambda a, b: (a.long() - 200, a.to(torch.int8), a.int() * 1000, a.bool(), a.to(torch.int16)),
    "from_others": lambda a, b: ((a.long() * 7).to(torch.uint8), (a.float() * 1.7).byte(),
                                 (a.to(torch.int8) - 3).byte(), (a > b).to(torch.uint8)),
    "with_int64_and_float": lambda a, b: (a + torch.arange(33, device=a.device), a * 2.5, a + 200, a - 100, 300 - a.long()),
    "with_int8_promotes_to_int16": lambda a, b: a.to(torch.int8) + b,
    "factories": lambda a, b: (a + torch.ones(33, dtype=torch.uint8, device=a.device) * 250,
                               torch.full_like(a, 7) * a, torch.zeros_like(a) - 1,
                               torch.arange(33, dtype=torch.uint8, device=a.device) * 9),
    "dense_constant": lambda a, b: a + torch.tensor(list(range(200, 233)), dtype=torch.uint8, device=a.device),
    "data_movement": lambda a, b: (torch.cat([a, b], 1), a.t().contiguous(), a.flip(0), a[:, 3:20:2],
                                   torch.stack([a, b]), a.reshape(2, 66), a.roll(3, 1),
                                   torch.nn.functional.pad(a, (1, 2), value=9)),
    "gather": lambda a, b: (a.gather(1, (b % 33).long()), a.index_select(1, torch.arange(0, 33, 4,
                                                                                       device=a.device))),
    # a Python int out of uint8's range wraps where eager converts it to the tensor's type
    "scalars_wrap": lambda a, b: (torch.where(a > 200, 255, a) == -1, a + 300, a * -1, a != 511, a - 257, a & -16),
    # activations the registry defines on floats, as eager computes them for integers: threshold's
    # numbers converted to the type (1.5 truncated, -1 wrapped to 255), softsign's |a| + 1 wrapping at 255
    "integer_activations": lambda a, b: (
        torch.nn.functional.threshold(a, 100.7, -1), torch.nn.functional.softsign(a),
        torch.nn.functional.tanhshrink(a), torch.nn.functional.threshold(a.long() - 128, -1.5, 7.9),
        torch.nn.functional.softsign(a.long() - 128)),
    # combining scatters of bools: a sum is an or (on the CPU a product is an and: test_bool_scatters_cpu)
    "bool_scatters": lambda a, b: (
        (a > 200).scatter_add(1, (b % 33).long(), b > 100),
        (a > 50).scatter_reduce(1, (b % 33).long(), b > 30, "sum", include_self=False)),
    # integer powers as eager's powi (square and multiply, wrapping; a negative exponent gives 0 but for
    # bases 1 and -1)
    "integer_pow": lambda a, b: (a ** 2, a ** 5, a ** (b % 9), torch.pow(3, b % 7),
                                 (a.long() % 5 - 2) ** (b.long() % 7 - 3), (a.long() - 100) ** (b.long() % 70)),
    "image_normalize": lambda a, b: ((a.float().div(255) - 0.5) / 0.25).reshape(2, 2, 33).mean(-1),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_uint8(name, device):
    _check(CASES[name], _bytes(4, 33, device=device), _bytes(4, 33, device=device, seed=1))


@pytest.mark.parametrize("device", DEVICES)
def test_uint8_inplace_updates(device):
    def f(a, b):
        a.add_(b)
        a.mul_(3)
        b.clamp_(max=99)
        return a.sum(dtype=torch.uint8)
    _check(f, _bytes(4, 33, device=device), _bytes(4, 33, device=device, seed=1))


@pytest.mark.parametrize("device", DEVICES)
def test_uint8_output_of_float_graph(device):
    def f(x):  # a model's image output: clamp, scale, round, byte
        return (x.clamp(0, 1) * 255).round().to(torch.uint8)
    _check(f, torch.randn(3, 16, 16, device=device))


def test_uint8_library_calls_read_unsigned():
    """sort/topk are ATen library calls on signless buffers: the call marks them uint8 (DYN_U8), so values
    of 128 and more sort above the small ones (read as int8 they would come first), natively."""
    a = _bytes(4, 33, device="cpu")
    assert bool((a >= 128).any()) and bool((a < 128).any())

    def f(a):
        v, i = torch.sort(a, 1)
        t = torch.topk(a, 5, dim=1)
        return v + 1, i, t.values, t.indices
    want = f(a.clone())
    dyn.reset()
    ex = dyn.explain(f)(a.clone())
    assert (ex.graph_count, ex.graph_break_count) == (1, 0), ex
    dyn.reset()
    got = dyn.compile(f)(a.clone())
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=0, atol=0)
    assert dyn.stats()["compiled_graphs"] == 1


def test_integer_division_by_zero_raises_as_eager():
    """A tensor divisor of an integer division is checked before each run on the CPU: a zero raises eager's
    RuntimeError (compiled division would trap), and the same graph runs again once the zero is gone."""
    def f(a, b):
        return a // b, torch.fmod(a, b), a % (b * 2)
    cf = dyn.compile(f, fullgraph=True)
    a, b = torch.tensor([7, -7, 9]), torch.tensor([2, 3, -4])
    for g, w in zip(cf(a, b), f(a, b)):
        assert torch.equal(g, w)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        f(a, torch.tensor([2, 0, 1]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        cf(a, torch.tensor([2, 0, 1]))
    for g, w in zip(cf(a, -b), f(a, -b)):
        assert torch.equal(g, w)
    assert dyn.stats()["eager_graphs"] == []


def test_integer_windows_cpu():
    """Integer convolutions, pooling and uint8 resampling compute as eager's CPU kernels: convolutions (uint8
    ones listed as unsigned buffers, so that 200 is not read as -56) and bilinear/bicubic of uint8 are ATen's
    (library calls), max pooling pads with the type's least value and an integer average truncates."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(3)
    x = torch.randint(-50, 50, (2, 3, 9, 8), generator=g)
    w = torch.randint(-3, 4, (4, 3, 3, 3), generator=g)
    img = torch.randint(0, 256, (1, 3, 10, 12), generator=g, dtype=torch.uint8)

    def f(x, w, img):
        return (F.conv2d(x, w, padding=1), F.conv_transpose2d(x, w.transpose(0, 1), stride=2),
                F.conv2d(img, torch.full((2, 3, 2, 2), 201, dtype=torch.uint8), stride=2),
                F.max_pool2d(x, 3, 2, padding=1), F.max_pool2d(img, 2, ceil_mode=True),
                F.avg_pool2d(x, 3, 2, padding=1), F.avg_pool2d(x, 2, count_include_pad=False, padding=1),
                F.interpolate(img, size=(7, 15), mode="bilinear"), F.interpolate(img, scale_factor=1.5, mode="bicubic"),
                F.interpolate(img, size=(5, 5), mode="bilinear", antialias=True))
    _check(f, x, w, img)


def test_bool_scatters_cpu():
    """A product or amin of bools is an and, an amax an or (CUDA's eager kernels take no booleans for these:
    there the graph breaks, as eager raises)."""
    a, b = _bytes(4, 33, device="cpu"), _bytes(4, 33, device="cpu", seed=1)
    _check(lambda a, b: ((a > 50).scatter_reduce(1, (b % 33).long(), b > 30, "prod"),
                         (a > 50).scatter_reduce(1, (b % 33).long(), b > 30, "amin", include_self=False),
                         (a > 200).scatter_reduce(1, (b % 33).long(), b > 100, "amax", include_self=False)), a, b)
