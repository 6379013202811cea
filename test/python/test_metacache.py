"""The session's MetaCache (dyn/ops/metacache.py): meta results memoized by operand metadata. A hit is a
new meta tensor of the same layout, dtype and requires_grad (never an operand, so no aliasing), an error
is raised again, and what it cannot key (real tensors, unhashable arguments) is computed each time."""
import operator

import pytest
import torch

import dyn
from dyn.ops.metacache import MetaCache


def _m(*shape, dtype=torch.float32, **kw):
    return torch.empty(shape, dtype=dtype, device="meta", **kw)


def test_hit_is_a_new_tensor_of_the_remembered_layout():
    c, calls = MetaCache(), []

    def add(a, b):
        calls.append(1)
        return a + b
    a, b = _m(4, 1, 3), _m(5, 1, dtype=torch.float64)
    r1 = c.call(add, a, b)
    r2 = c.call(add, _m(4, 1, 3), _m(5, 1, dtype=torch.float64))
    assert len(calls) == 1 and r2 is not r1
    assert (r2.shape, r2.stride(), r2.dtype) == (r1.shape, r1.stride(), r1.dtype) == \
        (torch.Size([4, 5, 3]), (15, 3, 1), torch.float64)


def test_the_key_is_every_operand_property_and_argument():
    c = MetaCache()
    base = c.call(torch.matmul, _m(2, 3), _m(3, 4))
    assert c.call(torch.matmul, _m(2, 3), _m(3, 5)).shape == (2, 5)
    assert c.call(torch.matmul, _m(2, 3, dtype=torch.float64), _m(3, 4, dtype=torch.float64)).dtype == torch.float64
    t = _m(3, 2).t()  # same shape, other strides
    assert c.call(torch.matmul, t, _m(3, 4)).shape == base.shape
    assert c.call(torch.matmul, _m(2, 3, requires_grad=True), _m(3, 4)).requires_grad
    assert c.call(torch.sum, _m(2, 3), dim=0).shape == (3,)
    assert c.call(torch.sum, _m(2, 3), dim=1).shape == (2,)
    assert len(c.entries) == 7


def test_errors_are_raised_again():
    c = MetaCache()
    for _ in range(2):
        with pytest.raises(RuntimeError):
            c.call(operator.add, _m(2, 3), _m(4, 3))


def test_views_and_real_tensors_are_not_kept():
    c = MetaCache()
    c.call(lambda x: x[1:], _m(4))  # a view at an offset: not memoized
    c.call(operator.add, torch.ones(2), torch.ones(2))  # real tensors: no key
    assert not c.entries


def test_reset_clears_it():
    dyn.reset()
    f = dyn.compile(lambda x: x * 2 + 1)
    f(torch.ones(3))
    from dyn.session import current
    assert current().metas.entries
    dyn.reset()
    assert not current().metas.entries


def test_global_state_is_part_of_the_key():
    c = MetaCache()
    i = _m(4, dtype=torch.int64)
    assert c.call(operator.truediv, i, 2).dtype == torch.float32
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert c.call(operator.truediv, i, 2).dtype == torch.float64
    finally:
        torch.set_default_dtype(old)
    w = _m(3, requires_grad=True)
    assert c.call(operator.mul, w, 2).requires_grad
    with torch.no_grad():
        assert not c.call(operator.mul, w, 2).requires_grad
