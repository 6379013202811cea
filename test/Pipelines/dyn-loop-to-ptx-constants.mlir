// RUN: dyn-opt %s -dyn-gpu | FileCheck %s
// RUN: dyn-opt %s -dyn-gpu | %python %S/extract_ptx.py > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// Constants live in the kernels, not in the launches:
// - a float64 fill moves two values a thread with a vector<2xf64> constant,
//   which the launch plan could not pass (ones/zeros/full/fill of float64
//   failed on CUDA);
// - a transpose read through a reshape divides indices by constant sizes,
//   which the kernel does with multiplies and shifts, never with a 64-bit
//   division by a kernel parameter.
// CHECK-LABEL: func.func @constants
// CHECK: gpu.launch_func @{{.*}} args(%{{[a-z0-9_]*}} : memref<3x4xf64>)
// CHECK: gpu.launch_func @{{.*}} args(%{{[a-z0-9_]*}} : memref<6x10x14xf32>, %{{[a-z0-9_]*}} : memref<14x60xf32>)
// PTX: .entry
// PTX-NOT: div.u64
// PTX-NOT: rem.u64
// PTX-NOT: div.s64
// PTX-NOT: rem.s64
func.func @constants(%x: tensor<6x10x14xf32>) -> (tensor<3x4xf64>, tensor<14x60xf32>) {
  %0 = graph.constant dense<1.0> : tensor<f64>
  %1 = graph.expand %0 : tensor<f64> -> tensor<3x4xf64>
  %2 = graph.permute %x dims [2, 0, 1] : tensor<6x10x14xf32> -> tensor<14x6x10xf32>
  %3 = graph.reshape %2 : tensor<14x6x10xf32> -> tensor<14x60xf32>
  %4 = graph.neg %3 : tensor<14x60xf32> -> tensor<14x60xf32>
  return %1, %4 : tensor<3x4xf64>, tensor<14x60xf32>
}
