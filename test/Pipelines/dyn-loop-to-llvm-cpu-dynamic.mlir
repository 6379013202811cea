// RUN: dyn-opt %s -dyn-loop-to-llvm-cpu | FileCheck %s

// A kernel over a dynamic domain: the function takes its buffers as bare
// pointers and each one's dynamic size as a trailing i64; the kernel is an OpenMP
// loop to that runtime bound.
// CHECK-LABEL: llvm.func @dynamic_neg
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64)
// CHECK: omp.parallel
// CHECK: omp.wsloop
func.func @dynamic_neg(%x: memref<?x16xf32>, %y: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x16xf32>
  loop.kernel "neg" [%n, 16] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : memref<?x16xf32>
    %r = arith.negf %v : f32
    loop.store %r, %y[%i, %j] : memref<?x16xf32>
  }
  return
}
