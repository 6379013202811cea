// RUN: dyn-opt %s -split-input-file -verify-diagnostics
// Dynamic dims the ops cannot run with: each rejected at the op.

// Two result dims that no input dim sizes: neither is the element count over the others.
func.func @reshape_underivable(%x: tensor<?x?xf32>) -> tensor<?x?x?x?xf32> {
  // expected-error @+1 {{cannot derive the dynamic result dims from the input: give their sizes}}
  %0 = graph.reshape %x : tensor<?x?xf32> -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// -----

func.func @reshape_sizes(%x: tensor<?x64xf32>, %n: index) -> tensor<?x?x16xf32> {
  // expected-error @+1 {{needs one size per dynamic result dim (2), got 1}}
  %0 = graph.reshape %x sizes(%n) : tensor<?x64xf32> -> tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

// -----

func.func @reshape_to_static(%x: tensor<?x64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{a dynamic input needs a dynamic result dim}}
  %0 = graph.reshape %x : tensor<?x64xf32> -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

func.func @matmul_contracting(%a: tensor<?x?xf32>, %b: tensor<8x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{contracting dims differ: ? vs 8}}
  %0 = graph.matmul %a, %b : tensor<?x?xf32>, tensor<8x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @matmul_batch(%a: tensor<?x4x8xf32>, %b: tensor<2x8x4xf32>) -> tensor<?x4x4xf32> {
  // expected-error @+1 {{batch dims differ}}
  %0 = graph.matmul %a, %b : tensor<?x4x8xf32>, tensor<2x8x4xf32> -> tensor<?x4x4xf32>
  return %0 : tensor<?x4x4xf32>
}

// -----

func.func @matmul_result(%a: tensor<?x8xf32>, %b: tensor<8x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{result shape must be [batch..., M, N]}}
  %0 = graph.matmul %a, %b : tensor<?x8xf32>, tensor<8x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @expand_without_sizes(%x: tensor<1x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{result dim 0 is dynamic but the input's is not: give the sizes}}
  %0 = graph.expand %x : tensor<1x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @expand_dynamic_to_static(%x: tensor<?x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{input dim 0 of size ? cannot be expanded to 4}}
  %0 = graph.expand %x : tensor<?x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @slice_dynamic_dim(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{slices dynamic dim 0 to bounds that are not static}}
  %0 = graph.slice %x dim 0 start 1 end 3 step 1 : tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @cat_dynamic_dim(%x: tensor<?x8xf32>) -> tensor<12x8xf32> {
  // expected-error @+1 {{result dim 0 must be dynamic exactly where an input's is}}
  %0 = graph.cat %x, %x dim 0 : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<12x8xf32>
  return %0 : tensor<12x8xf32>
}

// -----

func.func @cat_static_to_dynamic(%x: tensor<4x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{result dim 0 must be dynamic exactly where an input's is}}
  %0 = graph.cat %x, %x dim 0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @cat_mismatch(%x: tensor<?x8xf32>, %y: tensor<4x8xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{input dim 0 differs from the result}}
  %0 = graph.cat %x, %y dim 1 : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @reduction_shape(%x: tensor<?x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{result shape does not match the reduction of the input over dims}}
  %0 = graph.sum %x dims [1] : tensor<?x8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @layer_norm_dynamic_normalized(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  // expected-error @+1 {{normalized dims must be static}}
  %0 = graph.layer_norm %x normalized_rank 1 eps 1.0e-05 : tensor<4x?xf32> -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

func.func @dim_range(%x: tensor<?x8xf32>) -> index {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = graph.dim %x, 2 : tensor<?x8xf32> -> index
  return %0 : index
}

// -----

func.func @iota_sizes(%n: index) -> tensor<16xi64> {
  // expected-error @+1 {{needs one size per dynamic result dim (0), got 1}}
  %0 = graph.iota sizes(%n) : tensor<16xi64>
  return %0 : tensor<16xi64>
}

// -----

func.func @iota_no_size() -> tensor<?xi64> {
  // expected-error @+1 {{needs one size per dynamic result dim (1), got 0}}
  %0 = graph.iota : tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @iota_rank(%n: index) -> tensor<?x2xi64> {
  // expected-error @+1 {{result must be 1-D}}
  %0 = graph.iota sizes(%n) : tensor<?x2xi64>
  return %0 : tensor<?x2xi64>
}

// -----

func.func @dynamic_slice_too_long(%x: tensor<1x512xi64>, %a: index, %b: index) -> tensor<1x600xi64> {
  // expected-error @+1 {{result dim 1 (600) is longer than the input's (512)}}
  %0 = graph.dynamic_slice %x, %a, %b dim 1 : tensor<1x512xi64>, index, index -> tensor<1x600xi64>
  return %0 : tensor<1x600xi64>
}

// -----

func.func @dynamic_slice_other_dim(%x: tensor<?x512xi64>, %a: index, %b: index) -> tensor<2x?xi64> {
  // expected-error @+1 {{result dim 0 (2) differs from the input's (?)}}
  %0 = graph.dynamic_slice %x, %a, %b dim 1 : tensor<?x512xi64>, index, index -> tensor<2x?xi64>
  return %0 : tensor<2x?xi64>
}

// -----

func.func @dynamic_slice_dim(%x: tensor<1x512xi64>, %a: index, %b: index) -> tensor<1x?xi64> {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = graph.dynamic_slice %x, %a, %b dim 2 : tensor<1x512xi64>, index, index -> tensor<1x?xi64>
  return %0 : tensor<1x?xi64>
}

// -----

func.func @gather_dynamic_beside_static(%x: tensor<4x8xf32>, %i: tensor<?x?xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{index dim 1 is dynamic but the input's is not}}
  %0 = graph.gather %x dim 0 index %i : tensor<4x8xf32>, tensor<?x?xi64> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @gather_result(%x: tensor<500x64xf32>, %i: tensor<?x64xi64>) -> tensor<4x64xf32> {
  // expected-error @+1 {{result must have the index's shape}}
  %0 = graph.gather %x dim 0 index %i : tensor<500x64xf32>, tensor<?x64xi64> -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

func.func @attention_batch(%q: tensor<?x4x?x16xf32>, %k: tensor<2x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  // expected-error @+1 {{query, key and value must have the same batch dims}}
  %0 = graph.scaled_dot_product_attention %q, %k, %k : tensor<?x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32> -> tensor<?x4x?x16xf32>
  return %0 : tensor<?x4x?x16xf32>
}

// -----

func.func @attention_result(%q: tensor<?x4x?x16xf32>) -> tensor<?x4x8x16xf32> {
  // expected-error @+1 {{result shape must be [?, 4, ?, 16]}}
  %0 = graph.scaled_dot_product_attention %q, %q, %q : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x8x16xf32>
  return %0 : tensor<?x4x8x16xf32>
}

// -----

func.func @attention_mask(%q: tensor<?x4x?x16xf32>, %m: tensor<?x1x?x8xi1>) -> tensor<?x4x?x16xf32> {
  // expected-error @+1 {{mask does not broadcast to [..., L, S]}}
  %0 = graph.scaled_dot_product_attention %q, %q, %q mask %m : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x1x?x8xi1> -> tensor<?x4x?x16xf32>
  return %0 : tensor<?x4x?x16xf32>
}

// -----

// A convolution's output sizes come from its channel and spatial dims: only the batch dim may be `?`.
func.func @convolution_dynamic_spatial(%x: tensor<?x4x?x16xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<?x8x?x14xf32> {
  // expected-error @+1 {{input dim 2 is dynamic: only the batch dim may be}}
  %0 = graph.convolution %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : tensor<?x4x?x16xf32>, tensor<8x4x3x3xf32> -> tensor<?x8x?x14xf32>
  return %0 : tensor<?x8x?x14xf32>
}

// -----

func.func @convolution_dynamic_channels(%x: tensor<2x?x16x16xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x14x14xf32> {
  // expected-error @+1 {{input dim 1 is dynamic: only the batch dim may be}}
  %0 = graph.convolution %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : tensor<2x?x16x16xf32>, tensor<8x4x3x3xf32> -> tensor<2x8x14x14xf32>
  return %0 : tensor<2x8x14x14xf32>
}

// -----

func.func @convolution_dynamic_weight(%x: tensor<?x4x16x16xf32>, %w: tensor<?x4x3x3xf32>) -> tensor<?x8x14x14xf32> {
  // expected-error @+1 {{weight must have a static shape}}
  %0 = graph.convolution %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : tensor<?x4x16x16xf32>, tensor<?x4x3x3xf32> -> tensor<?x8x14x14xf32>
  return %0 : tensor<?x8x14x14xf32>
}

// -----

// A `?` batch stays `?` in the result.
func.func @convolution_static_result(%x: tensor<?x4x16x16xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x14x14xf32> {
  // expected-error @+1 {{result shape must be [?, 8, 14, 14]}}
  %0 = graph.convolution %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : tensor<?x4x16x16xf32>, tensor<8x4x3x3xf32> -> tensor<2x8x14x14xf32>
  return %0 : tensor<2x8x14x14xf32>
}

// -----

// Batch statistics (training) are over every dim but the channels, which must be static.
func.func @batch_norm_training(%x: tensor<4x?x4x4xf32>, %c: tensor<8xf32>) -> tensor<4x?x4x4xf32> {
  // expected-error @+1 {{channel dim 1 must be static}}
  %0 = graph.batch_norm %x weight %c bias %c training eps 1.0e-05 : tensor<4x?x4x4xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x?x4x4xf32>
  return %0 : tensor<4x?x4x4xf32>
}

// -----

func.func @batch_norm_channels(%x: tensor<2x?x4xf32>, %c: tensor<8xf32>) -> tensor<2x?x4xf32> {
  // expected-error @+1 {{channel dim 1 must be static}}
  %0 = graph.batch_norm %x running_mean %c running_var %c eps 1.0e-05 : tensor<2x?x4xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x?x4xf32>
  return %0 : tensor<2x?x4xf32>
}

// -----

// Windows are laid out from the pooled dims' sizes.
func.func @max_pool_dynamic_window_dim(%x: tensor<?x8x?x8xf32>) -> tensor<?x8x?x4xf32> {
  // expected-error @+1 {{pooled dim 0 is dynamic: only the dims in front of the pooled ones may be}}
  %0 = graph.max_pool %x kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] : tensor<?x8x?x8xf32> -> tensor<?x8x?x4xf32>
  return %0 : tensor<?x8x?x4xf32>
}

// -----

func.func @avg_pool_static_result(%x: tensor<?x8x8x8xf32>) -> tensor<4x8x4x4xf32> {
  // expected-error @+1 {{result shape must be [?, 8, 4, 4]}}
  %0 = graph.avg_pool %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<?x8x8x8xf32> -> tensor<4x8x4x4xf32>
  return %0 : tensor<4x8x4x4xf32>
}

// -----

func.func @adaptive_pool_dynamic_pooled_dim(%x: tensor<2x8x?xf32>) -> tensor<2x8x1xf32> {
  // expected-error @+1 {{pooled dim 0 is dynamic: only the dims in front of the pooled ones may be}}
  %0 = graph.adaptive_avg_pool %x output_size [1] : tensor<2x8x?xf32> -> tensor<2x8x1xf32>
  return %0 : tensor<2x8x1xf32>
}

// -----

func.func @random_without_sizes(%seed: tensor<i64>) -> tensor<?x4xf32> {
  // expected-error @+1 {{needs one size per dynamic result dim (1), got 0}}
  %0 = graph.random uniform %seed offset 0 a 0.0 b 1.0 : tensor<i64> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
