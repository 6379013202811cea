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

// -----

// An iota takes its runtime length; a dynamic slice is an index remap by
// `start`, `end - start` long; a concatenation along a `?` dim stays one op.
// CHECK-LABEL: func @iota_slice_cat
// CHECK: %[[S:.*]] = prim.dim %arg0, 1 : tensor<?x?x64xf32>
// CHECK: prim.iota dim 0 sizes(%[[S]]) : tensor<?xi64>
// CHECK: %[[N:.*]] = arith.subi %[[S]], %{{.*}} : index
// CHECK: prim.dynamic_slice %arg1 dim 1 start %{{.*}} size %[[N]] : tensor<1x512xi64> -> tensor<1x?xi64>
// CHECK: prim.concatenate %arg2, %arg3 dim 2 : tensor<1x4x?x16xf32>, tensor<1x4x1x16xf32> -> tensor<1x4x?x16xf32>
func.func @iota_slice_cat(%x: tensor<?x?x64xf32>, %pos: tensor<1x512xi64>, %cache: tensor<1x4x?x16xf32>,
                          %new: tensor<1x4x1x16xf32>) -> (tensor<?xi64>, tensor<1x?xi64>, tensor<1x4x?x16xf32>) {
  %s = graph.dim %x, 1 : tensor<?x?x64xf32> -> index
  %c1 = arith.constant 1 : index
  %0 = graph.iota sizes(%s) : tensor<?xi64>
  %1 = graph.dynamic_slice %pos, %c1, %s dim 1 : tensor<1x512xi64>, index, index -> tensor<1x?xi64>
  %2 = graph.cat %cache, %new dim 2 : tensor<1x4x?x16xf32>, tensor<1x4x1x16xf32> -> tensor<1x4x?x16xf32>
  return %0, %1, %2 : tensor<?xi64>, tensor<1x?xi64>, tensor<1x4x?x16xf32>
}

// -----

// An embedding lookup with `?` token ids, and attention with a boolean mask
// of runtime size made additive (its constants broadcast to the runtime sizes
// of the mask, read from the query where they meet).
// CHECK-LABEL: func @gather_attention
// CHECK: prim.gather %arg0 dim 0 index %arg1 : tensor<500x64xf32>, tensor<?x64xi64> -> tensor<?x64xf32>
// CHECK-DAG: %[[B:.*]] = prim.dim %arg2, 0 : tensor<?x4x?x16xf32>
// CHECK-DAG: %[[L:.*]] = prim.dim %arg2, 2 : tensor<?x4x?x16xf32>
// CHECK-DAG: %[[S:.*]] = prim.dim %arg3, 3 : tensor<?x1x?x?xi1>
// CHECK: prim.broadcast_in_dim %{{.*}} dims [] sizes(%[[B]], %[[L]], %[[S]]) : tensor<f32> -> tensor<?x1x?x?xf32>
// CHECK: %[[M:.*]] = prim.select %arg3
// CHECK: prim.attention %arg2, %arg2, %arg2 mask %[[M]] scale 2.500000e-01 : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x1x?x?xf32> -> tensor<?x4x?x16xf32>
func.func @gather_attention(%table: tensor<500x64xf32>, %ids: tensor<?x64xi64>, %q: tensor<?x4x?x16xf32>,
                            %mask: tensor<?x1x?x?xi1>) -> (tensor<?x64xf32>, tensor<?x4x?x16xf32>) {
  %0 = graph.gather %table dim 0 index %ids : tensor<500x64xf32>, tensor<?x64xi64> -> tensor<?x64xf32>
  %1 = graph.scaled_dot_product_attention %q, %q, %q mask %mask : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x1x?x?xi1> -> tensor<?x4x?x16xf32>
  return %0, %1 : tensor<?x64xf32>, tensor<?x4x?x16xf32>
}

// -----

// A convolution with a `?` batch is one prim.convolution (the library reads
// the batch from the buffers); batch_norm with running statistics scales and
// shifts per channel, broadcast to the input's runtime batch.
// CHECK-LABEL: func @convolution_batch_norm
// CHECK: %[[C:.*]] = prim.convolution %arg0, %arg1 bias %arg2 stride [2, 2] padding [1, 1] dilation [1, 1] groups 2 : tensor<?x4x16x16xf32>, tensor<8x2x3x3xf32>, tensor<8xf32> -> tensor<?x8x8x8xf32>
// CHECK: %[[N:.*]] = prim.dim %[[C]], 0 : tensor<?x8x8x8xf32>
// CHECK: prim.broadcast_in_dim %{{.*}} dims [1] sizes(%[[N]]) : tensor<8xf32> -> tensor<?x8x8x8xf32>
// CHECK: prim.mul %[[C]], %{{.*}} : tensor<?x8x8x8xf32>
// CHECK: prim.add
func.func @convolution_batch_norm(%x: tensor<?x4x16x16xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>) -> tensor<?x8x8x8xf32> {
  %0 = graph.convolution %x, %w bias %b stride [2, 2] padding [1, 1] dilation [1, 1] groups 2 : tensor<?x4x16x16xf32>, tensor<8x2x3x3xf32>, tensor<8xf32> -> tensor<?x8x8x8xf32>
  %1 = graph.batch_norm %0 weight %b bias %b running_mean %b running_var %b eps 1.0e-05 : tensor<?x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<?x8x8x8xf32>
  return %1 : tensor<?x8x8x8xf32>
}

// -----

// Pooling with a `?` batch: the pooled dims are padded and sliced as with
// static shapes, the batch taken whole; reshapes and the average's divisors
// take the runtime batch.
// CHECK-LABEL: func @pooling
// CHECK: prim.pad %arg0 low [0, 0, 1, 0] high [0, 0, 0, 0] value 0xFFF0000000000000 : tensor<?x8x8x8xf32> -> tensor<?x8x9x8xf32>
// CHECK: prim.slice %{{.*}} start [0, 0, 0, 0] stride [1, 1, 2, 1] : tensor<?x8x9x8xf32> -> tensor<?x8x4x8xf32>
// CHECK: prim.max
// CHECK: prim.reduce_sum %{{.*}} dims [2, 3] : tensor<?x8x4x4xf32> -> tensor<?x8xf32>
// CHECK: %[[N:.*]] = prim.dim %{{.*}}, 0 : tensor<?x8x4x4xf32>
// CHECK: prim.reshape %{{.*}} sizes(%[[N]]) : tensor<?x8xf32> -> tensor<?x8x1x1xf32>
// CHECK: prim.broadcast_in_dim %{{.*}} dims [2, 3] sizes(%{{.*}}) : tensor<1x1xf32> -> tensor<?x8x1x1xf32>
// CHECK: prim.div
// CHECK: prim.gather %arg0 dim 3 index %{{.*}} : tensor<?x8x8x8xf32>, tensor<?x8x8x3xi64> -> tensor<?x8x8x3xf32>
func.func @pooling(%x: tensor<?x8x8x8xf32>) -> (tensor<?x8x1x1xf32>, tensor<?x8x8x3xf32>) {
  %0 = graph.max_pool %x kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] : tensor<?x8x8x8xf32> -> tensor<?x8x4x4xf32>
  %1 = graph.adaptive_avg_pool %0 output_size [1, 1] : tensor<?x8x4x4xf32> -> tensor<?x8x1x1xf32>
  %2 = graph.adaptive_max_pool %x output_size [3] : tensor<?x8x8x8xf32> -> tensor<?x8x8x3xf32>
  return %1, %2 : tensor<?x8x1x1xf32>, tensor<?x8x8x3xf32>
}

// -----

// Max pooling with indices over a runtime batch (a CNN stem trained with a
// symbolic batch): the running maximum's splat and the flat indices' per-tap
// constants take the batch from the input. Its gradient gathers, for each
// input position, the cotangent and the index of each window that can reach
// it (2 x 2 here: rows, then columns), keeps those whose index names the
// position (the target's terms are h * 5 and w, or -50 where window t does
// not reach: never an index), and adds them in window order; no library call.
// CHECK-LABEL: func @max_pool_with_indices
// CHECK: %[[N:.*]] = prim.dim %arg0, 0 : tensor<?x2x5x5xf32>
// CHECK: prim.broadcast_in_dim %{{.*}} dims [] sizes(%[[N]]) : tensor<f32> -> tensor<?x2x3x3xf32>
// CHECK: prim.broadcast_in_dim %{{.*}} dims [2] sizes(%[[N]]) : tensor<3xi64> -> tensor<?x2x3x3xi64>
// CHECK: prim.select {{.*}} : tensor<?x2x3x3xi1>, tensor<?x2x3x3xi64>
// CHECK: prim.constant dense<[-50, 5, -50, 15, -50]> : tensor<5xi64>
// CHECK: prim.constant dense<[0, 0, 0, 1, 1]> : tensor<5xi64>
// CHECK: %[[IR:.*]] = prim.gather %{{.*}} dim 2 index %{{.*}} : tensor<?x2x3x3xi64>, tensor<?x2x5x3xi64> -> tensor<?x2x5x3xi64>
// CHECK: %[[IW:.*]] = prim.gather %[[IR]] dim 3 index %{{.*}} : tensor<?x2x5x3xi64>, tensor<?x2x5x5xi64> -> tensor<?x2x5x5xi64>
// CHECK: %[[PICK:.*]] = prim.eq %[[IW]], %{{.*}} : tensor<?x2x5x5xi64> -> tensor<?x2x5x5xi1>
// CHECK: %[[GR:.*]] = prim.gather %arg1 dim 2 index %{{.*}} : tensor<?x2x3x3xf32>, tensor<?x2x5x3xi64> -> tensor<?x2x5x3xf32>
// CHECK: %[[GW:.*]] = prim.gather %[[GR]] dim 3 index %{{.*}} : tensor<?x2x5x3xf32>, tensor<?x2x5x5xi64> -> tensor<?x2x5x5xf32>
// CHECK: prim.select %[[PICK]], %[[GW]], %{{.*}} : tensor<?x2x5x5xi1>, tensor<?x2x5x5xf32>
// CHECK-COUNT-3: prim.add %{{.*}} : tensor<?x2x5x5xf32>
// CHECK-NOT: library_call
func.func @max_pool_with_indices(%x: tensor<?x2x5x5xf32>, %g: tensor<?x2x3x3xf32>) -> (tensor<?x2x3x3xf32>, tensor<?x2x5x5xf32>) {
  %0:2 = graph.max_pool_with_indices %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<?x2x5x5xf32>) -> (tensor<?x2x3x3xf32>, tensor<?x2x3x3xi64>)
  %1 = graph.max_pool2d_backward %g, %x, %0#1 {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<?x2x3x3xf32>, tensor<?x2x5x5xf32>, tensor<?x2x3x3xi64>) -> tensor<?x2x5x5xf32>
  return %0#0, %1 : tensor<?x2x3x3xf32>, tensor<?x2x5x5xf32>
}

// -----

// A safe softmax over a middle dim beside a `?` one: the fully masked rows'
// test and zeros are sized as the row maxima and the result, not by aligning
// the reduced shape with the input's from the right.
// CHECK-LABEL: func.func @safe_softmax_middle
// CHECK: %[[MAX:.*]] = prim.reduce_max %arg0 dims [1] : tensor<?x1x4xf32> -> tensor<?x4xf32>
// CHECK: %[[N:.*]] = prim.dim %[[MAX]], 0 : tensor<?x4xf32>
// CHECK: prim.broadcast_in_dim %{{.*}} dims [] sizes(%[[N]]) : tensor<f32> -> tensor<?x4xf32>
// CHECK: prim.select
func.func @safe_softmax_middle(%x: tensor<?x1x4xf32>) -> tensor<?x1x4xf32> {
  %0 = graph.safe_softmax %x {dim = 1 : i64} : tensor<?x1x4xf32> -> tensor<?x1x4xf32>
  return %0 : tensor<?x1x4xf32>
}

// -----

// A boolean amax over the static dim beside a `?` one ("any" of 0/1 integers,
// converted back): the zero it is compared with is sized as the reduced
// value, not by aligning its shape with the input's from the right.
// CHECK-LABEL: func.func @bool_any_rows
// CHECK: %[[R:.*]] = prim.reduce_max %{{.*}} dims [1] : tensor<?x8xi32> -> tensor<?xi32>
// CHECK: %[[N:.*]] = prim.dim %[[R]], 0 : tensor<?xi32>
// CHECK: %[[Z:.*]] = prim.broadcast_in_dim %{{.*}} dims [] sizes(%[[N]]) : tensor<i32> -> tensor<?xi32>
// CHECK: prim.ne %[[R]], %[[Z]] : tensor<?xi32> -> tensor<?xi1>
func.func @bool_any_rows(%x: tensor<?x8xi1>) -> tensor<?xi1> {
  %0 = graph.amax %x dims [1] : tensor<?x8xi1> -> tensor<?xi1>
  return %0 : tensor<?xi1>
}

// -----

// Training batch norm (batch statistics) over a `?` batch of 8 x 8 samples:
// one pass over x, shifted by the first sample's channel means, the count a
// sum of ones over the reduced dims.
// CHECK-LABEL: func @batch_norm_training_dynamic
// CHECK: %[[ONES:.*]] = prim.broadcast_in_dim %{{.*}} dims [] sizes(%{{.*}}) : tensor<f32> -> tensor<?x4x8x8xf32>
// CHECK: %[[N:.*]] = prim.reduce_sum %[[ONES]] dims [0, 2, 3]
// CHECK: %[[FIRST:.*]] = prim.slice %arg0 {{.*}} : tensor<?x4x8x8xf32> -> tensor<1x4x8x8xf32>
// CHECK: prim.reduce_sum %[[FIRST]] dims [0, 2, 3]
// CHECK: %[[D:.*]] = prim.sub %arg0, %{{.*}} : tensor<?x4x8x8xf32>
// CHECK: prim.reduce_sum %[[D]] dims [0, 2, 3] : tensor<?x4x8x8xf32> -> tensor<4xf32>
// CHECK: %[[DD:.*]] = prim.mul %[[D]], %[[D]]
// CHECK: prim.reduce_sum %[[DD]] dims [0, 2, 3] : tensor<?x4x8x8xf32> -> tensor<4xf32>
// CHECK: prim.div %{{.*}}, %[[N]]
func.func @batch_norm_training_dynamic(%x: tensor<?x4x8x8xf32>, %w: tensor<4xf32>) -> tensor<?x4x8x8xf32> {
  %0 = graph.batch_norm %x weight %w bias %w training eps 1.0e-05 : tensor<?x4x8x8xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<?x4x8x8xf32>
  return %0 : tensor<?x4x8x8xf32>
}
