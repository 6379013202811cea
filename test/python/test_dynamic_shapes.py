"""Symbolic sizes from capture to kernels (docs/dynamic_shapes.md): automatic dynamic after a size-only
recompile, dyn.mark_dynamic and its bounds, dynamic=True/False, guards on size relations (a relation that
stops holding recompiles), and what a graph the compiler cannot yet take with `?` dims does instead (its
sizes specialized, the reason in stats). Results against eager PyTorch at every size."""
import warnings

import pytest
import torch

import dyn

pytestmark = pytest.mark.skipif(dyn._C is None or not getattr(dyn._C, "HAS_COMPILER", False),
                                reason="dyn._C without the compiler")


@pytest.fixture(autouse=True)
def _fresh():
    dyn.reset()
    yield
    dyn.reset()


def gelu_bias(x, b):
    return torch.tanh(x + b) * x - b


def test_automatic_dynamic_compiles_twice_for_many_sizes():
    cf = dyn.compile(gelu_bias)
    b = torch.randn(16)
    for n in (3, 4, 9, 17, 100, 3):
        x = torch.randn(n, 16)
        torch.testing.assert_close(cf(x, b), gelu_bias(x, b))
    st = dyn.stats()
    assert st["captures"] == 2 and st["dynamic_entries"] == 1 and st["eager_calls"] == 0, st
    assert [r.backend for r in cf.runs] == ["dyn (cpu)", "dyn (cpu, dynamic dims)"]


def test_mark_dynamic_compiles_once_and_enforces_bounds():
    cf = dyn.compile(gelu_bias)
    b = torch.randn(8)
    for n in (5, 6, 30):
        x = torch.randn(n, 8)
        dyn.mark_dynamic(x, 0, min=4, max=32)
        torch.testing.assert_close(cf(x, b), gelu_bias(x, b))
    assert dyn.stats()["captures"] == 1 and dyn.stats()["dynamic_entries"] == 1
    x = torch.randn(40, 8)  # past max: the dynamic entry's guard fails
    torch.testing.assert_close(cf(x, b), gelu_bias(x, b))
    assert dyn.stats()["captures"] == 2


def test_torch_dynamo_mark_dynamic_is_honoured():
    import torch._dynamo
    cf = dyn.compile(gelu_bias)
    b = torch.randn(8)
    for n in (5, 7):
        x = torch.randn(n, 8)
        torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(cf(x, b), gelu_bias(x, b))
    assert dyn.stats()["captures"] == 1


def test_dynamic_true_and_false():
    b = torch.randn(8)
    cf = dyn.compile(gelu_bias, dynamic=True)
    for n in (2, 5, 11):
        x = torch.randn(n, 8)
        torch.testing.assert_close(cf(x, b), gelu_bias(x, b))
    assert dyn.stats()["captures"] == 1
    dyn.reset()
    cf = dyn.compile(gelu_bias, dynamic=False)
    for n in (2, 5, 11):
        x = torch.randn(n, 8)
        torch.testing.assert_close(cf(x, b), gelu_bias(x, b))
    assert dyn.stats()["captures"] == 3 and dyn.stats()["dynamic_entries"] == 0


def test_sizes_zero_and_one_stay_specialized():
    cf = dyn.compile(gelu_bias, dynamic=True)
    b = torch.randn(8)
    x = torch.randn(1, 8)  # 1 broadcasts: never a symbol
    torch.testing.assert_close(cf(x, b), gelu_bias(x, b))
    x = torch.randn(6, 8)  # a new capture: the entry for 1 was specialized
    torch.testing.assert_close(cf(x, b), gelu_bias(x, b))
    assert dyn.stats()["captures"] == 2


def branchy(x):
    if x.size(0) > 8:  # a guard on the relation, not on the value
        return x * 2
    return x + 1


def test_branch_on_a_size_guards_the_relation():
    cf = dyn.compile(branchy, dynamic=True)
    for n in (9, 12, 40):
        x = torch.randn(n, 3)
        torch.testing.assert_close(cf(x), branchy(x))
    assert dyn.stats()["captures"] == 1
    x = torch.randn(4, 3)  # the relation no longer holds: captured again, the other branch
    torch.testing.assert_close(cf(x), branchy(x))
    assert dyn.stats()["captures"] == 2


def pairs(x, y):
    return x * y + x


def test_equal_dims_relation_recompiles_when_broken():
    cf = dyn.compile(pairs, dynamic=True)
    for n in (3, 7):
        x, y = torch.randn(n, 4), torch.randn(n, 4)
        torch.testing.assert_close(cf(x, y), pairs(x, y))
    assert dyn.stats()["captures"] == 1
    x, y = torch.randn(5, 4), torch.randn(6, 4)  # the guard x.size(0) == y.size(0) fails; eager raises
    with pytest.raises(RuntimeError):
        pairs(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError):
            cf(x, y)


def test_guards_are_logged_and_explained(capsys, monkeypatch):
    monkeypatch.setenv("DYN_LOGS", "guards,dynamic")
    cf = dyn.compile(branchy, dynamic=True)
    cf(torch.randn(10, 3))
    err = capsys.readouterr().err
    assert "symbolic" in err and "> 8" in err, err
    x = torch.randn(12, 3)
    dyn.mark_dynamic(x, 0)
    out = dyn.explain(branchy)(x)
    assert out.dynamic_dims[0] and any("symbolic" in line for line in out.dynamic_dims[0])
    assert "Dynamic Dims of Graph 0" in str(out)


def linear_relu(x, w):
    return torch.relu(x @ w.t())


def test_what_the_compiler_cannot_take_yet_is_specialized_and_reported():
    """A graph whose ops the compiler does not yet take with `?` dims: every size still runs compiled code,
    specialized (no eager call), and stats says why the sizes were not symbolic."""
    cf = dyn.compile(linear_relu)
    w = torch.randn(4, 6)
    for n in (3, 5, 7):
        x = torch.randn(n, 6)
        torch.testing.assert_close(cf(x, w), linear_relu(x, w))
    st = dyn.stats()
    assert st["eager_calls"] == 0 and not st["eager_graphs"]
    if st["dynamic_entries"] == 0:
        assert st["dynamic_fallbacks"] == 1 and st["dynamic_fallback_reasons"], st
        assert st["captures"] == 4  # 3 sizes, and the one capture with symbolic sizes that was not compiled


def test_mark_dynamic_arguments_are_checked():
    with pytest.raises(TypeError):
        dyn.mark_dynamic([1, 2], 0)
    with pytest.raises(IndexError):
        dyn.mark_dynamic(torch.randn(2, 3), 2)
    with pytest.raises(ValueError):
        dyn.mark_dynamic(torch.randn(2, 3), 0, min=8, max=4)


def test_torch_compile_backend_takes_torchdynamo_symbolic_sizes():
    """torch.compile(backend="dyn"): after a size change TorchDynamo hands the backend a graph with symbolic
    sizes (automatic dynamic); dyn compiles it once with `?` dims instead of running it with PyTorch ops."""
    import torch._dynamo
    torch._dynamo.reset()
    cf = torch.compile(gelu_bias, backend="dyn")
    b = torch.randn(16)
    for n in (3, 5, 7, 12):
        x = torch.randn(n, 16)
        torch.testing.assert_close(cf(x, b), gelu_bias(x, b))
    st = dyn.stats()
    assert not st["eager_graphs"] and st["compiled_graphs"] == 2 and st["dynamic_graphs_compiled"] == 1, st
    torch._dynamo.reset()


def test_many_sizes_keep_two_entries():
    """Hundreds of sizes through one function: the static entry and the symbolic one, nothing eager."""
    def f(x):
        return (x * 2).relu()
    cf = dyn.compile(f)
    for n in range(2, 300):
        x = torch.randn(n)
        torch.testing.assert_close(cf(x), f(x))
    st = dyn.stats()
    assert st["captures"] == 2 and st["eager_calls"] == 0 and len(cf._entries) == 2, st


def with_a_break(x, w):
    y = torch.tanh(x @ w)
    torch._dynamo.graph_break()  # the rest runs as a resume function, compiled on its own
    return y * 2 + y.sum(0)


def size_across_a_break(x):
    n = x.shape[0]
    y = x * 2
    torch._dynamo.graph_break()
    return y + n


def test_graph_breaks_keep_symbolic_sizes():
    """Each graph of a broken frame (the frame's start, the resume function) becomes symbolic on its own
    size change; a size held across the break as a Python number keeps the first graph specialized."""
    import torch._dynamo
    cf = dyn.compile(with_a_break)
    w = torch.randn(8, 8)
    for n in (3, 4, 5, 9, 17):
        x = torch.randn(n, 8)
        torch.testing.assert_close(cf(x, w), with_a_break(x, w))
    st = dyn.stats()
    assert st["dynamic_entries"] == 2 and st["captures"] == 4 and st["eager_calls"] == 0, st
    dyn.reset()
    cf = dyn.compile(size_across_a_break)
    for n in (3, 4, 5):
        x = torch.randn(n, 8)
        torch.testing.assert_close(cf(x), size_across_a_break(x))
    st = dyn.stats()
    assert st["eager_calls"] == 0 and any("across a graph break" in k for k in st["dynamic_fallback_reasons"]), st


def take(x, i):
    return x[i] * 2


def test_index_checks_follow_the_runtime_sizes():
    """An index into a dim of symbolic size is checked against that call's size (eager raises where
    compiled code would clamp), also when the index tensor is the same unmodified one as last time."""
    cf = dyn.compile(take, dynamic=True)
    i = torch.tensor([7, 2])
    for n in (10, 12, 8):
        x = torch.randn(n, 3)
        torch.testing.assert_close(cf(x, i), take(x, i))
    assert dyn.stats()["captures"] == 1
    with pytest.raises(IndexError):
        cf(torch.randn(5, 3), i)


def test_a_symbolic_dim_sliced_to_static_bounds_guards_its_size():
    # x[:, 0:5] of a `?` length is a static [2, 5] (T5's first token is x[:, :1]): the capture's guard on the
    # length holding the bounds sends a shorter input to another graph, never reading past its end
    f = lambda x: x[:, 0:5].float().sum(1) + x.shape[1]  # noqa: E731
    dyn.reset()
    cf = dyn.compile(f)
    for n in (9, 13, 21, 3, 7):
        x = torch.randint(0, 100, (2, n))
        assert torch.equal(cf(x), f(x)), n
    s = dyn.stats()
    assert s["eager_calls"] == 0 and s["dynamic_fallbacks"] == 0 and s["dynamic_entries"] >= 1, s


def test_strided_slices_of_a_symbolic_dim_are_one_graph():
    """x[:, ::2], x[:, 1::3] and y[::2, :-1] of `?` lengths, even and odd: a gather at runtime positions
    (ceil((end - start) / step) of them), one symbolic graph for every length, equal to eager's."""
    def f(x, y):
        return (x[:, ::2] * 2).sum(-1), x[:, 1::3].exp(), y[::2, :-1] - 1

    cf = dyn.compile(f)
    for n in (8, 10, 11, 13, 16, 9):
        x, y = torch.randn(3, n), torch.randn(n, 4)
        for got, want in zip(cf(x, y), f(x, y)):
            torch.testing.assert_close(got, want)
    st = dyn.stats()
    assert st["eager_calls"] == 0 and st["dynamic_fallbacks"] == 0, st
    assert st["captures"] == 2 and st["dynamic_entries"] == 1, st


def test_a_symbolic_batch_of_images_carries_the_largest_batch_seen(tmp_path, monkeypatch):
    """A convolution's layout is chosen by the activations it moves (dyn-propagate-layouts; channels-last on
    the GPU from 2^24 elements): with a `?` batch the compiled module says which batch to weigh,
    dyn.batch_hint, the largest seen at that input when the graph became symbolic (a loop's full batches,
    not its smaller last one). Text inputs (3-d and below) carry none."""
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    conv = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU()).eval()
    dyn.reset()
    cm = dyn.compile(conv)
    with torch.no_grad():
        for b in (8, 3, 5):
            x = torch.randn(b, 3, 6, 6)
            torch.testing.assert_close(cm(x), conv(x))
    assert dyn.stats()["dynamic_entries"] == 1
    symbolic = [p.read_text() for p in tmp_path.rglob("0_graph.mlir") if "?x3x6x6" in p.read_text()]
    assert symbolic and all(t.startswith("module attributes {dyn.batch_hint = 8 : i64}") for t in symbolic)
    lin = torch.nn.Linear(6, 2)
    dyn.reset()
    cl = dyn.compile(lin)
    with torch.no_grad():
        for n in (4, 7):
            cl(torch.randn(2, n, 6))
    texts = [p.read_text() for p in tmp_path.rglob("0_graph.mlir") if "x?x6" in p.read_text()]
    assert texts and not any("batch_hint" in t for t in texts)
