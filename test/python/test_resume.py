"""Graph breaks that resume: the graph so far runs, Python makes the call dyn cannot capture (or takes
the branch), and the rest of the frame runs in a generated __resume_at function that is captured on
its own. Also dyn.export, run-only mode (`with dyn.run():`) and DYN_LOGS."""
import contextlib
import dis
import sys

import numpy as np
import pytest
import torch

try:
    import scipy.fft
except ImportError:  # the GPU machine's venv may lack scipy
    scipy = None

import dyn
from dyn.capture import resume
from conftest import BACKENDS


def graphs_of(cf):
    return [g for g, k, e in cf.graphs if g is not None]


def check(fn, *args, backend="eager", calls=3):
    cf = dyn.compile(fn, backend=backend)
    for _ in range(calls):
        torch.testing.assert_close(cf(*args), fn(*args))
    return cf


# -- resume functions as bytecode ----------------------------------------------------------------------
def _sample(a, b, *rest, k=3):
    x = a + 1
    y = b * 2
    try:
        z = x + y
        w = [i * z for i in range(3)]  # z is a cell variable on 3.11
    except ZeroDivisionError:
        z = -1
    return x, y, z, w, k, rest


def test_resume_code_runs_the_rest_of_the_frame():
    co = _sample.__code__
    store_y = next(i for i in dis.get_instructions(co) if i.opname == "STORE_FAST" and i.argval == "y")
    live, in_loop = resume.analyze(co, store_y.offset, store_y.offset)
    assert not in_loop and {"x", "k", "rest"} <= live
    bound = dict(a=1, b=2, x=2, k=5, rest=(7,))
    names = tuple(n for n in co.co_varnames + co.co_cellvars if n in live and n in bound)
    fn = resume.resume_function(_sample, resume.resume_code(co, store_y.offset, [resume.VALUE], names))
    assert fn.__code__.co_name == f"__resume_at_{store_y.offset}"
    # the value on the stack (b * 2) is the first parameter, then the live locals
    assert fn(4, *[bound[n] for n in names]) == _sample(1, 2, 7, k=5)


def test_resume_code_inside_a_loop_is_reported():
    def loop(xs):
        out = []
        for t in xs:
            out.append(t)
        return out
    append = next(i for i in dis.get_instructions(loop.__code__) if i.argval == "append")
    assert resume.analyze(loop.__code__, append.offset, append.offset)[1]


# -- breaks on calls -------------------------------------------------------------------------------------
def item_in_python(x):
    y = x * 2
    s = y.sum().item()
    return y + s


def tolist_then_tensor(x, n):
    out = [x * i for i in range(n)]
    t = torch.stack(out).sum(0).tolist()
    return x + t[0]


def numpy_scipy_round_trip(x):
    y = x.numpy()
    y = scipy.fft.dct(y)
    return torch.from_numpy(y) * 2 + x


def numpy_in_the_middle(x):
    a = torch.relu(x) + 1
    m = np.abs(a.numpy()).max()
    return a * float(m)


def _branchy_helper(x):
    if x.mean() > 0:
        return x - 1
    return x + 1


def break_in_inlined_call(x):
    a = x.sin()
    b = _branchy_helper(a)
    return b * 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_item_resumes(backend):
    cf = check(item_in_python, torch.randn(5), backend=backend)
    # y * 2 and sum before .item(); y + s after it
    assert len(graphs_of(cf)) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_tolist_resumes(backend):
    cf = check(tolist_then_tensor, torch.randn(3), 3, backend=backend)
    assert len(graphs_of(cf)) == 2
    assert cf.breaks[0]["reason"] == "Tensor.tolist"


@pytest.mark.skipif(scipy is None, reason="needs scipy")
@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_scipy_round_trip(backend):
    x = torch.randn(6, dtype=torch.float64)
    cf = check(numpy_scipy_round_trip, x, backend=backend)
    reasons = [b["reason"] for b in cf.breaks]
    assert reasons[0] == "Tensor.numpy" and "dct" in reasons[1] and "from_numpy" in reasons[2]
    assert [b["lineno"] for b in cf.breaks] == [numpy_scipy_round_trip.__code__.co_firstlineno + k
                                                for k in (1, 2, 3)]
    assert graphs_of(cf)[-1].ops() == ["constant", "mul", "add"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_in_the_middle(backend):
    check(numpy_in_the_middle, torch.randn(7), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_inside_an_inlined_function(backend):
    cf = dyn.compile(break_in_inlined_call, backend=backend)
    for i in range(6):
        x = torch.randn(5) + (2 if i % 2 else -2)
        torch.testing.assert_close(cf(x), break_in_inlined_call(x))
    # sin | helper: mean>0, x-1, x+1 (its own frame) | *3
    assert len(graphs_of(cf)) == 5
    assert any(b["filename"] == __file__ and b["lineno"] == _branchy_helper.__code__.co_firstlineno + 1
               for b in cf.breaks)


class Noisy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        print("shape", tuple(h.shape))
        return h.relu()


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Noisy()
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.inner(x) + 1)


def test_break_inside_a_submodule(capsys):
    torch.manual_seed(0)
    m = Outer()
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(3, 4)
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(cm(x), m(x))
    assert capsys.readouterr().out.count("shape (3, 4)") == 6  # once per call, compiled or not
    # inner: lin | relu; outer after the call: +1, head
    assert len(graphs_of(cm._dyn_forward)) == 3


def kwargs_and_stack(x, scale):
    # the break happens with a partial expression on the stack (x * 2 is computed before the call)
    return x * 2 + torch.from_numpy(np.full(x.shape, scale, dtype=np.float32)) * x.sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_with_values_on_the_stack(backend):
    check(kwargs_and_stack, torch.randn(4), 1.5, backend=backend)


def closure_and_cells(x):
    k = 3.0

    def scale(t):
        return t * k
    y = scale(x)
    z = y.sum().item()
    return scale(y) + z


def test_break_with_cell_variables():
    # the local function is recreated by the resume function's bytecode
    check(closure_and_cells, torch.randn(4))


def list_built_across_a_break(x):
    outs = [x + 1]
    print("between")
    outs.append(x * 2)
    return torch.cat(outs)


def test_list_built_across_a_break(capsys):
    check(list_built_across_a_break, torch.randn(3))


def dict_and_kwargs(x, *, bias=1.0):
    d = {"a": x.cos()}
    v = d["a"].max().item()
    d["b"] = d["a"] + v + bias
    return d


def test_dict_and_keyword_only_argument_across_a_break():
    cf = dyn.compile(dict_and_kwargs, backend="eager")
    x = torch.randn(5)
    for bias in (1.0, 2.0):
        got, want = cf(x, bias=bias), dict_and_kwargs(x, bias=bias)
        assert got.keys() == want.keys()
        for k in want:
            torch.testing.assert_close(got[k], want[k])


def argument_list_mutated_after_break(x, acc):
    y = x + 1
    print("step")
    acc.append(y)
    return y


def test_argument_list_is_the_real_one_after_a_break(capsys):
    cf = dyn.compile(argument_list_mutated_after_break, backend="eager")
    acc = []
    x = torch.randn(3)
    cf(x, acc)
    cf(x, acc)
    assert len(acc) == 2
    torch.testing.assert_close(acc[0], x + 1)


def break_in_a_loop(x):
    for i in range(3):
        x = x + i
        print(i)
    return x


def test_break_inside_a_loop_runs_the_frame_eagerly(capsys):
    cf = check(break_in_a_loop, torch.randn(3))
    assert "loop" in cf.breaks[0]["reason"]
    assert capsys.readouterr().out.split() == ["0", "1", "2"] * 6


def test_fullgraph_reports_the_breaking_line():
    with pytest.raises(dyn.Unsupported) as e:
        dyn.compile(item_in_python, backend="eager", fullgraph=True)(torch.randn(3))
    assert e.value.filename == __file__
    assert e.value.lineno == item_in_python.__code__.co_firstlineno + 2


# -- dyn.export ----------------------------------------------------------------------------------------
def mlp(x, w, b):
    return torch.relu(x @ w + b).sum(-1)


def test_export_returns_one_callable_graph():
    x, w, b = torch.randn(3, 4), torch.randn(4, 5), torch.randn(5)
    ex = dyn.export(mlp, x, w, b)
    text = str(ex)
    assert "graph.matmul" in text and "graph.relu" in text and "func.func" in text
    torch.testing.assert_close(ex(x, w, b), mlp(x, w, b))
    x2 = torch.randn(3, 4)
    torch.testing.assert_close(ex(x2, w, b), mlp(x2, w, b))
    with pytest.raises(ValueError, match="size"):
        ex(torch.randn(2, 4), w, b)


def test_export_module_reads_parameters_live():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    x = torch.randn(5, 4)
    ex = dyn.export(m, x)
    with torch.no_grad():
        torch.testing.assert_close(ex(x), m(x))
        m[0].weight.mul_(2)
        torch.testing.assert_close(ex(x), m(x))


def test_export_raises_on_a_break_with_the_line():
    with pytest.raises(dyn.Unsupported) as e:
        dyn.export(numpy_in_the_middle, torch.randn(4))
    assert e.value.filename == __file__
    assert e.value.lineno == numpy_in_the_middle.__code__.co_firstlineno + 2
    assert f"{__file__}:{e.value.lineno}" in str(e.value)


# -- run-only mode -------------------------------------------------------------------------------------
def test_run_only_mode_reuses_and_never_compiles():
    def f(x):
        return x * 2 + 1
    calls = []

    def backend(graph, inputs):
        calls.append(graph)
        return graph
    cf = dyn.compile(f, backend=backend)
    x = torch.randn(4)
    cf(x)
    assert len(calls) == 1
    with dyn.run():
        torch.testing.assert_close(cf(x), f(x))          # compiled entry reused
        y = torch.randn(2, 3)
        torch.testing.assert_close(cf(y), f(y))          # unseen: eager, nothing compiled
        torch.testing.assert_close(cf(y.double()), f(y.double()))
    assert len(calls) == 1
    cf(y)  # outside, it compiles again
    assert len(calls) == 2


def test_run_only_mode_as_decorator():
    cf = dyn.compile(lambda x: x.sin(), backend="eager")
    run_only = dyn.run()(cf)
    x = torch.randn(3)
    torch.testing.assert_close(run_only(x), x.sin())
    assert graphs_of(cf) == []


# -- DYN_LOGS --------------------------------------------------------------------------------------------
def test_logs_graph_breaks_recompiles_guards(monkeypatch, capsys):
    monkeypatch.setenv("DYN_LOGS", "graph_breaks,recompiles,guards")
    cf = dyn.compile(item_in_python, backend="eager")
    cf(torch.randn(5))
    cf(torch.randn(6))
    err = capsys.readouterr().err
    line = item_in_python.__code__.co_firstlineno + 2
    assert f"[dyn:graph_breaks] graph break in item_in_python at {__file__}:{line}: Tensor.item" in err
    assert "[dyn:recompiles] recompiling item_in_python" in err
    assert "arg0.size is (6,), was (5,)" in err
    assert "[dyn:guards] guards of item_in_python" in err and "size=(5,)" in err


def test_logs_off_by_default(monkeypatch, capsys):
    monkeypatch.delenv("DYN_LOGS", raising=False)
    cf = dyn.compile(item_in_python, backend="eager")
    cf(torch.randn(5))
    assert "[dyn:" not in capsys.readouterr().err


# -- stores Python must make --------------------------------------------------------------------------
class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        h = self.lin(x)
        self.calls = self.calls + 1
        self.last = h
        return h * 2


def test_attribute_store_is_recorded_and_made():
    # plain attribute stores are side effects: recorded while capturing, made after the graph (no break)
    torch.manual_seed(0)
    m = Counter()
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(2, 3)
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(cm(x), m.lin(x) * 2)
    assert m.calls == 3
    torch.testing.assert_close(m.last, m.lin(x))
    assert cm._dyn_forward.breaks == []


class BufferStore(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(3))
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        h = self.lin(x)
        self.buf = h.sum(0)  # Module.__setattr__ registers it as the buffer: Python makes this store
        return h * 2


def test_attribute_store_breaks_and_is_made():
    torch.manual_seed(0)
    m = BufferStore()
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(2, 3)
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(cm(x), m.lin(x) * 2)
    torch.testing.assert_close(m.buf, m.lin(x).sum(0))
    assert "buf" in m._buffers and "buf" not in m.__dict__
    assert "buffer" in cm._dyn_forward.breaks[0]["reason"]


STEP = 0


def bump_global(x):
    global STEP
    y = x + 1
    STEP = STEP + 1
    return y * STEP


def test_global_store_breaks_and_is_made():
    global STEP
    STEP = 0
    cf = dyn.compile(bump_global, backend="eager")
    x = torch.randn(3)
    outs = [cf(x) for _ in range(3)]
    assert STEP == 3
    for k, o in enumerate(outs, 1):
        torch.testing.assert_close(o, (x + 1) * k)


# -- an instruction dyn cannot capture after some graph work ------------------------------------------
_CTX = contextlib.suppress(KeyError)  # a context manager dyn does not trace


def with_block_later(x):
    y = torch.relu(x) * 2
    with _CTX:
        z = y + 1
    return z * y


def raise_on_bad_input(x, limit):
    y = x.abs() + 1
    if limit < 0:
        raise ValueError("limit must be >= 0")
    return y.clamp(max=limit)


def test_unsupported_instruction_keeps_the_graph_before_it():
    cf = check(with_block_later, torch.randn(4))
    assert len(graphs_of(cf)) == 1 and graphs_of(cf)[0].ops() == ["relu", "constant", "mul"]
    assert cf.breaks[0]["reason"] == "with statement (suppress) (the rest of the frame runs eagerly)"
    assert cf.breaks[0]["lineno"] == with_block_later.__code__.co_firstlineno + 2


def test_raise_runs_in_the_resume_function():
    cf = dyn.compile(raise_on_bad_input, backend="eager")
    x = torch.randn(4)
    torch.testing.assert_close(cf(x, 2.0), raise_on_bad_input(x, 2.0))
    with pytest.raises(ValueError, match="limit must be"):
        cf(x, -1.0)
    torch.testing.assert_close(cf(x, 0.5), raise_on_bad_input(x, 0.5))
