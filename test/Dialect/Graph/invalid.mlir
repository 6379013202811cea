// RUN: dyn-opt %s -split-input-file -verify-diagnostics

// The verifiers admit only what the passes lower (test/fuzz): static shapes
// (dynamic dims where the lowering takes them), the element types every
// lowering handles, and each family's type rule.

func.func @dynamic_dim(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{needs static shapes, but operand #0 has type 'tensor<?x8xf32>'}}
  %0 = graph.cumulative sum %x dim 1 : tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// A dynamic dim is never broadcast: it stays dynamic in the result.
func.func @dynamic_dim_broadcast(%a: tensor<?x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{operand #0 has a dynamic dim 0 that is not dynamic in the result 'tensor<4x8xf32>'}}
  %0 = graph.add %a, %b : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @unsupported_element_type(%x: tensor<4xf128>) -> tensor<4xf128> {
  // expected-error @+1 {{must be ranked tensor of supported element type values}}
  %0 = graph.neg %x : tensor<4xf128> -> tensor<4xf128>
  return %0 : tensor<4xf128>
}

// -----

// amin keeps the input's element type (a fuzzer case: i1 -> i16 reached the
// GPU lowering as a 16-bit warp shuffle).
func.func @amin_changes_type(%x: tensor<4x1024xi1>) -> tensor<4xi16> {
  // expected-error @+1 {{failed to verify that all of {input, result} have same element type}}
  %0 = graph.amin %x dims [1] : tensor<4x1024xi1> -> tensor<4xi16>
  return %0 : tensor<4xi16>
}

// -----

func.func @mean_of_ints(%x: tensor<4x8xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{result #0 must be ranked tensor of floating-point values}}
  %0 = graph.mean %x dims [1] : tensor<4x8xi64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @exp_to_int(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{result #0 must be ranked tensor of floating-point values}}
  %0 = graph.exp %x : tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// floor and ceil keep the type (of integers they are the identity).
func.func @floor_to_int(%x: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{failed to verify that all of {input, result} have same type}}
  %0 = graph.floor %x : tensor<4xf32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Arithmetic PyTorch does not define on booleans (it raises).
func.func @bool_sub(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{result #0 must be ranked tensor of non-boolean values}}
  %0 = graph.sub %a, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @bool_abs(%a: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{result #0 must be ranked tensor of non-boolean values}}
  %0 = graph.abs %a : tensor<4xi1> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Integers raise to integer powers (square and multiply); booleans have no pow.
func.func @boolean_pow(%a: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{result #0 must be ranked tensor of non-boolean values}}
  %0 = graph.pow %a, %a : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Convolutions take floats and integers (ATen's CPU kernels), not booleans (eager's take none).
func.func @boolean_convolution(%x: tensor<1x1x4xi1>, %w: tensor<1x1x2xi1>) -> tensor<1x1x3xi1> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float or 8-bit signless integer}}
  %0 = graph.convolution %x, %w stride [1] padding [0] dilation [1] groups 1 : tensor<1x1x4xi1>, tensor<1x1x2xi1> -> tensor<1x1x3xi1>
  return %0 : tensor<1x1x3xi1>
}

// -----

func.func @softmax_of_ints(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of floating-point values}}
  %0 = graph.softmax %x dim 1 : tensor<4x8xi32> -> tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

func.func @boolean_matmul(%a: tensor<4x8xi1>, %b: tensor<8x2xi1>) -> tensor<4x2xi1> {
  // expected-error @+1 {{result #0 must be ranked tensor of non-boolean values}}
  %0 = graph.matmul %a, %b : tensor<4x8xi1>, tensor<8x2xi1> -> tensor<4x2xi1>
  return %0 : tensor<4x2xi1>
}

// -----

func.func @permute_changes_type(%x: tensor<4x8xf32>) -> tensor<8x4xi32> {
  // expected-error @+1 {{failed to verify that all of {input, result} have same element type}}
  %0 = graph.permute %x dims [1, 0] : tensor<4x8xf32> -> tensor<8x4xi32>
  return %0 : tensor<8x4xi32>
}

// -----

func.func @not_broadcastable(%a: tensor<4xf32>, %b: tensor<5xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operands don't have broadcast-compatible shapes}}
  %0 = graph.add %a, %b : tensor<4xf32>, tensor<5xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bad_reduction_dim(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reduction dim 2 is out of range for rank 2}}
  %0 = graph.sum %x dims [2] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bad_keepdim_shape(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result shape does not match the reduction of the input over dims}}
  %0 = graph.sum %x dims [1] keepdim : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @addmm_input(%x: tensor<3xf32>, %a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{input does not broadcast to the result}}
  %0 = graph.addmm %x, %a, %b {alpha = 1.0 : f64, beta = 1.0 : f64} : tensor<3xf32>, tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @addmm_batch(%x: tensor<f32>, %a: tensor<3x4x8xf32>, %b: tensor<2x8x2xf32>) -> tensor<3x4x2xf32> {
  // expected-error @+1 {{batch dims differ}}
  %0 = graph.addmm %x, %a, %b {alpha = 1.0 : f64, beta = 1.0 : f64} : tensor<f32>, tensor<3x4x8xf32>, tensor<2x8x2xf32> -> tensor<3x4x2xf32>
  return %0 : tensor<3x4x2xf32>
}

// -----

func.func @bad_matmul(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{contracting dims differ: 8 vs 7}}
  %0 = graph.matmul %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @bad_reshape(%x: tensor<4x8xf32>) -> tensor<30xf32> {
  // expected-error @+1 {{input and result have different element counts}}
  %0 = graph.reshape %x : tensor<4x8xf32> -> tensor<30xf32>
  return %0 : tensor<30xf32>
}

// -----

func.func @bad_permute(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{dims must be a permutation of the input dims}}
  %0 = graph.permute %x dims [0, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @bad_slice(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{slice [6, 10) is out of bounds for size 8}}
  %0 = graph.slice %x dim 1 start 6 end 10 step 1 : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @bad_compare_result(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{must be ranked tensor of 1-bit signless integer values}}
  %0 = graph.lt %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bad_softmax_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{dim 3 is out of range for rank 2}}
  %0 = graph.softmax %x dim 3 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor}}
  %0 = graph.cos %x : tensor<*xf32> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gather_dim(%w: tensor<10x4xf32>, %i: tensor<3x4xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = graph.gather %w dim 2 index %i : tensor<10x4xf32>, tensor<3x4xi64> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @gather_rank(%w: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{index must have the input's rank}}
  %0 = graph.gather %w dim 0 index %i : tensor<10x4xf32>, tensor<3xi64> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @gather_wide(%w: tensor<10x4xf32>, %i: tensor<3x5xi64>) -> tensor<3x5xf32> {
  // expected-error @+1 {{index dim 1 is larger than the input's}}
  %0 = graph.gather %w dim 0 index %i : tensor<10x4xf32>, tensor<3x5xi64> -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @gather_result(%w: tensor<10x4xf32>, %i: tensor<3x4xi64>) -> tensor<3x4xf64> {
  // expected-error @+1 {{result must have the input's element type}}
  %0 = graph.gather %w dim 0 index %i : tensor<10x4xf32>, tensor<3x4xi64> -> tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

// -----

func.func @gather_float_index(%w: tensor<10x4xf32>, %i: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = graph.gather %w dim 0 index %i : tensor<10x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @conv_bad_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{input channels 3 are not divisible by groups 2}}
  %0 = graph.convolution %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 2 : tensor<1x3x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_bad_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{result shape must be [1, 4, 3, 3]}}
  %0 = graph.convolution %x, %w stride [2, 2] padding [0, 0] dilation [1, 1] groups 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @conv_bad_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{bias must be [C_out]}}
  %0 = graph.convolution %x, %w bias %b stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_output_padding_not_transposed(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x6xf32> {
  // expected-error @+1 {{output_padding needs a transposed convolution}}
  %0 = graph.convolution %x, %w stride [1] padding [0] dilation [1] groups 1 output_padding [1] : tensor<1x3x8xf32>, tensor<4x3x3xf32> -> tensor<1x4x6xf32>
  return %0 : tensor<1x4x6xf32>
}

// -----

func.func @conv_mixed_types(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf64>) -> tensor<1x4x6xf32> {
  // expected-error @+1 {{operands and result must share one element type}}
  %0 = graph.convolution %x, %w stride [1] padding [0] dilation [1] groups 1 : tensor<1x3x8xf32>, tensor<4x3x3xf64> -> tensor<1x4x6xf32>
  return %0 : tensor<1x4x6xf32>
}

// -----

func.func @pool_too_much_padding(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x5x5xf32> {
  // expected-error @+1 {{padding must be at most half of the kernel extent}}
  %0 = graph.max_pool %x kernel [2, 2] stride [2, 2] padding [2, 2] dilation [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x5x5xf32>
  return %0 : tensor<1x3x5x5xf32>
}

// -----

func.func @pool_bad_result(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error @+1 {{result shape must be [1, 3, 4, 4]}}
  %0 = graph.avg_pool %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @pool_no_channel_dim(%x: tensor<8x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{input needs a channel dim in front of the pooled dims}}
  %0 = graph.avg_pool %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<8x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @adaptive_bad_result(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x2x2xf32> {
  // expected-error @+1 {{result shape must be [1, 3, 3, 2]}}
  %0 = graph.adaptive_avg_pool %x output_size [3, 2] : tensor<1x3x8x8xf32> -> tensor<1x3x2x2xf32>
  return %0 : tensor<1x3x2x2xf32>
}

// -----

func.func @reflect_too_far(%x: tensor<3x4xf32>) -> tensor<3x12xf32> {
  // expected-error @+1 {{reflect pads must be smaller than the dim (4)}}
  %0 = graph.pad %x reflect low [0, 4] high [0, 4] : tensor<3x4xf32> -> tensor<3x12xf32>
  return %0 : tensor<3x12xf32>
}

// -----

func.func @pad_value_not_constant(%x: tensor<3x4xf32>) -> tensor<3x6xf32> {
  // expected-error @+1 {{only constant padding takes a value}}
  %0 = graph.pad %x replicate low [0, 1] high [0, 1] value 1.0 : tensor<3x4xf32> -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

func.func @sdpa_mask_and_causal(%q: tensor<2x8x16xf32>, %m: tensor<8x8xi1>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{takes a mask or is_causal, not both}}
  %0 = graph.scaled_dot_product_attention %q, %q, %q mask %m causal : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<8x8xi1> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @sdpa_bad_key(%q: tensor<2x8x16xf32>, %k: tensor<2x8x8xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{query and key must have the same embedding size}}
  %0 = graph.scaled_dot_product_attention %q, %k, %q : tensor<2x8x16xf32>, tensor<2x8x8xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @sdpa_bad_mask(%q: tensor<2x8x16xf32>, %m: tensor<3x8xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{mask does not broadcast to [..., L, S]}}
  %0 = graph.scaled_dot_product_attention %q, %q, %q mask %m : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<3x8xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @pad_negative_constant(%x: tensor<3x4xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{constant and circular pads must be non-negative}}
  %0 = graph.pad %x constant low [0, -1] high [0, 0] : tensor<3x4xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @pad_negative_empties(%x: tensor<3x4xf32>) -> tensor<3x0xf32> {
  // expected-error @+1 {{pads leave dim 1 empty}}
  %0 = graph.pad %x replicate low [0, -4] high [0, 0] : tensor<3x4xf32> -> tensor<3x0xf32>
  return %0 : tensor<3x0xf32>
}

// -----

// The registry's type rule: an activation keeps its float type.
func.func @elu_int(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of floating-point values}}
  %0 = graph.elu %x {alpha = 1.0 : f64} : tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @gelu_approximate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{approximate must be "none" or "tanh", not "fast"}}
  %0 = graph.gelu %x {approximate = "fast"} : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @isnan_result(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = graph.isnan %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @vecdot_shape(%a: tensor<3x5xf32>, %b: tensor<3x5xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{result shape must be the operands' without dim}}
  %0 = graph.vecdot %a, %b {dim = 1 : i64} : tensor<3x5xf32>, tensor<3x5xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @trace_rank(%a: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{takes a matrix to a 0-d result}}
  %0 = graph.trace %a : tensor<3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @max_pool_indices_shape(%x: tensor<1x2x5xf32>) -> (tensor<1x2x3xf32>, tensor<1x2x2xi64>) {
  // expected-error @+1 {{indices must have the values' shape}}
  %0:2 = graph.max_pool_with_indices %x {kernel = array<i64: 3>, stride = array<i64: 2>, padding = array<i64: 1>, dilation = array<i64: 1>, ceil_mode = false} : (tensor<1x2x5xf32>) -> (tensor<1x2x3xf32>, tensor<1x2x2xi64>)
  return %0#0, %0#1 : tensor<1x2x3xf32>, tensor<1x2x2xi64>
}

// -----

func.func @max_pool_indices_unbatched(%x: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>) {
  // expected-error @+1 {{input must be [N, C, *pooled]}}
  %0:2 = graph.max_pool_with_indices %x {kernel = array<i64: 3>, stride = array<i64: 2>, padding = array<i64: 1>, dilation = array<i64: 1>, ceil_mode = false} : (tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xi64>
}

// -----

func.func @cross_dim(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{dim must be a dim of size 3}}
  %0 = graph.cross %a, %b {dim = 1 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @upsample_cubic_3d(%x: tensor<1x1x2x2x2xf32>) -> tensor<1x1x3x3x3xf32> {
  // expected-error @+1 {{resamples 1 to 3 dims (cubic: 2)}}
  %0 = graph.upsample %x {mode = "cubic", output_size = array<i64: 3, 3, 3>, align_corners = false, scales = array<f64>} : tensor<1x1x2x2x2xf32> -> tensor<1x1x3x3x3xf32>
  return %0 : tensor<1x1x3x3x3xf32>
}

// -----

func.func @upsample_scales(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+1 {{scales must be empty or one per resampled dim}}
  %0 = graph.upsample %x {mode = "linear", output_size = array<i64: 3, 3>, align_corners = false, scales = array<f64: 1.5>} : tensor<1x1x2x2xf32> -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

func.func @bilinear_shapes(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>, %w: tensor<2x5x3xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{operands must be [B, in1], [B, in2] and [out, in1, in2]}}
  %0 = graph.bilinear %a, %b, %w {} : (tensor<4x3xf32>, tensor<4x5xf32>, tensor<2x5x3xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// The second input in another element type (found by the fuzzer: its lowering made a
// broadcast that changed the element type).
func.func @bilinear_mixed_types(%a: tensor<4x3xf16>, %b: tensor<4x5xui8>, %w: tensor<2x3x5xf16>) -> tensor<4x2xf16> {
  // expected-error @+1 {{operands must have the result's element type}}
  %0 = graph.bilinear %a, %b, %w {} : (tensor<4x3xf16>, tensor<4x5xui8>, tensor<2x3x5xf16>) -> tensor<4x2xf16>
  return %0 : tensor<4x2xf16>
}

// -----

func.func @grouped_mm_offsets(%x: tensor<10x8xf32>, %w: tensor<3x8x5xf32>, %offs: tensor<2xi32>) -> tensor<10x5xf32> {
  // expected-error @+1 {{needs one offset per matrix of weight}}
  %0 = graph.grouped_mm %x, %w, %offs : (tensor<10x8xf32>, tensor<3x8x5xf32>, tensor<2xi32>) -> tensor<10x5xf32>
  return %0 : tensor<10x5xf32>
}

// -----

func.func @grouped_mm_result(%x: tensor<10x8xf32>, %w: tensor<3x8x5xf32>, %offs: tensor<3xi64>) -> tensor<10x8xf32> {
  // expected-error @+1 {{result shape must be [input rows, weight columns]}}
  %0 = graph.grouped_mm %x, %w, %offs : (tensor<10x8xf32>, tensor<3x8x5xf32>, tensor<3xi64>) -> tensor<10x8xf32>
  return %0 : tensor<10x8xf32>
}

// -----

func.func @grouped_mm_types(%x: tensor<10x8xbf16>, %w: tensor<3x8x5xf32>, %offs: tensor<3xi32>) -> tensor<10x5xf32> {
  // expected-error @+1 {{input, weight and result must have one element type}}
  %0 = graph.grouped_mm %x, %w, %offs : (tensor<10x8xbf16>, tensor<3x8x5xf32>, tensor<3xi32>) -> tensor<10x5xf32>
  return %0 : tensor<10x5xf32>
}

// -----

func.func @im2col_window_too_large(%x: tensor<1x2x3x3xf32>) -> tensor<1x32x1xf32> {
  // expected-error @+1 {{has a window larger than the padded input}}
  %0 = graph.im2col %x {kernel = array<i64: 4, 4>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : tensor<1x2x3x3xf32> -> tensor<1x32x1xf32>
  return %0 : tensor<1x32x1xf32>
}

// -----

func.func @im2col_result(%x: tensor<1x2x4x4xf32>) -> tensor<1x8x4xf32> {
  // expected-error @+1 {{result shape must be [N, C*kh*kw, windows]}}
  %0 = graph.im2col %x {kernel = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : tensor<1x2x4x4xf32> -> tensor<1x8x4xf32>
  return %0 : tensor<1x8x4xf32>
}

// -----

func.func @col2im_stride(%x: tensor<1x8x4xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{needs positive kernel, dilation and stride and no negative padding}}
  %0 = graph.col2im %x {output_size = array<i64: 4, 4>, kernel = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 0, 2>} : tensor<1x8x4xf32> -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @col2im_columns(%x: tensor<1x8x5xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{input must be [N, C*kh*kw, windows]}}
  %0 = graph.col2im %x {output_size = array<i64: 4, 4>, kernel = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : tensor<1x8x5xf32> -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @lstm_gates(%x: tensor<5x3x8xf32>, %h: tensor<1x3x16xf32>, %wi: tensor<48x8xf32>, %wh: tensor<48x16xf32>, %b: tensor<48xf32>) -> tensor<5x3x16xf32> {
  // expected-error @+1 {{weights must be [4*H, I], [4*H, H] and biases [4*H]}}
  %o:3 = graph.lstm %x, %h, %h, %wi, %wh, %b, %b {batch_first = false} : (tensor<5x3x8xf32>, tensor<1x3x16xf32>, tensor<1x3x16xf32>, tensor<48x8xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<48xf32>) -> (tensor<5x3x16xf32>, tensor<1x3x16xf32>, tensor<1x3x16xf32>)
  return %o#0 : tensor<5x3x16xf32>
}

// -----

func.func @gru_states(%x: tensor<5x3x8xf32>, %h: tensor<1x5x16xf32>, %wi: tensor<48x8xf32>, %wh: tensor<48x16xf32>, %b: tensor<48xf32>) -> tensor<5x3x16xf32> {
  // expected-error @+1 {{hidden states must be [1, B, H]}}
  %o:2 = graph.gru %x, %h, %wi, %wh, %b, %b {batch_first = false} : (tensor<5x3x8xf32>, tensor<1x5x16xf32>, tensor<48x8xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<48xf32>) -> (tensor<5x3x16xf32>, tensor<1x5x16xf32>)
  return %o#0 : tensor<5x3x16xf32>
}

// -----

// A dynamic result dim needs a dynamic operand dim to take its size from.
func.func @dynamic_result_from_static(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xi1> {
  // expected-error @+1 {{result dim 0 is dynamic, so the operands' dims there must be dynamic or 1, one of them dynamic}}
  %0 = graph.ne %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<?x8xi1>
  return %0 : tensor<?x8xi1>
}

// -----

// A dynamic dim meets only dynamic dims or 1: a constant 4 would fix its size.
func.func @dynamic_meets_constant(%a: tensor<4xi1>, %b: tensor<?xi64>) -> tensor<?xi64> {
  // expected-error @+1 {{result dim 0 is dynamic, so the operands' dims there must be dynamic or 1, one of them dynamic}}
  %0 = graph.add %a, %b : tensor<4xi1>, tensor<?xi64> -> tensor<?xi64>
  return %0 : tensor<?xi64>
}
