"""In-place updates and views: in-place ops on inputs (and on parameters and buffers) reach the real
tensors, views returned alias their inputs as in eager, and what dyn cannot model exactly breaks the graph
(or runs eagerly) - every result and every mutated tensor is compared with eager's."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn
from conftest import BACKENDS


def graphs(cf):
    cf = getattr(cf, "_dyn_forward", cf)
    return [g for g, k, e in cf.graphs if g is not None]


def breaks(cf):
    return [b["reason"] for b in getattr(cf, "_dyn_forward", cf).breaks]


def clone_all(args):
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


def run_both(fn, make_args, backend, calls=3):
    """Calls the compiled fn and fn on clones of the same arguments: equal results and equal arguments
    afterwards (the in-place updates)."""
    cf = dyn.compile(fn, backend=backend)
    for _ in range(calls):
        args = make_args()
        ref_args = clone_all(args)
        out = cf(*args)
        ref = fn(*ref_args)
        torch.testing.assert_close(out, ref)
        for a, b in zip(args, ref_args):
            if isinstance(a, torch.Tensor):
                torch.testing.assert_close(a, b)
    return cf


# -- in-place updates of inputs ----------------------------------------------------------------------------
def add_inplace_returns_x(x):
    x.add_(1)
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_add_inplace_returns_the_input(backend):
    cf = dyn.compile(add_inplace_returns_x, backend=backend)
    for _ in range(3):
        x = torch.randn(4, 3)
        x0 = x.clone()
        out = cf(x)
        assert out is x
        torch.testing.assert_close(x, x0 + 1)
    assert len(graphs(cf)) == 1 and breaks(cf) == []
    assert dyn._stats()["backend_calls"] == 1


def mul_then_use(x):
    x.mul_(2)
    return x * 3 + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_mul_inplace_then_use(backend):
    cf = run_both(mul_then_use, lambda: (torch.randn(5),), backend)
    assert len(graphs(cf)) == 1 and breaks(cf) == []


def augmented_ops(x, y):
    x += 1
    x -= y
    x *= 2
    x /= 4
    y **= 2
    return x.sum() + y.sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_augmented_assignment_operators(backend):
    cf = run_both(augmented_ops, lambda: (torch.randn(3, 4), torch.randn(4)), backend)
    assert len(graphs(cf)) == 1 and breaks(cf) == []


def int_augmented(i, b):
    i += 3
    i *= 2
    i %= 5
    b |= i > 2
    return i, b


@pytest.mark.parametrize("backend", BACKENDS)
def test_augmented_assignment_integer_and_bool(backend):
    cf = run_both(int_augmented, lambda: (torch.arange(6), torch.zeros(6, dtype=torch.bool)), backend)
    assert len(graphs(cf)) == 1 and breaks(cf) == []


INPLACE_CASES = {
    "clamp_": lambda x, y: x.clamp_(-0.5, 0.5),
    "clamp_min_": lambda x, y: x.clamp_(min=0.0),
    "zero_": lambda x, y: x.zero_(),
    "fill_": lambda x, y: x.fill_(2.5),
    "fill_tensor": lambda x, y: x.fill_(y.sum()),
    "copy_": lambda x, y: x.copy_(y),
    "copy_int": lambda x, y: x.copy_((y * 10).int()),
    "relu_": lambda x, y: x.relu_(),
    "sigmoid_": lambda x, y: x.sigmoid_(),
    "neg_": lambda x, y: x.neg_(),
    "exp_": lambda x, y: x.exp_(),
    "sub_alpha": lambda x, y: x.sub_(y, alpha=2),
    "div_": lambda x, y: x.div_(y.abs() + 1),
    "pow_": lambda x, y: x.pow_(2),
    "addcmul_": lambda x, y: x.addcmul_(y, y, value=0.5),
    "addcdiv_": lambda x, y: x.addcdiv_(y, y.abs() + 1, value=2),
    "masked_fill_": lambda x, y: x.masked_fill_(y > 0, -1.0),
    "torch.relu_": lambda x, y: torch.relu_(x),
    "torch.add_out": lambda x, y: torch.add(y, 1, out=x),
    "chain": lambda x, y: x.mul_(2).add_(y).tanh_(),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(INPLACE_CASES))
def test_inplace_methods(backend, case):
    op = INPLACE_CASES[case]

    def fn(x, y):
        r = op(x, y)
        return r is x, x * 1

    cf = run_both(fn, lambda: (torch.randn(3, 4), torch.randn(3, 4)), backend)
    assert len(graphs(cf)) == 1 and breaks(cf) == []


def inplace_broadcast(x, y):
    x.add_(y)  # y (4,) broadcasts to x (3, 4)
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_inplace_broadcast_keeps_shape(backend):
    run_both(inplace_broadcast, lambda: (torch.randn(3, 4), torch.randn(4)), backend)


def test_inplace_rules_of_eager_raise():
    """An in-place op eager refuses (a shape change by broadcasting, a float result into an int tensor,
    a read of a partially overlapping view) raises the same error compiled."""
    for fn, args in [(inplace_broadcast, (torch.randn(1, 4), torch.randn(3, 4))),
                     (lambda i: i.add_(1.5), (torch.arange(3),)),
                     (lambda i: i.div_(2), (torch.arange(3),)),
                     (lambda x: x.add_(x.t()), (torch.randn(3, 3),))]:
        with pytest.raises(RuntimeError) as eager_err:
            fn(*clone_all(args))
        with pytest.raises(RuntimeError) as dyn_err:
            dyn.compile(fn, backend="eager")(*clone_all(args))
        assert str(dyn_err.value) == str(eager_err.value)


def dtype_kept(x, i):
    x.add_(i)  # float += int: stays float
    i.mul_(3)
    return x, i


@pytest.mark.parametrize("backend", BACKENDS)
def test_inplace_keeps_the_destination_dtype(backend):
    cf = run_both(dtype_kept, lambda: (torch.randn(5), torch.arange(5)), backend)
    x, i = torch.randn(5), torch.arange(5)
    cf(x, i)
    assert x.dtype == torch.float32 and i.dtype == torch.int64


def functional_inplace(x):
    F.relu(x, inplace=True)
    y = x * 2
    F.leaky_relu(y, 0.2, inplace=True)
    F.hardtanh(y, -0.5, 0.5, inplace=True)
    return x, y


@pytest.mark.parametrize("backend", BACKENDS)
def test_functional_inplace(backend):
    cf = run_both(functional_inplace, lambda: (torch.randn(6),), backend)
    assert len(graphs(cf)) == 1 and breaks(cf) == []


def setitem(x, y):
    x[0] = 0.0
    x[:, 1:] = y
    x[1] += 1
    x[-1, 2] = y[0, 0] * 5
    return x.sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_item_assignment(backend):
    cf = run_both(setitem, lambda: (torch.randn(3, 4), torch.randn(3)[:, None].expand(3, 3).clone()), backend)
    assert len(graphs(cf)) == 1 and breaks(cf) == []


def through_views(x):
    v = x[0]
    v.mul_(10)
    x.t()[1].zero_()
    x.view(-1)[2:5] = 7.0
    x.unsqueeze(0)[0, 2, :2] += 1
    return x.sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_inplace_through_views_of_the_input(backend):
    cf = run_both(through_views, lambda: (torch.randn(3, 4),), backend)
    assert len(graphs(cf)) == 1 and breaks(cf) == []


def views_see_updates(x):
    v = x.t()
    r = x[1]
    x.add_(1)
    r.mul_(2)  # r is x[1]: v sees this too
    return v * 1, r + 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_views_see_later_updates(backend):
    cf = run_both(views_see_updates, lambda: (torch.randn(3, 4),), backend)
    assert len(graphs(cf)) == 1 and breaks(cf) == []


def intermediate(x):
    y = x * 2
    z = y.view(-1)
    y += 1
    y.mul_(3)
    z[0] = -1.0
    h = (x + 1).reshape(-1)
    h.relu_()
    return y, z, h


@pytest.mark.parametrize("backend", BACKENDS)
def test_inplace_on_intermediates(backend):
    cf = run_both(intermediate, lambda: (torch.randn(3, 4),), backend)
    assert len(graphs(cf)) == 1 and breaks(cf) == []


def clone_then_mutate(x):
    y = x.clone()
    y.add_(1)
    return y, x


@pytest.mark.parametrize("backend", BACKENDS)
def test_clone_then_mutate_leaves_the_input(backend):
    cf = dyn.compile(clone_then_mutate, backend=backend)
    x = torch.randn(3)
    x0 = x.clone()
    y, xr = cf(x)
    assert xr is x
    torch.testing.assert_close(x, x0)
    torch.testing.assert_close(y, x0 + 1)


def mutate_then_clone(x):
    y = x.clone()
    x.add_(1)
    return y, x


@pytest.mark.parametrize("backend", BACKENDS)
def test_copy_made_before_an_update_keeps_the_old_value(backend):
    cf = run_both(mutate_then_clone, lambda: (torch.randn(4),), backend)
    assert len(graphs(cf)) == 1


def input_is_a_view(x):
    x.mul_(-1)
    return x + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_update_of_an_input_that_is_a_view(backend):
    cf = dyn.compile(input_is_a_view, backend=backend)
    for k in range(3):
        base, ref_base = torch.randn(4, 3), None
        ref_base = base.clone()
        out = cf(base[:, k])
        ref = input_is_a_view(ref_base[:, k])
        torch.testing.assert_close(out, ref)
        torch.testing.assert_close(base, ref_base)  # written through the strided input
    assert len(graphs(cf)) == 1


# -- parameters, buffers, globals ----------------------------------------------------------------------------
class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))
        self.register_buffer("ema", torch.zeros(3))

    def forward(self, x):
        self.steps.add_(1)
        self.ema.mul_(0.9).add_(x.mean(0) * 0.1)
        with_ema = self.lin(x) - self.ema
        self.lin.bias.sub_(0.01)  # a parameter updated outside autograd (run under no_grad)
        return with_ema


@pytest.mark.parametrize("backend", BACKENDS)
def test_buffers_and_parameters_updated_in_forward(backend):
    m1 = Counting()
    m2 = copy.deepcopy(m1)
    cm = dyn.compile(m1, backend=backend)
    with torch.no_grad():
        for _ in range(4):
            x = torch.randn(5, 3)
            torch.testing.assert_close(cm(x), m2(x))
    for (n, a), (_, b) in zip(list(m1.named_buffers()) + list(m1.named_parameters()),
                              list(m2.named_buffers()) + list(m2.named_parameters())):
        torch.testing.assert_close(a, b, msg=n)
    assert m1.steps.item() == 4
    assert len(graphs(cm)) == 1 and dyn._stats()["backend_calls"] == 1


def test_inplace_on_a_leaf_that_requires_grad_is_eager():
    """In eager, an in-place op on a leaf that requires grad raises (with grad mode on): dyn does not
    capture it and the error is eager's. Under no_grad the update is captured."""
    m = Counting()
    cm = dyn.compile(m, backend="eager")
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        cm(torch.randn(2, 3))
    m2 = copy.deepcopy(m)
    with torch.no_grad():
        x = torch.randn(2, 3)
        torch.testing.assert_close(cm(x), m2(x))
    torch.testing.assert_close(m.lin.bias, m2.lin.bias)


ACC = torch.zeros(3)


def accumulate(x):
    ACC.add_(x)
    return ACC * 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_update_of_a_global_tensor(backend):
    cf = dyn.compile(accumulate, backend=backend)
    try:
        for k in range(1, 4):
            torch.testing.assert_close(cf(torch.ones(3)), torch.full((3,), float(k)))
        torch.testing.assert_close(ACC, torch.full((3,), 3.0))
        assert len(graphs(cf)) == 1
    finally:
        ACC.zero_()


# -- graph breaks ---------------------------------------------------------------------------------------------
def mutate_then_branch(x):
    x.add_(1)
    if x.sum() > 0:
        x.mul_(2)
        return x + 1
    return x - 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_update_before_a_data_dependent_branch(backend):
    cf = dyn.compile(mutate_then_branch, backend=backend)
    for i in range(6):
        x = torch.randn(4) + (3 if i % 2 else -3)
        ref_x = x.clone()
        torch.testing.assert_close(cf(x), mutate_then_branch(ref_x))
        torch.testing.assert_close(x, ref_x)
    assert len(graphs(cf)) == 3  # up to the branch, then each side
    assert breaks(cf) == ["data-dependent branch on a tensor"]


def mutate_then_item(x):
    x.mul_(2)
    s = x.sum().item()  # Python reads the real x: the update must be written back first
    return x + s


@pytest.mark.parametrize("backend", BACKENDS)
def test_update_written_back_before_a_call_at_a_break(backend):
    cf = run_both(mutate_then_item, lambda: (torch.randn(4),), backend)
    assert graphs(cf)[0].ops() == ["constant", "mul", "sum"]  # then the rest, per value of s
    assert len(breaks(cf)) == 1


def view_across_break(x):
    v = x[0]
    if x.sum() > 0:
        v.add_(100)  # after the break v still aliases x
    return x * 1, v


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_kept_across_a_break_aliases_the_input(backend):
    cf = dyn.compile(view_across_break, backend=backend)
    for i in range(4):
        x = torch.randn(3, 2) + (3 if i % 2 else -3)
        ref_x = x.clone()
        out, v = cf(x)
        ref_out, ref_v = view_across_break(ref_x)
        torch.testing.assert_close((out, v), (ref_out, ref_v))
        torch.testing.assert_close(x, ref_x)
        assert v.data_ptr() == x.data_ptr()


# -- returned views alias their input -----------------------------------------------------------------------
VIEWS = {
    "view": lambda x: x.view(-1),
    "reshape": lambda x: x.reshape(2, -1),
    "t": lambda x: x.t(),
    "index": lambda x: x[0],
    "slice": lambda x: x[:, 1:],
    "step_slice": lambda x: x[::2, 1],
    "none_ellipsis": lambda x: x[None, ..., 2],
    "unsqueeze": lambda x: x.unsqueeze(1),
    "expand": lambda x: x[:, :1].expand(4, 3),
    "permute": lambda x: x.permute(1, 0),
    "transpose_view": lambda x: x.transpose(0, 1)[1:].unsqueeze(0),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(1, 2),
    "chunk": lambda x: x.chunk(2, 0),
    "split": lambda x: x.split([1, 2], 1),
    "unbind": lambda x: x.unbind(1),
    "detach": lambda x: x.detach(),
    "flatten": lambda x: x.flatten(),
    "T": lambda x: x.T,
    "after_update": lambda x: x.add_(1)[1:],
}


def _tensors(v):
    return list(v) if isinstance(v, tuple) else [v]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(VIEWS))
def test_returned_view_aliases_the_input(backend, case):
    fn = VIEWS[case]
    cf = dyn.compile(fn, backend=backend)
    for _ in range(2):
        x = torch.randn(4, 3)
        ref_x = x.clone()
        out, ref = cf(x), fn(ref_x)
        torch.testing.assert_close(out, ref)
        torch.testing.assert_close(x, ref_x)
        for o, r in zip(_tensors(out), _tensors(ref)):
            assert o.data_ptr() - x.data_ptr() == r.data_ptr() - ref_x.data_ptr()
            assert o.stride() == r.stride() and (o._base is x) == (r._base is ref_x)
            if r.stride().count(0) == 0:
                o.mul_(-3)  # through the view into x, as in eager
                r.mul_(-3)
        torch.testing.assert_close(x, ref_x)
    assert len(graphs(cf)) <= 1 and breaks(cf) == []


def reshape_copies(x):
    return x.t().reshape(-1)  # not viewable: eager copies


@pytest.mark.parametrize("backend", BACKENDS)
def test_reshape_that_copies_returns_a_new_tensor(backend):
    cf = dyn.compile(reshape_copies, backend=backend)
    x = torch.randn(4, 3)
    out = cf(x)
    torch.testing.assert_close(out, reshape_copies(x))
    out.zero_()
    assert x.abs().sum() > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_returned_view_of_an_input_with_a_storage_offset(backend):
    cf = dyn.compile(lambda x: x[1:].t(), backend=backend)
    for k in range(3):
        base = torch.randn(4, 5, 3)
        x = base[k]  # same sizes and strides each call, another storage offset
        out = cf(x)
        torch.testing.assert_close(out, x[1:].t())
        out.fill_(9.0)
        assert (base[k, 1:] == 9.0).all() and (base[k, 0] != 9.0).all()


def computed_views(x):
    y = x * 2
    return y, y[0], y.t(), y.view(-1)[3:]


@pytest.mark.parametrize("backend", BACKENDS)
def test_returned_views_of_a_returned_tensor_alias_it(backend):
    cf = dyn.compile(computed_views, backend=backend)
    x = torch.randn(3, 4)
    outs, refs = cf(x), computed_views(x)
    torch.testing.assert_close(outs, refs)
    for o, r in zip(outs, refs):
        o.add_(1)
        r.add_(1)
    torch.testing.assert_close(outs, refs)  # each update reached the others through the shared memory
    assert len(graphs(cf)) == 1


def detached(x):
    return x.detach()


def test_returned_detach_shares_storage_without_grad():
    cf = dyn.compile(detached, backend="eager")
    x = torch.randn(3, requires_grad=True)
    out = cf(x)
    assert out.requires_grad is False and out.data_ptr() == x.data_ptr()


# -- what dyn does not model exactly runs eagerly (or breaks the graph), with eager's results --------------------
def strided_slice_update(x):
    x[::2].zero_()
    return x + 1


def view_of_computed_then_base_update(x):
    y = x + 1
    z = y.reshape(-1)  # a view or a copy depending on y's layout in eager
    y.add_(1)
    return z


def aliased(x, y):
    x.add_(1)
    return y * 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,make,reason", [
    (strided_slice_update, lambda: (torch.randn(5, 2),), "in-place write through a slice with a step"),
    (view_of_computed_then_base_update, lambda: (torch.randn(3, 2),), "reshape/flatten/contiguous"),
    (lambda x: x.unsqueeze_(0), lambda: (torch.randn(3),), "Tensor.unsqueeze_"),
    (lambda x, i: x.__setitem__(i > 0, 0.0) or x, lambda: (torch.randn(4), torch.randn(4)), "__setitem__"),
])
def test_unmodelled_aliasing_is_not_captured(backend, fn, make, reason):
    run_both(fn, make, backend)
    out = dyn.explain(fn)(*make())
    assert any(reason in r["reason"] for r in out.break_reasons), out.break_reasons


@pytest.mark.parametrize("backend", BACKENDS)
def test_aliased_arguments_with_an_update_run_eagerly(backend):
    cf = dyn.compile(aliased, backend=backend)
    for _ in range(2):
        a, b = torch.zeros(3), torch.zeros(3)
        torch.testing.assert_close(cf(a, a), aliased(b, b))
        torch.testing.assert_close(a, b)
        c = torch.zeros(2, 3)
        d = c.clone()
        torch.testing.assert_close(cf(c[0], c.view(-1)), aliased(d[0], d.view(-1)))  # overlapping memory
        torch.testing.assert_close(c, d)
    assert graphs(cf) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_overlapping_inputs_after_capture_miss_the_guard(backend):
    # captured with distinct inputs; later calls where they overlap must not reuse that graph
    cf = dyn.compile(aliased, backend=backend)
    a, b = torch.zeros(3), torch.zeros(3)
    torch.testing.assert_close(cf(a, b), torch.zeros(3))
    for make in (lambda: (lambda t: (t, t))(torch.zeros(3)),
                 lambda: (lambda t: (t, t[:3]))(torch.zeros(4))):
        got, want = make(), make()
        torch.testing.assert_close(cf(*got), aliased(*want))
        torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(cf(a, b), torch.zeros(3))  # the first entry still serves
    torch.testing.assert_close(a, torch.full((3,), 2.0))


class _CountAndRead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(3))
        self.other = torch.zeros(3)

    def forward(self, x):
        self.count.add_(1)
        return self.other * 2 + x


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_input_moved_onto_an_updated_one_misses_the_guard(backend):
    # the overlap guard checks again only the inputs whose addresses moved since it last passed: here the read
    # attribute moves onto the updated buffer (set_), which stays where it was, after calls that passed
    m, x = _CountAndRead(), torch.zeros(3)
    cm = dyn.compile(m, backend=backend)
    for _ in range(3):
        torch.testing.assert_close(cm(x), torch.zeros(3))
    m.other.set_(m.count.untyped_storage(), 0, (3,), (1,))
    torch.testing.assert_close(cm(x), torch.full((3,), 8.0))  # eager reads the buffer after its update
    torch.testing.assert_close(m.count, torch.full((3,), 4.0))


# -- BatchNorm -------------------------------------------------------------------------------------------------
def check_bn(m1, shape, backend, modes):
    m2 = copy.deepcopy(m1)
    cm = dyn.compile(m1, backend=backend)
    torch.manual_seed(0)
    with torch.no_grad():
        for train in modes:
            m1.train(train)
            m2.train(train)
            x = torch.randn(shape) * 2 + 1
            torch.testing.assert_close(cm(x), m2(x))
            for (n, a), (_, b) in zip(m1.named_buffers(), m2.named_buffers()):
                torch.testing.assert_close(a, b, msg=n)
    return cm


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("make,shape", [(lambda: nn.BatchNorm1d(3), (8, 3)), (lambda: nn.BatchNorm1d(3), (4, 3, 5)),
                                        (lambda: nn.BatchNorm2d(4), (6, 4, 5, 5))])
def test_batchnorm_running_statistics(backend, make, shape):
    m = make()
    cm = check_bn(m, shape, backend, [True, True, True, False, False, True])
    assert m.num_batches_tracked.item() == 4
    assert len(graphs(cm)) == 2 and breaks(cm) == []  # one graph per mode
    assert dyn._stats()["backend_calls"] == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_batchnorm_options(backend):
    check_bn(nn.BatchNorm1d(3, affine=False, momentum=0.3), (8, 3), backend, [True, True, False])
    check_bn(nn.BatchNorm1d(3, track_running_stats=False), (8, 3), backend, [True, False])


@pytest.mark.parametrize("backend", BACKENDS)
def test_batchnorm_cumulative_average(backend):
    """momentum=None: the factor is 1 / float(num_batches_tracked), read by Python at a graph break after
    the counter's update was written back."""
    cm = check_bn(nn.BatchNorm1d(3, momentum=None), (8, 3), backend, [True] * 3 + [False])
    assert "float() of a tensor (data-dependent)" in breaks(cm)


@pytest.mark.parametrize("backend", BACKENDS)
def test_batchnorm_in_a_network(backend):
    net = nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4), nn.ReLU(inplace=True), nn.Linear(4, 2))
    cm = check_bn(net, (8, 5), backend, [True, True, False])
    assert len(graphs(cm)) == 2 and breaks(cm) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_batchnorm_training_with_autograd(backend):
    """Grad mode on: gradients and running statistics equal eager's; the statistics stay out of autograd.
    dyn's training forward writes them into the buffers themselves (no copies)."""
    m1 = nn.Sequential(nn.Linear(5, 3), nn.BatchNorm1d(3), nn.ReLU(inplace=True))
    m2 = copy.deepcopy(m1)
    cm = dyn.compile(m1, backend=backend)
    for _ in range(3):
        x = torch.randn(8, 5)
        y1, y2 = cm(x), m2(x)
        torch.testing.assert_close(y1, y2)
        y1.square().sum().backward()
        y2.square().sum().backward()
    for (n, a), (_, b) in zip(m1.named_parameters(), m2.named_parameters()):
        torch.testing.assert_close(a.grad, b.grad, msg=n)
    for (n, a), (_, b) in zip(m1.named_buffers(), m2.named_buffers()):
        torch.testing.assert_close(a, b, msg=n)
        assert a.grad_fn is None and not a.requires_grad
    assert len(graphs(cm)) == 1
    if backend == "dyn":
        (kernel,) = [k for g, k, e in getattr(cm, "_dyn_forward", cm).graphs if g is not None]
        assert len(kernel.forward.aliases) == 3  # running mean, running variance, batches tracked


def test_functional_batch_norm_fullgraph():
    def fn(x, rm, rv, w, b):
        return F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.2, eps=1e-3)
    cf = dyn.compile(fn, backend="eager", fullgraph=True)
    args = (torch.randn(6, 3, 2), torch.randn(3), torch.rand(3) + 0.5, torch.randn(3), torch.randn(3))
    ref_args = clone_all(args)
    torch.testing.assert_close(cf(*args), fn(*ref_args))
    torch.testing.assert_close(args, ref_args)


# -- CUDA (skipped without a device) ------------------------------------------------------------------------
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def cuda_updates(x, y):
    x.mul_(2)
    x[1:] += y[0]
    return x.t(), x.sum(0)


@cuda
def test_cuda_updates_and_views():
    cf = dyn.compile(cuda_updates, fullgraph=True)
    for _ in range(3):
        x, y = torch.randn(64, 48, device="cuda"), torch.randn(3, 48, device="cuda")
        ref_x, ref_y = x.clone(), y.clone()
        out, ref = cf(x, y), cuda_updates(ref_x, ref_y)
        torch.testing.assert_close(out, ref)
        torch.testing.assert_close(x, ref_x)
        assert out[0].data_ptr() == x.data_ptr() and out[0].stride() == ref[0].stride()
    assert [k is not None for g, k, e in cf.graphs] == [True]


@cuda
def test_cuda_batchnorm2d_train_and_eval():
    m1 = nn.BatchNorm2d(16).cuda()
    m2 = copy.deepcopy(m1)
    cm = dyn.compile(m1)
    with torch.no_grad():
        for train in [True, True, False, True]:
            m1.train(train)
            m2.train(train)
            x = torch.randn(8, 16, 12, 12, device="cuda") * 3 + 1
            torch.testing.assert_close(cm(x), m2(x))
            for (n, a), (_, b) in zip(m1.named_buffers(), m2.named_buffers()):
                torch.testing.assert_close(a, b, msg=n)
    assert len(graphs(cm)) == 2 and all(k is not None for g, k, e in cm._dyn_forward.graphs)
