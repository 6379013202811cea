// RUN: dyn-opt %s -split-input-file -verify-diagnostics

func.func @all_result_not_bool(%x: tensor<4x6xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = graph.all %x dims [0] : tensor<4x6xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @argmax_empty_dim(%x: tensor<4x0xf32>) -> tensor<4xi64> {
  // expected-error @+1 {{cannot take the index of an extremum over an empty dim}}
  %0 = graph.argmax %x dim 1 : tensor<4x0xf32> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @argmax_dim(%x: tensor<4x6xf32>) -> tensor<4xi64> {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = graph.argmax %x dim 2 : tensor<4x6xf32> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @argmin_shape(%x: tensor<4x6xf32>) -> tensor<6xi64> {
  // expected-error @+1 {{result shape does not match the reduction of the input over dim}}
  %0 = graph.argmin %x dim 1 : tensor<4x6xf32> -> tensor<6xi64>
  return %0 : tensor<6xi64>
}

// -----

func.func @logsumexp_int(%x: tensor<4x6xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{must be ranked tensor of floating-point values}}
  %0 = graph.logsumexp %x dims [1] : tensor<4x6xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @norm_inf_empty(%x: tensor<0x6xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{an infinite-order norm over no elements is not defined}}
  %0 = graph.vector_norm %x ord 0x7FF0000000000000 dims [0] : tensor<0x6xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @norm_type(%x: tensor<4x6xf32>) -> tensor<6xf64> {
  // expected-error @+1 {{all of {input, result} have same element type}}
  %0 = graph.vector_norm %x ord 2.0 dims [0] : tensor<4x6xf32> -> tensor<6xf64>
  return %0 : tensor<6xf64>
}

// -----

func.func @cumsum_bool(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{a cumulative sum or product of booleans is computed in i64}}
  %0 = graph.cumulative sum %x dim 0 : tensor<4xi1> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @logcumsumexp_int(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{logsumexp scans need a floating-point input}}
  %0 = graph.cumulative logsumexp %x dim 0 : tensor<4xi64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @scan_rank0(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{dim 0 is out of range for rank 0}}
  %0 = graph.cumulative sum %x dim 0 : tensor<f32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cumulative_index_sum(%x: tensor<4xf32>) -> tensor<4xi64> {
  // expected-error @+1 {{indices exist for max and min scans only}}
  %0 = graph.cumulative_index sum %x dim 0 : tensor<4xf32> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @flip_repeated(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{dim 1 is repeated}}
  %0 = graph.flip %x dims [1, 1] : tensor<4x6xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @roll_shifts(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{needs one shift per dim}}
  %0 = graph.roll %x shifts [1, 2] dims [1] : tensor<4x6xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @repeat_shape(%x: tensor<4x6xf32>) -> tensor<8x6xf32> {
  // expected-error @+1 {{needs a repeat count for every input dim}}
  %0 = graph.repeat %x repeats [2] : tensor<4x6xf32> -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

func.func @repeat_result(%x: tensor<4x6xf32>) -> tensor<8x6xf32> {
  // expected-error @+1 {{result shape must be the repeated input's}}
  %0 = graph.repeat %x repeats [2, 2] : tensor<4x6xf32> -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

func.func @var_dims(%x: tensor<4x6xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reduction dim 2 is out of range for rank 2}}
  %0 = graph.var %x {correction = 1.0 : f64, dims = array<i64: 2>} : tensor<4x6xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @std_shape(%x: tensor<4x6xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{result shape does not match the reduction of the input over dims}}
  %0 = graph.std %x {correction = 0.0 : f64, dims = array<i64: 1>} : tensor<4x6xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @var_int(%x: tensor<4xi32>) -> tensor<f32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %0 = graph.var %x {correction = 1.0 : f64, dims = array<i64: 0>} : tensor<4xi32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @tril_rank(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{needs at least two dims}}
  %0 = graph.tril %x {diagonal = 0 : i64} : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clamp_types(%x: tensor<4xf32>, %lo: tensor<f64>, %hi: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{all of {input, min, max, result} have same element type}}
  %0 = graph.clamp %x, %lo, %hi : tensor<4xf32>, tensor<f64>, tensor<f32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @nll_target(%x: tensor<4x5xf32>, %t: tensor<5xi64>, %w: tensor<5xf32>) -> tensor<f32> {
  // expected-error @+1 {{target shape must be the input's without its class dim}}
  %0 = graph.nll_loss mean %x, %t, %w {ignore_index = -100 : i64} : tensor<4x5xf32>, tensor<5xi64>, tensor<5xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @nll_result(%x: tensor<4x5xf32>, %t: tensor<4xi64>, %w: tensor<5xf32>) -> tensor<f32> {
  // expected-error @+1 {{result shape must be the target's (reduction none) or 0-d}}
  %0 = graph.nll_loss none %x, %t, %w {ignore_index = -100 : i64} : tensor<4x5xf32>, tensor<4xi64>, tensor<5xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @glu_odd(%x: tensor<4x5xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{halves a dim of odd size}}
  %0 = graph.glu %x {dim = 1 : i64} : tensor<4x5xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @prelu_weight(%x: tensor<2x3x5xf32>, %w: tensor<5xf32>) -> tensor<2x3x5xf32> {
  // expected-error @+1 {{weight must be one value or one per channel}}
  %0 = graph.prelu %x, %w : tensor<2x3x5xf32>, tensor<5xf32> -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

func.func @cdist_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x5x4xf32>) -> tensor<2x3x5xf32> {
  // expected-error @+1 {{operands must be [*, P, M] and [*, R, M] with one batch shape}}
  %0 = graph.cdist %a, %b {p = 2.0 : f64} : tensor<2x3x4xf32>, tensor<3x5x4xf32> -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

func.func @pdist_inf_empty(%x: tensor<3x0xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{an infinite-order norm over no elements is not defined}}
  %0 = graph.pdist %x {p = 0x7FF0000000000000 : f64} : tensor<3x0xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @bucketize_type(%x: tensor<5xf32>, %b: tensor<4xf32>) -> tensor<5xi64> {
  // expected-error @+1 {{result must be i32 with out_int32, i64 without}}
  %0 = graph.bucketize %x, %b {right = false, out_int32 = true} : tensor<5xf32>, tensor<4xf32> -> tensor<5xi64>
  return %0 : tensor<5xi64>
}

// -----

func.func @multi_margin_p(%x: tensor<3x4xf32>, %t: tensor<3xi64>) -> tensor<f32> {
  // expected-error @+1 {{p must be 1 or 2}}
  %0 = graph.multi_margin_loss %x, %t {p = 3 : i64, margin = 1.0 : f64, reduction = "mean"} : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @multilabel_target(%x: tensor<2x3xf32>, %t: tensor<2x4xi64>) -> tensor<f32> {
  // expected-error @+1 {{input and target must be [N, C]}}
  %0 = graph.multilabel_margin_loss %x, %t {reduction = "mean"} : tensor<2x3xf32>, tensor<2x4xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @grid_sampler_bicubic_3d(%x: tensor<1x1x2x3x4xf32>, %g: tensor<1x2x2x2x3xf32>) -> tensor<1x1x2x2x2xf32> {
  // expected-error @+1 {{mode must be 0-2 (bicubic for 2 spatial dims only) and padding 0-2}}
  %0 = graph.grid_sampler %x, %g {mode = 2 : i64, padding = 0 : i64, align_corners = false, cuda_rules = false} : tensor<1x1x2x3x4xf32>, tensor<1x2x2x2x3xf32> -> tensor<1x1x2x2x2xf32>
  return %0 : tensor<1x1x2x2x2xf32>
}
