// RUN: dyn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(dyn-graph-autodiff), dyn-graph-partition)' | FileCheck %s

// A GELU MLP: the GEMM results are saved (never recomputed). The GELU's
// output is saved too: the forward writes it for the second GEMM anyway, and
// recomputed in the backward it would be written again in full for that
// GEMM's weight gradient (AOTAutograd's ban on values materialized in the
// backward). Its derivative reads the saved GEMM result.

// CHECK-LABEL: func.func @mlp_forward
// CHECK-SAME: -> (tensor<8x4xf32>, tensor<8x32xf32>, tensor<8x32xf32>)
// CHECK: %[[H:.*]] = graph.addmm
// CHECK: %[[G:.*]] = graph.gelu
// CHECK: %[[Y:.*]] = graph.matmul
// CHECK: return %[[Y]], %[[H]], %[[G]]
// CHECK-LABEL: func.func @mlp_backward
// CHECK-SAME: dyn.saved = array<i64: 0, 3, -2, -3>
// CHECK-NOT: graph.gelu
// CHECK: graph.matmul
// CHECK: return
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<32x16xf32> {dyn.requires_grad},
               %b1: tensor<32xf32> {dyn.requires_grad}, %w2: tensor<4x32xf32> {dyn.requires_grad})
    -> tensor<8x4xf32> {
  %w1t = graph.permute %w1 dims [1, 0] : tensor<32x16xf32> -> tensor<16x32xf32>
  %h = graph.addmm %b1, %x, %w1t {alpha = 1.0 : f64, beta = 1.0 : f64}
      : tensor<32xf32>, tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %g = graph.gelu %h {approximate = "none"} : tensor<8x32xf32> -> tensor<8x32xf32>
  %w2t = graph.permute %w2 dims [1, 0] : tensor<4x32xf32> -> tensor<32x4xf32>
  %y = graph.matmul %g, %w2t : tensor<8x32xf32>, tensor<32x4xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// layer_norm: its input and weight are saved; the statistics are recomputed
// in the backward (reductions of a saved value, no extra bytes saved).

// CHECK-LABEL: func.func @ln_forward
// CHECK: graph.layer_norm
// CHECK-NOT: graph.sum
// CHECK: return
// CHECK-LABEL: func.func @ln_backward
// CHECK-SAME: dyn.saved = array<i64: 0, 1>
// CHECK: graph.sum
// CHECK: graph.rsqrt
// CHECK: return
func.func @ln(%x: tensor<4x64xf32> {dyn.requires_grad}, %w: tensor<64xf32> {dyn.requires_grad},
              %b: tensor<64xf32> {dyn.requires_grad}) -> tensor<4x64xf32> {
  %0 = graph.layer_norm %x weight %w bias %b normalized_rank 1 eps 1.0e-05
      : tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

// softmax: its result is saved (softmax_backward reads the output), not its input; being a
// result of the forward already, it is not returned twice.

// CHECK-LABEL: func.func @sm_forward
// CHECK-SAME: -> tensor<4x10xf32>
// CHECK: %[[S:.*]] = graph.softmax
// CHECK: return %[[S]] :
// CHECK-LABEL: func.func @sm_backward
// CHECK-SAME: dyn.saved = array<i64: -1>
// CHECK: graph.softmax_backward
func.func @sm(%x: tensor<4x10xf32> {dyn.requires_grad}) -> tensor<4x10xf32> {
  %0 = graph.softmax %x dim 1 : tensor<4x10xf32> -> tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

// Training batch norm: its forward is written out in the joint so that the
// backward reads the forward's statistics: its input, weight and [C]
// statistics are saved (a reduction is never recomputed; x - mean, which the
// forward's kernels never write, would cost a buffer of its own); the
// backward's only reductions are the gradient's two per-channel sums. The
// forward's are the shift (the first samples' mean) and the two shifted sums.

// CHECK-LABEL: func.func @bn_forward
// CHECK-NOT: graph.batch_norm
// CHECK-COUNT-3: graph.sum
// CHECK: graph.rsqrt
// CHECK: return
// CHECK-LABEL: func.func @bn_backward
// CHECK-SAME: dyn.saved = array<i64: 0, 1, -4, -5, -6>
// CHECK-COUNT-2: graph.sum
// CHECK-NOT: graph.sum
// CHECK: return
func.func @bn(%x: tensor<4x8x3x3xf32> {dyn.requires_grad}, %w: tensor<8xf32> {dyn.requires_grad},
              %b: tensor<8xf32> {dyn.requires_grad}, %rm: tensor<8xf32>, %rv: tensor<8xf32>)
    -> (tensor<4x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>) {
  %y, %stats:2 = graph.batch_norm %x weight %w bias %b running_mean %rm running_var %rv training
      momentum 1.000000e-01 eps 1.000000e-05
      : tensor<4x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
      -> tensor<4x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>
  return %y, %stats#0, %stats#1 : tensor<4x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// A ReLU after a batch norm: relu(z) > 0 exactly where z > 0, so the mask
// comes from the norm's output, recomputed in the backward from the norm's
// saved input (which its gradient reads anyway) and per-channel values (the
// bias is saved besides), not from the saved ReLU output, which only the
// convolution's weight gradient reads.

// CHECK-LABEL: func.func @bn_relu_backward
// CHECK-SAME: dyn.saved = array<i64: 0, 1, 2, 5, -2, -3, -4, -5>
// CHECK: %[[XA:.*]] = graph.mul %arg0, %{{.*}} : tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>
// CHECK: %[[Z:.*]] = graph.add %[[XA]], %{{.*}} : tensor<2x4x6x6xf32>
// CHECK: graph.gt %[[Z]], %{{.*}} : tensor<2x4x6x6xf32>, tensor<f32>
// CHECK: return
func.func @bn_relu(%x: tensor<2x4x6x6xf32> {dyn.requires_grad}, %w: tensor<4xf32> {dyn.requires_grad},
                   %b: tensor<4xf32> {dyn.requires_grad}, %rm: tensor<4xf32>, %rv: tensor<4xf32>,
                   %k: tensor<4x4x1x1xf32> {dyn.requires_grad}) -> tensor<2x4x6x6xf32> {
  %y, %stats:2 = graph.batch_norm %x weight %w bias %b running_mean %rm running_var %rv training
      momentum 1.000000e-01 eps 1.000000e-05
      : tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
      -> tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>
  %r = graph.relu %y : tensor<2x4x6x6xf32> -> tensor<2x4x6x6xf32>
  %c = graph.convolution %r, %k stride [1, 1] padding [0, 0] dilation [1, 1] groups 1
      : tensor<2x4x6x6xf32>, tensor<4x4x1x1xf32> -> tensor<2x4x6x6xf32>
  return %c : tensor<2x4x6x6xf32>
}

// -----

// A ReLU after a convolution's bias: its input would be one more saved
// activation (the backward saves the ReLU's output for the next convolution
// anyway), so the mask stays on the output.

// CHECK-LABEL: func.func @conv_relu_backward
// CHECK: graph.gt %arg{{[0-9]+}}, %{{.*}} : tensor<2x4x6x6xf32>, tensor<f32>
// CHECK: return
func.func @conv_relu(%x: tensor<2x4x6x6xf32>, %k1: tensor<4x4x1x1xf32> {dyn.requires_grad},
                     %b1: tensor<4xf32> {dyn.requires_grad}, %k2: tensor<4x4x1x1xf32> {dyn.requires_grad})
    -> tensor<2x4x6x6xf32> {
  %h = graph.convolution %x, %k1 bias %b1 stride [1, 1] padding [0, 0] dilation [1, 1] groups 1
      : tensor<2x4x6x6xf32>, tensor<4x4x1x1xf32>, tensor<4xf32> -> tensor<2x4x6x6xf32>
  %r = graph.relu %h : tensor<2x4x6x6xf32> -> tensor<2x4x6x6xf32>
  %c = graph.convolution %r, %k2 stride [1, 1] padding [0, 0] dilation [1, 1] groups 1
      : tensor<2x4x6x6xf32>, tensor<4x4x1x1xf32> -> tensor<2x4x6x6xf32>
  return %c : tensor<2x4x6x6xf32>
}

// -----

// A torch.utils.checkpoint region: the function lists its ops by position
// (dyn.recompute: the GEMM, the GELU and the second GEMM); the autodiff pass
// marks them and the cut recomputes them in the backward, GEMMs included,
// saving the region's input rather than the hidden activation.

// CHECK-LABEL: func.func @ckpt_forward
// CHECK-SAME: -> tensor<8x4xf32>
// CHECK-LABEL: func.func @ckpt_backward
// CHECK-SAME: dyn.saved = array<i64: 0, 1, 2, 3>
// CHECK: graph.addmm {{.*}}dyn.recompute
// CHECK: graph.gelu {{.*}}dyn.recompute
// CHECK: return
func.func @ckpt(%x: tensor<8x16xf32>, %w1: tensor<32x16xf32> {dyn.requires_grad},
                %b1: tensor<32xf32> {dyn.requires_grad}, %w2: tensor<4x32xf32> {dyn.requires_grad})
    -> tensor<8x4xf32> attributes {dyn.recompute = array<i64: 1, 2, 4>} {
  %w1t = graph.permute %w1 dims [1, 0] : tensor<32x16xf32> -> tensor<16x32xf32>
  %h = graph.addmm %b1, %x, %w1t {alpha = 1.0 : f64, beta = 1.0 : f64}
      : tensor<32xf32>, tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %g = graph.gelu %h {approximate = "none"} : tensor<8x32xf32> -> tensor<8x32xf32>
  %w2t = graph.permute %w2 dims [1, 0] : tensor<4x32xf32> -> tensor<32x4xf32>
  %y = graph.matmul %g, %w2t : tensor<8x32xf32>, tensor<32x4xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// An op the forward runs anyway is not run again for its other results: the
// backward reads graph.attention_lse's log-sum-exp and random state, which only
// it needs, from the forward (saved), not from a second attention kernel.

// CHECK-LABEL: func.func @attention_forward
// CHECK: %[[Y:.*]], %[[LSE:.*]], %[[RNG:.*]] = graph.attention_lse
// CHECK: return %[[Y]], %[[LSE]], %[[RNG]]
// CHECK-LABEL: func.func @attention_backward
// CHECK-NOT: graph.attention_lse %
// CHECK: graph.attention_lse_backward
func.func @attention(%q: tensor<2x4x8x64xf32> {dyn.requires_grad}, %k: tensor<2x4x6x64xf32> {dyn.requires_grad},
                     %v: tensor<2x4x6x32xf32> {dyn.requires_grad}) -> tensor<2x4x8x32xf32> {
  %0 = graph.scaled_dot_product_attention %q, %k, %v causal : tensor<2x4x8x64xf32>, tensor<2x4x6x64xf32>, tensor<2x4x6x32xf32> -> tensor<2x4x8x32xf32>
  return %0 : tensor<2x4x8x32xf32>
}

// -----

// The backward recomputes each value right before the first op that reads it
// (AOTAutograd's reordering to mimic the autograd engine), not in the forward's
// order at its start. Each layer scales its GELU's output by a learned vector:
// the scaled value feeds a GEMM (saved), the GELU's output only the scale's
// gradient, a reduction it fuses into (recomputed). The second layer's GELU is
// recomputed for the second scale's gradient, the first layer's only after
// the second layer's weight gradient, so the two are never live at once.

// CHECK-LABEL: func.func @deep_backward
// CHECK-SAME: (%{{.*}}: tensor<8x16xf32>, %{{.*}}: tensor<32xf32>, %{{.*}}: tensor<32x32xf32>, %{{.*}}: tensor<32xf32>, %{{.*}}: tensor<4x32xf32>, %[[H1:.*]]: tensor<8x32xf32>, %{{.*}}: tensor<8x32xf32>, %[[H2:.*]]: tensor<8x32xf32>, %{{.*}}: tensor<8x32xf32>, %{{.*}}: tensor<f32>)
// CHECK-NOT: graph.gelu
// CHECK: %[[G2:.*]] = graph.gelu %[[H2]]
// CHECK-NOT: graph.gelu %[[H1]]
// CHECK: graph.sum %{{.*}} dims [0] : tensor<8x32xf32> -> tensor<32xf32>
// CHECK-NOT: graph.gelu %[[H1]]
// CHECK: graph.matmul %{{.*}}, %{{.*}} : tensor<32x8xf32>, tensor<8x32xf32> -> tensor<32x32xf32>
// CHECK: %[[G1:.*]] = graph.gelu %[[H1]]
func.func @deep(%x: tensor<8x16xf32>, %w1: tensor<32x16xf32> {dyn.requires_grad}, %s1: tensor<32xf32> {dyn.requires_grad},
                %w2: tensor<32x32xf32> {dyn.requires_grad}, %s2: tensor<32xf32> {dyn.requires_grad},
                %w3: tensor<4x32xf32> {dyn.requires_grad}) -> tensor<f32> {
  %w1t = graph.permute %w1 dims [1, 0] : tensor<32x16xf32> -> tensor<16x32xf32>
  %h1 = graph.matmul %x, %w1t : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %g1 = graph.gelu %h1 {approximate = "none"} : tensor<8x32xf32> -> tensor<8x32xf32>
  %y1 = graph.mul %g1, %s1 : tensor<8x32xf32>, tensor<32xf32> -> tensor<8x32xf32>
  %w2t = graph.permute %w2 dims [1, 0] : tensor<32x32xf32> -> tensor<32x32xf32>
  %h2 = graph.matmul %y1, %w2t : tensor<8x32xf32>, tensor<32x32xf32> -> tensor<8x32xf32>
  %g2 = graph.gelu %h2 {approximate = "none"} : tensor<8x32xf32> -> tensor<8x32xf32>
  %y2 = graph.mul %g2, %s2 : tensor<8x32xf32>, tensor<32xf32> -> tensor<8x32xf32>
  %w3t = graph.permute %w3 dims [1, 0] : tensor<4x32xf32> -> tensor<32x4xf32>
  %y = graph.matmul %y2, %w3t : tensor<8x32xf32>, tensor<32x4xf32> -> tensor<8x4xf32>
  %l = graph.sum %y dims [0, 1] : tensor<8x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
