// RUN: dyn-opt %s -dyn-fuse-prim-to-loop -canonicalize | FileCheck %s

// A convolution with a `?` batch: its result buffer takes the input's batch,
// read from the input buffer; the max pooling after it (a pad and strided
// slices of the static pooled dims) is one kernel over the runtime batch.
// CHECK-LABEL: func @conv_pool
// CHECK-SAME: (%[[X:.*]]: memref<?x4x8x8xf32>, %[[W:.*]]: memref<8x4x3x3xf32>, %[[Y:.*]]: memref<?x8x4x8xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[X]], %c0 : memref<?x4x8x8xf32>
// CHECK: %[[C:.*]] = memref.alloc(%[[N]]) {{.*}} : memref<?x8x8x8xf32>
// CHECK: loop.convolution %[[X]], %[[W]], %[[C]] stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : memref<?x4x8x8xf32>, memref<8x4x3x3xf32>, memref<?x8x8x8xf32>
// CHECK: %[[M:.*]] = memref.dim %[[X]], %c0
// CHECK: loop.kernel "max_0" [%[[M]], 8, 4, 8]
// CHECK: loop.load %[[C]]
// CHECK: arith.maximumf
// CHECK: loop.store %{{.*}}, %[[Y]]
func.func @conv_pool(%x: tensor<?x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<?x8x4x8xf32> {
  %0 = prim.convolution %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<?x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<?x8x8x8xf32>
  %1 = prim.pad %0 low [0, 0, 1, 0] high [0, 0, 0, 0] value 0xFFF0000000000000 : tensor<?x8x8x8xf32> -> tensor<?x8x9x8xf32>
  %2 = prim.slice %1 start [0, 0, 0, 0] stride [1, 1, 2, 1] : tensor<?x8x9x8xf32> -> tensor<?x8x4x8xf32>
  %3 = prim.slice %1 start [0, 0, 1, 0] stride [1, 1, 2, 1] : tensor<?x8x9x8xf32> -> tensor<?x8x4x8xf32>
  %4 = prim.max %2, %3 : tensor<?x8x4x8xf32>
  return %4 : tensor<?x8x4x8xf32>
}

// Attention with its log-sum-exp over a `?` length L: the result buffer takes
// the query's rows and the value's columns, the log-sum-exp [B, H, ceil32(L)]
// the query's length rounded up to a multiple of 32 (prim::libraryResultDim),
// computed in the buffer function.
// CHECK-LABEL: func @attention_lse_of_a_symbolic_length
// CHECK-SAME: (%[[Q:.*]]: memref<2x4x?x16xf32>, %[[K:.*]]: memref<2x4x?x16xf32>, %[[V:.*]]: memref<2x4x?x8xf32>, %[[O:.*]]: memref<2x4x?x8xf32>)
// CHECK: %[[L:.*]] = memref.dim %[[Q]], %c2
// CHECK: %[[CHUNKS:.*]] = arith.ceildivui %[[L]], %c32
// CHECK: %[[LENGTH:.*]] = arith.muli %[[CHUNKS]], %c32
// CHECK: %[[LSE:.*]] = memref.alloc(%[[LENGTH]]) {{.*}} : memref<2x4x?xf32>
// CHECK: loop.library_call "attention_lse" ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) outs(%[[O]], %[[LSE]], %{{.*}} : memref<2x4x?x8xf32>, memref<2x4x?xf32>, memref<2xi64>)
func.func @attention_lse_of_a_symbolic_length(%q: tensor<2x4x?x16xf32>, %k: tensor<2x4x?x16xf32>, %v: tensor<2x4x?x8xf32>) -> tensor<2x4x?x8xf32> {
  %r:3 = prim.library_call "attention_lse"(%q, %k, %v) params [0, 0, 4598175219545276416] : (tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x8xf32>) -> (tensor<2x4x?x8xf32>, tensor<2x4x?xf32>, tensor<2xi64>)
  return %r#0 : tensor<2x4x?x8xf32>
}
