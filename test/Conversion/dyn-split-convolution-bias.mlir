// RUN: dyn-opt %s -split-input-file -dyn-split-convolution-bias | FileCheck %s
// RUN: dyn-opt %s -split-input-file -dyn-graph-to-prim-gpu | FileCheck %s --check-prefix=GPU

// A 2-d convolution's bias becomes an add of its per-channel broadcast (dim 1
// in torch's order), which the kernel reading the result fuses.
// CHECK-LABEL: func @conv2d_bias
// CHECK: %[[C:.*]] = prim.convolution %arg0, %arg1 stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
// CHECK: %[[B:.*]] = prim.broadcast_in_dim %arg2 dims [1] : tensor<4xf32> -> tensor<2x4x8x8xf32>
// CHECK: %[[S:.*]] = prim.add %[[C]], %[[B]]
// CHECK: return %[[S]]
func.func @conv2d_bias(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x8x8xf32> {
  %0 = prim.convolution %x, %w bias %b stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

// channels-last: the channel dim is the last one.
// CHECK-LABEL: func @channels_last_bias
// CHECK: prim.convolution %arg0, %arg1 stride [1, 1] padding [1, 1] dilation [1, 1] groups 4 channels_last
// CHECK: prim.broadcast_in_dim %arg2 dims [3] : tensor<4xf32> -> tensor<2x8x8x4xf32>
// CHECK: prim.add
func.func @channels_last_bias(%x: tensor<2x8x8x4xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x8x8x4xf32> {
  %0 = prim.convolution %x, %w bias %b stride [1, 1] padding [1, 1] dilation [1, 1] groups 4 channels_last : tensor<2x8x8x4xf32>, tensor<4x1x3x3xf32>, tensor<4xf32> -> tensor<2x8x8x4xf32>
  return %0 : tensor<2x8x8x4xf32>
}

// -----

// Transposed and 1-d convolutions keep the bias (ATen's at::convolution adds it).
// CHECK-LABEL: func @kept
// CHECK: prim.convolution %arg0, %arg1 bias %arg2 {{.*}} transposed
// CHECK: prim.convolution %arg3, %arg4 bias %arg5
// CHECK-NOT: prim.add
func.func @kept(%x: tensor<1x4x5x5xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<2xf32>,
                %y: tensor<1x3x10xf32>, %v: tensor<5x3x3xf32>, %c: tensor<5xf32>) -> (tensor<1x2x7x7xf32>, tensor<1x5x8xf32>) {
  %0 = prim.convolution %x, %w bias %b stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 transposed output_padding [0, 0] : tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>, tensor<2xf32> -> tensor<1x2x7x7xf32>
  %1 = prim.convolution %y, %v bias %c stride [1] padding [0] dilation [1] groups 1 : tensor<1x3x10xf32>, tensor<5x3x3xf32>, tensor<5xf32> -> tensor<1x5x8xf32>
  return %0, %1 : tensor<1x2x7x7xf32>, tensor<1x5x8xf32>
}

// -----

// The GPU's graph -> prim pipeline runs it (graph.convolution with a bias).
// GPU-LABEL: func @graph_conv
// GPU: prim.convolution %arg0, %arg1 stride
// GPU-NOT: bias
// GPU: prim.add
func.func @graph_conv(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x8x8xf32> {
  %0 = graph.convolution %x, %w bias %b stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}
