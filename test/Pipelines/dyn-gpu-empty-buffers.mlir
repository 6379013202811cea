// RUN: dyn-opt %s -split-input-file -dyn-gpu | FileCheck %s

// The backward of a slice to no elements (narrow(x, 1, 0, 0)): the zero-size
// cotangent is padded back to the input's size. No load from a buffer without
// elements reads anything (the pad's clamped read is selected away): such
// loads are zeros before outlining, and the buffer is no kernel argument (a
// bare pointer to no elements was no legal one: "failed to legalize operation
// 'gpu.func'"). The kernel takes only its output.
// CHECK-LABEL: func @train_backward
// CHECK: gpu.launch_func @{{.*}} args(%{{[^ ]*}} : memref<5x5x5xf32>)
// CHECK: gpu.binary
func.func @train_backward(%arg0: tensor<5x0x5xf32>) -> tensor<5x5x5xf32> {
  %0 = graph.constant dense<2.0> : tensor<f32>
  %1 = graph.mul %arg0, %0 : tensor<5x0x5xf32>, tensor<f32> -> tensor<5x0x5xf32>
  %2 = graph.pad %1 constant low [0, 0, 0] high [0, 5, 0] : tensor<5x0x5xf32> -> tensor<5x5x5xf32>
  return %2 : tensor<5x5x5xf32>
}

// -----

// A pad of a [5, 0] slice back to [7, 3] with a fill of 1: every element is
// the fill.
// CHECK-LABEL: func @pad_of_nothing
// CHECK: gpu.launch_func @{{.*}} args(%{{[^ ]*}} : memref<7x3xf32>)
func.func @pad_of_nothing(%x: tensor<5x0xf32>) -> tensor<7x3xf32> {
  %0 = graph.pad %x constant low [1, 1] high [1, 2] value 1.0 : tensor<5x0xf32> -> tensor<7x3xf32>
  return %0 : tensor<7x3xf32>
}
