// RUN: dyn-opt %s -dyn-convert-loop-to-scf=lower-library-calls=false | FileCheck %s

// The GPU pipeline leaves library calls to the launch plan; kernels around
// them are lowered as usual.
// CHECK-LABEL: func @keep
// CHECK: loop.matmul
// CHECK: scf.parallel
// CHECK: loop.attention
// CHECK-NOT: dyn_library_call
func.func @keep(%a: memref<4x8xf32>, %b: memref<8x2xf32>, %c: memref<4x2xf32>, %q: memref<2x8x16xf16>, %o: memref<2x8x16xf16>) {
  loop.matmul %a, %b, %c : memref<4x8xf32>, memref<8x2xf32>, memref<4x2xf32>
  loop.kernel "k" [4, 2] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %c[%i, %j] : memref<4x2xf32>
    loop.store %v, %c[%i, %j] : memref<4x2xf32>
  }
  loop.attention %q, %q, %q, %o causal scale 0.25 : memref<2x8x16xf16>, memref<2x8x16xf16>, memref<2x8x16xf16>, memref<2x8x16xf16>
  return
}
