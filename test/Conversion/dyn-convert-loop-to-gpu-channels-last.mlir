// RUN: dyn-opt %s -split-input-file -dyn-convert-loop-to-gpu | FileCheck %s

// Channels-last training's kernels (docs/gpu.md).
//
// A batch norm's per-channel sum over N, H, W of an NHWC tensor (C = 64): the
// rows are split into 16896 chunks (the GPU's 132 x 2048 threads over 16
// groups of 4 channels); a thread per (chunk, group) reads 4 channels of a row
// with one 16-byte load per input, 4 rows a step into 4 x 4 accumulators, and
// puts its 4 partials in shared memory; after a barrier the block's first 16
// threads fold its 16 chunks of their group, so the partials are a row per
// block (1056 rows). A block per channel combines those (strided, 4
// accumulators a thread, then gpu.all_reduce), thread 0 storing the result.
// CHECK-LABEL: func @bn_channel_dot
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<1056x64xf32>
// CHECK: gpu.launch {{.*}} workgroup(%[[SH:.*]] : memref<1024xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-4: memref.store %cst, %[[SH]]
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-COUNT-8: vector.load %{{.*}} {alignment = 16 : i64} : memref<256x56x56x64xf32>, vector<4xf32>
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32)
// CHECK-COUNT-4: memref.store %{{.*}}, %[[SH]]
// CHECK: gpu.barrier
// CHECK: arith.cmpi ult, %{{.*}}, %c16
// CHECK-COUNT-16: memref.load %[[SH]]
// CHECK: loop.store %{{.*}}, %[[TMP]]
// CHECK: } {dyn.kernel = "reduce_sum_partial"}
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c64,
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32)
// CHECK: loop.load %[[TMP]][%{{.*}}, %[[B]]]
// CHECK: gpu.all_reduce add
// CHECK: scf.if
// CHECK: loop.store
// CHECK: } {dyn.kernel = "reduce_sum"}
// CHECK: memref.dealloc %[[TMP]]
func.func @bn_channel_dot(%x: memref<256x56x56x64xf32>, %g: memref<256x56x56x64xf32>, %y: memref<64xf32>) {
  loop.kernel "reduce_sum" [64] {
  ^bb0(%c: index):
    %s = loop.reduce add [256, 56, 56] : f32 {
    ^bb0(%n: index, %h: index, %w: index):
      %a = loop.load %x[%n, %h, %w, %c] : memref<256x56x56x64xf32>
      %b = loop.load %g[%n, %h, %w, %c] : memref<256x56x56x64xf32>
      %m = arith.mulf %a, %b : f32
      loop.yield %m : f32
    }
    loop.store %s, %y[%c] : memref<64xf32>
  }
  return
}

// -----

// NCHW -> NHWC with C = 64: a batched transpose of [C, H x W] into
// [H x W, C], a block per 32 x 32 tile (64 x 2 x 392 tiles) through shared
// memory padded to 33 columns: four loads a thread along W (the input's
// contiguous dim) into the tile, a barrier, four stores along C (the output's).
// CHECK-LABEL: func @nchw_to_nhwc
// CHECK: %[[BLOCKS:.*]] = arith.constant 50176 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[BLOCKS]], {{.*}}) threads({{.*}}) in ({{.*}}) {{.*}} workgroup(%[[TILE:.*]] : memref<32x33xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: scf.if
// CHECK-COUNT-4: memref.store %{{.*}}, %[[TILE]]
// CHECK: gpu.barrier
// CHECK-COUNT-4: loop.store
// CHECK: } {dyn.kernel = "transpose"}
func.func @nchw_to_nhwc(%x: memref<64x64x112x112xf32>, %y: memref<64x112x112x64xf32>) {
  loop.kernel "transpose" [64, 112, 112, 64] {
  ^bb0(%n: index, %h: index, %w: index, %c: index):
    %v = loop.load %x[%n, %c, %h, %w] : memref<64x64x112x112xf32>
    loop.store %v, %y[%n, %h, %w, %c] : memref<64x112x112x64xf32>
  }
  return
}

// -----

// NHWC -> NCHW with C = 3: a tile is all 3 channels by 352 pixels (about
// 1024 points), read along the channels and written along the pixels; the
// last tile of 224 x 224 pixels is ragged, so every point is guarded.
// CHECK-LABEL: func @nhwc_to_nchw_rgb
// CHECK: %[[BLOCKS:.*]] = arith.constant 36608 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[BLOCKS]], {{.*}} workgroup(%[[TILE:.*]] : memref<352x3xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.if
// CHECK: loop.load %{{.*}} : memref<256x224x224x3xf32>
// CHECK: memref.store %{{.*}}, %[[TILE]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[TILE]]
// CHECK: loop.store %{{.*}} : memref<256x3x224x224xf32>
func.func @nhwc_to_nchw_rgb(%x: memref<256x224x224x3xf32>, %y: memref<256x3x224x224xf32>) {
  loop.kernel "transpose" [256, 3, 224, 224] {
  ^bb0(%n: index, %c: index, %h: index, %w: index):
    %v = loop.load %x[%n, %h, %w, %c] : memref<256x224x224x3xf32>
    loop.store %v, %y[%n, %c, %h, %w] : memref<256x3x224x224xf32>
  }
  return
}

// -----

// A small transpose (fewer than 2^16 points) and a kernel whose loads are not
// one permutation keep the pointwise mapping.
// CHECK-LABEL: func @not_tiled
// CHECK-NOT: workgroup
// CHECK: } {dyn.kernel = "small"}
// CHECK-NOT: workgroup
// CHECK: } {dyn.kernel = "mixed"}
func.func @not_tiled(%x: memref<128x128xf32>, %y: memref<128x128xf32>, %u: memref<512x512xf32>, %v: memref<512x512xf32>) {
  loop.kernel "small" [128, 128] {
  ^bb0(%i: index, %j: index):
    %a = loop.load %x[%j, %i] : memref<128x128xf32>
    loop.store %a, %y[%i, %j] : memref<128x128xf32>
  }
  loop.kernel "mixed" [512, 512] {
  ^bb0(%i: index, %j: index):
    %a = loop.load %u[%j, %i] : memref<512x512xf32>
    %b = loop.load %u[%i, %j] : memref<512x512xf32>
    %s = arith.addf %a, %b : f32
    loop.store %s, %v[%i, %j] : memref<512x512xf32>
  }
  return
}

// -----

// A batch norm backward's sum over a ReLU-masked gradient: the mask (i1, a
// byte a point) does not keep the float inputs from 16-byte loads; the thread
// reads its four points' mask bytes one by one beside them.
// CHECK-LABEL: func @masked_channel_sum
// CHECK: gpu.launch
// CHECK-COUNT-8: vector.load %{{.*}} : memref<256x56x56x64xf32>, vector<4xf32>
// CHECK: } {dyn.kernel = "reduce_sum_partial"}
// CHECK-NOT: vector<4xi1>
func.func @masked_channel_sum(%m: memref<256x56x56x64xi1>, %g: memref<256x56x56x64xf32>,
                              %x: memref<256x56x56x64xf32>, %y: memref<64xf32>) {
  loop.kernel "reduce_sum" [64] {
  ^bb0(%c: index):
    %zero = arith.constant 0.0 : f32
    %s = loop.reduce add [256, 56, 56] : f32 {
    ^bb0(%n: index, %h: index, %w: index):
      %k = loop.load %m[%n, %h, %w, %c] : memref<256x56x56x64xi1>
      %a = loop.load %g[%n, %h, %w, %c] : memref<256x56x56x64xf32>
      %v = arith.select %k, %a, %zero : f32
      %b = loop.load %x[%n, %h, %w, %c] : memref<256x56x56x64xf32>
      %p = arith.mulf %v, %b : f32
      loop.yield %p : f32
    }
    loop.store %s, %y[%c] : memref<64xf32>
  }
  return
}
