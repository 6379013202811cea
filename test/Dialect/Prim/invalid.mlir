// RUN: dyn-opt %s -split-input-file -verify-diagnostics

// A `?` dim of an op without a sized operand needs its runtime size.
func.func @dynamic_dim(%s: tensor<i64>) -> tensor<4x?xi32> {
  // expected-error @+1 {{needs one size per dynamic result dim}}
  %0 = prim.philox %s offset 0 word 0 : tensor<i64> -> tensor<4x?xi32>
  return %0 : tensor<4x?xi32>
}

// -----

// A dynamic dim is sliced whole, or to a static result.
func.func @slice_dynamic_dim(%a: tensor<4x?xf32>) -> tensor<4x?xf32> {
  // expected-error @+1 {{takes dynamic dim 1 whole}}
  %0 = prim.slice %a start [0, 1] stride [1, 1] : tensor<4x?xf32> -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

// Each dynamic result dim of a reshape has its size.
func.func @reshape_sizes(%a: tensor<?x8xf32>) -> tensor<?x2x4xf32> {
  // expected-error @+1 {{needs one size per dynamic result dim}}
  %0 = prim.reshape %a : tensor<?x8xf32> -> tensor<?x2x4xf32>
  return %0 : tensor<?x2x4xf32>
}

// -----

// Each dynamic result dim of a broadcast has its size.
func.func @broadcast_without_size(%a: tensor<8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{needs one size per dynamic result dim (1), got 0}}
  %0 = prim.broadcast_in_dim %a dims [1] : tensor<8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// A dynamic dim is never broadcast: it stays dynamic.
func.func @dynamic_to_static(%a: tensor<?xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{operand dim 0 is dynamic but result dim 1 is not}}
  %0 = prim.broadcast_in_dim %a dims [1] : tensor<?xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @dim_out_of_range(%a: tensor<?xf32>) -> index {
  // expected-error @+1 {{dim 1 is out of range for rank 1}}
  %0 = prim.dim %a, 1 : tensor<?xf32>
  return %0 : index
}

// -----

func.func @unsupported_element_type(%a: tensor<4xi3>) -> tensor<4xi3> {
  // expected-error @+1 {{must be ranked tensor of supported element type values}}
  %0 = prim.neg %a : tensor<4xi3>
  return %0 : tensor<4xi3>
}

// -----

func.func @and_of_floats(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{must be ranked tensor of integer values}}
  %0 = prim.and %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @transpose_changes_type(%a: tensor<4x8xf32>) -> tensor<8x4xi32> {
  // expected-error @+1 {{failed to verify that all of {input, result} have same element type}}
  %0 = prim.transpose %a permutation [1, 0] : tensor<4x8xf32> -> tensor<8x4xi32>
  return %0 : tensor<8x4xi32>
}

// -----

func.func @implicit_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %0 = "prim.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @exp_of_int(%a: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{must be ranked tensor of floating-point values}}
  %0 = prim.exp %a : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @bad_broadcast(%a: tensor<3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{operand dim 0 of size 3 cannot broadcast to size 8}}
  %0 = prim.broadcast_in_dim %a dims [1] : tensor<3xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @bad_reduce(%a: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{result must be the input with the reduced dims removed}}
  %0 = prim.reduce_sum %a dims [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @bad_dot(%a: tensor<4x8xf32>, %b: tensor<9x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{paired dims differ in size: 8 vs 9}}
  %0 = prim.dot_general %a, %b batch [], [] contract [1], [0] : tensor<4x8xf32>, tensor<9x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @bad_slice(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{slice reads past the end of dim 1}}
  %0 = prim.slice %a start [0, 1] stride [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @gather_shape(%w: tensor<10x4xf32>, %i: tensor<3x4xi64>) -> tensor<3x2xf32> {
  // expected-error @+1 {{result must have the index's shape}}
  %0 = prim.gather %w dim 0 index %i : tensor<10x4xf32>, tensor<3x4xi64> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @pad_fractional_integer(%x: tensor<3xi32>) -> tensor<5xi32> {
  // expected-error @+1 {{an integer tensor needs an integer padding value}}
  %0 = prim.pad %x low [1] high [1] value 0.5 : tensor<3xi32> -> tensor<5xi32>
  return %0 : tensor<5xi32>
}

// -----

func.func @pad_bad_shape(%x: tensor<3xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{result shape must be [5]}}
  %0 = prim.pad %x low [1] high [1] value 0.0 : tensor<3xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @conv_transposed_bad_weight(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x3x10xf32> {
  // expected-error @+1 {{a transposed convolution's weight must be [C_in, C_out/groups, *kernel]}}
  %0 = prim.convolution %x, %w stride [1] padding [0] dilation [1] groups 1 transposed : tensor<1x3x8xf32>, tensor<4x3x3xf32> -> tensor<1x3x10xf32>
  return %0 : tensor<1x3x10xf32>
}

// -----

// channels_last: input [N, H, W, C] and result [N, H', W', C_out]; the weight keeps torch's order.
func.func @conv_channels_last_bad_result(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{result shape must be [1, 6, 6, 4]}}
  %0 = prim.convolution %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 channels_last : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_channels_last_bad_bias(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x6x4xf32> {
  // expected-error @+1 {{bias must be [C_out]}}
  %0 = prim.convolution %x, %w bias %b stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 channels_last : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<6xf32> -> tensor<1x6x6x4xf32>
  return %0 : tensor<1x6x6x4xf32>
}

// -----

func.func @attention_rank2(%q: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{query, key and value must have one rank, 3 or more ([..., L, E])}}
  %0 = prim.attention %q, %q, %q scale 1.0 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// A library call computes something: no results is refused.
func.func @library_call_no_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{computes at least one result}}
  prim.library_call "sort"(%a) params [] : (tensor<4xf32>) -> ()
  return
}

// -----

// Only element types the C ABI (DynDType) has codes for.
func.func @library_call_index(%a: tensor<4xindex>) -> tensor<4xf32> {
  // expected-error @+1 {{has a tensor of an element type the library-call ABI has no code for: 'index'}}
  %r = prim.library_call "sort"(%a) params [] : (tensor<4xindex>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @library_call_no_name(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{needs a callee name}}
  %r = prim.library_call ""(%a) params [] : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Each dynamic result dim of an iota has its size.
func.func @iota_sizes() -> tensor<?x8xi64> {
  // expected-error @+1 {{needs one size per dynamic result dim}}
  %0 = prim.iota dim 1 : tensor<?x8xi64>
  return %0 : tensor<?x8xi64>
}

// -----

// A dynamic slice is at most as long as its input.
func.func @dynamic_slice_too_long(%a: tensor<4x8xf32>, %s: index, %n: index) -> tensor<4x9xf32> {
  // expected-error @+1 {{result dim `dim` is longer than the input's}}
  %0 = prim.dynamic_slice %a dim 1 start %s size %n : tensor<4x8xf32> -> tensor<4x9xf32>
  return %0 : tensor<4x9xf32>
}

// -----

// A concatenation's dim is dynamic where an input's is.
func.func @concatenate_dynamic(%a: tensor<?x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{result dim must be dynamic exactly where an input's is}}
  %0 = prim.concatenate %a, %a dim 0 : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// A dynamic dim is never padded (its padded size would be unknown to the fusion).
func.func @pad_dynamic(%a: tensor<?x8xf32>) -> tensor<?x10xf32> {
  // expected-error @+1 {{dim 0 is dynamic: it cannot be padded}}
  %0 = prim.pad %a low [1, 1] high [0, 1] value 0.0 : tensor<?x8xf32> -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}
