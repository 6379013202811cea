"""Capture of the library-call ops (GraphLibraryOps.td) whose PyTorch signature is not the op's: median and
nanmedian with and without a dim, quantile with a number or a tensor q, matrix norms and the condition
number (ord a number or a name), pinv and matrix_rank (tolerances as numbers), torch.fft's transforms with
real results, segment_reduce, histogram and geqrf (no meta functions: shapes from the operands'), and aminmax
(two native reductions, no call). The others have generated handlers (dyn/_ops_generated.py)."""
import torch

from ...errors import Unsupported
from ..tensor import TensorVar
from .reductions import H as REDUCTIONS, NORM as VECTOR_NORM
from ...dynamic.symbolic import meta_empty
from .registry import custom_op, fft, linalg, method, torch_function, torch_name


def _median(op, fn):
    def h(o, input, dim=None, keepdim=False, *, out=None):
        if out is not None:
            raise Unsupported(f"{op}(out=...)")
        if dim is None:
            return o.registered(op, fn, (input,), {}, call=fn)
        return o.registered(f"{op}_dim", fn, (input,), {"dim": dim, "keepdim": keepdim},
                            call=lambda x: fn(x, dim, keepdim=keepdim))
    return h


torch_name("median")(_median("median", torch.median))
torch_name("nanmedian")(_median("nanmedian", torch.nanmedian))


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


torch_name("quantile")(_quantile(torch.quantile, False))
torch_name("nanquantile")(_quantile(torch.nanquantile, True))


def _ord(o, what, v):
    """A norm order as (name, number): 'fro'/'nuc' by name, a number by value."""
    if isinstance(v, str):
        return v, 0.0
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise Unsupported(f"{what} with ord={v!r}")
    return "", float(v)


@linalg("matrix_norm")
def _matrix_norm(o, A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    if out is not None or dtype is not None:
        raise Unsupported("linalg.matrix_norm with out= or dtype=")
    name, number = _ord(o, "linalg.matrix_norm", ord)
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise Unsupported(f"linalg.matrix_norm with dim={dim!r}")
    return o.registered("linalg_matrix_norm", torch.linalg.matrix_norm, (A,),
                        {"ord_name": name, "ord": number, "dim": tuple(dim), "keepdim": keepdim},
                        call=lambda x: torch.linalg.matrix_norm(x, ord, dim, keepdim))


@linalg("cond")
def _cond(o, A, p=None, *, out=None):
    if out is not None:
        raise Unsupported("linalg.cond(out=...)")
    name, number = ("none", 0.0) if p is None else _ord(o, "linalg.cond", p)
    return o.registered("linalg_cond", torch.linalg.cond, (A,), {"p_name": name, "p": number},
                        call=lambda x: torch.linalg.cond(x, p))


@linalg("norm")
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


linalg("pinv")(_tolerances("pinv"))
linalg("matrix_rank")(_tolerances("matrix_rank"))


@torch_function(torch.norm)
@method("norm")
def NORM(o, x, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm and Tensor.norm: p='nuc' is the nuclear matrix norm over dim (the last two when None), a
    library call; the others are vector norms (handlers/reductions.py)."""
    if p == "nuc":
        if not isinstance(x, TensorVar):
            raise Unsupported(f"norm of a {type(x).__name__}")
        return _matrix_norm(o, x, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim, dtype=dtype, out=out)
    return VECTOR_NORM(o, x, p, dim, keepdim, out, dtype)


@torch_name("aminmax")
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


def _ints(what, v):
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,)
    if not isinstance(v, (tuple, list)) or not all(isinstance(d, int) and not isinstance(d, bool) for d in v):
        raise Unsupported(f"{what} with {v!r}")
    return tuple(v)


def _fft_real(kind):
    """torch.fft.irfft/hfft (n, dim), irfft2/hfft2 (s, dim=(-2, -1)) and irfftn/hfftn (s, dim) of a real
    input: one fft_real library call (complex results are not graph types)."""
    fn = getattr(torch.fft, kind)
    one_d, two_d = kind in ("irfft", "hfft"), kind.endswith("2")

    def h(o, input, s=None, dim=-1 if one_d else ((-2, -1) if two_d else None), norm=None, *, out=None, **n):
        if one_d and n:  # irfft/hfft name s `n`
            s = n.pop("n", s)
        if n:
            raise Unsupported(f"fft.{kind} with {sorted(n)}")
        if out is not None:
            raise Unsupported(f"fft.{kind}(out=...)")
        if not isinstance(input, TensorVar) or input.meta.dtype.is_complex:
            raise Unsupported(f"fft.{kind} of a {getattr(getattr(input, 'meta', None), 'dtype', type(input))}")
        if not input.meta.dtype.is_floating_point:  # eager promotes integers and bools to the default dtype
            input = o.convert(input, torch.get_default_dtype())
        if norm is not None and not isinstance(norm, str):
            raise Unsupported(f"fft.{kind} with norm={norm!r}")
        sizes = () if s is None else _ints(f"fft.{kind}", s)
        dims = () if dim is None else _ints(f"fft.{kind}", dim)
        attrs = {"kind": kind, "has_s": s is not None, "s": sizes, "has_dim": dim is not None, "dim": dims,
                 "norm": norm or ""}
        return o.registered("fft_real", fn, (input,), attrs, call=lambda x: fn(x, s, dim, norm))
    return h


for _kind in ("irfft", "hfft", "irfft2", "hfft2", "irfftn", "hfftn"):
    fft(_kind)(_fft_real(_kind))


@torch_name("segment_reduce")
def _segment_reduce(o, data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False,
                    initial=None):
    """torch.segment_reduce with segments given by lengths or offsets (indices: not implemented by eager)."""
    if indices is not None or (lengths is None) == (offsets is None):
        raise Unsupported("segment_reduce without exactly one of lengths and offsets")
    segments = offsets if lengths is None else lengths
    if not isinstance(segments, TensorVar):
        raise Unsupported(f"segment_reduce with segments of type {type(segments).__name__}")
    key = "lengths" if lengths is not None else "offsets"
    attrs = {"reduce": reduce, "use_offsets": lengths is None, "axis": axis, "unsafe": unsafe,
             "has_initial": initial is not None, "initial": 0.0 if initial is None else initial}
    return o.registered("segment_reduce", torch.segment_reduce, (data, segments), attrs,
                        call=lambda d, g: torch.segment_reduce(d, reduce, **{key: g}, axis=axis, unsafe=unsafe,
                                                               initial=initial))


def _metas(kind, *metas):
    return getattr(torch.return_types, kind)(metas)


@torch_name("histogram")
def _histogram(o, input, bins=100, *, range=None, weight=None, density=False, out=None):
    """torch.histogram without weights: bins a count (edges over range, or the input's min and max) or a 1-d
    tensor of edges. PyTorch has no meta function for it; the shapes come from bins alone."""
    if weight is not None or out is not None:
        raise Unsupported("histogram with weight= or out=")
    if not isinstance(input, TensorVar) or not input.meta.dtype.is_floating_point:
        raise Unsupported("histogram of a non-floating tensor")
    dt = input.meta.dtype
    if isinstance(bins, TensorVar):
        if bins.meta.dim() != 1 or bins.meta.dtype != dt or bins.meta.numel() < 1 or range is not None:
            raise Unsupported("histogram: bins must be a 1-d tensor of the input's dtype, without range")
        n = bins.meta.numel()
        metas = _metas("histogram", meta_empty(n - 1, dtype=dt, device="meta"),
                       meta_empty(n, dtype=dt, device="meta"))
        return o.multi_result("histogram_edges", (input, bins), metas, {"density": bool(density)})
    if isinstance(bins, bool) or not isinstance(bins, int) or bins <= 0:
        raise Unsupported(f"histogram with bins={bins!r}")
    if range is not None and (len(range) != 2 or not all(isinstance(v, (int, float)) for v in range)):
        raise Unsupported(f"histogram with range={range!r}")
    lo, hi = (0.0, 0.0) if range is None else (float(range[0]), float(range[1]))
    metas = _metas("histogram", meta_empty(bins, dtype=dt, device="meta"),
                   meta_empty(bins + 1, dtype=dt, device="meta"))
    return o.multi_result("histogram", (input,), metas, {"bins": bins, "has_range": range is not None, "lo": lo,
                                                         "hi": hi, "density": bool(density)})


@torch_name("geqrf")
def _geqrf(o, input, *, out=None):
    """torch.geqrf: a (column-major, as LAPACK leaves it) and tau; shapes from the input's (no meta function)."""
    if out is not None or not isinstance(input, TensorVar):
        raise Unsupported("geqrf with out= or of a non-tensor")
    m = input.meta
    if m.dim() < 2 or not m.dtype.is_floating_point:
        raise Unsupported("geqrf of a non-matrix or non-floating tensor")  # eager raises
    *batch, rows, cols = m.shape
    a = meta_empty(*batch, cols, rows, dtype=m.dtype, device="meta").transpose(-2, -1)
    tau = meta_empty(*batch, min(rows, cols), dtype=m.dtype, device="meta")
    return o.multi_result("geqrf", (input,), _metas("geqrf", a, tau), {})


def _fractional_max_pool(nd):
    """torch._C._nn.fractional_max_pool2d/3d(input, kernel_size, output_size, random_samples): one library
    call with eager's windows (F.fractional_max_pool draws the samples: torch.rand, a random op)."""
    fn = getattr(torch._C._nn, f"fractional_max_pool{nd}d")

    def h(o, input, kernel_size, output_size, random_samples):
        if not isinstance(input, TensorVar) or not isinstance(random_samples, TensorVar):
            raise Unsupported(f"fractional_max_pool{nd}d of non-tensors")
        k = _ints(f"fractional_max_pool{nd}d", kernel_size)
        size = _ints(f"fractional_max_pool{nd}d", output_size)
        k, size = (k * nd if len(k) == 1 else k), (size * nd if len(size) == 1 else size)
        return o.registered("fractional_max_pool", fn, (input, random_samples),
                            {"kernel_size": k, "output_size": size},
                            call=lambda x, r: fn(x, list(k), list(size), r))
    return h


def _max_pool2d_backward(o, grad_output, input, kernel_size, stride, padding, dilation, ceil_mode, indices):
    """aten.max_pool2d_with_indices_backward: one library call (the int lists as ATen reads them)."""
    fn = torch.ops.aten.max_pool2d_with_indices_backward.default
    lists = [_ints("max_pool2d_with_indices_backward", v) for v in (kernel_size, stride, padding, dilation)]
    return o.registered("max_pool2d_backward", fn, (grad_output, input, indices),
                        dict(zip(("kernel_size", "stride", "padding", "dilation"), lists), ceil_mode=bool(ceil_mode)),
                        call=lambda g, x, i: fn(g, x, *[list(v) for v in lists], bool(ceil_mode), i))


def _grouped_mm(fn):
    """A grouped GEMM of a mixture of experts: rows of a matrix in groups given by offsets (data), each
    group times its matrix of a 3-d weight (graph.grouped_mm, a library call). torch._grouped_mm's other
    forms (3-d x 3-d, offsets along K), a bias and another result dtype are not captured."""
    def h(o, *args, **kwargs):
        names = ("input", "weight", "offs", "bias", "out_dtype")
        given = dict(zip(names, args))
        for k, v in kwargs.items():
            given[{"self": "input", "mat_a": "input", "mat2": "weight", "mat_b": "weight"}.get(k, k)] = v
        x, w, offs = given.get("input"), given.get("weight"), given.get("offs")
        if given.get("bias") is not None or given.get("out_dtype") not in (None, getattr(x, "meta", x).dtype):
            raise Unsupported("grouped_mm with a bias or another result dtype")
        if not all(isinstance(v, TensorVar) for v in (x, w, offs)) or (x.meta.dim(), w.meta.dim()) != (2, 3):
            raise Unsupported("grouped_mm other than a matrix by a stack of matrices with offsets")
        return o.registered("grouped_mm", fn, (x, w, offs), {}, call=lambda a, b, c: fn(a, b, offs=c))
    return h


torch_function.all({torch._C._nn.fractional_max_pool2d: _fractional_max_pool(2),
                    torch._C._nn.fractional_max_pool3d: _fractional_max_pool(3),
                    torch.ops.aten.max_pool2d_with_indices_backward: _max_pool2d_backward,
                    torch.ops.aten.max_pool2d_with_indices_backward.default: _max_pool2d_backward,
                    torch._grouped_mm: _grouped_mm(torch._grouped_mm)})
if hasattr(torch.nn.functional, "grouped_mm"):
    torch_function(torch.nn.functional.grouped_mm)(_grouped_mm(torch.nn.functional.grouped_mm))


def _custom_grouped_mm(o, *args, **kwargs):
    return _grouped_mm(torch.ops.transformers.grouped_mm_fallback)(o, *args, **kwargs)


# custom ops (torch.ops.<namespace>.<name>, registered by the library that defines them, maybe after dyn is
# imported), by name
custom_op.all({"transformers.grouped_mm_fallback": _custom_grouped_mm})
