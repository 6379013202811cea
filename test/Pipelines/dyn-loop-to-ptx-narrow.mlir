// RUN: dyn-opt %s -split-input-file -dyn-gpu | FileCheck %s

// Row reductions of 8- and 16-bit integers reach the GPU as block
// reductions; their warp shuffles move the values widened to 32 bits (a
// 16-bit nvvm.shfl.sync is invalid IR), so every kernel becomes PTX.
// CHECK-LABEL: func.func @amin_i8
// CHECK: gpu.launch_func
// CHECK: gpu.binary
func.func @amin_i8(%x: tensor<4x1024xi8>) -> tensor<4xi8> {
  %0 = graph.amin %x dims [1] : tensor<4x1024xi8> -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// CHECK-LABEL: func.func @sum_i16
// CHECK: gpu.launch_func
// CHECK: gpu.binary
func.func @sum_i16(%x: tensor<4x1024xi16>) -> tensor<4xi16> {
  %0 = graph.sum %x dims [1] : tensor<4x1024xi16> -> tensor<4xi16>
  return %0 : tensor<4xi16>
}
