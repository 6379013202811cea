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

// An embedding lookup with int32 indices: the index load, its clamp, then the
// row load, all lowered to LLVM.
// CHECK-LABEL: llvm.func @embedding
// CHECK: llvm.sext %{{.*}} : i32 to i64
// CHECK: llvm.intr.smax
// CHECK: llvm.intr.smin
// LLVMIR: define void @embedding(ptr
func.func @embedding(%w: tensor<100x64xf32>, %i: tensor<4x8xi32>) -> tensor<4x8x64xf32> {
  %f = graph.reshape %i : tensor<4x8xi32> -> tensor<32xi32>
  %r = graph.reshape %f : tensor<32xi32> -> tensor<32x1xi32>
  %b = graph.expand %r : tensor<32x1xi32> -> tensor<32x64xi32>
  %g = graph.gather %w dim 0 index %b : tensor<100x64xf32>, tensor<32x64xi32> -> tensor<32x64xf32>
  %y = graph.reshape %g : tensor<32x64xf32> -> tensor<4x8x64xf32>
  return %y : tensor<4x8x64xf32>
}
