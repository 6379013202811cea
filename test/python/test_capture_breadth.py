"""Capture breadth (issue 35): the constructs of PyTorch's TorchDynamo function tests that used to break
dyn's graphs, each captured as one graph and compared with eager on both backends; and where the value
would depend on data, a break, never a wrong answer. benchmarks/dynamo_functions.py measures the
whole of PyTorch's suite."""
import collections
import functools
import itertools

import numpy as np
import pytest
import torch

import dyn

BACKENDS = ("eager", "dyn")


def same(ref, res):
    made_per_call = hasattr(ref, "_fields") and (type(ref).__qualname__, ref._fields) == \
        (type(res).__qualname__, getattr(res, "_fields", None))  # a namedtuple class the function makes
    assert type(ref) is type(res) or made_per_call, (type(ref), type(res))
    if isinstance(ref, torch.Tensor):
        torch.testing.assert_close(res, ref)
    elif isinstance(ref, dict):
        assert list(ref) == list(res)
        for k in ref:
            same(ref[k], res[k])
    elif isinstance(ref, (tuple, list, collections.deque)):
        assert len(ref) == len(res)
        if isinstance(ref, collections.deque):
            assert ref.maxlen == res.maxlen
        for a, b in zip(ref, res):
            same(a, b)
    else:
        assert ref == res


def one_graph(fn, *args, backend="eager"):
    """fn captured as one graph without a break, and its results (twice) equal eager's."""
    ref = fn(*[a.clone() for a in args])
    dyn.reset()
    out = dyn.explain(fn, backend=backend)(*[a.clone() for a in args])
    assert out.graph_break_count == 0, out.break_reasons
    assert out.graph_count <= 1
    dyn.reset()
    cf = dyn.compile(fn, backend=backend)
    for _ in range(2):
        same(ref, cf(*[a.clone() for a in args]))
    s = dyn.stats()
    assert s["graph_breaks"] == 0 and s["eager_entries"] == 0 and s["internal_failures"] == 0
    return ref


def breaks(fn, *args, backend="eager"):
    """fn breaks (the value would depend on data) and still equals eager; the break reasons."""
    ref = fn(*[a.clone() for a in args])
    dyn.reset()
    cf = dyn.compile(fn, backend=backend)
    same(ref, cf(*[a.clone() for a in args]))
    assert dyn.stats()["graph_breaks"] > 0
    return [b["reason"] for b in cf.breaks]


X = torch.randn(4, 3)
Y = torch.randn(4, 3)


@functools.lru_cache
def _cached_sin(x, k, _=None):
    return torch.sin(x * k)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lru_cache_with_tensor_arguments_is_traced(backend):
    one_graph(lambda x, y: _cached_sin(x, 2, y) + y, X, Y, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_type_and_len(backend):
    def f(x, y):
        h = x.to(torch.float16)
        a = y.type(h.type())                      # "torch.HalfTensor"
        b = y.type(torch.HalfTensor)              # a legacy tensor type
        c = y.type(torch.float64)
        return a, b, c, x + len(x) + y.__len__()
    one_graph(f, X, Y, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_indexed_with_a_constant_0d_tensor(backend):
    one_graph(lambda x, y: [x, y, x + 1][torch.as_tensor(2)], X, Y, backend=backend)


def test_list_indexed_with_a_tensor_of_data_breaks():
    reasons = breaks(lambda x, y: [x, y, x + 1, y + 1][x.argmax() % 4], X, Y)
    assert any("index" in r for r in reasons)


@pytest.mark.parametrize("backend", BACKENDS)
def test_torch_tensor_of_a_tensor_and_of_a_range(backend):
    def f(x, y):
        c = torch.tensor(x)                       # a detached copy (eager warns)
        c.add_(y, alpha=5.0)
        return c, x, torch.tensor(range(x.size(0))), torch.tensor(y, dtype=torch.float64)
    with pytest.warns(UserWarning):
        ref = one_graph(f, X, Y, backend=backend)
    assert not torch.equal(ref[0], ref[1])  # the copy changed, the input did not


@pytest.mark.parametrize("backend", BACKENDS)
def test_itertools(backend):
    def f(a, b):
        v = a
        for x, i in itertools.product([a, b], [1, 2]):
            v = v + x * i
        for x in itertools.chain.from_iterable([[a, b], [1, 2]]):
            v = v + x
        for p, q in itertools.permutations([a, b]):
            v = v + p * q
        return v
    one_graph(f, X, Y, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fromkeys(backend):
    def f(x, y):
        d = collections.defaultdict.fromkeys("a", "b")
        d["a"] = 1
        d.setdefault("c", 10)
        d1 = dict.fromkeys(["a", "b"], x + 1)
        d2 = collections.defaultdict.fromkeys(iter(d1), x - 2)
        d3 = collections.OrderedDict.fromkeys(("a", "b"), value=y)
        return (x + d["c"] if d["a"] == 1 else x), d1["a"] * d2["b"] + d3["a"], d2, d3
    one_graph(f, X, Y, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_finfo_and_iinfo_in_arithmetic(backend):
    def f(x):
        a = x + np.iinfo(np.int16).max + np.finfo(np.float32).eps
        if torch.iinfo(torch.int32).bits == 32:
            a = a + torch.finfo(x.dtype).eps
        return a * torch.finfo(torch.float16).max
    one_graph(f, X, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_returning_a_deque_and_a_set(backend):
    def f(a, b):
        d = collections.deque([a, b], maxlen=3)
        d.append(a + 1)
        d.appendleft("first")
        e = collections.deque([a], maxlen=1)
        e.__init__([a, b, b + 1])  # re-initialised: its maxlen reset to None
        return d, e, e.maxlen, {1, "x"}
    one_graph(f, X, Y, backend=backend)


class _Plain:
    pass


@pytest.mark.parametrize("backend", BACKENDS)
def test_comparing_objects_that_hold_tensors(backend):
    Pair = collections.namedtuple("Pair", ["first", "second"])

    def f(a, b):
        v = a + b
        if _Plain() != None and _Plain() != _Plain():  # noqa: E711 (object's __eq__: identity)
            v = v.sin()
        if Pair(a, b) == Pair(a, b) and (a, [b]) == (a, [b]):  # the same tensors: Python's identity shortcut
            v = v + 1
        if 3 in [1, 2, 3, a] and 6 not in [1, 2, 3]:  # decided before the tensor is reached
            v = v * 2
        return v
    one_graph(f, X, Y, backend=backend)


def test_comparing_different_tensors_breaks():
    def f(a, b):
        return a + 1 if (a, b) == (a, a) else a - 1  # bool(b == a): depends on data
    with pytest.raises(RuntimeError):
        f(X, Y)  # eager raises too (bool of a many-element tensor): dyn must not decide it
    dyn.reset()
    with pytest.raises(RuntimeError):
        dyn.compile(f, backend="eager")(X, Y)
    assert dyn.stats()["graph_breaks"] > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_promote_types_and_namedtuples_made_here(backend):
    def f(x, y):
        T = collections.namedtuple("T", ["a", "b", "ab"], defaults=(None, 1, None))
        t = T(x, ab=y)._replace(b=y)
        if x.dtype == torch.promote_types(torch.int32, torch.float32):
            return T(t.a, t.b, t.ab + 1)
        return t
    ref = one_graph(f, X, Y, backend=backend)
    assert type(ref).__name__ == "T"


@pytest.mark.parametrize("backend", BACKENDS)
def test_torch_helpers_in_python(backend):
    def f(x):
        fan_in = torch.nn.init._calculate_correct_fan(x, "fan_in")
        y = x + fan_in
        if torch._C._is_any_autocast_enabled():
            y = y + 1
        if torch.autograd._is_checkpoint_valid():
            y = y + 2
        if torch.distributed.is_available() and not torch.distributed.is_initialized():
            y = y + 3
        if torch._C._get_privateuse1_backend_name() == "privateuseone":
            y = y + 4
        if not torch._C._are_functorch_transforms_active():
            y = y + 5
        return torch.jit._unwrap_optional(y)
    one_graph(f, X, backend=backend)


def test_autocast_query_is_guarded():
    def f(x):
        return x + 1 if torch._C._is_any_autocast_enabled() else x - 1
    dyn.reset()
    cf = dyn.compile(f, backend="eager")
    assert torch.equal(cf(X), X - 1)
    with torch.autocast("cpu"):
        assert torch.equal(cf(X), X + 1)  # the state read while capturing is guarded: captured again


@torch.jit.script_if_tracing
def _if_tracing(x, y, c=1.2):
    return torch.cos(x * y) + c


@pytest.mark.parametrize("backend", BACKENDS)
def test_script_if_tracing_and_no_grad_decorator(backend):
    def f(x, y):
        @torch.no_grad()
        def augment(t):
            return (t + 1) * 2
        return augment(_if_tracing(x, y))
    one_graph(f, X, Y, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_builtins_over_lists(backend):
    def f(a, b):
        xs = [1, a]
        xs = xs + [a / 2.0, 4]  # a new list: appending to it changes nothing else
        xs.append(b)
        it = range(3).__iter__()
        return sum(xs), sum([b, a], a), next(it), f"{a.__class__.__name__}"
    one_graph(f, X, Y, backend=backend)


def test_max_of_a_tensor_and_a_number_breaks():
    # Python's max compares them (bool of a tensor): the result, a tensor or the number, depends on data
    reasons = breaks(lambda a, b: max(a.sum(), 0) + b, X, Y)
    assert any("max()" in r for r in reasons)


@pytest.mark.parametrize("backend", BACKENDS)
def test_match_statements(backend):
    def f(a, b):
        match (5, 8):
            case (0, y):
                a = a - y
            case (x, y):
                a = a + x - y
        match {"k": 0.5}:
            case {"j": v}:
                return a / v
            case {"k": v}:
                return a * v + b
    one_graph(f, X, Y, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_missing_attribute_of_a_builtin_type_is_raised(backend):
    def f(x):
        def g(y):
            return y + 1
        try:
            type(g).__exit__  # functions have none: AttributeError, caught
        except AttributeError:
            return x.sin()
        return x.cos()
    one_graph(f, X, backend=backend)
