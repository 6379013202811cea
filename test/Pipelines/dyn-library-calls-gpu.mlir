// RUN: dyn-opt %s -dyn-graph-to-prim -dyn-prim-to-loop-gpu -dyn-convert-loop-to-gpu | FileCheck %s
// RUN: dyn-opt %s -dyn-gpu | FileCheck %s --check-prefix=PTX

// Library calls by name on the GPU path: they stay in the host function as
// loop.library_call, in order between the launches of the kernels around
// them (the launch plan makes each a step with all its output buffers): the
// kernels computing topk's operand and the Cholesky factor's matrix (small
// values of the arguments alone, computed first), the call writing values and
// indices, the kernel reading the values after it, then the Cholesky factor.
// CHECK-LABEL: func.func @topk_cholesky
// CHECK: gpu.launch blocks
// CHECK: dyn.kernel = "exp_0"
// CHECK: gpu.launch blocks
// CHECK: dyn.kernel = "mul_1"
// CHECK-NEXT: loop.library_call "topk" ins(%{{.*}} : memref<4x16xf32>) outs(%{{.*}}, %{{.*}} : memref<4x3xf32>, memref<4x3xi64>) params [3, 1, 1, 1]
// CHECK: gpu.launch blocks
// CHECK: dyn.kernel = "neg_2"
// CHECK-NEXT: loop.library_call "linalg_cholesky" ins(%{{.*}} : memref<3x3xf64>) outs(%{{.*}} : memref<3x3xf64>) params [0]
// PTX-LABEL: func.func @topk_cholesky
// PTX: gpu.launch_func
// PTX: loop.library_call "topk"
// PTX: gpu.launch_func
// PTX: loop.library_call "linalg_cholesky"
// PTX: gpu.binary
func.func @topk_cholesky(%x: tensor<4x16xf32>, %a: tensor<3x3xf64>) -> (tensor<4x3xf32>, tensor<4x3xi64>, tensor<3x3xf64>) {
  %e = graph.exp %x : tensor<4x16xf32> -> tensor<4x16xf32>
  %t:2 = graph.topk %e {k = 3 : i64, dim = 1 : i64, largest = true, sorted = true} : (tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi64>)
  %v = graph.neg %t#0 : tensor<4x3xf32> -> tensor<4x3xf32>
  %aa = graph.mul %a, %a : tensor<3x3xf64>, tensor<3x3xf64> -> tensor<3x3xf64>
  %l = graph.linalg_cholesky %aa {upper = false} : (tensor<3x3xf64>) -> (tensor<3x3xf64>)
  return %v, %t#1, %l : tensor<4x3xf32>, tensor<4x3xi64>, tensor<3x3xf64>
}
