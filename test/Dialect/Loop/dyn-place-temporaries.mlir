// RUN: dyn-opt %s -split-input-file -dyn-place-temporaries | FileCheck %s

// A chain of GEMMs whose operands are temporaries: each is allocated just
// before the kernel that writes it and freed after the GEMM that reads it
// last, so at most two are held at once (not all four).
// CHECK-LABEL: func @chain
// CHECK-NEXT: %[[A:.*]] = memref.alloc()
// CHECK-NEXT: loop.kernel "exp_0"
// CHECK: %[[B:.*]] = memref.alloc()
// CHECK-NEXT: loop.matmul %[[A]], %{{.*}}, %[[B]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: %[[C:.*]] = memref.alloc()
// CHECK-NEXT: loop.kernel "exp_1"
// CHECK: memref.dealloc %[[B]]
// CHECK-NEXT: %[[D:.*]] = memref.alloc()
// CHECK-NEXT: loop.matmul %[[C]], %{{.*}}, %[[D]]
// CHECK-NEXT: memref.dealloc %[[C]]
// CHECK-NEXT: loop.kernel "sum_2"
// CHECK: memref.dealloc %[[D]]
// CHECK-NEXT: return
func.func @chain(%x: memref<8x8xf32>, %w: memref<8x8xf32>, %out: memref<f32>) {
  %a = memref.alloc() : memref<8x8xf32>
  %b = memref.alloc() : memref<8x8xf32>
  %c = memref.alloc() : memref<8x8xf32>
  %d = memref.alloc() : memref<8x8xf32>
  loop.kernel "exp_0" [8, 8] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : memref<8x8xf32>
    %e = math.exp %v : f32
    loop.store %e, %a[%i, %j] : memref<8x8xf32>
  }
  loop.matmul %a, %w, %b : memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>
  loop.kernel "exp_1" [8, 8] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %b[%i, %j] : memref<8x8xf32>
    %e = math.exp %v : f32
    loop.store %e, %c[%i, %j] : memref<8x8xf32>
  }
  loop.matmul %c, %w, %d : memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>
  loop.kernel "sum_2" [] {
    %s = loop.reduce add [8, 8] : f32 {
    ^bb0(%i: index, %j: index):
      %v = loop.load %d[%i, %j] : memref<8x8xf32>
      loop.yield %v : f32
    }
    loop.store %s, %out[] : memref<f32>
  }
  memref.dealloc %a : memref<8x8xf32>
  memref.dealloc %b : memref<8x8xf32>
  memref.dealloc %c : memref<8x8xf32>
  memref.dealloc %d : memref<8x8xf32>
  return
}

// -----

// A temporary read through a view lives until the view's last reader; one
// with `?` dims is allocated after the sizes it needs, where it is first used.
// CHECK-LABEL: func @view_and_dynamic
// CHECK: memref.dim
// CHECK: loop.kernel "fill"
// CHECK: %[[T:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK-NEXT: %[[V:.*]] = memref.collapse_shape %[[T]]
// CHECK-NEXT: loop.kernel "write"
// CHECK: loop.kernel "read"
// CHECK: memref.dealloc %[[T]]
// CHECK-NEXT: loop.kernel "after"
func.func @view_and_dynamic(%x: memref<?x4xf32>, %y: memref<?xf32>, %z: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x4xf32>
  %t = memref.alloc(%n) : memref<?x4xf32>
  loop.kernel "fill" [4] {
  ^bb0(%i: index):
    %v = loop.load %x[%c0, %i] : memref<?x4xf32>
    loop.store %v, %z[%i] : memref<4xf32>
  }
  %flat = memref.collapse_shape %t [[0, 1]] : memref<?x4xf32> into memref<?xf32>
  loop.kernel "write" [%n, 4] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : memref<?x4xf32>
    loop.store %v, %t[%i, %j] : memref<?x4xf32>
  }
  loop.kernel "read" [%n] {
  ^bb0(%i: index):
    %v = loop.load %flat[%i] : memref<?xf32>
    loop.store %v, %y[%i] : memref<?xf32>
  }
  loop.kernel "after" [4] {
  ^bb0(%i: index):
    %v = loop.load %z[%i] : memref<4xf32>
    loop.store %v, %z[%i] : memref<4xf32>
  }
  memref.dealloc %t : memref<?x4xf32>
  return
}

// -----

// A temporary freed inside a region, or never freed, stays where it is.
// CHECK-LABEL: func @left_alone
// CHECK-NEXT: %[[T:.*]] = memref.alloc()
// CHECK-NEXT: memref.alloc()
// CHECK-NEXT: loop.kernel "first"
func.func @left_alone(%x: memref<4xf32>, %p: i1) {
  %t = memref.alloc() : memref<4xf32>
  %u = memref.alloc() : memref<4xf32>
  loop.kernel "first" [4] {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<4xf32>
    loop.store %v, %x[%i] : memref<4xf32>
  }
  loop.kernel "second" [4] {
  ^bb0(%i: index):
    %v = loop.load %t[%i] : memref<4xf32>
    loop.store %v, %u[%i] : memref<4xf32>
  }
  scf.if %p {
    memref.dealloc %t : memref<4xf32>
  }
  return
}
