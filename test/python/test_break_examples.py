"""The examples of docs/capture.md "What breaks, by example": for each, the graphs dyn.explain reports, the
reason it gives, and whether TorchDynamo (torch._dynamo.explain, same call) breaks there too. A change in
either makes the table wrong, so this test fails and the table must be updated with it."""
import contextlib
import copy
import io
import os

import pytest
import torch
import torch.nn as nn

import dyn

STEP = 0


def ex_print(x):
    y = x.sin()
    print("y")
    return y + 1


def ex_item(x):
    return x.sin() * x.sum().item()


def ex_tolist(x):
    return x.sin() + len(x.tolist())


def ex_numpy(x):
    return torch.from_numpy(x.sin().numpy() * 2) + x


def ex_branch(x):
    y = x.sin()
    if y.sum() > 0:
        return y + 1
    return y - 1


def ex_nonzero(x):
    return torch.nonzero(x.sin() > 0).float().sum() + x


def ex_mask_index(x):
    return x[x > 0].sum() + x


def ex_global(x):
    global STEP
    y = x.sin()
    STEP += 1
    return y * 2


class BufferStore(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.zeros(4, 4))

    def forward(self, x):
        y = x.sin()
        self.b = y.detach()
        return y + 1


class Cfg:
    def __init__(self):
        self.a = 1


CFG = Cfg()


def ex_deepcopy(x):
    y = x.sin()
    c = copy.deepcopy(CFG)
    return y * c.a


def ex_getpid(x):
    return x.sin() + (os.getpid() > 0)


def ex_str(x):
    y = x.sin()
    return y + len(str(y))


def ex_alias(x):
    return torch.ops.aten.alias(x.sin()) + 1


def ex_t_(x):
    y = x.sin()
    y.t_()
    return y + 1


class Ctx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def ex_user_ctx(x):
    y = x.sin()
    with Ctx():
        z = y * 2
    return z + 1


def ex_autocast(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return x @ x


def ex_autocast_print(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ x
        print("y")
        return (y @ x).float().sum(0)


class Counting:
    """A user context manager whose state the block reads."""

    def __init__(self):
        self.depth = 0

    def __enter__(self):
        self.depth += 1
        return self

    def __exit__(self, *exc):
        self.depth -= 1
        return False


def ex_user_ctx_print(x):
    y = x.sin()
    with Counting() as c:
        z = y * 2
        print("z")
        z = z + c.depth
    return z.cos()


@contextlib.contextmanager
def _scaled(k):
    yield k * 2


def ex_contextmanager(x):
    with _scaled(3) as k:
        y = x.sin() * k
    return y + 1


def ex_set_grad_enabled(x):
    with torch.set_grad_enabled(False):
        y = x.sin()
    return y + 1


def ex_set_grad_enabled_call(x):
    torch.set_grad_enabled(False)
    y = x.sin()
    torch.set_grad_enabled(True)
    return y + 1


def ex_inference_mode(x):
    with torch.inference_mode():
        return x.sin() + 1


class BackwardHook(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.Linear(4, 4)
        self.m.register_full_backward_hook(lambda *a: None)

    def forward(self, x):
        return self.m(x.sin()) + 1


def ex_try(x):
    y = x.sin()
    try:
        z = y * 2
        print("in try")
        z = z + 1
    finally:
        pass
    return z.cos()


def ex_loop(x):
    y = x.sin()
    for i in range(2):
        y = y * 2
        print(i)
    return y.cos()


# (name, function, dyn's graph count, a piece of each of dyn's reasons, TorchDynamo's graph count and
# whether it reports a break)
EXAMPLES = [
    ("print", ex_print, 2, "print", 2, True),
    ("item", ex_item, 2, "Tensor.item", 2, True),
    ("tolist", ex_tolist, 2, "Tensor.tolist", 2, True),
    ("numpy", ex_numpy, 2, "numpy", 1, False),
    ("branch", ex_branch, 2, "data-dependent branch on a tensor", 2, True),
    ("nonzero", ex_nonzero, 2, "nonzero", 2, True),
    ("mask index", ex_mask_index, 2, "indexing", 2, True),
    ("global store", ex_global, 2, "assignment to a global", 1, False),
    ("buffer store", BufferStore(), 2, "assignment to the parameter, buffer or submodule", 1, False),
    ("C function", ex_getpid, 2, "call to unsupported function getpid", 2, True),
    ("str of a tensor", ex_str, 2, "str() of a tensor", 2, True),
    ("view without a graph op", ex_alias, 2, "returns a view of its argument", 1, False),
    ("t_", ex_t_, 2, "changes the shape or layout", 1, False),
    ("print in a user context manager", ex_user_ctx_print, 1, "the rest of the frame runs eagerly", 0, False),
    ("print under autocast", ex_autocast_print, 2, "print", 2, True),
    ("set_grad_enabled as a call", ex_set_grad_enabled_call, 0, "torch.set_grad_enabled() called as a function",
     1, False),
    ("backward hook", BackwardHook(), 2, "module backward hooks", 2, True),
    ("in a loop", ex_loop, 0, "graph break inside a loop", 0, False),
    ("in a try", ex_try, 1, "the rest of the frame runs eagerly", 0, False),
]


@pytest.mark.parametrize("name,fn,graphs,reason,td_graphs,td_breaks", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_break_example(name, fn, graphs, reason, td_graphs, td_breaks):
    x = torch.randn(4, 4)
    with contextlib.redirect_stdout(io.StringIO()):
        e = dyn.explain(fn, backend="eager")(x)
    reasons = [r["reason"] for r in e.break_reasons]
    assert e.graph_count == graphs and reasons and all(reason in r or "numpy" in r for r in reasons), reasons
    # the result is eager's whatever was captured
    torch.manual_seed(0)
    with contextlib.redirect_stdout(io.StringIO()):
        want = fn(x)
        got = dyn.compile(fn, backend="eager")(x)
    torch.testing.assert_close(got, want)

    import torch._dynamo as td
    td.reset()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        t = td.explain(fn)(x)
    td.reset()
    assert (t.graph_count, bool(t.break_reasons)) == (td_graphs, td_breaks)


# Examples that no longer break (docs/capture.md's table says so): one graph, no break reason, eager's
# result; TorchDynamo's graph count beside dyn's, and whether it reports a break.
TRACED = [
    ("user context manager", ex_user_ctx, 1, 1, False),
    ("@contextlib.contextmanager", ex_contextmanager, 1, 1, False),
    ("autocast", ex_autocast, 1, 1, False),
    ("set_grad_enabled block", ex_set_grad_enabled, 1, 1, False),
    ("inference_mode block", ex_inference_mode, 1, 1, False),
    ("deepcopy", ex_deepcopy, 1, 2, True),
]


@pytest.mark.parametrize("name,fn,graphs,td_graphs,td_breaks", TRACED, ids=[e[0] for e in TRACED])
def test_traced_example(name, fn, graphs, td_graphs, td_breaks):
    x = torch.randn(4, 4)
    e = dyn.explain(fn, backend="eager")(x)
    assert (e.graph_count, [r["reason"] for r in e.break_reasons]) == (graphs, [])
    want = fn(x)
    got = dyn.compile(fn, backend="eager")(x)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got, want)

    import torch._dynamo as td
    td.reset()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        t = td.explain(fn)(x)
    td.reset()
    assert (t.graph_count, bool(t.break_reasons)) == (td_graphs, td_breaks)
