// RUN: dyn-opt %s -dyn-graph-to-prim -dyn-prim-to-loop | FileCheck %s
// RUN: dyn-opt %s -dyn-cpu | FileCheck %s --check-prefix=CPU
// RUN: dyn-opt %s -dyn-gpu > %t.mlir
// RUN: %python %S/extract_ptx.py < %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// Random ops on both targets: Philox is integer arithmetic emitted inside the
// kernel that reads it (dropout is one kernel with its input), 32-bit
// products through i64; the seed is a function argument loaded by the
// kernel (round 1 multiplies the offset 0 word by a constant: folded). No
// table, no library: the CPU and the GPU compute the same bits (normal's
// log and cos are each target's math: libdevice on the GPU).
// CHECK-LABEL: func.func @dropout_normal
// CHECK-SAME: %[[SEED:[a-z0-9]+]]: memref<i64>
// CHECK: loop.kernel "select_0" [64, 65]
// CHECK: loop.load %[[SEED]][] : memref<i64>
// CHECK-COUNT-19: arith.muli {{.*}} : i64
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: loop.store {{.*}} : memref<64x65xf32>
// CHECK: loop.kernel
// CHECK: loop.load %[[SEED]][] : memref<i64>
// CHECK: math.log
// CHECK: math.cos
// CHECK: loop.store {{.*}} : memref<1000xf64>
// CHECK-NOT: loop.kernel
// CPU: llvm.func @dropout_normal
// CPU-NOT: prim.
// CPU-NOT: loop.
// PTX: .target sm_90
// PTX: .entry
// PTX: xor.b32
// PTX: mul.lo.s64
func.func @dropout_normal(%x: tensor<64x65xf32>, %seed: tensor<i64>) -> (tensor<64x65xf32>, tensor<1000xf64>) {
  %0 = graph.dropout %x, %seed p 0.25 offset 0 : tensor<64x65xf32>, tensor<i64> -> tensor<64x65xf32>
  %1 = graph.random normal %seed offset 1 a 0.0 b 1.0 : tensor<i64> -> tensor<1000xf64>
  return %0, %1 : tensor<64x65xf32>, tensor<1000xf64>
}
