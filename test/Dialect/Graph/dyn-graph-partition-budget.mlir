// RUN: dyn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(dyn-graph-autodiff), dyn-graph-partition{memory-budget=0.5})' | FileCheck %s --check-prefix=HALF
// RUN: dyn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(dyn-graph-autodiff), dyn-graph-partition{memory-budget=0})' | FileCheck %s --check-prefix=ZERO
// RUN: dyn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(dyn-graph-autodiff), dyn-graph-partition)' | FileCheck %s --check-prefix=DEFAULT

// layer_norm feeding a GEMM: by default the normalized activation is saved
// for the weight's gradient. A budget below 1 first lets the backward
// recompute the normalization (tier 1) from the saved input: half the budget
// is met there, and the GEMM (tier 2) is not recomputed.

// DEFAULT-LABEL: func.func @ln_mm_forward
// DEFAULT-SAME: -> (tensor<8x16xf32>, tensor<8x64xf32>)
// DEFAULT-LABEL: func.func @ln_mm_backward
// DEFAULT-SAME: dyn.saved = array<i64: 0, 1, 3, -2>

// HALF-LABEL: func.func @ln_mm_forward
// HALF-SAME: -> tensor<8x16xf32>
// HALF-LABEL: func.func @ln_mm_backward
// HALF-SAME: dyn.saved = array<i64: 0, 1, 2, 3>
// HALF: graph.layer_norm
// HALF-NOT: graph.matmul %{{.*}}, %{{.*}} : tensor<8x64xf32>, tensor<64x16xf32>

// ZERO-LABEL: func.func @ln_mm_backward
// ZERO-SAME: dyn.saved = array<i64: 0, 1, 2, 3>
func.func @ln_mm(%x: tensor<8x64xf32> {dyn.requires_grad}, %w: tensor<64xf32> {dyn.requires_grad},
                 %b: tensor<64xf32> {dyn.requires_grad}, %m: tensor<64x16xf32> {dyn.requires_grad})
    -> tensor<8x16xf32> {
  %n = graph.layer_norm %x weight %w bias %b normalized_rank 1 eps 1.0e-05
      : tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %y = graph.matmul %n, %m : tensor<8x64xf32>, tensor<64x16xf32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// A GELU MLP: by default the first GEMM's result and the GELU's output (which
// the second GEMM reads in both passes) are saved; a budget of 0 recomputes
// both in the backward from the saved inputs and weights, so the forward
// returns only its result.

// DEFAULT-LABEL: func.func @mlp_backward
// DEFAULT-SAME: dyn.saved = array<i64: 0, 3, -2, -3>

// ZERO-LABEL: func.func @mlp_forward
// ZERO-SAME: -> tensor<8x4xf32>
// ZERO-LABEL: func.func @mlp_backward
// ZERO-SAME: dyn.saved = array<i64: 0, 1, 2, 3>
// ZERO: graph.addmm
// ZERO: graph.gelu
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

// A random draw is never recomputed, whatever the budget: even at budget 0
// the dropped activation the weight's gradient reads is saved, not drawn
// again from the input (the backward's own dropout applies the same mask to
// the cotangent, from the saved seed).

// ZERO-LABEL: func.func @drop_forward
// ZERO: %[[D:.*]] = graph.dropout %arg0
// ZERO: return %{{.*}}, %[[D]]
// ZERO-LABEL: func.func @drop_backward
// ZERO-NOT: graph.dropout %arg
// ZERO: return
func.func @drop(%x: tensor<8x32xf32> {dyn.requires_grad}, %s: tensor<i64>, %w: tensor<32x4xf32> {dyn.requires_grad})
    -> tensor<8x4xf32> {
  %d = graph.dropout %x, %s p 0.5 offset 0 : tensor<8x32xf32>, tensor<i64> -> tensor<8x32xf32>
  %y = graph.matmul %d, %w : tensor<8x32xf32>, tensor<32x4xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
