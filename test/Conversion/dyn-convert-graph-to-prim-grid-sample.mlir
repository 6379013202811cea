// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim | FileCheck %s
// RUN: dyn-opt %s -split-input-file -dyn-graph-to-prim -dyn-prim-to-loop-gpu -dyn-convert-loop-to-gpu | FileCheck %s --check-prefix=GPU

// Bilinear, reflection padding, the CPU's vectorized 2-d rules: the input
// viewed [N, C, H*W]; the grid's y (its last coordinate) and x sliced out as
// [N, 1, Q]; x + 1 unnormalized, reflected by the doubled span (|x + 0.5|
// folded by 8 = 2 * 4, trunc) and clipped (a NaN to 0); four neighbours
// gathered, each weighted and summed.
// CHECK-LABEL: func @grid_sampler
// CHECK: %[[FLAT:.*]] = prim.reshape %arg0 : tensor<1x2x4x5xf32> -> tensor<1x2x20xf32>
// CHECK: prim.slice %arg1 start [0, 0, 0, 1] stride [1, 1, 1, 1] : tensor<1x3x3x2xf32> -> tensor<1x3x3x1xf32>
// CHECK: prim.slice %arg1 start [0, 0, 0, 0] stride [1, 1, 1, 1] : tensor<1x3x3x2xf32> -> tensor<1x3x3x1xf32>
// CHECK: prim.constant dense<8.000000e+00> : tensor<1x1x9xf32>
// CHECK: prim.trunc
// CHECK: prim.floor
// CHECK-COUNT-4: prim.gather %[[FLAT]] dim 2 index %{{.*}} : tensor<1x2x20xf32>, tensor<1x2x9xi64> -> tensor<1x2x9xf32>
// CHECK: prim.reshape %{{.*}} : tensor<1x2x9xf32> -> tensor<1x2x3x3xf32>
// GPU-LABEL: func @grid_sampler
// GPU: gpu.launch blocks
func.func @grid_sampler(%x: tensor<1x2x4x5xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = graph.grid_sampler %x, %g {mode = 0 : i64, padding = 2 : i64, align_corners = false, cuda_rules = false} : tensor<1x2x4x5xf32>, tensor<1x3x3x2xf32> -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Nearest, border padding, 3-d with CUDA's rules: each coordinate clipped,
// then downgraded to -100 where it is not finite or out of the int range,
// rounded half to even; one gather of the [N, C, D*H*W] input.
// CHECK-LABEL: func @grid_sampler_3d
// CHECK: prim.constant dense<-1.000000e+02> : tensor<1x1x8xf64>
// CHECK: prim.round
// CHECK: prim.gather %{{.*}} dim 2 index %{{.*}} : tensor<1x1x24xf64>, tensor<1x1x8xi64> -> tensor<1x1x8xf64>
func.func @grid_sampler_3d(%x: tensor<1x1x2x3x4xf64>, %g: tensor<1x2x2x2x3xf64>) -> tensor<1x1x2x2x2xf64> {
  %0 = graph.grid_sampler %x, %g {mode = 1 : i64, padding = 1 : i64, align_corners = true, cuda_rules = true} : tensor<1x1x2x3x4xf64>, tensor<1x2x2x2x3xf64> -> tensor<1x1x2x2x2xf64>
  return %0 : tensor<1x1x2x2x2xf64>
}
