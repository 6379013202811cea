// RUN: dyn-opt %s -dyn-graph-to-prim -dyn-prim-to-loop -dyn-convert-loop-to-gpu | FileCheck %s
// RUN: dyn-opt %s -dyn-graph-to-prim -dyn-prim-to-loop -dyn-loop-to-ptx | FileCheck %s --check-prefix=PTX

// The reduction, scan and data-movement families lower to the GPU path as they
// do to the CPU one: argmax is one launch with two reductions split over a
// warp's threads, logcumsumexp one launch per (row, position) with two
// inner reductions (the max, then the sum of exponentials), flip one
// pointwise launch reading the mirrored index.
// CHECK-LABEL: func.func @families
// CHECK: gpu.launch
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (f32)
// CHECK: gpu.all_reduce maximumf
// CHECK: scf.for {{.*}} iter_args({{.*}} = %c9223372036854775807_i64) -> (i64)
// CHECK: gpu.all_reduce minsi
// CHECK: loop.store {{.*}} : memref<4xi64>
// CHECK: gpu.launch
// CHECK-COUNT-2: scf.for {{.*}} -> (f32)
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
