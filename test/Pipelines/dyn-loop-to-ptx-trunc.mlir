// RUN: dyn-opt %s -dyn-gpu | %python %S/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// Math ops without a libdevice mapping in ConvertGpuOpsToNVVMOps become LLVM
// intrinsics the NVPTX backend selects: math.trunc (torch.trunc, frac, div
// with rounding_mode="trunc") as cvt.rzi, math.absi (abs of an integer
// tensor: T5's relative position buckets) as abs.s64.
// CHECK: .target sm_90
// CHECK: .entry
// CHECK-DAG: cvt.rzi.f32.f32
// CHECK-DAG: abs.s64
// CHECK-NOT: math.
func.func @trunc_absi(%x: tensor<1024xf32>, %i: tensor<1024xi64>) -> tensor<1024xf32> {
  %0 = graph.trunc %x : tensor<1024xf32> -> tensor<1024xf32>
  %1 = graph.abs %i : tensor<1024xi64> -> tensor<1024xi64>
  %2 = graph.convert %1 : tensor<1024xi64> -> tensor<1024xf32>
  %3 = graph.add %0, %2 : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  return %3 : tensor<1024xf32>
}
