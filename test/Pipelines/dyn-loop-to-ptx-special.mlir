// RUN: dyn-opt %s -dyn-gpu | %python %S/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// The special functions (GraphToPrim/Special.cpp) on the GPU path: float64
// arithmetic and libdevice's float64 math, one kernel.
// CHECK: .target sm_90
// CHECK: .entry
// CHECK: cvt.f64.f32
// CHECK: cvt.rn.f32.f64
// CHECK-NOT: math.
func.func @special(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = graph.erfinv %x : tensor<1024xf32> -> tensor<1024xf32>
  %1 = graph.lgamma %0 : tensor<1024xf32> -> tensor<1024xf32>
  %2 = graph.digamma %1 : tensor<1024xf32> -> tensor<1024xf32>
  %3 = graph.i0e %2 : tensor<1024xf32> -> tensor<1024xf32>
  %4 = graph.atan2 %3, %y : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  %5 = graph.log_ndtr %4 : tensor<1024xf32> -> tensor<1024xf32>
  %6 = graph.polygamma %5 {n = 3 : i64} : tensor<1024xf32> -> tensor<1024xf32>
  %7 = graph.bessel_j0 %6 : tensor<1024xf32> -> tensor<1024xf32>
  %8 = graph.bessel_y1 %7 : tensor<1024xf32> -> tensor<1024xf32>
  %9 = graph.scaled_modified_bessel_k0 %8 : tensor<1024xf32> -> tensor<1024xf32>
  %10 = graph.airy_ai %9 : tensor<1024xf32> -> tensor<1024xf32>
  %11 = graph.zeta %10, %y : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  return %11 : tensor<1024xf32>
}
