"""Issue 10 item 3 op families compiled natively and compared with eager: composite reductions (all/any,
argmax/argmin, logsumexp, vector norms), scans (cumsum, cumprod, logcumsumexp, cummax/cummin with indices),
flip/roll/repeat (tile, repeat_interleave). NaN, infinities, ties, empty dims and every dtype family."""
import pytest
import torch

import dyn
from conftest import BACKENDS


def _x(dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 4, generator=g)
    if dtype.is_floating_point:
        x = x.to(dtype)
        x[0, 1, 2] = float("nan")
        x[1, 2, 0] = float("inf")
        x[2, 0, 1] = -float("inf")
        x[1, 3] = x[1, 4]  # ties
        return x
    if dtype == torch.bool:
        return x > 0.3
    return (x * 3).to(dtype)


FLOAT_FNS = {
    "all": lambda x: (torch.all(x), x.all(1), torch.all(x, dim=(0, 2), keepdim=True)),
    "any": lambda x: (torch.any(x), x.any(-1, keepdim=True), torch.any(x[0, 0, 0])),
    "argmax": lambda x: (torch.argmax(x), x.argmax(1), torch.argmax(x, 2, keepdim=True), x[0, 0, 0].argmax()),
    "argmin": lambda x: (torch.argmin(x), x.argmin(0, True), torch.argmin(x, -1)),
    "logsumexp": lambda x: (torch.logsumexp(x, 1), torch.logsumexp(x, (0, 2), keepdim=True),
                            torch.logsumexp(x[2], 0)),
    "vector_norm": lambda x: tuple(torch.linalg.vector_norm(x, o, d) for o, d in
                                   ((2, None), (1, 1), (float("inf"), (0, 2)), (-float("inf"), 2), (0, 1), (3.5, -1))),
    "norm": lambda x: (torch.norm(x), x.norm(1, 2), torch.norm(x, "fro", (0, 1)), torch.norm(x, float("inf"))),
    "cumsum": lambda x: (torch.cumsum(x, 1), x.cumsum(-1), torch.cumsum(x, 0, dtype=torch.float64)),
    "cumprod": lambda x: (torch.cumprod(x, 2), x.cumprod(0)),
    "logcumsumexp": lambda x: (torch.logcumsumexp(x, 1), torch.logcumsumexp(x, 0)),
    "cummax": lambda x: (tuple(torch.cummax(x, 1)), x.cummax(2).indices),
    "cummin": lambda x: (tuple(torch.cummin(x, 0)), x.cummin(-1).values),
    "flip": lambda x: (torch.flip(x, (0, 2)), x.flip(1), torch.fliplr(x), torch.flipud(x)),
    "roll": lambda x: (torch.roll(x, 2, 1), torch.roll(x, (-7, 1), (0, 2)), torch.roll(x, 5)),
    "repeat": lambda x: (x.repeat(2, 1, 3), x.repeat(2, 1, 1, 2), torch.tile(x, (2,))),
    "repeat_interleave": lambda x: (torch.repeat_interleave(x, 2, 1), x.repeat_interleave(3)),
}


def _check(fn, x, backend):
    want = fn(x.clone())
    got = dyn.compile(fn, backend=backend, fullgraph=True)(x.clone())
    torch.testing.assert_close(got, want, equal_nan=True)
    if backend == "dyn":
        assert dyn.stats()["compiled_graphs"] == 1 and not dyn.stats()["eager_graphs"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", FLOAT_FNS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_float(name, dtype, backend):
    _check(FLOAT_FNS[name], _x(dtype), backend)


# a graph with an empty tensor runs with PyTorch's ops (nothing to compute): values only
EMPTY_FNS = {
    "all_any": lambda x: (torch.all(x[:, :0], 1), torch.any(x[:, :0], 1)),
    "logsumexp": lambda x: torch.logsumexp(x[:, :0], 1),
    "repeat": lambda x: (x.repeat(1, 0, 1), torch.repeat_interleave(x, 0, 0)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", EMPTY_FNS)
def test_empty(name, backend):
    fn = EMPTY_FNS[name]
    torch.testing.assert_close(dyn.compile(fn, backend=backend, fullgraph=True)(_x()), fn(_x()))


INT_FNS = ["all", "any", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin", "flip", "roll", "repeat",
           "repeat_interleave"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", INT_FNS)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
def test_int_bool(name, dtype, backend):
    if dtype == torch.bool and name in ("argmax", "argmin"):
        pytest.skip("eager's CPU argmax has no bool kernel")
    _check(FLOAT_FNS[name], _x(dtype), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_take_along_dim(backend):
    x = _x()
    i = torch.tensor([[[3], [0], [4]]])  # [1, 3, 1]: broadcast against x's [3, 5, 4] except along dim 1
    fn = lambda x, i: (torch.take_along_dim(x, i, 1), torch.take_along_dim(x, i.flatten() * 7),  # noqa: E731
                       x.take_along_dim(i.transpose(1, 2) % 3, dim=2))
    _check_args(fn, (x, i), backend)
    # an index out of range: eager raises, and so does the compiled graph's range check (never a clamped read)
    with pytest.raises(Exception):
        dyn.compile(fn, backend=backend)(x, i + 10)


def _check_args(fn, args, backend):
    want = fn(*args)
    got = dyn.compile(fn, backend=backend, fullgraph=True)(*args)
    torch.testing.assert_close(got, want, equal_nan=True)
    if backend == "dyn":
        assert dyn.stats()["compiled_graphs"] == 1 and not dyn.stats()["eager_graphs"]
