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


# Prim-level functions with dynamic dims go through fusion (dyn-fuse-prim-to-loop) to the same kernels: a softmax
# over rows of any length is one row kernel; a temporary of a dynamic shape feeds a GEMM.
PRIM_SOFTMAX_GEMM = """
func.func @forward(%x: tensor<?x?xf32>, %a: tensor<?x8xf32>, %w: tensor<8x4xf32>, %bias: tensor<4xf32>)
    -> (tensor<?x?xf32>, tensor<?x4xf32>) {
  %n = prim.dim %x, 0 : tensor<?x?xf32>
  %m = prim.dim %x, 1 : tensor<?x?xf32>
  %mx = prim.reduce_max %x dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %b = prim.broadcast_in_dim %mx dims [0] sizes(%n, %m) : tensor<?xf32> -> tensor<?x?xf32>
  %d = prim.sub %x, %b : tensor<?x?xf32>
  %e = prim.exp %d : tensor<?x?xf32>
  %s = prim.reduce_sum %e dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %sb = prim.broadcast_in_dim %s dims [0] sizes(%n, %m) : tensor<?xf32> -> tensor<?x?xf32>
  %r = prim.div %e, %sb : tensor<?x?xf32>
  %t = prim.tanh %a : tensor<?x8xf32>
  %y = prim.dot_general %t, %w batch [], [] contract [1], [0] : tensor<?x8xf32>, tensor<8x4xf32> -> tensor<?x4xf32>
  %k = prim.dim %a, 0 : tensor<?x8xf32>
  %bb = prim.broadcast_in_dim %bias dims [1] sizes(%k) : tensor<4xf32> -> tensor<?x4xf32>
  %z = prim.add %y, %bb : tensor<?x4xf32>
  return %r, %z : tensor<?x?xf32>, tensor<?x4xf32>
}
"""


def test_prim_function_with_dynamic_dims_compiles_once():
    c = compiled(PRIM_SOFTMAX_GEMM, 6)
    w, bias = torch.randn(8, 4), torch.randn(4)
    for rows, cols, k in [(1, 1, 1), (3, 17, 5), (64, 300, 130), (1000, 2, 2)]:
        x, a = torch.randn(rows, cols), torch.randn(k, 8)
        soft, lin = torch.empty(rows, cols), torch.empty(k, 4)
        run(c, [x, a, w, bias], [soft, lin])
        torch.testing.assert_close(soft, torch.softmax(x, -1))
        torch.testing.assert_close(lin, torch.tanh(a) @ w + bias)


# Graph-level elementwise ops take dynamic dims (docs/dynamic_shapes.md): broadcasting, type promotion and a
# comparison compiled once through every stage, run at many sizes.
GRAPH_ELEMENTWISE = """
func.func @forward(%a: tensor<?x?xf32>, %b: tensor<?xf32>, %c: tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xi1>) {
  %0 = graph.mul %a, %b : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %1 = graph.tanh %0 : tensor<?x?xf32> -> tensor<?x?xf32>
  %2 = graph.sub %1, %c : tensor<?x?xf32>, tensor<?x?xf64> -> tensor<?x?xf64>
  %3 = graph.gt %2, %a : tensor<?x?xf64>, tensor<?x?xf32> -> tensor<?x?xi1>
  return %2, %3 : tensor<?x?xf64>, tensor<?x?xi1>
}
"""


def test_graph_elementwise_ops_with_dynamic_dims_compile_once():
    c = compiled(GRAPH_ELEMENTWISE, 5)
    for rows, cols in [(1, 1), (3, 17), (129, 64), (7, 5000)]:
        a, b, cc = torch.randn(rows, cols), torch.randn(cols), torch.randn(rows, cols, dtype=torch.float64)
        out, mask = torch.empty(rows, cols, dtype=torch.float64), torch.empty(rows, cols, dtype=torch.bool)
        run(c, [a, b, cc], [out, mask])
        ref = torch.tanh(a * b).double() - cc
        # tanh is computed in float32 (as eager's): float32's tolerance for it
        torch.testing.assert_close(out, ref, rtol=1.3e-6, atol=1e-5)
        assert torch.equal(mask, out > a)
