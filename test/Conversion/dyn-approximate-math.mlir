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
