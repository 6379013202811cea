"""Kernels over dynamic dims on the CPU (docs/dynamic_shapes.md): loop-dialect functions whose buffers have `?`
dims, compiled once and run at many sizes against PyTorch. The compiled function lists the sizes it takes after
the buffers (`buffer_sizes`: buffer index, dim)."""
import pytest
import torch

import dyn

pytestmark = pytest.mark.skipif(dyn._C is None or not getattr(dyn._C, "HAS_COMPILER", False),
                                reason="dyn._C without the compiler")

SIZES = (1, 3, 17, 1000, 70000)


def compiled(ir, buffers):
    return dyn._C.compile(ir, "forward", num_buffers=buffers)


def sizes_of(c, tensors):
    pairs = c.buffer_sizes
    return [tensors[pairs[i]].shape[pairs[i + 1]] for i in range(0, len(pairs), 2)]


def run(c, inputs, outputs):
    c.run(inputs, list(outputs) + sizes_of(c, list(inputs) + list(outputs)))


ELEMENTWISE = """
func.func @forward(%x: memref<?x16xf32>, %b: memref<16xf32>, %y: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x16xf32>
  loop.kernel "add_tanh" [%n, 16] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : memref<?x16xf32>
    %w = loop.load %b[%j] : memref<16xf32>
    %s = arith.addf %v, %w : f32
    %t = math.tanh %s : f32
    loop.store %t, %y[%i, %j] : memref<?x16xf32>
  }
  return
}
"""


def test_elementwise_kernel_runs_at_every_size():
    c = compiled(ELEMENTWISE, 3)
    assert c.buffer_sizes == [0, 0, 2, 0]
    b = torch.randn(16)
    for n in SIZES:
        x = torch.randn(n, 16)
        y = torch.full((n, 16), float("nan"))
        run(c, [x, b], [y])
        torch.testing.assert_close(y, torch.tanh(x + b))


# A softmax over a dynamic last dim: one row per point, its reductions and write loop to runtime bounds; the
# rows of a dynamic number (1-D domain: chunked at run time).
SOFTMAX = """
func.func @forward(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  loop.kernel "softmax" [%n] {
  ^bb0(%i: index):
    %mx = loop.reduce max [%m] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      loop.yield %v : f32
    }
    %s = loop.reduce add [%m] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      loop.yield %e : f32
    }
    loop.for [%m] {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      %r = arith.divf %e, %s : f32
      loop.store %r, %y[%i, %j] : memref<?x?xf32>
    }
  }
  return
}
"""


@pytest.mark.parametrize("rows,cols", [(1, 1), (5, 3), (300, 77), (2, 5000), (4097, 8)])
def test_row_kernel_with_dynamic_rows_and_columns(rows, cols):
    c = compiled(SOFTMAX, 2)
    x = torch.randn(rows, cols)
    y = torch.empty(rows, cols)
    run(c, [x], [y])
    torch.testing.assert_close(y, torch.softmax(x, -1))


@pytest.mark.parametrize("gemm", ["runtime", "library"])
def test_matmul_sizes_read_from_the_buffers(gemm):
    # dyn's runtime matmul takes M from the buffer; ATen's (a registered library call) a descriptor built when
    # the call runs.
    if gemm == "library" and not dyn._C.HAS_LIBRARY_CALLS:
        pytest.skip("no ATen library calls in this build")
    ir = f"""
module attributes {{dyn.cpu_gemm = "{gemm}"}} {{
func.func @forward(%a: memref<?x?xf32>, %b: memref<?x8xf32>, %c: memref<?x8xf32>) {{
  loop.matmul %a, %b, %c : memref<?x?xf32>, memref<?x8xf32>, memref<?x8xf32>
  return
}}
}}"""
    c = compiled(ir, 3)
    for m, k in [(1, 1), (7, 33), (130, 64), (1000, 5)]:
        a, b = torch.randn(m, k), torch.randn(k, 8)
        out = torch.empty(m, 8)
        run(c, [a, b], [out])
        torch.testing.assert_close(out, a @ b)


def test_static_functions_take_no_sizes():
    ir = ELEMENTWISE.replace("?x16", "4x16").replace("""  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<4x16xf32>
""", "").replace("[%n, 16]", "[4, 16]")
    c = compiled(ir, 3)
    assert c.buffer_sizes == [] and c.num_buffers == 3
