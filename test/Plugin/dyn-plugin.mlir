// REQUIRES: shared-mlir
// Debian's stock mlir-opt meets dyn through the plugin alone: it parses dyn's
// dialects, runs its passes and named pipelines, and reports bad input.
// RUN: not mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN
// RUN: mlir-opt %s --load-dialect-plugin=%dyn_plugin | mlir-opt --load-dialect-plugin=%dyn_plugin | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: mlir-opt %s --load-dialect-plugin=%dyn_plugin --load-pass-plugin=%dyn_plugin --pass-pipeline='builtin.module(dyn-convert-graph-to-prim)' | FileCheck %s --check-prefix=PASS
// RUN: mlir-opt %s --load-dialect-plugin=%dyn_plugin --load-pass-plugin=%dyn_plugin --pass-pipeline='builtin.module(dyn-graph-to-prim,dyn-prim-to-loop)' | FileCheck %s --check-prefix=LOOP
// RUN: mlir-opt %s --load-dialect-plugin=%dyn_plugin --pass-pipeline='builtin.module(dyn-cpu)' | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR
// RUN: not mlir-opt %S/Inputs/bool-sub.mlir --load-dialect-plugin=%dyn_plugin --load-pass-plugin=%dyn_plugin --pass-pipeline='builtin.module(dyn-cpu)' 2>&1 | FileCheck %s --check-prefix=INVALID

// NOPLUGIN: error: Dialect `graph' not found

// ROUNDTRIP-LABEL: func.func @scale_shift
// ROUNDTRIP: graph.mul
// ROUNDTRIP: graph.add

// PASS-LABEL: func.func @scale_shift
// PASS-NOT: graph.
// PASS: prim.

// LOOP-LABEL: func.func @scale_shift
// LOOP-SAME: memref<4x8xf32>
// LOOP: loop.kernel

// LLVMIR: define void @scale_shift(ptr
func.func @scale_shift(%x: tensor<4x8xf32>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = graph.mul %x, %s : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = graph.add %0, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// INVALID: bool-sub.mlir:3:8: error: failed to legalize operation 'graph.sub'
