// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop -verify-diagnostics

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
