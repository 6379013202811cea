// RUN: dyn-opt %s -split-input-file -dyn-gpu | FileCheck %s

// The graphs capture writes for einsum("bhqd,bhkd->bhqk") (k laid out
// [batch, right, summed] and transposed) and for addbmm (one GEMM over the
// concatenated inner dims) on the GPU: each GEMM stays one library call in the
// host function, batched with transpose_b for the einsum, between the launches
// of the fused kernels that feed it and consume it (the scaling, the softmax;
// beta * x + alpha * product + ReLU).
// CHECK-LABEL: func.func @einsum_scores
// CHECK: gpu.launch_func
// CHECK: loop.matmul %{{.*}}, %{{.*}}, %{{.*}} transpose_b : memref<6x5x8xf32>, memref<6x6x8xf32>, memref<6x5x6xf32>
// CHECK: gpu.launch_func
// CHECK: gpu.binary
func.func @einsum_scores(%arg0: tensor<2x3x5x8xf32>, %arg1: tensor<2x3x6x8xf32>) -> tensor<2x3x5x6xf32> {
  %0 = graph.constant dense<2.000000e+00> : tensor<f32>
  %1 = graph.mul %arg0, %0 : tensor<2x3x5x8xf32>, tensor<f32> -> tensor<2x3x5x8xf32>
  %2 = graph.reshape %1 : tensor<2x3x5x8xf32> -> tensor<6x5x8xf32>
  %3 = graph.reshape %arg1 : tensor<2x3x6x8xf32> -> tensor<6x6x8xf32>
  %4 = graph.permute %3 dims [0, 2, 1] : tensor<6x6x8xf32> -> tensor<6x8x6xf32>
  %5 = graph.matmul %2, %4 : tensor<6x5x8xf32>, tensor<6x8x6xf32> -> tensor<6x5x6xf32>
  %6 = graph.reshape %5 : tensor<6x5x6xf32> -> tensor<2x3x5x6xf32>
  %7 = graph.softmax %6 dim 3 : tensor<2x3x5x6xf32> -> tensor<2x3x5x6xf32>
  return %7 : tensor<2x3x5x6xf32>
}

// -----

// CHECK-LABEL: func.func @addbmm
// CHECK: gpu.launch_func
// CHECK: loop.matmul %{{.*}}, %{{.*}}, %{{.*}} : memref<5x12xf32>, memref<12x10xf32>, memref<5x10xf32>
// CHECK: gpu.launch_func
// CHECK-NOT: loop.matmul
// CHECK: gpu.binary
func.func @addbmm(%arg0: tensor<5x10xf32>, %arg1: tensor<3x5x4xf32>, %arg2: tensor<3x4x10xf32>) -> tensor<5x10xf32> {
  %0 = graph.permute %arg1 dims [1, 0, 2] : tensor<3x5x4xf32> -> tensor<5x3x4xf32>
  %1 = graph.reshape %0 : tensor<5x3x4xf32> -> tensor<5x12xf32>
  %2 = graph.reshape %arg2 : tensor<3x4x10xf32> -> tensor<12x10xf32>
  %3 = graph.matmul %1, %2 : tensor<5x12xf32>, tensor<12x10xf32> -> tensor<5x10xf32>
  %4 = graph.constant dense<2.000000e+00> : tensor<f32>
  %5 = graph.mul %3, %4 : tensor<5x10xf32>, tensor<f32> -> tensor<5x10xf32>
  %6 = graph.constant dense<5.000000e-01> : tensor<f32>
  %7 = graph.mul %arg0, %6 : tensor<5x10xf32>, tensor<f32> -> tensor<5x10xf32>
  %8 = graph.add %7, %5 : tensor<5x10xf32>, tensor<5x10xf32> -> tensor<5x10xf32>
  %9 = graph.relu %8 : tensor<5x10xf32> -> tensor<5x10xf32>
  return %9 : tensor<5x10xf32>
}
