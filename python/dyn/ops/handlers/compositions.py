"""Handlers of shape and matrix ops that are compositions of other captured ops, recorded as those ops (as
PrimTorch's decompositions, written as eager's kernels compute them): rot90, kron, block_diag, cross and
linalg.cross, diff, trapezoid/trapz/cumulative_trapezoid, vander and linalg.vander, renorm,
count_nonzero, isin, bucketize, fft.fftshift/ifftshift, cartesian_prod, combinations."""
import math

import torch

from ...errors import Unsupported
from ..tensor import TensorVar, _norm_dim
from .common import _out, metas
from .rearrange import H as REARRANGE
from .reductions import H as REDUCTIONS
from ...dynamic.symbolic import meta_empty
from .registry import fft, linalg, torch_name


def _eager(what, fn, *args, **kwargs):
    """fn on meta tensors (eager's result shape and dtype); Unsupported where eager raises."""
    try:
        return fn(*metas(args), **metas(kwargs))
    except (RuntimeError, IndexError, TypeError, ValueError, NotImplementedError) as e:
        raise Unsupported(f"{what}: {e}")  # eager raises


def _int(what, v):
    if isinstance(v, bool) or not isinstance(v, int):
        raise Unsupported(f"{what} with {v!r} (not an int)")
    return v


def _narrow(o, x, d, start, length):
    return o.slice(x, d, start, start + length, 1)


@torch_name("rot90")
def _rot90(o, x, k=1, dims=(0, 1)):
    """eager's: flip then transpose, laid out as eager's result (a transposed view of the flipped copy)."""
    o.check(x)
    _int("rot90", k)
    meta = _eager("rot90", torch.rot90, x, k, list(dims))
    nd = x.meta.dim()
    d0, d1 = (_norm_dim(d, nd) for d in dims)
    k %= 4
    if k == 0:
        return o.fresh_copy(x)
    if k == 2:
        return REARRANGE["flip"](o, x, [d0, d1])
    f = REARRANGE["flip"](o, x, d1 if k == 1 else d0)
    perm = list(range(nd))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    r = o.laid_out(o.permute(f, perm), perm)  # eager: f.transpose(d0, d1), f's memory
    assert tuple(r.meta.shape) == tuple(meta.shape)
    return r


@torch_name("kron")
def _kron(o, a, b, *, out=None):
    """a's elements times b: a's dims interleaved with b's (both viewed at one rank), then merged."""
    o.check(a, b)
    meta = _eager("kron", torch.kron, a, b)
    nd = max(a.meta.dim(), b.meta.dim())
    sa = (1,) * (nd - a.meta.dim()) + tuple(a.meta.shape)
    sb = (1,) * (nd - b.meta.dim()) + tuple(b.meta.shape)
    ai = o.reshape(a, tuple(v for s in sa for v in (s, 1)))
    bi = o.reshape(b, tuple(v for s in sb for v in (1, s)))
    r = o.binary("mul", ai, bi)
    r = o.reshape(r, tuple(p * q for p, q in zip(sa, sb)))
    return _out(o, out, o.convert(r, meta.dtype), a, b)


@torch_name("block_diag")
def _block_diag(o, *tensors):
    """The tensors (0-d: 1x1, 1-D: one row) on the diagonal of a zero matrix: rows padded with zeros
    left and right, stacked."""
    o.check(*tensors)
    meta = _eager("block_diag", torch.block_diag, *tensors)
    mats = []
    for t in tensors:
        t = o.convert(t, meta.dtype)
        if t.meta.dim() == 0:
            t = o.reshape(t, (1, 1))
        elif t.meta.dim() == 1:
            t = o.reshape(t, (1, t.meta.shape[0]))
        mats.append(t)
    width = meta.shape[1]
    zero = False if meta.dtype == torch.bool else 0
    rows, col = [], 0
    for t in mats:
        r, c = t.meta.shape
        parts = []
        if col:
            parts.append(o.full((r, col), zero, meta.dtype))
        parts.append(t)
        if width - col - c:
            parts.append(o.full((r, width - col - c), zero, meta.dtype))
        rows.append(o.cat(parts, 1) if len(parts) > 1 else t)
        col += c
    rows = [r for r in rows if r.meta.shape[0]]
    if not rows:
        return o.full(tuple(meta.shape), zero, meta.dtype)
    return o.cat(rows, 0)


def _cross_at(o, a, b, d, meta):
    """graph.cross of the operands broadcast and converted to the result type."""
    if meta.dtype == torch.bool:
        raise Unsupported("cross of booleans (eager raises)")
    shape = tuple(meta.shape)
    a, b = (o.expand(o.convert(t, meta.dtype), shape) for t in (a, b))
    return o.node("cross", [a, b], meta_empty(shape, dtype=meta.dtype, device="meta"), dim=d)


@torch_name("cross")
def _cross(o, a, b, dim=None, *, out=None):
    """torch.cross: dim=None takes the first dim of size 3 (eager's deprecated default)."""
    o.check(a, b)
    meta = _eager("cross", torch.cross, a, b, dim=dim)
    if dim is None:
        shape = torch.broadcast_shapes(tuple(a.meta.shape), tuple(b.meta.shape))
        dim = next(i for i, s in enumerate(shape) if s == 3)
    return _out(o, out, _cross_at(o, a, b, _norm_dim(dim, meta.dim()), meta), a, b)


@linalg("cross")
def _linalg_cross(o, a, b, *, dim=-1, out=None):
    o.check(a, b)
    meta = _eager("linalg.cross", torch.linalg.cross, a, b, dim=dim)
    return _out(o, out, _cross_at(o, a, b, _norm_dim(dim, meta.dim()), meta), a, b)


@torch_name("diff")
def _diff(o, x, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """x[1:] - x[:-1] along dim, n times (booleans: !=), after prepend and append are concatenated."""
    o.check(x)
    _int("diff", n)
    meta = _eager("diff", torch.diff, x, n, dim, prepend, append)
    d = _norm_dim(dim, max(x.meta.dim(), 1))
    for v in (prepend, append):
        if v is not None and not isinstance(v, TensorVar):
            raise Unsupported("diff with a prepend or append that is not a tensor")
    edge = tuple(x.meta.shape[:d]) + (1,) + tuple(x.meta.shape[d + 1:])  # a 0-d prepend/append's shape
    parts = [v if v.meta.dim() else o.expand(o.reshape(v, (1,) * x.meta.dim()), edge)
             for v in (prepend, x, append) if v is not None]
    parts = [o.convert(v, meta.dtype) for v in parts]
    y = o.cat(parts, d) if len(parts) > 1 else x
    for _ in range(n):
        m = y.meta.shape[d]
        if m == 0:
            break
        hi, lo = _narrow(o, y, d, 1, m - 1), _narrow(o, y, d, 0, m - 1)
        y = o.binary("ne", hi, lo) if y.meta.dtype == torch.bool else o.binary("sub", hi, lo)
    if tuple(y.meta.shape) != tuple(meta.shape):
        raise Unsupported("diff: unexpected shape")
    if y is x:
        y = o.copy(x)
    return _out(o, out, o.convert(y, meta.dtype), x)


def _x_steps(o, x, y, d):
    """x's differences along d, viewed against y as eager's trapezoid does (a 1-D x along d, a lower-rank
    x with leading size-1 dims)."""
    if x.meta.dim() == 1:
        xv = o.reshape(x, tuple(x.meta.shape[0] if e == d else 1 for e in range(y.meta.dim())))
    elif x.meta.dim() < y.meta.dim():
        xv = o.reshape(x, (1,) * (y.meta.dim() - x.meta.dim()) + tuple(x.meta.shape))
    else:
        xv = x
    m = xv.meta.shape[d]
    return o.binary("sub", _narrow(o, xv, d, 1, m - 1), _narrow(o, xv, d, 0, m - 1))


def _trapezoid(what, fn, cumulative=False):
    """eager's formulas: with x, sum(dx * (y[1:] + y[:-1])) / 2 (cumulative: the cumsum of the terms / 2);
    with a spacing dx, (sum(y) - (y[0] + y[-1]) / 2) * dx (cumulative: cumsum(dx / 2 * (y[1:] + y[:-1])))."""
    def h(o, y, x=None, *, dx=None, dim=-1):
        o.check(y)
        if x is not None and not isinstance(x, TensorVar):
            raise Unsupported(f"{what} with x={x!r}")
        if dx is not None and (isinstance(dx, bool) or not isinstance(dx, (int, float))):
            raise Unsupported(f"{what} with dx={dx!r}")
        _int(what, dim)
        kw = {"dim": dim} if dx is None else {"dx": dx, "dim": dim}
        meta = _eager(what, fn, y, x, **kw) if x is not None else _eager(what, fn, y, **kw)
        d = _norm_dim(dim, y.meta.dim())
        n = y.meta.shape[d]
        if n == 0 or meta.numel() == 0:
            return o.full(tuple(meta.shape), 0, meta.dtype)
        if y.meta.dtype.is_floating_point and y.meta.dtype != meta.dtype:
            y = o.convert(y, meta.dtype)  # integer y: eager sums and multiplies in its type (uint8 wraps)
        ysum = o.binary("add", _narrow(o, y, d, 1, n - 1), _narrow(o, y, d, 0, n - 1))
        if x is not None:
            terms = o.binary("mul", _x_steps(o, x, y, d), ysum)
            r = o.binary("div", REDUCTIONS["cumsum"](o, terms, d), 2.0) if cumulative else \
                o.binary("div", o.reduce("sum", terms, d), 2.0)
        else:
            step = 1.0 if dx is None else dx
            if cumulative:
                r = REDUCTIONS["cumsum"](o, o.binary("mul", ysum, step / 2.0), d)
            else:
                ends = o.binary("add", _narrow(o, y, d, 0, 1), _narrow(o, y, d, n - 1, 1))
                ends = o.reshape(ends, tuple(meta.shape))
                r = o.binary("mul", o.binary("sub", o.reduce("sum", y, d), o.binary("mul", ends, 0.5)), step)
        r = o.convert(r, meta.dtype)
        if tuple(r.meta.shape) != tuple(meta.shape):
            raise Unsupported(f"{what}: unexpected shape")
        return r
    return h


def _vander_values(o, x, n, increasing):
    """x's powers 0..n-1 along a new last dim, by a cumulative product (eager's)."""
    shape = tuple(x.meta.shape) + (n,)
    if n == 0:
        return o.full(shape, 0, x.meta.dtype)
    ones = o.full(tuple(x.meta.shape) + (1,), 1, x.meta.dtype)
    if n == 1:
        r = ones
    else:
        xs = o.expand(o.reshape(x, tuple(x.meta.shape) + (1,)), tuple(x.meta.shape) + (n - 1,))
        r = REDUCTIONS["cumprod"](o, o.cat([ones, xs], -1), -1)
    return r if increasing else REARRANGE["flip"](o, r, -1)


@torch_name("vander")
def _vander(o, x, N=None, increasing=False):
    o.check(x)
    meta = _eager("vander", torch.vander, x, N, increasing)
    xs = x if x.meta.dtype == meta.dtype else o.convert(x, meta.dtype)
    return _vander_values(o, xs, meta.shape[-1], bool(increasing))


@linalg("vander")
def _linalg_vander(o, x, *, N=None):
    o.check(x)
    meta = _eager("linalg.vander", torch.linalg.vander, x, N=N)
    xs = x if x.meta.dtype == meta.dtype else o.convert(x, meta.dtype)
    xs = o.reshape(xs, tuple(meta.shape[:-1]))  # a 0-d x is one element
    return _vander_values(o, xs, meta.shape[-1], True)


@torch_name("renorm")
def _renorm(o, x, p, dim, maxnorm, *, out=None):
    """graph.renorm: each slice along dim scaled by maxnorm / (norm + 1e-7) where its p-norm exceeds maxnorm."""
    o.check(x)
    meta = _eager("renorm", torch.renorm, x, p, dim, maxnorm)
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p != p or p < 0 or \
            isinstance(maxnorm, bool) or not isinstance(maxnorm, (int, float)):
        raise Unsupported(f"renorm with p={p!r}, maxnorm={maxnorm!r}")
    if x.meta.dim() == 0 or (p == 0 and x.meta.dim() == 1):
        raise Unsupported("renorm of a 0-d tensor, or with p=0 of a 1-D tensor")
    r = o.node("renorm", [x], meta, p=float(p), dim=_norm_dim(dim, x.meta.dim()), maxnorm=float(maxnorm))
    return _out(o, out, r, x)


@torch_name("count_nonzero")
def _count_nonzero(o, x, dim=None):
    o.check(x)
    meta = _eager("count_nonzero", torch.count_nonzero, x, dim)
    nz = o.convert(o.binary("ne", x, False if x.meta.dtype == torch.bool else 0), torch.int64)
    dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    r = o.reduce("sum", nz, dims) if x.meta.dim() else nz
    if tuple(r.meta.shape) != tuple(meta.shape):
        raise Unsupported("count_nonzero: unexpected shape")
    return r if r is not nz else o.copy(nz)


@torch_name("isin")
def _isin(o, elements, test_elements, *, assume_unique=False, invert=False):
    """graph.isin: whether each element equals one of test_elements (flattened)."""
    meta = _eager("isin", torch.isin, elements, test_elements, assume_unique=assume_unique, invert=invert)
    if not isinstance(elements, TensorVar):
        elements = o.full((), elements, torch.tensor(elements).dtype)
    o.check(elements)
    t = test_elements
    if not isinstance(t, TensorVar):
        t = o.full((1,), t, torch.tensor(t).dtype)
    o.check(t)
    if tuple(elements.meta.shape) != tuple(meta.shape):
        raise Unsupported("isin: unexpected shape")
    flat = o.reshape(t, (t.meta.numel(),))
    return o.node("isin", [elements, flat], meta, invert=bool(invert))


@torch_name("bucketize")
def _bucketize(o, x, boundaries, *, out_int32=False, right=False, out=None):
    """graph.bucketize: the number of boundaries < x (right: <= x); NaN after every boundary."""
    meta = _eager("bucketize", torch.bucketize, x, boundaries, out_int32=out_int32, right=right)
    if not isinstance(x, TensorVar):
        raise Unsupported("bucketize of a number")
    o.check(x, boundaries)
    if boundaries.meta.dim() != 1:
        raise Unsupported("bucketize with boundaries of rank != 1 (eager raises)")
    nb = boundaries.meta.shape[0]
    if nb == 0 or x.meta.numel() == 0:
        return _out(o, out, o.full(tuple(meta.shape), 0, meta.dtype), x)
    if x.meta.dtype == torch.bool or boundaries.meta.dtype == torch.bool:
        raise Unsupported("bucketize of booleans")
    r = o.node("bucketize", [x, boundaries], meta, right=bool(right), out_int32=meta.dtype == torch.int32)
    return _out(o, out, r, x)


def _fftshift(inverse):
    def h(o, x, dim=None):
        o.check(x)
        fn = torch.fft.ifftshift if inverse else torch.fft.fftshift
        _eager("fft.ifftshift" if inverse else "fft.fftshift", fn, x, dim)
        nd = x.meta.dim()
        dims = list(range(nd)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
        dims = [_norm_dim(d, nd) for d in dims]
        shifts = [(-(x.meta.shape[d] // 2)) if inverse else x.meta.shape[d] // 2 for d in dims]
        if not dims:
            return o.copy(x)
        return REARRANGE["roll"](o, x, shifts, dims)
    return h


torch_name("trapezoid")(_trapezoid("trapezoid", torch.trapezoid))
torch_name("trapz")(_trapezoid("trapz", torch.trapz))
torch_name("cumulative_trapezoid")(_trapezoid("cumulative_trapezoid", torch.cumulative_trapezoid, cumulative=True))
fft("fftshift")(_fftshift(False))
fft("ifftshift")(_fftshift(True))


@torch_name("_chunk_cat")
def _chunk_cat(o, tensors, dim, num_chunks, *, out=None):
    """torch._chunk_cat (PrimTorch's decomposition): each tensor padded with zeros along dim to a multiple of
    num_chunks, viewed as (..., num_chunks, -1), all concatenated along dim + 1."""
    tensors = list(tensors)
    o.check(*tensors)
    meta = _eager("_chunk_cat", torch._chunk_cat, tensors, dim, num_chunks)
    nd = tensors[0].meta.dim()
    d = _norm_dim(dim, nd) if all(t.meta.dim() == nd for t in tensors) else dim
    parts = []
    for t in tensors:
        shape = tuple(t.meta.shape)
        n = shape[d]
        padded = (n + num_chunks - 1) // num_chunks * num_chunks
        if padded != n:
            z = o.full(shape[:d] + (padded - n,) + shape[d + 1:], 0, t.meta.dtype)
            t = o.cat([t, z], d)
        parts.append(o.reshape(t, shape[:d] + (num_chunks, t.meta.numel() // (math.prod(shape[:d]) * num_chunks))))
    r = o.cat(parts, d + 1)
    if tuple(r.meta.shape) != tuple(meta.shape):
        raise Unsupported("_chunk_cat: unexpected shape")
    return _out(o, out, r, *tensors)


def _sl(o, x, d, start, end):
    n = x.meta.shape[d]
    start, end = (start + n if start < 0 else start), (end + n if end < 0 else end)
    return o.slice(x, d, start, end, 1)


@torch_name("gradient")
def _gradient(o, x, *, spacing=None, dim=None, edge_order=1):
    """torch.gradient as eager's kernel computes it: central differences inside, one-sided ones (first or
    second order) at the edges, for uniform spacings (numbers) or coordinates (1-D tensors)."""
    o.check(x)
    meta = _eager("gradient", torch.gradient, x, spacing=1 if spacing is None else spacing, dim=dim,
                  edge_order=edge_order)
    nd = x.meta.dim()
    dims = list(range(nd)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [_norm_dim(d, nd) for d in dims]
    if spacing is None:
        spacing = 1.0
    sp = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(sp) == 1 and len(dims) > 1:
        sp = sp * len(dims)
    if not x.meta.dtype.is_floating_point and any(isinstance(h, TensorVar) for h in sp):
        raise Unsupported("gradient of an integer tensor along coordinates")
    # integers: eager's same formulas (integer differences, true division by the spacing gives floats)
    out = []
    for d, h in zip(dims, sp):
        if isinstance(h, TensorVar):
            if h.meta.dim() == 0:
                raise Unsupported("gradient with a 0-d tensor spacing")
            out.append(_gradient_coords(o, x, d, o.convert(h, x.meta.dtype), edge_order))
            continue
        if isinstance(h, bool) or not isinstance(h, (int, float)):
            raise Unsupported(f"gradient with spacing {h!r}")
        center = o.binary("div", o.binary("div", o.binary("sub", _sl(o, x, d, 2, x.meta.shape[d]),
                                                            _sl(o, x, d, 0, -2)), h), 2)
        if edge_order == 1:
            pre = o.binary("div", o.binary("sub", _sl(o, x, d, 1, 2), _sl(o, x, d, 0, 1)), h)
            app = o.binary("div", o.binary("sub", _sl(o, x, d, -1, x.meta.shape[d]), _sl(o, x, d, -2, -1)), h)
        else:
            pre = o.binary("div", o.binary("sub", o.binary("add", o.binary("mul", _sl(o, x, d, 0, 1), -1.5),
                                                           o.binary("mul", _sl(o, x, d, 1, 2), 2)),
                                           o.binary("mul", _sl(o, x, d, 2, 3), 0.5)), h)
            app = o.binary("div", o.binary("add", o.binary("sub", o.binary("mul", _sl(o, x, d, -3, -2), 0.5),
                                                           o.binary("mul", _sl(o, x, d, -2, -1), 2)),
                                           o.binary("mul", _sl(o, x, d, -1, x.meta.shape[d]), 1.5)), h)
        out.append(o.cat([pre, center, app], d))
    for r, m in zip(out, meta):
        if tuple(r.meta.shape) != tuple(m.shape) or r.meta.dtype != m.dtype:
            raise Unsupported("gradient: unexpected result")
    return tuple(out)


def _gradient_coords(o, x, d, coords, edge_order):
    """Non-uniform spacing: the coordinates' steps dx weight the neighbours (eager's formulas)."""
    n = x.meta.shape[d]
    shape = [1] * x.meta.dim()
    shape[d] = -1
    dx = o.binary("sub", o.slice(coords, 0, 1, n, 1), o.slice(coords, 0, 0, n - 1, 1))
    dx1, dx2 = o.slice(dx, 0, 0, n - 2, 1), o.slice(dx, 0, 1, n - 1, 1)
    col = lambda v: o.reshape(v, tuple(n - 2 if s == -1 else 1 for s in shape))  # noqa: E731
    s12 = o.binary("add", dx1, dx2)
    a = col(o.binary("div", o.unary("neg", dx2), o.binary("mul", dx1, s12)))
    b = col(o.binary("div", o.binary("sub", dx2, dx1), o.binary("mul", dx1, dx2)))
    c = col(o.binary("div", dx1, o.binary("mul", dx2, s12)))
    center = o.binary("add", o.binary("add", o.binary("mul", a, _sl(o, x, d, 0, -2)),
                                      o.binary("mul", b, _sl(o, x, d, 1, -1))),
                      o.binary("mul", c, _sl(o, x, d, 2, n)))
    e = lambda i: o.reshape(o.slice(dx, 0, i if i >= 0 else n - 1 + i, (i if i >= 0 else n - 1 + i) + 1, 1), ())  # noqa: E731
    if edge_order == 1:
        pre = o.binary("div", o.binary("sub", _sl(o, x, d, 1, 2), _sl(o, x, d, 0, 1)), e(0))
        app = o.binary("div", o.binary("sub", _sl(o, x, d, -1, n), _sl(o, x, d, -2, -1)), e(-1))
    else:
        d0, d1 = e(0), e(1)
        s = o.binary("add", d0, d1)
        a0 = o.unary("neg", o.binary("div", o.binary("add", o.binary("mul", d0, 2.0), d1), o.binary("mul", d0, s)))
        b0 = o.binary("div", s, o.binary("mul", d0, d1))
        c0 = o.binary("div", o.unary("neg", d0), o.binary("mul", d1, s))
        pre = o.binary("add", o.binary("add", o.binary("mul", a0, _sl(o, x, d, 0, 1)), o.binary("mul", b0, _sl(o, x, d, 1, 2))),
                       o.binary("mul", c0, _sl(o, x, d, 2, 3)))
        l1, l2 = e(-1), e(-2)
        s = o.binary("add", l1, l2)
        a1 = o.binary("div", l1, o.binary("mul", l2, s))
        b1 = o.unary("neg", o.binary("div", s, o.binary("mul", l1, l2)))
        c1 = o.binary("div", o.binary("add", o.binary("mul", l1, 2), l2), o.binary("mul", l1, s))
        app = o.binary("add", o.binary("add", o.binary("mul", a1, _sl(o, x, d, -3, -2)), o.binary("mul", b1, _sl(o, x, d, -2, -1))),
                       o.binary("mul", c1, _sl(o, x, d, -1, n)))
    return o.cat([pre, center, app], d)


@torch_name("cartesian_prod")
def _cartesian_prod(o, *tensors):
    """ATen's: one tensor is returned itself; else the meshgrid ("ij") of the 1-D tensors, each grid
    flattened, stacked as columns."""
    o.check(*tensors)
    meta = _eager("cartesian_prod", torch.cartesian_prod, *tensors)
    if len(tensors) == 1:
        return tensors[0]
    shape = tuple(t.meta.shape[0] for t in tensors)
    k, n = len(tensors), math.prod(shape)
    cols = [o.reshape(o.expand(o.reshape(t, (1,) * i + (shape[i],) + (1,) * (k - i - 1)), shape), (n,))
            for i, t in enumerate(tensors)]
    r = o.stack(cols, 1)
    assert tuple(r.meta.shape) == tuple(meta.shape) and r.meta.dtype == meta.dtype
    return r


@torch_name("combinations")
def _combinations(o, x, r=2, with_replacement=False):
    """The r-element combinations of x's elements as rows, in eager's order: the positions are eager's own
    combinations of 0..n-1 (computed now: they depend on the shape alone), gathered from x."""
    o.check(x)
    if isinstance(r, bool) or not isinstance(r, int):
        raise Unsupported(f"combinations with r={r!r}")
    if x.meta.dim() != 1 or r < 0:
        raise Unsupported("combinations of a tensor that is not 1-D or with r < 0 (eager raises)")
    n, wr = x.meta.shape[0], bool(with_replacement)
    count = math.comb(n + r - 1, r) if wr else math.comb(n, r)
    if count * r > o.DENSE_LIMIT:
        raise Unsupported(f"combinations with {count * r} elements (more than {o.DENSE_LIMIT})")
    pos = torch.combinations(torch.arange(n), r, wr)  # eager's order, and its result's shape
    if pos.numel() == 0:
        return o.full(tuple(pos.shape), False if x.meta.dtype == torch.bool else 0, x.meta.dtype)
    flat = o.index_select(x, 0, o.dense(pos.reshape(-1)))
    return o.reshape(flat, tuple(pos.shape))
