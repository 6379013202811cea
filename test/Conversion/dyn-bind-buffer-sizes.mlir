// RUN: dyn-opt %s -split-input-file -dyn-bind-buffer-sizes -verify-diagnostics | FileCheck %s

// Each dynamic dim of a buffer argument becomes a trailing index argument;
// the buffer itself a bare pointer (memref<0xT>) viewed as its type, with
// row-major strides (constants while the dims after are).
// CHECK-LABEL: func @rows
// CHECK-SAME: (%[[X:.*]]: memref<0xf32>, %[[Y:.*]]: memref<4xf32>, %[[Z:.*]]: memref<0xf32>, %[[N:.*]]: index, %[[M:.*]]: index, %[[K:.*]]: index)
// CHECK-SAME: dyn.buffer_sizes = array<i64: 0, 0, 2, 0, 2, 1>
// CHECK: memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[N]], 8], strides: [8, 1] : memref<0xf32> to memref<?x8xf32>
// CHECK: %[[S:.*]] = arith.muli %{{.*}}, %[[K]]
// CHECK: memref.reinterpret_cast %[[Z]] to offset: [0], sizes: [%[[M]], %[[K]], 8], strides: [%[[S]], 8, 1] : memref<0xf32> to memref<?x?x8xf32>
func.func @rows(%x: memref<?x8xf32>, %y: memref<4xf32>, %z: memref<?x?x8xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0, %c0] : memref<?x8xf32>
  memref.store %v, %y[%c0] : memref<4xf32>
  memref.store %v, %z[%c0, %c0, %c0] : memref<?x?x8xf32>
  return
}

// -----

// Statically shaped functions and private declarations are left as they are.
// CHECK-LABEL: func @static
// CHECK-SAME: (%{{.*}}: memref<4xf32>)
// CHECK-NOT: dyn.buffer_sizes
// CHECK: func.func private @decl(memref<?xf32>)
func.func @static(%x: memref<4xf32>) {
  return
}
func.func private @decl(memref<?xf32>)

// -----

// The runtime passes contiguous buffers only.
// expected-error @+1 {{buffer argument 0 has dynamic dims and a non-identity layout}}
func.func @strided(%x: memref<?xf32, strided<[2]>>) {
  return
}
