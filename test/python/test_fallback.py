import warnings

import pytest
import torch

import dyn
from conftest import BACKENDS


def data_dependent(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


def with_print(x):
    print("hello")
    return x + 1


def with_item(x):
    return x * x.sum().item()


def with_numpy(x):
    return torch.from_numpy(x.numpy() * 2)


@pytest.mark.parametrize("fn", [data_dependent, with_print, with_item, with_numpy])
@pytest.mark.parametrize("backend", BACKENDS)
def test_unsupported_runs_eagerly(fn, backend):
    cf = dyn.compile(fn, backend=backend)
    for s in (1.0, -1.0):
        x = torch.randn(4, 3).abs() * s
        torch.testing.assert_close(cf(x), fn(x))
    assert dyn._stats()["graph_breaks"] >= 1


@pytest.mark.parametrize("fn", [data_dependent, with_print, with_item])
def test_fullgraph_raises_with_location(fn):
    cf = dyn.compile(fn, backend="eager", fullgraph=True)
    with pytest.raises(dyn.Unsupported) as ei:
        cf(torch.randn(4, 3))
    assert ei.value.filename == __file__
    assert __file__ in str(ei.value)
    import inspect
    lines, start = inspect.getsourcelines(fn)
    assert start < ei.value.lineno < start + len(lines)


def test_custom_backend_gets_graph_and_inputs():
    seen = []

    def my_backend(graph, example_inputs):
        assert isinstance(graph, dyn.Graph)
        seen.append((str(graph), [tuple(t.shape) for t in example_inputs]))
        return graph

    cf = dyn.compile(lambda x, y: torch.relu(x) * y, backend=my_backend)
    x, y = torch.randn(3, 4), torch.randn(4)
    torch.testing.assert_close(cf(x, y), torch.relu(x) * y)
    torch.testing.assert_close(cf(x, y), torch.relu(x) * y)
    assert len(seen) == 1
    assert "graph.relu" in seen[0][0] and "graph.mul" in seen[0][0]
    assert seen[0][1] == [(3, 4), (4,)]


def test_backend_failure_falls_back_with_warning():
    def broken(graph, example_inputs):
        raise RuntimeError("boom")

    cf = dyn.compile(lambda x: x + 1, backend=broken)
    with pytest.warns(UserWarning, match="boom"):
        torch.testing.assert_close(cf(torch.ones(2)), torch.full((2,), 2.0))
    with pytest.raises(RuntimeError, match="boom"):
        dyn.compile(lambda x: x + 1, backend=broken, fullgraph=True)(torch.ones(2))


def test_list_backends_and_unknown_backend():
    assert {"dyn", "eager"} <= set(dyn.list_backends())
    with pytest.raises(ValueError):
        dyn.compile(lambda x: x, backend="nope")


@pytest.mark.parametrize("bad, error, name", [
    (dict(backend=3), TypeError, "backend"), (dict(backend="nope"), ValueError, "backend"),
    (dict(fullgraph="yes"), TypeError, "fullgraph"), (dict(mode="fast"), ValueError, "mode"),
    (dict(options=[1]), TypeError, "options"), (dict(dynamic="maybe"), TypeError, "dynamic")])
def test_compile_checks_its_arguments_at_the_call(bad, error, name):
    """Wrong arguments raise where they are passed, naming the argument: also in the decorator form,
    whose function comes later."""
    with pytest.raises(error, match=name):
        dyn.compile(lambda x: x, **bad)
    with pytest.raises(error, match=name):
        dyn.compile(**bad)
    with pytest.raises(TypeError, match="function or an nn.Module"):
        dyn.compile(torch.ones(2))


def test_exception_in_user_code_propagates():
    def bad(x):
        return x + undefined_name  # noqa: F821

    with pytest.raises(NameError):
        dyn.compile(bad, backend="eager")(torch.ones(2))


def test_explain():
    out = dyn.explain(with_item)(torch.randn(3))
    # x.sum() before the break, x * <the float> in the resume function after it
    assert out.graph_break_count == 1 and out.graph_count == 2
    assert out.ops_per_graph[0] == ["sum"] and "mul" in out.ops_per_graph[1]
    assert out.break_reasons[0]["filename"] == __file__
    assert "item" in str(out)
    out = dyn.explain(with_print)(torch.randn(3))
    assert out.graph_break_count == 1 and out.graph_count == 1
    assert "print" in str(out)
    out = dyn.explain(data_dependent)(torch.randn(3))
    assert out.graph_break_count == 1 and out.graph_count == 2
    assert out.break_reasons[0]["filename"] == __file__
    assert "data-dependent" in str(out)
    out = dyn.explain(lambda x, y: x.sin() + y)(torch.randn(3), torch.randn(3))
    assert out.graph_count == 1 and out.ops_per_graph[0] == ["sin", "add"]
    # the two arguments, the default dtype, and the autocast state ops on float tensors depend on
    assert len(out.out_guards) == 4 and "default dtype" in out.out_guards[2]
    assert out.out_guards[3] == "autocast state (cpu): is (False, torch.bfloat16)"


def test_returns_input_object_and_constants():
    def g(x, y):
        return x, y.shape, 3, (x + 1, None)

    cf = dyn.compile(g, backend="eager", fullgraph=True)
    x, y = torch.randn(2), torch.randn(3, 4)
    r = cf(x, y)
    assert r[0] is x and r[1] == (3, 4) and r[2] == 3 and r[3][1] is None
    torch.testing.assert_close(r[3][0], x + 1)


def test_no_hook_path_matches(monkeypatch):
    from dyn.capture import compiled
    monkeypatch.setattr(compiled, "_HOOK", False)
    cf = dyn.compile(lambda x, y=2.0: x * y, backend="eager")
    x = torch.randn(3)
    torch.testing.assert_close(cf(x), x * 2)
    torch.testing.assert_close(cf(x, y=3.0), x * 3)
    torch.testing.assert_close(cf(x), x * 2)
    assert dyn._stats()["captures"] == 2


def test_max_indices_are_captured():
    def g(x):
        v, i = x.max(-1)
        return v + i
    cf = dyn.compile(g, backend="eager")
    x = torch.randn(3, 4)
    torch.testing.assert_close(cf(x), g(x))
    torch.testing.assert_close(dyn.compile(g, backend="eager", fullgraph=True)(x), g(x))  # no break
