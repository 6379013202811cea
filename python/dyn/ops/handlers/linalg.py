"""Handlers of the matrix-product family beyond matmul/mm/bmm/addmm/baddbmm/linear: addbmm, addmv, addr,
mv, dot, vdot, inner, outer/ger, tensordot, einsum, linalg.multi_dot and linalg.vecdot. Each is written
as PyTorch writes it (ATen's LinearAlgebra.cpp and Linear.cpp): products of more than vectors become one
graph.matmul (the GEMM library call) between permutes and reshapes, so that the pointwise work around it
(scaling, the added term) fuses into dyn's kernels; vector products (dot, outer, vecdot) are a multiply
and a sum, one fused kernel. What eager rejects (checked on meta tensors) is not captured."""
import math

import torch

from ...errors import Unsupported
from ..tensor import TensorVar
from .common import _out, inplace, metas
from .shapes import _permute
from ...dynamic.symbolic import meta_empty
from .registry import linalg, method, torch_name


def _numbers(what, *ts):
    if any(t.meta.dtype == torch.bool for t in ts):
        # eager's boolean addr is a logical op, and its GEMMs take no booleans
        raise Unsupported(f"{what} of boolean tensors")


def _addbmm(o, x, b1, b2, *, beta=1, alpha=1, out=None):
    """sum over the batch of b1[i] @ b2[i]: one GEMM over the concatenated inner dims,
    [n, B*m] @ [B*m, p]."""
    o.check(x, b1, b2)
    o.accepts("addbmm", torch.addbmm, x, b1, b2, beta=beta, alpha=alpha)
    _numbers("addbmm", x, b1, b2)
    meta = torch.addbmm(x.meta, b1.meta, b2.meta, beta=beta, alpha=alpha)
    B, n, m = b1.meta.shape
    p = b2.meta.shape[2]
    a = o.reshape(o.permute(b1, [1, 0, 2]), (n, B * m))
    r = o.addmm(x, a, o.reshape(b2, (B * m, p)), beta, alpha, meta)
    return _out(o, out, r, x, b1, b2)


def _addmv(o, x, mat, vec, *, beta=1, alpha=1, out=None):
    """A GEMM with one column: x and vec as columns, the result back to a vector."""
    o.check(x, mat, vec)
    o.accepts("addmv", torch.addmv, x, mat, vec, beta=beta, alpha=alpha)
    _numbers("addmv", x, mat, vec)
    meta = torch.addmv(x.meta, mat.meta, vec.meta, beta=beta, alpha=alpha)
    n, m = mat.meta.shape
    column = meta_empty((n, 1), dtype=meta.dtype, device="meta")
    xc = o.reshape(x, (x.meta.shape[0], 1)) if x.meta.dim() == 1 else x
    r = o.addmm(xc, mat, o.reshape(vec, (m, 1)), beta, alpha, column)
    return _out(o, out, o.reshape(r, (n,)), x, mat, vec)


def _outer(o, a, b, *, out=None):
    """a[:, None] * b[None, :] (ATen's outer is this multiply)."""
    o.check(a, b)
    o.accepts("outer", torch.outer, a, b)
    r = o.binary("mul", o.reshape(a, (a.meta.shape[0], 1)), o.reshape(b, (1, b.meta.shape[0])))
    return _out(o, out, r, a, b)


def _addr(o, x, v1, v2, *, beta=1, alpha=1, out=None):
    o.check(x, v1, v2)
    o.accepts("addr", torch.addr, x, v1, v2, beta=beta, alpha=alpha)
    meta = torch.addr(x.meta, v1.meta, v2.meta, beta=beta, alpha=alpha)
    if meta.dtype == torch.bool:  # ATen's boolean addr: (beta and x) or (alpha and v1 and v2)
        outer = o.binary("logical_and", o.reshape(v1, (v1.meta.shape[0], 1)), o.reshape(v2, (1, v2.meta.shape[0])))
        r = outer if alpha else o.full(tuple(meta.shape), False, torch.bool)
        r = o.binary("logical_or", x, r) if beta else r
        return _out(o, out, o.expand(r, tuple(meta.shape)), x, v1, v2)
    _numbers("addr", x, v1, v2)
    col, row = o.reshape(v1, (v1.meta.shape[0], 1)), o.reshape(v2, (1, v2.meta.shape[0]))
    return _out(o, out, o.addmm(x, col, row, beta, alpha, meta), x, v1, v2)  # a contraction of one: a multiply


def _product(name, fn):
    """mv, dot, vdot: torch.matmul's forms with eager's stricter argument checks (ranks, one dtype)."""
    def h(o, a, b, *, out=None):
        o.check(a, b)
        o.accepts(name, fn, a, b)
        _numbers(name, a, b)
        return _out(o, out, o.matmul(a, b), a, b)
    return h


def _inner(o, a, b, *, out=None):
    o.check(a, b)
    o.accepts("inner", torch.inner, a, b)
    if a.meta.dim() == 0 or b.meta.dim() == 0:
        return _out(o, out, o.binary("mul", a, b), a, b)
    return _out(o, out, _tensordot(o, a, b, ([a.meta.dim() - 1], [b.meta.dim() - 1])), a, b)


def _tensordot(o, a, b, dims=2, out=None):
    """The contracted dims of a moved last and b's first, both flattened to matrices, one GEMM, the free
    dims restored (torch.tensordot's own plan)."""
    o.check(a, b)
    if isinstance(dims, TensorVar):
        raise Unsupported("tensordot dims given as a tensor")
    o.accepts("tensordot", torch.tensordot, a, b, dims=dims)
    _numbers("tensordot", a, b)
    meta = torch.tensordot(a.meta, b.meta, dims=dims)
    if isinstance(dims, int):
        da, db = list(range(a.meta.dim() - dims, a.meta.dim())), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    da = [d % a.meta.dim() for d in da]
    db = [d % b.meta.dim() for d in db]
    for i, j in zip(da, db):  # a contracted dim of size 1 against a larger one: the other side summed
        if a.meta.shape[i] == 1 and b.meta.shape[j] != 1:
            b = o.reduce("sum", b, [j], True)
        elif b.meta.shape[j] == 1 and a.meta.shape[i] != 1:
            a = o.reduce("sum", a, [i], True)
    fa = [d for d in range(a.meta.dim()) if d not in da]
    fb = [d for d in range(b.meta.dim()) if d not in db]
    sa, sb = a.meta.shape, b.meta.shape
    k = math.prod(sa[d] for d in da)
    a2 = o.reshape(o.permute(a, fa + da), (math.prod(sa[d] for d in fa), k))
    b2 = o.reshape(o.permute(b, db + fb), (k, math.prod(sb[d] for d in fb)))
    r = o.reshape(o.matmul(a2, b2), tuple(meta.shape))
    return _out(o, out, o.convert(r, meta.dtype), a, b)


def _vecdot(o, x, y, *, dim=-1, out=None):
    """graph.vecdot of x and y broadcast to one shape, in the result's type."""
    o.check(x, y)
    o.accepts("linalg.vecdot", torch.linalg.vecdot, x, y, dim=dim)
    _numbers("vecdot", x, y)  # complex is rejected at capture; conj would be needed
    try:
        meta = torch.linalg.vecdot(x.meta, y.meta, dim=dim)
    except (RuntimeError, TypeError, ValueError, IndexError) as e:
        raise Unsupported(f"linalg.vecdot: {e}")  # eager raises
    shape = tuple(torch.broadcast_shapes(tuple(x.meta.shape), tuple(y.meta.shape)))
    xs, ys = (o.expand(o.convert(v, meta.dtype), shape) for v in (x, y))
    r = o.node("vecdot", [xs, ys], meta.contiguous(), dim=dim % len(shape))
    return _out(o, out, r, x, y)


def _multi_dot(o, tensors, *, out=None):
    """Left to right (eager picks the cheapest order for 3+ matrices; the results differ by rounding)."""
    tensors = list(tensors)
    if not tensors or not all(isinstance(t, TensorVar) for t in tensors):
        raise Unsupported("linalg.multi_dot of a non-tensor")
    o.check(*tensors)
    o.accepts("linalg.multi_dot", lambda *ts: torch.linalg.multi_dot(list(ts)), *tensors)
    _numbers("linalg.multi_dot", *tensors)
    meta = torch.linalg.multi_dot([t.meta for t in tensors])
    r = tensors[0]
    for t in tensors[1:]:
        r = o.matmul(r, t)
    return _out(o, out, o.reshape(r, tuple(meta.shape)), *tensors)


# -- einsum ---------------------------------------------------------------------------------------
def _parse_einsum(equation, operands):
    """([subscripts per operand], output subscripts) with '...' expanded to one letter per broadcast
    dim (upper-case private letters), and the output implicit (sorted letters used once) when absent."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise Unsupported("einsum: subscripts do not match the operands (eager raises)")
    ell_dims = 0
    for t, x in zip(terms, operands):
        if "..." in t:
            ell_dims = max(ell_dims, x.meta.dim() - (len(t) - 3))
    ell = [chr(0x100 + i) for i in range(ell_dims)]  # never a subscript letter
    subs = []
    for t, x in zip(terms, operands):
        if t.count("...") > 1 or not all(c.isalpha() for c in t.replace("...", "")):
            raise Unsupported(f"einsum subscripts {t!r}")
        if "..." in t:
            n = x.meta.dim() - (len(t) - 3)
            t = t.replace("...", "".join(ell[ell_dims - n:]))
        if len(t) != x.meta.dim():
            raise Unsupported("einsum: subscripts do not match an operand's dims (eager raises)")
        subs.append(t)
    if arrow:
        if rhs.count("...") > 1 or not all(c.isalpha() for c in rhs.replace("...", "")):
            raise Unsupported(f"einsum output subscripts {rhs!r}")
        out = rhs.replace("...", "".join(ell))
    else:
        counts = {}
        for s in subs:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = "".join(ell) + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return subs, out


def _einsum_prepare(o, x, s, keep):
    """Operand x with subscripts s: repeated subscripts (a diagonal) are not captured; subscripts not in
    `keep` (used nowhere else) are summed first. Returns (x, its subscripts)."""
    if len(set(s)) != len(s):
        raise Unsupported("einsum with a repeated subscript in one operand (a diagonal)")
    gone = [i for i, c in enumerate(s) if c not in keep]
    if gone:
        x = o.reduce("sum", x, gone)
        s = "".join(c for c in s if c in keep)
    return x, s


def _einsum_pair(o, a, sa, b, sb, keep, sizes):
    """a (subscripts sa) times b (sb), summing the subscripts shared by both and absent from keep: a bmm
    of [batch, a-only, summed] @ [batch, summed, b-only], as PyTorch's sumproduct_pair."""
    batch = [c for c in sa if c in sb and c in keep]
    summed = [c for c in sa if c in sb and c not in keep]
    left = [c for c in sa if c not in sb]
    right = [c for c in sb if c not in sa]

    def size(cs):
        return math.prod(sizes[c] for c in cs)

    def arrange(x, s, order, shape):
        perm = [s.index(c) for c in order]
        return o.reshape(o.permute(x, perm), shape)

    # broadcast dims of size 1 in one operand: expanded to the other's size first
    a = _expand_to(o, a, sa, sizes)
    b = _expand_to(o, b, sb, sizes)
    a3 = arrange(a, sa, batch + left + summed, (size(batch), size(left), size(summed)))
    # b as [batch, right, summed], transposed: when b is laid out so (k in 'bhqd,bhkd'), the GEMM reads
    # it in place (loop.matmul transpose_b) instead of a transposed copy
    b3 = o.transpose(arrange(b, sb, batch + right + summed, (size(batch), size(right), size(summed))), 1, 2)
    r = o.matmul(a3, b3)
    rs = batch + left + right
    return o.reshape(r, tuple(sizes[c] for c in rs)), "".join(rs)


def _expand_to(o, x, s, sizes):
    shape = tuple(sizes[c] for c in s)
    return x if tuple(x.meta.shape) == shape else o.expand(x, shape)


def _einsum(o, equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise Unsupported("einsum in the sublist format")
    if not operands or not all(isinstance(x, TensorVar) for x in operands):
        raise Unsupported("einsum of a non-tensor")
    o.check(*operands)
    o.accepts("einsum", torch.einsum, equation, *operands)
    meta = torch.einsum(equation, *metas(operands))
    _numbers("einsum", *operands)
    subs, out = _parse_einsum(equation, operands)
    if len(operands) == 1 and len(set(subs[0])) == len(subs[0]) and sorted(subs[0]) == sorted(out):
        return _permute(o, operands[0], [subs[0].index(c) for c in out])  # a view of the operand, as eager's
    sizes = {}
    for s, x in zip(subs, operands):
        for c, n in zip(s, x.meta.shape):
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]  # size 1 broadcasts
    dt = meta.dtype
    xs = [o.convert(x, dt) for x in operands]
    # each operand's private subscripts summed away first, then left-to-right pairwise products
    cur, cs = None, None
    for i, (x, s) in enumerate(zip(xs, subs)):
        others = set(out).union(*(set(t) for j, t in enumerate(subs) if j != i))
        x, s = _einsum_prepare(o, x, s, others)
        if cur is None:
            cur, cs = x, s
            continue
        keep = set(out).union(*(set(t) for t in subs[i + 1:]))
        cur, cs = _einsum_pair(o, cur, cs, x, s, keep, sizes)
    gone = [i for i, c in enumerate(cs) if c not in out]
    if gone:
        cur = o.reduce("sum", cur, gone)
        cs = "".join(c for c in cs if c in out)
    cur = _expand_to(o, cur, cs, sizes)
    if cs != out:
        cur = o.permute(cur, [cs.index(c) for c in out])
    r = o.reshape(cur, tuple(meta.shape))
    if tuple(r.meta.shape) != tuple(meta.shape):
        raise Unsupported("einsum result shape differs from eager's")
    return r


def _inplace(name, base):
    def h(o, x, *args, **kwargs):
        o.check(x)
        new = base(o, x, *args, **kwargs)
        return inplace(o, x, new, lambda s: getattr(s, name)(*metas(args), **metas(kwargs)), args, kwargs)
    return h


H_LA = {"addbmm": _addbmm, "addmv": _addmv, "addr": _addr, "outer": _outer, "ger": _outer,
        "mv": _product("mv", torch.mv), "dot": _product("dot", torch.dot), "vdot": _product("vdot", torch.vdot),
        "inner": _inner, "tensordot": _tensordot, "einsum": _einsum}
linalg.all({"multi_dot": _multi_dot, "vecdot": _vecdot})
method.all({f"{n}_": _inplace(f"{n}_", H_LA[n]) for n in ("addbmm", "addmv", "addr")})

torch_name.all(H_LA)
