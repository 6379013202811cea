// RUN: dyn-opt %s -split-input-file -dyn-convert-loop-to-gpu | FileCheck %s

// A reduction kernel with an epilogue (dyn-fuse-prim-to-loop runs a batch
// norm's running-mean update at the end of its channel sums): split as a
// column sum, the epilogue runs in the combining launch, after the sum is
// stored, by the thread that stores it; no launch of its own.
// CHECK-LABEL: func @split
// CHECK: gpu.launch
// CHECK-NOT: loop.store %{{.*}}, %arg3
// CHECK: } {dyn.kernel = "reduce_sum_partial"}
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c64,
// CHECK: %[[S:.*]] = gpu.all_reduce add
// CHECK: scf.if
// CHECK: loop.store %[[S]], %arg2[%[[B]]]
// CHECK: loop.load %arg1[%[[B]]]
// CHECK: arith.divf %[[S]]
// CHECK: loop.store %{{.*}}, %arg3[%[[B]]]
// CHECK: } {dyn.kernel = "reduce_sum"}
// CHECK-NOT: gpu.launch
func.func @split(%x: memref<8x112x112x64xf32>, %rm: memref<64xf32>, %sum: memref<64xf32>, %new: memref<64xf32>) {
  %n = arith.constant 100352.0 : f32
  %m = arith.constant 0.1 : f32
  %k = arith.constant 0.9 : f32
  loop.kernel "reduce_sum" [64] {
  ^bb0(%c: index):
    %s = loop.reduce add [8, 112, 112] : f32 {
    ^bb0(%i: index, %h: index, %w: index):
      %v = loop.load %x[%i, %h, %w, %c] : memref<8x112x112x64xf32>
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

// -----

// A short reduction, a thread per channel: the epilogue runs in that thread
// after its sum.
// CHECK-LABEL: func @thread_per_point
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: %[[S:.*]] = loop.reduce add [2, 4, 4]
// CHECK: loop.store %[[S]], %arg2
// CHECK: arith.divf %[[S]]
// CHECK: loop.store %{{.*}}, %arg3
// CHECK: } {dyn.kernel = "reduce_sum"}
// CHECK-NOT: gpu.launch
func.func @thread_per_point(%x: memref<2x4x4x64xf32>, %rm: memref<64xf32>, %sum: memref<64xf32>, %new: memref<64xf32>) {
  %n = arith.constant 32.0 : f32
  %m = arith.constant 0.1 : f32
  %k = arith.constant 0.9 : f32
  loop.kernel "reduce_sum" [64] {
  ^bb0(%c: index):
    %s = loop.reduce add [2, 4, 4] : f32 {
    ^bb0(%i: index, %h: index, %w: index):
      %v = loop.load %x[%i, %h, %w, %c] : memref<2x4x4x64xf32>
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
