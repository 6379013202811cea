// RUN: dyn-opt %s -split-input-file -verify-diagnostics

func.func @rank(%x: tensor<4x6xf32>, %i: tensor<3xi64>, %s: tensor<3xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{input, index and src must have one rank}}
  %0 = graph.scatter none %x dim 0 index %i src %s : tensor<4x6xf32>, tensor<3xi64>, tensor<3xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @index_larger_than_src(%x: tensor<4x6xf32>, %i: tensor<3x6xi64>, %s: tensor<2x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{index dim 0 is larger than src's}}
  %0 = graph.scatter sum %x dim 0 index %i src %s : tensor<4x6xf32>, tensor<3x6xi64>, tensor<2x6xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @index_larger_than_input(%x: tensor<4x6xf32>, %i: tensor<3x7xi64>, %s: tensor<3x7xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{index dim 1 is larger than input's}}
  %0 = graph.scatter sum %x dim 0 index %i src %s : tensor<4x6xf32>, tensor<3x7xi64>, tensor<3x7xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @dim(%x: tensor<4x6xf32>, %i: tensor<3x6xi64>, %s: tensor<3x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = graph.scatter sum %x dim 2 index %i src %s : tensor<4x6xf32>, tensor<3x6xi64>, tensor<3x6xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @bool_sum(%x: tensor<4xi1>, %i: tensor<3xi64>, %s: tensor<3xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{a combining scatter needs a numeric input}}
  %0 = graph.scatter sum %x dim 0 index %i src %s : tensor<4xi1>, tensor<3xi64>, tensor<3xi1> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @include_self_none(%x: tensor<4xf32>, %i: tensor<3xi64>, %s: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{include_self is for combining scatters only}}
  %0 = graph.scatter none %x dim 0 index %i src %s include_self : tensor<4xf32>, tensor<3xi64>, tensor<3xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @src_type(%x: tensor<4xf32>, %i: tensor<3xi64>, %s: tensor<3xf64>) -> tensor<4xf32> {
  // expected-error @+1 {{all of {input, src} have same element type}}
  %0 = graph.scatter none %x dim 0 index %i src %s : tensor<4xf32>, tensor<3xi64>, tensor<3xf64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @view_past_input(%x: tensor<3x3xf32>, %s: tensor<3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{the view reaches past the input's elements}}
  %0 = graph.as_strided_scatter %x, %s {size = array<i64: 3>, stride = array<i64: 4>, storage_offset = 1 : i64} : tensor<3x3xf32>, tensor<3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @src_not_view(%x: tensor<3x3xf32>, %s: tensor<2xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{src must have the view's size}}
  %0 = graph.as_strided_scatter %x, %s {size = array<i64: 3>, stride = array<i64: 4>, storage_offset = 0 : i64} : tensor<3x3xf32>, tensor<2xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @index_add_shape(%x: tensor<5x3xf32>, %i: tensor<2xi64>, %s: tensor<2x2xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{source must have the input's shape with index's length along dim}}
  %0 = graph.index_add %x, %i, %s {dim = 0 : i64, alpha = 1.0 : f64} : tensor<5x3xf32>, tensor<2xi64>, tensor<2x2xf32> -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @masked_scatter_short(%x: tensor<2x3xf32>, %m: tensor<2x3xi1>, %s: tensor<5xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{source must be 1-D with at least as many elements as the input}}
  %0 = graph.masked_scatter %x, %m, %s : tensor<2x3xf32>, tensor<2x3xi1>, tensor<5xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @histc_bins(%x: tensor<6xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result must be [bins] of the input's type}}
  %0 = graph.histc %x {bins = 5 : i64, min = 0.0 : f64, max = 1.0 : f64} : tensor<6xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @embedding_bag_mode(%w: tensor<10x4xf32>, %i: tensor<6xi64>, %o: tensor<3xi64>, %p: tensor<6xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{per_sample_weights needs mode sum}}
  %0 = graph.embedding_bag %w, %i, %o, %p {mode = "mean", padding_idx = -1 : i64, include_last_offset = false} : (tensor<10x4xf32>, tensor<6xi64>, tensor<3xi64>, tensor<6xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @masked_index_dims(%x: tensor<5x6xf32>, %m: tensor<3xi1>, %i: tensor<2x3xi64>) -> tensor<5x3xf32> {
  // expected-error @+1 {{the indexed dims must lie inside the input}}
  %0 = graph.masked_index %x, %m, %i {dim = 1 : i64, fill = 0.0 : f64} : tensor<5x6xf32>, tensor<3xi1>, tensor<2x3xi64> -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @masked_index_put_values(%x: tensor<5x6xf32>, %m: tensor<3x1xi1>, %i: tensor<1x3xi64>, %v: tensor<3x5xf32>) -> tensor<5x6xf32> {
  // expected-error @+1 {{values and mask must broadcast to the indexed shape}}
  %0 = graph.masked_index_put %x, %m, %i, %v {dim = 0 : i64} : tensor<5x6xf32>, tensor<3x1xi1>, tensor<1x3xi64>, tensor<3x5xf32> -> tensor<5x6xf32>
  return %0 : tensor<5x6xf32>
}
