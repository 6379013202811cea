// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim | FileCheck %s
// GraphToPrim/Math.cpp and the registry's new 1:1 math ops.

// CHECK-LABEL: func @one_to_one
// CHECK: prim.sinh %{{.*}} : tensor<4xf32>
// CHECK: prim.acosh %{{.*}} : tensor<4xf32>
// CHECK: prim.log10 %{{.*}} : tensor<4xf32>
// CHECK: prim.round %{{.*}} : tensor<4xf32>
func.func @one_to_one(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = graph.sinh %x : tensor<4xf32> -> tensor<4xf32>
  %1 = graph.acosh %x : tensor<4xf32> -> tensor<4xf32>
  %2 = graph.log10 %x : tensor<4xf32> -> tensor<4xf32>
  %3 = graph.round %x : tensor<4xf32> -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// An integer tensor's trunc and round are the identity; sign is (x > 0) - (x < 0).
// CHECK-LABEL: func @integers
// CHECK-SAME: (%[[X:.*]]: tensor<4xi64>)
// CHECK-NOT: prim.trunc
// CHECK: prim.gt %[[X]]
// CHECK: prim.lt %[[X]]
// CHECK: prim.sub
// CHECK: return %[[X]], %[[X]]
func.func @integers(%x: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
  %0 = graph.trunc %x : tensor<4xi64> -> tensor<4xi64>
  %1 = graph.round %x : tensor<4xi64> -> tensor<4xi64>
  %2 = graph.sign %x : tensor<4xi64> -> tensor<4xi64>
  return %0, %1, %2 : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}

// -----

// isnan is x != x; integers are never NaN.
// CHECK-LABEL: func @classify
// CHECK: prim.ne %[[Y:.*]], %[[Y]] : tensor<4xf32> -> tensor<4xi1>
// CHECK: prim.constant dense<false> : tensor<4xi1>
func.func @classify(%y: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = graph.isnan %y : tensor<4xf32> -> tensor<4xi1>
  %1 = graph.isnan %i : tensor<4xi32> -> tensor<4xi1>
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
}

// -----

// addcmul of bfloat16: float32 throughout, one rounding (eager's kernel).
// CHECK-LABEL: func @addcmul_bf16
// CHECK-COUNT-3: prim.convert_element_type %{{.*}} : tensor<8xbf16> -> tensor<8xf32>
// CHECK: prim.convert_element_type %{{.*}} : tensor<8xf32> -> tensor<8xbf16>
// CHECK-NOT: prim.convert_element_type
func.func @addcmul_bf16(%a: tensor<8xbf16>, %b: tensor<8xbf16>, %c: tensor<8xbf16>) -> tensor<8xbf16> {
  %0 = graph.addcmul %a, %b, %c {value = 3.140000e+00 : f64} : tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16> -> tensor<8xbf16>
  return %0 : tensor<8xbf16>
}

// -----

// fmod: prim.fmod on floats, a - (a / b) * b on integers.
// CHECK-LABEL: func @fmod
// CHECK: prim.fmod %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK: prim.div %{{.*}}, %{{.*}} : tensor<4xi32>
func.func @fmod(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi32>, %j: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = graph.fmod %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = graph.fmod %i, %j : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %0, %1 : tensor<4xf32>, tensor<4xi32>
}

// -----

// clamp: max with the lower bound, then min with the upper one, each
// broadcast to the result; a missing bound comes as the type's extreme.
// CHECK-LABEL: func @clamp
// CHECK: %[[LO:.*]] = prim.broadcast_in_dim %{{.*}} dims [] : tensor<i32> -> tensor<4x3xi32>
// CHECK: %[[HI:.*]] = prim.broadcast_in_dim %{{.*}} dims [1] : tensor<3xi32> -> tensor<4x3xi32>
// CHECK: %[[M:.*]] = prim.max %{{.*}}, %[[LO]] : tensor<4x3xi32>
// CHECK: prim.min %[[M]], %[[HI]] : tensor<4x3xi32>
func.func @clamp(%x: tensor<4x3xi32>, %lo: tensor<i32>, %hi: tensor<3xi32>) -> tensor<4x3xi32> {
  %0 = graph.clamp %x, %lo, %hi : tensor<4x3xi32>, tensor<i32>, tensor<3xi32> -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}

// -----

// round(x, decimals): each step in x's type, 10^|d| rounded to it.
// CHECK-LABEL: func @round_decimals
// CHECK: %[[P:.*]] = prim.constant dense<1.000000e+02> : tensor<4xf32>
// CHECK: %[[M:.*]] = prim.mul %{{.*}}, %[[P]] : tensor<4xf32>
// CHECK: %[[R:.*]] = prim.round %[[M]] : tensor<4xf32>
// CHECK: prim.div %[[R]], %[[P]] : tensor<4xf32>
// CHECK: %[[Q:.*]] = prim.div %{{.*}}, %{{.*}} : tensor<4xbf16>
// CHECK: %[[S:.*]] = prim.round %[[Q]] : tensor<4xbf16>
// CHECK: prim.mul %[[S]], %{{.*}} : tensor<4xbf16>
func.func @round_decimals(%x: tensor<4xf32>, %y: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xbf16>) {
  %0 = graph.round_decimals %x {decimals = 2 : i64} : tensor<4xf32> -> tensor<4xf32>
  %1 = graph.round_decimals %y {decimals = -1 : i64} : tensor<4xbf16> -> tensor<4xbf16>
  return %0, %1 : tensor<4xf32>, tensor<4xbf16>
}

// -----

// div_rounded floor of bf16 with round_steps: eager's div_floor in f32 with
// every step rounded to bf16 (a round trip through bf16).
// CHECK-LABEL: func @div_floor_bf16
// CHECK: %[[MOD:.*]] = prim.fmod %[[A:.*]], %[[B:.*]] : tensor<4xf32>
// CHECK: %[[D:.*]] = prim.sub %[[A]], %[[MOD]] : tensor<4xf32>
// CHECK: prim.convert_element_type %[[D]] : tensor<4xf32> -> tensor<4xbf16>
// CHECK: prim.floor
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf32> -> tensor<4xbf16>
func.func @div_floor_bf16(%a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = graph.div_rounded %a, %b {rounding_mode = "floor", round_steps = true} : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// div_rounded of integers: truncating division; floor one less where the
// remainder's sign differs from the divisor's.
// CHECK-LABEL: func @div_floor_i32
// CHECK: %[[Q:.*]] = prim.div %[[A:.*]], %[[B:.*]] : tensor<4xi32>
// CHECK: %[[P:.*]] = prim.mul %[[Q]], %[[B]]
// CHECK: %[[R:.*]] = prim.sub %[[A]], %[[P]]
// CHECK: prim.and
// CHECK: prim.select
func.func @div_floor_i32(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = graph.div_rounded %a, %b {rounding_mode = "floor", round_steps = false} : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
