// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop -canonicalize | FileCheck %s

// With `?` dims a GEMM operand that reshapes a buffer is that buffer viewed
// with the runtime sizes (row-major either way): no copy kernel.
// CHECK-LABEL: func @gemm_of_a_reshaped_argument
// CHECK-NOT: loop.kernel
// CHECK: %[[L:.*]] = memref.dim %arg0, %c1
// CHECK: %[[ROWS:.*]] = arith.muli %[[L]], %c4
// CHECK: %[[X:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%[[ROWS]], 64], strides: [64, 1] : memref<4x?x64xf32> to memref<?x64xf32>
// CHECK: loop.matmul %[[X]], %arg1, %arg2
func.func @gemm_of_a_reshaped_argument(%x: tensor<4x?x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x32xf32> {
  %l = prim.dim %x, 1 : tensor<4x?x64xf32>
  %c4 = arith.constant 4 : index
  %n = arith.muli %l, %c4 : index
  %0 = prim.reshape %x sizes(%n) : tensor<4x?x64xf32> -> tensor<?x64xf32>
  %1 = prim.dot_general %0, %w batch [], [] contract [1], [0] : tensor<?x64xf32>, tensor<64x32xf32> -> tensor<?x32xf32>
  return %1 : tensor<?x32xf32>
}

// -----

// A concatenation along a static dim (the cotangent of q, k and v sliced from
// one projection) is read where it is used, as a static graph's pads are: the
// kernel selects the input whose range holds the index, each read at its
// clamped shifted index. No copy kernel per input, no buffer for the
// concatenation.
// CHECK-LABEL: func @concatenation_read_in_place
// CHECK-NOT: memref.alloc
// CHECK: loop.kernel "exp_0" [4, %{{.*}}, 24]
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index, %[[K:.*]]: index):
// CHECK: arith.cmpi sge, %[[K]], %c0
// CHECK: arith.cmpi sle, %[[K]], %c7
// CHECK: %[[FIRST:.*]] = arith.andi
// CHECK: %[[A:.*]] = loop.load %arg0[%[[I]], %[[J]], %{{.*}}] : memref<4x?x8xf32>
// CHECK: arith.subi %[[K]], %c8
// CHECK: %[[B:.*]] = loop.load %arg1[%[[I]], %[[J]], %{{.*}}] : memref<4x?x16xf32>
// CHECK: %[[V:.*]] = arith.select %[[FIRST]], %[[A]], %[[B]] : f32
// CHECK: math.exp %[[V]]
// CHECK-NOT: loop.kernel
func.func @concatenation_read_in_place(%a: tensor<4x?x8xf32>, %b: tensor<4x?x16xf32>) -> tensor<4x?x24xf32> {
  %0 = prim.concatenate %a, %b dim 2 : tensor<4x?x8xf32>, tensor<4x?x16xf32> -> tensor<4x?x24xf32>
  %1 = prim.exp %0 : tensor<4x?x24xf32>
  return %1 : tensor<4x?x24xf32>
}

// -----

// q, k and v sliced from one projection with `?` rows and viewed as heads are
// read in place by a strided call, as with static sizes: views whose batch
// stride is the runtime length times the projection's width (3 x 64), at the
// slices' constant offsets.
// CHECK-LABEL: func @heads_sliced_from_a_projection
// CHECK: %[[L:.*]] = memref.dim %arg0, %c1
// CHECK: %[[BATCH:.*]] = arith.muli %{{.*}}, %c192
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [2, 4, %{{.*}}, 16], strides: [%[[BATCH]], 16, 192, 1]
// CHECK: %[[K:.*]] = memref.reinterpret_cast %{{.*}} to offset: [64], sizes: [2, 4, %{{.*}}, 16], strides: [%{{.*}}, 16, 192, 1] : memref<?x192xf32> to memref<2x4x?x16xf32, strided<[?, 16, 192, 1], offset: 64>>
// CHECK: loop.library_call "attention_lse" ins(%{{.*}}, %[[K]], %{{.*}} : memref<2x4x?x16xf32, strided<[?, 16, 192, 1]>>, memref<2x4x?x16xf32, strided<[?, 16, 192, 1], offset: 64>>, memref<2x4x?x16xf32, strided<[?, 16, 192, 1], offset: 128>>)
// CHECK-NOT: loop.kernel "transpose
func.func @heads_sliced_from_a_projection(%x: tensor<2x?x64xf32>, %w: tensor<64x192xf32>) -> tensor<2x4x?x16xf32> {
  %l = prim.dim %x, 1 : tensor<2x?x64xf32>
  %c2 = arith.constant 2 : index
  %n = arith.muli %l, %c2 : index
  %x2 = prim.reshape %x sizes(%n) : tensor<2x?x64xf32> -> tensor<?x64xf32>
  %0 = prim.dot_general %x2, %w batch [], [] contract [1], [0] : tensor<?x64xf32>, tensor<64x192xf32> -> tensor<?x192xf32>
  %1 = prim.reshape %0 sizes(%l) : tensor<?x192xf32> -> tensor<2x?x192xf32>
  %4 = prim.slice %1 start [0, 0, 0] stride [1, 1, 1] : tensor<2x?x192xf32> -> tensor<2x?x64xf32>
  %5 = prim.slice %1 start [0, 0, 64] stride [1, 1, 1] : tensor<2x?x192xf32> -> tensor<2x?x64xf32>
  %6 = prim.slice %1 start [0, 0, 128] stride [1, 1, 1] : tensor<2x?x192xf32> -> tensor<2x?x64xf32>
  %7 = prim.reshape %4 sizes(%l) : tensor<2x?x64xf32> -> tensor<2x?x4x16xf32>
  %8 = prim.transpose %7 permutation [0, 2, 1, 3] : tensor<2x?x4x16xf32> -> tensor<2x4x?x16xf32>
  %9 = prim.reshape %5 sizes(%l) : tensor<2x?x64xf32> -> tensor<2x?x4x16xf32>
  %10 = prim.transpose %9 permutation [0, 2, 1, 3] : tensor<2x?x4x16xf32> -> tensor<2x4x?x16xf32>
  %11 = prim.reshape %6 sizes(%l) : tensor<2x?x64xf32> -> tensor<2x?x4x16xf32>
  %12 = prim.transpose %11 permutation [0, 2, 1, 3] : tensor<2x?x4x16xf32> -> tensor<2x4x?x16xf32>
  %r:3 = prim.library_call "attention_lse"(%8, %10, %12) params [0, 0, 4598175219545276416] {strided} : (tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>) -> (tensor<2x4x?x16xf32>, tensor<2x4x?xf32>, tensor<2xi64>)
  return %r#0 : tensor<2x4x?x16xf32>
}

// -----

// A residual stream (a sum of eight `?` x 768 tensors) that three kernels
// read gets a buffer with `?` dims as with static ones (a `?` dim weighs as
// 256 elements in the bytes compared): one kernel adds the eight tensors,
// the three read its result, where each would read all eight.
// CHECK-LABEL: func @residual_stream_read_thrice
// CHECK: %[[S:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?x768xf32>
// CHECK: loop.kernel "add_{{[0-9]+}}" [%{{.*}}, 768]
// CHECK-COUNT-8: loop.load %arg
// CHECK: loop.store %{{.*}}, %[[S]]
// CHECK-NOT: loop.load %arg7
func.func @residual_stream_read_thrice(%a0: tensor<?x768xf32>, %a1: tensor<?x768xf32>, %a2: tensor<?x768xf32>,
                                       %a3: tensor<?x768xf32>, %a4: tensor<?x768xf32>, %a5: tensor<?x768xf32>,
                                       %a6: tensor<?x768xf32>, %a7: tensor<?x768xf32>)
    -> (tensor<768xf32>, tensor<?x768xf32>, tensor<?x768xf32>) {
  %0 = prim.add %a0, %a1 : tensor<?x768xf32>
  %1 = prim.add %0, %a2 : tensor<?x768xf32>
  %2 = prim.add %1, %a3 : tensor<?x768xf32>
  %3 = prim.add %2, %a4 : tensor<?x768xf32>
  %4 = prim.add %3, %a5 : tensor<?x768xf32>
  %5 = prim.add %4, %a6 : tensor<?x768xf32>
  %6 = prim.add %5, %a7 : tensor<?x768xf32>
  %r = prim.reduce_sum %6 dims [0] : tensor<?x768xf32> -> tensor<768xf32>
  %e = prim.exp %6 : tensor<?x768xf32>
  %n = prim.neg %6 : tensor<?x768xf32>
  return %r, %e, %n : tensor<768xf32>, tensor<?x768xf32>, tensor<?x768xf32>
}

// -----

// Attention whose one reader is the transpose back to [B, L, H, D] (heads
// merged for the output projection) writes into that transpose's buffer
// through a view with runtime strides ([L * 64, 16, 64, 1] read through the
// permutation), as with static sizes: no copy kernel.
// CHECK-LABEL: func @attention_into_its_transpose
// CHECK-NOT: loop.kernel
// CHECK: %[[V:.*]] = memref.reinterpret_cast %arg3 to offset: [0], sizes: [2, 4, %{{.*}}, 16], strides: [%{{.*}}, 16, 64, 1] : memref<2x?x4x16xf32> to memref<2x4x?x16xf32, strided<[?, 16, 64, 1]>>
// CHECK: loop.attention %arg0, %arg1, %arg2, %[[V]]
// CHECK-NOT: loop.kernel
// CHECK: return
func.func @attention_into_its_transpose(%q: tensor<2x4x?x16xf32>, %k: tensor<2x4x?x16xf32>, %v: tensor<2x4x?x16xf32>)
    -> tensor<2x?x4x16xf32> {
  %a = prim.attention %q, %k, %v causal scale 0.25 : tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32> -> tensor<2x4x?x16xf32>
  %t = prim.transpose %a permutation [0, 2, 1, 3] : tensor<2x4x?x16xf32> -> tensor<2x?x4x16xf32>
  return %t : tensor<2x?x4x16xf32>
}
