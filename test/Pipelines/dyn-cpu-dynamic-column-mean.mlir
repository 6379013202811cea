// RUN: dyn-opt %s --dyn-cpu | FileCheck %s

// A symbolic training forward: a mean over the `?` batch dim (its count, a sum
// of ones over the runtime rows, is a column reduction whose value is a
// constant from outside the reduction's body) fused beside the bias add. The
// column reduction's sweep takes that constant as it is.

// CHECK: llvm.func @train_forward
func.func @train_forward(%arg0: tensor<?x6xf32>, %arg1: tensor<6x6xf32>, %arg2: tensor<6xf32>, %arg3: tensor<6xf32>)
    -> (tensor<f32>, tensor<6xf32>, tensor<?x6xi1>) {
  %0 = graph.permute %arg1 dims [1, 0] : tensor<6x6xf32> -> tensor<6x6xf32>
  %1 = graph.addmm %arg2, %arg0, %0 {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64}
      : tensor<6xf32>, tensor<?x6xf32>, tensor<6x6xf32> -> tensor<?x6xf32>
  %2 = graph.mean %1 dims [0] : tensor<?x6xf32> -> tensor<6xf32>
  %4 = graph.add %arg3, %2 : tensor<6xf32>, tensor<6xf32> -> tensor<6xf32>
  %6 = graph.relu %1 : tensor<?x6xf32> -> tensor<?x6xf32>
  %7 = graph.sum %6 dims [0, 1] : tensor<?x6xf32> -> tensor<f32>
  %8 = graph.constant dense<0.000000e+00> : tensor<f32>
  %9 = graph.gt %6, %8 : tensor<?x6xf32>, tensor<f32> -> tensor<?x6xi1>
  return %7, %4, %9 : tensor<f32>, tensor<6xf32>, tensor<?x6xi1>
}
