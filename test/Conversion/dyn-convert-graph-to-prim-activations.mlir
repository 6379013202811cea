// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim | FileCheck %s
// GraphToPrim/Activations.cpp: each activation as eager's kernel computes it.

// elu: x <= 0 ? expm1(x * input_scale) * alpha : x * scale.
// CHECK-LABEL: func @elu
// CHECK: %[[E:.*]] = prim.expm1
// CHECK: %[[NEG:.*]] = prim.mul %[[E]], %{{.*}} : tensor<4xf32>
// CHECK: %[[LE:.*]] = prim.le %{{.*}}, %{{.*}} : tensor<4xf32> -> tensor<4xi1>
// CHECK: prim.select %[[LE]], %[[NEG]], %{{.*}} : tensor<4xi1>, tensor<4xf32>
// CHECK-NOT: graph.
func.func @elu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.elu %x {alpha = 5.000000e-01 : f64} : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// bfloat16 computes in float32 and rounds once.
// CHECK-LABEL: func @gelu_bf16
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xbf16> -> tensor<4xf32>
// CHECK: prim.erf %{{.*}} : tensor<4xf32>
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf32> -> tensor<4xbf16>
func.func @gelu_bf16(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = graph.gelu %x {approximate = "none"} : tensor<4xbf16> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func @gelu_tanh
// CHECK: prim.tanh
// CHECK-NOT: prim.erf
func.func @gelu_tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.gelu %x {approximate = "tanh"} : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// silu: x / (1 + exp(-x)).
// CHECK-LABEL: func @silu
// CHECK: %[[N:.*]] = prim.neg %[[X:.*]] : tensor<4xf32>
// CHECK: %[[E:.*]] = prim.exp %[[N]]
// CHECK: %[[D:.*]] = prim.add %{{.*}}, %[[E]]
// CHECK: prim.div %{{.*}}, %[[D]]
func.func @silu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.silu %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// softplus: x where beta * x > threshold, else log1p(exp(beta * x)) / beta.
// CHECK-LABEL: func @softplus
// CHECK: prim.log1p
// CHECK: %[[GT:.*]] = prim.gt
// CHECK: prim.select %[[GT]]
func.func @softplus(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = graph.softplus %x {beta = 2.0 : f64, threshold = 20.0 : f64} : tensor<4xf64> -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// hardtanh: clamp with NaN-propagating min and max.
// CHECK-LABEL: func @hardtanh
// CHECK: %[[M:.*]] = prim.max
// CHECK: prim.min %[[M]]
func.func @hardtanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.hardtanh %x {min_val = -1.0 : f64, max_val = 1.0 : f64} : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @hardswish_mish_logsigmoid
// CHECK: prim.div
// CHECK: prim.tanh
// CHECK: prim.log1p
func.func @hardswish_mish_logsigmoid(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = graph.hardswish %x : tensor<4xf32> -> tensor<4xf32>
  %1 = graph.mish %x : tensor<4xf32> -> tensor<4xf32>
  %2 = graph.logsigmoid %x : tensor<4xf32> -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// glu: the halves of dim as slices, a * sigmoid(b) in float32 for bfloat16.
// CHECK-LABEL: func @glu
// CHECK: %[[A:.*]] = prim.slice %{{.*}} start [0, 0] stride [1, 1] : tensor<4x6xbf16> -> tensor<4x3xbf16>
// CHECK: %[[B:.*]] = prim.slice %{{.*}} start [0, 3] stride [1, 1] : tensor<4x6xbf16> -> tensor<4x3xbf16>
// CHECK: %[[B32:.*]] = prim.convert_element_type %[[B]] : tensor<4x3xbf16> -> tensor<4x3xf32>
// CHECK: %[[S:.*]] = prim.logistic %[[B32]] : tensor<4x3xf32>
// CHECK: prim.mul %{{.*}}, %[[S]] : tensor<4x3xf32>
func.func @glu(%x: tensor<4x6xbf16>) -> tensor<4x3xbf16> {
  %0 = graph.glu %x {dim = -1 : i64} : tensor<4x6xbf16> -> tensor<4x3xbf16>
  return %0 : tensor<4x3xbf16>
}

// -----

// prelu: the weight broadcast along the channel dim, select(x > 0, x, w * x).
// CHECK-LABEL: func @prelu
// CHECK: %[[W:.*]] = prim.broadcast_in_dim %{{.*}} dims [1] : tensor<3xf32> -> tensor<2x3x5xf32>
// CHECK: %[[P:.*]] = prim.gt %[[X:.*]], %{{.*}} : tensor<2x3x5xf32> -> tensor<2x3x5xi1>
// CHECK: %[[M:.*]] = prim.mul %[[W]], %[[X]] : tensor<2x3x5xf32>
// CHECK: prim.select %[[P]], %[[X]], %[[M]] : tensor<2x3x5xi1>, tensor<2x3x5xf32>
func.func @prelu(%x: tensor<2x3x5xf32>, %w: tensor<3xf32>) -> tensor<2x3x5xf32> {
  %0 = graph.prelu %x, %w : tensor<2x3x5xf32>, tensor<3xf32> -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}
