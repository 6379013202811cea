// RUN: dyn-opt %s -split-input-file -canonicalize | FileCheck %s

// Loop ops are not erased even when their results look unused: stores are
// side effects. Pure scalar math whose result is unused disappears.
// CHECK-LABEL: func @keeps_stores
// CHECK: loop.kernel
// CHECK-NOT: math.exp
// CHECK: loop.store
func.func @keeps_stores(%x: memref<4xf32>, %y: memref<4xf32>) {
  loop.kernel "k" [4] {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<4xf32>
    %unused = math.exp %v : f32
    loop.store %v, %y[%i] : memref<4xf32>
  }
  return
}

// -----

// A reduction whose value is unused is removed (its body has no side effects).
// CHECK-LABEL: func @dead_reduce
// CHECK-NOT: loop.reduce
func.func @dead_reduce(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  loop.kernel "k" [4] {
  ^bb0(%i: index):
    %s = loop.reduce add [8] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      loop.yield %v : f32
    }
    %c = arith.constant 0.0 : f32
    loop.store %c, %y[%i] : memref<4xf32>
  }
  return
}
