// RUN: dyn-opt %s -split-input-file -verify-diagnostics

func.func @ln_weight_shape(%x: tensor<2x4xf32>, %w: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{weight must have shape [4]}}
  %0 = graph.layer_norm %x weight %w normalized_rank 1 eps 1.0e-5 : tensor<2x4xf32>, tensor<3xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @ln_rank(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{normalized_rank 3 must be in [1, 2]}}
  %0 = graph.layer_norm %x normalized_rank 3 eps 1.0e-5 : tensor<2x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @ln_mixed(%x: tensor<2x4xf32>, %w: tensor<4xbf16>) -> tensor<2x4xf32> {
  // expected-error @+1 {{weight must have the input's element type (or f32 beside an f16/bf16 input)}}
  %0 = graph.layer_norm %x weight %w normalized_rank 1 eps 1.0e-5 : tensor<2x4xf32>, tensor<4xbf16> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @rms_result(%x: tensor<2x4xbf16>) -> tensor<2x4xf32> {
  // expected-error @+1 {{result must have the input's type}}
  %0 = graph.rms_norm %x normalized_rank 1 eps 1.0e-5 : tensor<2x4xbf16> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @bn_eval_no_stats(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{without training normalizes with running statistics: they are required}}
  %0 = graph.batch_norm %x eps 1.0e-5 : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @bn_missing_updates(%x: tensor<2x3xf32>, %rm: tensor<3xf32>, %rv: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{must return 2 updated running statistics here, returns 0}}
  %0 = graph.batch_norm %x running_mean %rm running_var %rv training momentum 0.1 eps 1.0e-5 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @bn_two_momenta(%x: tensor<2x3xf32>, %rm: tensor<3xf32>, %rv: tensor<3xf32>, %n: tensor<i64>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  // expected-error @+1 {{updating running statistics takes a momentum or num_batches_tracked (the cumulative average), exactly one}}
  %0:3 = graph.batch_norm %x running_mean %rm running_var %rv num_batches_tracked %n training momentum 0.1 eps 1.0e-5 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i64> -> tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
  return %0#0, %0#1, %0#2 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

func.func @bn_rank1(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{input must be [N, C, *] (rank 2 or more)}}
  %0 = graph.batch_norm %x training eps 1.0e-5 : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @gn_groups(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{groups 4 must be positive and divide the 6 channels}}
  %0 = graph.group_norm %x groups 4 eps 1.0e-5 : tensor<2x6xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @in_eval_no_stats(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{without use_input_stats normalizes with running statistics: they are required}}
  %0 = graph.instance_norm %x momentum 0.1 eps 1.0e-5 : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

func.func @norm_stats_type(%x: tensor<4x3xbf16>) -> (tensor<3xbf16>, tensor<3xbf16>) {
  // expected-error @+1 {{statistics must be in the input's accumulate type}}
  %0:2 = graph.norm_stats %x {dims = array<i64: 0>, eps = 1.0e-5 : f64} : (tensor<4x3xbf16>) -> (tensor<3xbf16>, tensor<3xbf16>)
  return %0#0, %0#1 : tensor<3xbf16>, tensor<3xbf16>
}

// -----

func.func @norm_stats_shape(%x: tensor<4x3xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{statistics must have the input's shape without dims}}
  %0:2 = graph.norm_stats %x {dims = array<i64: 0>, eps = 1.0e-5 : f64} : (tensor<4x3xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}
