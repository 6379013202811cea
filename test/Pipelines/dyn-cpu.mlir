// RUN: dyn-opt %s -dyn-cpu | FileCheck %s
// RUN: dyn-opt %s -dyn-cpu | mlir-translate -mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR

// The whole CPU pipeline: graph in, LLVM dialect out, OpenMP for the parallel
// loop, translatable to LLVM IR.
// CHECK-LABEL: llvm.func @seed
// CHECK-NOT: graph.
// CHECK-NOT: prim.
// CHECK-NOT: loop.
// CHECK: omp.parallel
// LLVMIR: define void @seed(ptr
// LLVMIR: call void {{.*}}@__kmpc_fork_call
func.func @seed(%x: tensor<262144xf32>, %y: tensor<262144xf32>) -> tensor<262144xf32> {
  %a = graph.cos %x : tensor<262144xf32> -> tensor<262144xf32>
  %b = graph.sin %y : tensor<262144xf32> -> tensor<262144xf32>
  %c = graph.add %a, %b : tensor<262144xf32>, tensor<262144xf32> -> tensor<262144xf32>
  return %c : tensor<262144xf32>
}
