"""Captured tensor operations: each takes TensorVars / Python scalars, computes the result's meta
tensor by running the real torch op on meta tensors (PyTorch's own broadcasting and type promotion),
and adds graph-dialect nodes. Composite ops decompose into graph ops here."""
import math
import operator

import torch
import torch.nn.functional as F

from .errors import Unsupported
from .graph import UNARY


class TensorVar:
    """A symbolic tensor: an SSA node of the graph being captured plus its meta tensor."""
    __slots__ = ("tracer", "node", "fresh")

    def __init__(self, tracer, node, fresh=False):
        self.tracer, self.node, self.fresh = tracer, node, fresh

    @property
    def meta(self):
        return self.node.meta

    def __repr__(self):
        return f"TensorVar({self.node.name}, {tuple(self.meta.shape)}, {self.meta.dtype})"


SCALARS = (int, float, bool)


def _meta(v):
    return v.meta if isinstance(v, TensorVar) else v


def _norm_dim(d, ndim):
    d = operator.index(d)
    nd = max(ndim, 1)
    if not -nd <= d < nd:
        raise Unsupported(f"dim {d} out of range for rank {ndim}")
    return d % nd if ndim else 0


def _norm_dims(dim, ndim):
    if dim is None:
        return list(range(ndim))
    if isinstance(dim, (list, tuple, torch.Size)):
        return sorted({_norm_dim(d, ndim) for d in dim}) if len(dim) else list(range(ndim))
    return [_norm_dim(dim, ndim)]


class Ops:
    """Op builders bound to one tracer (graph + device)."""

    def __init__(self, tracer):
        self.tr = tracer
        self.g = tracer.graph

    def var(self, node):
        return TensorVar(self.tr, node)

    def node(self, op, inputs, meta, **attrs):
        return self.var(self.g.add(op, [i.node for i in inputs], meta, **attrs))

    def check(self, *xs):
        for x in xs:
            if not isinstance(x, TensorVar):
                raise Unsupported(f"expected a tensor, got {type(x).__name__}")

    def const(self, value, dtype):
        if isinstance(value, TensorVar):
            return value
        if not isinstance(value, SCALARS):
            raise Unsupported(f"unsupported scalar operand {type(value).__name__}")
        return self.var(self.g.constant(value, dtype))

    # -- elementwise ------------------------------------------------------------------------------
    def unary(self, op, x):
        self.check(x)
        meta = getattr(torch, op)(x.meta)
        return self.node(op, [x], meta)

    _ARITH = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
              "pow": operator.pow, "remainder": operator.mod, "maximum": torch.maximum,
              "minimum": torch.minimum}
    _CMP = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
            "gt": operator.gt, "ge": operator.ge}

    def binary(self, op, a, b):
        if not isinstance(a, TensorVar) and not isinstance(b, TensorVar):
            raise Unsupported(f"{op} without a tensor operand")
        for v in (a, b):
            if not isinstance(v, (TensorVar,) + SCALARS):
                raise Unsupported(f"unsupported operand {type(v).__name__} for {op}")
        if op in self._CMP:
            meta = self._CMP[op](_meta(a), _meta(b))
        elif op in ("logical_and", "logical_or"):
            ma, mb = _meta(a), _meta(b)
            if not isinstance(ma, torch.Tensor):
                ma = torch.tensor(ma, device="meta")
            if not isinstance(mb, torch.Tensor):
                mb = torch.tensor(mb, device="meta")
            meta = getattr(torch, op)(ma, mb)
        elif op in ("maximum", "minimum") and not (isinstance(a, TensorVar) and isinstance(b, TensorVar)):
            t = a if isinstance(a, TensorVar) else b
            s = b if t is a else a
            meta = torch.empty(t.meta.shape, dtype=torch.result_type(t.meta, s), device="meta")
        else:
            meta = self._ARITH[op](_meta(a), _meta(b))
        if op in self._CMP or op in ("logical_and", "logical_or"):
            t = a if isinstance(a, TensorVar) else b
            s = b if t is a else a
            cdt = torch.result_type(t.meta, s) if not isinstance(s, TensorVar) else None
        else:
            cdt = meta.dtype
        if not isinstance(a, TensorVar):
            a = self.const(a, cdt)
        if not isinstance(b, TensorVar):
            b = self.const(b, cdt)
        return self.node(op, [a, b], meta)

    def where(self, c, a, b):
        self.check(c)
        if c.meta.dtype != torch.bool:
            c = self.convert(c, torch.bool)
        meta = torch.where(c.meta, _meta(a), _meta(b))
        a = self.const(a, meta.dtype)
        b = self.const(b, meta.dtype)
        return self.node("where", [c, a, b], meta)

    def convert(self, x, dtype):
        self.check(x)
        if x.meta.dtype == dtype:
            return x
        return self.node("convert", [x], x.meta.to(dtype))

    def clamp(self, x, lo=None, hi=None):
        self.check(x)
        meta = torch.clamp(x.meta, lo, hi) if not (isinstance(lo, TensorVar) or isinstance(hi, TensorVar)) \
            else None
        if lo is not None:
            x = self.binary("maximum", x, lo)
        if hi is not None:
            x = self.binary("minimum", x, hi)
        if meta is not None and x.meta.dtype != meta.dtype:
            x = self.convert(x, meta.dtype)
        return x

    # -- reductions ------------------------------------------------------------------------------
    def reduce(self, op, x, dim=None, keepdim=False, dtype=None):
        self.check(x)
        if dtype is not None:
            x = self.convert(x, dtype)
        dims = _norm_dims(dim, x.meta.dim())
        if op == "prod":
            meta = x.meta
            for d in sorted(dims, reverse=True):
                meta = torch.prod(meta, d, keepdim=bool(keepdim))
            if not x.meta.dim():
                meta = torch.prod(x.meta)
        elif x.meta.dim() == 0:
            meta = getattr(torch, op)(x.meta)
        else:
            meta = getattr(torch, op)(x.meta, dims, keepdim=bool(keepdim))
        if x.meta.dtype != meta.dtype:
            x = self.convert(x, meta.dtype)
        if x.meta.dim() == 0:
            return x
        return self.node(op, [x], meta, dims=dims, keepdim=bool(keepdim))

    def var_(self, x, dim=None, unbiased=None, keepdim=False, correction=None):
        self.check(x)
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        dims = _norm_dims(dim, x.meta.dim())
        n = 1
        for d in dims:
            n *= x.meta.shape[d]
        m = self.reduce("mean", x, dims, True)
        d = self.binary("sub", x, m)
        s = self.reduce("sum", self.binary("mul", d, d), dims, keepdim)
        return self.binary("div", s, float(max(n - correction, 0)))

    def softmax(self, op, x, dim, dtype=None):
        self.check(x)
        if dim is None:
            raise Unsupported("softmax without dim")
        if dtype is not None:
            x = self.convert(x, dtype)
        d = _norm_dim(dim, x.meta.dim())
        meta = getattr(torch, op)(x.meta, d)
        if x.meta.dim() == 0:
            raise Unsupported(f"{op} of a 0-d tensor")
        return self.node(op, [x], meta, dim=d)

    # -- shapes ------------------------------------------------------------------------------------
    def reshape(self, x, shape):
        self.check(x)
        meta = x.meta.reshape(shape)
        if tuple(meta.shape) == tuple(x.meta.shape):
            return x
        return self.node("reshape", [x], meta)

    def permute(self, x, dims):
        self.check(x)
        dims = [_norm_dim(d, x.meta.dim()) for d in dims]
        if dims == list(range(len(dims))):
            return x
        return self.node("permute", [x], x.meta.permute(dims).contiguous(), dims=dims)

    def transpose(self, x, d0, d1):
        self.check(x)
        nd = x.meta.dim()
        if nd < 2:
            return x
        p = list(range(nd))
        a, b = _norm_dim(d0, nd), _norm_dim(d1, nd)
        p[a], p[b] = p[b], p[a]
        return self.permute(x, p)

    def expand(self, x, shape):
        self.check(x)
        meta = x.meta.expand(shape)
        if tuple(meta.shape) == tuple(x.meta.shape):
            return x
        return self.node("expand", [x], meta.contiguous())

    def slice(self, x, dim, start, end, step):
        meta = x.meta[(slice(None),) * dim + (slice(start, end, step),)]
        return self.node("slice", [x], meta.contiguous(), dim=dim, start=start, end=max(end, start), step=step)

    def getitem(self, x, idx):
        self.check(x)
        if not isinstance(idx, tuple):
            idx = (idx,)
        for i in idx:
            if not (i is None or i is Ellipsis or isinstance(i, (int, slice)) and not isinstance(i, bool)):
                raise Unsupported(f"tensor indexing with {type(i).__name__}")
            if isinstance(i, slice) and not all(v is None or isinstance(v, int) for v in (i.start, i.stop, i.step)):
                raise Unsupported("slice with non-int bounds")
        meta = x.meta[idx]
        # expand the Ellipsis
        n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
        full = []
        for i in idx:
            if i is Ellipsis:
                full += [slice(None)] * (x.meta.dim() - n_real)
            else:
                full.append(i)
        d = 0
        cur = x
        for i in full:
            if i is None:
                continue
            size = x.meta.shape[d]
            if isinstance(i, int):
                if not -size <= i < size:
                    raise Unsupported("index out of range")
                i = i % size
                cur = self.slice(cur, d, i, i + 1, 1)
            else:
                start, stop, step = i.indices(size)
                if step <= 0:
                    raise Unsupported("slice step must be positive")
                if (start, stop, step) != (0, size, 1):
                    cur = self.slice(cur, d, start, stop, step)
            d += 1
        return self.reshape(cur, meta.shape)

    def cat(self, xs, dim=0):
        xs = list(xs)
        self.check(*xs)
        meta = torch.cat([x.meta for x in xs], dim)
        xs = [x for x in xs if x.meta.numel() or x.meta.dim() != 1]
        d = _norm_dim(dim, meta.dim())
        xs = [self.convert(x, meta.dtype) for x in xs]
        if len(xs) == 1:
            return xs[0]
        return self.node("cat", xs, meta, dim=d)

    def stack(self, xs, dim=0):
        xs = list(xs)
        self.check(*xs)
        nd = xs[0].meta.dim() + 1
        d = _norm_dim(dim, nd)
        return self.cat([self.reshape(x, x.meta.unsqueeze(d).shape) for x in xs], d)

    def full(self, shape, value, dtype):
        c = self.const(value, dtype)
        return self.expand(c, tuple(shape)) if tuple(shape) else c

    # -- linear algebra ----------------------------------------------------------------------------
    def matmul(self, a, b):
        self.check(a, b)
        meta = torch.matmul(a.meta, b.meta)
        dt = meta.dtype
        a, b = self.convert(a, dt), self.convert(b, dt)
        na, nb = a.meta.dim(), b.meta.dim()
        if na == 0 or nb == 0:
            raise Unsupported("matmul of a 0-d tensor")
        if na == 1 and nb == 1:
            return self.reduce("sum", self.binary("mul", a, b), 0)
        if nb == 1:
            r = self.matmul(a, self.reshape(b, (b.meta.shape[0], 1)))
            return self.reshape(r, meta.shape)
        if na == 1:
            r = self.matmul(self.reshape(a, (1, a.meta.shape[0])), b)
            return self.reshape(r, meta.shape)
        if na == 2 and nb == 2:
            return self.node("matmul", [a, b], meta)
        if nb == 2:
            k = a.meta.shape[-1]
            a2 = self.reshape(a, (-1, k))
            r = self.node("matmul", [a2, b], torch.matmul(a2.meta, b.meta))
            return self.reshape(r, meta.shape)
        # batched: broadcast batch dims, flatten to 3-D
        batch = tuple(meta.shape[:-2])
        a3 = self.expand(a, batch + tuple(a.meta.shape[-2:]))
        b3 = self.expand(b, batch + tuple(b.meta.shape[-2:]))
        a3 = self.reshape(a3, (-1,) + tuple(a.meta.shape[-2:]))
        b3 = self.reshape(b3, (-1,) + tuple(b.meta.shape[-2:]))
        r = self.node("matmul", [a3, b3], torch.matmul(a3.meta, b3.meta))
        return self.reshape(r, meta.shape)

    def linear(self, x, w, b=None):
        y = self.matmul(x, self.transpose(w, 0, 1) if w.meta.dim() == 2 else w)
        if b is not None:
            y = self.binary("add", y, b)
        return y

    # -- composites --------------------------------------------------------------------------------
    def gelu(self, x, approximate="none"):
        self.check(x)
        if approximate == "tanh":
            inner = self.binary("mul", self.binary("add", x, self.binary(
                "mul", self.binary("mul", self.binary("mul", x, x), x), 0.044715)), math.sqrt(2 / math.pi))
            return self.binary("mul", self.binary("mul", x, 0.5), self.binary("add", self.unary("tanh", inner), 1.0))
        e = self.unary("erf", self.binary("mul", x, 1 / math.sqrt(2)))
        return self.binary("mul", self.binary("mul", x, 0.5), self.binary("add", e, 1.0))

    def silu(self, x):
        return self.binary("mul", x, self.unary("sigmoid", x))

    def _upcast(self, x):
        if x.meta.dtype in (torch.float16, torch.bfloat16):
            return self.convert(x, torch.float32), x.meta.dtype
        return x, None

    def layer_norm(self, x, normalized_shape, w=None, b=None, eps=1e-5):
        self.check(x)
        x, low = self._upcast(x)
        k = len(tuple(normalized_shape)) if isinstance(normalized_shape, (tuple, list, torch.Size)) else 1
        dims = list(range(x.meta.dim() - k, x.meta.dim()))
        m = self.reduce("mean", x, dims, True)
        d = self.binary("sub", x, m)
        v = self.reduce("mean", self.binary("mul", d, d), dims, True)
        y = self.binary("mul", d, self.unary("rsqrt", self.binary("add", v, float(eps))))
        if low is not None:
            y = self.convert(y, low)
        if w is not None:
            y = self.binary("mul", y, w)
        if b is not None:
            y = self.binary("add", y, b)
        return y

    def rms_norm(self, x, normalized_shape, w=None, eps=None):
        self.check(x)
        x, low = self._upcast(x)
        k = len(tuple(normalized_shape)) if isinstance(normalized_shape, (tuple, list, torch.Size)) else 1
        dims = list(range(x.meta.dim() - k, x.meta.dim()))
        if eps is None:
            eps = torch.finfo(low or x.meta.dtype).eps
        ms = self.reduce("mean", self.binary("mul", x, x), dims, True)
        y = self.binary("mul", x, self.unary("rsqrt", self.binary("add", ms, float(eps))))
        if low is not None:
            y = self.convert(y, low)
        if w is not None:
            y = self.binary("mul", y, w)
        return y
