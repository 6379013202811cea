"""float64 -> bfloat16 / float16 conversions, and float32 subnormals to bfloat16.

Captured code converts as eager does: float64 -> float32 -> half type (c10's conversions round twice), so
results are bit-identical to eager's, double-rounding ties included.

A graph-dialect convert from f64 straight to bf16/f16 (the IR dyn's users may write: dyn-opt, the C API)
rounds once, from the double: LLVM lowers it to compiler-rt's __truncdfbf2 / __truncdfhf2, which dyn links
(lib/CMakeLists.txt) and hands to the CPU JIT (lib/Compiler/Compiler.cpp)."""
import pytest
import torch

import dyn
from dyn import backends
from dyn.graph import Graph
from conftest import has_compiler

# (value, its bf16 bits rounded once from the double, its f16 bits likewise) where rounding via float32
# gives another result: above the halfway point only in float64 (via f32 it is a tie, rounded to even)
TIES = [(1.0 + 2 ** -8 + 2 ** -30, 0x3F81, 0x3C04), (1.0 + 2 ** -11 + 2 ** -40, 0x3F80, 0x3C01)]
VALUES = [1.0 + 2 ** -9, 3.0000001, -2.5, 0.0, -0.0, 1e-40, 2 ** -25 + 2 ** -40, 65519.0, 65520.0, 1e6, 3.4e38,
          1e300, float("inf"), float("-inf"), float("nan")]
DTYPES = [torch.bfloat16, torch.float16]


def bits(t):
    return t.view(torch.int16).tolist()


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
@pytest.mark.parametrize("dtype", DTYPES)
def test_captured_conversion_is_eager_bitwise(dtype):
    x = torch.tensor([v for v, _, _ in TIES] + VALUES, dtype=torch.float64)
    f = dyn.compile(lambda t: t.to(dtype) * 1, fullgraph=True)
    got, want = f(x), x.to(dtype) * 1
    assert dyn.stats()["compiled_graphs"] == 1 and not dyn.stats()["eager_graphs"]
    assert got.dtype == dtype and bits(got) == bits(want)


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
@pytest.mark.parametrize("dtype", DTYPES)
def test_graph_convert_rounds_once_through_compiler_rt(dtype):
    g = Graph()
    a = g.add_input(torch.empty(len(TIES) + len(VALUES), dtype=torch.float64, device="meta"))
    g.outputs = [g.add("convert", [a], a.meta.to(dtype))]
    assert "graph.convert" in str(g) and "f64" in str(g)
    x = torch.tensor([v for v, _, _ in TIES] + VALUES, dtype=torch.float64)
    (got,) = backends.DynCPUKernel(g)(x)
    once = [b if dtype == torch.bfloat16 else h for _, b, h in TIES]
    assert bits(got[:len(TIES)]) == [b - (1 << 16) if b >= 1 << 15 else b for b in once]
    assert bits(got[len(TIES):]) == bits(x[len(TIES):].to(dtype))  # no double-rounding tie: eager's


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
def test_float32_subnormals_to_bfloat16_are_kept():
    """AVX512-BF16's conversion instruction flushes subnormal floats to zero; the JIT does not use it."""
    x = torch.tensor([1e-40, 1e-39, 5e-41, -1e-39, 1.17e-38, 1.0 + 2 ** -8], dtype=torch.float32)
    got = dyn.compile(lambda t: t.bfloat16() * 1, fullgraph=True)(x)
    assert bits(got) == bits(x.bfloat16() * 1)
    assert bits(got)[0] != 0
