// RUN: dyn-opt %s -dyn-graph-to-prim -dyn-prim-to-loop -dyn-loop-to-ptx | %python %S/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// Rounding toward zero has no libdevice mapping in ConvertGpuOpsToNVVMOps: it
// becomes llvm.intr.trunc, selected as cvt.rzi (torch.trunc, frac and div
// with rounding_mode="trunc" on CUDA).
// CHECK: .target sm_90
// CHECK: .entry
// CHECK: cvt.rzi.f32.f32
// CHECK-NOT: math.
func.func @trunc(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = graph.trunc %x : tensor<1024xf32> -> tensor<1024xf32>
  return %0 : tensor<1024xf32>
}
