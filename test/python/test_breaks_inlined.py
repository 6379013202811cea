"""Graph breaks that cost one call, not one frame. A break inside an inlined call (at any depth) compiles
the graph up to the call in the caller, runs the call as a frame of its own (itself captured, breaking
only where it must) and resumes the caller after it. A break inside a loop or a `with` block of a
context manager dyn does not trace runs that frame eagerly, as TorchDynamo skips it, but the user
functions it calls are captured as frames of their own. Inside `with torch.no_grad():` the frame breaks
and resumes inside the block. Side effects before a break run exactly once."""
import contextlib
import io

import pytest
import torch
import torch.nn as nn

import dyn
from conftest import BACKENDS



def note(*what):
    """The side effect the functions below make: print, a graph break for dyn and TorchDynamo alike."""
    print(*what)


def graphs_of(cf):
    cf = getattr(cf, "_dyn_forward", cf)
    return [g for g, k, e in cf.graphs if g is not None]


def td_graph_count(fn, *args):
    """TorchDynamo's graph count for fn(*args) (CPU, cheap), to compare with dyn's."""
    import torch._dynamo as td
    td.reset()
    with contextlib.redirect_stdout(io.StringIO()):
        n = td.explain(fn)(*args).graph_count
    td.reset()
    return n


def run_both(capsys, fn, *args, backend="eager", calls=3):
    """Calls the compiled fn and fn itself `calls` times: equal results, the same printed side effects
    (exactly once each per call). Returns the compiled function and what one call printed."""
    cf = dyn.compile(fn, backend=backend)
    capsys.readouterr()
    for _ in range(calls):
        got = cf(*args)
        seen = capsys.readouterr().out
        want = fn(*args)
        torch.testing.assert_close(got, want)
        assert seen == capsys.readouterr().out
    return cf, seen


# -- breaks at depth 1, 2, 3 in functions -------------------------------------------------------------
def leaf(x):
    x = x * 2
    note("leaf")
    return x + 1


def depth2(x):
    return leaf(x.sin()) * 3


def depth3(x):
    return depth2(x - 1) / 2


def top1(x):
    return leaf(x.cos()) - 1


def top2(x):
    return depth2(x.cos()) - 1


def top3(x):
    return depth3(x.cos()) - 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("top,depth", [(top1, 1), (top2, 2), (top3, 3)])
def test_break_at_depth_costs_one_call_per_level(capsys, backend, top, depth):
    x = torch.randn(5)
    cf, out = run_both(capsys, top, x, backend=backend)
    assert out == "leaf\n"
    # each level: its graph before the call and after it; the leaf: before and after the append
    assert len(graphs_of(cf)) == 2 * depth + 2
    ops = [g.ops() for g in graphs_of(cf)]
    assert ops[0] == ["cos"] and ops[-1] == ["constant", "sub"]


@pytest.mark.parametrize("top", [top1, top2, top3])
def test_graph_count_matches_torchdynamo(top):
    x = torch.randn(5)
    e = dyn.explain(top)(x)
    assert e.graph_count == td_graph_count(top, x)


def test_explain_names_the_inner_line():
    e = dyn.explain(top3)(torch.randn(3))
    line = note.__code__.co_firstlineno + 2
    assert all(r["lineno"] == line for r in e.break_reasons)
    # top3, depth3, depth2, leaf: two graphs each; a break at the call in each, and in note at print
    assert e.graph_count == 8 and e.graph_break_count == 5


# -- side effects before the break in the callee run exactly once ------------------------------------
class Counter:
    def __init__(self):
        self.n = 0


COUNTER = Counter()


def bump_then_break(x):
    COUNTER.n += 1     # a store on an object not made here (a break of its own)
    note(COUNTER.n)    # the break this test is about
    return x * COUNTER.n


def calls_bump(x):
    y = x + 1
    z = bump_then_break(y)
    return z + y


def test_side_effects_before_the_break_run_once(capsys):
    COUNTER.n = 0
    cf = dyn.compile(calls_bump, backend="eager")
    x = torch.randn(4)
    for k in range(1, 4):
        torch.testing.assert_close(cf(x), (x + 1) * k + (x + 1))
        assert COUNTER.n == k and capsys.readouterr().out == f"{k}\n"
        if k == 1:  # calls_bump: add | add; bump_then_break: (store, print) | mul
            assert [g.ops() for g in graphs_of(cf)] == [["constant", "add"], ["constant", "mul"], ["add"]]
    # COUNTER.n is read as a constant: each new value captures the rest of bump_then_break again


# -- submodules and methods ---------------------------------------------------------------------------
class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        note(tuple(h.shape))
        return torch.relu(h)


class Mid(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Noisy()
        self.scale = 2.0

    def forward(self, x):
        return self.inner(x * self.scale) + 1


class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.mid = Mid()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.mid(x.tanh()))


class WithMethod(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def helper(self, h):
        h = h.sigmoid()
        note("helper")
        return h * 3

    def forward(self, x):
        return self.b(self.helper(self.a(x)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_in_a_submodule_two_levels_down(capsys, backend):
    torch.manual_seed(0)
    m = Top()
    x = torch.randn(3, 4)
    with torch.no_grad():
        cm, out = run_both(capsys, m, x, backend=backend)
    assert out == "(3, 4)\n"
    # Top: tanh | head; Mid: mul | add; Noisy: lin | relu
    assert [g.ops() for g in graphs_of(cm)][0] == ["tanh"]
    assert len(graphs_of(cm)) == 6


def test_break_in_a_method(capsys):
    torch.manual_seed(0)
    m = WithMethod()
    cm, out = run_both(capsys, m, torch.randn(2, 4))
    assert out == "helper\n"
    assert len(graphs_of(cm)) == 4  # a | sigmoid | mul | b
    assert cm._dyn_forward._entries[0][1] is not None  # the frame itself compiled, not eager


def test_submodule_graph_count_matches_torchdynamo():
    torch.manual_seed(0)
    m = Top()
    x = torch.randn(3, 4)
    with torch.no_grad():
        assert dyn.explain(m)(x).graph_count == td_graph_count(m, x)


# -- loops: the frame runs eagerly, the calls inside it are captured on their own ---------------------
class Block(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.k = k

    def forward(self, x):
        h = torch.relu(self.lin(x))
        note("block")
        return h + x


class Stack(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.blocks = nn.ModuleList([Block(i) for i in range(n)])
        self.out = nn.Linear(4, 4)

    def forward(self, x):
        x = x * 2
        for b in self.blocks:
            x = b(x)
        return self.out(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_inside_a_modulelist_loop_captures_each_block(capsys, backend):
    torch.manual_seed(0)
    m = Stack(12)
    with torch.no_grad():
        cm, out = run_both(capsys, m, torch.randn(3, 4), backend=backend)
    assert out == "block\n" * 12  # each block's side effect once per call
    cf = cm._dyn_forward
    assert "loop" in cf.breaks[0]["reason"]
    # the blocks share one code object with one cache entry per block object (12 > the recompile limit
    # of 8, which counts entries per module object): a graph per block before the print, and one
    # resume function after it for all of them
    child = cf._children[Block.forward]
    assert len(child._entries) == 12 and all(e[1] is not None for e in child._entries)
    assert not child._warned_limit
    assert len(graphs_of(cm)) == 13


def loop_over_functions(x, fns):
    for f in fns:
        x = f(x)
    return x


def test_break_inside_a_loop_over_a_list_of_functions(capsys):
    x = torch.randn(5)
    cf, out = run_both(capsys, loop_over_functions, x, [depth2, top1])
    assert out == "leaf\nleaf\n"
    # depth2: sin | mul, top1: cos | sub, leaf: mul | add
    assert len(graphs_of(cf)) == 6
    assert "loop" in cf.breaks[0]["reason"]
    e = dyn.explain(loop_over_functions)(x, [depth2, depth2])
    assert e.graph_count == td_graph_count(loop_over_functions, x, [depth2, depth2]) == 4


def print_in_loop(x):
    for i in range(3):
        x = x + i
        note(i)
    return x


def test_break_directly_in_a_loop_runs_the_frame_eagerly(capsys):
    cf, out = run_both(capsys, print_in_loop, torch.randn(3))
    assert out == "0\n1\n2\n"
    assert graphs_of(cf) == [] and "loop" in cf.breaks[0]["reason"]


def loop_then_helper(x, n):
    for i in range(n):
        note(i)
    return depth2(x)  # after the loop: not seen by the capture, reached by its name


def test_functions_named_in_an_eager_frame_are_captured(capsys):
    cf, out = run_both(capsys, loop_then_helper, torch.randn(3), 2)
    assert out == "0\n1\nleaf\n"
    assert len(graphs_of(cf)) == 4  # depth2: sin | mul; leaf: mul | add


# -- with blocks ---------------------------------------------------------------------------------------
def call_in_no_grad(x, w):
    y = x * w
    with torch.no_grad():
        z = depth2(y)
        note(torch.is_grad_enabled())
        u = z * w
    return u + y


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_inside_no_grad_resumes_inside_the_block(capsys, backend):
    x = torch.randn(4)
    w = torch.randn(4, requires_grad=True)
    cf = dyn.compile(call_in_no_grad, backend=backend)
    for _ in range(3):
        got = cf(x, w)
        assert capsys.readouterr().out == "leaf\nFalse\n"
        want = call_in_no_grad(x, w)
        capsys.readouterr()
        torch.testing.assert_close(got, want)
        assert got.requires_grad == want.requires_grad
    assert torch.is_grad_enabled()
    # call_in_no_grad: mul | (nothing between the two calls) | mul, add; depth2 and leaf: two each
    assert [g.ops() for g in graphs_of(cf)][0] == ["mul"] and len(graphs_of(cf)) == 6
    assert all(e[1] is not None for e in cf._entries)


def grad_inside(x):
    note(torch.is_grad_enabled())
    return x * 2


def nested_grad_blocks(x, w):
    with torch.no_grad():
        a = x * w
        with torch.enable_grad():
            b = grad_inside(a * w)
            note("in")
        c = grad_inside(b)
    return a, b, c


def test_nested_grad_blocks_break_and_resume_with_their_modes(capsys):
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    cf = dyn.compile(nested_grad_blocks, backend="eager")
    for _ in range(3):
        got = cf(x, w)
        seen = capsys.readouterr().out
        want = nested_grad_blocks(x, w)
        assert seen == capsys.readouterr().out == "True\nin\nFalse\n"
        for g, e in zip(got, want):
            torch.testing.assert_close(g, e)
            assert g.requires_grad == e.requires_grad


def check_positive(x, limit):
    y = x * 2
    note("check")
    if limit < 0:
        raise ValueError("negative")
    return y


def no_grad_in_try(x, limit):
    y = x.cos()
    try:
        with torch.no_grad():
            y = check_positive(y, limit)
    except ValueError:
        y = -y
    return y + 1


def test_break_in_a_with_block_inside_try_keeps_the_handler(capsys):
    x = torch.randn(3)
    cf, out = run_both(capsys, no_grad_in_try, x, 1)
    assert out == "check\n"
    # the call is made inside the frame's own try (the rest of the frame runs eagerly from it) and the
    # callee still runs as a frame of its own
    assert cf.breaks[0]["reason"].endswith("(the rest of the frame runs eagerly)")
    assert [g.ops() for g in graphs_of(cf)] == [["cos"], ["constant", "mul"]]
    torch.testing.assert_close(cf(x, -1), no_grad_in_try(x, -1))  # the handler catches it


class Ctx:
    def __enter__(self):
        note("enter")
        return self

    def __exit__(self, *exc):
        note("exit")
        return False


def generic_with(x):
    y = x.sin()
    with Ctx():
        z = depth2(y)
    return z + y


def test_break_in_a_generic_with_block_captures_the_call(capsys):
    x = torch.randn(4)
    cf, out = run_both(capsys, generic_with, x)
    assert out == "enter\nleaf\nexit\n"
    # the Ctx object made in the frame crosses the break (made anew per call, marks._Made): the graph
    # before the with block is kept and the rest of generic_with runs eagerly (TorchDynamo skips the
    # whole frame: one graph fewer); depth2 and leaf are captured on their own: sin | mul and mul | add.
    # Ctx.__enter__ is traced, and breaks at its print: the with statement is where the rest runs eagerly
    assert cf.breaks[0]["reason"] == "call to unsupported function print (the rest of the frame runs eagerly)"
    assert [g.ops() for g in graphs_of(cf)][0] == ["sin"] and len(graphs_of(cf)) == 5
    assert dyn.explain(generic_with)(x).graph_count == td_graph_count(generic_with, x) + 1 == 5


# -- the resume prologue enters grad-mode blocks again (bytecode of this interpreter: 3.11 or 3.12) ------
def _modes_seen(x, k):
    a = x + 1
    with torch.no_grad():
        y = grad_inside(a)
        with torch.enable_grad():
            z = grad_inside(y) + k
        w = grad_inside(z)
    note("out", torch.is_grad_enabled())
    return a, y, z, w


def _after_calls_of(fn, name):
    import dis
    insts = [i for i in dis.get_instructions(fn.__code__) if i.opname != "PRECALL"]
    return [insts[k + 1].offset for k, i in enumerate(insts)
            if i.opname == "CALL" and any(j.argval == name for j in insts[max(0, k - 3):k])]


def test_resume_code_enters_grad_blocks_again(capsys):
    from dyn.capture import resume
    after = _after_calls_of(_modes_seen, "grad_inside")
    # resume after the first call (inside no_grad: its __exit__ under the call's result)
    fn = resume.resume_function(_modes_seen, resume.resume_code(
        _modes_seen.__code__, after[0], ["g0", resume.VALUE], ("a", "k")))
    assert fn(6, 3, 10) == (3, 6, 22, 44)  # y = 6 (the result), a = 3, k = 10
    assert capsys.readouterr().out == "True\nFalse\nout True\n" and torch.is_grad_enabled()
    # resume after the second call (enable_grad inside no_grad)
    fn = resume.resume_function(_modes_seen, resume.resume_code(
        _modes_seen.__code__, after[1], ["g0", "g1", resume.VALUE], ("a", "y", "k")))
    assert fn(12, 3, 6, 10) == (3, 6, 22, 44)
    assert capsys.readouterr().out == "False\nout True\n" and torch.is_grad_enabled()


def _raises_inside(x):
    with torch.no_grad():
        y = grad_inside(x)
        z = y.missing_attribute
    return z


def test_exception_in_a_resumed_grad_block_leaves_it():
    from dyn.capture import resume
    after = _after_calls_of(_raises_inside, "grad_inside")
    fn = resume.resume_function(_raises_inside, resume.resume_code(
        _raises_inside.__code__, after[0], ["g0", resume.VALUE], ()))
    with pytest.raises(AttributeError):
        fn(3)
    assert torch.is_grad_enabled()


class Stepper(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("last", None)

    def forward(self, x):
        with torch.no_grad():
            h = self.lin(x)
            self.last = h            # a buffer store: breaks, Python makes it, resumes inside the block
            if h.sum() > 0:          # a branch on a tensor: breaks, resumes on the side taken
                h = h * 2
            out = h + 1
        return out, torch.is_grad_enabled()


def test_store_and_branch_inside_no_grad_resume_inside_the_block():
    torch.manual_seed(0)
    m = Stepper()
    cm = dyn.compile(m, backend="eager")
    for i in range(4):
        x = torch.randn(2, 3) * (1 if i % 2 else -1)
        (got, mode), (want, emode) = cm(x), m(x)
        torch.testing.assert_close(got, want)
        assert mode is emode is True and not got.requires_grad
        torch.testing.assert_close(m.last, m.lin(x).detach())
    cf = cm._dyn_forward
    assert all(e[1] is not None for e in cf._entries)
    reasons = [b["reason"] for b in cf.breaks]
    assert any("buffer" in r for r in reasons) and any("data-dependent" in r for r in reasons)
    assert not any("eagerly" in r for r in reasons)


# -- a Python __getitem__ is traced, and breaks cost one call ------------------------------------------
class Bag:
    def __init__(self):
        self.n = 0
        self.t = torch.ones(3)

    def __getitem__(self, k):
        self.n += 1  # an effect per index: made per call, never at capture only
        return self.t * k


BAG = Bag()


def index_bag(x):
    return x + BAG[2]


def test_python_getitem_runs_per_call_and_reads_current_state():
    BAG.n, BAG.t = 0, torch.ones(3)
    cf = dyn.compile(index_bag, backend="eager")
    x = torch.randn(3)
    for _ in range(3):
        torch.testing.assert_close(cf(x), x + 2)
    assert BAG.n == 3
    BAG.t = torch.zeros(3)  # a new tensor on the object: seen
    torch.testing.assert_close(cf(x), x)


class Table:
    def __init__(self, t):
        self.t = t

    def __getitem__(self, k):
        h = self.t * k
        note("get", k)
        return h + 1


TABLE = Table(torch.ones(3))


def index_table(x):
    y = x.sin()
    z = TABLE[3]       # a __getitem__ that breaks inside: one call, as its own frame
    return y + z


def test_getitem_that_breaks_costs_one_call(capsys):
    x = torch.randn(3)
    cf, out = run_both(capsys, index_table, x)
    assert out == "get 3\n"
    # index_table: sin | add; Table.__getitem__: mul | add
    assert [g.ops() for g in graphs_of(cf)] == [["sin"], ["constant", "mul"], ["constant", "add"], ["add"]]
    # TorchDynamo breaks at the subscript too and runs this __getitem__ eagerly: 2 graphs (sin | add)
    assert dyn.explain(index_table)(x).graph_count == 4 > td_graph_count(index_table, x)


class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = nn.Linear(4, 4)
        self.body = nn.Sequential(Block(0), Block(1), nn.ReLU())

    def forward(self, x):
        return self.body(self.pre(x)) * 2


def test_sequential_at_a_break_captures_its_user_blocks(capsys):
    torch.manual_seed(0)
    m = Seq()
    with torch.no_grad():
        cm, out = run_both(capsys, m, torch.randn(2, 4))
    assert out == "block\nblock\n"
    # Seq: linear | mul; the Sequential's loop breaks (it runs eagerly); each Block object: linear, relu,
    # and one resume function (add) for both. TorchDynamo: 4, one Block graph for both objects
    assert len(graphs_of(cm)) == 5


def test_library_code_is_user_code_for_capture():
    import copy
    torchvision = pytest.importorskip("torchvision")
    from dyn.capture.children import is_user_function
    assert is_user_function(torchvision.models.resnet.BasicBlock.forward)
    assert is_user_function(depth2)
    assert not is_user_function(nn.Linear.forward) and not is_user_function(copy.deepcopy)


class Top3(nn.Module):
    def __init__(self):
        super().__init__()
        self.top = Top()

    def forward(self, x):
        return self.top(x - 1) * 2


def test_break_in_a_submodule_three_levels_down(capsys):
    torch.manual_seed(0)
    m = Top3()
    x = torch.randn(3, 4)
    with torch.no_grad():
        cm, out = run_both(capsys, m, x)
        assert out == "(3, 4)\n"
        # each of the four levels: its graph before the call and after it
        assert len(graphs_of(cm)) == 8
        assert dyn.explain(m)(x).graph_count == td_graph_count(m, x) == 8
