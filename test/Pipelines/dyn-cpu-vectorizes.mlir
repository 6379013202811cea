// RUN: dyn-opt %s -dyn-cpu | mlir-translate -mlir-to-llvmir \
// RUN:   | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S | FileCheck %s

// The point of the CPU pipeline: LLVM vectorizes the generated inner loops,
// including f32 transcendental math (polynomials, not libm calls) and
// reductions (reassociable adds). AVX2 gives <8 x float>.

// CHECK-LABEL: define {{.*}}@seed..omp_par
// CHECK: fmul <8 x float>
// CHECK-NOT: call float @cosf
func.func @seed(%x: tensor<1048576xf32>, %y: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %a = graph.cos %x : tensor<1048576xf32> -> tensor<1048576xf32>
  %b = graph.sin %y : tensor<1048576xf32> -> tensor<1048576xf32>
  %c = graph.add %a, %b : tensor<1048576xf32>, tensor<1048576xf32> -> tensor<1048576xf32>
  return %c : tensor<1048576xf32>
}


// CHECK-LABEL: define {{.*}}@row_sum..omp_par
// CHECK: fadd reassoc contract <8 x float>
func.func @row_sum(%x: tensor<1024x1024xf32>) -> tensor<1024xf32> {
  %0 = graph.sum %x dims [1] : tensor<1024x1024xf32> -> tensor<1024xf32>
  return %0 : tensor<1024xf32>
}
