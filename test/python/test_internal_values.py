"""Values dyn uses while capturing (symbolic tensors, bound tensor methods, generators being traced,
objects the traced code made) never reach user code, a real function or a resume function: builtins
that would look at them follow Python's semantics exactly or break the graph. Also: keyword arguments
of builtins, containers initialised again, slices of lists held on self, mutations of global lists at
a graph break, a resume function that fails to compile, and dyn.compile of any callable."""
import functools
import operator
import types
import warnings

import pytest
import torch
import torch.nn as nn

import dyn


def same(fn, *args, expect_break=None):
    """fn compiled equals fn in eager, three calls in a row; expect_break: whether it breaks."""
    cf = dyn.compile(fn, backend="eager")
    for _ in range(3):
        got, want = cf(*args), fn(*args)
        if isinstance(want, torch.Tensor):
            assert type(got) is torch.Tensor
            torch.testing.assert_close(got, want)
        else:
            assert type(got) is type(want) and got == want
    if expect_break is not None:
        assert bool(cf.breaks) == expect_break, cf.breaks
    return cf


X = torch.randn(4)
A = torch.ones(4)


# -- builtins with keyword arguments --------------------------------------------------------------------
def test_sum_with_start_keyword():
    cf = same(lambda x, a: sum([x, x * 2], start=a), X, A, expect_break=False)
    assert [g.ops() for g, k, e in cf.graphs] == [["constant", "mul", "add", "add"]]
    same(lambda x: sum([1, 2], start=x), X, expect_break=False)
    same(lambda x: sum([x.shape[0], 2], start=10) * x, X, expect_break=False)


def test_sorted_and_enumerate_keywords():
    same(lambda x: sorted([3, 1, 2], reverse=True)[0] * x, X, expect_break=False)
    same(lambda x: list(enumerate([x, x], start=1))[1][0] * x, X, expect_break=False)


# -- containers initialised again ---------------------------------------------------------------------
def test_init_of_a_list_made_here():
    def f(x):
        s = [1, 2, 3]
        s.__init__([x, x * 2])
        return s[0] + s[1] + len(s)
    same(f, X, expect_break=False)


def test_init_of_a_dict_and_a_set_made_here():
    def f(x):
        d = {"k": 1}
        d.__init__(a=x, b=x + 1)
        s = {1, 2}
        s.__init__([3])
        return d["a"] * d["b"] + len(d) + len(s) + ("k" in d)
    same(f, X, expect_break=False)


GLOBAL_LIST = [0]


def test_init_of_a_real_list_is_made_on_it():
    def f(x):
        y = x + 1
        GLOBAL_LIST.__init__([y.shape[0]])
        return y * GLOBAL_LIST[0]
    GLOBAL_LIST[:] = [0]
    cf = dyn.compile(f, backend="eager")
    torch.testing.assert_close(cf(X), (X + 1) * 4)
    assert GLOBAL_LIST == [4] and cf.breaks


# -- truth, identity and text of tensors: a break, never the placeholder's -----------------------------
@pytest.mark.parametrize("fn", [
    lambda x: operator.truth(x.sum() > 0),
    lambda x: operator.not_(x.sum() > 0),
    lambda x: x * 2 if operator.truth(x.sum() > 0) else x,
    lambda x: any([x.sum() > 100, x.sum() < 100]),
    lambda x: all(t.sum() > -100 for t in [x, x]),
    lambda x: bool(x.sum() > 0),
    lambda x: [x.sum()] == [x.sum()],
    lambda x: x.sum() in [x.sum(), x.mean()],
])
def test_truth_of_a_tensor_breaks(fn):
    same(fn, X, expect_break=True)


@pytest.mark.parametrize("fn", [
    lambda x: id(x * 2) != 0,
    lambda x: hash(x + 1) != 0,
    lambda x: str([x * 2]).startswith("[tensor("),
    lambda x: repr((x + 1,)).startswith("(tensor("),
    lambda x: f"{[x + 1]}".startswith("[tensor("),
    lambda x: callable((x + 1).add),
])
def test_identity_and_text_of_a_tensor_are_eagers(fn):
    same(fn, X, expect_break=True)


def test_type_of_a_tensor():
    p = nn.Parameter(torch.randn(3))
    same(lambda x: type(x * 2) is torch.Tensor and type(x) is torch.Tensor, X, expect_break=False)
    same(lambda p: (type(p) is nn.Parameter, type(p * 1) is torch.Tensor), p, expect_break=False)
    same(lambda x: type([x]) is list and callable(x) is False, X, expect_break=False)


def _gen(xs):
    for x in xs:
        yield x * 2


def test_a_generator_being_traced_is_not_a_real_one():
    same(lambda x: isinstance(_gen([x]), types.GeneratorType), X, expect_break=True)
    same(lambda x: sum(_gen([x, x])), X, expect_break=False)
    same(lambda x: any(t.dim() == 1 for t in _gen([x])), X, expect_break=False)


# -- slices of lists held on self ---------------------------------------------------------------------
class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.ts = [torch.ones(4), torch.ones(4) * 2, torch.ones(4) * 3]
        self.mods = [nn.Linear(4, 4), nn.Linear(4, 4)]
        self.ks = [1, 2, 3]

    def forward(self, x):
        r = self.ts[1:]
        r.append(x)  # the slice is a new list: self.ts is unchanged
        k = self.ks[:2]
        k[0] = 10
        for m in self.mods[:1]:
            x = m(x)
        return r, x * k[0] * self.ks[0]


def test_slices_of_lists_held_on_self():
    torch.manual_seed(0)
    m = Holder()
    cm = dyn.compile(m, backend="eager")
    with torch.no_grad():
        for step in range(4):
            ks = list(m.ks)
            (r, y), (er, ey) = cm(X), m(X)
            assert len(r) == len(er) == 3 and len(m.ts) == 3 and m.ks == ks
            assert all(a is b for a, b in zip(r, er))  # the same tensors as eager returns
            torch.testing.assert_close(y, ey)
            if step == 1:
                m.ts[1] = torch.zeros(4)  # a new tensor on self: seen (re-captured)
            if step == 2:
                m.ks[0] = 5


# -- a mutation at a graph break is made on the real object ---------------------------------------------
LOG = []


def logs(x):
    y = x + 1
    LOG.append(y.shape[0])  # a list not made here: the graph breaks, Python appends
    return y * 2


def test_mutation_of_a_global_list_at_a_break_reaches_it():
    global LOG
    LOG = []
    cf = dyn.compile(logs, backend="eager")
    cf(X)
    cf(X)
    assert LOG == [4, 4]
    old = LOG
    LOG = []  # an equal new list: the guard passes, the append must reach the new one
    cf(X)
    assert LOG == [4] and old == [4, 4]


# -- a resume function that fails to compile runs eagerly with real tensors ------------------------------
def breaks_once(x):
    y = x.sin()
    print("between")
    return y.cos() + x


def test_resume_function_failing_to_compile_runs_eagerly(monkeypatch, capsys):
    from dyn.capture import compiled
    orig = compiled._Segment.__init__

    def failing(self, cf, args, *rest):
        if cf._code.co_name.startswith("__resume_at"):
            raise RuntimeError("boom (test)")
        orig(self, cf, args, *rest)
    monkeypatch.setattr(compiled._Segment, "__init__", failing)
    cf = dyn.compile(breaks_once, backend="eager")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(2):
            torch.testing.assert_close(cf(X), breaks_once(X))
    assert any("boom (test)" in str(m.message) for m in w)
    assert capsys.readouterr().out == "between\n" * 4


# -- dyn.compile accepts any callable -------------------------------------------------------------------
def scaled(x, k, bias=0.0):
    return x * k + bias


class Affine:
    def __init__(self):
        self.w = 3.0

    def __call__(self, x):
        return x * self.w + 1


def test_compile_any_callable():
    p = functools.partial(scaled, k=2.0, bias=1.0)
    for fn in (p, torch.sin, operator.neg, operator.mul, Affine(), functools.partial(torch.add, alpha=2)):
        cf = dyn.compile(fn, backend="eager")
        args = (X, A) if fn is operator.mul or getattr(fn, "func", None) is torch.add else (X,)
        torch.testing.assert_close(cf(*args), fn(*args))
        torch.testing.assert_close(cf(*args), fn(*args))
        assert [g for g, k, e in cf.graphs if g is not None], fn  # captured, not eager
    with pytest.raises(TypeError, match="not callable"):
        dyn.compile(3)


@pytest.mark.parametrize("call, error, message", [
    (lambda: dyn.compile(None)(3), TypeError, "not callable"),  # compile(None) is the decorator, as torch's
    (lambda: dyn.compile(torch.sin, backend="nope"), ValueError, "unknown backend"),
    (lambda: dyn.compile(torch.sin, fullgraph=1), TypeError, "fullgraph"),
    (lambda: dyn.compile(torch.sin, mode="fastest"), ValueError, "mode"),
    (lambda: dyn.explain(None), TypeError, "not callable"),
    (lambda: dyn.explain(torch.sin, backend=3), TypeError, "backend"),
    (lambda: dyn.export(3, torch.ones(1)), TypeError, "not callable"),
    (lambda: dyn.run()(3), TypeError, "decorates a callable"),
    (lambda: dyn.run(torch.sin), TypeError, "arguments"),
])
def test_public_api_checks_its_arguments_at_the_call(call, error, message):
    with pytest.raises(error, match=message):
        call()
