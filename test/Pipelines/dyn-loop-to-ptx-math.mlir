// RUN: dyn-opt %s -dyn-gpu | %python %S/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// The registry's math ops on the GPU path: each becomes its libdevice function
// (ConvertGpuOpsToNVVMOps), linked into the kernel's PTX.
// CHECK: .target sm_90
// CHECK: .entry
// CHECK-NOT: math.
func.func @math(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = graph.sinh %x : tensor<1024xf32> -> tensor<1024xf32>
  %1 = graph.acosh %0 : tensor<1024xf32> -> tensor<1024xf32>
  %2 = graph.erfc %1 : tensor<1024xf32> -> tensor<1024xf32>
  %3 = graph.log10 %2 : tensor<1024xf32> -> tensor<1024xf32>
  %4 = graph.round %3 : tensor<1024xf32> -> tensor<1024xf32>
  %5 = graph.copysign %4, %y : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  %6 = graph.fmod %5, %y : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  %7 = graph.softplus %6 {beta = 1.0 : f64, threshold = 20.0 : f64} : tensor<1024xf32> -> tensor<1024xf32>
  %8 = graph.exp2 %7 : tensor<1024xf32> -> tensor<1024xf32>
  return %8 : tensor<1024xf32>
}
