// RUN: dyn-opt %s -dyn-graph-to-prim -dyn-prim-to-loop | FileCheck %s

// Hand-written rmsnorm becomes one kernel: a reduction over the row, then one
// write pass that reads x and w.
// CHECK-LABEL: func @rmsnorm
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[W:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<4x8xf32>)
// CHECK: loop.kernel "{{.*}}" [4]
// CHECK: loop.reduce add [8]
// CHECK: math.rsqrt
// CHECK: loop.for [8]
// CHECK: loop.load %[[W]]
// CHECK: loop.store %{{.*}}, %[[OUT]]
// CHECK-NOT: loop.kernel
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
