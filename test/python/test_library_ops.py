"""Selection and linalg ops as library calls with several outputs (GraphLibraryOps.td, ATen's kernels through
loop.library_call): compiled natively (one graph, no fallback) with eager's results, returned as eager's
torch.return_types (attribute and index access), mixed with dyn kernels before and after the call."""
import pytest
import torch
import torch.nn.functional as F

import dyn
from conftest import has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _spd(n, dtype, device):
    a = torch.randn(n, n, dtype=dtype, device=device)
    return a @ a.mT + n * torch.eye(n, dtype=dtype, device=device)


def _native(fn, *args):
    dyn.reset()
    want = fn(*args)
    got = dyn.compile(fn, backend="dyn", fullgraph=True)(*args)
    stats = dyn.stats()
    assert stats["compiled_graphs"] >= 1 and not stats["eager_graphs"], stats
    return got, want


def _same(got, want):
    assert type(got) is type(want)
    if isinstance(want, torch.Tensor):
        torch.testing.assert_close(got, want, equal_nan=True)
        return
    for g, w in zip(got, want):
        _same(g, w)


SELECTION = {
    # a kernel before the call (x * 2) and after it (values + 1), indices by attribute and subscript
    "sort": lambda x: (lambda r: (r.values + 1, r[1]))(torch.sort(x * 2, dim=1, descending=True)),
    "sort_stable": lambda x: torch.sort(x.round(), stable=True, dim=0),
    "argsort": lambda x: torch.argsort(x, dim=-1, descending=True),
    "msort": lambda x: torch.msort(x),
    "topk": lambda x: torch.topk(x, 3, dim=1),
    "topk_smallest_unsorted": lambda x: x.topk(2, 0, largest=False, sorted=False).indices.sort(0).values,
    "kthvalue": lambda x: torch.kthvalue(x, 2, 1, keepdim=True),
    "median": lambda x: torch.median(x),
    "median_dim": lambda x: x.median(dim=0),
    "nanmedian_dim": lambda x: torch.nanmedian(torch.where(x > 1, float("nan"), x), 1),
    "mode": lambda x: torch.mode(x.round(), 1),
    "aminmax": lambda x: torch.aminmax(x, dim=0, keepdim=True),
    "quantile": lambda x: torch.quantile(x, 0.3, dim=1, interpolation="midpoint"),
    "nanquantile_tensor_q": lambda x: torch.nanquantile(x, torch.tensor([0.25, 0.75], device=x.device)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", SELECTION)
def test_selection(name, device):
    torch.manual_seed(0)
    x = torch.randn(6, 8, device=device)
    got, want = _native(SELECTION[name], x)
    _same(got, want)


def test_sort_int64_and_float64():
    x = torch.randint(-5, 5, (4, 9))
    _same(*_native(lambda t: torch.sort(t, 1), x))
    y = torch.randn(3, 7, dtype=torch.float64)
    _same(*_native(lambda t: torch.topk(t, 4, 1, largest=False), y))


LINALG = {
    "cholesky": lambda a, b: torch.linalg.cholesky(a),
    "cholesky_ex": lambda a, b: torch.linalg.cholesky_ex(a, upper=True),
    "inv": lambda a, b: torch.linalg.inv(a) + 1,
    "inv_ex": lambda a, b: torch.linalg.inv_ex(a),
    "solve": lambda a, b: torch.linalg.solve(a, b),
    "solve_ex": lambda a, b: torch.linalg.solve_ex(a, b),
    "solve_triangular": lambda a, b: torch.linalg.solve_triangular(a.triu(), b, upper=True),
    "det": lambda a, b: torch.linalg.det(a * 0.5),
    "slogdet": lambda a, b: torch.linalg.slogdet(a),
    "logdet": lambda a, b: torch.logdet(a),
    "eigh": lambda a, b: torch.linalg.eigh(a, UPLO="U"),
    "eigvalsh": lambda a, b: torch.linalg.eigvalsh(a),
    "svd": lambda a, b: torch.linalg.svd(a, full_matrices=False),
    "svdvals": lambda a, b: torch.linalg.svdvals(a),
    "qr": lambda a, b: torch.linalg.qr(a),
    "lu": lambda a, b: torch.linalg.lu(a),
    "lu_factor_solve": lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b),
    "ldl": lambda a, b: torch.linalg.ldl_solve(*torch.linalg.ldl_factor(a), b),
    "matrix_exp": lambda a, b: torch.linalg.matrix_exp(a / 10),
    "matrix_power": lambda a, b: torch.linalg.matrix_power(a, 3),
    "pinv": lambda a, b: torch.linalg.pinv(a),
    "matrix_rank": lambda a, b: torch.linalg.matrix_rank(a),
    "matrix_norm_nuc": lambda a, b: torch.linalg.matrix_norm(a, "nuc"),
    "norm_2": lambda a, b: torch.linalg.norm(a, 2),
    "torch_norm_nuc": lambda a, b: torch.norm(a, p="nuc"),
    "cond": lambda a, b: torch.linalg.cond(a),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", LINALG)
def test_linalg(name, dtype, device):
    torch.manual_seed(0)
    a = _spd(4, dtype, device)
    b = torch.randn(4, 3, dtype=dtype, device=device)
    got, want = _native(LINALG[name], a, b)
    _same(got, want)


def test_batched_and_mlir_text():
    """A batched call; the graph-dialect text shows the op with its two results."""
    a = torch.stack([_spd(3, torch.float64, "cpu") for _ in range(2)])
    _same(*_native(lambda t: torch.linalg.eigh(t), a))
    out = dyn.explain(lambda t: torch.linalg.eigh(t))(a)
    assert "graph.linalg_eigh" in str(out.graphs[0])


def test_singular_matrix_raises_as_eager():
    """A data-dependent failure (ATen raises inside the call) falls back to eager with a warning, and eager
    raises its own error."""
    a = torch.zeros(3, 3)
    f = dyn.compile(lambda t: torch.linalg.cholesky(t))
    with pytest.raises(torch.linalg.LinAlgError), pytest.warns(UserWarning):
        f(a)


# Library calls of one result: torch.fft's transforms with real results (pocketfft/cuFFT), the pointwise
# functions eager computes with a loop over a value (the orthogonal polynomials, igamma/igammac),
# segment_reduce, histogram, and more LAPACK (geqrf, ormqr, torch.lu).
_POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "hermite_polynomial_h",
                "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]
MORE = {
    "irfft_n_dim_norm": lambda x: torch.fft.irfft(x * 2, n=10, dim=1, norm="ortho") + 1,
    "irfft": lambda x: torch.fft.irfft(x),
    "hfft": lambda x: torch.fft.hfft(x, 7, 0),
    "irfft2": lambda x: torch.fft.irfft2(x, s=(3, 10)),
    "hfft2_dim": lambda x: torch.fft.hfft2(x, dim=(0, 2), norm="forward"),
    "irfftn": lambda x: torch.fft.irfftn(x),
    "hfftn_s_dim": lambda x: torch.fft.hfftn(x, s=(4, 6), dim=(1, 2), norm="backward"),
    **{p: (lambda name: lambda x: getattr(torch.special, name)(x.tanh(), (x.abs() * 4).round()))(p)
       for p in _POLYNOMIALS},
    "igamma": lambda x: torch.igamma(x.abs() + 0.5, x.abs() * 2),
    "igammac": lambda x: torch.special.gammaincc(x.abs() + 0.5, x.abs() * 2) * 3,
    "segment_reduce_lengths": lambda x: torch.segment_reduce(x.flatten(), "max", lengths=torch.tensor([10, 30, 0, 20], device=x.device),
                                                            initial=1.0),
    "segment_reduce_offsets": lambda x: torch.segment_reduce(x.flatten(), "mean",
                                                            offsets=torch.tensor([0, 10, 40, 60], device=x.device), axis=0),
    "histogram": lambda x: torch.histogram(x, 7),
    "histogram_range_density": lambda x: torch.histogram(x * 2, 5, range=(-1.0, 2.0), density=True),
    "histogram_edges": lambda x: torch.histogram(x, torch.tensor([-2.0, -0.5, 0.0, 0.5, 3.0], device=x.device)),
    "geqrf": lambda x: torch.geqrf(x[0]),
    "ormqr": lambda x: (lambda a, tau: torch.ormqr(a, tau, x[1].mT, left=False, transpose=True))(*torch.geqrf(x[0])),
    "fractional_max_pool2d": lambda x: F.fractional_max_pool2d(x[None], 2, output_size=(3, 3), return_indices=True,
                                                              _random_samples=torch.full((1, 3, 2), 0.4, device=x.device)),
    "fractional_max_pool3d": lambda x: F.fractional_max_pool3d(x[None, None].expand(2, 2, 3, 4, 5).contiguous(), 2,
                                                              output_ratio=0.5,
                                                              _random_samples=torch.full((2, 2, 3), 0.7, device=x.device)),
    "max_pool2d_backward": lambda x: (lambda out, idx: torch.ops.aten.max_pool2d_with_indices_backward.default(
        out * 3, x[None], [2, 2], [1, 2], [0, 1], [1, 1], False, idx))(
            *F.max_pool2d(x[None], 2, (1, 2), (0, 1), return_indices=True)),
    "interpolate_antialias_bilinear": lambda x: F.interpolate(x[None], size=(2, 3), mode="bilinear", antialias=True),
    "interpolate_antialias_bicubic_scale": lambda x: F.interpolate(x[None], scale_factor=(0.6, 0.5), mode="bicubic",
                                                                   antialias=True, align_corners=True),
    "upsample_bilinear2d_aa_vec": lambda x: torch.ops.aten._upsample_bilinear2d_aa(x[None], None, False, [1.7, 0.9]),
    "rrelu_eval": lambda x: F.rrelu(x, 0.1, 0.4) * 2,
    # a mixture of experts' grouped GEMM: rows in groups by offsets (data), the last group's end short of
    # the rows (those rows are zero); torch._grouped_mm takes bfloat16 with 16-byte strides
    "grouped_mm": lambda x: torch._grouped_mm(
        (x.flatten()[:48].reshape(6, 8) * 2).bfloat16(),
        torch.linspace(-1, 1, 128, device=x.device).reshape(2, 8, 8).bfloat16(),
        offs=torch.tensor([2, 6], dtype=torch.int32, device=x.device)).float() + 1,
    "lu": lambda x: torch.lu(x[0]),
    "lu_infos": lambda x: torch.lu(x[0], get_infos=True),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", MORE)
def test_more_library_calls(name, device):
    if device == "cuda" and name.startswith("histogram"):
        pytest.skip("eager's histogram has no CUDA kernel")
    torch.manual_seed(0)
    x = torch.randn(3, 4, 5, device=device)
    _same(*_native(MORE[name], x))


# what transformers' mixture-of-experts layers call where torch._grouped_mm does not apply (float32, and
# always on the CPU): its custom op, one GEMM per group of rows
GROUPED_OFFSETS = {"groups": [3, 7, 9], "empty_groups": [0, 10, 10], "one_group": [4, 4, 6],
                   "decreasing": [2, 1, 12]}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("offsets", GROUPED_OFFSETS)
def test_transformers_grouped_mm(offsets, device):
    pytest.importorskip("transformers.integrations.moe")
    fn = lambda x, w, offs: torch.ops.transformers.grouped_mm_fallback(x * 2, w, offs=offs) - 1  # noqa: E731
    torch.manual_seed(0)
    x, w = torch.randn(10, 8, device=device), torch.randn(3, 8, 5, device=device)
    offs = torch.tensor(GROUPED_OFFSETS[offsets], dtype=torch.int32, device=device)
    _same(*_native(fn, x, w, offs))
    got = dyn.compile(fn, backend="eager", fullgraph=True)(x, w, offs)
    torch.testing.assert_close(got, fn(x, w, offs))


def _sort_call(params, operands=1):
    """A module calling library call `sort` directly with the given parameters (its op's attributes dim,
    descending, stable as GraphToPrim encodes them)."""
    args = ", ".join(f"%arg{k}" for k in range(operands))
    types = ", ".join(["tensor<4x8xf32>"] * operands)
    return f"""module {{
  func.func @forward({", ".join(f"%arg{k}: tensor<4x8xf32>" for k in range(operands))})
      -> (tensor<4x8xf32>, tensor<4x8xi64>) {{
    %r:2 = prim.library_call "sort"({args}) params [{params}] : ({types}) -> (tensor<4x8xf32>, tensor<4x8xi64>)
    return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xi64>
  }}
}}"""


def test_library_call_parameters_are_checked():
    """The generated glue (AtenCalls.inc) decodes a call's parameters into its op's typed attributes: a call
    whose parameters or operands are not its op's fails with the reason, instead of reading wrong values."""
    x = torch.randn(4, 8)
    values, indices = torch.empty(4, 8), torch.empty(4, 8, dtype=torch.long)
    dyn._C.compile(_sort_call("1, 1, 1"), "forward", False).run((x,), (values, indices))
    want = torch.sort(x, dim=1, descending=True, stable=True)
    assert torch.equal(values, want.values) and torch.equal(indices, want.indices)
    for params, operands, reason in (("1, 0", 1, "too few parameters"), ("1, 0, 1, 7", 1, "1 parameters left unread"),
                                     ("1, 0, 1", 2, "takes 1 operands, not 2")):
        call = dyn._C.compile(_sort_call(params, operands), "forward", False)
        with pytest.raises(RuntimeError, match=reason):
            call.run((x,) * operands, (values, indices))
