// RUN: dyn-opt %s -dyn-loop-to-llvm-cpu | FileCheck %s

// A large kernel becomes an OpenMP parallel loop in the LLVM dialect; the
// function takes bare pointers; sin is a polynomial, not a libm call.
// CHECK-LABEL: llvm.func @sin_kernel
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK-NOT: llvm.call @sinf
// CHECK: llvm.intr.fma
func.func @sin_kernel(%x: memref<1048576xf32>, %y: memref<1048576xf32>) {
  loop.kernel "sin" [1048576] {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<1048576xf32>
    %s = math.sin %v : f32
    loop.store %s, %y[%i] : memref<1048576xf32>
  }
  return
}
