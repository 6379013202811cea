// RUN: dyn-opt %s -dyn-graph-to-prim | FileCheck %s

// The stage decomposes and cleans up: no graph op is left and the constant
// exponent folds into a multiply.
// CHECK-LABEL: func @rmsnorm
// CHECK-NOT: graph.
// CHECK: prim.mul %[[X:.*]], %[[X]]
// CHECK: prim.reduce_sum
// CHECK: prim.rsqrt
func.func @rmsnorm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %c2 = graph.constant dense<2.0> : tensor<f32>
  %sq = graph.pow %x, %c2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %m = graph.mean %sq dims [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = graph.constant dense<1.0e-6> : tensor<f32>
  %a = graph.add %m, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = graph.rsqrt %a : tensor<4x1xf32> -> tensor<4x1xf32>
  %y = graph.mul %x, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %z = graph.mul %y, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}
