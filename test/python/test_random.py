"""Random ops compiled with Philox (graph/random.py, GraphToPrim/Random.cpp, PrimToLoop's emitPhilox).

The compiled numbers are checked bit for bit against a NumPy Philox-4x32-10 (itself checked against
Random123's known answers), statistically with fixed seeds (bounds of 6 standard deviations: a wrong
transformation cannot pass, a correct one cannot flake since the seeds are fixed), for reproducibility
under torch.manual_seed, and on the eager backend for equality with eager PyTorch."""
import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn
from conftest import has_compiler
from dyn.graph.random import draw_seed

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C without the compiler core")

MASK = np.uint64(0xFFFFFFFF)


def philox(seed, offset, n):
    """The four Philox-4x32-10 words for elements 0..n-1 of an op: key = seed, counter = (i, offset)."""
    return philox_at(seed, offset, np.arange(n, dtype=np.uint64))


def philox_at(seed, offset, i):
    """philox's words for the element indices i (a uint64 array)."""
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    c = [i & MASK, i >> np.uint64(32), np.full(len(i), offset & 0xFFFFFFFF, np.uint64),
         np.full(len(i), offset >> 32, np.uint64)]
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32)
    for r in range(10):
        if r:
            k0 = (k0 + np.uint64(0x9E3779B9)) & MASK
            k1 = (k1 + np.uint64(0xBB67AE85)) & MASK
        p0, p1 = c[0] * np.uint64(0xD2511F53), c[2] * np.uint64(0xCD9E8D57)
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0, p1 & MASK, (p0 >> np.uint64(32)) ^ c[3] ^ k1, p0 & MASK]
    return c


def test_reference_philox_matches_random123():
    # Random123's kat_vectors for philox4x32_10
    def block(ctr, key):
        seed = key[0] | key[1] << 32
        offset = ctr[2] | ctr[3] << 32
        i = ctr[0] | ctr[1] << 32
        return [int(w[0]) for w in philox_at(seed, offset, np.array([i], dtype=np.uint64))]
    assert block([0] * 4, [0, 0]) == [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    assert block([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2) == [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
    assert block([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]) == \
        [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]


def native(fn):
    """fn compiled by dyn as one graph; calls must neither fall back nor warn."""
    cf = dyn.compile(fn, fullgraph=True)

    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = cf(*args)
        s = dyn.stats()
        assert s["eager_graphs"] == [] and s["compiled_graphs"] >= 1 and s["internal_failures"] == 0, s
        return out
    return run


def seeded_call(cf, seed, *args):
    """cf(*args) right after torch.manual_seed(seed), and the Philox seed that call drew."""
    cf(*args)  # compiled (capture and compilation draw nothing, but the first call is kept out anyway)
    torch.manual_seed(seed)
    out = cf(*args)
    torch.manual_seed(seed)
    return out, int(draw_seed("cpu"))


def uniform24(word):
    return (word & np.uint64(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)


def test_uniform_bits_are_philox():
    cf = native(lambda: torch.rand(37, 29))
    out, seed = seeded_call(cf, 1234)
    want = uniform24(philox(seed, 0, 37 * 29)[0]).reshape(37, 29)
    assert np.array_equal(out.numpy(), want)


def test_uniform_f64_takes_53_bits():
    cf = native(lambda: torch.rand(1000, dtype=torch.float64))
    out, seed = seeded_call(cf, 7)
    w = philox(seed, 0, 1000)
    want = ((w[1] & np.uint64((1 << 21) - 1)) * np.uint64(1 << 32) + w[0]).astype(np.float64) * 2.0 ** -53
    assert np.array_equal(out.numpy(), want)


def test_dropout_mask_and_scale_are_philox():
    x = torch.randn(16, 33)
    cf = native(lambda x: F.dropout(x, 0.3, training=True))
    out, seed = seeded_call(cf, 99, x)
    keep = uniform24(philox(seed, 0, x.numel())[0]).reshape(x.shape) < np.float32(0.7)
    scale = torch.tensor(1.0, dtype=torch.float32) / torch.tensor(0.7, dtype=torch.float32)  # eager's noise
    want = torch.where(torch.from_numpy(keep), x * scale, torch.zeros(()))
    assert torch.equal(out, want)


def test_each_op_of_a_graph_has_its_own_offset():
    cf = native(lambda: (torch.rand(100), torch.rand(100)))
    (a, b), seed = seeded_call(cf, 3)
    assert np.array_equal(a.numpy(), uniform24(philox(seed, 0, 100)[0]))
    assert np.array_equal(b.numpy(), uniform24(philox(seed, 1, 100)[0]))
    assert not torch.equal(a, b)


def test_reproducible_under_manual_seed_and_different_across_calls():
    x = torch.ones(256)

    def f(x):
        return F.dropout(x, 0.5, training=True), torch.randn(64), torch.randint(0, 1000, (64,))
    cf = native(f)
    torch.manual_seed(5)
    first, second = cf(x), cf(x)
    torch.manual_seed(5)
    again = cf(x)
    for u, v in zip(first, again):
        assert torch.equal(u, v)
    for u, v in zip(first, second):
        assert not torch.equal(u, v)


def test_calls_advance_torchs_generator_by_one_draw():
    # eager random ops between compiled calls draw what they would after one 64-bit draw
    cf = native(lambda: torch.rand(8))
    cf()
    torch.manual_seed(11)
    cf()
    after = torch.rand(4)
    torch.manual_seed(11)
    draw_seed("cpu")
    assert torch.equal(after, torch.rand(4))


def mean_var(t):
    t = t.double()
    return t.mean().item(), t.var().item()


N = 1 << 20


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_zeroes_p_and_scales_the_rest(p):
    x = torch.rand(N) + 1  # no zeros of its own
    out = native(lambda x: F.dropout(x, p, training=True))(x)
    zero = (out == 0).double().mean().item()
    assert abs(zero - p) < 6 * math.sqrt(p * (1 - p) / N), zero
    kept = out != 0
    scale = (torch.tensor(1.0) / torch.tensor(1 - p, dtype=torch.float32)).item()
    assert torch.equal(out[kept], x[kept] * torch.tensor(scale, dtype=torch.float32))
    # dropout keeps the mean: E[out] = E[x]
    assert abs(out.double().mean().item() - x.double().mean().item()) < 6 * math.sqrt(
        x.double().pow(2).mean().item() * p / (1 - p) / N)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_uniform_statistics(dtype):
    u = native(lambda: torch.rand(N, dtype=dtype))().double()
    assert u.min().item() >= 0 and u.max().item() < 1
    m, v = mean_var(u)
    # bf16/f16 take 8/11 bits: a grid of 2^-8 (2^-11) steps from 0, mean 0.5 - 2^-9 (2^-12)
    bits = {torch.bfloat16: 8, torch.float16: 11}.get(dtype)
    want = 0.5 - (2.0 ** -(bits + 1) if bits else 0)
    assert abs(m - want) < 6 * math.sqrt(1 / 12 / N)
    assert abs(v - 1 / 12) < 6 * math.sqrt(1 / 180 / N)
    counts = torch.histc(u.float(), 16, 0, 1)
    assert (counts - N / 16).abs().max().item() < 6 * math.sqrt(N / 16)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_normal_statistics(dtype):
    z = native(lambda: torch.randn(N, dtype=dtype))()
    assert torch.isfinite(z).all()
    m, v = mean_var(z)
    assert abs(m) < 6 / math.sqrt(N) and abs(v - 1) < 6 * math.sqrt(2 / N)
    within = (z.abs() < 1).double().mean().item()
    assert abs(within - 0.682689492) < 6 * math.sqrt(0.2167 / N)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cauchy_log_normal_geometric_statistics(dtype):
    """Tensor.cauchy_, log_normal_ and geometric_ as Philox numbers in eager's transformations: the median
    and quartiles of the Cauchy, the mean and spread of log(log-normal), the mean and support of the
    geometric."""
    x = torch.empty(N, dtype=dtype)
    c = native(lambda t: t.cauchy_(1.0, 2.0))(x.clone())
    q = torch.quantile(c.double()[:100000], torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64))
    assert torch.allclose(q, torch.tensor([-1.0, 1.0, 3.0], dtype=torch.float64), atol=0.1), q
    ln = native(lambda t: t.log_normal_(0.5, 0.25))(x.clone())
    assert (ln > 0).all()
    m, v = mean_var(ln.log())
    assert abs(m - 0.5) < 6 * 0.25 / math.sqrt(N) and abs(v - 0.0625) < 6 * 0.0625 * math.sqrt(2 / N)
    g = native(lambda t: t.geometric_(0.2))(x.clone())
    assert (g >= 1).all() and torch.equal(g, g.round())
    m, v = mean_var(g)
    assert abs(m - 5) < 6 * math.sqrt(20 / N)  # mean 1/p, variance (1 - p)/p^2


def test_normal_with_mean_and_std():
    z = native(lambda: torch.normal(3.0, 0.5, (N,)))()
    m, v = mean_var(z)
    assert abs(m - 3) < 6 * 0.5 / math.sqrt(N) and abs(v - 0.25) < 6 * 0.25 * math.sqrt(2 / N)


def test_in_place_fills_are_functional_and_written_back():
    def f(x, y, e):
        x.uniform_(-2, 3)
        y.normal_(1.0, 2.0)
        e.exponential_(4.0)
        return x * 1
    x, y, e = torch.zeros(N), torch.zeros(N), torch.zeros(N)
    out = native(f)(x, y, e)
    assert torch.equal(out, x)
    assert x.min().item() >= -2 and x.max().item() < 3
    m, v = mean_var(x)
    assert abs(m - 0.5) < 6 * math.sqrt(25 / 12 / N) and abs(v - 25 / 12) < 6 * 25 * math.sqrt(1 / 180 / N)
    m, v = mean_var(y)
    assert abs(m - 1) < 6 * 2 / math.sqrt(N) and abs(v - 4) < 6 * 4 * math.sqrt(2 / N)
    assert e.min().item() > 0
    m, v = mean_var(e)  # exponential with rate 4: mean 1/4, variance 1/16
    assert abs(m - 0.25) < 6 * 0.25 / math.sqrt(N) and abs(v - 1 / 16) < 6 * math.sqrt(8 / 4 ** 4 / N)


@pytest.mark.parametrize("low,high,dtype", [(0, 10, torch.int64), (-5, 3, torch.int32),
                                            (0, 2 ** 40, torch.int64), (0, 7, torch.float32)])
def test_randint_statistics(low, high, dtype):
    r = native(lambda: torch.randint(low, high, (N,), dtype=dtype))()
    assert r.dtype == dtype and r.min().item() >= low and r.max().item() < high
    span = high - low
    m, _ = mean_var(r)
    assert abs(m - (low + high - 1) / 2) < 6 * span / math.sqrt(12 * N)
    if span <= 16:
        counts = torch.bincount((r.long() - low), minlength=span).double()
        assert (counts - N / span).abs().max().item() < 6 * math.sqrt(N / span)


def test_bernoulli_of_probabilities():
    p = torch.linspace(0, 1, 8).repeat_interleave(N // 8)
    out = native(lambda p: torch.bernoulli(p))(p)
    assert set(out.unique().tolist()) <= {0.0, 1.0}
    rate = out.reshape(8, -1).mean(1).double()
    want = torch.linspace(0, 1, 8).double()
    sigma = (want * (1 - want) / (N // 8)).sqrt()
    assert ((rate - want).abs() <= 6 * sigma).all()
    assert rate[0] == 0 and rate[-1] == 1


def test_dropout2d_drops_whole_channels():
    x = torch.rand(64, 32, 5, 5) + 1
    out = native(lambda x: F.dropout2d(x, 0.5, training=True))(x)
    zero = (out == 0)
    per_channel = zero.flatten(2)
    assert (per_channel.all(2) | ~per_channel.any(2)).all()  # a channel is dropped whole or kept whole
    rate = per_channel.all(2).double().mean().item()
    assert abs(rate - 0.5) < 6 * math.sqrt(0.25 / (64 * 32))


def test_dropout2d_of_a_3d_input_drops_per_batch_and_channel():
    """Eager reads a 3-d input to dropout2d as (N, C, L) (with a warning), not as (C, H, W): one draw per
    (n, c) row, shared along L."""
    x = torch.rand(64, 32, 7) + 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = native(lambda x: F.dropout2d(x, 0.5, training=True))(x)
    zero = out == 0
    assert (zero.all(2) | ~zero.any(2)).all()
    per_row = zero.all(2).double()
    # not one draw per n shared by its channels (the (C, H, W) reading): rows mix dropped and kept channels
    assert not (per_row.all(1) | (1 - per_row).all(1)).all()


def test_dropout_eval_and_p_zero_are_identity_without_a_draw():
    x = torch.randn(10)
    cf = native(lambda x: F.dropout(x, 0.5, training=False) + F.dropout(x, 0.0, training=True))
    torch.manual_seed(0)
    assert torch.equal(cf(x), x + x)
    assert torch.equal(torch.rand(3), (torch.manual_seed(0), torch.rand(3))[1])  # nothing drawn


def test_model_in_train_mode_with_dropout_compiles():
    m = nn.Sequential(nn.Linear(16, 32), nn.Dropout(0.2), nn.GELU(), nn.Linear(32, 8), nn.Dropout(0.1)).train()
    cm = dyn.compile(m)
    x = torch.randn(4, 16)
    with torch.no_grad():
        ex = dyn.explain(m)(x)
        assert ex.graph_count == 1 and ex.break_reasons == []
        assert ex.ops_per_graph[0].count("dropout") == 2
        dyn.reset()
        out = cm(x)
    s = dyn.stats()
    assert s["eager_graphs"] == [] and s["compiled_graphs"] == 1
    assert out.shape == (4, 8)


def test_model_in_train_mode_with_grad_compiles_forward_and_backward():
    # dropout in a training graph draws dyn's own numbers (as without grad); its backward replays the
    # forward's mask, so the gradients are eager's for that mask
    m = nn.Sequential(nn.Linear(16, 32), nn.Dropout(0.2)).train()
    ref = nn.Sequential(nn.Linear(16, 32)).train()
    ref.load_state_dict(m.state_dict())
    cm = dyn.compile(m)
    x = torch.randn(4, 16)
    dyn.reset()
    got = cm(x)
    s = dyn.stats()
    assert s["backward_graphs"] == 1 and s["eager_graphs"] == []
    scale = (got != 0).float() / 0.8
    want = ref(x) * scale
    torch.testing.assert_close(got, want)
    got.square().sum().backward()
    want.square().sum().backward()
    torch.testing.assert_close(m[0].weight.grad, ref[0].weight.grad)
    torch.testing.assert_close(m[0].bias.grad, ref[0].bias.grad)


RANDOM_FNS = {
    "dropout": lambda x: F.dropout(x, 0.3, training=True) * 2,
    "dropout_inplace": lambda x: F.dropout(x * 1, 0.3, True, True),
    "dropout1d": lambda x: F.dropout1d(x.reshape(4, 8, 16), 0.5, True),
    "rand_like": lambda x: torch.rand_like(x) + x,
    "randn_like": lambda x: torch.randn_like(x) * x,
    "randint": lambda x: torch.randint(0, 5, (3, 7)).float().sum() + x,
    "randint_like": lambda x: torch.randint_like(x, 3, 9) + x,
    "normal": lambda x: torch.normal(1.0, 2.0, (5,)).sum() + x,
    "bernoulli": lambda x: torch.bernoulli(x.sigmoid()),
    "uniform_": lambda x: (x * 1).uniform_(-1, 1),
    "normal_": lambda x: (x * 1).normal_(),
    "exponential_": lambda x: (x * 1).exponential_(),
    "random_": lambda x: (x * 1).random_(0, 10),
    "f16": lambda x: torch.rand(32, dtype=torch.float16).float().sum() + x,
}


@pytest.mark.parametrize("name", sorted(RANDOM_FNS))
def test_eager_backend_draws_eagers_numbers(name):
    fn = RANDOM_FNS[name]
    x = torch.randn(32, 16)
    ex = dyn.explain(fn)(x)
    assert ex.graph_count == 1 and ex.break_reasons == []
    assert "torch_call" not in ex.ops_per_graph[0]
    cf = dyn.compile(fn, backend="eager")
    for seed in range(2):
        torch.manual_seed(seed)
        want = fn(x)
        torch.manual_seed(seed)
        got = cf(x)
        assert torch.equal(got, want)


@pytest.mark.parametrize("name", sorted(RANDOM_FNS))
def test_dyn_backend_compiles_and_reproduces(name):
    fn = RANDOM_FNS[name]
    x = torch.randn(32, 16)
    cf = native(fn)
    torch.manual_seed(1)
    a = cf(x)
    torch.manual_seed(1)
    assert torch.equal(cf(x), a)
    assert a.shape == fn(x).shape and a.dtype == fn(x).dtype


def test_cpu_and_gpu_draw_the_same_bits(monkeypatch):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    import dyn.backends
    # one seed for both devices (each device's generator would give its own)
    monkeypatch.setattr(dyn.backends, "draw_seed", lambda device: torch.tensor(0x0123456789ABCDEF,
                                                                               device=device))

    def f(x):
        return (F.dropout(x, 0.4, training=True), torch.rand(1000, device=x.device),
                torch.rand(1000, dtype=torch.float64, device=x.device),
                torch.randint(-3, 1 << 40, (1000,), device=x.device), torch.randn(1000, device=x.device))
    x = torch.randn(64, 65)
    cpu = native(f)(x)
    dyn.reset()
    gpu = native(f)(x.cuda())
    for c, g in zip(cpu[:4], gpu[:4]):  # integer arithmetic and exact conversions: the same bits
        assert torch.equal(c, g.cpu())
    # normal goes through log and cos: libdevice on the GPU, dyn's polynomials on the CPU
    torch.testing.assert_close(cpu[4], gpu[4].cpu(), rtol=1e-5, atol=1e-5)
    assert np.array_equal(cpu[1].numpy(), uniform24(philox(0x0123456789ABCDEF, 1, 1000)[0]))


def test_wrapper_set_seed_captures_ops_without_random_numbers():
    """torch.testing's wrapper_set_seed(op, ...) runs op with the generator seeded with 42 and restores the
    generator: captured as op(...) when op draws nothing (random ops inside: the tests below)."""
    from torch.testing._utils import wrapper_set_seed
    q, k, v = torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 8)
    f = lambda q, k, v: wrapper_set_seed(F.scaled_dot_product_attention, q, k, v, dropout_p=0.0)  # noqa: E731
    dyn.reset()
    got = dyn.compile(f, backend="dyn", fullgraph=True)(q, k, v)
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and not stats["eager_graphs"] and stats["compiled_graphs"] == 1, stats
    torch.testing.assert_close(got, f(q, k, v))


# Inside wrapper_set_seed each random op is one seeded_random library call: eager's own draw from seed 42 with
# the generator restored, so compiled results equal eager's to the bit and the generator is left as it was.
SEEDED = {
    "randn": lambda x: torch.randn(3, 5, device=x.device) + x,
    "rand_like": lambda x: torch.rand_like(x),
    "randint": lambda x: torch.randint(-4, 9, (7,), device=x.device),
    "randint_like": lambda x: torch.randint_like(x, 10),
    "normal_numbers": lambda x: torch.normal(1.5, 0.25, (4, 4), device=x.device),
    "normal_tensors": lambda x: torch.normal(x, x.abs()),
    "normal_tensor_mean": lambda x: torch.normal(x, 1.1),
    "normal_tensor_std": lambda x: torch.normal(2.7, x.abs()),
    "sdpa_dropout": lambda x: F.scaled_dot_product_attention(x[None], x[None], x[None], dropout_p=0.5, is_causal=True),
    "fractional_max_pool2d": lambda x: F.fractional_max_pool2d(x[None, None].expand(2, 3, 3, 5).contiguous(), 2,
                                                              output_size=(2, 3)),
    "bernoulli": lambda x: torch.bernoulli(x.sigmoid()),
    "uniform_": lambda x: x.clone().uniform_(-3, 3),
    "normal_": lambda x: x.clone().normal_(2, 5),
    "exponential_": lambda x: x.clone().exponential_(0.5),
    "cauchy_": lambda x: x.clone().cauchy_(0, 0.5),
    "geometric_": lambda x: x.clone().geometric_(0.2),
    "log_normal_": lambda x: x.clone().log_normal_(0, 0.25),
    "dropout": lambda x: F.dropout(x * 2, 0.4),
    "dropout_inplace": lambda x: F.dropout(x * 2, 0.4, inplace=True),
    "dropout2d": lambda x: F.dropout2d(x[None, :, :, None].expand(2, 3, 5, 4).contiguous(), 0.5),
    "dropout1d_unbatched": lambda x: F.dropout1d(x, 0.5),
    "dropout2d_3d": lambda x: F.dropout2d(x[None].expand(4, 3, 5).contiguous(), 0.5),
    "dropout3d_unbatched": lambda x: F.dropout3d(x[:, :, None, None].expand(3, 5, 2, 2).contiguous(), 0.5),
    "alpha_dropout": lambda x: F.alpha_dropout(x, 0.3, training=True),
    "feature_alpha_dropout": lambda x: F.feature_alpha_dropout(x[None, :, :, None].expand(2, 3, 5, 4).contiguous(),
                                                               0.3, training=True),
    "rrelu": lambda x: F.rrelu(x, 0.1, 0.3, training=True),
    "multinomial": lambda x: torch.multinomial(x.abs() + 0.1, 4),
}


@pytest.mark.parametrize("device", ["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
@pytest.mark.parametrize("backend", ["dyn", "eager"])
@pytest.mark.parametrize("name", SEEDED)
def test_wrapper_set_seed_draws_eagers_numbers(name, backend, device):
    from torch.testing._utils import wrapper_set_seed
    fn = SEEDED[name]
    f = lambda x: wrapper_set_seed(fn, x)  # noqa: E731
    x = torch.randn(3, 5, device=device)
    want = f(x.clone())
    dyn.reset()
    torch.manual_seed(7)
    state = torch.get_rng_state() if device == "cpu" else torch.cuda.get_rng_state()
    cf = dyn.compile(f, backend=backend, fullgraph=True)
    for _ in range(2):
        assert torch.equal(cf(x.clone()), want)
        # the generator left as it was
        assert torch.equal(torch.get_rng_state() if device == "cpu" else torch.cuda.get_rng_state(), state)
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and stats["graphs"] == 1, stats
    if backend == "dyn":
        assert not stats["eager_graphs"] and stats["compiled_graphs"] == 1, stats


def test_wrapper_set_seed_with_two_random_ops_breaks():
    """A second random op in one wrapper_set_seed would draw from seed 42 again: a graph break, after which
    eager's wrapper runs and gives its own numbers."""
    from torch.testing._utils import wrapper_set_seed
    g = lambda x: wrapper_set_seed(lambda y: F.dropout(y, 0.5) + torch.rand_like(y), x) * 2  # noqa: E731
    x = torch.randn(64)
    with pytest.raises(dyn.Unsupported, match="second random op"):
        dyn.compile(g, backend="dyn", fullgraph=True)(x)
    assert torch.equal(dyn.compile(g, backend="dyn")(x), g(x))


@pytest.mark.parametrize("feature", [False, True], ids=["dropout", "dropout2d"])
def test_dropout_trains_over_a_symbolic_batch_with_philox_masks(feature):
    # a training graph with dropout compiled once for every batch size (the second size makes the batch `?`):
    # the mask is philox's bits at each element's row-major index under the runtime sizes (per channel for
    # dropout2d), and the backward replays it, so the gradients are eager's for that mask
    torch.manual_seed(0)
    conv = nn.Conv2d(3, 4, 3, padding=1)

    def f(x):
        h = conv(x)
        return F.dropout2d(h, 0.4, True) if feature else F.dropout(h, 0.4, True)
    dyn.reset()
    cf = dyn.compile(f)
    scale = torch.tensor(1.0) / torch.tensor(0.6)  # eager's float32 scale
    for n in (2, 3, 5):
        x = torch.randn(n, 3, 6, 6)
        out, seed = seeded_call(cf, 40 + n, x)
        h = conv(x)
        shape = (n, 4, 1, 1) if feature else tuple(h.shape)
        keep = uniform24(philox(seed, 0, int(np.prod(shape)))[0]).reshape(shape) < np.float32(0.6)
        mask = torch.from_numpy(keep).expand(h.shape)
        # the mask exactly; the kept values as eager's convolution scaled (oneDNN's channels-last kernel, which
        # dyn's runs, rounds differently from its NCHW one on some CPUs: AMD EPYC, 1 ulp)
        assert torch.equal(out != 0, mask & (h != 0))
        torch.testing.assert_close(out, torch.where(mask, h * scale, torch.zeros(())))
        g = torch.randn(out.shape)
        conv.zero_grad()
        (out * g).sum().backward()
        got = [p.grad.clone() for p in conv.parameters()]
        conv.zero_grad()
        (torch.where(mask, conv(x) * scale, torch.zeros(())) * g).sum().backward()
        for a, b in zip(got, conv.parameters()):
            torch.testing.assert_close(a, b.grad)
    s = dyn.stats()
    assert s["eager_graphs"] == [] and s["dynamic_entries"] == 1 and s["dynamic_fallbacks"] == 0, s


def test_stochastic_depth_trains_over_a_symbolic_batch():
    # torchvision's stochastic depth (EfficientNet's blocks): a bernoulli per row of a `?` batch, drawn from
    # philox at the row's index, saved for the backward as a function of the batch size
    from torchvision.ops import stochastic_depth
    torch.manual_seed(0)
    w = torch.randn(4, 4, requires_grad=True)

    def f(x):
        return stochastic_depth(x @ w, 0.2, "row", True)
    dyn.reset()
    cf = dyn.compile(f)
    for n in (2, 3, 6):
        x = torch.randn(n, 4)
        out, seed = seeded_call(cf, 70 + n, x)
        keep = torch.from_numpy(uniform24(philox(seed, 0, n)[0]).reshape(n, 1) < np.float32(0.8))
        want = (x @ w) * (keep.float() / 0.8)
        torch.testing.assert_close(out, want)
        _same_weight_gradient(out, want, w)
    s = dyn.stats()
    assert s["eager_graphs"] == [] and s["dynamic_entries"] == 1 and s["dynamic_fallbacks"] == 0, s


def _same_weight_gradient(out, want, w):
    """w's gradient through the compiled output `out` equals its gradient through `want` (eager's formula with the
    compiled draws), for a random cotangent."""
    g = torch.randn(out.shape)
    w.grad = None
    (out * g).sum().backward()
    got = w.grad.clone()
    w.grad = None
    (want * g).sum().backward()
    torch.testing.assert_close(got, w.grad)


def test_random_tensors_of_a_symbolic_batch_train():
    # torch.rand(x.shape[0], 1) (a per-row mask as timm's drop_path draws it) and randn_like (noise) over a `?`
    # batch: graph.random sized at run time, element i philox's bits at its row-major index (Box-Muller for the
    # normal: words 0 and 1), the mask saved for the backward
    torch.manual_seed(0)
    w = torch.randn(4, 4, requires_grad=True)

    def f(x):
        h = x @ w
        keep = (torch.rand(h.shape[0], 1) < 0.8).to(h.dtype)
        return h * keep / 0.8 + torch.randn_like(h)
    dyn.reset()
    cf = dyn.compile(f)
    for n in (2, 3, 6):
        x = torch.randn(n, 4)
        out, seed = seeded_call(cf, 90 + n, x)
        keep = torch.from_numpy(uniform24(philox(seed, 0, n)[0]).reshape(n, 1) < np.float32(0.8)).float()
        words = philox(seed, 1, 4 * n)
        u1, u2 = 1 - uniform24(words[0]).astype(np.float64), uniform24(words[1]).astype(np.float64)
        z = torch.from_numpy(np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)).float().reshape(n, 4)
        want = (x @ w) * keep / 0.8
        torch.testing.assert_close(out, want + z, rtol=1e-5, atol=1e-5)  # float32 log/cos against float64's
        _same_weight_gradient(out, want, w)
    s = dyn.stats()
    assert s["eager_graphs"] == [] and s["dynamic_entries"] == 1 and s["dynamic_fallbacks"] == 0, \
        s["dynamic_fallback_reasons"]
