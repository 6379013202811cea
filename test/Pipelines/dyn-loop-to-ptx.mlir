// RUN: dyn-opt %s -dyn-gpu | FileCheck %s
// RUN: dyn-opt %s -dyn-gpu | %python %S/extract_ptx.py > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// Graph in, PTX for sm_90 out: the host function keeps one gpu.launch_func
// per kernel (one block per row for rmsnorm), the kernels are a gpu.binary.
// The weight's square root (to check its rounding) is sqrt.rn.f32, as nvcc
// compiles eager's.
// CHECK-LABEL: func.func @rmsnorm
// CHECK: gpu.launch_func @{{.*}} blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.binary
// PTX: .target sm_90
// PTX: .entry dyn_
// PTX: shfl.sync.bfly
// PTX: rsqrt
// PTX: sqrt.rn.f32
func.func @rmsnorm(%x: tensor<256x1024xf32>, %w: tensor<1024xf32>) -> tensor<256x1024xf32> {
  %c2 = graph.constant dense<2.0> : tensor<f32>
  %sq = graph.pow %x, %c2 : tensor<256x1024xf32>, tensor<f32> -> tensor<256x1024xf32>
  %m = graph.mean %sq dims [1] keepdim : tensor<256x1024xf32> -> tensor<256x1xf32>
  %eps = graph.constant dense<1.0e-6> : tensor<f32>
  %a = graph.add %m, %eps : tensor<256x1xf32>, tensor<f32> -> tensor<256x1xf32>
  %r = graph.rsqrt %a : tensor<256x1xf32> -> tensor<256x1xf32>
  %y = graph.mul %x, %r : tensor<256x1024xf32>, tensor<256x1xf32> -> tensor<256x1024xf32>
  %s = graph.sqrt %w : tensor<1024xf32> -> tensor<1024xf32>
  %z = graph.mul %y, %s : tensor<256x1024xf32>, tensor<1024xf32> -> tensor<256x1024xf32>
  return %z : tensor<256x1024xf32>
}
