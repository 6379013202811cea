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
