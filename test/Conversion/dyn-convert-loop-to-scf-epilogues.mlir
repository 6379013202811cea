// RUN: dyn-opt %s -dyn-convert-loop-to-scf -cse | FileCheck %s

// A column reduction with an epilogue (a batch norm's running-mean update,
// which dyn-fuse-prim-to-loop runs at the end of its channel sums): the
// sweep keeps its row of accumulators and reads only x; the last loop over
// the chunk's channels stores each sum and runs the epilogue on it.
// CHECK-LABEL: func @bn_running_mean
// CHECK: scf.parallel
// CHECK: %[[ACC:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
// CHECK: scf.for
// CHECK-NOT: memref.load
// CHECK: memref.store %{{.*}}, %[[ACC]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %arg0
// CHECK-NOT: memref.load %arg1
// CHECK: memref.store %{{.*}}, %[[ACC]]
// CHECK: scf.for %[[C:.*]] =
// CHECK: %[[S:.*]] = memref.load %[[ACC]]
// CHECK: memref.store %[[S]], %arg2[%[[C]]]
// CHECK: arith.divf %[[S]]
// CHECK: memref.load %arg1[%[[C]]]
// CHECK: memref.store %{{.*}}, %arg3[%[[C]]]
// CHECK: memref.dealloc %[[ACC]]
func.func @bn_running_mean(%x: memref<8x16x16x64xf32>, %rm: memref<64xf32>, %sum: memref<64xf32>, %new: memref<64xf32>) {
  %n = arith.constant 2048.0 : f32
  %m = arith.constant 0.1 : f32
  %k = arith.constant 0.9 : f32
  loop.kernel "reduce_sum" [64] {
  ^bb0(%c: index):
    %s = loop.reduce add [8, 16, 16] : f32 {
    ^bb0(%i: index, %h: index, %w: index):
      %v = loop.load %x[%i, %h, %w, %c] : memref<8x16x16x64xf32>
      loop.yield %v : f32
    }
    loop.store %s, %sum[%c] : memref<64xf32>
    %mean = arith.divf %s, %n : f32
    %a = arith.mulf %mean, %m : f32
    %r = loop.load %rm[%c] : memref<64xf32>
    %b = arith.mulf %r, %k : f32
    %u = arith.addf %a, %b : f32
    loop.store %u, %new[%c] : memref<64xf32>
  }
  return
}
