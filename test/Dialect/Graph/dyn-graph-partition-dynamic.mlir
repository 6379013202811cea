// RUN: dyn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(dyn-graph-autodiff), dyn-graph-partition)' | FileCheck %s

// Dynamic (`?`) dims through the split. Sizes are never saved: the backward
// reads them again from its own arguments (here the forward's input %x, saved
// by reference for the weight's gradient anyway). The forward reports each
// result's sizes as expressions over its arguments' (s[k][i]: dim i of
// argument k), from which the runtime allocates them.

// CHECK-LABEL: func.func @mlp_forward
// CHECK-SAME: -> (tensor<f32>, tensor<?x32xf32>, tensor<?x32xf32>)
// CHECK-SAME: dyn.result_sizes = "|(s[0][0] * s[0][1]);32|(s[0][0] * s[0][1]);32"
// CHECK: %[[H:.*]] = graph.addmm
// CHECK: %[[G:.*]] = graph.gelu %[[H]]
// CHECK: return %{{.*}}, %[[H]], %[[G]] : tensor<f32>, tensor<?x32xf32>, tensor<?x32xf32>
// CHECK-LABEL: func.func @mlp_backward
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x16xf32>, %{{.*}}: tensor<4x32xf32>, %[[SH:.*]]: tensor<?x32xf32>, %[[SG:.*]]: tensor<?x32xf32>, %[[CT:.*]]: tensor<f32>)
// CHECK-SAME: dyn.saved = array<i64: 0, 3, -2, -3>
// CHECK-DAG: %[[B:.*]] = graph.dim %[[X]], 0 : tensor<?x?x16xf32> -> index
// CHECK-DAG: %[[S:.*]] = graph.dim %[[X]], 1 : tensor<?x?x16xf32> -> index
// CHECK: graph.expand %{{.*}} sizes(%[[B]], %[[S]]) : tensor<f32> -> tensor<?x?xf32>
// CHECK: graph.div %[[CT]]
// CHECK: graph.expand %{{.*}} sizes(%[[B]], %[[S]]) : tensor<1x1x1xf32> -> tensor<?x?x4xf32>
// CHECK: %[[BS:.*]] = arith.muli %[[B]], %[[S]] : index
// CHECK: graph.reshape %{{.*}} sizes(%[[BS]]) : tensor<?x?x4xf32> -> tensor<?x4xf32>
// CHECK: graph.matmul %{{.*}}, %[[SG]]
// CHECK: graph.erf
// CHECK: return %{{.*}} : tensor<32x16xf32>, tensor<32xf32>, tensor<4x32xf32>
func.func @mlp(%x: tensor<?x?x16xf32>, %w1: tensor<32x16xf32> {dyn.requires_grad},
               %b1: tensor<32xf32> {dyn.requires_grad}, %w2: tensor<4x32xf32> {dyn.requires_grad})
    -> tensor<f32> {
  %b = graph.dim %x, 0 : tensor<?x?x16xf32> -> index
  %s = graph.dim %x, 1 : tensor<?x?x16xf32> -> index
  %bs = arith.muli %b, %s : index
  %x2 = graph.reshape %x sizes(%bs) : tensor<?x?x16xf32> -> tensor<?x16xf32>
  %w1t = graph.permute %w1 dims [1, 0] : tensor<32x16xf32> -> tensor<16x32xf32>
  %h = graph.addmm %b1, %x2, %w1t {alpha = 1.0 : f64, beta = 1.0 : f64}
      : tensor<32xf32>, tensor<?x16xf32>, tensor<16x32xf32> -> tensor<?x32xf32>
  %g = graph.gelu %h {approximate = "none"} : tensor<?x32xf32> -> tensor<?x32xf32>
  %w2t = graph.permute %w2 dims [1, 0] : tensor<4x32xf32> -> tensor<32x4xf32>
  %y = graph.matmul %g, %w2t : tensor<?x32xf32>, tensor<32x4xf32> -> tensor<?x4xf32>
  %y3 = graph.reshape %y sizes(%b, %s) : tensor<?x4xf32> -> tensor<?x?x4xf32>
  %l = graph.mean %y3 dims [0, 1, 2] : tensor<?x?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Attention over two sequence lengths (queries' and keys'): softmax's output
// is saved, its sizes the queries' length and the keys' (through the GEMM and
// the permute back to the arguments).

// CHECK-LABEL: func.func @attn_forward
// CHECK-SAME: -> (tensor<f32>, tensor<2x?x?xf32>)
// CHECK-SAME: dyn.result_sizes = "|2;s[0][1];s[1][1]"
// CHECK: %[[P:.*]] = graph.softmax
// CHECK: return %{{.*}}, %[[P]]
// CHECK-LABEL: func.func @attn_backward
// CHECK-SAME: dyn.saved = array<i64: 0, 1, 2, -2>
// CHECK: %[[L:.*]] = graph.dim %arg0, 1 : tensor<2x?x16xf32> -> index
// CHECK: graph.expand %{{.*}} sizes(%[[L]]) : tensor<1x1x1xf32> -> tensor<2x?x16xf32>
// CHECK: graph.softmax_backward %{{.*}}, %arg3 {dim = 2 : i64} : tensor<2x?x?xf32>, tensor<2x?x?xf32> -> tensor<2x?x?xf32>
// CHECK: return
func.func @attn(%q: tensor<2x?x16xf32> {dyn.requires_grad}, %k: tensor<2x?x16xf32> {dyn.requires_grad},
                %v: tensor<2x?x16xf32> {dyn.requires_grad}) -> tensor<f32> {
  %kt = graph.permute %k dims [0, 2, 1] : tensor<2x?x16xf32> -> tensor<2x16x?xf32>
  %s = graph.matmul %q, %kt : tensor<2x?x16xf32>, tensor<2x16x?xf32> -> tensor<2x?x?xf32>
  %p = graph.softmax %s dim 2 : tensor<2x?x?xf32> -> tensor<2x?x?xf32>
  %o = graph.matmul %p, %v : tensor<2x?x?xf32>, tensor<2x?x16xf32> -> tensor<2x?x16xf32>
  %l = graph.sum %o dims [0, 1, 2] : tensor<2x?x16xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A saved value made by a dynamic slice (a positions table sliced to the
// sequence length): its size along the slice is end - start.

// CHECK-LABEL: func.func @pos_forward
// CHECK-SAME: -> (tensor<f32>, tensor<1x?x8xf32>)
// CHECK-SAME: dyn.result_sizes = "|1;(s[0][1] - 0);8"
// CHECK: %[[P:.*]] = graph.dynamic_slice
// CHECK: return %{{.*}}, %[[P]]
// CHECK-LABEL: func.func @pos_backward
// CHECK-SAME: dyn.saved = array<i64: 0, -2>
// CHECK: return
func.func @pos(%x: tensor<1x?x8xf32> {dyn.requires_grad}, %table: tensor<1x4096x8xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %n = graph.dim %x, 1 : tensor<1x?x8xf32> -> index
  %p = graph.dynamic_slice %table, %c0, %n dim 1 : tensor<1x4096x8xf32>, index, index -> tensor<1x?x8xf32>
  %y = graph.mul %x, %p : tensor<1x?x8xf32>, tensor<1x?x8xf32> -> tensor<1x?x8xf32>
  %e = graph.exp %y : tensor<1x?x8xf32> -> tensor<1x?x8xf32>
  %l = graph.sum %e dims [0, 1, 2] : tensor<1x?x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A saved concatenation along a `?` dim of random numbers sized at run time
// and an input: its length is the sum of its inputs' (the random op's from
// its `sizes` operand).

// CHECK-LABEL: func.func @cat_random_forward
// CHECK-SAME: dyn.result_sizes = "|(s[0][0] + s[0][0]);4|(s[0][0] + s[0][0]);4"
// CHECK: %[[N:.*]] = graph.dim %arg0, 0
// CHECK: %[[U:.*]] = graph.random normal %arg2 sizes(%[[N]])
// CHECK: %[[C:.*]] = graph.cat %[[U]], %arg0 dim 0
// CHECK: return %{{.*}}, %[[C]], %{{.*}}
func.func @cat_random(%x: tensor<?x4xf32>, %w: tensor<4x4xf32> {dyn.requires_grad}, %seed: tensor<i64>)
    -> tensor<f32> {
  %n = graph.dim %x, 0 : tensor<?x4xf32> -> index
  %u = graph.random normal %seed sizes(%n) offset 0 a 0.0 b 1.0 : tensor<i64> -> tensor<?x4xf32>
  %c = graph.cat %u, %x dim 0 : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %y = graph.matmul %c, %w : tensor<?x4xf32>, tensor<4x4xf32> -> tensor<?x4xf32>
  %e = graph.exp %y : tensor<?x4xf32> -> tensor<?x4xf32>
  %l = graph.sum %e dims [0, 1] : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Token and position embeddings summed (a GPT-2's input): the token rows are
// gathered by the ids flattened to one `?` dim of batch x length, which weighs
// as 4 x the length's weight, as the sum [4, ?, 8] does; the position rows
// [1, ?, 8] as one length. Saving the sum (one [4, ?, 8]) costs less than
// saving the two gathers it adds (4 + 1 lengths of 8), so the layer norm's
// backward reads the saved sum, as with static sizes.
// CHECK-LABEL: func.func @embeddings_forward
// CHECK-SAME: -> (tensor<f32>, tensor<?xi64>, tensor<4x?x8xf32>, tensor<4x?x8xf32>)
// CHECK: %[[SUM:.*]] = graph.add
// CHECK: return %{{.*}}, %{{.*}}, %[[SUM]], %{{.*}} :
// CHECK-LABEL: func.func @embeddings_backward
// CHECK-SAME: %[[H:.*]]: tensor<4x?x8xf32>, %{{.*}}: tensor<4x?x8xf32>, %{{.*}}: tensor<f32>)
// CHECK-NOT: graph.gather
// CHECK: return
func.func @embeddings(%ids: tensor<4x?xi64>, %wte: tensor<50x8xf32> {dyn.requires_grad},
                      %wpe: tensor<16x8xf32> {dyn.requires_grad}, %w: tensor<8xf32> {dyn.requires_grad})
    -> tensor<f32> {
  %c4 = arith.constant 4 : index
  %n = graph.dim %ids, 1 : tensor<4x?xi64> -> index
  %bn = arith.muli %c4, %n : index
  %flat = graph.reshape %ids sizes(%bn) : tensor<4x?xi64> -> tensor<?x1xi64>
  %fe = graph.expand %flat sizes(%bn) : tensor<?x1xi64> -> tensor<?x8xi64>
  %tok = graph.gather %wte dim 0 index %fe : tensor<50x8xf32>, tensor<?x8xi64> -> tensor<?x8xf32>
  %tok3 = graph.reshape %tok sizes(%n) : tensor<?x8xf32> -> tensor<4x?x8xf32>
  %pos = graph.iota sizes(%n) : tensor<?xi64>
  %pos2 = graph.reshape %pos sizes(%n) : tensor<?xi64> -> tensor<?x1xi64>
  %pe = graph.expand %pos2 sizes(%n) : tensor<?x1xi64> -> tensor<?x8xi64>
  %p = graph.gather %wpe dim 0 index %pe : tensor<16x8xf32>, tensor<?x8xi64> -> tensor<?x8xf32>
  %p3 = graph.reshape %p sizes(%n) : tensor<?x8xf32> -> tensor<1x?x8xf32>
  %h = graph.add %tok3, %p3 : tensor<4x?x8xf32>, tensor<1x?x8xf32> -> tensor<4x?x8xf32>
  %ln = graph.layer_norm %h weight %w normalized_rank 1 eps 1.0e-05
      : tensor<4x?x8xf32>, tensor<8xf32> -> tensor<4x?x8xf32>
  %t = graph.tanh %ln : tensor<4x?x8xf32> -> tensor<4x?x8xf32>
  %s = graph.sum %t dims [0, 1, 2] : tensor<4x?x8xf32> -> tensor<f32>
  return %s : tensor<f32>
}
