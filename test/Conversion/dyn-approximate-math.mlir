// RUN: dyn-opt %s -split-input-file -dyn-approximate-math | FileCheck %s

// f32 sin becomes a polynomial (no call remains); f64 stays for libm; sqrt stays exact.
// CHECK-LABEL: func @approximate
// CHECK-NOT: math.sin %{{.*}} : f32
// CHECK: math.fma
// CHECK: math.sin %{{.*}} : f64
// CHECK: math.sqrt %{{.*}} : f32
func.func @approximate(%x: f32, %y: f64) -> (f32, f64, f32) {
  %0 = math.sin %x : f32
  %1 = math.sin %y : f64
  %2 = math.sqrt %x : f32
  return %0, %1, %2 : f32, f64, f32
}

// -----

// f32 erf is one rational function of x^2 on x clamped to [-4, 4] (no
// piecewise selects of coefficients): x * P(x^2) / Q(x^2), P of degree 6 and
// Q of degree 4 (Horner's rule, fused multiply-adds). f64 erf stays for libm.
// CHECK-LABEL: func @rational_erf
// CHECK-NOT: math.erf %{{.*}} : f32
// CHECK-NOT: arith.select
// CHECK: %[[LO:.*]] = arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: %[[X:.*]] = arith.minimumf %[[LO]], %{{.*}} : f32
// CHECK: %[[X2:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-COUNT-6: math.fma %{{.*}}, %[[X2]], %{{.*}} : f32
// CHECK: %[[P:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK-COUNT-4: math.fma %{{.*}}, %[[X2]], %{{.*}} : f32
// CHECK: arith.divf %[[P]], %{{.*}} : f32
// CHECK: math.erf %{{.*}} : f64
func.func @rational_erf(%x: f32, %y: f64) -> (f32, f64) {
  %0 = math.erf %x : f32
  %1 = math.erf %y : f64
  return %0, %1 : f32, f64
}
