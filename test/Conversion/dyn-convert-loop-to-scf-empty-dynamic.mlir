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
