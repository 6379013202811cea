// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop -canonicalize | FileCheck %s

// With `?` dims a GEMM operand that reshapes a buffer is that buffer viewed
// with the runtime sizes (row-major either way): no copy kernel.
// CHECK-LABEL: func @gemm_of_a_reshaped_argument
// CHECK-NOT: loop.kernel
// CHECK: %[[L:.*]] = memref.dim %arg0, %c1
// CHECK: %[[ROWS:.*]] = arith.muli %[[L]], %c4
// CHECK: %[[X:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%[[ROWS]], 64], strides: [64, 1] : memref<4x?x64xf32> to memref<?x64xf32>
// CHECK: loop.matmul %[[X]], %arg1, %arg2
func.func @gemm_of_a_reshaped_argument(%x: tensor<4x?x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x32xf32> {
  %l = prim.dim %x, 1 : tensor<4x?x64xf32>
  %c4 = arith.constant 4 : index
  %n = arith.muli %l, %c4 : index
  %0 = prim.reshape %x sizes(%n) : tensor<4x?x64xf32> -> tensor<?x64xf32>
  %1 = prim.dot_general %0, %w batch [], [] contract [1], [0] : tensor<?x64xf32>, tensor<64x32xf32> -> tensor<?x32xf32>
  return %1 : tensor<?x32xf32>
}

// -----

// A concatenation along a static dim (the cotangent of q, k and v sliced from
// one projection) is read where it is used, as a static graph's pads are: the
// kernel selects the input whose range holds the index, each read at its
// clamped shifted index. No copy kernel per input, no buffer for the
// concatenation.
// CHECK-LABEL: func @concatenation_read_in_place
// CHECK-NOT: memref.alloc
// CHECK: loop.kernel "exp_0" [4, %{{.*}}, 24]
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index, %[[K:.*]]: index):
// CHECK: arith.cmpi sge, %[[K]], %c0
// CHECK: arith.cmpi sle, %[[K]], %c7
// CHECK: %[[FIRST:.*]] = arith.andi
// CHECK: %[[A:.*]] = loop.load %arg0[%[[I]], %[[J]], %{{.*}}] : memref<4x?x8xf32>
// CHECK: arith.subi %[[K]], %c8
// CHECK: %[[B:.*]] = loop.load %arg1[%[[I]], %[[J]], %{{.*}}] : memref<4x?x16xf32>
// CHECK: %[[V:.*]] = arith.select %[[FIRST]], %[[A]], %[[B]] : f32
// CHECK: math.exp %[[V]]
// CHECK-NOT: loop.kernel
func.func @concatenation_read_in_place(%a: tensor<4x?x8xf32>, %b: tensor<4x?x16xf32>) -> tensor<4x?x24xf32> {
  %0 = prim.concatenate %a, %b dim 2 : tensor<4x?x8xf32>, tensor<4x?x16xf32> -> tensor<4x?x24xf32>
  %1 = prim.exp %0 : tensor<4x?x24xf32>
  return %1 : tensor<4x?x24xf32>
}
