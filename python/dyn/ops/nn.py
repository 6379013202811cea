"""Linear algebra and activations, decomposed into graph ops (Ops mixin); normalizations are in norms.py."""
import math

import torch

from ..errors import Unsupported
from .tensor import TensorVar


class NNOps:
    # -- linear algebra ----------------------------------------------------------------------------
    def _matmul_meta(self, a, b):
        """torch.matmul's result meta; with symbolic sizes from its shape rule (ATen's composite matmul
        guards on them), the inner sizes' equality a guard."""
        if self.g.fake_mode is None:
            return self.tr.session.metas.call(torch.matmul, a, b)
        na, nb = a.dim(), b.dim()
        if na == 0 or nb == 0:
            raise Unsupported("matmul of a 0-d tensor")
        k1, k2 = a.shape[-1], b.shape[-2 if nb > 1 else 0]
        if k1 != k2:
            raise Unsupported("matmul of mismatched inner sizes (eager raises)")
        if na == 1 and nb == 1:
            shape = ()
        elif nb == 1:
            shape = tuple(a.shape[:-1])
        elif na == 1:
            shape = tuple(b.shape[:-2]) + (b.shape[-1],)
        else:
            batch = torch.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
            shape = tuple(batch) + (a.shape[-2], b.shape[-1])
        dt = torch.promote_types(a.dtype, b.dtype)
        if a.dtype != b.dtype:
            raise Unsupported("matmul of mixed dtypes (eager raises)")
        with self.g.fake_mode:
            return torch.empty(shape, dtype=dt, device="meta")

    def matmul(self, a, b):
        self.check(a, b)
        meta = self._matmul_meta(a.meta, b.meta)
        self.accepts("matmul", torch.matmul, a, b)  # booleans raise
        dt = meta.dtype
        a, b = self.convert(a, dt), self.convert(b, dt)
        na, nb = a.meta.dim(), b.meta.dim()
        if na == 0 or nb == 0:
            raise Unsupported("matmul of a 0-d tensor")
        if na == 1 and nb == 1:  # graph.vecdot (eager's dot): integers wrap in their type
            return self.node("vecdot", [a, b], meta, dim=0)
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
            a2 = self.reshape(a, (math.prod(a.meta.shape[:-1]), k))  # not -1: ambiguous without elements
            r = self.node("matmul", [a2, b], self._matmul_meta(a2.meta, b.meta))
            return self.reshape(r, meta.shape)
        # batched: broadcast batch dims, flatten to 3-D
        batch = tuple(meta.shape[:-2])
        a3 = self.expand(a, batch + tuple(a.meta.shape[-2:]))
        b3 = self.expand(b, batch + tuple(b.meta.shape[-2:]))
        a3 = self.reshape(a3, (math.prod(batch),) + tuple(a.meta.shape[-2:]))
        b3 = self.reshape(b3, (math.prod(batch),) + tuple(b.meta.shape[-2:]))
        r = self.node("matmul", [a3, b3], self._matmul_meta(a3.meta, b3.meta))
        return self.reshape(r, meta.shape)

    def addmm(self, x, a, b, beta, alpha, meta):
        """graph.addmm: beta * x + alpha * (a @ b), a and b 2-D or 3-D, meta eager's result (torch.addmm,
        baddbmm, ...): its dtype and shape. beta 0 ignores x (NaN too); integer types truncate alpha and
        beta as eager's integer GEMMs do (a negative one for uint8 is not captured)."""
        self.check(x, a, b)
        dt = meta.dtype
        if dt == torch.bool:
            raise Unsupported("a GEMM of boolean tensors (eager's take none)")
        for f in (beta, alpha):
            if isinstance(f, bool) or not isinstance(f, (int, float)):
                raise Unsupported("beta or alpha that is not a number")
            if dt == torch.uint8 and f < 0:
                raise Unsupported("a negative beta or alpha for uint8 tensors")
        x, a, b = (self.convert(v, dt) for v in (x, a, b))
        return self.node("addmm", [x, a, b], meta, alpha=float(alpha), beta=float(beta))

    def linear(self, x, w, b=None):
        """F.linear as ATen's dispatch runs it: with a bias, a 2-d input, or a contiguous one (3-d, or with a
        1-d bias) viewed as 2-d, is one addmm (one rounding of the sum in float16/bfloat16); otherwise
        matmul, then the bias added."""
        self.check(x, w)
        wt = self.transpose(w, 0, 1) if w.meta.dim() == 2 else w
        nd = x.meta.dim()
        if b is not None and w.meta.dim() == 2 and isinstance(b, TensorVar) and nd >= 1 and \
                (nd == 2 or (x.meta.is_contiguous() and (nd == 3 or b.meta.dim() == 1))):
            shape = tuple(x.meta.shape)
            x2 = self.reshape(x, (math.prod(shape[:-1]), shape[-1]))
            try:
                meta = torch.addmm(b.meta, x2.meta, wt.meta)
            except (RuntimeError, TypeError, ValueError) as e:
                raise Unsupported(f"linear: {e}")  # eager raises
            self.accepts("linear", torch.nn.functional.linear, x, w, b)
            return self.reshape(self.addmm(b, x2, wt, 1, 1, meta), shape[:-1] + (meta.shape[1],))
        y = self.matmul(x, wt)
        if b is not None:
            y = self.binary("add", y, b)
        return y

    def gelu(self, x, approximate="none"):
        """graph.gelu (the registry's; GraphToPrim/Activations.cpp decomposes it)."""
        return self.registered("gelu", torch.nn.functional.gelu, (x,), {"approximate": approximate})

    def _upcast(self, x):
        if x.meta.dtype in (torch.float16, torch.bfloat16):
            return self.convert(x, torch.float32), x.meta.dtype
        return x, None
