// RUN: dyn-opt %s -dyn-cpu | FileCheck %s

// On the CPU, attention becomes a call of dyn_library_call between the
// OpenMP loops (the JIT resolves it to the registry); the descriptor and the
// name are constant globals.
// CHECK-DAG: llvm.mlir.global private constant @__dyn_libcall_attention
// CHECK-DAG: llvm.mlir.global private constant @__dyn_libcall_name_attention
// CHECK-LABEL: llvm.func @attention
// CHECK: omp.parallel
// CHECK: llvm.call @dyn_library_call
func.func @attention(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %s = graph.mul %q, %q : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  %0 = graph.scaled_dot_product_attention %s, %q, %q causal : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}
