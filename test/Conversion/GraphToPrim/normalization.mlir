// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim | FileCheck %s

// layer_norm of bf16: computed in f32 (affine part too), rounded once.
// CHECK-LABEL: func @layer_norm_bf16
// CHECK: %[[X:.*]] = prim.convert_element_type %{{.*}} : tensor<2x3x4xbf16> -> tensor<2x3x4xf32>
// CHECK: %[[S:.*]] = prim.reduce_sum %[[X]] dims [2] : tensor<2x3x4xf32> -> tensor<2x3xf32>
// CHECK: %[[C:.*]] = prim.sub %[[X]], %{{.*}} : tensor<2x3x4xf32>
// CHECK: %[[SQ:.*]] = prim.mul %[[C]], %[[C]]
// CHECK: prim.reduce_sum %[[SQ]] dims [2]
// CHECK: prim.rsqrt
// CHECK: prim.broadcast_in_dim %{{.*}} dims [2] : tensor<4xf32> -> tensor<2x3x4xf32>
// CHECK: prim.mul
// CHECK: prim.add
// CHECK: prim.convert_element_type %{{.*}} : tensor<2x3x4xf32> -> tensor<2x3x4xbf16>
// CHECK-NOT: graph.
func.func @layer_norm_bf16(%x: tensor<2x3x4xbf16>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xbf16> {
  %0 = graph.layer_norm %x weight %w bias %b normalized_rank 1 eps 1.0e-5 : tensor<2x3x4xbf16>, tensor<4xf32>, tensor<4xf32> -> tensor<2x3x4xbf16>
  return %0 : tensor<2x3x4xbf16>
}

// -----

// rms_norm: the mean of squares over the trailing dims, no centring.
// CHECK-LABEL: func @rms_norm
// CHECK: %[[SQ:.*]] = prim.mul %[[X:.*]], %[[X]] : tensor<4x8xf32>
// CHECK: prim.reduce_sum %[[SQ]] dims [1] : tensor<4x8xf32> -> tensor<4xf32>
// CHECK: prim.rsqrt
// CHECK: prim.broadcast_in_dim %{{.*}} dims [0] : tensor<4xf32> -> tensor<4x8xf32>
// CHECK: prim.broadcast_in_dim %{{.*}} dims [1] : tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NOT: prim.sub
func.func @rms_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = graph.rms_norm %x weight %w normalized_rank 1 eps 1.0e-6 : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// batch_norm in training: statistics over all dims but dim 1, in one pass:
// the sums of d = x - k and d * d (k: each channel's mean over its first
// samples, 64 values at least: here both samples), mean = k + sum(d) / n,
// sum((x - mean)^2) = sum(d^2) - sum(d) * (mean - k) clamped at 0; the
// running statistics come back updated with the unbiased variance (8 values:
// / 7).
// CHECK-LABEL: func @batch_norm_train
// CHECK: %[[F:.*]] = prim.slice %[[X:.*]] start [0, 0, 0] stride [1, 1, 1] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK: %[[KS:.*]] = prim.reduce_sum %[[F]] dims [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
// CHECK: %[[K:.*]] = prim.div %[[KS]]
// CHECK: %[[D:.*]] = prim.sub %[[X]], %{{.*}} : tensor<2x3x4xf32>
// CHECK: %[[S1:.*]] = prim.reduce_sum %[[D]] dims [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
// CHECK: %[[DD:.*]] = prim.mul %[[D]], %[[D]]
// CHECK: %[[S2:.*]] = prim.reduce_sum %[[DD]] dims [0, 2]
// CHECK: %[[SHIFT:.*]] = prim.div %[[S1]], %{{.*}} : tensor<3xf32>
// CHECK: %[[MEAN:.*]] = prim.add %[[K]], %[[SHIFT]]
// CHECK: %[[P:.*]] = prim.mul %[[S1]], %[[SHIFT]]
// CHECK: %[[SS:.*]] = prim.sub %[[S2]], %[[P]]
// CHECK: %[[SSQ:.*]] = prim.max %[[SS]], %{{.*}} : tensor<3xf32>
// CHECK: prim.rsqrt
// CHECK: %[[N1:.*]] = prim.constant dense<7.000000e+00> : tensor<3xf32>
// CHECK: %[[UNB:.*]] = prim.div %[[SSQ]], %[[N1]]
// CHECK: %[[M:.*]] = prim.constant dense<1.000000e-01> : tensor<3xf32>
// CHECK: %[[KEEP:.*]] = prim.sub %{{.*}}, %[[M]]
// CHECK: %[[NEW:.*]] = prim.mul %[[M]], %[[MEAN]]
// CHECK: %[[OLD:.*]] = prim.mul %[[KEEP]], %[[RM:.*]]
// CHECK: %[[RMNEW:.*]] = prim.add %[[NEW]], %[[OLD]]
// CHECK: prim.mul %{{.*}}, %[[UNB]]
// CHECK: return %{{.*}}, %[[RMNEW]], %{{.*}}
func.func @batch_norm_train(%x: tensor<2x3x4xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>, %rm: tensor<3xf32>, %rv: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = graph.batch_norm %x weight %w bias %b running_mean %rm running_var %rv training momentum 0.1 eps 1.0e-5 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
  return %0#0, %0#1, %0#2 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// momentum None (nn.BatchNorm's cumulative average): 1 / num_batches_tracked.
// CHECK-LABEL: func @batch_norm_cumulative
// CHECK: %[[N:.*]] = prim.convert_element_type %{{.*}} : tensor<i64> -> tensor<f32>
// CHECK: %[[F:.*]] = prim.div %{{.*}}, %[[N]] : tensor<f32>
// CHECK: prim.broadcast_in_dim %[[F]] dims [] : tensor<f32> -> tensor<3xf32>
func.func @batch_norm_cumulative(%x: tensor<2x3x4xf32>, %rm: tensor<3xf32>, %rv: tensor<3xf32>, %n: tensor<i64>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = graph.batch_norm %x running_mean %rm running_var %rv num_batches_tracked %n training eps 1.0e-5 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i64> -> tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
  return %0#0, %0#1, %0#2 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// batch_norm in eval mode: x * a + b with per-channel a and b from the
// running statistics; f16 computes in f32.
// CHECK-LABEL: func @batch_norm_eval_f16
// CHECK: %[[X:.*]] = prim.convert_element_type %{{.*}} : tensor<2x3x4x4xf16> -> tensor<2x3x4x4xf32>
// CHECK-NOT: prim.reduce_sum
// CHECK: prim.rsqrt %{{.*}} : tensor<3xf32>
// CHECK: prim.broadcast_in_dim %{{.*}} dims [1] : tensor<3xf32> -> tensor<2x3x4x4xf32>
// CHECK: prim.mul %[[X]]
// CHECK: prim.convert_element_type %{{.*}} : tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf16>
func.func @batch_norm_eval_f16(%x: tensor<2x3x4x4xf16>, %w: tensor<3xf32>, %b: tensor<3xf32>, %rm: tensor<3xf32>, %rv: tensor<3xf32>) -> tensor<2x3x4x4xf16> {
  %0 = graph.batch_norm %x weight %w bias %b running_mean %rm running_var %rv eps 1.0e-5 : tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x4xf16>
  return %0 : tensor<2x3x4x4xf16>
}

// -----

// group_norm: [N, C, *] as [N, groups, rest] rows.
// CHECK-LABEL: func @group_norm
// CHECK: %[[R:.*]] = prim.reshape %{{.*}} : tensor<2x6x5xf32> -> tensor<2x3x10xf32>
// CHECK: prim.reduce_sum %[[R]] dims [2] : tensor<2x3x10xf32> -> tensor<2x3xf32>
// CHECK: prim.reshape %{{.*}} : tensor<2x3x10xf32> -> tensor<2x6x5xf32>
// CHECK: prim.broadcast_in_dim %{{.*}} dims [1] : tensor<6xf32> -> tensor<2x6x5xf32>
func.func @group_norm(%x: tensor<2x6x5xf32>, %w: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<2x6x5xf32> {
  %0 = graph.group_norm %x weight %w bias %b groups 3 eps 1.0e-5 : tensor<2x6x5xf32>, tensor<6xf32>, tensor<6xf32> -> tensor<2x6x5xf32>
  return %0 : tensor<2x6x5xf32>
}

// -----

// instance_norm: statistics per (sample, channel); the running statistics
// are updated per sample and averaged over the samples.
// CHECK-LABEL: func @instance_norm
// CHECK: prim.reduce_sum %{{.*}} dims [2] : tensor<2x3x4xf32> -> tensor<2x3xf32>
// CHECK: prim.broadcast_in_dim %{{.*}} dims [1] : tensor<3xf32> -> tensor<2x3xf32>
// CHECK: prim.reduce_sum %{{.*}} dims [0] : tensor<2x3xf32> -> tensor<3xf32>
func.func @instance_norm(%x: tensor<2x3x4xf32>, %rm: tensor<3xf32>, %rv: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = graph.instance_norm %x running_mean %rm running_var %rv use_input_stats momentum 0.1 eps 1.0e-5 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
  return %0#0, %0#1, %0#2 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// softmax_backward: (grad - sum(grad * y)) * y, bf16 in f32, rounded once.
// CHECK-LABEL: func @softmax_backward
// CHECK: %[[G:.*]] = prim.convert_element_type %{{.*}} : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK: %[[Y:.*]] = prim.convert_element_type %{{.*}} : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK: %[[GY:.*]] = prim.mul %[[G]], %[[Y]]
// CHECK: %[[S:.*]] = prim.reduce_sum %[[GY]] dims [1] : tensor<2x4xf32> -> tensor<2xf32>
// CHECK: %[[B:.*]] = prim.broadcast_in_dim %[[S]] dims [0]
// CHECK: %[[D:.*]] = prim.sub %[[G]], %[[B]]
// CHECK: %[[R:.*]] = prim.mul %[[D]], %[[Y]]
// CHECK: prim.convert_element_type %[[R]] : tensor<2x4xf32> -> tensor<2x4xbf16>
func.func @softmax_backward(%g: tensor<2x4xbf16>, %y: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  %0 = graph.softmax_backward %g, %y {dim = 1 : i64} : tensor<2x4xbf16>, tensor<2x4xbf16> -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

// safe_softmax: softmax, then 0 where the row's maximum is -inf (all -inf).
// CHECK-LABEL: func @safe_softmax
// CHECK: %[[M:.*]] = prim.reduce_max %{{.*}} dims [1] : tensor<2x4xf32> -> tensor<2xf32>
// CHECK: %[[D:.*]] = prim.div
// CHECK: %[[NONE:.*]] = prim.eq %[[M]], %{{.*}} : tensor<2xf32> -> tensor<2xi1>
// CHECK: %[[B:.*]] = prim.broadcast_in_dim %[[NONE]] dims [0] : tensor<2xi1> -> tensor<2x4xi1>
// CHECK: prim.select %[[B]], %{{.*}}, %[[D]]
func.func @safe_softmax(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = graph.safe_softmax %x {dim = 1 : i64} : tensor<2x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// norm_stats of bf16 over dims 0 and 2 (batch norm's): the mean and
// 1 / sqrt(var + eps) in f32, one pass (shifted sums, as batch_norm's), a
// division (not rsqrt).
// CHECK-LABEL: func @norm_stats
// CHECK: %[[X:.*]] = prim.convert_element_type %{{.*}} : tensor<4x3x5xbf16> -> tensor<4x3x5xf32>
// CHECK: prim.slice %[[X]]
// CHECK: prim.reduce_sum %{{.*}} dims [0, 2] : tensor<4x3x5xf32> -> tensor<3xf32>
// CHECK: prim.reduce_sum %{{.*}} dims [0, 2] : tensor<4x3x5xf32> -> tensor<3xf32>
// CHECK: prim.reduce_sum %{{.*}} dims [0, 2] : tensor<4x3x5xf32> -> tensor<3xf32>
// CHECK: %[[MEAN:.*]] = prim.add
// CHECK: %[[SS:.*]] = prim.max
// CHECK: %[[VAR:.*]] = prim.div %[[SS]]
// CHECK: %[[PLUS:.*]] = prim.add %[[VAR]]
// CHECK: %[[SQ:.*]] = prim.sqrt %[[PLUS]]
// CHECK: %[[R:.*]] = prim.div %{{.*}}, %[[SQ]]
// CHECK: return %[[MEAN]], %[[R]]
func.func @norm_stats(%x: tensor<4x3x5xbf16>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = graph.norm_stats %x {dims = array<i64: 0, 2>, eps = 1.0e-5 : f64} : (tensor<4x3x5xbf16>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// batch_norm's shift reads whole samples, as few as give 64 values per
// channel: 2 of 16 samples of 6x6.
// CHECK-LABEL: func @batch_norm_shift_samples
// CHECK: prim.slice %{{.*}} start [0, 0, 0, 0] stride [1, 1, 1, 1] : tensor<16x4x6x6xf32> -> tensor<2x4x6x6xf32>
// CHECK: prim.reduce_sum %{{.*}} dims [0, 2, 3] : tensor<2x4x6x6xf32> -> tensor<4xf32>
// CHECK: prim.constant dense<7.200000e+01> : tensor<4xf32>
func.func @batch_norm_shift_samples(%x: tensor<16x4x6x6xf32>) -> tensor<16x4x6x6xf32> {
  %0 = graph.batch_norm %x training eps 1.0e-5 : tensor<16x4x6x6xf32> -> tensor<16x4x6x6xf32>
  return %0 : tensor<16x4x6x6xf32>
}

// -----

// batch_norm in training over a `?` batch: two passes (the one-pass form
// takes static shapes), each division by the count known at run time, a sum
// of ones over the same dims; the unbiased variance divides by it minus 1.
// CHECK-LABEL: func @batch_norm_train_dynamic
// CHECK: %[[ONES:.*]] = prim.broadcast_in_dim %{{.*}} : tensor<f32> -> tensor<?x4x6xf32>
// CHECK: %[[N:.*]] = prim.reduce_sum %[[ONES]] dims [0, 2] : tensor<?x4x6xf32> -> tensor<4xf32>
// CHECK: %[[S:.*]] = prim.reduce_sum %{{.*}} dims [0, 2] : tensor<?x4x6xf32> -> tensor<4xf32>
// CHECK: prim.div %[[S]], %[[N]]
// CHECK: %[[SS:.*]] = prim.reduce_sum %{{.*}} dims [0, 2] : tensor<?x4x6xf32> -> tensor<4xf32>
// CHECK: prim.div %[[SS]], %[[N]]
// CHECK: %[[N1:.*]] = prim.sub %[[N]], %{{.*}} : tensor<4xf32>
// CHECK: prim.div %[[SS]], %[[N1]]
func.func @batch_norm_train_dynamic(%x: tensor<?x4x6xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) -> (tensor<?x4x6xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0:3 = graph.batch_norm %x running_mean %rm running_var %rv training momentum 0.1 eps 1.0e-5 : tensor<?x4x6xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<?x4x6xf32>, tensor<4xf32>, tensor<4xf32>
  return %0#0, %0#1, %0#2 : tensor<?x4x6xf32>, tensor<4xf32>, tensor<4xf32>
}
