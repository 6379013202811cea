// RUN: dyn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(dyn-graph-autodiff))' | FileCheck %s

// Attention on [B, H, L, E] without a mask: the forward becomes graph.attention_lse
// (eager's fused kernel, keeping its log-sum-exp) and the query, key and value
// gradients come from one call of that kernel's backward: no [L, S]
// probabilities, and the forward kernel does not run again. The default scale
// 1/sqrt(E) is made explicit; the log-sum-exp has ceil32(L) columns.

// CHECK-LABEL: func.func @attention
// CHECK-NOT: graph.scaled_dot_product_attention
// CHECK: %[[Y:.*]], %[[LSE:.*]], %[[RNG:.*]] = graph.attention_lse %arg0, %arg1, %arg2 {dropout_p = 0.000000e+00 : f64, is_causal = true, scale = 1.250000e-01 : f64} : (tensor<2x4x8x64xf32>, tensor<2x4x6x64xf32>, tensor<2x4x6x32xf32>) -> (tensor<2x4x8x32xf32>, tensor<2x4x32xf32>, tensor<2xi64>)
// CHECK: %[[GQ:.*]], %[[GK:.*]], %[[GV:.*]] = graph.attention_lse_backward %arg3, %arg0, %arg1, %arg2, %[[Y]], %[[LSE]], %[[RNG]]
// CHECK-NOT: graph.softmax
// CHECK: return %[[Y]], %[[GQ]], %[[GK]], %[[GV]]
func.func @attention(%q: tensor<2x4x8x64xf32> {dyn.requires_grad}, %k: tensor<2x4x6x64xf32> {dyn.requires_grad},
                     %v: tensor<2x4x6x32xf32> {dyn.requires_grad}) -> tensor<2x4x8x32xf32> {
  %0 = graph.scaled_dot_product_attention %q, %k, %v causal : tensor<2x4x8x64xf32>, tensor<2x4x6x64xf32>, tensor<2x4x6x32xf32> -> tensor<2x4x8x32xf32>
  return %0 : tensor<2x4x8x32xf32>
}

// -----

// The same with a `?` length (a symbolic capture): the log-sum-exp's length is
// `?` too, ceil32(L) at run time (prim::libraryResultDim).

// CHECK-LABEL: func.func @attention_of_a_symbolic_length
// CHECK: %[[Y:.*]], %[[LSE:.*]], %[[RNG:.*]] = graph.attention_lse %arg0, %arg1, %arg2 {{.*}} : (tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32>, tensor<2x4x?x32xf32>) -> (tensor<2x4x?x32xf32>, tensor<2x4x?xf32>, tensor<2xi64>)
// CHECK: graph.attention_lse_backward %arg3, %arg0, %arg1, %arg2, %[[Y]], %[[LSE]], %[[RNG]]
func.func @attention_of_a_symbolic_length(%q: tensor<2x4x?x64xf32> {dyn.requires_grad},
                                          %k: tensor<2x4x?x64xf32> {dyn.requires_grad},
                                          %v: tensor<2x4x?x32xf32> {dyn.requires_grad}) -> tensor<2x4x?x32xf32> {
  %0 = graph.scaled_dot_product_attention %q, %k, %v causal : tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32>, tensor<2x4x?x32xf32> -> tensor<2x4x?x32xf32>
  return %0 : tensor<2x4x?x32xf32>
}

// -----

// Masked attention with dropout (capture makes it on CUDA): the backward is the
// same kernel's backward call, from the forward's result, log-sum-exp and random
// state, with the mask read again; the mask itself takes no gradient.

// CHECK-LABEL: func.func @masked_attention_dropout
// CHECK: %[[Y:.*]], %[[LSE:.*]], %[[RNG:.*]] = graph.masked_attention_lse %arg0, %arg1, %arg2, %arg3 {dropout_p = 1.000000e-01 : f64
// CHECK: %[[GQ:.*]], %[[GK:.*]], %[[GV:.*]] = graph.masked_attention_lse_backward %arg4, %arg0, %arg1, %arg2, %arg3, %[[Y]], %[[LSE]], %[[RNG]] {dropout_p = 1.000000e-01 : f64
// CHECK: return %[[Y]], %[[GQ]], %[[GK]], %[[GV]]
func.func @masked_attention_dropout(%q: tensor<2x4x8x64xf32> {dyn.requires_grad}, %k: tensor<2x4x6x64xf32> {dyn.requires_grad},
                                    %v: tensor<2x4x6x32xf32> {dyn.requires_grad}, %m: tensor<2x1x8x6xi1>) -> tensor<2x4x8x32xf32> {
  %0:3 = graph.masked_attention_lse %q, %k, %v, %m {dropout_p = 1.000000e-01 : f64, is_causal = false, scale = 1.250000e-01 : f64} : (tensor<2x4x8x64xf32>, tensor<2x4x6x64xf32>, tensor<2x4x6x32xf32>, tensor<2x1x8x6xi1>) -> (tensor<2x4x8x32xf32>, tensor<2x4x32xf32>, tensor<2xi64>)
  return %0#0 : tensor<2x4x8x32xf32>
}

// -----

// Other ranks without a mask: eager's attention run again and differentiated by
// ATen (graph.attention_backward).

// CHECK-LABEL: func.func @attention_3d
// CHECK: %[[Y:.*]] = graph.scaled_dot_product_attention %arg0, %arg1, %arg2
// CHECK: %[[GQ:.*]], %[[GK:.*]], %[[GV:.*]] = graph.attention_backward %arg3, %arg0, %arg1, %arg2 {is_causal = false, scale = 2.500000e-01 : f64}
// CHECK: return %[[Y]], %[[GQ]], %[[GK]], %[[GV]]
func.func @attention_3d(%q: tensor<2x8x16xf32> {dyn.requires_grad}, %k: tensor<2x8x16xf32> {dyn.requires_grad},
                        %v: tensor<2x8x16xf32> {dyn.requires_grad}) -> tensor<2x8x16xf32> {
  %0 = graph.scaled_dot_product_attention %q, %k, %v : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// A boolean mask (no gradient of its own): the masked form of the call; only
// the query needs a gradient here, the call computes all three.

// CHECK-LABEL: func.func @masked_attention
// CHECK: %[[GQ:.*]], %{{.*}}, %{{.*}} = graph.masked_attention_backward %arg4, %arg0, %arg1, %arg2, %arg3 {is_causal = false, scale = 5.000000e-01 : f64}
// CHECK: return %{{.*}}, %[[GQ]] :
func.func @masked_attention(%q: tensor<2x8x16xf32> {dyn.requires_grad}, %k: tensor<2x8x16xf32>,
                            %v: tensor<2x8x16xf32>, %m: tensor<8x8xi1>) -> tensor<2x8x16xf32> {
  %0 = graph.scaled_dot_product_attention %q, %k, %v mask %m scale 5.000000e-01 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<8x8xi1> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// An additive float mask that needs a gradient (T5's position bias): the math
// backward, whose probabilities give the mask its gradient.

// CHECK-LABEL: func.func @learned_bias
// CHECK-NOT: attention_backward
// CHECK: graph.safe_softmax
// CHECK: graph.softmax_backward
func.func @learned_bias(%q: tensor<2x8x16xf32> {dyn.requires_grad}, %k: tensor<2x8x16xf32>,
                        %v: tensor<2x8x16xf32>, %m: tensor<8x8xf32> {dyn.requires_grad}) -> tensor<2x8x16xf32> {
  %0 = graph.scaled_dot_product_attention %q, %k, %v mask %m : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<8x8xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// Convolution: ATen's convolution_backward for the input and weight
// gradients, a sum over the batch and spatial dims for the bias.

// CHECK-LABEL: func.func @convolution
// CHECK: %[[GI:.*]], %[[GW:.*]] = graph.convolution_backward %arg3, %arg0, %arg1
// CHECK-SAME: output_mask = array<i64: 1, 1>
// CHECK: %[[B:.*]] = graph.sum %arg3 dims [0, 2, 3]
// CHECK: return %{{.*}}, %[[GI]], %[[GW]], %[[B]]
func.func @convolution(%x: tensor<2x3x8x8xf32> {dyn.requires_grad}, %w: tensor<4x3x3x3xf32> {dyn.requires_grad},
                       %b: tensor<4xf32> {dyn.requires_grad}) -> tensor<2x4x8x8xf32> {
  %0 = graph.convolution %x, %w bias %b stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

// A 1x1 convolution with stride 2 and no padding (a ResNet's downsampling
// shortcut): the gradients of a stride-1 1x1 convolution of the input's
// strided slice; the input's gradient is that slice's, zeros between (a
// reshape, a pad and a reshape per dim, which the kernel reading it fuses),
// cut to the odd height.

// CHECK-LABEL: func.func @strided_pointwise_convolution
// CHECK: %[[H:.*]] = graph.slice %arg0 dim 2 start 0 end 7 step 2 : tensor<2x4x7x6xf32> -> tensor<2x4x4x6xf32>
// CHECK: %[[HW:.*]] = graph.slice %[[H]] dim 3 start 0 end 6 step 2 : tensor<2x4x4x6xf32> -> tensor<2x4x4x3xf32>
// CHECK: %[[GI:.*]], %[[GW:.*]] = graph.convolution_backward %arg2, %[[HW]], %arg1
// CHECK-SAME: padding = array<i64: 0, 0>, stride = array<i64: 1, 1>
// CHECK: graph.pad %{{.*}} high [0, 0, 0, 0, 1] : tensor<2x4x4x3x1xf32> -> tensor<2x4x4x3x2xf32>
// CHECK: graph.pad %{{.*}} high [0, 0, 0, 1, 0] : tensor<2x4x4x1x6xf32> -> tensor<2x4x4x2x6xf32>
// CHECK: %[[G:.*]] = graph.slice %{{.*}} dim 2 start 0 end 7 step 1 : tensor<2x4x8x6xf32> -> tensor<2x4x7x6xf32>
// CHECK: return %{{.*}}, %[[G]], %[[GW]]
func.func @strided_pointwise_convolution(%x: tensor<2x4x7x6xf32> {dyn.requires_grad},
                                         %w: tensor<8x4x1x1xf32> {dyn.requires_grad}) -> tensor<2x8x4x3xf32> {
  %0 = graph.convolution %x, %w stride [2, 2] padding [0, 0] dilation [1, 1] groups 1
      : tensor<2x4x7x6xf32>, tensor<8x4x1x1xf32> -> tensor<2x8x4x3xf32>
  return %0 : tensor<2x8x4x3xf32>
}

// -----

// Global average pooling: the cotangent spread evenly over the window (a
// broadcast and a division its consumers fuse), not ATen's pooling backward,
// which writes NCHW from an NCHW copy of the input. Other output sizes keep
// the library call.

// CHECK-LABEL: func.func @global_avg_pool
// CHECK-NOT: graph.adaptive_avg_pool2d_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<2x8x1x1xf32> -> tensor<2x8x4x4xf32>
// CHECK: %[[N:.*]] = graph.constant dense<1.600000e+01> : tensor<f32>
// CHECK: graph.div %[[G]], %[[N]]
// CHECK-LABEL: func.func @adaptive_avg_pool
// CHECK: graph.adaptive_avg_pool2d_backward
func.func @global_avg_pool(%x: tensor<2x8x4x4xf32> {dyn.requires_grad}) -> tensor<2x8x1x1xf32> {
  %0 = graph.adaptive_avg_pool %x output_size [1, 1] : tensor<2x8x4x4xf32> -> tensor<2x8x1x1xf32>
  return %0 : tensor<2x8x1x1xf32>
}
func.func @adaptive_avg_pool(%x: tensor<2x8x4x4xf32> {dyn.requires_grad}) -> tensor<2x8x2x2xf32> {
  %0 = graph.adaptive_avg_pool %x output_size [2, 2] : tensor<2x8x4x4xf32> -> tensor<2x8x2x2xf32>
  return %0 : tensor<2x8x2x2xf32>
}

// -----

// An embedding's row gather: a small one-hot matrix [V, N] makes the weight
// gradient one GEMM; a large one (an LM's vocabulary times its tokens) is ATen's
// embedding backward, over the indices made non-negative.

// CHECK-LABEL: func.func @embedding_small
// CHECK: graph.eq
// CHECK: graph.matmul
// CHECK-NOT: graph.embedding_backward
func.func @embedding_small(%w: tensor<16x8xf32> {dyn.requires_grad}, %i: tensor<6x1xi64>) -> tensor<6x8xf32> {
  %e = graph.expand %i : tensor<6x1xi64> -> tensor<6x8xi64>
  %0 = graph.gather %w dim 0 index %e : tensor<16x8xf32>, tensor<6x8xi64> -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// CHECK-LABEL: func.func @embedding_large
// CHECK-NOT: graph.matmul
// CHECK: %[[ROW:.*]] = graph.where
// CHECK: %[[IDX:.*]] = graph.reshape %[[ROW]] : tensor<1x128xi64> -> tensor<128xi64>
// CHECK: %[[G:.*]] = graph.embedding_backward %{{.*}}, %arg0, %[[IDX]] : (tensor<128x8xf32>, tensor<50000x8xf32>, tensor<128xi64>) -> tensor<50000x8xf32>
// CHECK: return %{{.*}}, %[[G]]
func.func @embedding_large(%w: tensor<50000x8xf32> {dyn.requires_grad}, %i: tensor<128x1xi64>) -> tensor<128x8xf32> {
  %e = graph.expand %i : tensor<128x1xi64> -> tensor<128x8xi64>
  %0 = graph.gather %w dim 0 index %e : tensor<50000x8xf32>, tensor<128x8xi64> -> tensor<128x8xf32>
  return %0 : tensor<128x8xf32>
}
