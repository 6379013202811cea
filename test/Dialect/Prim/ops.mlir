// RUN: dyn-opt %s -split-input-file | dyn-opt | FileCheck %s

// CHECK-LABEL: func @primitives
func.func @primitives(%a: tensor<4x8xf32>, %v: tensor<8xf32>, %i: tensor<4x8xi64>) -> tensor<4x8xf32> {
  // CHECK: prim.broadcast_in_dim %{{.*}} dims [1] : tensor<8xf32> -> tensor<4x8xf32>
  %0 = prim.broadcast_in_dim %v dims [1] : tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: prim.add %{{.*}}, %{{.*}} : tensor<4x8xf32>
  %1 = prim.add %a, %0 : tensor<4x8xf32>
  // CHECK: prim.convert_element_type %{{.*}} : tensor<4x8xi64> -> tensor<4x8xf32>
  %2 = prim.convert_element_type %i : tensor<4x8xi64> -> tensor<4x8xf32>
  // CHECK: prim.exp %{{.*}} : tensor<4x8xf32>
  %3 = prim.exp %2 : tensor<4x8xf32>
  // CHECK: prim.gt %{{.*}}, %{{.*}} : tensor<4x8xf32> -> tensor<4x8xi1>
  %4 = prim.gt %1, %3 : tensor<4x8xf32> -> tensor<4x8xi1>
  // CHECK: prim.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xi1>, tensor<4x8xf32>
  %5 = prim.select %4, %1, %3 : tensor<4x8xi1>, tensor<4x8xf32>
  // CHECK: prim.iota dim 1 : tensor<4x8xf32>
  %6 = prim.iota dim 1 : tensor<4x8xf32>
  %7 = prim.mul %5, %6 : tensor<4x8xf32>
  return %7 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @structure
func.func @structure(%a: tensor<2x4x8xf32>, %b: tensor<2x8x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x4xf32>, tensor<8x4x2xf32>, tensor<2x2x8xf32>, tensor<64xf32>, tensor<4x4x8xf32>) {
  // CHECK: prim.dot_general %{{.*}}, %{{.*}} batch [0], [0] contract [2], [1]
  %0 = prim.dot_general %a, %b batch [0], [0] contract [2], [1] : tensor<2x4x8xf32>, tensor<2x8x3xf32> -> tensor<2x4x3xf32>
  // CHECK: prim.reduce_max %{{.*}} dims [2]
  %1 = prim.reduce_max %a dims [2] : tensor<2x4x8xf32> -> tensor<2x4xf32>
  // CHECK: prim.transpose %{{.*}} permutation [2, 1, 0]
  %2 = prim.transpose %a permutation [2, 1, 0] : tensor<2x4x8xf32> -> tensor<8x4x2xf32>
  // CHECK: prim.slice %{{.*}} start [0, 1, 0] stride [1, 2, 1]
  %3 = prim.slice %a start [0, 1, 0] stride [1, 2, 1] : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
  // CHECK: prim.reshape
  %4 = prim.reshape %a : tensor<2x4x8xf32> -> tensor<64xf32>
  // CHECK: prim.concatenate %{{.*}}, %{{.*}} dim 0
  %5 = prim.concatenate %a, %a dim 0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<4x4x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x4x3xf32>, tensor<2x4xf32>, tensor<8x4x2xf32>, tensor<2x2x8xf32>, tensor<64xf32>, tensor<4x4x8xf32>
}

// -----

// CHECK-LABEL: func @gather
func.func @gather(%w: tensor<10x4xf32>, %i: tensor<3x4xi32>) -> tensor<3x4xf32> {
  // CHECK: prim.gather %{{.*}} dim 0 index %{{.*}} : tensor<10x4xf32>, tensor<3x4xi32> -> tensor<3x4xf32>
  %0 = prim.gather %w dim 0 index %i : tensor<10x4xf32>, tensor<3x4xi32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func @library_primitives
func.func @library_primitives(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %q: tensor<2x4x8x16xf32>,
                              %m: tensor<2x1x8x8xf32>) -> (tensor<1x4x6x6xf32>, tensor<2x4x8x16xf32>, tensor<1x3x10x9xf32>) {
  // CHECK: prim.convolution %{{.*}}, %{{.*}} stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  %0 = prim.convolution %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  // CHECK: prim.convolution %{{.*}}, %{{.*}} {{.*}} groups 1 channels_last : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x6x6x4xf32>
  %t = prim.transpose %x permutation [0, 2, 3, 1] : tensor<1x3x8x8xf32> -> tensor<1x8x8x3xf32>
  %cl = prim.convolution %t, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 channels_last : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x6x6x4xf32>
  // CHECK: prim.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} scale 2.500000e-01 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x8x8xf32> -> tensor<2x4x8x16xf32>
  %1 = prim.attention %q, %q, %q mask %m scale 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x8x8xf32> -> tensor<2x4x8x16xf32>
  // CHECK: prim.pad %{{.*}} low [0, 0, 1, 0] high [0, 0, 1, 1] value 0xFFF0000000000000 : tensor<1x3x8x8xf32> -> tensor<1x3x10x9xf32>
  %2 = prim.pad %x low [0, 0, 1, 0] high [0, 0, 1, 1] value 0xFFF0000000000000 : tensor<1x3x8x8xf32> -> tensor<1x3x10x9xf32>
  return %0, %1, %2 : tensor<1x4x6x6xf32>, tensor<2x4x8x16xf32>, tensor<1x3x10x9xf32>
}

// -----

// Dynamic dims: elementwise ops, reductions, transposes and contractions take
// `?` dims; a broadcast names the size of each dynamic result dim.
// CHECK-LABEL: func @dynamic
// CHECK: %[[N:.*]] = prim.dim %{{.*}}, 0 : tensor<?x8xf32>
// CHECK: prim.broadcast_in_dim %{{.*}} dims [1] sizes(%[[N]]) : tensor<8xf32> -> tensor<?x8xf32>
// CHECK: prim.reduce_max %{{.*}} dims [1] : tensor<?x8xf32> -> tensor<?xf32>
// CHECK: prim.dot_general
func.func @dynamic(%x: tensor<?x8xf32>, %b: tensor<8xf32>, %w: tensor<8x4xf32>) -> (tensor<?xf32>, tensor<?x4xf32>) {
  %n = prim.dim %x, 0 : tensor<?x8xf32>
  %0 = prim.broadcast_in_dim %b dims [1] sizes(%n) : tensor<8xf32> -> tensor<?x8xf32>
  %1 = prim.add %x, %0 : tensor<?x8xf32>
  %2 = prim.reduce_max %1 dims [1] : tensor<?x8xf32> -> tensor<?xf32>
  %3 = "prim.dot_general"(%1, %w) <{lhs_batch = array<i64>, lhs_contract = array<i64: 1>, rhs_batch = array<i64>, rhs_contract = array<i64: 0>}> : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  return %2, %3 : tensor<?xf32>, tensor<?x4xf32>
}
