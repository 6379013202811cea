"""Soundness of capture: what a graph read while it was captured (global containers, module children,
attributes holding functions, global state, iterators) is guarded, so a change between calls
re-captures instead of reusing a stale graph; generators run lazily, in step with their consumer.
Every result is compared with eager PyTorch."""
import functools

import pytest
import torch
import torch.nn as nn

import dyn


@pytest.fixture(autouse=True)
def _fresh():
    dyn.reset()
    torch.manual_seed(0)


def check(cf, fn, *args):
    torch.testing.assert_close(cf(*args), fn(*args))


def captures():
    return dyn._stats()["captures"]


# -- globals and closures holding containers of non-constants ------------------------------------
ACTS = {"act": torch.relu}


def _global_fn_table(x):
    return ACTS["act"](x) * 2


def test_global_dict_of_functions_swapped():
    cf = dyn.compile(_global_fn_table, backend="eager")
    x = torch.randn(5)
    check(cf, _global_fn_table, x)
    try:
        ACTS["act"] = torch.tanh
        check(cf, _global_fn_table, x)
    finally:
        ACTS["act"] = torch.relu
    check(cf, _global_fn_table, x)
    assert captures() == 2


def test_closure_list_of_modules_appended():
    layers = [nn.Linear(3, 3)]

    def f(x):
        for l in layers:
            x = l(x)
        return x
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(2, 3)
    with torch.no_grad():
        check(cf, f, x)
        layers.append(nn.Tanh())
        check(cf, f, x)


def test_global_constant_set_changed():
    global NAMES
    NAMES = {"a", "b"}

    def f(x):
        return x * 2 if "c" in NAMES else x - 1
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    check(cf, f, x)
    NAMES.add("c")
    check(cf, f, x)


# -- modules --------------------------------------------------------------------------------------
class _Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.ReLU()])
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2)})
        self.act = torch.relu
        self.scales = [1.0, 2.0]

    def forward(self, x):
        for l in self.layers:
            x = l(x)
        x = self.act(x) * len(self.layers) * self.scales[0]
        out = self.heads["a"](x)
        if "b" in self.heads:
            out = out + self.heads["b"](x)
        return out


@pytest.mark.parametrize("change", ["append_layer", "replace_layer", "add_head", "swap_act", "scale",
                                    "new_linear_same_shape"])
def test_module_structure_changes_recompile(change):
    m = _Stack()
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(3, 4)
    with torch.no_grad():
        torch.testing.assert_close(cm(x), m(x))
        if change == "append_layer":
            m.layers.append(nn.Tanh())
        elif change == "replace_layer":
            m.layers[1] = nn.Sigmoid()
        elif change == "add_head":
            m.heads["b"] = nn.Linear(4, 2)
        elif change == "swap_act":
            m.act = torch.tanh
        elif change == "scale":
            m.scales[0] = -3.0
        else:
            m.layers[0] = nn.Linear(4, 4)
        torch.testing.assert_close(cm(x), m(x))
        torch.testing.assert_close(cm(x), m(x))
    assert captures() == 2


def test_sequential_slice_child_replaced():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3))

        def forward(self, x):
            return self.seq[1:](x)
    m = M()
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(2, 3)
    with torch.no_grad():
        torch.testing.assert_close(cm(x), m(x))
        m.seq[2] = nn.Tanh()
        torch.testing.assert_close(cm(x), m(x))


def test_bound_method_swapped_on_instance():
    class M(nn.Module):
        def helper(self, x):
            return x + 1

        def forward(self, x):
            return self.helper(x) * 2
    m = M()
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(3)
    torch.testing.assert_close(cm(x), m(x))
    m.helper = lambda x: x - 100
    torch.testing.assert_close(cm(x), m(x))
    torch.testing.assert_close(cm(x), m(x))


# -- global state ---------------------------------------------------------------------------------
def test_default_dtype_int_to_float_promotion():
    def f(x):
        return x * 0.5
    cf = dyn.compile(f, backend="eager")
    x = torch.arange(4)
    check(cf, f, x)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        out = cf(x)
        assert out.dtype == torch.float64
        check(cf, f, x)
    finally:
        torch.set_default_dtype(old)


def test_requires_grad_of_result_read_under_no_grad():
    def f(x, w):
        y = x * w
        return y * 2 if y.requires_grad else y * 3
    cf = dyn.compile(f, backend="eager")
    x, w = torch.randn(3), torch.randn(3, requires_grad=True)
    check(cf, f, x, w)
    with torch.no_grad():
        check(cf, f, x, w)


# -- iterators and generators ---------------------------------------------------------------------
def test_iterator_argument_is_not_consumed_at_capture():
    def f(x, it):
        for k in it:
            x = x * k
        return x
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    for _ in range(2):
        it_c, it_e = iter([1.0, 2.0, 3.0]), iter([1.0, 2.0, 3.0])
        torch.testing.assert_close(cf(x, it_c), f(x, it_e))
        assert list(it_c) == list(it_e) == []


def test_generator_argument_partly_consumed_like_eager():
    def f(x, gen):
        return x * next(gen)
    def make():
        yield 2.0
        yield 3.0
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    gc, ge = make(), make()
    torch.testing.assert_close(cf(x, gc), f(x, ge))
    assert list(gc) == list(ge) == [3.0]


def _gen_lengths(acc):
    for _ in range(3):
        yield len(acc)


def test_generator_runs_in_step_with_its_consumer():
    def f(x):
        acc = []
        for n in _gen_lengths(acc):
            acc.append(x * n)
        return torch.stack(acc)
    cf = dyn.compile(f, backend="eager", fullgraph=True)
    check(cf, f, torch.randn(3))


def _pairs(xs):
    for i in range(len(xs) - 1):
        yield xs[i], xs[i + 1]
    return "done"


def test_generator_consumers():
    def f(xs):
        a = sum(p * q for p, q in _pairs(xs))
        b = list(_pairs(xs))
        c = max((t.shape[0], i) for i, t in enumerate(xs))
        first = next(iter(_pairs(xs)))
        return a, len(b), c, first[0] + first[1], any(t.dim() == 1 for t in xs)
    cf = dyn.compile(f, backend="eager", fullgraph=True)
    xs = [torch.randn(3) for _ in range(4)]
    out, want = cf(xs), f(xs)
    torch.testing.assert_close(out[0], want[0])
    assert out[1:3] == want[1:3] and out[4] == want[4]
    torch.testing.assert_close(out[3], want[3])


# -- user classes, super(), partial, sorted with a key --------------------------------------------
class _Base:
    def __init__(self, k):
        self.k = k

    def apply(self, t):
        return t * self.k


class _Derived(_Base):
    def __init__(self, k, b):
        super().__init__(k)
        self.b = b

    @property
    def total(self):
        return self.k + self.b

    def apply(self, t):
        return super().apply(t) + self.b


def test_user_class_with_super_and_property():
    def f(x):
        d = _Derived(2.0, x)
        return d.apply(x) * d.k, d.total
    cf = dyn.compile(f, backend="eager", fullgraph=True)
    x = torch.randn(3)
    got, want = cf(x), f(x)
    torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(got[1], want[1])


class _WithSetter:
    def __init__(self):
        self._v = 1.0

    @property
    def v(self):
        return self._v

    @v.setter
    def v(self, value):
        self._v = value * 10


def test_property_setter_is_not_bypassed():
    def f(x):
        o = _WithSetter()
        o.v = 2.0
        return x * o.v
    cf = dyn.compile(f, backend="eager")
    check(cf, f, torch.randn(3))


def test_user_object_returned_runs_eagerly():
    def f(x):
        return _Base(x * 2)
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    out = cf(x)
    assert type(out) is _Base
    torch.testing.assert_close(out.k, x * 2)


def _affine(x, w, b=0.0):
    return x * w + b


def test_partial_with_tensor_argument():
    w = torch.randn(3)
    g = functools.partial(_affine, w=w, b=1.0)

    def f(x):
        return g(x) - g(x, b=2.0)
    cf = dyn.compile(f, backend="eager", fullgraph=True)
    check(cf, f, torch.randn(3))
    w.mul_(2)  # the partial's tensor is read at every call
    check(cf, f, torch.randn(3))


def test_sorted_min_max_with_keys():
    def f(xs):
        a = sorted(xs, key=lambda t: -t.shape[0], reverse=True)
        b = max(xs, key=lambda t: t.shape[0])
        c = min(xs, key=lambda t: t.shape[0])
        return torch.cat(a), b * 2, c * 3
    cf = dyn.compile(f, backend="eager", fullgraph=True)
    xs = [torch.randn(n) for n in (3, 1, 2)]
    for g, w in zip(cf(xs), f(xs)):
        torch.testing.assert_close(g, w)


def test_sorted_by_tensor_value_is_not_captured():
    def f(xs):
        return torch.stack(sorted(xs, key=lambda t: t.sum()))
    with pytest.raises(dyn.Unsupported):
        dyn.compile(f, backend="eager", fullgraph=True)([torch.randn(2) for _ in range(3)])
    cf = dyn.compile(f, backend="eager")
    xs = [torch.randn(2) for _ in range(3)]
    check(cf, f, xs)


# -- the eager backend's generated function --------------------------------------------------------
def test_eager_backend_constants_are_not_shared_with_outputs():
    def f(x):
        return torch.zeros(3), torch.ones(2, 2).reshape(4), x + 1, torch.full((2,), 5.0)
    cf = dyn.compile(f, backend="eager", fullgraph=True)
    x = torch.randn(3)
    first = cf(x)
    for t in first[:2] + first[3:]:
        t.add_(100)  # the caller owns its outputs
    for g, w in zip(cf(x), f(x)):
        torch.testing.assert_close(g, w)


def test_eager_backend_non_contiguous_results_are_made_contiguous():
    def f(x):
        return torch.relu(x.t()), x.t() * 1
    cf = dyn.compile(f, backend="eager", fullgraph=True)
    x = torch.randn(3, 5)
    for g, w in zip(cf(x), f(x)):
        torch.testing.assert_close(g, w)
        assert g.is_contiguous()


# -- tensors passed twice, overlapping inputs ------------------------------------------------------
def _x_plus_2y(x, y):
    return x + y * 2


@pytest.mark.parametrize("backend", ["eager", "dyn"])
def test_same_tensor_twice_then_two_tensors(backend):
    cf = dyn.compile(_x_plus_2y, backend=backend)
    a, b = torch.ones(3), torch.full((3,), 5.0)
    check(cf, _x_plus_2y, a, a)
    check(cf, _x_plus_2y, a, b)
    check(cf, _x_plus_2y, b, b)


# -- constants are compared strictly ----------------------------------------------------------------
def _scale_by_item(x, t):
    return x * t[0]


def _reciprocal_scaled(x, s):
    return 1 / (x * s)


def test_constant_guards_tell_int_from_float_and_signed_zeros():
    cf = dyn.compile(_scale_by_item, backend="eager")
    x = torch.arange(3)
    for t in ((2,), (2.0,), (True,), (2,)):
        out = cf(x, t)
        assert out.dtype == _scale_by_item(x, t).dtype
        check(cf, _scale_by_item, x, t)
    cr = dyn.compile(_reciprocal_scaled, backend="eager")
    x = torch.zeros(2)
    for s in (0.0, -0.0, float("nan"), float("nan")):
        torch.testing.assert_close(cr(x, s), _reciprocal_scaled(x, s), equal_nan=True)


# -- attributes of user classes, modules and functions ----------------------------------------------
class _Cfg:
    scale = 2.0


def _helper(t):
    return t * _helper.k


_helper.k = 2.0


def test_attributes_of_user_classes_modules_and_functions_are_guarded():
    from capture_helpers import cfgmod

    def f(x):
        return x * _Cfg.scale + x * cfgmod.SCALE + _helper(x)
    cf = dyn.compile(f, backend="eager")
    x = torch.ones(2)
    check(cf, f, x)
    try:
        _Cfg.scale, cfgmod.SCALE, _helper.k = 3.0, 5.0, 7.0
        check(cf, f, x)
    finally:
        _Cfg.scale, cfgmod.SCALE, _helper.k = 2.0, 2.0, 2.0
    check(cf, f, x)


# -- module forward and hooks -----------------------------------------------------------------------
class _Two(nn.Module):
    def forward(self, x):
        return x * 2


def test_forward_patched_after_compile():
    m = _Two()
    cm = dyn.compile(m, backend="eager")
    x = torch.ones(2)
    torch.testing.assert_close(cm(x), m(x))
    old = _Two.forward
    try:
        _Two.forward = lambda self, x: x * 100
        torch.testing.assert_close(cm(x), m(x))
    finally:
        _Two.forward = old
    torch.testing.assert_close(cm(x), m(x))
    m.forward = lambda x: x + 7  # on the instance
    torch.testing.assert_close(cm(x), m(x))


def test_hooks_on_the_compiled_module_itself_run():
    m = nn.Linear(3, 3)
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(2, 3)
    with torch.no_grad():
        torch.testing.assert_close(cm(x), m(x))
        h = m.register_forward_hook(lambda mod, inp, out: out * 100)
        torch.testing.assert_close(cm(x), m(x))
        h.remove()
        torch.testing.assert_close(cm(x), m(x))


def test_isinstance_parameter():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(2))

        def forward(self, x):
            return x * 2 if isinstance(self.w, nn.Parameter) and not isinstance(x, nn.Parameter) else x
    m = M()
    cm = dyn.compile(m, backend="eager")
    with torch.no_grad():
        torch.testing.assert_close(cm(torch.ones(2)), m(torch.ones(2)))


# -- try blocks: calls and branches that may raise stay inside the frame's handler ---------------------
def _view_or_double(x):
    y = x + 1
    try:
        return y.view(7)
    except RuntimeError:
        return y * 2


class _Boom(Exception):
    pass


def _raise_if_positive(t):
    if t.sum() > 0:
        raise _Boom("positive")
    return t


def _catches(x):
    y = x * 2
    try:
        return _raise_if_positive(y) + 1
    except _Boom:
        return y * 0


def test_graph_break_inside_try_keeps_the_handler():
    cf = dyn.compile(_view_or_double, backend="eager")
    for n in (7, 3, 3):
        x = torch.randn(n)
        check(cf, _view_or_double, x)
    cf = dyn.compile(_catches, backend="eager")
    for x in (torch.ones(2), -torch.ones(2), torch.ones(2)):
        check(cf, _catches, x)


def test_compile_as_a_method_decorator():
    class B:
        k = 3.0

        @dyn.compile(backend="eager")
        def m(self, x):
            return x * self.k
    torch.testing.assert_close(B().m(torch.ones(2)), torch.full((2,), 3.0))


# -- grad mode blocks and detach --------------------------------------------------------------------
def _no_grad_block(x, w):
    y = x * w
    with torch.no_grad():
        z = y * 2
        inner = torch.is_grad_enabled()
        with torch.enable_grad():
            u = y * 3
    return y + z + u, z.requires_grad, u.requires_grad, inner, (y > 0).requires_grad


@pytest.mark.parametrize("backend", ["eager", "dyn"])
def test_grad_mode_blocks_are_captured(backend):
    cf = dyn.compile(_no_grad_block, backend=backend, fullgraph=True)
    x = torch.randn(3)
    w1, w2 = torch.randn(3, requires_grad=True), None
    w2 = w1.detach().clone().requires_grad_(True)
    got, want = cf(x, w1), _no_grad_block(x, w2)
    torch.testing.assert_close(got[0], want[0])
    assert got[1:] == want[1:]
    got[0].sum().backward()
    want[0].sum().backward()
    torch.testing.assert_close(w1.grad, w2.grad)
    with torch.no_grad():
        got, want = cf(x, w1), _no_grad_block(x, w2)
    torch.testing.assert_close(got[0], want[0])
    assert got[1:] == want[1:]


def _sgd_step(w, lr):
    loss = (w * w).sum()
    with torch.no_grad():
        w.sub_(lr * w)
    return loss


def test_in_place_update_of_a_parameter_under_no_grad():
    cf = dyn.compile(_sgd_step, backend="eager", fullgraph=True)
    w1 = torch.randn(4, requires_grad=True)
    w2 = w1.detach().clone().requires_grad_(True)
    torch.testing.assert_close(cf(w1, 0.1), _sgd_step(w2, 0.1))
    torch.testing.assert_close(w1.detach(), w2.detach())
    assert w1.requires_grad and w1.grad_fn is None


def _detach_cases(x):
    a = x.detach() * x
    b = x * x.sum().detach()
    c = (x.detach() + 1) * 2
    return a.sum() + b.sum(), c, c.requires_grad


def test_detach_cuts_autograd():
    cf = dyn.compile(_detach_cases, backend="eager", fullgraph=True)
    x1 = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x2 = x1.detach().clone().requires_grad_(True)
    got, want = cf(x1), _detach_cases(x2)
    torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(got[1], want[1])
    assert got[1].requires_grad == want[1].requires_grad and got[2] == want[2]
    got[0].backward()
    want[0].backward()
    torch.testing.assert_close(x1.grad, x2.grad)


def test_untraced_context_manager_runs_eagerly():
    import contextlib
    ctx = contextlib.suppress(KeyError)  # (nullcontext is traced: it does nothing)

    def f(x):
        with ctx:
            return x * 2
    cf = dyn.compile(f, backend="eager")
    check(cf, f, torch.randn(3))
    with pytest.raises(dyn.Unsupported, match="with statement"):
        dyn.compile(f, backend="eager", fullgraph=True)(torch.randn(3))


def _inner_gen(xs):
    for t in xs:
        yield t * 2
    return len(xs)


def _outer_gen(xs):
    n = yield from _inner_gen(xs)
    yield xs[0] * n


def test_yield_from_and_its_return_value():
    def f(xs):
        return torch.stack(list(_outer_gen(xs))).sum(0)
    cf = dyn.compile(f, backend="eager", fullgraph=True)
    check(cf, f, [torch.randn(3) for _ in range(3)])


class _Obj:
    pass


def test_deletions():
    o = _Obj()

    def f(x):
        d = {"a": x, "b": x * 2}
        del d["a"]
        keep = [x, x + 1]
        del keep[0]
        o.tmp = 1  # a store Python makes (graph break), then a deletion (another)
        del o.tmp
        return d["b"] + keep[0], len(d)
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    for _ in range(2):
        got, want = cf(x), f(x)
        torch.testing.assert_close(got[0], want[0])
        assert got[1] == want[1] and not hasattr(o, "tmp")


def test_eager_backend_runs_linear_as_eager_does():
    # the decomposed matmul(x, w.t()) + b runs as F.linear: the same addmm, so bit-identical results
    m = nn.Sequential(nn.Linear(37, 53), nn.ReLU(), nn.Linear(53, 11, bias=False))
    cm = dyn.compile(m, backend="eager")
    for shape in ((5, 37), (2, 3, 37)):
        x = torch.randn(*shape)
        with torch.no_grad():
            assert torch.equal(cm(x), m(x))
        out = cm(x)
        out.sum().backward()
        g = m[0].weight.grad.clone()
        m.zero_grad()
        m(x).sum().backward()
        torch.testing.assert_close(g, m[0].weight.grad)
        m.zero_grad()


class _Decay(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.blocks = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
        self.register_buffer("scale", torch.tensor(2.0))

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        decay = sum((p * p).sum() for p in self.parameters())
        names = [n for n, _ in self.named_parameters()]
        return self.lin(x) * self.scale + decay, len(names), sum(1 for _ in self.modules())


def test_module_parameters_iteration_is_captured_and_guarded():
    m = _Decay()
    cm = dyn.compile(m, backend="eager", fullgraph=True)
    x = torch.randn(3, 4)
    with torch.no_grad():
        for change in (None, "replace", "add"):
            if change == "replace":
                m.blocks[1].weight = nn.Parameter(torch.ones(4, 4))
            elif change == "add":
                m.extra = nn.Parameter(torch.full((2,), 3.0))
            got, want = cm(x), m(x)
            torch.testing.assert_close(got[0], want[0])
            assert got[1:] == want[1:]


def test_submodule_hooks_and_forward_patched_after_compile():
    class Inner(nn.Module):
        def forward(self, x):
            return x + 1

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.inner(self.lin(x)) * 2
    m = Outer()
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(2, 3)
    with torch.no_grad():
        torch.testing.assert_close(cm(x), m(x))
        h = m.lin.register_forward_hook(lambda mod, inp, out: out * 10)
        torch.testing.assert_close(cm(x), m(x))
        h.remove()
        torch.testing.assert_close(cm(x), m(x))
        h = torch.nn.modules.module.register_module_forward_pre_hook(lambda mod, inp: None)
        try:
            torch.testing.assert_close(cm(x), m(x))
        finally:
            h.remove()
        old = Inner.forward
        try:
            Inner.forward = lambda self, x: x - 5
            torch.testing.assert_close(cm(x), m(x))
        finally:
            Inner.forward = old
        m.inner.forward = lambda x: x * 0
        torch.testing.assert_close(cm(x), m(x))


def test_ordered_dict_containers_are_guarded():
    from collections import OrderedDict
    cfg = OrderedDict(a=1.0, b=torch.tanh)

    def f(x):
        return cfg["b"](x) * cfg["a"] + len(cfg)
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    check(cf, f, x)
    check(cf, f, x)
    assert captures() == 1
    cfg["b"] = torch.sigmoid
    check(cf, f, x)
    cfg["c"] = 0
    check(cf, f, x)


# -- namedtuples and dataclasses in and out ----------------------------------------------------------
import collections  # noqa: E402
import dataclasses  # noqa: E402

_Batch = collections.namedtuple("_Batch", "x y")


@dataclasses.dataclass
class _Output:
    loss: torch.Tensor
    logits: torch.Tensor
    n: int = 0

    def __post_init__(self):
        self.scaled = self.loss * 2


def _step(batch):
    logits = batch.x * 2 + batch[1]
    return _Output(loss=logits.sum(), logits=logits, n=len(batch)), _Batch(logits, batch.y)


@pytest.mark.parametrize("backend", ["eager", "dyn"])
def test_namedtuple_and_dataclass_in_and_out(backend):
    cf = dyn.compile(_step, backend=backend, fullgraph=True)
    for _ in range(3):
        b = _Batch(torch.randn(3), torch.randn(3))  # a new namedtuple each call: no recompile
        got, want = cf(b), _step(b)
        assert type(got[0]) is _Output and type(got[1]) is _Batch
        for g, w in ((got[0].loss, want[0].loss), (got[0].logits, want[0].logits),
                     (got[0].scaled, want[0].scaled), (got[1].x, want[1].x)):
            torch.testing.assert_close(g, w)
        assert got[1].y is b.y and got[0].n == want[0].n == 2
        assert got[0] is not cf(b)[0]  # a new object per call, as in eager
    assert captures() == 1
