// RUN: dyn-opt %s -dyn-gpu | FileCheck %s
// RUN: dyn-opt %s -dyn-gpu | %python %S/extract_ptx.py > %t.all.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.all.ptx -o %t.cubin %}

// A convolution block on the GPU: the convolution and the linear layer's GEMM
// stay library calls in the host function, in order between the launches of
// the fused kernels around them (bias + ReLU + max pool; bias + GELU-free add).
// CHECK-LABEL: func.func @block
// CHECK: loop.convolution
// CHECK: gpu.launch_func @dyn_block_kernels::@dyn_
// CHECK: loop.matmul %{{.*}}, %{{.*}}, %{{.*}} transpose_b
// CHECK: gpu.launch_func @dyn_block_kernels::@dyn_
// The host function's kernels are one module (one PTX compile).
// CHECK-COUNT-1: gpu.binary
// CHECK-NOT: gpu.binary
func.func @block(%x: tensor<2x3x16x16xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>,
                 %lw: tensor<10x512xf32>, %lb: tensor<10xf32>) -> tensor<2x10xf32> {
  %c = graph.convolution %x, %w bias %b stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<2x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32> -> tensor<2x8x16x16xf32>
  %r = graph.relu %c : tensor<2x8x16x16xf32> -> tensor<2x8x16x16xf32>
  %p = graph.max_pool %r kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] : tensor<2x8x16x16xf32> -> tensor<2x8x8x8xf32>
  %f = graph.reshape %p : tensor<2x8x8x8xf32> -> tensor<2x512xf32>
  %wt = graph.permute %lw dims [1, 0] : tensor<10x512xf32> -> tensor<512x10xf32>
  %m = graph.matmul %f, %wt : tensor<2x512xf32>, tensor<512x10xf32> -> tensor<2x10xf32>
  %y = graph.add %m, %lb : tensor<2x10xf32>, tensor<10xf32> -> tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}
