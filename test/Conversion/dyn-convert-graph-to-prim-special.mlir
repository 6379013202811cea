// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim | FileCheck %s
// GraphToPrim/Special.cpp: pointwise math and special functions.

// atan2 computes in float64 and keeps the signed zeros' cases explicit; fmax
// takes the other operand where one is NaN; float16 math computes in float32
// and rounds once.
// CHECK-LABEL: func @binary
// CHECK: prim.atan2 %{{.*}}, %{{.*}} : tensor<4xf64>
// CHECK: prim.copysign
// CHECK: prim.select
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf64> -> tensor<4xf32>
// CHECK: prim.max
// CHECK: prim.ne
// CHECK: prim.select
// CHECK: prim.mul %{{.*}} : tensor<4xf32>
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf32> -> tensor<4xf16>
func.func @binary(%x: tensor<4xf32>, %y: tensor<4xf32>, %h: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf16>) {
  %0 = graph.atan2 %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = graph.fmax %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %2 = graph.deg2rad %h : tensor<4xf16> -> tensor<4xf16>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf16>
}

// -----

// logical_xor compares the operands' truth values; signbit of an integer is
// x < 0, of a float copysign(1, x) < 0; isreal of a real tensor is true.
// CHECK-LABEL: func @booleans
// CHECK: prim.ne %{{.*}} : tensor<4xi64> -> tensor<4xi1>
// CHECK: prim.ne %{{.*}} : tensor<4xi1> -> tensor<4xi1>
// CHECK: prim.lt %{{.*}} : tensor<4xi64> -> tensor<4xi1>
// CHECK: prim.copysign
// CHECK: prim.lt %{{.*}} : tensor<4xf32> -> tensor<4xi1>
// CHECK: prim.constant dense<true> : tensor<4xi1>
func.func @booleans(%i: tensor<4xi64>, %b: tensor<4xi1>, %x: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = graph.logical_xor %i, %b : tensor<4xi64>, tensor<4xi1> -> tensor<4xi1>
  %1 = graph.signbit %i : tensor<4xi64> -> tensor<4xi1>
  %2 = graph.signbit %x : tensor<4xf32> -> tensor<4xi1>
  %3 = graph.isreal %x : tensor<4xf32> -> tensor<4xi1>
  return %0, %1, %2, %3 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// nan_to_num of an integer tensor is the identity; logit with eps clamps first.
// CHECK-LABEL: func @attributes
// CHECK-SAME: (%[[I:.*]]: tensor<4xi32>, %[[X:.*]]: tensor<4xf32>)
// CHECK: prim.constant dense<1.000000e+01> : tensor<4xf32>
// CHECK: prim.lt %[[X]]
// CHECK: prim.log
// CHECK: return %[[I]]
func.func @attributes(%i: tensor<4xi32>, %x: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = graph.nan_to_num %i {nan = 0.0 : f64, posinf = 1.0 : f64, neginf = -1.0 : f64} : tensor<4xi32> -> tensor<4xi32>
  %1 = graph.nan_to_num %x {nan = 0.0 : f64, posinf = 10.0 : f64, neginf = -1.0 : f64} : tensor<4xf32> -> tensor<4xf32>
  %2 = graph.logit %x {eps = 0.25 : f64, round_steps = true} : tensor<4xf32> -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// bfloat16 logit computes in f32: with round_steps each step is rounded to
// bf16 (eager's CPU kernel), else only the result (CUDA's).
// CHECK-LABEL: func @logit_steps
// CHECK: prim.div
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf32> -> tensor<4xbf16>
// CHECK: prim.log
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf32> -> tensor<4xbf16>
// CHECK-LABEL: func @logit_once
// CHECK: prim.div
// CHECK-NEXT: prim.log
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf32> -> tensor<4xbf16>
// CHECK-NOT: prim.convert_element_type
// CHECK: return
func.func @logit_steps(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = graph.logit %x {eps = -1.0 : f64, round_steps = true} : tensor<4xbf16> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}
func.func @logit_once(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = graph.logit %x {eps = -1.0 : f64, round_steps = false} : tensor<4xbf16> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// Special functions compute in float64 and round once.
// CHECK-LABEL: func @special
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf32> -> tensor<4xf64>
// CHECK: prim.erf %{{.*}} : tensor<4xf64>
// CHECK: prim.erfc %{{.*}} : tensor<4xf64>
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf64> -> tensor<4xf32>
// CHECK: prim.tan %{{.*}} : tensor<4xf64>
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf64> -> tensor<4xf32>
func.func @special(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = graph.erfinv %x : tensor<4xf32> -> tensor<4xf32>
  %1 = graph.polygamma %x {n = 2 : i64} : tensor<4xf32> -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// The Bessel and Airy functions compute in float64 with eager's rational
// forms and round once; a float32 input's asymptotic phase x - pi/4 is
// rounded to float32 (eager's float32 kernel), a float64 input's is not.
// CHECK-LABEL: func @bessel
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf32> -> tensor<4xf64>
// CHECK: prim.abs
// CHECK: prim.cos %{{.*}} : tensor<4xf64>
// CHECK: prim.sin %{{.*}} : tensor<4xf64>
// CHECK: prim.sqrt %{{.*}} : tensor<4xf64>
// CHECK: prim.select
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf64> -> tensor<4xf32>
// CHECK: prim.log %{{.*}} : tensor<4xf64>
// CHECK: prim.exp %{{.*}} : tensor<4xf64>
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf64> -> tensor<4xf32>
// CHECK: prim.sin %{{.*}} : tensor<4xf64>
// CHECK: prim.cos %{{.*}} : tensor<4xf64>
// CHECK-NOT: prim.convert_element_type %{{.*}} : tensor<4xf64> -> tensor<4xf32>
// CHECK: return
func.func @bessel(%x: tensor<4xf32>, %y: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf64>) {
  %0 = graph.bessel_j0 %x : tensor<4xf32> -> tensor<4xf32>
  %1 = graph.modified_bessel_k1 %x : tensor<4xf32> -> tensor<4xf32>
  %2 = graph.airy_ai %y : tensor<4xf64> -> tensor<4xf64>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf64>
}

// -----

// zeta(x, q) of integer operands: float64, eager's direct sum with pow and
// its early stop as selects, +inf at x = 1, rounded to float32 once.
// CHECK-LABEL: func @zeta
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xi64> -> tensor<4xf64>
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xi64> -> tensor<4xf64>
// CHECK: prim.pow %{{.*}} : tensor<4xf64>
// CHECK: prim.floor
// CHECK: prim.constant dense<0x7FF0000000000000> : tensor<4xf64>
// CHECK: prim.select
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf64> -> tensor<4xf32>
func.func @zeta(%x: tensor<4xi64>, %q: tensor<4xi64>) -> tensor<4xf32> {
  %0 = graph.zeta %x, %q : tensor<4xi64>, tensor<4xi64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
