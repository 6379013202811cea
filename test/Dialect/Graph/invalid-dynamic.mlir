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

func.func @slice_dynamic_dim(%x: tensor<?x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{slices dim 0, which is dynamic}}
  %0 = graph.slice %x dim 0 start 0 end 2 step 1 : tensor<?x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @cat_dynamic_dim(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{concatenates along dim 0, which is dynamic}}
  %0 = graph.cat %x, %x dim 0 : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
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
