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
