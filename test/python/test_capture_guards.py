"""Guards and recompiles: each change of an input, global, closure cell or module state recompiles (or is
re-read) and the result stays eager's."""
import warnings

import pytest
import torch
import torch.nn as nn

import dyn
from capture_helpers.compare import same, captures
from conftest import BACKENDS


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_guard_dtype_change(backend):
    def f(x):
        return x.exp() * 2 - x
    cf = dyn.compile(f, backend=backend)
    for dt in (torch.float32, torch.float64, torch.float32, torch.float64):
        x = torch.randn(4, dtype=dt)
        same(cf(x), f(x))
    assert captures() == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_guard_shape_change(backend):
    def f(x):
        return x.softmax(-1) * x.shape[0]
    cf = dyn.compile(f, backend=backend, dynamic=False)  # sizes as constants: one capture each
    for shape in [(2, 3), (4, 3), (2, 3), (2, 5)]:
        x = torch.randn(shape)
        same(cf(x), f(x))
    assert captures() == 3


def test_guard_ndim_change():
    def f(x):
        return x.sum(-1) + x.dim()
    cf = dyn.compile(f, backend="eager")
    for shape in [(6,), (2, 3), (1, 2, 3)]:
        x = torch.randn(shape)
        same(cf(x), f(x))
    assert captures() == 3


def test_guard_requires_grad_change():
    def f(x, w):
        return (x * w).tanh().sum()
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(4)
    w1 = torch.randn(4, requires_grad=True)
    w2 = w1.detach().clone().requires_grad_(True)
    out = cf(x, w1)
    ref = f(x, w2)
    same(out, ref)
    out.backward()
    ref.backward()
    torch.testing.assert_close(w1.grad, w2.grad)
    same(cf(x, w1.detach()), f(x, w1.detach()))
    assert captures() == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_guard_strides_change(backend):
    def f(x):
        return x.sum(0) * 2 + x[0]
    cf = dyn.compile(f, backend=backend)
    a = torch.randn(3, 5)
    b = torch.randn(5, 3).t()
    c = torch.randn(3, 10)[:, ::2]
    for x in (a, b, c, a):
        same(cf(x), f(x))
    assert captures() == 3


GUARD_T = torch.ones(3)


def _uses_guard_t(x):
    return x * GUARD_T


def test_guard_global_tensor_rebinding():
    global GUARD_T
    cf = dyn.compile(_uses_guard_t, backend="eager")
    x = torch.randn(3)
    same(cf(x), _uses_guard_t(x))
    old = GUARD_T
    try:
        GUARD_T = torch.full((3,), 5.0)
        same(cf(x), _uses_guard_t(x))
        GUARD_T = torch.full((2, 3), -1.0)  # new shape too
        same(cf(x), _uses_guard_t(x))
    finally:
        GUARD_T = old


GUARD_K = 2.0


def _uses_guard_k(x):
    return x + GUARD_K


def test_guard_global_constant_rebinding():
    global GUARD_K
    cf = dyn.compile(_uses_guard_k, backend="eager")
    x = torch.randn(3)
    same(cf(x), _uses_guard_k(x))
    try:
        GUARD_K = 7
        same(cf(x), _uses_guard_k(x))
        GUARD_K = 2.0
        same(cf(x), _uses_guard_k(x))
    finally:
        GUARD_K = 2.0
    assert captures() == 2


def _act(t):
    return t.relu()


def _uses_act(x):
    return _act(x) * 2


def test_guard_global_function_rebinding():
    global _act
    cf = dyn.compile(_uses_act, backend="eager")
    x = torch.randn(5)
    same(cf(x), _uses_act(x))
    old = _act
    try:
        _act = torch.sigmoid
        same(cf(x), _uses_act(x))
    finally:
        _act = old
    same(cf(x), _uses_act(x))


def test_guard_closure_cell_change():
    k = 1.0

    def f(x):
        return x * k

    def set_k(v):
        nonlocal k
        k = v
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    same(cf(x), f(x))
    set_k(-3.0)
    same(cf(x), f(x))
    set_k(1.0)
    same(cf(x), f(x))
    assert captures() == 2


def test_guard_closure_tensor_cell_rebinding():
    w = torch.ones(2, 2)

    def f(x):
        return x @ w
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3, 2)
    same(cf(x), f(x))
    w = torch.randn(2, 4)
    same(cf(x), f(x))


class _TrainFlag(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        h = self.lin(x)
        if self.training:
            return h * 2
        return h - 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_guard_module_training_flip(backend):
    m = _TrainFlag()
    cm = dyn.compile(m, backend=backend)
    x = torch.randn(2, 3)
    with torch.no_grad():
        for mode in (True, False, True, False):
            cm.train(mode)
            assert m.training == mode
            same(cm(x), m(x))
    assert captures() == 2


def grad_mode_branch(x):
    if torch.is_grad_enabled():
        return x * 2
    return x * 3


def test_guard_grad_mode_branch():
    cf = dyn.compile(grad_mode_branch, backend="eager")
    x = torch.randn(3)
    same(cf(x), grad_mode_branch(x))
    with torch.no_grad():
        same(cf(x), grad_mode_branch(x))
    same(cf(x), grad_mode_branch(x))


def test_guard_no_grad_vs_enabled_requires_grad_of_output():
    def f(x, w):
        return torch.tanh(x @ w)
    cf = dyn.compile(f, backend="eager")
    x, w = torch.randn(2, 3), torch.randn(3, 3, requires_grad=True)
    with torch.no_grad():
        same(cf(x, w), f(x, w))
    out = cf(x, w)
    same(out, f(x, w))
    out.sum().backward()
    assert w.grad is not None


@pytest.mark.parametrize("backend", BACKENDS)
def test_guard_python_int_argument(backend):
    def f(x, n):
        return x * n + n // 2
    cf = dyn.compile(f, backend=backend)
    x = torch.randn(3)
    for n in (1, 2, 2, 5, 1):
        same(cf(x, n), f(x, n))
    assert captures() == 3


def test_guard_python_float_argument():
    def f(x, eps):
        return x / (x.abs() + eps)
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    for eps in (1e-3, 0.5, 1e-3):
        same(cf(x, eps), f(x, eps))
    assert captures() == 2


def test_guard_int_vs_float_argument_same_value():
    def f(x, s):
        return x.long() * s if isinstance(s, int) else x * s
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3) * 5
    same(cf(x, 2), f(x, 2))
    same(cf(x, 2.0), f(x, 2.0))  # 2 == 2.0: only the type guard tells them apart


def test_guard_bool_flag_argument():
    def f(x, use_relu):
        return x.relu() if use_relu else x.tanh()
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(5)
    for flag in (True, False, True):
        same(cf(x, flag), f(x, flag))
    assert captures() == 2


def test_guard_string_argument():
    def f(x, act):
        return getattr(torch, act)(x)
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(5)
    for act in ("sigmoid", "tanh", "relu", "tanh"):
        same(cf(x, act), f(x, act))
    assert captures() == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_guard_weight_updated_in_place_seen_without_recompile(backend):
    m = nn.Linear(4, 2)
    cm = dyn.compile(m, backend=backend)
    x = torch.randn(3, 4)
    with torch.no_grad():
        same(cm(x), m(x))
        m.weight.mul_(-2)
        m.bias.add_(1)
        same(cm(x), m(x))
    assert captures() == 1


def test_guard_module_float_attribute():
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.alpha = 0.5

        def forward(self, x):
            return x * self.alpha
    m = Scale()
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(3)
    same(cm(x), m(x))
    m.alpha = 4.0
    same(cm(x), m(x))


def test_guard_submodule_swapped():
    m = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(4, 3)
    with torch.no_grad():
        same(cm(x), m(x))
        m[1] = nn.Tanh()
        same(cm(x), m(x))


def test_guard_recompile_limit_warns_once():
    def f(x):
        return x.cos() + 1
    cf = dyn.compile(f, backend="eager")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(1, 12):
            x = torch.randn(n)
            same(cf(x), f(x))
        for n in range(1, 12):  # the first 8 still hit their entries, the rest run eagerly
            x = torch.randn(n)
            same(cf(x), f(x))
    assert captures() == 8
    assert sum("recompile limit" in str(m.message) for m in w) == 1


def test_guard_optional_none_vs_tensor():
    def f(x, bias=None):
        y = x * 2
        if bias is not None:
            y = y + bias
        return y
    cf = dyn.compile(f, backend="eager")
    x, b = torch.randn(3), torch.randn(3)
    same(cf(x), f(x))
    same(cf(x, b), f(x, b))
    same(cf(x, None), f(x, None))
    assert captures() == 2


def test_guard_tuple_length_change():
    def f(xs):
        return torch.stack(xs).sum(0) * len(xs)
    cf = dyn.compile(f, backend="eager")
    for n in (2, 3, 2):
        xs = tuple(torch.randn(3) for _ in range(n))
        same(cf(xs), f(xs))
    assert captures() == 2


def test_guard_dict_keys_change():
    def f(d):
        out = 0
        for k in d:
            out = out + d[k] * len(k)
        return out
    cf = dyn.compile(f, backend="eager")
    same(cf({"a": torch.ones(2), "bb": torch.ones(2)}), f({"a": torch.ones(2), "bb": torch.ones(2)}))
    same(cf({"a": torch.ones(2), "ccc": torch.ones(2)}), f({"a": torch.ones(2), "ccc": torch.ones(2)}))


ACT_CFG = {"act": "relu", "scale": 1.0}


def _uses_act_cfg(x):
    y = torch.relu(x) if ACT_CFG["act"] == "relu" else torch.tanh(x)
    return y * ACT_CFG["scale"]


def test_guard_global_dict_entry_change():
    cf = dyn.compile(_uses_act_cfg, backend="eager")
    x = torch.randn(5)
    same(cf(x), _uses_act_cfg(x))
    try:
        ACT_CFG["act"] = "tanh"
        same(cf(x), _uses_act_cfg(x))
        ACT_CFG["scale"] = 3.0
        same(cf(x), _uses_act_cfg(x))
    finally:
        ACT_CFG.update(act="relu", scale=1.0)


GLOBAL_WEIGHTS = [1.0, 2.0]


def _uses_global_list(x):
    return x * GLOBAL_WEIGHTS[0] + GLOBAL_WEIGHTS[1]


def test_guard_global_list_mutated_in_place():
    cf = dyn.compile(_uses_global_list, backend="eager")
    x = torch.randn(3)
    same(cf(x), _uses_global_list(x))
    try:
        GLOBAL_WEIGHTS[0] = 5.0
        same(cf(x), _uses_global_list(x))
    finally:
        GLOBAL_WEIGHTS[0] = 1.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_guard_cache_hit_many_calls(backend):
    def f(x, y):
        return torch.where(x > y, x - y, y - x).mean(0)
    cf = dyn.compile(f, backend=backend)
    for _ in range(10):
        x, y = torch.randn(3, 4), torch.randn(3, 4)
        same(cf(x, y), f(x, y))
    s = dyn._stats()
    assert s["captures"] == 1 and s["backend_calls"] == 1


def _apply(m, x):
    return m(x) * 2


def test_guard_module_identity_argument():
    m1, m2 = nn.Linear(3, 2), nn.Linear(3, 2)
    cf = dyn.compile(_apply, backend="eager")
    x = torch.randn(4, 3)
    with torch.no_grad():
        for m in (m1, m2, m1, m2):
            same(cf(m, x), _apply(m, x))
    assert captures() == 2


def test_guard_closure_dict_mutated_in_place():
    cfg = {"scale": 2.0}

    def f(x):
        return x * cfg["scale"]
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    same(cf(x), f(x))
    cfg["scale"] = -1.0
    same(cf(x), f(x))


def test_guard_parameter_requires_grad_flip():
    m = nn.Linear(3, 2)
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(4, 3)
    same(cm(x), m(x))
    for p in m.parameters():
        p.requires_grad_(False)
    out = cm(x)
    assert not out.requires_grad
    same(out, m(x))


def default_dtype_factory(x):
    return x.sum() + torch.zeros(3), torch.ones(2) * 0.1


def test_guard_default_dtype_change():
    cf = dyn.compile(default_dtype_factory, backend="eager")
    x = torch.randn(3, dtype=torch.float64)
    same(cf(x), default_dtype_factory(x))
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        same(cf(x), default_dtype_factory(x))  # eager: torch.zeros(3) is float64 now
    finally:
        torch.set_default_dtype(old)


GLOBAL_STATE = torch.zeros(3)


def _uses_global_state(x):
    return x + GLOBAL_STATE


@pytest.mark.parametrize("backend", BACKENDS)
def test_guard_global_tensor_in_place_update_seen(backend):
    cf = dyn.compile(_uses_global_state, backend=backend)
    x = torch.randn(3)
    same(cf(x), _uses_global_state(x))
    GLOBAL_STATE.add_(5)
    try:
        same(cf(x), _uses_global_state(x))
    finally:
        GLOBAL_STATE.zero_()
    assert captures() == 1


def test_guard_integer_dtype_input():
    def f(x):
        return x * 3 + 1
    cf = dyn.compile(f, backend="eager")
    for x in (torch.arange(4), torch.arange(4.0), torch.arange(4, dtype=torch.int32)):
        same(cf(x), f(x))
    assert captures() == 3
