import pytest
import torch

import dyn
from conftest import BACKENDS


def f(x, y):
    return torch.cos(x) + torch.sin(y)


def rmsnorm(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


SHAPES = [(8,), (4, 8), (3, 5, 7), (2, 3, 4, 16), (1, 1), (0, 4)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_cos_sin(backend, dtype, shape):
    x = torch.randn(shape, dtype=dtype)
    y = torch.randn(shape[-1:], dtype=dtype)
    cf = dyn.compile(f, backend=backend, fullgraph=True)
    torch.testing.assert_close(cf(x, y), f(x, y))
    torch.testing.assert_close(cf(x, y), f(x, y))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(4, 8), (3, 5, 7), (16, 128), (1, 33)])
def test_rmsnorm(backend, dtype, shape):
    x = torch.randn(shape, dtype=dtype)
    w = torch.randn(shape[-1], dtype=dtype)
    cr = dyn.compile(rmsnorm, backend=backend, fullgraph=True)
    torch.testing.assert_close(cr(x, w), rmsnorm(x, w))
    torch.testing.assert_close(cr(x, w, 1e-3), rmsnorm(x, w, 1e-3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_decorator_forms(backend):
    @dyn.compile
    def a(x):
        return x * 2 + 1

    @dyn.compile(backend=backend)
    def b(x):
        return torch.exp(-x)

    x = torch.randn(5)
    torch.testing.assert_close(a(x), x * 2 + 1)
    torch.testing.assert_close(b(x), torch.exp(-x))


def test_graph_text_and_tabular(capsys):
    cf = dyn.compile(f, backend="eager")
    x, y = torch.randn(4, 8), torch.randn(8)
    cf(x, y)
    g = cf.graphs[0][0]
    text = str(g)
    assert "func.func @forward(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>) -> (tensor<4x8xf32>)" in text
    assert "graph.cos %arg0 : tensor<4x8xf32> -> tensor<4x8xf32>" in text
    assert "graph.add" in text
    g.print_tabular()
    assert "graph.sin" in capsys.readouterr().out
    torch.testing.assert_close(g(x, y)[0], f(x, y))


@pytest.mark.skipif("dyn" not in BACKENDS, reason="compiler core not built")
def test_keep_stages_and_unused_input():
    def g(x, unused, y):
        return x * y
    cf = dyn.compile(g, options={"keep_stages": True}, fullgraph=True)
    x, u, y = torch.randn(3, 4), torch.randn(7), torch.randn(4)
    torch.testing.assert_close(cf(x, u, y), x * y)
    (stages,) = cf.stages()
    names = [s for s, _ in stages]
    assert names[0] == "graph" and len(names) >= 2
    assert "graph.mul" in stages[0][1]
    g0 = str(cf.graphs[0][0])
    assert "tensor<7xf32>" not in g0 and "%arg1: tensor<4xf32>" in g0
