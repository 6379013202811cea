// RUN: not dyn-opt %s -dyn-cpu 2>&1 | FileCheck %s

// Malformed input gets a located diagnostic and a non-zero exit, not a crash.
// CHECK: dyn-cpu-invalid.mlir:[[@LINE+2]]:8: error: 'graph.add' op operands don't have broadcast-compatible shapes
func.func @bad(%a: tensor<4xf32>, %b: tensor<5xf32>) -> tensor<4xf32> {
  %0 = graph.add %a, %b : tensor<4xf32>, tensor<5xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
