// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop -canonicalize | FileCheck %s

// Ops whose sizes or offsets are index values of the prim function: fusion
// computes them in the buffer function, before the kernels that use them.

// An iota of a runtime length, a slice at a runtime offset and a gather with
// `?` ids fuse into one kernel each, over domains sized at run time.
// CHECK-LABEL: func @positions
// CHECK-SAME: (%[[IDS:.*]]: memref<?xi64>, %[[T:.*]]: memref<500x8xf32>, %[[P:.*]]: memref<512xi64>, %[[O0:.*]]: memref<?x8xf32>, %[[O1:.*]]: memref<?xi64>, %[[O2:.*]]: memref<?xi64>)
// CHECK: %[[N:.*]] = memref.dim %[[IDS]], %c0
// CHECK: loop.kernel "gather_0" [%[[N]], 8]
// CHECK: %[[I:.*]] = loop.load %[[IDS]]
// CHECK: arith.minsi
// CHECK: loop.load %[[T]]
// CHECK: loop.kernel "iota_1" [%{{.*}}]
// CHECK: arith.index_cast %{{.*}} : index to i64
// CHECK: loop.kernel "dynamic_slice_2" [%{{.*}}]
// CHECK: ^bb0(%[[J:.*]]: index):
// CHECK: %[[K:.*]] = arith.addi %[[J]], %c2
// CHECK: loop.load %[[P]][%[[K]]]
func.func @positions(%ids: tensor<?xi64>, %t: tensor<500x8xf32>, %pos: tensor<512xi64>)
    -> (tensor<?x8xf32>, tensor<?xi64>, tensor<?xi64>) {
  %n = prim.dim %ids, 0 : tensor<?xi64>
  %c2 = arith.constant 2 : index
  %b = prim.broadcast_in_dim %ids dims [0] sizes(%n) : tensor<?xi64> -> tensor<?x8xi64>
  %g = prim.gather %t dim 0 index %b : tensor<500x8xf32>, tensor<?x8xi64> -> tensor<?x8xf32>
  %i = prim.iota dim 0 sizes(%n) : tensor<?xi64>
  %s = prim.dynamic_slice %pos dim 0 start %c2 size %n : tensor<512xi64> -> tensor<?xi64>
  return %g, %i, %s : tensor<?x8xf32>, tensor<?xi64>, tensor<?xi64>
}

// -----

// A concatenation along a `?` dim: each piece is copied at its offset, the
// ones after a dynamic piece at a runtime offset; the result is as long as the
// pieces together.
// CHECK-LABEL: func @grow
// CHECK-SAME: (%[[A:.*]]: memref<4x?x16xf32>, %[[B:.*]]: memref<4x1x16xf32>, %[[OUT:.*]]: memref<4x?x16xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[A]], %c1
// CHECK: loop.kernel "concatenate_0" [4, %[[N]], 16]
// CHECK: %[[OFF:.*]] = memref.dim %[[A]], %c1
// CHECK: loop.kernel "concatenate_1" [4, 1, 16]
// CHECK: ^bb0(%{{.*}}: index, %[[J:.*]]: index, %{{.*}}: index):
// CHECK: %[[K:.*]] = arith.addi %[[J]], %[[OFF]]
// CHECK: loop.store %{{.*}}, %[[OUT]][%{{.*}}, %[[K]], %{{.*}}]
func.func @grow(%a: tensor<4x?x16xf32>, %b: tensor<4x1x16xf32>) -> tensor<4x?x16xf32> {
  %0 = prim.concatenate %a, %b dim 1 : tensor<4x?x16xf32>, tensor<4x1x16xf32> -> tensor<4x?x16xf32>
  return %0 : tensor<4x?x16xf32>
}

// -----

// Philox bits over a `?` batch: element (i, j)'s counter is its row-major
// index i * 8 + j, the row stride read from the runtime size outside the kernel.
// CHECK-LABEL: func @philox_rows
// CHECK: loop.kernel "philox_0" [%{{.*}}, 8]
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: %[[JI:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK: %[[II:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: arith.muli %[[II]], %c8_i64
func.func @philox_rows(%x: tensor<?x8xf32>, %s: tensor<i64>) -> tensor<?x8xi32> {
  %n = prim.dim %x, 0 : tensor<?x8xf32>
  %0 = prim.philox %s offset 0 word 0 sizes(%n) : tensor<i64> -> tensor<?x8xi32>
  return %0 : tensor<?x8xi32>
}

// -----

// A `?` innermost dim: the outer index is scaled by its runtime size.
// CHECK-LABEL: func @philox_columns
// CHECK: %[[M:.*]] = memref.dim %arg0, %c1
// CHECK: %[[M64:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: loop.kernel "philox_0" [4, %{{.*}}]
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: %[[II:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: arith.muli %[[II]], %[[M64]]
func.func @philox_columns(%x: tensor<4x?xf32>, %s: tensor<i64>) -> tensor<4x?xi32> {
  %m = prim.dim %x, 1 : tensor<4x?xf32>
  %0 = prim.philox %s offset 0 word 0 sizes(%m) : tensor<i64> -> tensor<4x?xi32>
  return %0 : tensor<4x?xi32>
}

// -----

// A `?` dim sliced to a static result (a sequence's first token): a kernel over
// the static result, reading the first elements of each row.
// CHECK-LABEL: func @first_token
// CHECK: loop.kernel "slice_0" [2, 1]
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: loop.load %arg0[%[[I]], %[[J]]] : memref<2x?xi64>
func.func @first_token(%ids: tensor<2x?xi64>) -> tensor<2x1xi64> {
  %0 = prim.slice %ids start [0, 0] stride [1, 1] : tensor<2x?xi64> -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}


// -----

// In a function with `?` dims, the statically shaped small kernels keep the
// static plans: a batch norm's running-statistics update runs as the epilogue
// of its channel sums over the `?` batch (one kernel, not two).
// CHECK-LABEL: func.func @running_stats_epilogue
// CHECK: loop.kernel "reduce_sum_0" [4] {
// CHECK: loop.reduce add [%{{.*}}]
// CHECK: loop.store %{{.*}}, %arg3[%{{.*}}] : memref<4xf32>
// CHECK: loop.store %{{.*}}, %arg4[%{{.*}}] : memref<4xf32>
// CHECK: loop.kernel "add_1" []
// CHECK-NOT: loop.kernel
func.func @running_stats_epilogue(%x: tensor<?x4xf32>, %rm: tensor<4xf32>, %n: tensor<i64>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<i64>) {
  %s = prim.reduce_sum %x dims [0] : tensor<?x4xf32> -> tensor<4xf32>
  %c9 = prim.constant dense<0.9> : tensor<4xf32>
  %c1 = prim.constant dense<0.1> : tensor<4xf32>
  %a = prim.mul %rm, %c9 : tensor<4xf32>
  %b = prim.mul %s, %c1 : tensor<4xf32>
  %r = prim.add %a, %b : tensor<4xf32>
  %one = prim.constant dense<1> : tensor<i64>
  %n1 = prim.add %n, %one : tensor<i64>
  return %s, %r, %n1 : tensor<4xf32>, tensor<4xf32>, tensor<i64>
}

// -----

// A weight gradient with a `?` token dim, x^T @ dy: the matmul reads x in
// place (transpose_a) whatever its runtime size; no transpose kernel. So does
// an attention score's k^T with a `?` length (transpose_b).
// CHECK-LABEL: func @dynamic_transposed_gemm_operands
// CHECK-SAME: (%[[X:.*]]: memref<?x16xf32>, %[[DY:.*]]: memref<?x32xf32>, %[[Q:.*]]: memref<4x?x8xf32>, %[[K:.*]]: memref<4x?x8xf32>
// CHECK-NOT: loop.kernel "transpose
// CHECK: loop.matmul %[[X]], %[[DY]], %{{.*}} transpose_a : memref<?x16xf32>, memref<?x32xf32>, memref<16x32xf32>
// CHECK: loop.matmul %[[Q]], %[[K]], %{{.*}} transpose_b : memref<4x?x8xf32>, memref<4x?x8xf32>, memref<4x?x?xf32>
func.func @dynamic_transposed_gemm_operands(%x: tensor<?x16xf32>, %dy: tensor<?x32xf32>, %q: tensor<4x?x8xf32>,
                                            %k: tensor<4x?x8xf32>) -> (tensor<16x32xf32>, tensor<4x?x?xf32>) {
  %xt = prim.transpose %x permutation [1, 0] : tensor<?x16xf32> -> tensor<16x?xf32>
  %dw = prim.dot_general %xt, %dy batch [], [] contract [1], [0] : tensor<16x?xf32>, tensor<?x32xf32> -> tensor<16x32xf32>
  %kt = prim.transpose %k permutation [0, 2, 1] : tensor<4x?x8xf32> -> tensor<4x8x?xf32>
  %s = prim.dot_general %q, %kt batch [0], [0] contract [2], [1] : tensor<4x?x8xf32>, tensor<4x8x?xf32> -> tensor<4x?x?xf32>
  return %dw, %s : tensor<16x32xf32>, tensor<4x?x?xf32>
}

// -----

// A layer norm over [?, ?, 64] whose result a GEMM reads as [? * ?, 64] (the
// reshape merges the two `?` dims, their product an index value): the mean
// and variance, [?, ?], have a value per row of the reshaped kernel (the
// rows' count is their element count at every size), so they are computed in
// that kernel's rows, as with static sizes: one row kernel, no buffer for
// the statistics.
// CHECK-LABEL: func @norm_through_merged_dims
// CHECK-NOT: memref.alloc
// CHECK: loop.kernel "reshape_0" [%{{.*}}]
// CHECK: loop.reduce add [64]
// CHECK: loop.reduce add [64]
// CHECK: loop.for [64]
// CHECK-NOT: loop.kernel
// CHECK: return
func.func @norm_through_merged_dims(%x: tensor<?x?x64xf32>) -> tensor<?x64xf32> {
  %b = prim.dim %x, 0 : tensor<?x?x64xf32>
  %l = prim.dim %x, 1 : tensor<?x?x64xf32>
  %bl = arith.muli %l, %b : index
  %c64 = prim.constant dense<6.400000e+01> : tensor<f32>
  %s = prim.reduce_sum %x dims [2] : tensor<?x?x64xf32> -> tensor<?x?xf32>
  %n = prim.broadcast_in_dim %c64 dims [] sizes(%b, %l) : tensor<f32> -> tensor<?x?xf32>
  %mean = prim.div %s, %n : tensor<?x?xf32>
  %mb = prim.broadcast_in_dim %mean dims [0, 1] sizes(%b, %l) : tensor<?x?xf32> -> tensor<?x?x64xf32>
  %d = prim.sub %x, %mb : tensor<?x?x64xf32>
  %sq = prim.mul %d, %d : tensor<?x?x64xf32>
  %v = prim.reduce_sum %sq dims [2] : tensor<?x?x64xf32> -> tensor<?x?xf32>
  %var = prim.div %v, %n : tensor<?x?xf32>
  %r = prim.rsqrt %var : tensor<?x?xf32>
  %rb = prim.broadcast_in_dim %r dims [0, 1] sizes(%b, %l) : tensor<?x?xf32> -> tensor<?x?x64xf32>
  %y = prim.mul %d, %rb : tensor<?x?x64xf32>
  %flat = prim.reshape %y sizes(%bl) : tensor<?x?x64xf32> -> tensor<?x64xf32>
  return %flat : tensor<?x64xf32>
}

// -----

// A `[2, ?, 64]` viewed as heads `[2, ?, 4, 16]` and transposed: the dims
// the reshape shares (2, and the `?` whose size comes from one place) keep
// their index; only 64 splits into 4 x 16. No division by a runtime size.
// CHECK-LABEL: func @heads_of_a_dynamic_length
// CHECK: loop.kernel "transpose_0" [2, 4, %[[L:.*]], 16]
// CHECK: ^bb0(%[[B:.*]]: index, %[[H:.*]]: index, %[[T:.*]]: index, %[[D:.*]]: index):
// CHECK-NOT: %[[L]] :
// CHECK: loop.load %arg0[%[[B]], %[[T]], %{{.*}}] : memref<2x?x64xf32>
func.func @heads_of_a_dynamic_length(%x: tensor<2x?x64xf32>) -> tensor<2x4x?x16xf32> {
  %l = prim.dim %x, 1 : tensor<2x?x64xf32>
  %h = prim.reshape %x sizes(%l) : tensor<2x?x64xf32> -> tensor<2x?x4x16xf32>
  %t = prim.transpose %h permutation [0, 2, 1, 3] : tensor<2x?x4x16xf32> -> tensor<2x4x?x16xf32>
  return %t : tensor<2x4x?x16xf32>
}

// -----

// `[? * ?, 64]` (a GEMM's rows) read as `[?, ?, 64]`: the outermost dim takes
// what is left of the row index without a remainder by its runtime size.
// CHECK-LABEL: func @rows_as_batch_and_length
// CHECK: loop.kernel "mul_0" [%[[B:.*]], %{{.*}}, 64]
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index, %[[K:.*]]: index):
// CHECK: %[[M:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK: %[[R:.*]] = arith.addi %[[M]], %[[J]] : index
// CHECK-NOT: arith.remui
// CHECK: loop.load %arg0[%[[R]], %[[K]]]
func.func @rows_as_batch_and_length(%x: tensor<?x64xf32>, %y: tensor<?x?xf32>) -> tensor<?x?x64xf32> {
  %b = prim.dim %y, 0 : tensor<?x?xf32>
  %l = prim.dim %y, 1 : tensor<?x?xf32>
  %r = prim.reshape %x sizes(%b, %l) : tensor<?x64xf32> -> tensor<?x?x64xf32>
  %c = prim.constant dense<2.0> : tensor<f32>
  %cb = prim.broadcast_in_dim %c dims [] sizes(%b, %l) : tensor<f32> -> tensor<?x?x64xf32>
  %m = prim.mul %r, %cb : tensor<?x?x64xf32>
  return %m : tensor<?x?x64xf32>
}
