// RUN: dyn-opt %s -split-input-file -dyn-convert-loop-to-gpu | FileCheck %s

// Sibling reductions in one kernel (dyn-fuse-prim-to-loop groups them): a
// batch norm backward's sum(dy * xhat) and sum(dy) per channel over N, H, W
// of an NHWC tensor. Split as one column sum: launch 1 sweeps each row once,
// one 16-byte load per buffer shared by both sums (dy's read once), into
// 4 x 4 accumulators per sum, folds the block's chunks in shared memory (one
// array per sum) and stores each sum's partials into its own temporary, a
// row per block; launch 2 (a block per channel) folds and gpu.all_reduces
// both before thread 0 stores them.
// CHECK-LABEL: func @bn_backward_sums
// CHECK: %[[T0:.*]] = memref.alloc() : memref<1056x64xf32>
// CHECK: %[[T1:.*]] = memref.alloc() : memref<1056x64xf32>
// CHECK: gpu.launch {{.*}} workgroup(%{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-COUNT-8: vector.load %{{.*}} {alignment = 16 : i64} : memref<256x56x56x64xf32>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-COUNT-2: vector.load
// CHECK-NOT: vector.load
// CHECK: gpu.barrier
// CHECK: loop.store %{{.*}}, %[[T0]]
// CHECK: loop.store %{{.*}}, %[[T1]]
// CHECK: } {dyn.kernel = "reduce_sum_partial"}
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c64,
// CHECK: loop.load %[[T0]][%{{.*}}, %[[B]]]
// CHECK: gpu.all_reduce add
// CHECK: loop.load %[[T1]][%{{.*}}, %[[B]]]
// CHECK: gpu.all_reduce add
// CHECK: scf.if
// CHECK: loop.store
// CHECK: loop.store
// CHECK: } {dyn.kernel = "reduce_sum"}
// CHECK: memref.dealloc %[[T0]]
// CHECK: memref.dealloc %[[T1]]
func.func @bn_backward_sums(%x: memref<256x56x56x64xf32>, %g: memref<256x56x56x64xf32>, %mean: memref<64xf32>,
                            %a: memref<64xf32>, %b: memref<64xf32>) {
  loop.kernel "reduce_sum" [64] {
  ^bb0(%c: index):
    %m = loop.load %mean[%c] : memref<64xf32>
    %s = loop.reduce add [256, 56, 56] : f32 {
    ^bb0(%n: index, %h: index, %w: index):
      %dy = loop.load %g[%n, %h, %w, %c] : memref<256x56x56x64xf32>
      %v = loop.load %x[%n, %h, %w, %c] : memref<256x56x56x64xf32>
      %xc = arith.subf %v, %m : f32
      %p = arith.mulf %dy, %xc : f32
      loop.yield %p : f32
    }
    %t = loop.reduce add [256, 56, 56] : f32 {
    ^bb0(%n: index, %h: index, %w: index):
      %dy = loop.load %g[%n, %h, %w, %c] : memref<256x56x56x64xf32>
      loop.yield %dy : f32
    }
    loop.store %s, %a[%c] : memref<64xf32>
    loop.store %t, %b[%c] : memref<64xf32>
  }
  return
}

// -----

// Sibling reductions over few long rows (a sum and a max of each of 2 rows of
// 2^20): split as one row reduction, a block per (chunk, row) folding both in
// one strided sweep, each gpu.all_reduce'd and stored as its partial; then a
// thread per row combines each sum's partials.
// CHECK-LABEL: func @row_siblings
// CHECK: %[[T0:.*]] = memref.alloc() : memref<{{[0-9]+}}x2xf32>
// CHECK: %[[T1:.*]] = memref.alloc() : memref<{{[0-9]+}}x2xf32>
// CHECK: gpu.launch
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: scf.for {{.*}} -> (f32, f32)
// CHECK: gpu.all_reduce add
// CHECK: gpu.all_reduce maximumf
// CHECK: scf.if
// CHECK: loop.store %{{.*}}, %[[T0]]
// CHECK: loop.store %{{.*}}, %[[T1]]
// CHECK: } {dyn.kernel = "rows_partial"}
// CHECK: gpu.launch
// CHECK: loop.load %[[T0]]
// CHECK: arith.addf
// CHECK: loop.load %[[T1]]
// CHECK: arith.maximumf
// CHECK: } {dyn.kernel = "rows"}
func.func @row_siblings(%x: memref<2x1048576xf32>, %s: memref<2xf32>, %m: memref<2xf32>) {
  loop.kernel "rows" [2] {
  ^bb0(%r: index):
    %a = loop.reduce add [1048576] : f32 {
    ^bb0(%i: index):
      %v = loop.load %x[%r, %i] : memref<2x1048576xf32>
      loop.yield %v : f32
    }
    %b = loop.reduce max [1048576] : f32 {
    ^bb0(%i: index):
      %v = loop.load %x[%r, %i] : memref<2x1048576xf32>
      loop.yield %v : f32
    }
    loop.store %a, %s[%r] : memref<2xf32>
    loop.store %b, %m[%r] : memref<2xf32>
  }
  return
}

// -----

// Sibling sums over a `?` leading dim (the same runtime extent): split at run
// time as one column sum, a temporary per sum, both folded in one sweep.
// CHECK-LABEL: func @dynamic_siblings
// CHECK: %[[T0:.*]] = memref.alloc(%[[CHUNKS:.*]]) : memref<?x1024xf32>
// CHECK: %[[T1:.*]] = memref.alloc(%[[CHUNKS]]) : memref<?x1024xf32>
// CHECK: gpu.launch
// CHECK: loop.store %{{.*}}, %[[T0]]
// CHECK: loop.store %{{.*}}, %[[T1]]
// CHECK: } {dyn.kernel = "colsums_partial"}
// CHECK: gpu.launch
// CHECK: loop.load %[[T0]]
// CHECK: gpu.all_reduce add
// CHECK: loop.load %[[T1]]
// CHECK: gpu.all_reduce add
// CHECK: } {dyn.kernel = "colsums"}
func.func @dynamic_siblings(%x: memref<?x1024xf32>, %y: memref<1024xf32>, %z: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x1024xf32>
  loop.kernel "colsums" [1024] {
  ^bb0(%j: index):
    %s = loop.reduce add [%n] : f32 {
    ^bb0(%i: index):
      %v = loop.load %x[%i, %j] : memref<?x1024xf32>
      loop.yield %v : f32
    }
    %q = loop.reduce add [%n] : f32 {
    ^bb0(%i: index):
      %v = loop.load %x[%i, %j] : memref<?x1024xf32>
      %w = arith.mulf %v, %v : f32
      loop.yield %w : f32
    }
    loop.store %s, %y[%j] : memref<1024xf32>
    loop.store %q, %z[%j] : memref<1024xf32>
  }
  return
}
