"""Matrix products written as GEMM library calls (ops/handlers/linalg.py): einsum (not an OpInfo dyn can
claim: its OpInfo calls a lambda), tensordot, addbmm and friends, against eager. test_opinfo.py covers the
others' OpInfo samples; here: einsum's OpInfo samples and the patterns models use, what becomes a GEMM,
and aliasing."""
import warnings

import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import dyn
from conftest import BACKENDS, has_compiler


def run(fn, *args, backend, **tol):
    expected = fn(*args)
    compiled = dyn.compile(fn, backend=backend, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = compiled(*args)
    if backend == "dyn":
        assert dyn.stats()["compiled_graphs"] >= 1 and not dyn.stats()["eager_graphs"]
    assert got.shape == expected.shape and got.dtype == expected.dtype
    torch.testing.assert_close(got, expected, **tol)
    return got


_EINSUM = next(op for op in op_db if op.name == "einsum")


def _einsum_samples(dtype):
    torch.manual_seed(0)
    return [(s.args[0], tuple(s.input)) for s in _EINSUM.sample_inputs("cpu", dtype)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_einsum_opinfo_samples(dtype, backend):
    """Every OpInfo sample compiles natively and equals eager, except a repeated subscript in one operand
    (a diagonal: not captured, a graph break)."""
    for eq, ops in _einsum_samples(dtype):
        dyn.reset()
        terms = eq.replace(" ", "").split("->")[0].split(",")
        if any(len(set(t.replace("...", ""))) != len(t.replace("...", "")) for t in terms):
            with pytest.raises(dyn.Unsupported, match="repeated subscript"):
                dyn.compile(lambda *xs: torch.einsum(eq, *xs), fullgraph=True)(*ops)
            continue
        run(lambda *xs: torch.einsum(eq, *xs), *ops, backend=backend)


EINSUMS = {
    "attention_scores": ("bhqd,bhkd->bhqk", [(2, 3, 5, 8), (2, 3, 6, 8)]),
    "attention_values": ("bhqk,bhkd->bhqd", [(2, 3, 5, 6), (2, 3, 6, 8)]),
    "heads_last": ("bqhd,bkhd->bhqk", [(2, 5, 3, 8), (2, 6, 3, 8)]),
    "linear": ("...i,oi->...o", [(2, 4, 7), (5, 7)]),
    "implicit_output": ("ij,jk", [(3, 4), (4, 5)]),
    "broadcast_size_one": ("bij,bjk->bik", [(1, 3, 4), (2, 4, 5)]),
    "three_operands": ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    "private_sum": ("ijk,j->i", [(3, 4, 5), (4,)]),
    "outer_batch": ("bi,bj->bij", [(2, 3), (2, 4)]),
    "trace_free_sum": ("ij->", [(3, 4)]),
    "bilinear": ("bi,oij,bj->bo", [(2, 3), (5, 3, 4), (2, 4)]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(EINSUMS))
def test_einsum_patterns(case, backend):
    eq, shapes = EINSUMS[case]
    torch.manual_seed(0)
    xs = [torch.randn(s) for s in shapes]
    run(lambda *xs: torch.einsum(eq, *xs), *xs, backend=backend, rtol=1e-5, atol=1e-5)
    run(lambda *xs: torch.einsum(eq, xs), *xs, backend=backend, rtol=1e-5, atol=1e-5)  # operands as a list


def test_einsum_permutation_is_a_view():
    """One operand, nothing summed: eager returns a view of it; so does dyn (a write through it shows)."""
    def f(x):
        y = torch.einsum("ij->ji", x)
        y.mul_(2)
        return x + 0

    x = torch.randn(3, 4)
    want = f(x.clone())
    x2 = x.clone()
    got = dyn.compile(f, fullgraph=True)(x2)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(x2, want)


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
@pytest.mark.parametrize("case", ["einsum", "addbmm", "tensordot", "mv", "addmv", "inner"])
def test_products_are_one_gemm_with_fused_epilogue(case):
    """Each product is one loop.matmul (the GEMM library call) and the pointwise work after it (scale,
    added term, ReLU) is one kernel, not one per op."""
    torch.manual_seed(0)
    a, b, x = torch.randn(3, 5, 4), torch.randn(3, 4, 6), torch.randn(5, 6)
    fns = {
        "einsum": (lambda a, b, x: torch.relu(torch.einsum("bij,bjk->bik", a, b) * 2 + 1), (a, b, x)),
        "addbmm": (lambda a, b, x: torch.relu(torch.addbmm(x, a, b, beta=0.5, alpha=2.0)), (a, b, x)),
        "tensordot": (lambda a, b, x: torch.relu(torch.tensordot(a, b, ([0, 2], [0, 1])) + x), (a, b, x)),
        "mv": (lambda a, b, x: torch.relu(torch.mv(x, b[0, 0]) * 3), (a, b, x)),
        "addmv": (lambda a, b, x: torch.relu(torch.addmv(x[:, 0], x, b[0, 0], alpha=2.0)), (a, b, x)),
        "inner": (lambda a, b, x: torch.relu(torch.inner(x, b[0]) - 1), (a, b, x)),
    }
    fn, args = fns[case]
    compiled = dyn.compile(fn, fullgraph=True, options={"keep_stages": True})
    torch.testing.assert_close(compiled(*args), fn(*args), rtol=1e-5, atol=1e-5)
    loop_ir = dict(compiled.stages()[0])["loop"]
    assert loop_ir.count("loop.matmul") == 1, loop_ir
    after = loop_ir.split("loop.matmul", 1)[1]
    assert after.count("loop.kernel") == 1, loop_ir


@pytest.mark.parametrize("case", ["diagonal", "sublist", "bad_subscripts"])
def test_einsum_not_captured(case):
    x = torch.randn(3, 3)
    fns = {
        "diagonal": lambda x: torch.einsum("ii->i", x),
        "sublist": lambda x: torch.einsum(x, [0, 1], [1, 0]),
        "bad_subscripts": lambda x: torch.einsum("ijk->i", x),  # eager raises: three subscripts, two dims
    }
    with pytest.raises(dyn.Unsupported):
        dyn.compile(fns[case], fullgraph=True)(x)


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
@pytest.mark.parametrize("cpu_gemm", ["runtime", "library"])
@pytest.mark.parametrize("form", ["mm", "linear", "bmm", "bmm_t"])
def test_cpu_gemm_choice(form, cpu_gemm):
    """options={"cpu_gemm": ...} picks dyn's runtime matmul or the library call (ATen) for every f32/f64
    GEMM (benchmarks/cpu_gemm.py compares them); both give eager's results, odd sizes (partial tiles and
    blocks, K > 512 panels) included."""
    torch.manual_seed(0)
    x, w, xb = torch.randn(67, 601), torch.randn(129, 601), torch.randn(3, 33, 601)
    fns = {"mm": lambda x, w, xb: x @ w.t().contiguous(), "linear": lambda x, w, xb: torch.nn.functional.linear(x, w),
           "bmm": lambda x, w, xb: xb @ w[:15].reshape(3, 5, 601).transpose(1, 2).contiguous(),
           "bmm_t": lambda x, w, xb: xb @ xb.transpose(1, 2)}
    fn = fns[form]
    compiled = dyn.compile(fn, fullgraph=True, options={"cpu_gemm": cpu_gemm, "keep_stages": True})
    torch.testing.assert_close(compiled(x, w, xb), fn(x, w, xb), rtol=1e-4, atol=1e-4)
    llvm = dict(compiled.stages()[0])["llvm"]
    assert ("dyn_matmul" in llvm) == (cpu_gemm == "runtime"), llvm[:2000]
