// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop -canonicalize | FileCheck %s

// Sibling reductions (same operand shape, same reduced dims, a buffer read in
// common, neither reading the other): a batch norm backward's channel sums
// sum(dy) and sum(dy * xhat) over N, H, W of an NHWC tensor are one kernel
// with two loop.reduce and two stores, so dy is swept once.
// CHECK-LABEL: func @bn_backward_sums
// CHECK-SAME: (%[[X:.*]]: memref<8x16x16x64xf32>, %[[DY:.*]]: memref<8x16x16x64xf32>, %[[MEAN:.*]]: memref<64xf32>, %[[A:.*]]: memref<64xf32>, %[[B:.*]]: memref<64xf32>)
// CHECK: loop.kernel "reduce_sum_0" [64]
// CHECK: ^bb0(%[[C:.*]]: index):
// CHECK: %[[M:.*]] = loop.load %[[MEAN]][%[[C]]]
// CHECK: %[[S0:.*]] = loop.reduce add [8, 16, 16] : f32
// CHECK: loop.load %[[DY]]
// CHECK: loop.load %[[X]]
// CHECK: arith.subf %{{.*}}, %[[M]]
// CHECK: %[[S1:.*]] = loop.reduce add [8, 16, 16] : f32
// CHECK: loop.load %[[DY]]
// CHECK: loop.store %[[S0]], %[[A]][%[[C]]]
// CHECK: loop.store %[[S1]], %[[B]][%[[C]]]
// CHECK-NOT: loop.kernel
func.func @bn_backward_sums(%x: tensor<8x16x16x64xf32>, %dy: tensor<8x16x16x64xf32>, %mean: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<64xf32>) {
  %m = prim.broadcast_in_dim %mean dims [3] : tensor<64xf32> -> tensor<8x16x16x64xf32>
  %xc = prim.sub %x, %m : tensor<8x16x16x64xf32>
  %p = prim.mul %dy, %xc : tensor<8x16x16x64xf32>
  %a = prim.reduce_sum %p dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  %b = prim.reduce_sum %dy dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  return %a, %b : tensor<64xf32>, tensor<64xf32>
}

// -----

// Not siblings: the second reduction reads the first (a variance after its
// mean), so each has a kernel of its own; nor are reductions over other dims.
// CHECK-LABEL: func @dependent_and_other_dims
// CHECK: loop.kernel "reduce_sum_0" [64]
// CHECK: loop.reduce
// CHECK-NOT: loop.reduce
// CHECK: loop.kernel "reduce_sum_1" [64]
// CHECK: loop.reduce
// CHECK-NOT: loop.reduce
// CHECK: loop.kernel "reduce_sum_2" [8]
// CHECK: loop.reduce
// CHECK-NOT: loop.reduce
// CHECK-NOT: loop.kernel
func.func @dependent_and_other_dims(%x: tensor<8x16x16x64xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<8xf32>) {
  %s = prim.reduce_sum %x dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  %m = prim.broadcast_in_dim %s dims [3] : tensor<64xf32> -> tensor<8x16x16x64xf32>
  %xc = prim.sub %x, %m : tensor<8x16x16x64xf32>
  %sq = prim.mul %xc, %xc : tensor<8x16x16x64xf32>
  %v = prim.reduce_sum %sq dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  %n = prim.reduce_sum %x dims [1, 2, 3] : tensor<8x16x16x64xf32> -> tensor<8xf32>
  return %s, %v, %n : tensor<64xf32>, tensor<64xf32>, tensor<8xf32>
}

// -----

// A kernel between two siblings reads the first (the first's input gradient
// reading sum(dy) in a downsampling block), but the second reads only
// buffers written before the first: the group takes the first's place.
// CHECK-LABEL: func @hoisted
// CHECK: loop.kernel "reduce_sum_0" [64]
// CHECK: loop.reduce
// CHECK: loop.reduce
// CHECK: loop.kernel "mul_1" [8, 16, 16, 64]
// CHECK-NOT: loop.kernel
func.func @hoisted(%x: tensor<8x16x16x64xf32>, %y: tensor<8x16x16x64xf32>)
    -> (tensor<64xf32>, tensor<8x16x16x64xf32>, tensor<64xf32>) {
  %a = prim.reduce_sum %x dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  %ab = prim.broadcast_in_dim %a dims [3] : tensor<64xf32> -> tensor<8x16x16x64xf32>
  %c = prim.mul %x, %ab : tensor<8x16x16x64xf32>
  %xy = prim.mul %x, %y : tensor<8x16x16x64xf32>
  %b = prim.reduce_sum %xy dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  return %a, %c, %b : tensor<64xf32>, tensor<8x16x16x64xf32>, tensor<64xf32>
}

// -----

// Neither place works: a kernel between reads the first sum, and the second
// reads a buffer written after the first (%e). The sums keep kernels of their
// own, in program order.
// CHECK-LABEL: func @blocked
// CHECK: loop.kernel "reduce_sum_0" [64]
// CHECK: loop.reduce
// CHECK-NOT: loop.reduce
// CHECK: loop.kernel "mul_1" [8, 16, 16, 64]
// CHECK: loop.kernel "exp_2"
// CHECK: loop.kernel "reduce_sum_3" [64]
// CHECK: loop.reduce
// CHECK-NOT: loop.reduce
// CHECK-NOT: loop.kernel
func.func @blocked(%x: tensor<8x16x16x64xf32>)
    -> (tensor<64xf32>, tensor<8x16x16x64xf32>, tensor<8x16x16x64xf32>, tensor<64xf32>) {
  %a = prim.reduce_sum %x dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  %ab = prim.broadcast_in_dim %a dims [3] : tensor<64xf32> -> tensor<8x16x16x64xf32>
  %c = prim.mul %x, %ab : tensor<8x16x16x64xf32>
  %e = prim.exp %x : tensor<8x16x16x64xf32>
  %xe = prim.mul %x, %e : tensor<8x16x16x64xf32>
  %b = prim.reduce_sum %xe dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  return %a, %c, %e, %b : tensor<64xf32>, tensor<8x16x16x64xf32>, tensor<8x16x16x64xf32>, tensor<64xf32>
}

// -----

// With a `?` batch: sum(dy * xhat) and sum(dy) over an NCHW tensor whose
// batch sizes both come from %dy's dim 0 (%x's through the elementwise
// product) are siblings too: one kernel sweeping [?, 8, 8] once.
// CHECK-LABEL: func @dynamic_bn_backward_sums
// CHECK: loop.kernel "reduce_sum_0" [16]
// CHECK: loop.reduce add [%{{.*}}, 8, 8]
// CHECK: loop.reduce add [%{{.*}}, 8, 8]
// CHECK-NOT: loop.kernel
func.func @dynamic_bn_backward_sums(%xc: tensor<?x16x8x8xf32>, %dy: tensor<?x16x8x8xf32>)
    -> (tensor<16xf32>, tensor<16xf32>) {
  %p = prim.mul %dy, %xc : tensor<?x16x8x8xf32>
  %a = prim.reduce_sum %p dims [0, 2, 3] : tensor<?x16x8x8xf32> -> tensor<16xf32>
  %b = prim.reduce_sum %dy dims [0, 2, 3] : tensor<?x16x8x8xf32> -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}

// -----

// Two `?` batches from different arguments need not be one size: the sums
// over %x and over %y keep a kernel each, though their shapes print alike.
// CHECK-LABEL: func @dynamic_different_batches
// CHECK: loop.kernel "reduce_sum_0" [16]
// CHECK: loop.reduce
// CHECK-NOT: loop.reduce
// CHECK: loop.kernel "reduce_sum_1" [16]
// CHECK: loop.reduce
// CHECK-NOT: loop.reduce
func.func @dynamic_different_batches(%x: tensor<?x16x8x8xf32>, %y: tensor<?x16x8x8xf32>, %z: tensor<?x16x8x8xf32>)
    -> (tensor<16xf32>, tensor<16xf32>) {
  %p = prim.mul %x, %z : tensor<?x16x8x8xf32>
  %q = prim.mul %y, %z : tensor<?x16x8x8xf32>
  %a = prim.reduce_sum %p dims [0, 2, 3] : tensor<?x16x8x8xf32> -> tensor<16xf32>
  %b = prim.reduce_sum %q dims [0, 2, 3] : tensor<?x16x8x8xf32> -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}
