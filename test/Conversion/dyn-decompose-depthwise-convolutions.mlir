// RUN: dyn-opt %s -split-input-file -dyn-decompose-depthwise-convolutions | FileCheck %s
// RUN: dyn-opt %s -split-input-file -dyn-decompose-depthwise-convolutions="max-window=4" | FileCheck %s --check-prefix=SMALL
// RUN: dyn-opt %s -split-input-file -dyn-graph-to-prim-gpu -dyn-prim-to-loop-gpu | FileCheck %s --check-prefix=GPU

// A 3x3 depthwise convolution, stride 2, padding 1: the padded input's nine
// strided slices times each tap's weight (weight[:, 0, kh, kw] broadcast
// along dim 1), summed, then the bias.
// CHECK-LABEL: func @depthwise3x3
// CHECK-NOT: prim.convolution
// CHECK: %[[P:.*]] = prim.pad %arg0 low [0, 0, 1, 1] high [0, 0, 1, 1] value 0.000000e+00 : tensor<2x4x9x9xf32> -> tensor<2x4x11x11xf32>
// CHECK: %[[S0:.*]] = prim.slice %[[P]] start [0, 0, 0, 0] stride [1, 1, 2, 2] : tensor<2x4x11x11xf32> -> tensor<2x4x5x5xf32>
// CHECK: %[[W0:.*]] = prim.slice %arg1 start [0, 0, 0, 0] stride [1, 1, 1, 1] : tensor<4x1x3x3xf32> -> tensor<4x1x1x1xf32>
// CHECK: %[[R0:.*]] = prim.reshape %[[W0]] : tensor<4x1x1x1xf32> -> tensor<4xf32>
// CHECK: %[[B0:.*]] = prim.broadcast_in_dim %[[R0]] dims [1] : tensor<4xf32> -> tensor<2x4x5x5xf32>
// CHECK: %[[M0:.*]] = prim.mul %[[S0]], %[[B0]]
// CHECK: prim.slice %[[P]] start [0, 0, 0, 1] stride [1, 1, 2, 2]
// CHECK: prim.slice %arg1 start [0, 0, 0, 1]
// CHECK: %[[M1:.*]] = prim.mul
// CHECK: prim.add %[[M0]], %[[M1]]
// CHECK: prim.slice %[[P]] start [0, 0, 2, 2] stride [1, 1, 2, 2]
// CHECK: %[[BIAS:.*]] = prim.broadcast_in_dim %arg2 dims [1] : tensor<4xf32> -> tensor<2x4x5x5xf32>
// CHECK: %[[OUT:.*]] = prim.add %{{.*}}, %[[BIAS]]
// CHECK: return %[[OUT]]
// SMALL-LABEL: func @depthwise3x3
// SMALL: prim.convolution
// GPU-LABEL: func @depthwise3x3
// GPU-NOT: loop.library_call
// GPU-COUNT-9: loop.load %arg0
// GPU-NOT: loop.load %arg0
// GPU: loop.store
func.func @depthwise3x3(%x: tensor<2x4x9x9xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x5x5xf32> {
  %0 = prim.convolution %x, %w bias %b stride [2, 2] padding [1, 1] dilation [1, 1] groups 4 : tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32>, tensor<4xf32> -> tensor<2x4x5x5xf32>
  return %0 : tensor<2x4x5x5xf32>
}

// -----

// Dilation offsets the taps; 1-d and bf16 (summed in f32, rounded once).
// CHECK-LABEL: func @dilated_bf16_1d
// CHECK: prim.convert_element_type %arg0 : tensor<1x3x8xbf16> -> tensor<1x3x8xf32>
// CHECK: prim.convert_element_type %arg1 : tensor<3x1x2xbf16> -> tensor<3x1x2xf32>
// CHECK: prim.slice %{{.*}} start [0, 0, 0] stride [1, 1, 1] : tensor<1x3x8xf32> -> tensor<1x3x5xf32>
// CHECK: prim.slice %{{.*}} start [0, 0, 3] stride [1, 1, 1] : tensor<1x3x8xf32> -> tensor<1x3x5xf32>
// CHECK: %[[S:.*]] = prim.add
// CHECK: prim.convert_element_type %[[S]] : tensor<1x3x5xf32> -> tensor<1x3x5xbf16>
func.func @dilated_bf16_1d(%x: tensor<1x3x8xbf16>, %w: tensor<3x1x2xbf16>) -> tensor<1x3x5xbf16> {
  %0 = prim.convolution %x, %w stride [1] padding [0] dilation [3] groups 3 : tensor<1x3x8xbf16>, tensor<3x1x2xbf16> -> tensor<1x3x5xbf16>
  return %0 : tensor<1x3x5xbf16>
}

// -----

// Kept: a depth multiplier (two output channels per input channel), a
// grouped convolution, a transposed one, a channels-last one, and a window
// over max-window (7x7 = 49 taps).
// CHECK-LABEL: func @kept
// CHECK-COUNT-5: prim.convolution
func.func @kept(%x: tensor<1x4x8x8xf32>, %w2: tensor<8x1x3x3xf32>, %wg: tensor<4x2x3x3xf32>,
                %wt: tensor<4x1x3x3xf32>, %xl: tensor<1x8x8x4xf32>, %w7: tensor<4x1x7x7xf32>)
    -> (tensor<1x8x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x10x10xf32>, tensor<1x6x6x4xf32>, tensor<1x4x8x8xf32>) {
  %0 = prim.convolution %x, %w2 stride [1, 1] padding [0, 0] dilation [1, 1] groups 4 : tensor<1x4x8x8xf32>, tensor<8x1x3x3xf32> -> tensor<1x8x6x6xf32>
  %1 = prim.convolution %x, %wg stride [1, 1] padding [0, 0] dilation [1, 1] groups 2 : tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32> -> tensor<1x4x6x6xf32>
  %2 = prim.convolution %x, %wt stride [1, 1] padding [0, 0] dilation [1, 1] groups 4 transposed output_padding [0, 0] : tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x10x10xf32>
  %3 = prim.convolution %xl, %wt stride [1, 1] padding [0, 0] dilation [1, 1] groups 4 channels_last : tensor<1x8x8x4xf32>, tensor<4x1x3x3xf32> -> tensor<1x6x6x4xf32>
  %4 = prim.convolution %x, %w7 stride [1, 1] padding [3, 3] dilation [1, 1] groups 4 : tensor<1x4x8x8xf32>, tensor<4x1x7x7xf32> -> tensor<1x4x8x8xf32>
  return %0, %1, %2, %3, %4 : tensor<1x8x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x10x10xf32>, tensor<1x6x6x4xf32>, tensor<1x4x8x8xf32>
}
