// RUN: dyn-opt %s -split-input-file | dyn-opt | FileCheck %s
// Round trip: every op family parses and prints back.

// CHECK-LABEL: func @elementwise
func.func @elementwise(%a: tensor<4x8xf32>, %b: tensor<8xf64>, %i: tensor<4x8xi64>) -> tensor<4x8xf64> {
  // CHECK: graph.cos %{{.*}} : tensor<4x8xf32> -> tensor<4x8xf32>
  %0 = graph.cos %a : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: graph.sin %{{.*}} : tensor<4x8xi64> -> tensor<4x8xf32>
  %1 = graph.sin %i : tensor<4x8xi64> -> tensor<4x8xf32>
  // CHECK: graph.add %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf64> -> tensor<4x8xf64>
  %2 = graph.add %0, %b : tensor<4x8xf32>, tensor<8xf64> -> tensor<4x8xf64>
  %c = graph.constant dense<2.000000e+00> : tensor<f32>
  // CHECK: graph.pow %{{.*}}, %{{.*}} : tensor<4x8xf64>, tensor<f32> -> tensor<4x8xf64>
  %3 = graph.pow %2, %c : tensor<4x8xf64>, tensor<f32> -> tensor<4x8xf64>
  // CHECK: graph.lt %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xi1>
  %4 = graph.lt %0, %1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xi1>
  // CHECK: graph.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xi1>, tensor<4x8xf64>, tensor<f32> -> tensor<4x8xf64>
  %5 = graph.where %4, %3, %c : tensor<4x8xi1>, tensor<4x8xf64>, tensor<f32> -> tensor<4x8xf64>
  return %5 : tensor<4x8xf64>
}

// -----

// CHECK-LABEL: func @reductions
func.func @reductions(%x: tensor<4x8x16xf32>) -> (tensor<4x1x16xf32>, tensor<16xf32>, tensor<4x8x16xf32>) {
  // CHECK: graph.mean %{{.*}} dims [1] keepdim : tensor<4x8x16xf32> -> tensor<4x1x16xf32>
  %0 = graph.mean %x dims [1] keepdim : tensor<4x8x16xf32> -> tensor<4x1x16xf32>
  // CHECK: graph.amax %{{.*}} dims [0, 1] : tensor<4x8x16xf32> -> tensor<16xf32>
  %1 = graph.amax %x dims [0, 1] : tensor<4x8x16xf32> -> tensor<16xf32>
  // CHECK: graph.softmax %{{.*}} dim 2 : tensor<4x8x16xf32> -> tensor<4x8x16xf32>
  %2 = graph.softmax %x dim 2 : tensor<4x8x16xf32> -> tensor<4x8x16xf32>
  return %0, %1, %2 : tensor<4x1x16xf32>, tensor<16xf32>, tensor<4x8x16xf32>
}

// -----

// CHECK-LABEL: func @shapes
func.func @shapes(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<8x4xf32>, tensor<32xf32>, tensor<2x4x8xf32>, tensor<4x3xf32>, tensor<8x8xf32>) {
  // CHECK: graph.matmul
  %0 = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  // CHECK: graph.permute %{{.*}} dims [1, 0]
  %1 = graph.permute %x dims [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  // CHECK: graph.reshape
  %2 = graph.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  // CHECK: graph.expand
  %3 = graph.expand %x : tensor<4x8xf32> -> tensor<2x4x8xf32>
  // CHECK: graph.slice %{{.*}} dim 1 start 1 end 7 step 2
  %4 = graph.slice %x dim 1 start 1 end 7 step 2 : tensor<4x8xf32> -> tensor<4x3xf32>
  // CHECK: graph.cat %{{.*}}, %{{.*}} dim 0
  %5 = graph.cat %x, %x dim 0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x16xf32>, tensor<8x4xf32>, tensor<32xf32>, tensor<2x4x8xf32>, tensor<4x3xf32>, tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func @gather
func.func @gather(%w: tensor<10x4xf32>, %i: tensor<3x4xi64>, %j: tensor<10x2xi32>) -> (tensor<3x4xf32>, tensor<10x2xf32>) {
  // CHECK: graph.gather %{{.*}} dim 0 index %{{.*}} : tensor<10x4xf32>, tensor<3x4xi64> -> tensor<3x4xf32>
  %0 = graph.gather %w dim 0 index %i : tensor<10x4xf32>, tensor<3x4xi64> -> tensor<3x4xf32>
  // CHECK: graph.gather %{{.*}} dim 1 index %{{.*}} : tensor<10x4xf32>, tensor<10x2xi32> -> tensor<10x2xf32>
  %1 = graph.gather %w dim 1 index %j : tensor<10x4xf32>, tensor<10x2xi32> -> tensor<10x2xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<10x2xf32>
}
