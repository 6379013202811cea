import warnings

import pytest
import torch

import dyn
from conftest import BACKENDS


def f(x, y):
    return torch.cos(x) + torch.sin(y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cache_hit_does_no_compile(backend):
    cf = dyn.compile(f, backend=backend)
    x, y = torch.randn(4, 8), torch.randn(8)
    cf(x, y)
    s = dyn._stats()
    assert s["captures"] == 1 and s["backend_calls"] == 1
    for _ in range(5):
        a, b = torch.randn(4, 8), torch.randn(8)
        torch.testing.assert_close(cf(a, b), f(a, b))
    s2 = dyn._stats()
    assert s2["captures"] == 1 and s2["backend_calls"] == 1
    assert s2["graphs_compiled"] == s["graphs_compiled"]


def test_cache_hit_results_fresh():
    cf = dyn.compile(f, backend="eager")
    for _ in range(3):
        x, y = torch.randn(4, 8), torch.randn(8)
        torch.testing.assert_close(cf(x, y), f(x, y))
    assert dyn._stats()["captures"] == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_recompile_on_shape_and_dtype(backend):
    cf = dyn.compile(f, backend=backend)
    cases = [((4, 8), torch.float32), ((4, 8), torch.float32), ((5, 8), torch.float32),
             ((4, 8), torch.float64), ((2, 3, 8), torch.float64), ((4, 8), torch.float32)]
    for shape, dt in cases:
        x, y = torch.randn(shape, dtype=dt), torch.randn(8, dtype=dt)
        out = cf(x, y)
        assert out.dtype == dt and out.shape == torch.Size(shape)
        torch.testing.assert_close(out, f(x, y))
    assert dyn._stats()["captures"] == 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_recompile_on_strides(backend):
    cf = dyn.compile(lambda x: x * 2 + x.sum(-1, keepdim=True), backend=backend)
    x = torch.randn(6, 4)
    torch.testing.assert_close(cf(x), x * 2 + x.sum(-1, keepdim=True))
    xt = torch.randn(4, 6).t()
    torch.testing.assert_close(cf(xt), xt * 2 + xt.sum(-1, keepdim=True))
    assert dyn._stats()["captures"] == 2


def test_recompile_on_scalar_argument():
    def g(x, eps):
        return x + eps
    cf = dyn.compile(g, backend="eager")
    x = torch.randn(3)
    torch.testing.assert_close(cf(x, 1.0), x + 1.0)
    torch.testing.assert_close(cf(x, 2.0), x + 2.0)
    torch.testing.assert_close(cf(x, 2.0), x + 2.0)
    assert dyn._stats()["captures"] == 2


def test_recompile_limit_warns_once_then_eager():
    cf = dyn.compile(f, backend="eager")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(1, 13):
            x, y = torch.randn(n, 3), torch.randn(3)
            torch.testing.assert_close(cf(x, y), f(x, y))
    assert dyn._stats()["captures"] == 8
    assert sum("recompile limit" in str(m.message) for m in w) == 1


def test_requires_grad_is_guarded():
    cf = dyn.compile(lambda x: (x * 3).sum(), backend="eager")
    x = torch.randn(4, requires_grad=True)
    y = cf(x)
    y.backward()
    torch.testing.assert_close(x.grad, torch.full((4,), 3.0))
    cf(torch.randn(4))
    assert dyn._stats()["captures"] == 2


@pytest.mark.skipif("dyn" not in BACKENDS, reason="compiler core not built")
def test_dyn_backend_keeps_autograd_by_running_eagerly():
    cf = dyn.compile(lambda x: (x * 3).sum())
    x = torch.randn(4, requires_grad=True)
    cf(x).backward()
    torch.testing.assert_close(x.grad, torch.full((4,), 3.0))
    with torch.no_grad():
        torch.testing.assert_close(cf(x), (x * 3).sum())


SCALE = 2.0


def uses_global(x):
    return x * SCALE + helper_fn(x)


def helper_fn(x):
    return x.sin()


def test_global_and_closure_changes_recompile():
    global SCALE, helper_fn
    cf = dyn.compile(uses_global, backend="eager")
    x = torch.randn(3)
    torch.testing.assert_close(cf(x), x * 2.0 + x.sin())
    SCALE = 3.0
    torch.testing.assert_close(cf(x), x * 3.0 + x.sin())
    old = helper_fn
    helper_fn = lambda x: x.cos()  # noqa: E731
    try:
        torch.testing.assert_close(cf(x), x * 3.0 + x.cos())
    finally:
        helper_fn = old
        SCALE = 2.0
    k = 1.5

    def g(x):
        return x * k
    cg = dyn.compile(g, backend="eager")
    torch.testing.assert_close(cg(x), x * 1.5)
    k = 4.0
    torch.testing.assert_close(cg(x), x * 4.0)


def test_global_guards_no_hook(monkeypatch):
    from dyn.capture import compiled
    monkeypatch.setattr(compiled, "_HOOK", False)
    test_global_and_closure_changes_recompile()


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_and_tuple_arguments(backend):
    def g(xs, pair):
        a, b = pair
        return torch.cat(xs, 0) * a + b.sum()
    cf = dyn.compile(g, backend=backend, fullgraph=True, dynamic=False)
    for _ in range(3):
        xs = [torch.randn(2, 3), torch.randn(4, 3)]
        pair = (2.0, torch.randn(5))
        torch.testing.assert_close(cf(xs, pair), g(xs, pair))
    assert dyn._stats()["captures"] == 1
    xs = [torch.randn(2, 3)] * 3
    torch.testing.assert_close(cf(xs, pair), g(xs, pair))
    pair = (3.0, pair[1])
    torch.testing.assert_close(cf(xs, pair), g(xs, pair))
    assert dyn._stats()["captures"] == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_kwargs_and_dict_arguments(backend):
    def g(x, d, **kw):
        return x * kw["k"] + d["bias"]
    cf = dyn.compile(g, backend=backend, fullgraph=True)
    for _ in range(3):
        x, b = torch.randn(3), torch.randn(3)
        torch.testing.assert_close(cf(x, {"bias": b}, k=2.0), g(x, {"bias": b}, k=2.0))
    assert dyn._stats()["captures"] == 1
    torch.testing.assert_close(cf(x, {"bias": b}, k=3.0), g(x, {"bias": b}, k=3.0))
    assert dyn._stats()["captures"] == 2


def test_mutated_list_argument_recompiles():
    cf = dyn.compile(lambda x, dims: x.sum(dims), backend="eager", fullgraph=True)
    x = torch.randn(3, 4, 5)
    dims = [0, 2]
    torch.testing.assert_close(cf(x, dims), x.sum([0, 2]))
    dims[:] = [1]
    torch.testing.assert_close(cf(x, dims), x.sum([1]))


class _Cfg:
    scale = 2.0


CFG = _Cfg()


def test_global_object_attribute_change_recompiles():
    cf = dyn.compile(lambda x: x * CFG.scale, backend="eager", fullgraph=True)
    x = torch.randn(3)
    torch.testing.assert_close(cf(x), x * 2.0)
    CFG.scale = 5.0
    try:
        torch.testing.assert_close(cf(x), x * 5.0)
    finally:
        CFG.scale = 2.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_guards_through_module_lists_and_sequentials(backend):
    """Guards reach layers through ModuleList and Sequential items (read from their _modules dicts in C,
    as their __getitem__ would: key str(i), or the i-th module of a Sequential): a steady call is a
    cache hit, and replacing a layer, indexed from either end, or reordering a Sequential whose modules
    have names, recompiles instead of running the old layer."""
    from collections import OrderedDict

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(3))
            self.head = torch.nn.Sequential(OrderedDict(a=torch.nn.Linear(4, 4), b=torch.nn.Tanh()))

        def forward(self, x):
            x = torch.relu(self.layers[0](x)) + self.layers[-1](x)
            return self.head[1](self.head[0](x))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            return self.block(x) * 2

    m = Net()
    x = torch.randn(2, 4)
    cm = dyn.compile(m, backend=backend)
    with torch.no_grad():
        torch.testing.assert_close(cm(x), m(x))
        captures = dyn.stats()["captures"]
        torch.testing.assert_close(cm(x), m(x))
        assert dyn.stats()["captures"] == captures  # the guards pass: no capture
        m.block.layers[0] = torch.nn.Linear(4, 4)
        torch.testing.assert_close(cm(x), m(x))
        m.block.layers[-1] = torch.nn.Linear(4, 4)
        torch.testing.assert_close(cm(x), m(x))
        m.block.head = torch.nn.Sequential(OrderedDict(b=torch.nn.Linear(4, 4), a=torch.nn.Sigmoid()))
        torch.testing.assert_close(cm(x), m(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_parameter_and_module_guards_on_every_call(backend):
    """A model's parameters and modules are checked on every call (the tensors read in C++, the modules
    from their __dict__ and class, each object reached once along the guards' shared paths): a steady
    call is a cache hit, and a parameter of another dtype, shape, strides or requires_grad, a hook on a
    nested module, or a forward set on its instance, each give eager's result."""
    class Inner(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self.scale = torch.nn.Parameter(torch.full((4,), 2.0))

        def forward(self, x):
            return torch.relu(self.lin(x)) * self.scale

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.ModuleList([Inner(), Inner()])

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    torch.manual_seed(0)
    m, x = Net(), torch.randn(2, 4)
    cm = dyn.compile(m, backend=backend)
    inner = m.blocks[1]
    with torch.no_grad():
        torch.testing.assert_close(cm(x), m(x))
        captures = dyn.stats()["captures"]
        torch.testing.assert_close(cm(x), m(x))
        assert dyn.stats()["captures"] == captures
        changes = [
            lambda: setattr(inner.lin, "weight", torch.nn.Parameter(torch.randn(4, 4).t())),  # strides
            lambda: setattr(inner, "scale", torch.nn.Parameter(torch.full((1,), 3.0))),  # shape
            lambda: setattr(inner, "scale", torch.nn.Parameter(torch.full((4,), 3.0, dtype=torch.float64))),
            lambda: inner.scale.requires_grad_(False),
            lambda: inner.register_forward_hook(lambda mod, i, o: o + 1),
            lambda: setattr(inner, "forward", lambda x: x - 1),
        ]
        for change in changes:
            change()
            got, want = cm(x), m(x)
            assert got.dtype == want.dtype
            # float32's tolerances: with a float64 scale, the float32 linear's rounding (dyn's CPU
            # GEMM, not MKL's) is carried into the float64 product.
            torch.testing.assert_close(got, want, rtol=1.3e-6, atol=1e-5)
            assert dyn.stats()["captures"] > captures
            captures = dyn.stats()["captures"]
