// RUN: dyn-opt %s -split-input-file -canonicalize | FileCheck %s

// Identity broadcasts, conversions and transposes fold away.
// CHECK-LABEL: func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identities(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = prim.broadcast_in_dim %x dims [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = prim.convert_element_type %0 : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = prim.transpose %1 permutation [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = prim.reshape %2 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// reshape(reshape(x)) reads x directly.
// CHECK-LABEL: func @reshape_chain
// CHECK-NEXT: %[[R:.*]] = prim.reshape %{{.*}} : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = prim.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %1 = prim.reshape %0 : tensor<32xf32> -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// Equal constants are one constant.
// CHECK-LABEL: func @constants
// CHECK-COUNT-1: prim.constant
// CHECK-NOT: prim.constant
func.func @constants() -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = prim.constant dense<1.0> : tensor<4xf32>
  %1 = prim.constant dense<1.0> : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
