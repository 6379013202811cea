"""Resume points beyond calls: a break inside a property getter (transformers' `loss_function`, which
logs with `logger.warning_once`) read in the compiled frame or in a function inlined into it, a break
inside functions wrapped twice by decorators whose wrappers call them inside `try` (transformers'
`merge_with_config_defaults` over `capture_outputs`), and a break inside `with contextlib.nullcontext()`.
Each costs the read, call or block, not the rest of the frame; results and printed side effects are
eager's, once per call; graph counts are compared with TorchDynamo's where it makes the same breaks."""
import contextlib
import functools
import io

import torch
import torch.nn as nn

import dyn


def note(*what):
    print(*what)


def graphs_of(cf):
    cf = getattr(cf, "_dyn_forward", cf)
    return [g for g, k, e in cf.graphs if g is not None]


def td_graph_count(fn, *args):
    import torch._dynamo as td
    td.reset()
    with contextlib.redirect_stdout(io.StringIO()):
        n = td.explain(fn)(*args).graph_count
    td.reset()
    return n


def run_both(capsys, fn, *args, calls=3):
    cf = dyn.compile(fn, backend="eager")
    capsys.readouterr()
    for _ in range(calls):
        got = cf(*args)
        seen = capsys.readouterr().out
        want = fn(*args)
        torch.testing.assert_close(got, want)
        assert seen == capsys.readouterr().out
    return cf, seen


# -- a property getter that breaks ---------------------------------------------------------------------
class Holder:
    def __init__(self):
        self.k = 2.0

    @property
    def scale(self):
        note("scale")          # a break inside the getter
        return self.k + 1

    @property
    def loss_function(self):   # transformers' PreTrainedModel.loss_function: logs, returns a function
        note("loss_function")
        return _loss


def _loss(a, b):
    return ((a - b) ** 2).mean()


HOLDER = Holder()


def reads_property(x):
    y = x.sin()
    s = HOLDER.scale
    return y * s


def calls_property(x, t):
    y = x.cos() * 2
    loss = HOLDER.loss_function(y, t)   # LOAD_METHOD / LOAD_ATTR (method form) of a property
    return loss + 1, y


def helper_reads_property(x):
    return x.exp() * HOLDER.scale


def reads_property_two_deep(x):
    return helper_reads_property(x.sin()) - 1


def test_property_that_breaks_costs_the_read(capsys):
    x = torch.randn(4)
    cf, out = run_both(capsys, reads_property, x)
    assert out == "scale\n"
    # sin | the getter as a frame of its own (no tensor op: no graph) | mul: the rest is compiled
    assert [g.ops() for g in graphs_of(cf)] == [["sin"], ["constant", "mul"]]
    assert not any("runs eagerly" in b["reason"] for b in cf.breaks)


def test_property_returning_the_function_called(capsys):
    x, t = torch.randn(4), torch.randn(4)
    cf, out = run_both(capsys, calls_property, x, t)
    assert out == "loss_function\n"
    ops = [g.ops() for g in graphs_of(cf)]
    assert len(ops) == 2 and ops[0] == ["cos", "constant", "mul"] and "mean" in ops[1]
    # TorchDynamo runs the rest of the frame eagerly and captures _loss as a frame: also 2 graphs
    assert dyn.explain(calls_property, backend="eager")(x, t).graph_count == td_graph_count(calls_property, x, t)


def test_property_that_breaks_two_calls_deep(capsys):
    x = torch.randn(4)
    cf, out = run_both(capsys, reads_property_two_deep, x)
    assert out == "scale\n"
    # top: sin | sub; helper: exp | mul (the getter: no graph)
    assert [g.ops() for g in graphs_of(cf)] == [["sin"], ["exp"], ["constant", "mul"], ["constant", "sub"]]


def test_property_train_gradients(capsys):
    x = torch.randn(4, requires_grad=True)
    t = torch.randn(4)
    cf = dyn.compile(calls_property, backend="eager")
    loss, _ = cf(x, t)
    loss.backward()
    g = x.grad.clone()
    x.grad = None
    loss2, _ = calls_property(x, t)
    loss2.backward()
    torch.testing.assert_close(loss, loss2)
    torch.testing.assert_close(g, x.grad)


# -- functions wrapped twice by decorators calling them inside try --------------------------------------
def config_defaults(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            out = f(*args, **kwargs)
        finally:
            pass
        return out
    return wrapper


def capture_outputs(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        finally:
            pass
    return wrapper


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    @config_defaults
    @capture_outputs
    def forward(self, x):
        y = self.lin(x)
        note("stack")             # a break (T5Stack's copy.deepcopy)
        return torch.relu(y) + 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stack = Stack()

    def forward(self, x):
        return self.stack(x * 2) - 1


def test_break_under_two_wrappers_with_try_captures_the_wrapped_function(capsys):
    torch.manual_seed(0)
    m = Model()
    x = torch.randn(3, 4)
    with torch.no_grad():
        cm, out = run_both(capsys, m, x)
        assert out == "stack\n"
        # Model: mul | sub; the wrappers run eagerly (a break inside try), Stack.forward is captured as
        # a frame of its own: linear | relu, add (TorchDynamo: the same 4)
        assert [g.ops() for g in graphs_of(cm)][0] == ["constant", "mul"]
        n = dyn.explain(m, backend="eager")(x).graph_count
        assert n == td_graph_count(m, x) == 4


# -- with contextlib.nullcontext() ------------------------------------------------------------------------
def in_nullcontext(x):
    y = x.sin()
    with contextlib.nullcontext():
        z = y * 2
        note("inside")
        w = z + 1
    return w * 3


def test_break_inside_nullcontext_resumes_inside_the_block(capsys):
    x = torch.randn(4)
    cf, out = run_both(capsys, in_nullcontext, x)
    assert out == "inside\n"
    assert [g.ops() for g in graphs_of(cf)] == [["sin", "constant", "mul"], ["constant", "add", "constant", "mul"]]
    assert dyn.explain(in_nullcontext, backend="eager")(x).graph_count == td_graph_count(in_nullcontext, x) == 2


# -- with torch.autocast(...), torch.set_grad_enabled(...), torch.inference_mode(), user context managers --
def in_autocast(x, w):
    y = x.sin()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = x @ w
        note("inside", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
        b = a @ w  # bfloat16 (cast by autocast after the resume too)
        with torch.autocast("cpu", enabled=False):
            c = b.float() @ w
            note("off", torch.is_autocast_enabled("cpu"))
            d = c @ w  # float32
        e = torch.cat([d, b])  # promote: float32
    return a, b, c, d, e, y @ w, torch.is_autocast_enabled("cpu")


def test_break_inside_autocast_resumes_inside_the_block(capsys):
    torch.manual_seed(0)
    x, w = torch.randn(4, 4), torch.randn(4, 4)
    cf, out = run_both(capsys, in_autocast, x, w)
    assert out == "inside True torch.bfloat16\noff False\n"  # the call is made under the block's autocast
    got, want = cf(x, w), in_autocast(x, w)
    assert [t.dtype for t in got[:6]] == [t.dtype for t in want[:6]] == \
        [torch.bfloat16, torch.bfloat16, torch.float32, torch.float32, torch.float32, torch.float32]
    for g, t in zip(got[:6], want[:6]):
        assert torch.equal(g, t)
    assert got[6] is want[6] is False
    assert dyn.explain(in_autocast, backend="eager")(x, w).graph_count == td_graph_count(in_autocast, x, w) == 3


def in_grad_blocks(x):
    with torch.set_grad_enabled(False):
        y = x * 2
        note("sge", torch.is_grad_enabled())
        y = y + 1
    with torch.inference_mode():
        z = x * 3
        note("inference", torch.is_inference_mode_enabled())
        z = z + 1
    return y, z, x * 4


def test_break_inside_set_grad_enabled_and_inference_mode_resumes_inside(capsys):
    x = torch.randn(4, requires_grad=True)
    cf, out = run_both(capsys, in_grad_blocks, x)
    assert out == "sge False\ninference True\n"
    got, want = cf(x), in_grad_blocks(x)
    assert [(t.requires_grad, t.is_inference()) for t in got] == \
        [(t.requires_grad, t.is_inference()) for t in want] == [(False, False), (False, True), (True, False)]
    # mul | add, mul | add, mul (TorchDynamo: 4)
    assert dyn.explain(in_grad_blocks, backend="eager")(x).graph_count == 3 == td_graph_count(in_grad_blocks, x) - 1


class Scaled:
    """A user context manager: __enter__ and __exit__ traced, their attribute writes replayed."""

    def __init__(self, k):
        self.k, self.active = k, 0

    def __enter__(self):
        self.active += 1
        return self.k

    def __exit__(self, *exc):
        self.active -= 1
        return False


SCALED = Scaled(3.0)


def in_user_ctx(x):
    with SCALED as k:
        y = x * k + SCALED.active
    with Scaled(2.0) as j:
        y = y * j
    return y, SCALED.active


def in_user_ctx_break(x):
    y = x.sin()
    with SCALED as k:
        z = y * k
        note("inside", SCALED.active)
        z = z + SCALED.active
    return z, SCALED.active


def test_user_context_managers_are_traced(capsys):
    x = torch.randn(4)
    cf, out = run_both(capsys, in_user_ctx, x)
    assert SCALED.active == 0 and cf(x)[1] == 0
    # one graph (TorchDynamo, given these managers, skips the frame: 0)
    assert dyn.explain(in_user_ctx, backend="eager")(x).graph_count == 1 and td_graph_count(in_user_ctx, x) == 0
    # a break inside the block: its __exit__ is a real method, so the rest of the frame runs eagerly from
    # the break, inside the block (TorchDynamo skips the whole frame: 0 graphs)
    cf, out = run_both(capsys, in_user_ctx_break, x)
    assert out == "inside 1\n" and SCALED.active == 0
    assert [g.ops() for g in graphs_of(cf)] == [["sin", "constant", "mul"]]
    assert cf.breaks[0]["reason"].endswith("(the rest of the frame runs eagerly)")
    assert td_graph_count(in_user_ctx_break, x) == 0
