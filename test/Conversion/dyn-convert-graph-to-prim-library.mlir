// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim | FileCheck %s

// Library-call ops become prim.library_call of their callee, with their
// attributes in declaration order as the parameters: sort's [dim,
// descending, stable] (bools as 0/1).
// CHECK-LABEL: func @sort
// CHECK: %[[R:.*]]:2 = prim.library_call "sort"(%arg0) params [1, 1, 0] : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi64>)
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @sort(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi64>) {
  %r:2 = graph.sort %x {dim = 1 : i64, descending = true, stable = false} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi64>)
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xi64>
}

// -----

// topk: [k, dim, largest, sorted].
// CHECK-LABEL: func @topk
// CHECK: prim.library_call "topk"(%arg0) params [3, -1, 0, 1] : (tensor<5x10xf32>) -> (tensor<5x3xf32>, tensor<5x3xi64>)
func.func @topk(%x: tensor<5x10xf32>) -> (tensor<5x3xf32>, tensor<5x3xi64>) {
  %r:2 = graph.topk %x {k = 3 : i64, dim = -1 : i64, largest = false, sorted = true} : (tensor<5x10xf32>) -> (tensor<5x3xf32>, tensor<5x3xi64>)
  return %r#0, %r#1 : tensor<5x3xf32>, tensor<5x3xi64>
}

// -----

// A string attribute is its length then its characters: eigh's UPLO = "U".
// CHECK-LABEL: func @eigh
// CHECK: prim.library_call "linalg_eigh"(%arg0) params [1, 85] : (tensor<3x3xf64>) -> (tensor<3xf64>, tensor<3x3xf64>)
func.func @eigh(%a: tensor<3x3xf64>) -> (tensor<3xf64>, tensor<3x3xf64>) {
  %r:2 = graph.linalg_eigh %a {UPLO = "U"} : (tensor<3x3xf64>) -> (tensor<3xf64>, tensor<3x3xf64>)
  return %r#0, %r#1 : tensor<3xf64>, tensor<3x3xf64>
}

// -----

// An f64 is its bits (1e-15 = 0x3CD203AF9EE75616), an array its length then
// its elements: pinverse's rcond, matrix_norm's dims.
// CHECK-LABEL: func @pinverse_norm
// CHECK: prim.library_call "pinverse"(%arg0) params [4382569440205035030] : (tensor<3x4xf32>) -> tensor<4x3xf32>
// CHECK: prim.library_call "linalg_matrix_norm"(%arg0) params [3, 110, 117, 99, 0, 2, -2, -1, 0] : (tensor<3x4xf32>) -> tensor<f32>
func.func @pinverse_norm(%a: tensor<3x4xf32>) -> (tensor<4x3xf32>, tensor<f32>) {
  %p = graph.pinverse %a {rcond = 1.000000e-15 : f64} : (tensor<3x4xf32>) -> (tensor<4x3xf32>)
  %n = graph.linalg_matrix_norm %a {ord_name = "nuc", ord = 0.0 : f64, dim = array<i64: -2, -1>, keepdim = false} : (tensor<3x4xf32>) -> (tensor<f32>)
  return %p, %n : tensor<4x3xf32>, tensor<f32>
}

// -----

// Two operands and three results: lu_factor_ex's LU, pivots (i32) and info.
// CHECK-LABEL: func @lu
// CHECK: %[[F:.*]]:3 = prim.library_call "linalg_lu_factor_ex"(%arg0) params [1, 0]
// CHECK: prim.library_call "linalg_lu_solve"(%[[F]]#0, %[[F]]#1, %arg1) params [1, 0]
func.func @lu(%a: tensor<4x4xf32>, %b: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %f:3 = graph.linalg_lu_factor_ex %a {pivot = true, check_errors = false} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xi32>, tensor<i32>)
  %x = graph.linalg_lu_solve %f#0, %f#1, %b {left = true, adjoint = false} : (tensor<4x4xf32>, tensor<4xi32>, tensor<4x2xf32>) -> (tensor<4x2xf32>)
  return %x : tensor<4x2xf32>
}

// -----

// An empty array is its length 0 and nothing else: irfft without n ("irfft" =
// 5 characters, has_s 0, s [], has_dim 1, dim [1], norm "" = 0).
// CHECK-LABEL: func @fft_real
// CHECK: prim.library_call "fft_real"(%arg0) params [5, 105, 114, 102, 102, 116, 0, 0, 1, 1, 1, 0] : (tensor<5x6x7xf32>) -> tensor<5x10x7xf32>
func.func @fft_real(%x: tensor<5x6x7xf32>) -> tensor<5x10x7xf32> {
  %r = graph.fft_real %x {kind = "irfft", has_s = false, s = array<i64>, has_dim = true, dim = array<i64: 1>, norm = ""} : (tensor<5x6x7xf32>) -> (tensor<5x10x7xf32>)
  return %r : tensor<5x10x7xf32>
}

// -----

// Eager's draw from a seed: kind "bernoulli", seed 42, a and b as f64 bits (0),
// n 0; the polynomials take x and n as operands and no parameters.
// CHECK-LABEL: func @seeded_and_pointwise
// CHECK: prim.library_call "seeded_random"(%arg0) params [9, 98, 101, 114, 110, 111, 117, 108, 108, 105, 42, 0, 0, 0] : (tensor<8xf32>) -> tensor<8xf32>
// CHECK: prim.library_call "chebyshev_polynomial_t"(%arg0, %arg1) params [] : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
func.func @seeded_and_pointwise(%p: tensor<8xf32>, %n: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %b = graph.seeded_random %p {kind = "bernoulli", seed = 42 : i64, a = 0.0 : f64, b = 0.0 : f64, n = 0 : i64} : (tensor<8xf32>) -> (tensor<8xf32>)
  %t = graph.chebyshev_polynomial_t %p, %n : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>)
  return %b, %t : tensor<8xf32>, tensor<8xf32>
}

// -----

// grouped_mm (a mixture of experts' expert layers) has no attributes: no
// parameters; its offsets are an operand (data).
// CHECK-LABEL: func @grouped_mm
// CHECK: prim.library_call "grouped_mm"(%arg0, %arg1, %arg2) params [] : (tensor<10x8xf32>, tensor<3x8x5xf32>, tensor<3xi32>) -> tensor<10x5xf32>
func.func @grouped_mm(%x: tensor<10x8xf32>, %w: tensor<3x8x5xf32>, %offs: tensor<3xi32>) -> tensor<10x5xf32> {
  %0 = graph.grouped_mm %x, %w, %offs : (tensor<10x8xf32>, tensor<3x8x5xf32>, tensor<3xi32>) -> tensor<10x5xf32>
  return %0 : tensor<10x5xf32>
}

// -----

// A recurrent layer is a call with three (LSTM) or two (GRU, RNN) results;
// rnn's parameters are [relu, batch_first].
// CHECK-LABEL: func @recurrent
// CHECK: %[[L:.*]]:3 = prim.library_call "lstm"(%arg0, %arg1, %arg1, %arg2, %arg3, %arg4, %arg4) params [0]
// CHECK: prim.library_call "rnn"(%[[L]]#0, %arg1, %arg5, %arg6, %arg7, %arg7) params [1, 0]
func.func @recurrent(%x: tensor<5x3x8xf32>, %h: tensor<1x3x16xf32>, %wi: tensor<64x8xf32>, %wh: tensor<64x16xf32>, %b: tensor<64xf32>, %ri: tensor<16x16xf32>, %rh: tensor<16x16xf32>, %rb: tensor<16xf32>) -> tensor<5x3x16xf32> {
  %o:3 = graph.lstm %x, %h, %h, %wi, %wh, %b, %b {batch_first = false} : (tensor<5x3x8xf32>, tensor<1x3x16xf32>, tensor<1x3x16xf32>, tensor<64x8xf32>, tensor<64x16xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<5x3x16xf32>, tensor<1x3x16xf32>, tensor<1x3x16xf32>)
  %r:2 = graph.rnn %o#0, %h, %ri, %rh, %rb, %rb {relu = true, batch_first = false} : (tensor<5x3x16xf32>, tensor<1x3x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<5x3x16xf32>, tensor<1x3x16xf32>)
  return %r#0 : tensor<5x3x16xf32>
}

// -----

// Collectives: the reduction and the group's name as strings, the group's
// size as an integer: all_reduce's ["sum", "0"] is [3, 115, 117, 109, 1, 48].
// CHECK-LABEL: func @collectives
// CHECK: %[[A:.*]] = prim.library_call "all_reduce"(%arg0) params [3, 115, 117, 109, 1, 48] : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK: %[[G:.*]] = prim.library_call "all_gather_into_tensor"(%[[A]]) params [2, 1, 48] : (tensor<4x3xf32>) -> tensor<8x3xf32>
// CHECK: prim.library_call "reduce_scatter_tensor"(%[[G]]) params [3, 109, 97, 120, 2, 1, 48] : (tensor<8x3xf32>) -> tensor<4x3xf32>
func.func @collectives(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %a = graph.all_reduce %x {reduce_op = "sum", group_name = "0"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = graph.all_gather_into_tensor %a {group_size = 2 : i64, group_name = "0"} : (tensor<4x3xf32>) -> tensor<8x3xf32>
  %r = graph.reduce_scatter_tensor %g {reduce_op = "max", group_size = 2 : i64, group_name = "0"} : (tensor<8x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
