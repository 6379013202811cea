// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop -verify-diagnostics
// Printed as a user sees them (the diagnostic once named an op already erased: a crash).
// RUN: not dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop 2>&1 | FileCheck %s --check-prefix=PRINTED
// PRINTED: error: 'prim.dot_general' op has no loop.matmul lowering

// A dot_general loop.matmul cannot compute is refused, not lowered into an
// invalid loop.matmul.
func.func @boolean_dot(%a: tensor<4x8xi1>, %b: tensor<8x2xi1>) -> tensor<4x2xi1> {
  // expected-error @+1 {{has no loop.matmul lowering: 'loop.matmul' op supports f16, bf16, f32, f64 and i8-i64}}
  %0 = prim.dot_general %a, %b batch [], [] contract [1], [0] : tensor<4x8xi1>, tensor<8x2xi1> -> tensor<4x2xi1>
  return %0 : tensor<4x2xi1>
}

// -----

// Buffers are sized from ranked types (dynamic dims included): an unranked
// tensor has no buffer.
// expected-error @+1 {{arguments and results must be ranked tensors}}
func.func @unranked_argument(%a: tensor<*xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  return %b : tensor<4xf32>
}

// -----

// Fusion refuses graph ops with a located diagnostic (no crash).
func.func @graph_op_left(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is not a prim op; run dyn-convert-graph-to-prim first}}
  %0 = graph.cos %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @non_matmul_dot(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{only matmul-shaped dot_general is supported}}
  %0 = prim.dot_general %a, %b batch [], [] contract [0], [0] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// A function's own element types are checked: no buffer holds an i128.
// expected-error @+1 {{has an argument or result of element type 'i128', which no buffer holds}}
func.func @wide_integer_argument(%a: tensor<4xi128>) -> tensor<4xi128> {
  return %a : tensor<4xi128>
}
