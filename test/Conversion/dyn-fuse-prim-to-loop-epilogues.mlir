// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop -canonicalize | FileCheck %s

// Reduction epilogues: a pointwise kernel over a reduction kernel's domain
// whose last-written read is that kernel's result, at its own point, runs at
// the end of that kernel. A batch norm's training forward: the running mean
// and variance updates run after the channel sums they read (the sums are
// still stored: the normalization and the backward read them), and the
// normalization, over the full shape, keeps a kernel of its own.
// CHECK-LABEL: func @bn_forward
// CHECK-SAME: (%[[X:.*]]: memref<8x16x16x64xf32>, %[[RM:.*]]: memref<64xf32>, %[[RV:.*]]: memref<64xf32>, %[[W:.*]]: memref<64xf32>, %[[S:.*]]: memref<64xf32>, %[[V:.*]]: memref<64xf32>, %[[NRM:.*]]: memref<64xf32>, %[[NRV:.*]]: memref<64xf32>, %[[Y:.*]]: memref<8x16x16x64xf32>)
// CHECK: loop.kernel "reduce_sum_0" [64]
// CHECK: ^bb0(%[[C:.*]]: index):
// CHECK: %[[SUM:.*]] = loop.reduce add [8, 16, 16] : f32
// CHECK: loop.store %[[SUM]], %[[S]][%[[C]]]
// CHECK: %[[MEAN:.*]] = arith.divf %[[SUM]]
// CHECK: arith.mulf %[[MEAN]]
// CHECK: loop.load %[[RM]][%[[C]]]
// CHECK: loop.store %{{.*}}, %[[NRM]][%[[C]]]
// CHECK: loop.kernel "reduce_sum_1" [64]
// CHECK: loop.load %[[S]][%[[C2:.*]]]
// CHECK: %[[VAR:.*]] = loop.reduce add [8, 16, 16] : f32
// CHECK: loop.store %[[VAR]], %[[V]][%[[C2]]]
// CHECK: arith.divf %[[VAR]]
// CHECK: loop.load %[[RV]][%[[C2]]]
// CHECK: loop.store %{{.*}}, %[[NRV]][%[[C2]]]
// CHECK: loop.kernel "mul_2" [8, 16, 16, 64]
// CHECK-NOT: loop.kernel
func.func @bn_forward(%x: tensor<8x16x16x64xf32>, %rm: tensor<64xf32>, %rv: tensor<64xf32>, %w: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8x16x16x64xf32>) {
  %s = prim.reduce_sum %x dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  %n = prim.constant dense<2048.0> : tensor<64xf32>
  %mean = prim.div %s, %n : tensor<64xf32>
  %mb = prim.broadcast_in_dim %mean dims [3] : tensor<64xf32> -> tensor<8x16x16x64xf32>
  %xc = prim.sub %x, %mb : tensor<8x16x16x64xf32>
  %sq = prim.mul %xc, %xc : tensor<8x16x16x64xf32>
  %v = prim.reduce_sum %sq dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  %m = prim.constant dense<0.1> : tensor<64xf32>
  %k = prim.constant dense<0.9> : tensor<64xf32>
  %a1 = prim.mul %mean, %m : tensor<64xf32>
  %a2 = prim.mul %rm, %k : tensor<64xf32>
  %nrm = prim.add %a1, %a2 : tensor<64xf32>
  %var = prim.div %v, %n : tensor<64xf32>
  %b1 = prim.mul %var, %m : tensor<64xf32>
  %b2 = prim.mul %rv, %k : tensor<64xf32>
  %nrv = prim.add %b1, %b2 : tensor<64xf32>
  %eps = prim.constant dense<1.0e-5> : tensor<64xf32>
  %ve = prim.add %var, %eps : tensor<64xf32>
  %r = prim.rsqrt %ve : tensor<64xf32>
  %sc = prim.mul %r, %w : tensor<64xf32>
  %scb = prim.broadcast_in_dim %sc dims [3] : tensor<64xf32> -> tensor<8x16x16x64xf32>
  %y = prim.mul %xc, %scb : tensor<8x16x16x64xf32>
  return %s, %v, %nrm, %nrv, %y : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8x16x16x64xf32>
}

// -----

// An epilogue of sibling reductions reads both sums at its point: it runs
// after the two stores of their one kernel.
// CHECK-LABEL: func @siblings_epilogue
// CHECK: loop.kernel "reduce_sum_0" [64]
// CHECK: %[[A:.*]] = loop.reduce add
// CHECK: %[[B:.*]] = loop.reduce add
// CHECK: loop.store %[[A]], %arg2
// CHECK: loop.store %[[B]], %arg3
// CHECK: %[[P:.*]] = arith.mulf %[[A]], %[[B]]
// CHECK: loop.store %[[P]], %arg4
// CHECK-NOT: loop.kernel
func.func @siblings_epilogue(%x: tensor<8x16x16x64xf32>, %dy: tensor<8x16x16x64xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %p = prim.mul %dy, %x : tensor<8x16x16x64xf32>
  %a = prim.reduce_sum %p dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  %b = prim.reduce_sum %dy dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  %c = prim.mul %a, %b : tensor<64xf32>
  return %a, %b, %c : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// Not at its own point: the kernel reads the sums reversed (a slice with a
// negative stride is not a prim op: a transpose of a square sum), which
// another thread of the reduction kernel computes. It keeps a kernel of its
// own.
// CHECK-LABEL: func @other_point
// CHECK: loop.kernel "reduce_sum_0" [8, 8]
// CHECK: loop.reduce
// CHECK: loop.store
// CHECK-NOT: arith.mulf
// CHECK: loop.kernel "mul_1" [8, 8]
// CHECK: arith.mulf
func.func @other_point(%x: tensor<4x8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %s = prim.reduce_sum %x dims [0] : tensor<4x8x8xf32> -> tensor<8x8xf32>
  %t = prim.transpose %s permutation [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %p = prim.mul %s, %t : tensor<8x8xf32>
  return %s, %p : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// A kernel between writes what the pointwise kernel also reads (%e, from a
// slice of a large argument): it cannot run before that kernel, so it keeps a
// kernel of its own (%e is a result: it does not join %e's kernel either);
// nor does a kernel over another domain than the reduction's (%r's
// broadcast) fuse.
// CHECK-LABEL: func @written_between
// CHECK: loop.kernel "reduce_sum_0" [64]
// CHECK: loop.reduce
// CHECK: loop.store
// CHECK-NOT: loop.store
// CHECK: loop.kernel "exp_1" [64]
// CHECK: loop.kernel "mul_2" [64]
// CHECK: loop.kernel "mul_3" [2, 64]
// CHECK-NOT: loop.kernel
func.func @written_between(%x: tensor<8x16x16x64xf32>, %z: tensor<8192xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<2x64xf32>) {
  %r = prim.reduce_sum %x dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  %y = prim.slice %z start [0] stride [1] : tensor<8192xf32> -> tensor<64xf32>
  %e = prim.exp %y : tensor<64xf32>
  %p = prim.mul %r, %e : tensor<64xf32>
  %rb = prim.broadcast_in_dim %r dims [1] : tensor<64xf32> -> tensor<2x64xf32>
  %q = prim.mul %rb, %rb : tensor<2x64xf32>
  return %r, %e, %p, %q : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<2x64xf32>
}

// -----

// The same with %e computed from a small argument alone: it is computed at the
// function's start (before any kernel), so the product runs as the
// reduction's epilogue.
// CHECK-LABEL: func @small_argument_value_first
// CHECK: loop.kernel "exp_0" [64]
// CHECK: loop.kernel "reduce_sum_1" [64]
// CHECK: loop.reduce
// CHECK: loop.store
// CHECK: arith.mulf
// CHECK: loop.store
// CHECK-NOT: loop.kernel
func.func @small_argument_value_first(%x: tensor<8x16x16x64xf32>, %y: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %r = prim.reduce_sum %x dims [0, 1, 2] : tensor<8x16x16x64xf32> -> tensor<64xf32>
  %e = prim.exp %y : tensor<64xf32>
  %p = prim.mul %r, %e : tensor<64xf32>
  return %r, %e, %p : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// A bf16 sum's epilogue reads it as its buffer holds it, rounded to bf16 (as
// the kernel apart loaded it), while the sum itself is computed in f32.
// CHECK-LABEL: func @bf16_rounded
// CHECK: loop.kernel "reduce_sum_0" [64]
// CHECK: %[[S:.*]] = loop.reduce add [8, 64] : f32
// CHECK: loop.store %{{.*}}, %arg1
// CHECK: %[[T:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK: %[[E:.*]] = arith.extf %[[T]] : bf16 to f32
// CHECK: arith.mulf %[[E]], %[[E]]
// CHECK: loop.store %{{.*}}, %arg2
// CHECK-NOT: loop.kernel
func.func @bf16_rounded(%x: tensor<8x64x64xbf16>) -> (tensor<64xbf16>, tensor<64xbf16>) {
  %s = prim.reduce_sum %x dims [0, 1] : tensor<8x64x64xbf16> -> tensor<64xbf16>
  %q = prim.mul %s, %s : tensor<64xbf16>
  return %s, %q : tensor<64xbf16>, tensor<64xbf16>
}
