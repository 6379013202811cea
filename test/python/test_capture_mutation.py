"""Mutation and aliasing: in-place updates reach the real tensors (inputs, views, globals, buffers), and
aliasing of the results is as in eager."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn
from capture_helpers.compare import same, clone
from conftest import BACKENDS


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def BF(f):
    """Parametrizes a mutation test over the backends and over fullgraph (captured whole) / not."""
    return pytest.mark.parametrize("backend", BACKENDS)(pytest.mark.parametrize("fullgraph", [False, True])(f))


def run_mut(fn, make_args, backend="eager", fullgraph=False, calls=2):
    cf = dyn.compile(fn, backend=backend, fullgraph=fullgraph)
    for _ in range(calls):
        args = make_args()
        a1, a2 = clone(args), clone(args)
        same(cf(*a1), fn(*a2))
        same(a1, a2)  # inputs mutated exactly as eager mutated them
    return cf


def add_inplace_input(x):
    x.add_(1)
    return x * 2


@BF
def test_mut_add_inplace_on_input(backend, fullgraph):
    run_mut(add_inplace_input, lambda: (torch.randn(4),), backend, fullgraph)


def inplace_returns_input(x):
    return x.mul_(2)


@BF
def test_mut_inplace_result_is_the_input(backend, fullgraph):
    cf = dyn.compile(inplace_returns_input, backend=backend, fullgraph=fullgraph)
    x = torch.ones(3)
    out = cf(x)
    assert out is x
    torch.testing.assert_close(x, torch.full((3,), 2.0))


def inplace_on_intermediate(x):
    y = x * 2
    y += 1
    y.mul_(3)
    return y


@BF
def test_mut_inplace_on_intermediate(backend, fullgraph):
    run_mut(inplace_on_intermediate, lambda: (torch.randn(4),), backend, fullgraph)


def setitem_input(x):
    x[0] = 0.0
    return x.sum()


@BF
def test_mut_setitem_on_input(backend, fullgraph):
    run_mut(setitem_input, lambda: (torch.randn(3, 2),), backend, fullgraph)


def copy_into_input(x, y):
    x.copy_(y * 2)
    return x + 1


@BF
def test_mut_copy_into_input(backend, fullgraph):
    run_mut(copy_into_input, lambda: (torch.randn(3), torch.randn(3)), backend, fullgraph)


def relu_inplace_input(x):
    F.relu(x, inplace=True)
    return x + 0


@BF
def test_mut_functional_relu_inplace_on_input(backend, fullgraph):
    run_mut(relu_inplace_input, lambda: (torch.randn(6),), backend, fullgraph)


def mutate_through_view(x):
    v = x[0]
    v.mul_(10)
    return x.sum()


@BF
def test_mut_through_a_view_of_the_input(backend, fullgraph):
    run_mut(mutate_through_view, lambda: (torch.randn(3, 2),), backend, fullgraph)


def returns_view(x):
    return x.view(-1)


@BF
def test_mut_returned_view_aliases_input(backend, fullgraph):
    cf = dyn.compile(returns_view, backend=backend, fullgraph=fullgraph)
    x = torch.randn(2, 3)
    out = cf(x)
    torch.testing.assert_close(out, x.view(-1))
    out[0] = 100.0  # eager: writes through to x
    assert x[0, 0].item() == 100.0


def returns_transpose(x):
    return x.t()


@BF
def test_mut_returned_transpose_shares_storage(backend, fullgraph):
    cf = dyn.compile(returns_transpose, backend=backend, fullgraph=fullgraph)
    x = torch.randn(2, 3)
    out = cf(x)
    torch.testing.assert_close(out, x.t())
    assert out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def aliased_args(x, y):
    x.add_(1)
    return y * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_mut_aliased_arguments(backend):
    # the same tensor passed twice: capturing it or breaking are both fine, the result must be eager's
    cf = dyn.compile(aliased_args, backend=backend)
    for _ in range(2):
        a, b = torch.zeros(3), torch.zeros(3)
        same(cf(a, a), aliased_args(b, b))
        same(a, b)


def test_mut_alias_guard_distinct_after_aliased():
    cf = dyn.compile(aliased_args, backend="eager")
    a, b = torch.zeros(3), torch.zeros(3)
    same(cf(a, a), aliased_args(b, b))
    c, d = torch.zeros(3), torch.zeros(3)
    e, f = torch.zeros(3), torch.zeros(3)
    same(cf(c, d), aliased_args(e, f))  # eager: d * 2 == 0
    same((c, d), (e, f))


def add_inplace_fullgraph(x, w):
    x.add_(1)
    x.mul_(w)
    return x.sum(0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mut_inplace_on_input_captured_fullgraph(backend):
    cf = dyn.compile(add_inplace_fullgraph, backend=backend, fullgraph=True)
    for _ in range(2):
        x, w = torch.randn(3, 2), torch.randn(2)
        x1, x2 = x.clone(), x.clone()
        same(cf(x1, w), add_inplace_fullgraph(x2, w))
        same(x1, x2)


def list_argument_append(x, acc):
    y = x * 2
    acc.append(y)
    return y + len(acc)


def test_mut_list_argument_append():
    cf = dyn.compile(list_argument_append, backend="eager")
    acc1, acc2 = [], []
    x = torch.randn(3)
    for _ in range(3):
        same(cf(x, acc1), list_argument_append(x, acc2))
    same(acc1, acc2)


def dict_argument_store(x, d):
    d["out"] = x + 1
    d["count"] = d.get("count", 0) + 1
    return d["out"] * 2


def test_mut_dict_argument_store():
    cf = dyn.compile(dict_argument_store, backend="eager")
    d1, d2 = {}, {}
    x = torch.randn(3)
    for _ in range(3):
        same(cf(x, d1), dict_argument_store(x, d2))
    same(d1, d2)


class _CountingBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.zeros(()))
        self.register_buffer("ema", torch.zeros(3))

    def forward(self, x):
        self.steps.add_(1)
        self.ema.mul_(0.9).add_(x.mean(0) * 0.1)
        return x - self.ema


@BF
def test_mut_buffer_updated_in_forward(backend, fullgraph):
    m1, m2 = _CountingBuffer(), _CountingBuffer()
    cm = dyn.compile(m1, backend=backend, fullgraph=fullgraph)
    for _ in range(3):
        x = torch.randn(4, 3)
        same(cm(x), m2(x))
    same(m1.steps, m2.steps)
    same(m1.ema, m2.ema)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mut_batchnorm_train_captured_fullgraph(backend):
    m1, m2 = nn.BatchNorm1d(3), nn.BatchNorm1d(3)
    cm = dyn.compile(m1, backend=backend, fullgraph=True)
    with torch.no_grad():
        x = torch.randn(8, 3)
        same(cm(x), m2(x))
    same(m1.running_mean, m2.running_mean)
    same(m1.running_var, m2.running_var)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mut_batchnorm_running_stats_in_train(backend):
    m1 = nn.BatchNorm1d(3)
    m2 = nn.BatchNorm1d(3)
    cm = dyn.compile(m1, backend=backend)
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(8, 3) * 2 + 1
            same(cm(x), m2(x))
    same(m1.running_mean, m2.running_mean)
    same(m1.running_var, m2.running_var)
    same(m1.num_batches_tracked, m2.num_batches_tracked)


GLOBAL_ACC = torch.zeros(3)


def accumulate_into_global(x):
    GLOBAL_ACC.add_(x)
    return GLOBAL_ACC * 1


@BF
def test_mut_inplace_on_global_tensor(backend, fullgraph):
    cf = dyn.compile(accumulate_into_global, backend=backend, fullgraph=fullgraph)
    try:
        x = torch.ones(3)
        same(cf(x), torch.ones(3))
        same(cf(x), torch.full((3,), 2.0))
        same(GLOBAL_ACC, torch.full((3,), 2.0))
    finally:
        GLOBAL_ACC.zero_()


def mask_assign_input(x):
    x[x < 0] = 0.0
    return x * 2


@BF
def test_mut_masked_assignment_on_input(backend, fullgraph):
    run_mut(mask_assign_input, lambda: (torch.randn(6),), backend, fullgraph)


def mask_assign_values(x, s):
    x[x > 0.5] = s  # a 0-d tensor
    x[x < -0.5] = 1  # an int into a float tensor
    x[x[:, 0] > 0] = torch.ones(4) * s - 1  # a row mask and one row of values for every selected row
    return x


@BF
def test_mut_masked_assignment_values(backend, fullgraph):
    run_mut(mask_assign_values, lambda: (torch.randn(3, 4), torch.tensor(3.5)), backend, fullgraph)


def mask_assign_through_view(x):
    row = x[1]
    row[row < 0] = 0.0  # writes row 1 of x
    x[x > 1] = -1.0
    return x.sum(0)


@BF
def test_mut_masked_assignment_through_view(backend, fullgraph):
    run_mut(mask_assign_through_view, lambda: (torch.randn(3, 4),), backend, fullgraph)


def mask_assign_integer_tensor(x):
    x[x < 2] = 2.7  # converted to x's int64 (2), as eager
    return x * 3


@BF
def test_mut_masked_assignment_integer_tensor(backend, fullgraph):
    run_mut(mask_assign_integer_tensor, lambda: (torch.randint(-4, 5, (3, 4)),), backend, fullgraph)


def index_tensor_assign(x, i):
    x[i] = 0.0  # an integer-tensor index: index_put, a graph.scatter
    return x * 2


def mask_assign_per_element_values(x, v):
    x[x > 0] = v  # one value per selected element: how many is known only at run time
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_mut_index_assignment(backend):
    x, i = torch.randn(5), torch.tensor([0, -2])
    want = x.clone()
    index_tensor_assign(want, i)
    dyn.compile(index_tensor_assign, backend=backend, fullgraph=True)(x, i)  # captured whole
    torch.testing.assert_close(x, want)
    run_mut(index_tensor_assign, lambda: (torch.randn(5), torch.tensor([0, 2])), backend)
    x = torch.tensor([1.0, -1.0, 2.0, -3.0])
    with pytest.raises(dyn.Unsupported, match="per selected element"):
        dyn.compile(mask_assign_per_element_values, backend=backend, fullgraph=True)(x.clone(), torch.ones(2))
    run_mut(mask_assign_per_element_values, lambda: (x.clone(), torch.tensor([5.0, 6.0])), backend)


def returns_slice(x):
    return x[1:]


@BF
def test_mut_returned_slice_view_aliases_input(backend, fullgraph):
    cf = dyn.compile(returns_slice, backend=backend, fullgraph=fullgraph)
    x = torch.randn(4, 2)
    out = cf(x)
    torch.testing.assert_close(out, x[1:])
    out.zero_()  # eager: rows 1.. of x are zeroed
    assert x[1:].abs().sum().item() == 0.0


def returns_detach(x):
    return x.detach()


def test_mut_returned_detach_shares_storage():
    cf = dyn.compile(returns_detach, backend="eager")
    x = torch.randn(3, requires_grad=True)
    out = cf(x)
    ref = returns_detach(x)
    assert out.requires_grad == ref.requires_grad == False  # noqa: E712
    assert out.data_ptr() == x.data_ptr()


def clone_then_mutate(x):
    y = x.clone()
    y.add_(1)
    return y, x


@BF
def test_mut_clone_then_mutate_leaves_input(backend, fullgraph):
    cf = dyn.compile(clone_then_mutate, backend=backend, fullgraph=fullgraph)
    x = torch.randn(3)
    x0 = x.clone()
    y, xr = cf(x)
    assert xr is x
    torch.testing.assert_close(x, x0)
    torch.testing.assert_close(y, x0 + 1)
