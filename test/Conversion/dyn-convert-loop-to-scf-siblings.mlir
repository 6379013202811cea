// RUN: dyn-opt %s -dyn-convert-loop-to-scf -cse | FileCheck %s

// Sibling column reductions (a batch norm backward's sum(dy * (x - mean)) and
// sum(dy) per channel of an NHWC tensor; dyn-fuse-prim-to-loop puts them in
// one kernel): one sweep with the channel loop innermost, a row of
// accumulators per sum (chunks of 16 channels), dy read once a point (CSE merges the two bodies'
// loads); the mean, which the first body takes from the kernel, gets a row of
// its own. The last loop stores both sums.
// CHECK-LABEL: func @bn_backward_sums
// CHECK: scf.parallel
// CHECK: %[[A0:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
// CHECK: %[[A1:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
// CHECK: %[[ROW:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[ROW]]
// CHECK: memref.store %{{.*}}, %[[A0]]
// CHECK: memref.store %{{.*}}, %[[A1]]
// CHECK: scf.for %[[N:.*]] =
// CHECK: scf.for %[[H:.*]] =
// CHECK: scf.for %[[W:.*]] =
// CHECK: scf.for %[[C:.*]] =
// CHECK: %[[DY:.*]] = memref.load %arg1[%[[N]], %[[H]], %[[W]], %[[C]]]
// CHECK-NOT: memref.load %arg1
// CHECK: memref.load %[[A0]]
// CHECK: memref.store %{{.*}}, %[[A0]]
// CHECK: %[[P1:.*]] = memref.load %[[A1]]
// CHECK: arith.addf %[[P1]], %[[DY]]
// CHECK: memref.store %{{.*}}, %[[A1]]
// CHECK: scf.for
// CHECK: memref.load %[[A0]]
// CHECK: memref.load %[[A1]]
// CHECK: memref.store %{{.*}}, %arg3
// CHECK: memref.store %{{.*}}, %arg4
// CHECK: memref.dealloc %[[A0]]
// CHECK: memref.dealloc %[[A1]]
func.func @bn_backward_sums(%x: memref<8x16x16x64xf32>, %g: memref<8x16x16x64xf32>, %mean: memref<64xf32>,
                            %a: memref<64xf32>, %b: memref<64xf32>) {
  loop.kernel "reduce_sum" [64] {
  ^bb0(%c: index):
    %m = loop.load %mean[%c] : memref<64xf32>
    %s = loop.reduce add [8, 16, 16] : f32 {
    ^bb0(%n: index, %h: index, %w: index):
      %dy = loop.load %g[%n, %h, %w, %c] : memref<8x16x16x64xf32>
      %v = loop.load %x[%n, %h, %w, %c] : memref<8x16x16x64xf32>
      %xc = arith.subf %v, %m : f32
      %p = arith.mulf %dy, %xc : f32
      loop.yield %p : f32
    }
    %t = loop.reduce add [8, 16, 16] : f32 {
    ^bb0(%n: index, %h: index, %w: index):
      %dy = loop.load %g[%n, %h, %w, %c] : memref<8x16x16x64xf32>
      loop.yield %dy : f32
    }
    loop.store %s, %a[%c] : memref<64xf32>
    loop.store %t, %b[%c] : memref<64xf32>
  }
  return
}
