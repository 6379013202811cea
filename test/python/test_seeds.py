"""TorchDynamo's classic examples, as named tests: toy_example (3 graphs), data-dependent control flow
returning constants, the numpy/scipy round trip, explain, nopython (fullgraph=True), export, custom
backends and nn.Module compile. Every result is compared with eager PyTorch."""
import pytest
import torch
import torch.nn as nn

try:
    import scipy.fft
except ImportError:  # the GPU machine's venv may lack scipy
    scipy = None

import dyn
from conftest import BACKENDS


def line_of(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    for i, l in enumerate(lines):
        if text in l and not l.lstrip().startswith("def "):
            return start + i
    raise AssertionError(f"{text!r} not in {fn.__name__}")


class Recorder:
    """A custom backend: records every graph it is given and counts calls of the callables it returns."""

    def __init__(self):
        self.graphs = []
        self.examples = []
        self.runs = 0

    def __call__(self, graph, example_inputs):
        assert isinstance(graph, dyn.Graph)
        self.graphs.append(graph)
        self.examples.append(list(example_inputs))

        def run(*inputs):
            self.runs += 1
            return graph(*inputs)
        return run


# -- toy_example -----------------------------------------------------------------------------------------
def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def test_seed_toy_example_100_calls_three_graphs_custom_backend():
    rec = Recorder()
    cf = dyn.compile(toy_example, backend=rec)
    torch.manual_seed(0)
    for i in range(100):
        a = torch.randn(10)
        b = torch.randn(10).abs() * (-1 if i % 3 == 0 else 1)
        torch.testing.assert_close(cf(a, b), toy_example(a, b))
    assert len(rec.graphs) == 3
    # the graph before the branch computes x and the condition; each side has its own graph
    ops = sorted(tuple(g.ops()) for g in rec.graphs)
    assert any("abs" in o and "div" in o and "sum" in o for o in ops)
    assert rec.runs >= 200  # compiled graphs ran: the first graph and one side per call


@pytest.mark.parametrize("backend", BACKENDS)
def test_seed_toy_example_100_calls_three_graphs(backend):
    dyn.reset()
    cf = dyn.compile(toy_example, backend=backend)
    torch.manual_seed(1)
    for i in range(100):
        a = torch.randn(10)
        b = torch.randn(10).abs() * (1 if i % 2 else -1)
        torch.testing.assert_close(cf(a, b), toy_example(a, b))
    assert dyn._stats()["backend_calls"] == 3


# -- data-dependent control flow returning constants ---------------------------------------------------
def sign_constant(x):
    if x.sum() > 0:
        return torch.tensor(1)
    return torch.tensor(0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_seed_data_dependent_returns_tensor_constants(backend):
    cf = dyn.compile(sign_constant, backend=backend)
    for s in (1.0, -1.0, 1.0, -1.0):
        x = torch.rand(5) * s
        out = cf(x)
        ref = sign_constant(x)
        torch.testing.assert_close(out, ref)
        assert out.dtype == torch.int64 and out.shape == ()


def data_dependent_if_else(x, y):
    if x.max() > y.max():
        return torch.tensor(1) + x.sum()
    else:
        return torch.tensor(0) + y.sum()


def test_seed_data_dependent_if_else_with_tensor_constants():
    cf = dyn.compile(data_dependent_if_else, backend="eager")
    for _ in range(4):
        x, y = torch.randn(4), torch.randn(4)
        torch.testing.assert_close(cf(x, y), data_dependent_if_else(x, y))


# -- numpy / scipy round trip --------------------------------------------------------------------------
def scipy_round_trip(x):
    y = x.numpy()
    y = scipy.fft.dct(y)
    return torch.from_numpy(y) * 2 + x


@pytest.mark.skipif(scipy is None, reason="needs scipy")
@pytest.mark.parametrize("backend", BACKENDS)
def test_seed_scipy_numpy_round_trip(backend):
    cf = dyn.compile(scipy_round_trip, backend=backend)
    for _ in range(3):
        x = torch.randn(8, dtype=torch.float64)
        torch.testing.assert_close(cf(x), scipy_round_trip(x))
    out = dyn.explain(scipy_round_trip)(torch.randn(8, dtype=torch.float64))
    assert out.graph_break_count >= 1
    lines = {r["lineno"] for r in out.break_reasons}
    assert line_of(scipy_round_trip, "scipy.fft.dct") in lines
    # the torch work after the numpy part is captured again
    assert out.ops_per_graph[-1] == ["constant", "mul", "add"]


# -- explain -------------------------------------------------------------------------------------------
def explained(x):
    a = torch.relu(x) * 2
    n = a.sum().item()
    return a / (n + 1)


def test_seed_explain_on_a_function_with_a_break():
    x = torch.randn(6)
    out = dyn.explain(explained)(x)
    assert out.graph_count == 2 and out.graph_break_count == 1
    assert len(out.graphs) == 2 and len(out.ops_per_graph) == 2
    br = out.break_reasons[0]
    assert br["filename"] == __file__ and br["lineno"] == line_of(explained, ".item()")
    assert "item" in br["reason"]
    text = str(out)
    assert f"{__file__}:{br['lineno']}" in text and "Graph Count: 2" in text
    assert out.out_guards and "arg0" in out.out_guards[0]
    # explain does not change results of a later compile
    torch.testing.assert_close(dyn.compile(explained, backend="eager")(x), explained(x))


# -- nopython / fullgraph=True ---------------------------------------------------------------------------
def nopython_print(x):
    y = x.cos()
    print("not capturable")
    return y


@pytest.mark.parametrize("fn,marker", [(nopython_print, "print("), (explained, ".item()"),
                                       (toy_example, "if b.sum()")])
def test_seed_fullgraph_raises_with_file_and_line(fn, marker):
    cf = dyn.compile(fn, backend="eager", fullgraph=True)
    args = (torch.randn(4),) if fn is not toy_example else (torch.randn(4), torch.randn(4))
    with pytest.raises(dyn.Unsupported) as e:
        cf(*args)
    assert e.value.filename == __file__
    assert e.value.lineno == line_of(fn, marker)
    assert f"{__file__}:{e.value.lineno}" in str(e.value)


def test_seed_fullgraph_decorator_on_break_free_function():
    @dyn.compile(fullgraph=True, backend="eager")
    def ok(x, y):
        return torch.softmax(x @ y, dim=-1)
    x, y = torch.randn(3, 4), torch.randn(4, 5)
    torch.testing.assert_close(ok(x, y), torch.softmax(x @ y, dim=-1))


# -- export ----------------------------------------------------------------------------------------------
def break_free(x, w):
    return torch.tanh(x @ w).mean(-1) + 1


def test_seed_export_break_free_function():
    x, w = torch.randn(3, 4), torch.randn(4, 2)
    ex = dyn.export(break_free, x, w)
    text = str(ex)
    assert "graph." in text and "graph.matmul" in text and "graph.tanh" in text and "func.func" in text
    torch.testing.assert_close(ex(x, w), break_free(x, w))
    x2, w2 = torch.randn(3, 4), torch.randn(4, 2)
    torch.testing.assert_close(ex(x2, w2), break_free(x2, w2))


def test_seed_export_function_with_a_break_raises_with_line():
    with pytest.raises(dyn.Unsupported) as e:
        dyn.export(explained, torch.randn(4))
    assert e.value.filename == __file__
    assert e.value.lineno == line_of(explained, ".item()")
    with pytest.raises(dyn.Unsupported) as e:
        dyn.export(toy_example, torch.randn(4), torch.randn(4))
    assert e.value.lineno == line_of(toy_example, "if b.sum()")


def test_seed_export_module():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3))
    x = torch.randn(2, 4)
    ex = dyn.export(m, x)
    assert "graph.addmm" in str(ex)  # nn.Linear with a bias: ATen's addmm
    with torch.no_grad():
        torch.testing.assert_close(ex(x), m(x))


# -- custom backends -------------------------------------------------------------------------------------
def test_seed_custom_backend_is_called_and_its_callable_used():
    rec = Recorder()

    def fn(x, y):
        return torch.relu(x) * y + 1
    cf = dyn.compile(fn, backend=rec)
    x, y = torch.randn(3, 4), torch.randn(4)
    for _ in range(3):
        torch.testing.assert_close(cf(x, y), fn(x, y))
    assert len(rec.graphs) == 1 and rec.runs == 3
    assert [tuple(t.shape) for t in rec.examples[0]] == [(3, 4), (4,)]
    assert "graph.relu" in str(rec.graphs[0])


def test_seed_custom_backend_result_is_what_the_caller_gets():
    def negating_backend(graph, example_inputs):
        return lambda *inputs: [-o for o in graph(*inputs)]
    cf = dyn.compile(lambda x: x * 2, backend=negating_backend)
    x = torch.randn(3)
    # the backend's callable is used as is: its (deliberately different) result reaches the caller
    torch.testing.assert_close(cf(x), -(x * 2))


# -- nn.Module compile -------------------------------------------------------------------------------------
class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.norm = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 4)
        self.register_buffer("scale", torch.tensor(0.5))

    def forward(self, x):
        return self.fc2(torch.relu(self.norm(self.fc1(x)))) * self.scale


@pytest.mark.parametrize("backend", BACKENDS)
def test_seed_module_compile(backend):
    torch.manual_seed(0)
    m = TinyNet().eval()
    cm = dyn.compile(m, backend=backend)
    assert list(cm.state_dict()) == list(m.state_dict())
    assert all(a is b for a, b in zip(cm.parameters(), m.parameters()))
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(5, 8)
            torch.testing.assert_close(cm(x), m(x))
