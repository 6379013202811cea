"""Graph breaks: the graph so far runs, Python runs the piece dyn cannot capture, capture resumes; results
are eager's and break reasons name the right lines."""
import numpy as np
import pytest
import torch
import torch.nn as nn

try:
    import scipy.special
except ImportError:  # the GPU machine's venv may lack scipy
    scipy = None

import dyn
from capture_helpers.compare import same, clone, captures, graphs_of, line_of
from conftest import BACKENDS


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def run_cases(fn, cases, backend="eager"):
    cf = dyn.compile(fn, backend=backend)
    for args in cases:
        same(cf(*clone(args)), fn(*clone(args)))
    return cf


def dd_if(x):
    y = x * 2
    if y.sum() < 0:
        y = -y
    return y + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_data_dependent_if(backend):
    cases = [(torch.randn(4).abs(),), (-torch.randn(4).abs(),)] * 2
    cf = run_cases(dd_if, cases, backend)
    assert len(graphs_of(cf)) == 3
    out = dyn.explain(dd_if)(-torch.ones(4))
    assert out.graph_count == 2 and out.graph_break_count == 1
    assert out.break_reasons[0]["lineno"] == line_of(dd_if, "if y.sum()")


def dd_while(x):
    while x.abs().max() > 1:
        x = x / 2
    return x + 0


def test_break_data_dependent_while():
    run_cases(dd_while, [(torch.randn(5) * 10,), (torch.randn(5) * 0.1,), (torch.randn(5) * 100,)])


def item_arith(x):
    s = x.sum().item()
    k = s * 2 + 1 if s > 0 else s - 1
    return x * k


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_item_in_python_arithmetic(backend):
    run_cases(item_arith, [(torch.randn(4),), (torch.randn(4),), (torch.ones(4),), (-torch.ones(4),)], backend)
    out = dyn.explain(item_arith)(torch.ones(4))
    assert out.graph_count == 2 and out.graph_break_count == 1
    assert out.break_reasons[0]["lineno"] == line_of(item_arith, ".item()")


def tolist_use(x):
    vals = x.tolist()
    scale = max(vals) - min(vals)
    return x / scale, len(vals)


def test_break_tolist():
    run_cases(tolist_use, [(torch.randn(5),), (torch.randn(5),)])


def numpy_ops_round_trip(x):
    a = x * 2
    n = a.numpy()
    n = np.tanh(n) + np.sqrt(np.abs(n))
    b = torch.from_numpy(n)
    return b + a


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_numpy_round_trip(backend):
    run_cases(numpy_ops_round_trip, [(torch.randn(6),), (torch.randn(6),)], backend)


def scipy_special_call(x):
    h = x.exp()
    e = scipy.special.erf(h.numpy())
    return torch.from_numpy(e) * h


@pytest.mark.skipif(scipy is None, reason="needs scipy")
def test_break_scipy_special():
    run_cases(scipy_special_call, [(torch.randn(5, dtype=torch.float64),)] * 2)
    out = dyn.explain(scipy_special_call)(torch.randn(5, dtype=torch.float64))
    assert any("erf" in r["reason"] for r in out.break_reasons)


def print_in_middle(x):
    a = x.sin()
    print("rows", a.shape[0], "first", round(float(a[0]) * 0 + 1, 1))
    return a * 2


def test_break_print(capsys):
    run_cases(print_in_middle, [(torch.randn(3),)] * 3)
    assert capsys.readouterr().out.count("rows 3 first 1.0") == 6
    out = dyn.explain(print_in_middle)(torch.randn(3))
    assert out.graph_break_count >= 1 and out.graph_count == 2
    assert any(r["lineno"] == line_of(print_in_middle, "print(") for r in out.break_reasons)
    assert f"{__file__}:{line_of(print_in_middle, 'print(')}" in str(out)


def _sign_helper(t):
    if t.sum() > 0:
        return t * 10
    return t / 10


def break_in_helper(x):
    a = x.cos()
    b = _sign_helper(a - 0.5)
    return b + a


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_inside_inlined_helper(backend):
    cases = [(torch.zeros(4),), (torch.full((4,), 3.14159),), (torch.zeros(4),)]
    cf = run_cases(break_in_helper, cases, backend)
    assert any(b["lineno"] == line_of(_sign_helper, "if t.sum()") for b in cf.breaks)
    out = dyn.explain(break_in_helper)(torch.zeros(4))
    lines = [r["lineno"] for r in out.break_reasons]
    assert line_of(_sign_helper, "if t.sum()") in lines


def _helper_level2(t):
    print("deep")
    return t + 1


def _helper_level1(t):
    return _helper_level2(t * 2) * 3


def break_two_levels_deep(x):
    return _helper_level1(x.relu()) - x


def test_break_two_levels_deep(capsys):
    run_cases(break_two_levels_deep, [(torch.randn(4),)] * 3)
    assert capsys.readouterr().out.count("deep") == 6


class _PrintingBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        if h.mean() > 0:
            h = h.relu()
        return h


class _Host(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = _PrintingBlock()
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        return self.out(self.block(x * 2) + x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_inside_submodule_forward(backend):
    m = _Host()
    cm = dyn.compile(m, backend=backend)
    with torch.no_grad():
        for s in (1.0, -1.0, 1.0, -1.0):
            x = torch.randn(3, 4) * 5 * s
            same(cm(x), m(x))


def several_breaks(x):
    a = x + 1
    print("a")
    b = a * 2
    print("b")
    c = b.sum().item()
    return b * c


def test_break_multiple_in_a_row(capsys):
    run_cases(several_breaks, [(torch.randn(3),)] * 2)
    out = dyn.explain(several_breaks)(torch.randn(3))
    assert out.graph_break_count == 3 and out.graph_count == 4
    assert [r["lineno"] for r in out.break_reasons] == [
        line_of(several_breaks, 'print("a")'), line_of(several_breaks, 'print("b")'),
        line_of(several_breaks, ".item()")]


def break_in_loop(x):
    for i in range(3):
        x = x * 2
        if x.sum() > 100:
            x = x / 100
    return x


def test_break_in_a_loop():
    run_cases(break_in_loop, [(torch.ones(4) * 10,), (torch.ones(4),), (-torch.ones(4),)])


def print_in_loop(xs):
    out = []
    for t in xs:
        print("item")
        out.append(t.exp())
    return out


def test_break_print_in_a_loop(capsys):
    run_cases(print_in_loop, [([torch.randn(2), torch.randn(2)],)] * 2)
    assert capsys.readouterr().out.count("item") == 8


def tensor_and_or(x, y):
    if (x > 0).all() and y.sum() > 0:
        return x + y
    if (x < 0).any() or y.mean() < -1:
        return x - y
    return x * y


def test_break_tensor_and_or():
    cases = [(torch.rand(3), torch.rand(3)), (-torch.rand(3), torch.rand(3)), (torch.rand(3), -torch.rand(3)),
             (torch.rand(3), -torch.ones(3) * 5)]
    run_cases(tensor_and_or, cases)


def bool_mask_index(x):
    pos = x[x > 0]
    return pos.sum() + pos.numel()


def test_break_boolean_mask_indexing():
    run_cases(bool_mask_index, [(torch.randn(8),), (torch.randn(8),)])


def nonzero_count(x):
    idx = torch.nonzero(x > 0.5)
    return x * idx.shape[0]


def test_break_nonzero():
    run_cases(nonzero_count, [(torch.rand(6),), (torch.rand(6),)])


def item_drives_python_loop(x, k):
    n = int(k.sum().item()) % 4
    for _ in range(n):
        x = x * 2 + 1
    return x, n


def test_break_item_drives_python_loop():
    run_cases(item_drives_python_loop, [(torch.randn(3), torch.tensor([1.0, 1.0])),
                                        (torch.randn(3), torch.tensor([3.0, 0.0])),
                                        (torch.randn(3), torch.tensor([1.0, 1.0]))])


def branch_on_item(x):
    m = x.max().item()
    if m > 0.5:
        return x.clamp(max=0.5)
    return x * 2


def test_break_branch_on_item_value():
    run_cases(branch_on_item, [(torch.rand(4),), (torch.rand(4) * 0.1,), (torch.ones(4),)])


def int_of_tensor(x):
    k = int(x.sum() > 0)
    return x * (k + 1)


def test_break_int_of_tensor():
    run_cases(int_of_tensor, [(torch.ones(3),), (-torch.ones(3),)])


def containers_across_break(x):
    d = {"a": x + 1, "b": [x * 2, x * 3]}
    scale = d["a"].mean().item()
    d["c"] = d["b"][0] * scale
    d["b"].append(d["a"] - scale)
    return d


def test_break_containers_live_across_break():
    run_cases(containers_across_break, [(torch.randn(3),)] * 2)


class _Stepper:
    def __init__(self):
        self.k = 3.0

    def step(self, x):
        y = x * self.k
        print("stepping")
        return y + 1


STEPPER = _Stepper()


def calls_plain_method(x):
    return STEPPER.step(x.abs()) * 2


def test_break_inside_method_of_plain_class(capsys):
    run_cases(calls_plain_method, [(torch.randn(3),)] * 2)
    assert capsys.readouterr().out.count("stepping") == 4


def unknown_torch_function(x):
    i = torch.argmax(x, dim=-1)
    return x.sum(-1) + i


def test_break_unknown_torch_function():
    run_cases(unknown_torch_function, [(torch.randn(3, 4),)] * 2)


def int_remainder_by_tensor(x, y):
    return (x + 1) % y, torch.fmod(x, y), torch.div(x, y, rounding_mode="floor")


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_integer_division_by_a_tensor_or_zero(backend):
    """Integer division, remainder and fmod by a tensor are captured, their divisor checked for zeros before
    each run on the CPU: a zero raises eager's RuntimeError (compiled integer division would trap). By a
    Python 0 eager raises ZeroDivisionError: not captured, and dyn raises the same."""
    x, y = torch.randint(-9, 9, (6,)), torch.tensor([3, -2, 5, -7, 1, 4])
    cf = dyn.compile(int_remainder_by_tensor, backend=backend, fullgraph=True)
    same(cf(x, y), int_remainder_by_tensor(x, y))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        cf(x, torch.tensor([3, -2, 0, -7, 1, 4]))
    run_cases(int_remainder_by_tensor, [(x, y), (x, -y)], backend)
    for fn in (lambda t: t % 0, lambda t: torch.fmod(t, 0), lambda t: torch.div(t, 0, rounding_mode="trunc")):
        with pytest.raises(dyn.Unsupported, match="by zero"):
            dyn.compile(fn, backend=backend, fullgraph=True)(x)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            dyn.compile(fn, backend=backend)(x)


def torch_tensor_from_python(x):
    v = torch.tensor([1.0, 2.0, 3.0])
    return x * v + torch.tensor(0.5)


def test_break_or_capture_torch_tensor_constant():
    run_cases(torch_tensor_from_python, [(torch.randn(3),)] * 2)


def fullgraph_helper_break(t):
    return t * t.sum().item()


def fullgraph_outer(x):
    return fullgraph_helper_break(x + 1) - 1


def test_break_fullgraph_names_helper_line():
    with pytest.raises(dyn.Unsupported) as e:
        dyn.compile(fullgraph_outer, backend="eager", fullgraph=True)(torch.randn(3))
    assert e.value.filename == __file__
    assert e.value.lineno == line_of(fullgraph_helper_break, ".item()")


def test_break_fullgraph_data_dependent_names_line():
    with pytest.raises(dyn.Unsupported) as e:
        dyn.compile(dd_while, backend="eager", fullgraph=True)(torch.randn(3))
    assert e.value.filename == __file__ and e.value.lineno == line_of(dd_while, "while x")


def else_branch_print(x):
    if x.mean() > 0:
        y = x + 1
    else:
        print("negative")
        y = x - 1
    return y * 2


def test_break_print_in_else_branch(capsys):
    run_cases(else_branch_print, [(torch.ones(3),), (-torch.ones(3),), (-torch.ones(3),)])
    assert capsys.readouterr().out.count("negative") == 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_alternating_branches_compile_once_each(backend):
    cf = dyn.compile(dd_if, backend=backend)
    for i in range(20):
        x = torch.randn(4).abs() * (1 if i % 2 else -1)
        same(cf(x), dd_if(x))
    assert dyn._stats()["backend_calls"] == 3


def no_grad_block(x, w):
    y = x @ w
    with torch.no_grad():
        z = y * 2
    return y + z


def test_break_with_no_grad_block():
    cf = dyn.compile(no_grad_block, backend="eager")
    x = torch.randn(2, 3)
    w1 = torch.randn(3, 3, requires_grad=True)
    w2 = w1.detach().clone().requires_grad_(True)
    out, ref = cf(x, w1), no_grad_block(x, w2)
    same(out, ref)
    out.sum().backward()
    ref.sum().backward()
    torch.testing.assert_close(w1.grad, w2.grad)


def try_except_item(x):
    y = x * 2
    try:
        v = y.max().item()
    except RuntimeError:
        v = 0.0
    return y - v


def test_break_try_except():
    run_cases(try_except_item, [(torch.randn(4),)] * 2)


def _gen_pairs(xs):
    for i in range(len(xs) - 1):
        yield xs[i], xs[i + 1]


def calls_user_generator(xs):
    out = xs[0] * 0
    for a, b in _gen_pairs(xs):
        out = out + a * b
    return out


def test_break_user_generator():
    run_cases(calls_user_generator, [([torch.randn(3) for _ in range(4)],)] * 2)


def bool_of_one_element_tensor(x, flag):
    if flag:
        return x + 1
    return x - 1


def test_break_bool_of_one_element_tensor():
    run_cases(bool_of_one_element_tensor, [(torch.randn(3), torch.tensor(True)), (torch.randn(3), torch.tensor(False)),
                                           (torch.randn(3), torch.tensor([1.0]))])


def item_in_fstring(x):
    loss = (x ** 2).mean()
    msg = f"loss={loss.item():.3f}"
    return loss * 2, msg


def test_break_item_in_fstring():
    run_cases(item_in_fstring, [(torch.randn(5),), (torch.randn(5),)])


def data_dependent_assert(x):
    y = x.abs()
    assert (y >= 0).all(), "abs is non-negative"
    return y.sqrt()


def test_break_data_dependent_assert():
    run_cases(data_dependent_assert, [(torch.randn(5),)] * 2)


def mutate_then_break(x):
    x.add_(1)
    print("mutated")
    return x * 2


def test_break_after_input_mutation(capsys):
    cf = dyn.compile(mutate_then_break, backend="eager")
    for _ in range(2):
        a = torch.randn(3)
        b = a.clone()
        same(cf(a), mutate_then_break(b))
        same(a, b)


def test_break_explain_submodule_reports_inner_line():
    m = _Host()
    with torch.no_grad():
        out = dyn.explain(m)(torch.randn(3, 4))
    assert out.graph_break_count >= 1
    assert any(r["filename"] == __file__ and r["lineno"] == line_of(_PrintingBlock.forward, "if h.mean()")
               for r in out.break_reasons)


def test_run_only_mode_with_a_graph_break():
    cf = dyn.compile(dd_if, backend="eager")
    x = torch.ones(4)
    same(cf(x), dd_if(x))
    n = captures()
    with dyn.run():
        same(cf(x), dd_if(x))
        same(cf(-x), dd_if(-x))  # the other side was never compiled: eager
        y = torch.randn(2, 2)
        same(cf(y), dd_if(y))
    assert captures() == n
