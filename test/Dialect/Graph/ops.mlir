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

// -----

// CHECK-LABEL: func @windows
func.func @windows(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>,
                   %wt: tensor<4x3x2x2xf32>) -> (tensor<2x8x5x5xf32>, tensor<2x6x18x18xf32>, tensor<2x4x5x5xf32>, tensor<2x4x4x4xf32>, tensor<2x4x3x2xf32>, tensor<2x4x1x1xf32>, tensor<2x4x11x13xf32>) {
  // CHECK: graph.convolution %{{.*}}, %{{.*}} bias %{{.*}} stride [2, 2] padding [1, 1] dilation [1, 1] groups 2 : tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<8xf32> -> tensor<2x8x5x5xf32>
  %0 = graph.convolution %x, %w bias %b stride [2, 2] padding [1, 1] dilation [1, 1] groups 2 : tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<8xf32> -> tensor<2x8x5x5xf32>
  // CHECK: graph.convolution %{{.*}}, %{{.*}} stride [2, 2] padding [0, 0] dilation [1, 1] groups 2 transposed output_padding [0, 0] : tensor<2x4x9x9xf32>, tensor<4x3x2x2xf32> -> tensor<2x6x18x18xf32>
  %1 = graph.convolution %x, %wt stride [2, 2] padding [0, 0] dilation [1, 1] groups 2 transposed output_padding [0, 0] : tensor<2x4x9x9xf32>, tensor<4x3x2x2xf32> -> tensor<2x6x18x18xf32>
  // CHECK: graph.max_pool %{{.*}} kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] ceil_mode : tensor<2x4x9x9xf32> -> tensor<2x4x5x5xf32>
  %2 = graph.max_pool %x kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] ceil_mode : tensor<2x4x9x9xf32> -> tensor<2x4x5x5xf32>
  // CHECK: graph.avg_pool %{{.*}} kernel [2, 2] stride [2, 2] padding [0, 0] count_include_pad divisor_override 3 : tensor<2x4x9x9xf32> -> tensor<2x4x4x4xf32>
  %3 = graph.avg_pool %x kernel [2, 2] stride [2, 2] padding [0, 0] count_include_pad divisor_override 3 : tensor<2x4x9x9xf32> -> tensor<2x4x4x4xf32>
  // CHECK: graph.adaptive_avg_pool %{{.*}} output_size [3, 2] : tensor<2x4x9x9xf32> -> tensor<2x4x3x2xf32>
  %4 = graph.adaptive_avg_pool %x output_size [3, 2] : tensor<2x4x9x9xf32> -> tensor<2x4x3x2xf32>
  // CHECK: graph.adaptive_max_pool %{{.*}} output_size [1, 1] : tensor<2x4x9x9xf32> -> tensor<2x4x1x1xf32>
  %5 = graph.adaptive_max_pool %x output_size [1, 1] : tensor<2x4x9x9xf32> -> tensor<2x4x1x1xf32>
  // CHECK: graph.pad %{{.*}} reflect low [0, 0, 1, 2] high [0, 0, 1, 2] : tensor<2x4x9x9xf32> -> tensor<2x4x11x13xf32>
  %6 = graph.pad %x reflect low [0, 0, 1, 2] high [0, 0, 1, 2] : tensor<2x4x9x9xf32> -> tensor<2x4x11x13xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x8x5x5xf32>, tensor<2x6x18x18xf32>, tensor<2x4x5x5xf32>, tensor<2x4x4x4xf32>, tensor<2x4x3x2xf32>, tensor<2x4x1x1xf32>, tensor<2x4x11x13xf32>
}

// -----

// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<2x4x8x16xf16>, %k: tensor<2x4x6x16xf16>, %v: tensor<2x4x6x32xf16>,
                     %m: tensor<8x6xi1>, %x: tensor<3x5xi64>) -> (tensor<2x4x8x32xf16>, tensor<2x4x8x32xf16>, tensor<3x7xi64>) {
  // CHECK: graph.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} : tensor<2x4x8x16xf16>, tensor<2x4x6x16xf16>, tensor<2x4x6x32xf16>, tensor<8x6xi1> -> tensor<2x4x8x32xf16>
  %0 = graph.scaled_dot_product_attention %q, %k, %v mask %m : tensor<2x4x8x16xf16>, tensor<2x4x6x16xf16>, tensor<2x4x6x32xf16>, tensor<8x6xi1> -> tensor<2x4x8x32xf16>
  // CHECK: graph.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} causal scale 1.250000e-01 : tensor<2x4x8x16xf16>, tensor<2x4x6x16xf16>, tensor<2x4x6x32xf16> -> tensor<2x4x8x32xf16>
  %1 = graph.scaled_dot_product_attention %q, %k, %v causal scale 0.125 : tensor<2x4x8x16xf16>, tensor<2x4x6x16xf16>, tensor<2x4x6x32xf16> -> tensor<2x4x8x32xf16>
  // CHECK: graph.pad %{{.*}} constant low [0, 1] high [0, 1] value 2.000000e+00 : tensor<3x5xi64> -> tensor<3x7xi64>
  %2 = graph.pad %x constant low [0, 1] high [0, 1] value 2.0 : tensor<3x5xi64> -> tensor<3x7xi64>
  return %0, %1, %2 : tensor<2x4x8x32xf16>, tensor<2x4x8x32xf16>, tensor<3x7xi64>
}

// -----

// Elementwise ops (unary, binary, comparisons) take dynamic dims.
// CHECK-LABEL: func @dynamic
// CHECK: graph.add %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<8xf32> -> tensor<?x8xf32>
// CHECK: graph.gt %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xi1>
func.func @dynamic(%a: tensor<?x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xi1> {
  %0 = graph.add %a, %b : tensor<?x8xf32>, tensor<8xf32> -> tensor<?x8xf32>
  %1 = graph.tanh %0 : tensor<?x8xf32> -> tensor<?x8xf32>
  %2 = graph.gt %1, %a : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xi1>
  return %2 : tensor<?x8xi1>
}
