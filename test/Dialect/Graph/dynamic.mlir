// RUN: dyn-opt %s -split-input-file | dyn-opt | FileCheck %s
// Dynamic (`?`) dims beyond the elementwise ops: sizes, GEMMs, shape ops,
// reductions and norms (docs/dynamic_shapes.md).

// CHECK-LABEL: func @sizes
// CHECK: %[[B:.*]] = graph.dim %{{.*}}, 0 : tensor<?x?x64xf32> -> index
// CHECK: graph.reshape %{{.*}} sizes(%{{.*}}) : tensor<?x?x64xf32> -> tensor<?x64xf32>
// CHECK: graph.reshape %{{.*}} : tensor<?x64xf32> -> tensor<?x4x16xf32>
// CHECK: graph.expand %{{.*}} sizes(%[[B]], %{{.*}}) : tensor<1x1xf32> -> tensor<?x?xf32>
func.func @sizes(%x: tensor<?x?x64xf32>, %o: tensor<1x1xf32>) -> (tensor<?x4x16xf32>, tensor<?x?xf32>) {
  %b = graph.dim %x, 0 : tensor<?x?x64xf32> -> index
  %s = graph.dim %x, 1 : tensor<?x?x64xf32> -> index
  %n = arith.muli %b, %s : index
  %0 = graph.reshape %x sizes(%n) : tensor<?x?x64xf32> -> tensor<?x64xf32>
  %1 = graph.reshape %0 : tensor<?x64xf32> -> tensor<?x4x16xf32>
  %2 = graph.expand %o sizes(%b, %s) : tensor<1x1xf32> -> tensor<?x?xf32>
  return %1, %2 : tensor<?x4x16xf32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func @gemms
// CHECK: graph.matmul %{{.*}}, %{{.*}} : tensor<?x?x8xf32>, tensor<8x?xf32> -> tensor<?x?x?xf32>
// CHECK: graph.matmul %{{.*}}, %{{.*}} : tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK: graph.addmm
func.func @gemms(%a: tensor<?x?x8xf32>, %w: tensor<8x?xf32>, %p: tensor<?x4x?x?xf32>, %v: tensor<?x4x?x16xf32>,
                 %x: tensor<?x8xf32>, %m: tensor<8x16xf32>, %bias: tensor<16xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x4x?x16xf32>, tensor<?x16xf32>) {
  %0 = graph.matmul %a, %w : tensor<?x?x8xf32>, tensor<8x?xf32> -> tensor<?x?x?xf32>
  %1 = graph.matmul %p, %v : tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %2 = graph.addmm %bias, %x, %m {alpha = 1.0 : f64, beta = 1.0 : f64} : tensor<16xf32>, tensor<?x8xf32>, tensor<8x16xf32> -> tensor<?x16xf32>
  return %0, %1, %2 : tensor<?x?x?xf32>, tensor<?x4x?x16xf32>, tensor<?x16xf32>
}

// -----

// CHECK-LABEL: func @shapes_and_reductions
// CHECK: graph.permute
// CHECK: graph.slice
// CHECK: graph.cat
// CHECK: graph.mean
// CHECK: graph.softmax
// CHECK: graph.layer_norm
// CHECK: graph.gelu
func.func @shapes_and_reductions(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>) -> (tensor<?x?x1xf32>, tensor<64x?x?xf32>, tensor<f32>) {
  %0 = graph.permute %x dims [2, 0, 1] : tensor<?x?x64xf32> -> tensor<64x?x?xf32>
  %1 = graph.slice %x dim 2 start 0 end 32 step 1 : tensor<?x?x64xf32> -> tensor<?x?x32xf32>
  %2 = graph.cat %1, %1 dim 2 : tensor<?x?x32xf32>, tensor<?x?x32xf32> -> tensor<?x?x64xf32>
  %3 = graph.mean %2 dims [2] keepdim : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
  %4 = graph.softmax %0 dim 2 : tensor<64x?x?xf32> -> tensor<64x?x?xf32>
  %5 = graph.layer_norm %x weight %w bias %w normalized_rank 1 eps 1.0e-05 : tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  %6 = graph.gelu %5 {approximate = "tanh"} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %7 = graph.sum %6 dims [0, 1, 2] : tensor<?x?x64xf32> -> tensor<f32>
  return %3, %4, %7 : tensor<?x?x1xf32>, tensor<64x?x?xf32>, tensor<f32>
}

// -----

// Runtime lengths and offsets: an iota of a size, a position-ids buffer sliced
// to the sequence length, a key/value cache sliced and grown along a `?` dim.
// CHECK-LABEL: func @iota_and_dynamic_slice
// CHECK: graph.iota sizes(%{{.*}}) : tensor<?xi64>
// CHECK: graph.iota : tensor<16xf32>
// CHECK: graph.dynamic_slice %{{.*}}, %{{.*}}, %{{.*}} dim 1 : tensor<1x512xi64>, index, index -> tensor<1x?xi64>
// CHECK: graph.dynamic_slice %{{.*}}, %{{.*}}, %{{.*}} dim 2 : tensor<1x4x?x16xf32>, index, index -> tensor<1x4x?x16xf32>
// CHECK: graph.cat %{{.*}}, %{{.*}} dim 2 : tensor<1x4x?x16xf32>, tensor<1x4x1x16xf32> -> tensor<1x4x?x16xf32>
func.func @iota_and_dynamic_slice(%x: tensor<?x?x64xf32>, %pos: tensor<1x512xi64>, %cache: tensor<1x4x?x16xf32>,
                                  %new: tensor<1x4x1x16xf32>)
    -> (tensor<?xi64>, tensor<16xf32>, tensor<1x?xi64>, tensor<1x4x?x16xf32>) {
  %s = graph.dim %x, 1 : tensor<?x?x64xf32> -> index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = graph.iota sizes(%s) : tensor<?xi64>
  %1 = graph.iota : tensor<16xf32>
  %2 = graph.dynamic_slice %pos, %c0, %s dim 1 : tensor<1x512xi64>, index, index -> tensor<1x?xi64>
  %n = graph.dim %cache, 2 : tensor<1x4x?x16xf32> -> index
  %3 = graph.dynamic_slice %cache, %c1, %n dim 2 : tensor<1x4x?x16xf32>, index, index -> tensor<1x4x?x16xf32>
  %4 = graph.cat %3, %new dim 2 : tensor<1x4x?x16xf32>, tensor<1x4x1x16xf32> -> tensor<1x4x?x16xf32>
  return %0, %1, %2, %4 : tensor<?xi64>, tensor<16xf32>, tensor<1x?xi64>, tensor<1x4x?x16xf32>
}

// -----

// Embedding lookups with `?` token ids and attention with `?` batch and
// sequence dims.
// CHECK-LABEL: func @gather_and_attention
// CHECK: graph.gather %{{.*}} dim 0 index %{{.*}} : tensor<500x64xf32>, tensor<?x64xi64> -> tensor<?x64xf32>
// CHECK: graph.gather %{{.*}} dim 1 index %{{.*}} : tensor<?x?x8xf32>, tensor<?x3x8xi64> -> tensor<?x3x8xf32>
// CHECK: graph.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x1x?x?xi1> -> tensor<?x4x?x16xf32>
// CHECK: graph.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} causal scale
func.func @gather_and_attention(%table: tensor<500x64xf32>, %ids: tensor<?x64xi64>, %x: tensor<?x?x8xf32>,
                                %i: tensor<?x3x8xi64>, %q: tensor<?x4x?x16xf32>, %mask: tensor<?x1x?x?xi1>)
    -> (tensor<?x64xf32>, tensor<?x3x8xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) {
  %0 = graph.gather %table dim 0 index %ids : tensor<500x64xf32>, tensor<?x64xi64> -> tensor<?x64xf32>
  %1 = graph.gather %x dim 1 index %i : tensor<?x?x8xf32>, tensor<?x3x8xi64> -> tensor<?x3x8xf32>
  %2 = graph.scaled_dot_product_attention %q, %q, %q mask %mask : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x1x?x?xi1> -> tensor<?x4x?x16xf32>
  %3 = graph.scaled_dot_product_attention %q, %q, %q causal scale 1.250000e-01 : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  return %0, %1, %2, %3 : tensor<?x64xf32>, tensor<?x3x8xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>
}

// -----

// The ops of vision models with a `?` batch dim: convolutions (grouped,
// strided, transposed), batch_norm with running statistics, pooling.
// CHECK-LABEL: func @vision_batch
// CHECK: graph.convolution %{{.*}}, %{{.*}} bias %{{.*}} stride [2, 2] padding [1, 1] dilation [1, 1] groups 2 : tensor<?x4x16x16xf32>, tensor<8x2x3x3xf32>, tensor<8xf32> -> tensor<?x8x8x8xf32>
// CHECK: graph.convolution %{{.*}}, %{{.*}} stride [2, 2] padding [0, 0] dilation [1, 1] groups 1 transposed : tensor<?x8x8x8xf32>, tensor<8x4x2x2xf32> -> tensor<?x4x16x16xf32>
// CHECK: graph.batch_norm %{{.*}} weight %{{.*}} bias %{{.*}} running_mean %{{.*}} running_var %{{.*}} eps {{.*}} -> tensor<?x8x8x8xf32>
// CHECK: graph.max_pool %{{.*}} kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] : tensor<?x8x8x8xf32> -> tensor<?x8x4x4xf32>
// CHECK: graph.avg_pool %{{.*}} kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<?x8x8x8xf32> -> tensor<?x8x4x4xf32>
// CHECK: graph.adaptive_avg_pool %{{.*}} output_size [1, 1] : tensor<?x8x4x4xf32> -> tensor<?x8x1x1xf32>
// CHECK: graph.adaptive_max_pool %{{.*}} output_size [3] : tensor<?x8x8x8xf32> -> tensor<?x8x8x3xf32>
func.func @vision_batch(%x: tensor<?x4x16x16xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>, %wt: tensor<8x4x2x2xf32>)
    -> (tensor<?x4x16x16xf32>, tensor<?x8x4x4xf32>, tensor<?x8x1x1xf32>, tensor<?x8x8x3xf32>) {
  %0 = graph.convolution %x, %w bias %b stride [2, 2] padding [1, 1] dilation [1, 1] groups 2 : tensor<?x4x16x16xf32>, tensor<8x2x3x3xf32>, tensor<8xf32> -> tensor<?x8x8x8xf32>
  %1 = graph.convolution %0, %wt stride [2, 2] padding [0, 0] dilation [1, 1] groups 1 transposed : tensor<?x8x8x8xf32>, tensor<8x4x2x2xf32> -> tensor<?x4x16x16xf32>
  %2 = graph.batch_norm %0 weight %b bias %b running_mean %b running_var %b eps 1.0e-05 : tensor<?x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<?x8x8x8xf32>
  %3 = graph.max_pool %2 kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] : tensor<?x8x8x8xf32> -> tensor<?x8x4x4xf32>
  %4 = graph.avg_pool %2 kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<?x8x8x8xf32> -> tensor<?x8x4x4xf32>
  %5 = graph.add %3, %4 : tensor<?x8x4x4xf32>, tensor<?x8x4x4xf32> -> tensor<?x8x4x4xf32>
  %6 = graph.adaptive_avg_pool %5 output_size [1, 1] : tensor<?x8x4x4xf32> -> tensor<?x8x1x1xf32>
  %7 = graph.adaptive_max_pool %2 output_size [3] : tensor<?x8x8x8xf32> -> tensor<?x8x8x3xf32>
  return %1, %5, %6, %7 : tensor<?x4x16x16xf32>, tensor<?x8x4x4xf32>, tensor<?x8x1x1xf32>, tensor<?x8x8x3xf32>
}

// -----

// A `?` dim sliced to static bounds (a sequence's first token): a static result.
// CHECK-LABEL: func @first_token
// CHECK: graph.slice %{{.*}} dim 1 start 0 end 1 step 1 : tensor<2x?xi64> -> tensor<2x1xi64>
func.func @first_token(%ids: tensor<2x?xi64>) -> tensor<2x1xi64> {
  %0 = graph.slice %ids dim 1 start 0 end 1 step 1 : tensor<2x?xi64> -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}

