"""Captured ops against eager PyTorch, float32 and float64, on every available backend."""
import math
import warnings

import pytest
import torch
import torch.nn.functional as F

import dyn
from conftest import BACKENDS


def softmax_hand(x):
    m = x.amax(-1, keepdim=True)
    e = torch.exp(x - m)
    return e / e.sum(-1, keepdim=True)


def helper(x):
    return x * torch.sigmoid(x)


def calls_helper(x, y):
    return helper(x) + helper(y).mean(0)


def loops_and_consts(x):
    acc = x
    for i in range(3):
        acc = acc + i * x
    n = x.shape[-1]
    scale = 1.0 / math.sqrt(n)
    return acc * scale, x.size(0), x.dim()


def closure_factory(k):
    def g(x):
        return x * k
    return g


CASES = {
    "arith": (lambda x, y: (x + y) * (x - y) / (y * y + 1) - 2 ** x + x ** 2 - -x, [(4, 8), (8,)]),
    "compare_where": (lambda x, y: torch.where(x > y, x, y * 0.5) + (x <= 0).float(), [(4, 8), (4, 8)]),
    "unary": (lambda x: torch.exp(x).log1p() + x.abs().sqrt() + torch.tanh(x) + x.sigmoid() + x.erf()
              + torch.floor(x) + x.ceil() + x.expm1() + torch.reciprocal(x.abs() + 1), [(3, 5)]),
    "reductions": (lambda x: (x.sum(), x.sum(0), x.mean((0, 1)), x.amax(-1), x.amin(0, keepdim=True),
                              x.max(), x.prod(-1), torch.sum(x, dim=1, keepdim=True)), [(3, 4, 5)]),
    "softmax": (lambda x: (torch.softmax(x, -1), F.softmax(x, dim=0), x.log_softmax(1),
                           F.log_softmax(x, dim=-1)), [(4, 6)]),
    "softmax_hand": (softmax_hand, [(8, 32)]),
    "nn_functional": (lambda x: F.relu(x) + F.gelu(x) + F.silu(x) + F.gelu(x, approximate="tanh")
                      + F.leaky_relu(x, 0.1), [(4, 8)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b), [(4, 16), (16,), (16,)]),
    "layer_norm_noaffine": (lambda x: F.layer_norm(x, x.shape[-2:]), [(2, 4, 16)]),
    "linear": (lambda x, w, b: F.linear(x, w, b), [(4, 8), (16, 8), (16,)]),
    "linear3d": (lambda x, w: F.linear(x, w), [(2, 4, 8), (16, 8)]),
    "matmul": (lambda a, b: (a @ b, torch.matmul(a, b).t(), a.mm(b)), [(4, 8), (8, 3)]),
    "bmm": (lambda a, b: a @ b, [(2, 4, 8), (2, 8, 3)]),
    "matvec": (lambda a, b: a @ b, [(4, 8), (8,)]),
    "shapes": (lambda x: (x.reshape(4, -1), x.view(-1), x.permute(2, 0, 1), x.transpose(0, 1), x.unsqueeze(1),
                          x.flatten(1), x.unsqueeze(0).squeeze(0), x[:, None].expand(2, 5, 3, 4),
                          x.mT, x.contiguous()), [(2, 3, 4)]),
    "indexing": (lambda x: (x[0], x[:, 1:3], x[..., ::2], x[1, :, -1], x[None, 1:], x[-1]), [(3, 4, 5)]),
    "cat_stack": (lambda x, y: (torch.cat([x, y], 0), torch.cat((x, y), dim=-1), torch.stack([x, y], 1)),
                  [(2, 3), (2, 3)]),
    "convert": (lambda x: (x.to(torch.float64), x.double().float(), x.int(), (x > 0).to(x.dtype),
                           x.type_as(x)), [(3, 4)]),
    "clamp_fill": (lambda x: (x.clamp(-0.5, 0.5), torch.clamp(x, min=0), x.masked_fill(x > 0, 1.0),
                              torch.zeros_like(x) + 1, torch.ones_like(x), x.new_zeros(2, 3)), [(3, 4)]),
    "var_std": (lambda x: (x.var(-1), x.std(0, keepdim=True), x.var(-1, unbiased=False)), [(5, 6)]),
    "inline": (calls_helper, [(4, 6), (3, 6)]),
    "loops_and_consts": (loops_and_consts, [(3, 8)]),
    "closure": (closure_factory(3.5), [(4,)]),
    "chunk_split": (lambda x: (x.chunk(2, -1), x.split(3, 0)), [(7, 4)]),
    "max_dim_values": (lambda x: (x.max(-1).values, torch.max(x, 0, keepdim=True)[0], x.min(dim=1)[0]),
                       [(4, 6)]),
    "lambda_listcomp": (lambda x: sum([x * i for i in range(4)]) + max(2, 3), [(3,)]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_op(name, dtype, backend):
    fn, shapes = CASES[name]
    torch.manual_seed(0)
    args = [torch.randn(s, dtype=dtype) for s in shapes]
    cf = dyn.compile(fn, backend=backend, fullgraph=True)
    expected = fn(*args)
    got = cf(*args)
    torch.testing.assert_close(got, expected)
    got = cf(*args)
    torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_and_bool_tensors(backend):
    def g(a, b, m):
        return a * 2 + b, (a > b) & m, a / 2, ~m
    a = torch.randint(-5, 5, (3, 4))
    b = torch.randint(-5, 5, (4,))
    m = torch.rand(3, 4) > 0.5
    cf = dyn.compile(g, backend=backend, fullgraph=True)
    torch.testing.assert_close(cf(a, b, m), g(a, b, m))


@pytest.mark.parametrize("backend", BACKENDS)
def test_rounding_integer_tensors(backend):
    """floor/ceil/trunc of an integer tensor are copies in eager: compiled, not run eagerly."""
    def g(a):
        return torch.floor(a) + 1, a.ceil() * 2, torch.trunc(a)
    a = torch.randint(-5, 5, (3, 4))
    cf = dyn.compile(g, backend=backend, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to eager warns
        got = cf(a)
    torch.testing.assert_close(got, g(a))


@pytest.mark.parametrize("backend", BACKENDS)
def test_global_tensor_is_an_input(backend):
    cf = dyn.compile(lambda x: x + GLOBAL_T, backend=backend, fullgraph=True)
    x = torch.randn(3)
    torch.testing.assert_close(cf(x), x + GLOBAL_T)
    GLOBAL_T.add_(1)  # in-place update is seen: the tensor is an input, never baked in
    torch.testing.assert_close(cf(x), x + GLOBAL_T)


GLOBAL_T = torch.randn(3)


# A linear layer's weight is read transposed in place (loop.matmul transpose_b, runtime
# dyn_matmul_nt): odd sizes exercise the runtime's partial 4x2 tiles and blocks, and K > 512 its
# K panels. Fallback to eager would warn, which fails here.
LINEAR_SHAPES = [((5, 7), 3), ((1, 1), 1), ((67, 129), 65), ((3, 5, 7), 13), ((2, 33, 601), 131)]


@pytest.mark.skipif("dyn" not in BACKENDS, reason="needs the dyn compiler")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,n", LINEAR_SHAPES)
@pytest.mark.parametrize("form", ["linear", "linear_nobias", "matmul_t", "bmm_t"])
def test_linear_transposed_weight(form, shape, n, dtype):
    import warnings
    torch.manual_seed(0)
    x = torch.randn(shape, dtype=dtype)
    k = shape[-1]
    if form == "bmm_t":  # batched: both 3-D, rhs transposed in its last two dims
        if len(shape) != 3:
            pytest.skip("batched case needs a 3-D input")
        w = torch.randn(shape[0], n, k, dtype=dtype)
        fn = lambda a, b: a @ b.transpose(-1, -2)
        args = (x, w)
    else:
        w, b = torch.randn(n, k, dtype=dtype), torch.randn(n, dtype=dtype)
        fn, args = {"linear": (lambda a, w, b: F.linear(a, w, b), (x, w, b)),
                    "linear_nobias": (lambda a, w: F.linear(a, w), (x, w)),
                    "matmul_t": (lambda a, w: torch.relu(a @ w.t()), (x, w))}[form]
    cf = dyn.compile(fn, backend="dyn", fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = cf(*args)
    if dtype == torch.float64:
        torch.testing.assert_close(got, fn(*args))
        return
    # f32 dot products of up to 601 terms summed in another order than eager's: checked against the
    # float64 result with the classic forward error bound of a k-term dot product, k * u * (|a| @ |b|)
    # (u = 2^-24), the bound eager's own f32 result obeys too
    ref = fn(*[a.double() for a in args])
    absolute = fn(*[a.double().abs() for a in args]) if form != "matmul_t" else \
        (x.double().abs() @ w.double().abs().t())
    bound = (k + 2) * 2.0 ** -24 * absolute
    assert ((got.double() - ref).abs() <= bound).all()
    assert ((fn(*args).double() - ref).abs() <= bound).all()
