// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim -cse | FileCheck %s

// Dynamic dims beyond the elementwise ops: every size read with prim.dim from
// an operand (a `?` is never 1).

// A reshape's `?` dims from the input at the same position, the one left the
// element count over the others.
// CHECK-LABEL: func @reshape_derived
// CHECK-DAG: %[[A:.*]] = prim.dim %arg0, 0 : tensor<?x3x?xf32>
// CHECK-DAG: %[[C:.*]] = prim.dim %arg0, 2 : tensor<?x3x?xf32>
// CHECK: %[[M:.*]] = arith.divui
// CHECK: prim.reshape %arg0 sizes(%[[A]], %[[M]], %[[C]]) : tensor<?x3x?xf32> -> tensor<?x?x?xf32>
func.func @reshape_derived(%x: tensor<?x3x?xf32>) -> tensor<?x?x?xf32> {
  %0 = graph.reshape %x : tensor<?x3x?xf32> -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// -----

// graph.dim is prim.dim; index arithmetic stays.
// CHECK-LABEL: func @sizes
// CHECK: %[[B:.*]] = prim.dim %arg0, 0 : tensor<?x?x64xf32>
// CHECK: %[[S:.*]] = prim.dim %arg0, 1 : tensor<?x?x64xf32>
// CHECK: %[[N:.*]] = arith.muli %[[B]], %[[S]] : index
// CHECK: prim.reshape %arg0 sizes(%[[N]]) : tensor<?x?x64xf32> -> tensor<?x64xf32>
// CHECK: prim.broadcast_in_dim %arg1 dims [0, 1] sizes(%[[B]], %[[S]]) : tensor<1x1xf32> -> tensor<?x?xf32>
func.func @sizes(%x: tensor<?x?x64xf32>, %o: tensor<1x1xf32>) -> (tensor<?x64xf32>, tensor<?x?xf32>) {
  %b = graph.dim %x, 0 : tensor<?x?x64xf32> -> index
  %s = graph.dim %x, 1 : tensor<?x?x64xf32> -> index
  %n = arith.muli %b, %s : index
  %0 = graph.reshape %x sizes(%n) : tensor<?x?x64xf32> -> tensor<?x64xf32>
  %1 = graph.expand %o sizes(%b, %s) : tensor<1x1xf32> -> tensor<?x?xf32>
  return %0, %1 : tensor<?x64xf32>, tensor<?x?xf32>
}

// -----

// A batched lhs times a matrix: one [B*M, K] x [K, N] GEMM, reshaped back.
// CHECK-LABEL: func @matmul_batched_by_matrix
// CHECK: prim.reshape %arg0 sizes(%{{.*}}) : tensor<?x?x8xf32> -> tensor<?x8xf32>
// CHECK: prim.dot_general %{{.*}}, %arg1 batch [], [] contract [1], [0] : tensor<?x8xf32>, tensor<8x16xf32> -> tensor<?x16xf32>
// CHECK: prim.reshape %{{.*}} sizes(%{{.*}}, %{{.*}}) : tensor<?x16xf32> -> tensor<?x?x16xf32>
func.func @matmul_batched_by_matrix(%a: tensor<?x?x8xf32>, %w: tensor<8x16xf32>) -> tensor<?x?x16xf32> {
  %0 = graph.matmul %a, %w : tensor<?x?x8xf32>, tensor<8x16xf32> -> tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

// -----

// addmm's bias is broadcast to the product's sizes (N is not the lhs's last dim).
// CHECK-LABEL: func @addmm
// CHECK: %[[P:.*]] = prim.dot_general
// CHECK: %[[M:.*]] = prim.dim %[[P]], 0 : tensor<?x?xf32>
// CHECK: %[[N:.*]] = prim.dim %[[P]], 1 : tensor<?x?xf32>
// CHECK: prim.broadcast_in_dim %arg0 dims [1] sizes(%[[M]], %[[N]]) : tensor<?xf32> -> tensor<?x?xf32>
func.func @addmm(%bias: tensor<?xf32>, %x: tensor<?x?xf32>, %w: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = graph.addmm %bias, %x, %w {alpha = 1.0 : f64, beta = 1.0 : f64} : tensor<?xf32>, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A mean over a dynamic dim divides by a sum of ones; keepdim is a broadcast.
// CHECK-LABEL: func @mean_keepdim
// CHECK: %[[S:.*]] = prim.reduce_sum %arg0 dims [1] : tensor<?x?xf32> -> tensor<?xf32>
// CHECK: %[[ONES:.*]] = prim.broadcast_in_dim %{{.*}} dims [] sizes(%{{.*}}, %{{.*}}) : tensor<f32> -> tensor<?x?xf32>
// CHECK: %[[N:.*]] = prim.reduce_sum %[[ONES]] dims [1] : tensor<?x?xf32> -> tensor<?xf32>
// CHECK: %[[D:.*]] = prim.div %[[S]], %[[N]] : tensor<?xf32>
// CHECK: prim.broadcast_in_dim %[[D]] dims [0] sizes(%{{.*}}) : tensor<?xf32> -> tensor<?x1xf32>
func.func @mean_keepdim(%x: tensor<?x?xf32>) -> tensor<?x1xf32> {
  %0 = graph.mean %x dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}

// -----

// CHECK-LABEL: func @layer_norm
// CHECK: prim.reduce_sum %arg0 dims [2] : tensor<?x?x64xf32> -> tensor<?x?xf32>
// CHECK: prim.broadcast_in_dim %{{.*}} dims [0, 1] sizes(%{{.*}}, %{{.*}}) : tensor<?x?xf32> -> tensor<?x?x64xf32>
// CHECK: prim.rsqrt
func.func @layer_norm(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %0 = graph.layer_norm %x weight %w bias %w normalized_rank 1 eps 1.0e-05 : tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
