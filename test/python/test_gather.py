"""Integer-tensor indexing: F.embedding / nn.Embedding, index_select, gather and x[idx] are captured as
graph.gather (docs/graph.md) and match eager on both backends."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn
from conftest import BACKENDS

INDEX_DTYPES = [torch.int32, torch.int64]


def compiled(fn, backend):
    return dyn.compile(fn, backend=backend, fullgraph=True)


class TinyLM(nn.Module):
    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.proj = nn.Linear(d, vocab)

    def forward(self, tokens):
        h = self.embed(tokens)
        return self.proj(torch.tanh(h) * 2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("shape", [(7,), (3, 5)])
def test_embedding_module_fullgraph(backend, idx_dtype, shape):
    torch.manual_seed(0)
    m = TinyLM().eval()
    cm = dyn.compile(m, backend=backend, fullgraph=True)
    tokens = torch.randint(0, 50, shape, dtype=idx_dtype)
    with torch.no_grad():
        torch.testing.assert_close(cm(tokens), m(tokens))
    assert dyn._stats()["captures"] == 1
    g = cm._dyn_forward.graphs[0][0]
    assert "gather" in g.ops()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
def test_functional_embedding(backend, idx_dtype):
    w = torch.randn(20, 8)
    idx = torch.tensor([[0, 19, 3], [3, 3, 7]], dtype=idx_dtype)
    fn = compiled(lambda i, w: F.embedding(i, w) + 1, backend)
    torch.testing.assert_close(fn(idx, w), F.embedding(idx, w) + 1)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select(backend, idx_dtype, dim):
    x = torch.randn(6, 5, 4)
    idx = torch.tensor([3, 0, 2, 2], dtype=idx_dtype)
    fn = compiled(lambda x, i: torch.index_select(x, dim, i) * 2, backend)
    torch.testing.assert_close(fn(x, idx), torch.index_select(x, dim, idx) * 2)
    fn = compiled(lambda x, i: x.index_select(dim, i), backend)
    torch.testing.assert_close(fn(x, idx), x.index_select(dim, idx))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dim", [0, 1])
def test_gather(backend, idx_dtype, dim):
    torch.manual_seed(1)
    x = torch.randn(5, 6)
    idx = torch.randint(0, x.shape[dim], (4, 3), dtype=idx_dtype)  # smaller than x in the other dim
    fn = compiled(lambda x, i: torch.gather(x, dim, i), backend)
    torch.testing.assert_close(fn(x, idx), torch.gather(x, dim, idx))
    fn = compiled(lambda x, i: x.gather(dim, i) - 1, backend)
    torch.testing.assert_close(fn(x, idx), x.gather(dim, idx) - 1)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
def test_getitem_integer_tensor(backend, idx_dtype):
    x = torch.randn(6, 5, 3)
    i1 = torch.tensor([5, 0, -1, 2], dtype=idx_dtype)  # a negative index counts from the end, as in eager
    i2 = torch.tensor([[1, 4], [0, -5]], dtype=idx_dtype)
    i3 = torch.tensor([[0, 2], [1, -3]], dtype=idx_dtype)  # reshaped and transposed: the same values
    fn = compiled(lambda x, a, b, c: (x[a], x[b], x[:, b], x[:, :, c.t().reshape(4)]), backend)
    want = (x[i1], x[i2], x[:, i2], x[:, :, i3.t().reshape(4)])
    for g, w in zip(fn(x, i1, i2, i3), want):
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_computed_in_the_graph_is_checked(backend):
    """An index computed in the graph from the inputs is computed again before the kernel and checked:
    captured whole, and an index out of range raises IndexError as eager does."""
    x = torch.randn(6, 5, 3)
    f = lambda x, a: x[:, :, a[:2] % 3] * 2  # noqa: E731
    g = lambda x, a: x[:, :, a[1:] + 1] * 2  # noqa: E731
    a = torch.tensor([5, 0, -1, 1])
    torch.testing.assert_close(compiled(f, backend)(x, a), f(x, a))
    cg = compiled(g, backend)
    torch.testing.assert_close(cg(x, a), g(x, a))  # 1, 0, 2: in range
    bad = torch.tensor([5, 0, 2, 1])  # 1, 3, 2: 3 is out of range
    with pytest.raises(IndexError):
        g(x, bad)
    with pytest.raises(IndexError):
        cg(x, bad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_indices_in_range_by_construction(backend):
    """Indices made by a sort, an argmax or a topk (a mixture of experts' routing, CLIP's pooled token),
    floor-divided, taken modulo a number, gathered, repeated or inverted by a scatter, are in range
    whatever the data: captured whole, although the indices depend on more ops than the range check
    would compute again before the kernel (a model's whole router)."""
    x, h = torch.randn(6, 5), torch.randn(3, 5)

    def f(x, h):
        for _ in range(40):  # 80 ops before the indices
            x = x * 1.01 + 0.01
        ids = x.argmax(-1)                       # [6] in [0, 5)
        vals, perm = torch.sort(ids)             # a permutation of [0, 6)
        rows = h[perm // 2]                      # [0, 3)
        inv = torch.empty_like(perm)
        inv[perm] = torch.arange(6)
        top = torch.topk(x, 2, dim=1).indices.repeat(1, 2)  # [6, 4] in [0, 5)
        return rows[inv] * 2 + x.gather(1, (top + 3) % 5).sum(1, keepdim=True) + x[torch.arange(6), ids, None]
    cf = compiled(f, backend)
    torch.testing.assert_close(cf(x, h), f(x, h))
    ex = dyn.explain(f, backend=backend)(x, h)
    assert ex.graph_count == 1 and ex.graph_break_count == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_from_an_argmax_out_of_range_raises(backend):
    """An argmax moved past the end of what it indexes is not in range by construction: it is computed
    again before the kernel (argmax is deterministic) and raises IndexError as eager does."""
    f = lambda x, t: t[x.argmax(-1) + 2] * 2  # noqa: E731
    t = torch.randn(5)
    x = torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])  # argmax 1, 0: indices 3, 2
    cf = compiled(f, backend)
    torch.testing.assert_close(cf(x, t), f(x, t))
    bad = torch.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])  # argmax 2, 0: indices 4, 2
    torch.testing.assert_close(cf(bad, t), f(bad, t))
    t4 = torch.randn(4)  # index 4 is out of range for 4 rows
    with pytest.raises(IndexError):
        f(bad, t4)
    with pytest.raises(IndexError):
        compiled(f, backend)(bad, t4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_position_ids_counted_along_a_mask(backend):
    """RoBERTa's position ids (a cumsum along the non-padding tokens) index an embedding: captured whole
    and checked before the kernel; ids that run past the table raise IndexError as eager does."""
    emb = torch.nn.Embedding(8, 4, padding_idx=1)
    def f(ids):
        mask = ids.ne(1).int()
        pos = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + 1
        return emb(pos) * 2
    ids = torch.tensor([[5, 6, 7, 1, 1], [2, 3, 4, 5, 6]])
    cf = compiled(f, backend)
    torch.testing.assert_close(cf(ids), f(ids))
    long = torch.tensor([[5, 6, 7, 2, 3, 4, 5]] * 2)  # positions 2..8: 8 is outside the table
    with pytest.raises(IndexError):
        f(long)
    with pytest.raises(IndexError):
        compiled(f, backend)(long)


def test_index_computed_from_constants_is_checked_once():
    # T5's relative position buckets: an index from arange alone is computed and checked while capturing
    x = torch.randn(4, 8)
    f = lambda x: x[:, (torch.arange(8) * 3) % 8] + 1  # noqa: E731
    torch.testing.assert_close(compiled(f, "eager")(x), f(x))
    h = lambda x: x[:, torch.arange(8) + 1] + 1  # noqa: E731 (8 is out of range: eager raises)
    with pytest.raises(IndexError):
        h(x)
    with pytest.raises(dyn.Unsupported, match="out of range"):
        compiled(h, "eager")(x)
    with pytest.raises(IndexError):
        dyn.compile(h, backend="eager")(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_and_bool_tables(backend):
    table = torch.arange(40, dtype=torch.int64).reshape(10, 4)
    mask = table % 3 == 0
    idx = torch.tensor([9, 1, 1])
    fn = compiled(lambda t, m, i: (F.embedding(i, t), m[i]), backend)
    for g, w in zip(fn(table, mask, idx), (F.embedding(idx, table), mask[idx])):
        assert g.dtype == w.dtype and torch.equal(g, w)


def test_embedding_gradient_eager_backend():
    torch.manual_seed(0)
    m = TinyLM()
    ref = TinyLM()
    ref.load_state_dict(m.state_dict())
    cm = dyn.compile(m, backend="eager", fullgraph=True)
    tokens = torch.tensor([[1, 4, 4], [0, 49, 1]])
    cm(tokens).square().mean().backward()
    ref(tokens).square().mean().backward()
    torch.testing.assert_close(m.embed.weight.grad, ref.embed.weight.grad)
    torch.testing.assert_close(m.proj.weight.grad, ref.proj.weight.grad)
    assert m.embed.weight.grad.abs().sum() > 0


def test_gather_and_index_select_gradients_eager_backend():
    x = torch.randn(5, 4, requires_grad=True)
    xr = x.detach().clone().requires_grad_(True)
    idx = torch.tensor([[0, 4], [4, 4]])
    sel = torch.tensor([3, 3, 1])

    def f(x):
        return (torch.gather(x[:, :2], 0, idx) * 3).sum() + x.index_select(0, sel).pow(2).sum()

    compiled(f, "eager")(x).backward()
    f(xr).backward()
    torch.testing.assert_close(x.grad, xr.grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_checks_are_repeated_only_for_changed_indices(backend):
    """An index the range check passed is not checked again while it is the same tensor, unmodified (a
    position-ids buffer, or one input passed call after call): an in-place write, new data under it or
    another tensor are checked again and raise as eager does. A computed index (a slice of a module's
    buffer) likewise."""
    w = torch.randn(4, 3)
    emb = compiled(lambda i, w: F.embedding(i, w) * 2, backend)
    i = torch.tensor([0, 3])
    for _ in range(3):
        torch.testing.assert_close(emb(i, w), F.embedding(i, w) * 2)
    i[1] = 7  # same object, bumped version counter
    with pytest.raises(IndexError):
        emb(i, w)
    i[1] = 1
    torch.testing.assert_close(emb(i, w), F.embedding(i, w) * 2)
    i.data = torch.tensor([2, 9])  # new data under the same object
    with pytest.raises(IndexError):
        emb(i, w)
    with pytest.raises(IndexError):
        emb(torch.tensor([5, 0]), w)

    class Positions(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(6, 3)
            self.register_buffer("pos", torch.arange(8).unsqueeze(0), persistent=False)

        def forward(self, x):
            return x + self.emb(self.pos[:, : x.shape[1]])

    m = Positions()
    x = torch.randn(2, 4, 3)
    cm = compiled(m, backend)
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(cm(x), m(x))
        m.pos[0, 2] = 6  # the computed index (a slice of the buffer) is now out of range
        with pytest.raises(IndexError):
            m(x)
        with pytest.raises(IndexError):
            cm(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_of_range_index_raises_as_in_eager(backend):
    """Index inputs are range-checked before the graph runs (compiled gathers would clamp): an index
    eager rejects raises, also a negative one where eager does not wrap (embedding, gather,
    index_select); x[t] wraps negatives as eager does."""
    w = torch.randn(4, 3)
    emb = compiled(lambda i, w: F.embedding(i, w) * 2, backend)
    torch.testing.assert_close(emb(torch.tensor([0, 3]), w), F.embedding(torch.tensor([0, 3]), w) * 2)
    for bad in ([0, 7], [-1, 2]):
        with pytest.raises(IndexError):
            F.embedding(torch.tensor(bad), w)
        with pytest.raises(IndexError):
            emb(torch.tensor(bad), w)
    sel = compiled(lambda w, i: (torch.index_select(w, 1, i), torch.gather(w, 0, i.expand(4, 2))), backend)
    with pytest.raises(IndexError):
        sel(w, torch.tensor([0, 3]))
    item = compiled(lambda w, i: w[i], backend)
    torch.testing.assert_close(item(w, torch.tensor([-4, 3])), w[torch.tensor([-4, 3])])
    with pytest.raises(IndexError):
        item(w, torch.tensor([-5, 0]))
    const = compiled(lambda w: w[torch.tensor([1, 9])], backend)
    with pytest.raises(dyn.Unsupported):
        const(w)


def test_embedding_unsupported_arguments_fall_back():
    w = torch.randn(10, 4)
    idx = torch.tensor([1, 2])
    fn = dyn.compile(lambda i, w: F.embedding(i, w, max_norm=1.0), backend="eager", fullgraph=True)
    with pytest.raises(dyn.Unsupported):
        fn(idx, w.clone())
    # padding_idx changes only the gradient: captured when none is needed
    fn = dyn.compile(lambda i, w: F.embedding(i, w, padding_idx=0), backend="eager", fullgraph=True)
    torch.testing.assert_close(fn(idx, w), F.embedding(idx, w, padding_idx=0))
    wg = w.clone().requires_grad_(True)
    fn = dyn.compile(lambda i, w: F.embedding(i, w, scale_grad_by_freq=True), backend="eager", fullgraph=True)
    with pytest.raises(dyn.Unsupported):
        fn(idx, wg)  # a gradient scaled by counts: not captured (padding_idx is, test_embedding_padding_idx_gradient)


@pytest.mark.parametrize("backend", BACKENDS)
def test_several_integer_tensor_indices(backend):
    """x[i, j] and x[:, i, j] with broadcasting integer tensors on adjacent dims (transformers'
    padding_mask[batch_idx, kv_idx]): one gather over the dims flattened; negative indices count from
    the end; out of range raises IndexError as eager."""
    x, x4 = torch.randn(4, 6, 3), torch.randn(2, 4, 6, 3)
    i, j = torch.tensor([3, -4, 0]), torch.tensor([[1], [5]], dtype=torch.int32)
    b, k = torch.arange(4)[:, None, None], torch.tensor([[0, -1, 5]])
    cases = [(lambda x, i, j: x[i, j] * 2, (x, i, j)), (lambda x, i, j: x[:, i, j] + 1, (x4, i, j)),
             (lambda x, b, k: x[b, k, :] * 1, (x, b, k))]
    for f, args in cases:
        got, want = compiled(f, backend)(*args), f(*args)
        assert got.shape == want.shape and torch.equal(got, want)
    f = lambda x, i, j: x[i, j] * 2  # noqa: E731
    cf = compiled(f, backend)
    cf(x, i, j)
    for bad in ((torch.tensor([4]), j), (i, torch.tensor([[-7]]))):
        with pytest.raises(IndexError):
            f(x, *bad)
        with pytest.raises(IndexError):
            cf(x, *bad)


def test_several_integer_tensor_indices_gradient():
    x, ref = torch.randn(4, 6, requires_grad=True), None
    ref = x.detach().clone().requires_grad_()
    i, j = torch.tensor([3, -4, 3]), torch.tensor([[1], [1]])  # repeated elements: gradients add up
    f = lambda x: (x[i, j] * torch.arange(6.0).reshape(2, 3)).sum()  # noqa: E731
    compiled(f, "eager")(x).backward()
    f(ref).backward()
    torch.testing.assert_close(x.grad, ref.grad)


def test_separated_integer_tensor_indices():
    """Index tensors on dims that are not adjacent: eager moves the broadcast dims to the front (dyn permutes
    the indexed dims first, then gathers)."""
    x, i = torch.randn(3, 4, 5), torch.tensor([0, 2])
    f = lambda x: x[i, :, i]  # noqa: E731
    torch.testing.assert_close(compiled(f, "dyn")(x), f(x))
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and not stats["eager_graphs"], stats


@pytest.mark.parametrize("padding_idx", [0, 3, -1])
def test_embedding_padding_idx_gradient(padding_idx):
    # transformers' BERT embeddings (padding_idx=pad_token_id), trained: the padding row gets no gradient
    emb = nn.Embedding(8, 4, padding_idx=padding_idx)
    ref = nn.Embedding(8, 4, padding_idx=padding_idx)
    ref.load_state_dict(emb.state_dict())
    tokens = torch.tensor([[0, 3, 7, 7], [3, 1, 0, 2]])
    cm = dyn.compile(emb, backend="eager", fullgraph=True)
    torch.testing.assert_close(cm(tokens), ref(tokens))
    (cm(tokens) * torch.arange(4.0)).sum().backward()
    (ref(tokens) * torch.arange(4.0)).sum().backward()
    torch.testing.assert_close(emb.weight.grad, ref.weight.grad)
    assert not emb.weight.grad[padding_idx].any()
