"""Data-dependent branches: the graph so far computes the condition and the live values; each side
of the branch resumes in its own graph (compiled the first time that side is taken)."""
import pytest
import torch

import dyn
from conftest import BACKENDS


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_toy_example_three_graphs(backend, dtype):
    cf = dyn.compile(toy_example, backend=backend)
    for i in range(6):
        a = torch.randn(10, dtype=dtype)
        b = torch.randn(10, dtype=dtype).abs() * (-1 if i % 2 else 1)
        torch.testing.assert_close(cf(a, b), toy_example(a, b))
    assert dyn._stats()["backend_calls"] == 3
    assert len([g for g, k, e in cf.graphs if g is not None]) == 3


def nested(x, y):
    z = x * 2
    if z.mean() > 0:
        z = z + y
        if y.amax() > 1:
            return z.sin()
        w = z * 3
    else:
        w = z - y
    return w.cos() + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_branches(backend):
    cf = dyn.compile(nested, backend=backend)
    torch.manual_seed(0)
    for i in range(12):
        x = torch.randn(5) + (1 if i % 2 else -1)
        y = torch.rand(5) * (3 if i % 3 else 0.5)
        torch.testing.assert_close(cf(x, y), nested(x, y))


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        if h.sum() > 0:
            h = torch.relu(h)
        return self.lin(h)


@pytest.mark.parametrize("backend", BACKENDS)
def test_branch_in_module(backend):
    m = Gate()
    cm = dyn.compile(m, backend=backend)
    with torch.no_grad():
        for i in range(6):
            x = torch.randn(3, 4) * (10 if i % 2 else -10)
            torch.testing.assert_close(cm(x), m(x))


def unsupported_after_branch(x):
    if x.sum() > 0:
        print("positive")
    return x + 1


def test_print_in_branch(capsys):
    cf = dyn.compile(unsupported_after_branch, backend="eager")
    x = torch.ones(3)
    torch.testing.assert_close(cf(x), x + 1)
    assert capsys.readouterr().out.count("positive") == 1


def test_fullgraph_rejects_branch():
    with pytest.raises(dyn.Unsupported, match="data-dependent"):
        dyn.compile(toy_example, fullgraph=True, backend="eager")(torch.randn(3), torch.randn(3))


def test_compiled_function_called_from_compiled_function_is_inlined():
    inner = dyn.compile(lambda x: x.exp() * 2, backend="eager")

    def outer(x):
        return inner(x) + 1
    cf = dyn.compile(outer, backend="eager", fullgraph=True)
    x = torch.randn(4)
    torch.testing.assert_close(cf(x), outer(x))
    assert cf.graphs[0][0].ops() == ["exp", "constant", "mul", "constant", "add"]


def with_prints(x, y):
    a = x.sin()
    print("a:", a.shape, a.sum() * 0 + 1)
    b = a * y
    print("b", end="!\n")
    return b.cos()


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_splits_graphs_and_prints_once_per_call(backend, capsys):
    cf = dyn.compile(with_prints, backend=backend)
    x, y = torch.randn(3), torch.randn(3)
    for _ in range(3):
        torch.testing.assert_close(cf(x, y), with_prints(x, y))
    out = capsys.readouterr().out
    assert out.count("a: torch.Size([3]) tensor(1.)") == 6 and out.count("b!") == 6
    assert [g.ops() for g, k, e in cf.graphs if g is not None][1:] == [["mul"], ["cos"]]
    assert dyn._stats()["backend_calls"] == 3


def test_print_with_fullgraph_raises():
    with pytest.raises(dyn.Unsupported, match="print"):
        dyn.compile(with_prints, backend="eager", fullgraph=True)(torch.randn(3), torch.randn(3))
