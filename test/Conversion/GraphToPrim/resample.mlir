// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim | FileCheck %s

// bilinear of bf16, 3 -> 5 rows (half-pixel: sources 0, 0.4, 1, 1.6, 2.2
// clamped at 0), in f32 and rounded once: per dim, two gathers at constant
// indices times constant weights (1 - lambda, lambda), summed.
// CHECK-LABEL: func @bilinear_bf16
// CHECK: %[[X:.*]] = prim.convert_element_type %{{.*}} : tensor<1x2x3x4xbf16> -> tensor<1x2x3x4xf32>
// CHECK: prim.constant dense<[0, 0, 1, 1, 2]> : tensor<5xi64>
// CHECK: %[[G0:.*]] = prim.gather %[[X]] dim 2 index
// CHECK: prim.constant dense<[1.000000e+00, 0.599999964, 1.000000e+00, 0.399999857, 0.799999952]> : tensor<5xf32>
// CHECK: prim.constant dense<[1, 1, 2, 2, 2]> : tensor<5xi64>
// CHECK: %[[G1:.*]] = prim.gather %[[X]] dim 2 index
// CHECK: %[[ROWS:.*]] = prim.add
// CHECK: prim.gather %[[ROWS]] dim 3 index
// CHECK: prim.convert_element_type %{{.*}} : tensor<1x2x5x4xf32> -> tensor<1x2x5x4xbf16>
// CHECK-NOT: graph.
func.func @bilinear_bf16(%x: tensor<1x2x3x4xbf16>) -> tensor<1x2x5x4xbf16> {
  %0 = graph.upsample %x {mode = "linear", output_size = array<i64: 5, 4>, align_corners = false, scales = array<f64>} : tensor<1x2x3x4xbf16> -> tensor<1x2x5x4xbf16>
  return %0 : tensor<1x2x5x4xbf16>
}

// -----

// bicubic of f64 with align_corners, 2 -> 3 rows: four taps with the cubic
// convolution weights (A = -0.75) at clamped indices, in f64.
// CHECK-LABEL: func @bicubic_f64
// CHECK-NOT: prim.convert_element_type
// CHECK: prim.constant dense<[0.000000e+00, -9.375000e-02, 0.000000e+00]> : tensor<3xf64>
// CHECK: prim.constant dense<[1.000000e+00, 5.937500e-01, 1.000000e+00]> : tensor<3xf64>
// CHECK: prim.constant dense<[0.000000e+00, 5.937500e-01, 0.000000e+00]> : tensor<3xf64>
// CHECK: prim.constant dense<[0.000000e+00, -9.375000e-02, 0.000000e+00]> : tensor<3xf64>
// CHECK-NOT: graph.
func.func @bicubic_f64(%x: tensor<1x1x2x2xf64>) -> tensor<1x1x3x2xf64> {
  %0 = graph.upsample %x {mode = "cubic", output_size = array<i64: 3, 2>, align_corners = true, scales = array<f64: 1.5, 1.0>} : tensor<1x1x2x2xf64> -> tensor<1x1x3x2xf64>
  return %0 : tensor<1x1x3x2xf64>
}
