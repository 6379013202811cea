// RUN: not dyn-opt %s 2>&1 | FileCheck %s
// RUN: not dyn-opt < %s 2>&1 | FileCheck %s --check-prefix=STDIN

// MLIR 22's parser segfaults on dense arrays of `index` elements (a fuzzer
// case: `dims = array<index: 1>` in generic form) before any verifier runs;
// dyn-opt finds them first and reports a located error. Comments and strings
// such as this `array<index: 1>` are not attributes.
// CHECK: parser-guard.mlir:[[@LINE+3]]:33: error: dense arrays of `index` are not supported
// STDIN: <stdin>:[[@LINE+2]]:33: error: dense arrays of `index` are not supported
func.func @sum(%x: tensor<4x8xf32>) -> tensor<4xf32> attributes {note = "array<index: 2>"} {
  %0 = "graph.sum"(%x) <{dims = array<index: 1>}> : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
