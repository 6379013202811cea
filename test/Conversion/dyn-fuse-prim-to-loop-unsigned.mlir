// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop | FileCheck %s

// uint8 (ui8) is stored as i8 and computed in i32: loads zero-extend, each
// op's result is masked into [0, 255] (eager's uint8 wraps), the store
// truncates. The compare after the add sees the wrapped sum.
// CHECK-LABEL: func @wrap_then_compare
// CHECK-SAME: (%[[A:.*]]: memref<64xi8>, %[[B:.*]]: memref<64xi8>, %[[OUT:.*]]: memref<64xi1>)
// CHECK: %[[LA:.*]] = loop.load %[[A]]
// CHECK: arith.extui %[[LA]] : i8 to i32
// CHECK: %[[SUM:.*]] = arith.addi
// CHECK: %[[WRAPPED:.*]] = arith.andi %[[SUM]], %{{.*}} : i32
// CHECK: arith.cmpi sgt, %[[WRAPPED]]
// CHECK: loop.store %{{.*}}, %[[OUT]]
func.func @wrap_then_compare(%a: tensor<64xui8>, %b: tensor<64xui8>) -> tensor<64xi1> {
  %0 = prim.add %a, %b : tensor<64xui8>
  %c = prim.constant dense<100> : tensor<64xui8>
  %1 = prim.gt %0, %c : tensor<64xui8> -> tensor<64xi1>
  return %1 : tensor<64xi1>
}

// -----

// A ui8 result is stored truncated to i8.
// CHECK-LABEL: func @convert_to_ui8
// CHECK-SAME: (%{{.*}}: memref<8xf32>, %[[OUT:.*]]: memref<8xi8>)
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.andi
// CHECK: %[[T:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK: loop.store %[[T]], %[[OUT]]
func.func @convert_to_ui8(%x: tensor<8xf32>) -> tensor<8xui8> {
  %0 = prim.convert_element_type %x : tensor<8xf32> -> tensor<8xui8>
  return %0 : tensor<8xui8>
}

// -----

// Shifts by the type's width or more (or by a negative amount, unsigned >=):
// 0 to the left, the sign fill to the right.
// CHECK-LABEL: func @shifts
// CHECK: %[[W:.*]] = arith.constant 8 : i8
// CHECK: %[[OUTL:.*]] = arith.cmpi uge, %[[N:.*]], %[[W]] : i8
// CHECK: %[[SHL:.*]] = arith.shli
// CHECK: arith.select %[[OUTL]], %{{.*}}, %[[SHL]]
// CHECK: arith.cmpi uge
// CHECK: %[[AMT:.*]] = arith.select
// CHECK: arith.shrsi %{{.*}}, %[[AMT]] : i8
func.func @shifts(%x: tensor<16xi8>, %n: tensor<16xi8>) -> (tensor<16xi8>, tensor<16xi8>) {
  %0 = prim.shl %x, %n : tensor<16xi8>
  %1 = prim.shr %x, %n : tensor<16xi8>
  return %0, %1 : tensor<16xi8>, tensor<16xi8>
}

// -----

// A dense ui8 constant lives in an i8 global with the same bits (200 is -56).
// CHECK-LABEL: func @dense_constant
// CHECK: memref.get_global @[[G:.*]] : memref<2xi8>
// CHECK: memref.global "private" constant @[[G]] : memref<2xi8> = dense<[-56, 7]>
func.func @dense_constant(%a: tensor<2xui8>) -> tensor<2xui8> {
  %c = prim.constant dense<[200, 7]> : tensor<2xui8>
  %0 = prim.add %a, %c : tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

// A library call's buffers are signless: a uint8 GEMM (eager's CPU kernel
// wraps it in uint8) lists its uint8 buffers, which the runtime passes on
// as DYN_U8, and a call by name lists those of its operands and results.
// CHECK-LABEL: func @ui8_library_calls
// CHECK: loop.matmul {{.*}} {unsigned_buffers = array<i64: 0, 1, 2>} : memref<4x4xi8>, memref<4x4xi8>, memref<4x4xi8>
// CHECK: loop.library_call "sort" ins({{.*}} : memref<4x4xi8>) outs({{.*}} : memref<4x4xi8>, memref<4x4xi64>) params [1, 0, 0] {unsigned_buffers = array<i64: 0, 1>}
func.func @ui8_library_calls(%a: tensor<4x4xui8>, %b: tensor<4x4xui8>) -> (tensor<4x4xui8>, tensor<4x4xi64>) {
  %0 = prim.dot_general %a, %b batch [], [] contract [1], [0] : tensor<4x4xui8>, tensor<4x4xui8> -> tensor<4x4xui8>
  %1:2 = prim.library_call "sort" (%0) params [1, 0, 0] : (tensor<4x4xui8>) -> (tensor<4x4xui8>, tensor<4x4xi64>)
  return %1#0, %1#1 : tensor<4x4xui8>, tensor<4x4xi64>
}
