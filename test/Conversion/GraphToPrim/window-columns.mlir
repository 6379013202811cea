// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim | FileCheck %s
// RUN: dyn-opt %s -split-input-file -dyn-graph-to-prim -dyn-prim-to-loop-gpu -dyn-convert-loop-to-gpu | FileCheck %s --check-prefix=GPU

// im2col (F.unfold) of overlapping 2x2 windows every 2 rows and 1 column,
// padded by 1 row: the input padded with zeros, each tap (i, j) a strided
// slice [N, C, oh, ow] at offset (i, j), the four stacked after C.
// CHECK-LABEL: func @im2col
// CHECK: %[[P:.*]] = prim.pad %arg0 low [0, 0, 1, 0] high [0, 0, 1, 0] value 0.000000e+00 : tensor<2x3x4x5xf32> -> tensor<2x3x6x5xf32>
// CHECK: %[[R0:.*]] = prim.slice %[[P]] start [0, 0, 0, 0] stride [1, 1, 2, 1] : tensor<2x3x6x5xf32> -> tensor<2x3x3x5xf32>
// CHECK: prim.slice %[[R0]] start [0, 0, 0, 0] stride [1, 1, 1, 1] : tensor<2x3x3x5xf32> -> tensor<2x3x3x4xf32>
// CHECK: prim.slice %{{.*}} start [0, 0, 0, 1] stride [1, 1, 1, 1] : tensor<2x3x3x5xf32> -> tensor<2x3x3x4xf32>
// CHECK: prim.slice %[[P]] start [0, 0, 1, 0] stride [1, 1, 2, 1] : tensor<2x3x6x5xf32> -> tensor<2x3x3x5xf32>
// CHECK: %[[C:.*]] = prim.concatenate {{.*}} dim 2 : {{.*}} -> tensor<2x3x4x12xf32>
// CHECK: prim.reshape %[[C]] : tensor<2x3x4x12xf32> -> tensor<2x12x12xf32>
// GPU-LABEL: func @im2col(
// GPU: gpu.launch blocks
func.func @im2col(%x: tensor<2x3x4x5xf32>) -> tensor<2x12x12xf32> {
  %0 = graph.im2col %x {kernel = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 0>, stride = array<i64: 2, 1>} : tensor<2x3x4x5xf32> -> tensor<2x12x12xf32>
  return %0 : tensor<2x12x12xf32>
}

// -----

// Windows that tile the input (stride = kernel, no padding or dilation): a
// reshape to [N, C, oh, kh, ow, kw] and a transpose, no slices.
// CHECK-LABEL: func @im2col_tiles
// CHECK: prim.reshape %arg0 : tensor<1x2x4x6xf32> -> tensor<1x2x2x2x3x2xf32>
// CHECK: prim.transpose %{{.*}} permutation [0, 1, 3, 5, 2, 4] : tensor<1x2x2x2x3x2xf32> -> tensor<1x2x2x2x2x3xf32>
// CHECK-NOT: prim.slice
// CHECK: prim.reshape %{{.*}} : tensor<1x2x2x2x2x3xf32> -> tensor<1x8x6xf32>
func.func @im2col_tiles(%x: tensor<1x2x4x6xf32>) -> tensor<1x8x6xf32> {
  %0 = graph.im2col %x {kernel = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : tensor<1x2x4x6xf32> -> tensor<1x8x6xf32>
  return %0 : tensor<1x8x6xf32>
}

// -----

// col2im (F.fold) of 2x1 windows every 3 rows: each tap's [N, C, 2, 3] gets
// two zero rows after each row (interleaved: concatenate and reshape), is cut
// or padded to its offset in the output and added onto zeros in eager's
// order (tap 0, then tap 1).
// CHECK-LABEL: func @col2im
// CHECK: %[[Z:.*]] = prim.constant dense<0.000000e+00> : tensor<1x2x5x3xf32>
// CHECK: prim.concatenate %{{.*}}, %{{.*}} dim 3 : tensor<1x2x2x1x3xf32>, tensor<1x2x2x2x3xf32> -> tensor<1x2x2x3x3xf32>
// CHECK: %[[T0:.*]] = prim.slice %{{.*}} : tensor<1x2x6x3xf32> -> tensor<1x2x5x3xf32>
// CHECK: %[[A:.*]] = prim.add %[[Z]], %[[T0]] : tensor<1x2x5x3xf32>
// CHECK: %[[T1:.*]] = prim.pad %{{.*}} low [0, 0, 1, 0] high [0, 0, 0, 0] value 0.000000e+00 : tensor<1x2x4x3xf32> -> tensor<1x2x5x3xf32>
// CHECK: prim.add %[[A]], %[[T1]] : tensor<1x2x5x3xf32>
func.func @col2im(%x: tensor<1x4x6xf32>) -> tensor<1x2x5x3xf32> {
  %0 = graph.col2im %x {output_size = array<i64: 5, 3>, kernel = array<i64: 2, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 3, 1>} : tensor<1x4x6xf32> -> tensor<1x2x5x3xf32>
  return %0 : tensor<1x2x5x3xf32>
}
