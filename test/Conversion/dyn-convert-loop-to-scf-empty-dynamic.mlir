// RUN: dyn-opt %s -dyn-convert-loop-to-scf | FileCheck %s

// A kernel with a `?` outer dim and an innermost dim of 0 (no points): its
// innermost dim is one chunk of 1, not 0 (the chunk count divided by it;
// found by test/fuzz/fuzz_dyn_opt.py, seed 11 case 1529).
// CHECK-LABEL: func @empty_rows
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%arg2, %[[Z:.*]]) step
// CHECK-NOT: loop.kernel
func.func @empty_rows(%x: memref<?x0x?xf32>, %out: memref<?x0xf32>, %n: index, %m: index) {
  loop.kernel "rowsum" [%n, 0] {
  ^bb0(%i: index, %j: index):
    %s = loop.reduce add [%m] : f32 {
    ^bb0(%k: index):
      %v = loop.load %x[%i, %j, %k] : memref<?x0x?xf32>
      loop.yield %v : f32
    }
    loop.store %s, %out[%i, %j] : memref<?x0xf32>
  }
  return
}

// An outer dim of constant 0 given as a value (zeros of a runtime length that
// folded to 0, a gradient's padding): the chunk is 1, not the threads'
// share of an empty product (a division by zero in the compiler).
// CHECK-LABEL: func @empty_outer
// CHECK: scf.parallel
// CHECK-NOT: loop.kernel
func.func @empty_outer(%out: memref<1x?x8xf32>) {
  %c0 = arith.constant 0 : index
  loop.kernel "zeros" [1, %c0, 8] {
  ^bb0(%i: index, %j: index, %k: index):
    %z = arith.constant 0.0 : f32
    loop.store %z, %out[%i, %j, %k] : memref<1x?x8xf32>
  }
  return
}
