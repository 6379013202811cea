"""Views and layouts beyond what the OpInfo samples reach: as_strided over an input's memory (guarded on the
input's storage offset when an offset is given), writes through the base an as_strided view sees,
channels_last tensors returned with eager's strides and updated in place, and wrappers with **kwargs
called without keywords (how the OpInfos' lambdas call ops)."""
import pytest
import torch

import dyn
from conftest import has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")


def _same_view(got, want, got_in, want_in):
    assert torch.equal(got, want)
    assert got.stride() == want.stride() and got.storage_offset() == want.storage_offset()
    assert (got.untyped_storage().data_ptr() == got_in.untyped_storage().data_ptr()) == \
        (want.untyped_storage().data_ptr() == want_in.untyped_storage().data_ptr())


def test_as_strided_explicit_offset_is_guarded():
    f = lambda t: torch.as_strided(t, (2, 2), (1, 2), storage_offset=7)  # noqa: E731
    base = torch.randn(20)
    c = dyn.compile(f, fullgraph=True)
    for start in (5, 6, 7):  # same sizes and strides, another storage offset: another graph
        x = base[start:start + 10]
        _same_view(c(x), f(x), x, x)


def test_as_strided_before_the_input_is_a_break():
    x = torch.randn(20)[5:15]
    with pytest.raises(dyn.Unsupported, match="before the input's first element"):
        dyn.compile(lambda t: torch.as_strided(t, (2,), (1,), storage_offset=0), fullgraph=True)(x)


def test_unfold_sees_later_writes_to_its_base():
    def f(t):
        u = t.unfold(0, 3, 2)
        t.add_(1)
        return u * 2, u
    x, y = torch.randn(9), torch.randn(9)
    y.copy_(x)
    got, want = dyn.compile(f, fullgraph=True)(x), f(y)
    assert torch.equal(got[0], want[0]) and torch.equal(x, y)
    _same_view(got[1], want[1], x, y)


def test_write_through_as_strided_is_a_break():
    def f(t):
        t.as_strided((2, 2), (1, 2)).add_(1)
        return t
    with pytest.raises(dyn.Unsupported, match="as_strided"):
        dyn.compile(f, fullgraph=True)(torch.randn(6))


def test_permuted_input_as_strided():
    x = torch.randn(4, 3).t()  # memory order differs from the dims' order
    f = lambda t: t.as_strided((3, 2), (1, 3), 1)  # noqa: E731
    _same_view(dyn.compile(f, fullgraph=True)(x), f(x), x, x)


def test_channels_last_result_updated_and_viewed():
    def f(t):
        y = t.to(memory_format=torch.channels_last)
        y.mul_(2)
        return y, y[:, 1]
    x = torch.randn(2, 3, 4, 5)
    got, want = dyn.compile(f, fullgraph=True)(x), f(x)
    for g, w in zip(got, want):
        assert torch.equal(g, w) and g.stride() == w.stride()
    assert got[1].untyped_storage().data_ptr() == got[0].untyped_storage().data_ptr()


def test_kwargs_of_an_inlined_function_called_without_keywords():
    def wrapper(c, a, b, **kwargs):
        return torch.where(c, a, b, **kwargs)

    def f(c, a, b):
        return wrapper(c, a, b)
    a, b = torch.randn(5), torch.randn(5)
    assert torch.equal(dyn.compile(f, fullgraph=True)(a > 0, a, b), f(a > 0, a, b))


def test_unfold_of_a_computed_tensor_and_writes_through_it():
    """Tensor.unfold's windows do not depend on the tensor's layout: HaloNet's padded keys unfolded twice
    are one graph; an in-place op through an unfold view of an input (windows that do not overlap) writes
    the input as eager does."""
    def halo(x):
        kv = torch.nn.functional.pad(x * 2, [1, 1, 1, 1])
        return kv.unfold(2, 4, 2).unfold(3, 4, 2).reshape(2, 3, 4, -1).permute(0, 2, 3, 1) + 1
    x = torch.randn(2, 3, 6, 6)
    ex = dyn.explain(halo)(x)
    assert ex.graph_count == 1 and ex.graph_break_count == 0
    assert torch.equal(dyn.compile(halo, fullgraph=True)(x), halo(x))

    def write(x):
        x.unfold(1, 2, 2).mul_(3)
        return x * 1
    a, b = torch.randn(3, 6), None
    b = a.clone()
    assert torch.equal(dyn.compile(write, fullgraph=True)(a), write(b))
    assert torch.equal(a, b)


def test_contiguous_of_a_view_of_a_constant_tensor_written_in_place():
    """BEiT's relative position index: a permuted broadcast difference of aranges made contiguous, then
    written in place. Computed from constants, its layout is eager's (computed now), so contiguous() is
    known to copy: one graph, eager's values."""
    def f(x, window=(3, 4)):
        coords = torch.flatten(torch.stack(torch.meshgrid(torch.arange(window[0]), torch.arange(window[1]),
                                                          indexing="ij")), start_dim=1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += window[0] - 1
        rel[:, :, 1] += window[1] - 1
        rel[:, :, 0] *= 2 * window[1] - 1
        index = torch.zeros(size=(13, 13), dtype=rel.dtype)
        index[1:, 1:] = rel.sum(-1)
        index[0, 0:] = 40
        return x[index.view(-1)] * 2
    x = torch.randn(64)
    ex = dyn.explain(f)(x)
    assert ex.graph_count == 1 and ex.graph_break_count == 0
    assert torch.equal(dyn.compile(f, fullgraph=True)(x), f(x))
