// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop | FileCheck %s

// An output that updates an input (an optimizer's parameter, p - g * g),
// computed by one kernel point by point from it: its buffer may be the
// input's (dyn.in_place: output 0 is input 0).
// CHECK-LABEL: func @update
// CHECK-SAME: dyn.in_place = array<i64: 0, -1>
func.func @update(%p: tensor<4x8xf32>, %g: tensor<4x8xf32>)
    -> (tensor<4x8xf32> {dyn.updates_arg = 0 : i64}, tensor<4x8xf32>) {
  %0 = prim.mul %g, %g : tensor<4x8xf32>
  %1 = prim.sub %p, %0 : tensor<4x8xf32>
  %2 = prim.add %g, %g : tensor<4x8xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The input's old value is read by a kernel after the one writing the
// update: the update gets a buffer of its own.
// CHECK-LABEL: func @read_after
// CHECK-NOT: dyn.in_place
// CHECK: return
func.func @read_after(%p: tensor<4x8xf32>, %g: tensor<4x8xf32>)
    -> (tensor<4x8xf32> {dyn.updates_arg = 0 : i64}, tensor<4x8xf32>) {
  %0 = prim.sub %p, %g : tensor<4x8xf32>
  %1 = prim.reduce_sum %p dims [0] : tensor<4x8xf32> -> tensor<8xf32>
  %2 = prim.broadcast_in_dim %1 dims [1] : tensor<8xf32> -> tensor<4x8xf32>
  %3 = prim.mul %0, %2 : tensor<4x8xf32>
  return %0, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An update read at another point than the one written (a transpose): not
// in place.
// CHECK-LABEL: func @transposed
// CHECK-NOT: dyn.in_place
// CHECK: return
func.func @transposed(%p: tensor<8x8xf32>) -> (tensor<8x8xf32> {dyn.updates_arg = 0 : i64}) {
  %0 = prim.transpose %p permutation [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %1 = prim.add %p, %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
