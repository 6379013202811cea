"""Capture of the library-call ops (GraphLibraryOps.td) whose PyTorch signature is not the op's: median and
nanmedian with and without a dim, quantile with a number or a tensor q, matrix norms and the condition
number (ord a number or a name), pinv and matrix_rank (tolerances as numbers), and aminmax (two native reductions, no call). The others have generated
handlers (dyn/_ops_generated.py)."""
import torch

from ...errors import Unsupported
from ..tensor import TensorVar
from .reductions import H as REDUCTIONS, NORM as VECTOR_NORM

H = {}  # name -> handler (torch.<name>, Tensor.<name>)
LINALG = {}  # torch.linalg.<name> -> handler


def _median(op, fn):
    def h(o, input, dim=None, keepdim=False, *, out=None):
        if out is not None:
            raise Unsupported(f"{op}(out=...)")
        if dim is None:
            return o.registered(op, fn, (input,), {}, call=fn)
        return o.registered(f"{op}_dim", fn, (input,), {"dim": dim, "keepdim": keepdim},
                            call=lambda x: fn(x, dim, keepdim=keepdim))
    return h


H["median"] = _median("median", torch.median)
H["nanmedian"] = _median("nanmedian", torch.nanmedian)


def _quantile(fn, ignore_nan):
    def h(o, input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
        if out is not None:
            raise Unsupported(f"{fn.__name__}(out=...)")
        if not isinstance(input, TensorVar):
            raise Unsupported(f"{fn.__name__} of a {type(input).__name__}")
        if not isinstance(q, TensorVar):
            if isinstance(q, bool) or not isinstance(q, (int, float)):
                raise Unsupported(f"{fn.__name__} with q={q!r}")
            # ATen makes a number q a 0-d tensor of the input's type (quantile(Tensor self, float q))
            q = o.dense(torch.tensor(float(q), dtype=input.meta.dtype))
        attrs = {"has_dim": dim is not None, "dim": 0 if dim is None else dim, "keepdim": keepdim,
                 "interpolation": interpolation, "ignore_nan": ignore_nan}
        return o.registered("quantile", fn, (input, q), attrs,
                            call=lambda x, qq: fn(x, qq, dim, keepdim, interpolation=interpolation))
    return h


H["quantile"] = _quantile(torch.quantile, False)
H["nanquantile"] = _quantile(torch.nanquantile, True)


def _ord(o, what, v):
    """A norm order as (name, number): 'fro'/'nuc' by name, a number by value."""
    if isinstance(v, str):
        return v, 0.0
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise Unsupported(f"{what} with ord={v!r}")
    return "", float(v)


def _matrix_norm(o, A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    if out is not None or dtype is not None:
        raise Unsupported("linalg.matrix_norm with out= or dtype=")
    name, number = _ord(o, "linalg.matrix_norm", ord)
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise Unsupported(f"linalg.matrix_norm with dim={dim!r}")
    return o.registered("linalg_matrix_norm", torch.linalg.matrix_norm, (A,),
                        {"ord_name": name, "ord": number, "dim": tuple(dim), "keepdim": keepdim},
                        call=lambda x: torch.linalg.matrix_norm(x, ord, dim, keepdim))


def _cond(o, A, p=None, *, out=None):
    if out is not None:
        raise Unsupported("linalg.cond(out=...)")
    name, number = ("none", 0.0) if p is None else _ord(o, "linalg.cond", p)
    return o.registered("linalg_cond", torch.linalg.cond, (A,), {"p_name": name, "p": number},
                        call=lambda x: torch.linalg.cond(x, p))


def _linalg_norm(o, A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """torch.linalg.norm: a matrix norm for a 2-d dim (or ord over a 2-d input without dim), otherwise the
    vector norm (handlers/reductions.py)."""
    if not isinstance(A, TensorVar):
        raise Unsupported(f"linalg.norm of a {type(A).__name__}")
    if isinstance(dim, int):
        dim = (dim,)
    matrix = (dim is not None and len(dim) == 2) or (dim is None and ord is not None and A.meta.dim() == 2)
    if matrix:
        return _matrix_norm(o, A, "fro" if ord is None else ord, tuple(dim) if dim is not None else (-2, -1),
                            keepdim, dtype=dtype, out=out)
    if isinstance(ord, str):
        raise Unsupported(f"linalg.norm with ord={ord!r} over {A.meta.dim()} dims (eager raises)")
    return REDUCTIONS["vector_norm"](o, A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)


def _tolerances(op):
    """linalg.pinv / linalg.matrix_rank with tolerances given as numbers or None (PyTorch's defaults)."""
    fn = getattr(torch.linalg, op)

    def h(o, A, *, atol=None, rtol=None, hermitian=False, out=None):
        for t in (atol, rtol):
            if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))):
                raise Unsupported(f"linalg.{op} with a tolerance of type {type(t).__name__}")
        if out is not None:
            raise Unsupported(f"linalg.{op}(out=...)")
        attrs = {"has_atol": atol is not None, "atol": float(atol or 0.0), "has_rtol": rtol is not None,
                 "rtol": float(rtol or 0.0), "hermitian": hermitian}
        return o.registered(f"linalg_{op}", fn, (A,), attrs,
                            call=lambda x: fn(x, atol=atol, rtol=rtol, hermitian=hermitian))
    return h


LINALG["pinv"] = _tolerances("pinv")
LINALG["matrix_rank"] = _tolerances("matrix_rank")
LINALG["matrix_norm"] = _matrix_norm
LINALG["cond"] = _cond
LINALG["norm"] = _linalg_norm


def NORM(o, x, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm and Tensor.norm: p='nuc' is the nuclear matrix norm over dim (the last two when None), a
    library call; the others are vector norms (handlers/reductions.py)."""
    if p == "nuc":
        if not isinstance(x, TensorVar):
            raise Unsupported(f"norm of a {type(x).__name__}")
        return _matrix_norm(o, x, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim, dtype=dtype, out=out)
    return VECTOR_NORM(o, x, p, dim, keepdim, out, dtype)


def _aminmax(o, input, *, dim=None, keepdim=False, out=None):
    """aminmax: amin and amax, two fused reductions (no library call)."""
    if out is not None:
        raise Unsupported("aminmax(out=...)")
    if not isinstance(input, TensorVar):
        raise Unsupported(f"aminmax of a {type(input).__name__}")
    try:
        torch.aminmax(input.meta, dim=dim, keepdim=keepdim)
    except (RuntimeError, TypeError, ValueError, IndexError) as e:
        raise Unsupported(f"aminmax: {e}")  # eager raises
    return torch.return_types.aminmax((o.reduce("amin", input, dim, keepdim), o.reduce("amax", input, dim, keepdim)))


H["aminmax"] = _aminmax
