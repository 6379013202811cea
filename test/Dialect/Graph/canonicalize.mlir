// RUN: dyn-opt %s -split-input-file -canonicalize | FileCheck %s

// Identity shape ops fold away.
// CHECK-LABEL: func @identity_shape_ops
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity_shape_ops(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = graph.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = graph.permute %0 dims [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = graph.expand %1 : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = graph.convert %2 : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = graph.slice %3 dim 1 start 0 end 8 step 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// -----

// A chain of reshapes is one reshape.
// CHECK-LABEL: func @reshape_chain
// CHECK-NEXT: %[[R:.*]] = graph.reshape %{{.*}} : tensor<4x8xf32> -> tensor<2x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain(%x: tensor<4x8xf32>) -> tensor<2x16xf32> {
  %0 = graph.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %1 = graph.reshape %0 : tensor<32xf32> -> tensor<2x16xf32>
  return %1 : tensor<2x16xf32>
}

// -----

// Unused pure ops disappear; a real slice stays.
// CHECK-LABEL: func @dead_code
// CHECK-NOT: graph.cos
// CHECK: graph.slice
func.func @dead_code(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %0 = graph.cos %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = graph.slice %x dim 1 start 0 end 4 step 1 : tensor<4x8xf32> -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
