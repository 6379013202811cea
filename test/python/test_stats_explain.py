"""No silent eager: dyn.stats(), dyn.explain's backend per graph, DYN_LOGS=fallbacks and the warning of a
call that ran no compiled code."""
import warnings

import pytest
import torch

import dyn
from conftest import has_compiler

needs_compiler = pytest.mark.skipif(not has_compiler(), reason="needs the compiler core")


def where(fn):
    return f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}"


def eager_warnings(record):
    return [str(w.message) for w in record if "ran no compiled code" in str(w.message)]


def mm_relu(a, b):
    return torch.relu(a @ b)


def sin_plus(x):
    return torch.sin(x) + 1


def with_break(x):
    y = x.cos()
    print("break")
    return y * 2


@needs_compiler
def test_stats_counts_compiled_graphs_and_recompiles():
    cf = dyn.compile(sin_plus)
    x = torch.randn(5)
    for _ in range(3):
        torch.testing.assert_close(cf(x), sin_plus(x))
    y = torch.randn(2, 3)
    torch.testing.assert_close(cf(y), sin_plus(y))
    s = dyn.stats()
    assert s["captures"] == 2 and s["graphs"] == 2 and s["compiled_graphs"] == 2
    assert s["recompiles"] == 1 and s["graph_breaks"] == 0 and s["eager_graphs"] == []
    assert s["backend_calls"] == 2 and s["graphs_compiled"] == 2  # dyn._stats()'s counters are there too
    dyn.reset()
    s = dyn.stats()
    assert (s["captures"], s["graphs"], s["compiled_graphs"], s["recompiles"], s["eager_graphs"]) == (0, 0, 0, 0, [])


@needs_compiler
def test_graph_break_graphs_are_each_explained(capsys):  # capsys: the print
    x = torch.randn(4)
    out = dyn.explain(with_break)(x)
    assert out.graph_count == 2 and out.graph_break_count == 1
    assert [b["backend"] for b in out.backends] == ["dyn (cpu)", "dyn (cpu)"]
    assert all(b["compiled"] and b["reason"] is None for b in out.backends)
    assert "Backend per Graph:\n  Graph 0: dyn (cpu)\n  Graph 1: dyn (cpu)" in str(out)
    torch.testing.assert_close(dyn.compile(with_break)(x), with_break(x))
    s = dyn.stats()
    assert s["graph_breaks"] >= 1 and s["compiled_graphs"] >= 2 and s["eager_graphs"] == []


def test_eager_backend_graphs_are_listed_as_chosen_not_fallbacks(monkeypatch, capsys):
    monkeypatch.setenv("DYN_LOGS", "fallbacks")
    cf = dyn.compile(sin_plus, backend="eager")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        cf(torch.randn(3))
    assert eager_warnings(record) == []
    s = dyn.stats()
    assert s["compiled_graphs"] == 0 and len(s["eager_graphs"]) == 1
    g = s["eager_graphs"][0]
    assert g["reason"] == "backend='eager'" and g["where"] == where(sin_plus)
    assert g["graph"].ops() == ["sin", "constant", "add"]
    assert "[dyn:fallbacks]" not in capsys.readouterr().err  # asked for: not a fallback


def cumsum_relu(a, w):
    return torch.relu(torch.cumsum(a @ w, 1))


@needs_compiler
def test_requires_grad_is_compiled_with_a_backward():
    a, w = torch.randn(3, 4), torch.randn(4, 5, requires_grad=True)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        r = dyn.compile(mm_relu)(a, w)
    assert eager_warnings(record) == []
    r.sum().backward()
    torch.testing.assert_close(w.grad, torch.autograd.grad(mm_relu(a, w).sum(), w)[0])
    s = dyn.stats()
    assert s["compiled_graphs"] == 1 and s["backward_graphs"] == 1 and s["eager_graphs"] == []
    out = dyn.explain(mm_relu)(a, w)
    assert "Graph 0: dyn (cpu, forward and backward)" in str(out)


@needs_compiler
def test_training_graph_without_a_rule_runs_eagerly_warns_once_and_says_why(monkeypatch, capsys):
    monkeypatch.setenv("DYN_LOGS", "fallbacks")
    a, w = torch.randn(3, 4), torch.randn(4, 5, requires_grad=True)
    cf = dyn.compile(cumsum_relu)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        r = cf(a, w)
        cf(a, w)
        cf(torch.randn(2, 4), w)  # a new entry, still no compiled code: no second warning
    said = eager_warnings(record)
    assert len(said) == 1 and "no derivative rule" in said[0] and where(cumsum_relu) in said[0]
    r.sum().backward()  # PyTorch's autograd ran it: gradients flow
    torch.testing.assert_close(w.grad, torch.autograd.grad(cumsum_relu(a, w).sum(), w)[0])
    s = dyn.stats()
    assert s["compiled_graphs"] == 0 and s["graphs"] == 2 and len(s["eager_graphs"]) == 2
    for g in s["eager_graphs"]:
        assert g["where"] == where(cumsum_relu) and "graph.cumulative has no derivative rule" in g["reason"]
        assert g["backend"] == "eager (PyTorch ops)"
    err = capsys.readouterr().err
    assert err.count("[dyn:fallbacks]") == 2 and f"{where(cumsum_relu)}: a graph (3 ops) runs eager" in err
    out = dyn.explain(cumsum_relu)(a, w)
    assert out.graph_count == 1 and out.backends[0]["compiled"] is False
    assert "Graph 0: eager (PyTorch ops): dyn-graph-autodiff: graph.cumulative has no derivative rule" in str(out)


@needs_compiler
def test_requires_grad_under_no_grad_is_compiled():
    a, w = torch.randn(3, 4), torch.randn(4, 5, requires_grad=True)
    with warnings.catch_warnings(record=True) as record, torch.no_grad():
        warnings.simplefilter("always")
        torch.testing.assert_close(dyn.compile(mm_relu)(a, w), mm_relu(a, w))
        out = dyn.explain(mm_relu)(a, w)
    assert eager_warnings(record) == []
    assert out.backends[0]["backend"] == "dyn (cpu)" and out.backends[0]["compiled"]
    assert dyn.stats()["eager_graphs"] == []


@needs_compiler
def test_compiler_failure_is_reported_with_its_diagnostic(monkeypatch, capsys):
    """The core's error names the stage and the op; stats, explain and the fallback log repeat it."""
    from dyn import backends

    class Core:
        HAS_COMPILER = True

        def __getattr__(self, name):
            return getattr(dyn._C, name)

        def compile(self, *args):
            raise RuntimeError("stage 'loop' failed:\nloc(\"graph\":2:3): error: 'loop.sin' op has no lowering\n"
                               "loc(\"graph\":2:3): note: see current operation")
    monkeypatch.setattr(backends, "_C", Core())
    monkeypatch.setenv("DYN_LOGS", "fallbacks")
    x = torch.randn(4)
    with pytest.warns(UserWarning, match="compiling sin_plus failed"):
        torch.testing.assert_close(dyn.compile(sin_plus)(x), sin_plus(x))
    want = "dyn's compiler failed (stage 'loop'): 'loop.sin' op has no lowering"
    s = dyn.stats()
    assert s["compiled_graphs"] == 0 and [g["reason"] for g in s["eager_graphs"]] == [want]
    assert f"{where(sin_plus)}: a graph (3 ops) runs eager (the frame runs in Python): {want}" in capsys.readouterr().err
    with pytest.warns(UserWarning, match="compiling sin_plus failed"):
        out = dyn.explain(sin_plus)(x)
    assert out.backends == [dict(backend="eager (the frame runs in Python)", compiled=False, reason=want,
                                 where=where(sin_plus))]


@needs_compiler
def test_an_op_without_lowering_is_explained_by_what_ran():
    """A narrow whose start is held in a tensor (eager reads its value: the result's shape depends on data):
    capture breaks the graph there, so nothing compiles and nothing warns; stats count the break, explain
    gives its reason, and the result is eager's."""
    a = torch.arange(12.0).reshape(4, 3)
    b = torch.tensor(1)

    def f(a, b):
        return a.narrow(0, b, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.testing.assert_close(dyn.compile(f)(a, b), f(a, b))
    s = dyn.stats()
    assert s["graph_breaks"] == 1 and s["compiled_graphs"] == 0 and s["eager_graphs"] == []
    out = dyn.explain(f)(a, b)
    assert (out.graph_count, out.graph_break_count) == (0, 1)
    assert out.break_reasons[0]["reason"] == "narrow with a tensor start"


@needs_compiler
def test_tensor_without_elements_runs_with_torch_ops_without_a_warning():
    x = torch.ones(0, 3)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        torch.testing.assert_close(dyn.compile(sin_plus)(x), sin_plus(x))
    assert [str(w.message) for w in record if "dyn" in str(w.message)] == []
    g = dyn.stats()["eager_graphs"]
    assert len(g) == 1 and g[0]["backend"] == "eager (PyTorch ops)" and "without elements" in g[0]["reason"]


@needs_compiler
def test_values_without_elements_that_are_only_returned_compile_natively():
    """T5's decoder returns empty key/value caches beside its results: the runner makes the empty outputs,
    the compiled function computes the rest (the graph used to run with PyTorch ops)."""
    def f(x):
        return x.sin() * 2, x[:0] + 1, torch.zeros(0, 3, dtype=torch.int64).expand(2, 0, 3)

    x = torch.randn(4, 3)
    got, ref = dyn.compile(f)(x), f(x)
    for a, b in zip(got, ref):
        assert a.shape == b.shape and a.dtype == b.dtype
        torch.testing.assert_close(a, b)
    st = dyn.stats()
    assert st["eager_graphs"] == [] and st["compiled_graphs"] == 1


def test_no_fallback_log_without_the_switch(monkeypatch, capsys):
    monkeypatch.delenv("DYN_LOGS", raising=False)
    a, w = torch.randn(3, 4), torch.randn(4, 5, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dyn.compile(cumsum_relu)(a, w)
    assert "[dyn:" not in capsys.readouterr().err
    assert len(dyn.stats()["eager_graphs"]) == 1  # still counted


def test_every_eager_call_is_counted():
    """Calls that run in Python for lack of an entry (past the recompile limit, or unseen inside
    dyn.run()) are counted in stats with their reason, so "no eager run" can be read from stats alone."""
    import warnings
    dyn.reset()
    f = dyn.compile(lambda x: x * 2, dynamic=False)  # sizes as constants: the limit is reached
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in range(1, 13):  # 12 shapes: 8 entries, then the recompile limit
            torch.testing.assert_close(f(torch.ones(n)), torch.full((n,), 2.0))
    s = dyn.stats()
    assert s["eager_calls"] == 4
    (key, calls), = s["eager_call_reasons"].items()
    assert "recompile limit" in key and calls == 4
    with dyn.run():
        f(torch.ones(20))
    assert dyn.stats()["eager_calls"] == 5
    assert any("dyn.run()" in k for k in dyn.stats()["eager_call_reasons"])
    dyn.reset()
    assert dyn.stats()["eager_calls"] == 0 and dyn.stats()["eager_call_reasons"] == {}
