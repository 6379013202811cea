// RUN: dyn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(dyn-graph-autodiff))' -verify-diagnostics

// What dyn-graph-autodiff cannot differentiate is an error at the op.

func.func @no_rule(%x: tensor<4x5xf32> {dyn.requires_grad}) -> tensor<4x5xf32> {
  // expected-error @+1 {{dyn-graph-autodiff: graph.cumulative has no derivative rule}}
  %0 = graph.cumulative sum %x dim 1 : tensor<4x5xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @clamp_bound(%x: tensor<4xf32>, %lo: tensor<4xf32> {dyn.requires_grad}, %hi: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{no derivative of graph.clamp with respect to operand 1 yet}}
  %0 = graph.clamp %x, %lo, %hi : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @integer_argument(%x: tensor<4xi64> {dyn.requires_grad}) -> tensor<4xi64> {
  // expected-error @-1 {{argument 0 requires grad but is not a float tensor}}
  return %x : tensor<4xi64>
}

// -----

// A strided slice of a `?` dim: its cotangent would be interleaved with zeros to a runtime size.
func.func @strided_slice_of_dynamic_dim(%x: tensor<?x8xf32> {dyn.requires_grad}) -> tensor<2x8xf32> {
  // expected-error @+1 {{no derivative of graph.slice with dynamic (`?`) dims along a strided slice of a dynamic dim yet}}
  %0 = graph.slice %x dim 0 start 0 end 4 step 2 : tensor<?x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

