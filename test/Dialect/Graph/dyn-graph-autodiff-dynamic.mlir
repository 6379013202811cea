// RUN: dyn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(dyn-graph-autodiff))' | FileCheck %s

// Dynamic (`?`) dims: every reshape, expand and splat a rule builds to a
// shape with `?` dims takes their runtime sizes as `sizes` operands, read
// with graph.dim from a function argument the dim is traced back to (here
// through the layer norm, to %arg0) and placed at the function's start.

// CHECK-LABEL: func.func @ln
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x64xf32> {dyn.requires_grad}
// CHECK-DAG: %[[S:.*]] = graph.dim %[[X]], 1 : tensor<?x?x64xf32> -> index
// CHECK-DAG: %[[B:.*]] = graph.dim %[[X]], 0 : tensor<?x?x64xf32> -> index
// CHECK: graph.layer_norm
// CHECK: graph.sum %[[X]] dims [2] keepdim : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
// the mean over the static normalized dim: a constant count
// CHECK: graph.constant dense<1.562500e-02>
// CHECK: graph.expand %{{.*}} sizes(%[[B]], %[[S]]) : tensor<?x?x1xf32> -> tensor<?x?x64xf32>
// the weight broadcast to the input's runtime shape
// CHECK: %[[W:.*]] = graph.reshape %arg1 : tensor<64xf32> -> tensor<1x1x64xf32>
// CHECK: graph.expand %[[W]] sizes(%[[B]], %[[S]]) : tensor<1x1x64xf32> -> tensor<?x?x64xf32>
// CHECK: return
func.func @ln(%x: tensor<?x?x64xf32> {dyn.requires_grad}, %w: tensor<64xf32> {dyn.requires_grad},
              %b: tensor<64xf32> {dyn.requires_grad}) -> tensor<?x?x64xf32> {
  %0 = graph.layer_norm %x weight %w bias %b normalized_rank 1 eps 1.0e-05
      : tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// A linear layer, GELU and a mean over every `?` dim: the mean's count is a
// sum of ones over the runtime sizes (times the static dims), and the
// cotangent is reshaped and expanded back with the sizes the forward's own
// reshapes took (%b, %s, %b * %s), not read again.

// CHECK-LABEL: func.func @mlp
// CHECK: %[[B:.*]] = graph.dim %arg0, 0
// CHECK: %[[S:.*]] = graph.dim %arg0, 1
// CHECK: %[[BS:.*]] = arith.muli %[[B]], %[[S]] : index
// CHECK: graph.mean
// CHECK: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[ONES:.*]] = graph.expand %[[ONE]] sizes(%[[B]], %[[S]]) : tensor<f32> -> tensor<?x?xf32>
// CHECK: %[[N:.*]] = graph.sum %[[ONES]] dims [0, 1] : tensor<?x?xf32> -> tensor<f32>
// CHECK: %[[C:.*]] = graph.constant dense<4.000000e+00> : tensor<f32>
// CHECK: %[[COUNT:.*]] = graph.mul %[[N]], %[[C]]
// CHECK: %[[G:.*]] = graph.div %arg4, %[[COUNT]]
// CHECK: %[[G1:.*]] = graph.reshape %[[G]] : tensor<f32> -> tensor<1x1x1xf32>
// CHECK: %[[G2:.*]] = graph.expand %[[G1]] sizes(%[[B]], %[[S]]) : tensor<1x1x1xf32> -> tensor<?x?x4xf32>
// CHECK: graph.reshape %[[G2]] sizes(%[[BS]]) : tensor<?x?x4xf32> -> tensor<?x4xf32>
// CHECK: graph.matmul %{{.*}} : tensor<32x?xf32>, tensor<?x4xf32> -> tensor<32x4xf32>
// CHECK: return
func.func @mlp(%x: tensor<?x?x16xf32>, %w1: tensor<32x16xf32> {dyn.requires_grad},
               %b1: tensor<32xf32> {dyn.requires_grad}, %w2: tensor<4x32xf32> {dyn.requires_grad})
    -> tensor<f32> {
  %b = graph.dim %x, 0 : tensor<?x?x16xf32> -> index
  %s = graph.dim %x, 1 : tensor<?x?x16xf32> -> index
  %bs = arith.muli %b, %s : index
  %x2 = graph.reshape %x sizes(%bs) : tensor<?x?x16xf32> -> tensor<?x16xf32>
  %w1t = graph.permute %w1 dims [1, 0] : tensor<32x16xf32> -> tensor<16x32xf32>
  %h = graph.addmm %b1, %x2, %w1t {alpha = 1.0 : f64, beta = 1.0 : f64}
      : tensor<32xf32>, tensor<?x16xf32>, tensor<16x32xf32> -> tensor<?x32xf32>
  %g = graph.gelu %h {approximate = "none"} : tensor<?x32xf32> -> tensor<?x32xf32>
  %w2t = graph.permute %w2 dims [1, 0] : tensor<4x32xf32> -> tensor<32x4xf32>
  %y = graph.matmul %g, %w2t : tensor<?x32xf32>, tensor<32x4xf32> -> tensor<?x4xf32>
  %y3 = graph.reshape %y sizes(%b, %s) : tensor<?x4xf32> -> tensor<?x?x4xf32>
  %l = graph.mean %y3 dims [0, 1, 2] : tensor<?x?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A reduction broadcast back: x - mean(x, 1) scaled by its column maxima. The
// mean's count over the `?` dim 1 is computed at run time; amax's cotangent is
// shared among the ties, both expanded back to x's runtime sizes.

// CHECK-LABEL: func.func @center
// CHECK-DAG: %[[N:.*]] = graph.dim %arg0, 1 : tensor<?x?xf32> -> index
// CHECK-DAG: %[[M:.*]] = graph.dim %arg0, 0 : tensor<?x?xf32> -> index
// CHECK: graph.reshape %{{.*}} sizes(%[[N]]) : tensor<?xf32> -> tensor<1x?xf32>
// CHECK: graph.expand %{{.*}} sizes(%[[M]], %[[N]]) : tensor<1x?xf32> -> tensor<?x?xf32>
// CHECK: graph.eq
// CHECK: graph.sum %{{.*}} dims [0] keepdim : tensor<?x?xf32> -> tensor<1x?xf32>
// CHECK: graph.div %{{.*}} : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: graph.where
// CHECK: graph.reshape %{{.*}} sizes(%[[M]]) : tensor<?xf32> -> tensor<?x1xf32>
// CHECK: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[ONES:.*]] = graph.expand %[[ONE]] sizes(%[[N]]) : tensor<f32> -> tensor<?xf32>
// CHECK: %[[COUNT:.*]] = graph.sum %[[ONES]] dims [0] : tensor<?xf32> -> tensor<f32>
// CHECK: graph.div %{{.*}}, %[[COUNT]] : tensor<?x1xf32>, tensor<f32> -> tensor<?x1xf32>
// CHECK: graph.expand %{{.*}} sizes(%[[M]], %[[N]]) : tensor<?x1xf32> -> tensor<?x?xf32>
// CHECK: return
func.func @center(%x: tensor<?x?xf32> {dyn.requires_grad}) -> tensor<?x?xf32> {
  %m = graph.mean %x dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %c = graph.sub %x, %m : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %s = graph.amax %c dims [0] : tensor<?x?xf32> -> tensor<?xf32>
  %r = graph.mul %c, %s : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// Attention written out: two batched GEMMs and a softmax over rows of runtime
// length. softmax_backward keeps the `?` dims; the GEMMs' gradients need no sizes.

// CHECK-LABEL: func.func @attn
// CHECK: %[[P:.*]] = graph.softmax
// CHECK: graph.softmax_backward %{{.*}}, %[[P]] {dim = 2 : i64} : tensor<2x?x?xf32>, tensor<2x?x?xf32> -> tensor<2x?x?xf32>
// CHECK: return
func.func @attn(%q: tensor<2x?x16xf32> {dyn.requires_grad}, %k: tensor<2x?x16xf32> {dyn.requires_grad},
                %v: tensor<2x?x16xf32> {dyn.requires_grad}) -> tensor<f32> {
  %kt = graph.permute %k dims [0, 2, 1] : tensor<2x?x16xf32> -> tensor<2x16x?xf32>
  %s = graph.matmul %q, %kt : tensor<2x?x16xf32>, tensor<2x16x?xf32> -> tensor<2x?x?xf32>
  %p = graph.softmax %s dim 2 : tensor<2x?x?xf32> -> tensor<2x?x?xf32>
  %o = graph.matmul %p, %v : tensor<2x?x?xf32>, tensor<2x?x16xf32> -> tensor<2x?x16xf32>
  %l = graph.sum %o dims [0, 1, 2] : tensor<2x?x16xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Attention with an additive float mask that needs a gradient (T5's position
// bias) over a `?` length: the math formula on the [B, H, L, E] operands as
// they are, the scores' gradient being the mask's (same shape: no sum).

// CHECK-LABEL: func.func @attn_mask_grad
// CHECK: %[[P:.*]] = graph.safe_softmax %{{.*}} {dim = 3 : i64} : tensor<2x4x?x?xf32> -> tensor<2x4x?x?xf32>
// CHECK: %[[DS:.*]] = graph.softmax_backward %{{.*}}, %[[P]] {dim = 3 : i64}
// CHECK: return {{.*}}%[[DS]]
func.func @attn_mask_grad(%q: tensor<2x4x?x16xf32> {dyn.requires_grad}, %k: tensor<2x4x?x16xf32> {dyn.requires_grad},
                          %v: tensor<2x4x?x16xf32> {dyn.requires_grad}, %m: tensor<2x4x?x?xf32> {dyn.requires_grad})
    -> tensor<f32> {
  %o = graph.scaled_dot_product_attention %q, %k, %v mask %m scale 1.0 : tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x?xf32> -> tensor<2x4x?x16xf32>
  %l = graph.sum %o dims [0, 1, 2, 3] : tensor<2x4x?x16xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A slice of a static dim beside a `?` one: its gradient is the cotangent
// between zeros (a pad takes static shapes), concatenated; the zeros are a
// 0-d zero expanded to the cotangent's runtime sizes (read from the
// cotangent argument the gradient is traced to).

// CHECK-LABEL: func.func @split
// CHECK: %[[N:.*]] = graph.dim %arg1, 0 : tensor<?x8xf32> -> index
// CHECK: %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[ZS:.*]] = graph.expand %[[Z]] sizes(%[[N]]) : tensor<f32> -> tensor<?x4xf32>
// CHECK: graph.cat %[[ZS]], %{{.*}} dim 1 : tensor<?x4xf32>, tensor<?x8xf32> -> tensor<?x12xf32>
// CHECK: return
func.func @split(%x: tensor<?x12xf32> {dyn.requires_grad}) -> tensor<?x8xf32> {
  %0 = graph.slice %x dim 1 start 4 end 12 step 1 : tensor<?x12xf32> -> tensor<?x8xf32>
  %1 = graph.tanh %0 : tensor<?x8xf32> -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}

// -----

// A strided slice of a static dim beside a `?` one (x[:, 2::3] of 12 columns:
// 2, 5, 8, 11): each element of the cotangent followed by two zeros ([?, 4, 1]
// and zeros [?, 4, 2] concatenated, merged to [?, 12] and cut to the 10
// columns from the start), then the zeros before it.

// CHECK-LABEL: func.func @strided_split
// CHECK: %[[N:.*]] = graph.dim %arg1, 0 : tensor<?x4xf32> -> index
// CHECK: %[[ONE:.*]] = graph.reshape %{{.*}} sizes(%[[N]]) : tensor<?x4xf32> -> tensor<?x4x1xf32>
// CHECK: %[[GAP:.*]] = graph.expand %{{.*}} sizes(%{{.*}}) : tensor<f32> -> tensor<?x4x2xf32>
// CHECK: %[[BOTH:.*]] = graph.cat %[[ONE]], %[[GAP]] dim 2 : tensor<?x4x1xf32>, tensor<?x4x2xf32> -> tensor<?x4x3xf32>
// CHECK: %[[FLAT:.*]] = graph.reshape %[[BOTH]] sizes(%[[N]]) : tensor<?x4x3xf32> -> tensor<?x12xf32>
// CHECK: %[[CUT:.*]] = graph.slice %[[FLAT]] dim 1 start 0 end 10 step 1 : tensor<?x12xf32> -> tensor<?x10xf32>
// CHECK: graph.cat %{{.*}}, %[[CUT]] dim 1 : tensor<?x2xf32>, tensor<?x10xf32> -> tensor<?x12xf32>
func.func @strided_split(%x: tensor<?x12xf32> {dyn.requires_grad}) -> tensor<?x4xf32> {
  %0 = graph.slice %x dim 1 start 2 end 12 step 3 : tensor<?x12xf32> -> tensor<?x4xf32>
  %1 = graph.tanh %0 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// A concatenation along a `?` dim: each input's gradient is its part of the
// cotangent between runtime offsets, the sums of the lengths before it (a
// static length is a constant).

// CHECK-LABEL: func.func @cat_dynamic
// CHECK: %[[N:.*]] = graph.dim %arg0, 0 : tensor<?x4xf32> -> index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[E0:.*]] = arith.addi %[[C0]], %[[N]] : index
// CHECK: graph.dynamic_slice %[[G:.*]], %[[C0]], %[[E0]] dim 0 : tensor<?x4xf32>, index, index -> tensor<?x4xf32>
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[E1:.*]] = arith.addi %[[E0]], %[[C3]] : index
// CHECK: graph.dynamic_slice %[[G]], %[[E0]], %[[E1]] dim 0 : tensor<?x4xf32>, index, index -> tensor<3x4xf32>
// CHECK: return
func.func @cat_dynamic(%x: tensor<?x4xf32> {dyn.requires_grad}, %y: tensor<3x4xf32> {dyn.requires_grad})
    -> tensor<?x4xf32> {
  %0 = graph.cat %x, %y dim 0 : tensor<?x4xf32>, tensor<3x4xf32> -> tensor<?x4xf32>
  %1 = graph.tanh %0 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// A learned table sliced to a runtime length (a position embedding cut to the
// sequence length): its gradient is the cotangent between zeros of lengths
// start (none: it is 0) and size - end, concatenated, read back at the table's
// static length.

// CHECK-LABEL: func.func @dynamic_slice_of_table
// CHECK: %[[N:.*]] = graph.dim %arg0, 0
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[TAIL:.*]] = arith.subi %[[C16]], %[[N]] : index
// CHECK: %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[ZT:.*]] = graph.expand %[[Z]] sizes(%[[TAIL]]) : tensor<f32> -> tensor<?x8xf32>
// CHECK: %[[W:.*]] = graph.cat %{{.*}}, %[[ZT]] dim 0 : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK: graph.dynamic_slice %[[W]], %{{.*}}, %[[C16]] dim 0 : tensor<?x8xf32>, index, index -> tensor<16x8xf32>
// CHECK: return
func.func @dynamic_slice_of_table(%x: tensor<?x8xf32>, %table: tensor<16x8xf32> {dyn.requires_grad})
    -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = graph.dim %x, 0 : tensor<?x8xf32> -> index
  %p = graph.dynamic_slice %table, %c0, %n dim 0 : tensor<16x8xf32>, index, index -> tensor<?x8xf32>
  %0 = graph.mul %x, %p : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// A slice of a `?` dim to static bounds (x[1:3] of a runtime batch): the
// cotangent between zeros of length start and zeros of the runtime rest.

// CHECK-LABEL: func.func @slice_of_dynamic_dim
// CHECK: %[[N:.*]] = graph.dim %arg0, 0 : tensor<?x8xf32> -> index
// CHECK: %[[HEAD:.*]] = graph.constant dense<0.000000e+00> : tensor<1x8xf32>
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[REST:.*]] = arith.subi %[[N]], %[[C3]] : index
// CHECK: %[[TAIL:.*]] = graph.expand %{{.*}} sizes(%[[REST]]) : tensor<f32> -> tensor<?x8xf32>
// CHECK: graph.cat %[[HEAD]], %{{.*}}, %[[TAIL]] dim 0 : tensor<1x8xf32>, tensor<2x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK: return
func.func @slice_of_dynamic_dim(%x: tensor<?x8xf32> {dyn.requires_grad}) -> tensor<2x8xf32> {
  %0 = graph.slice %x dim 0 start 1 end 3 step 1 : tensor<?x8xf32> -> tensor<2x8xf32>
  %1 = graph.tanh %0 : tensor<2x8xf32> -> tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}

// -----

// nll_loss's mean over a `?` batch: the one-hot of the targets compares them
// with an iota of the class ids, and the denominator sums the weights
// gathered at the kept targets (one per target), not the one-hot's [N, C].

// CHECK-LABEL: func.func @nll_mean
// CHECK: %[[IDS:.*]] = graph.iota : tensor<50xi64>
// CHECK: graph.reshape %[[IDS]] : tensor<50xi64> -> tensor<1x50xi64>
// CHECK: %[[KEPT:.*]] = graph.ne %arg1, %{{.*}} : tensor<?xi64>, tensor<i64> -> tensor<?xi1>
// CHECK: %[[SAFE:.*]] = graph.where %[[KEPT]], %arg1, %{{.*}} : tensor<?xi1>, tensor<?xi64>, tensor<i64> -> tensor<?xi64>
// CHECK: %[[W:.*]] = graph.gather %arg2 dim 0 index %[[SAFE]] : tensor<50xf32>, tensor<?xi64> -> tensor<?xf32>
// CHECK: %[[KW:.*]] = graph.where %[[KEPT]], %[[W]], %{{.*}} : tensor<?xi1>, tensor<?xf32>, tensor<f32> -> tensor<?xf32>
// CHECK: %[[TOTAL:.*]] = graph.sum %[[KW]] dims [0] : tensor<?xf32> -> tensor<f32>
// CHECK: graph.div %{{.*}}, %[[TOTAL]] : tensor<?x50xf32>, tensor<f32> -> tensor<?x50xf32>
func.func @nll_mean(%x: tensor<?x50xf32> {dyn.requires_grad}, %t: tensor<?xi64>, %w: tensor<50xf32>)
    -> tensor<f32> {
  %0 = graph.nll_loss mean %x, %t, %w {ignore_index = -100 : i64}
      : tensor<?x50xf32>, tensor<?xi64>, tensor<50xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// q, k and v sliced from one projection beside a `?` dim: each slice's
// gradient is its cotangent between zeros, and the three contributions are
// added piecewise: one concatenation of the three cotangents, no padded
// copies added together.

// CHECK-LABEL: func.func @qkv_split
// CHECK: %[[GQ:.*]] = graph.mul %arg1, %{{.*}} : tensor<?x16xf32>
// CHECK: %[[GK:.*]] = graph.mul %arg1, %{{.*}} : tensor<?x16xf32>
// CHECK-NOT: graph.add {{.*}} tensor<?x48xf32>
// CHECK: %[[C:.*]] = graph.cat %[[GQ]], %[[GK]], %arg1 dim 1 : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x48xf32>
// CHECK-NEXT: return %{{.*}}, %[[C]]
func.func @qkv_split(%x: tensor<?x48xf32> {dyn.requires_grad}) -> tensor<?x16xf32> {
  %q = graph.slice %x dim 1 start 0 end 16 step 1 : tensor<?x48xf32> -> tensor<?x16xf32>
  %k = graph.slice %x dim 1 start 16 end 32 step 1 : tensor<?x48xf32> -> tensor<?x16xf32>
  %v = graph.slice %x dim 1 start 32 end 48 step 1 : tensor<?x48xf32> -> tensor<?x16xf32>
  %m = graph.mul %q, %k : tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
  %r = graph.add %m, %v : tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// -----

// Training batch norm over a `?` batch whose samples hold 64 values of a
// channel each (8 x 8): the statistics take one pass over x, shifted by the
// first sample's channel means (a runtime batch has at least one sample),
// as with a static batch; the count is a sum of ones over the runtime size.

// CHECK-LABEL: func.func @bn_dynamic_batch
// CHECK: %[[N:.*]] = graph.dim %arg0, 0
// CHECK: %[[FIRST:.*]] = graph.slice %arg0 dim 0 start 0 end 1 {{.*}} -> tensor<1x4x8x8xf32>
// CHECK: graph.sum %[[FIRST]] dims [0, 2, 3] : tensor<1x4x8x8xf32> -> tensor<4xf32>
// CHECK: graph.constant dense<6.400000e+01>
// CHECK-COUNT-2: graph.sum %{{.*}} dims [0, 2, 3] : tensor<?x4x8x8xf32> -> tensor<4xf32>
// CHECK: %[[ONES:.*]] = graph.expand %{{.*}} sizes(%[[N]]) : tensor<f32> -> tensor<?xf32>
// CHECK: graph.sum %[[ONES]] dims [0]
// CHECK: return
func.func @bn_dynamic_batch(%x: tensor<?x4x8x8xf32> {dyn.requires_grad}, %w: tensor<4xf32> {dyn.requires_grad},
                            %b: tensor<4xf32> {dyn.requires_grad}) -> tensor<?x4x8x8xf32> {
  %y = graph.batch_norm %x weight %w bias %b training eps 1.0e-05
      : tensor<?x4x8x8xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<?x4x8x8xf32>
  return %y : tensor<?x4x8x8xf32>
}

// -----

// With fewer than 64 values of a channel per sample (a batch norm over [?, C])
// the first sample is too few for a shift: the two-pass moments (the mean,
// then the centered squares).

// CHECK-LABEL: func.func @bn1d_dynamic_batch
// CHECK-NOT: graph.slice
// CHECK: graph.sum %arg0 dims [0] : tensor<?x4xf32> -> tensor<4xf32>
// CHECK: graph.mul
// CHECK: return
func.func @bn1d_dynamic_batch(%x: tensor<?x4xf32> {dyn.requires_grad}, %w: tensor<4xf32> {dyn.requires_grad},
                              %b: tensor<4xf32> {dyn.requires_grad}) -> tensor<?x4xf32> {
  %y = graph.batch_norm %x weight %w bias %b training eps 1.0e-05
      : tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
