// RUN: dyn-opt %s -dyn-graph-to-prim -dyn-prim-to-loop-gpu -dyn-convert-loop-to-gpu | FileCheck %s
// RUN: dyn-opt %s -dyn-gpu | FileCheck %s --check-prefix=PTX

// The reduction, scan and data-movement families lower to the GPU path as they
// do to the CPU one: argmax is one launch with two reductions split over a
// warp's threads (the row read once, into registers), logcumsumexp one launch
// with a block per (row, position) and two reductions (the max, then the sum
// of exponentials) over the row read once, flip one pointwise launch reading
// the mirrored index.
// CHECK-LABEL: func.func @families
// CHECK: gpu.launch
// CHECK: %[[X:.*]] = loop.load
// CHECK: gpu.all_reduce maximumf
// CHECK-NOT: loop.load
// CHECK: arith.cmpf oeq, %[[X]]
// CHECK: gpu.all_reduce minsi
// CHECK: loop.store {{.*}} : memref<4xi64>
// CHECK: gpu.launch
// CHECK-NOT: scf.for
// CHECK: gpu.all_reduce maximumf
// CHECK: math.exp
// CHECK: gpu.all_reduce add
// CHECK-NOT: scf.for
// CHECK: loop.store {{.*}} : memref<4x6xf32>
// CHECK: gpu.launch
// CHECK: arith.subi
// CHECK: loop.store {{.*}} : memref<4x6xf32>
// CHECK-NOT: loop.kernel
// PTX: gpu.binary
func.func @families(%x: tensor<4x6xf32>) -> (tensor<4xi64>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %0 = graph.argmax %x dim 1 : tensor<4x6xf32> -> tensor<4xi64>
  %1 = graph.cumulative logsumexp %x dim 1 : tensor<4x6xf32> -> tensor<4x6xf32>
  %2 = graph.flip %x dims [0] : tensor<4x6xf32> -> tensor<4x6xf32>
  return %0, %1, %2 : tensor<4xi64>, tensor<4x6xf32>, tensor<4x6xf32>
}
