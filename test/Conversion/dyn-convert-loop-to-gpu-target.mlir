// RUN: dyn-opt %s -dyn-convert-loop-to-gpu | FileCheck %s --check-prefix=H100
// RUN: dyn-opt %s -dyn-convert-loop-to-gpu="sm-count=8" | FileCheck %s --check-prefix=SMALL

// The target description decides how far a long row is split: enough blocks
// to fill every multiprocessor (8 blocks of 256 threads each), at most one
// per 8192 elements. On the default target (132 SMs) the 4 rows of 2^19 take
// 64 chunks each (the length's limit); on a GPU of 8 SMs, 64 blocks fill it:
// 16 chunks a row.
// H100-LABEL: func @few_long_rows
// H100: memref.alloc() : memref<64x4xf32>
// SMALL-LABEL: func @few_long_rows
// SMALL: memref.alloc() : memref<16x4xf32>
func.func @few_long_rows(%x: memref<4x524288xf32>, %y: memref<4xf32>) {
  loop.kernel "rowsum" [4] {
  ^bb0(%i: index):
    %s = loop.reduce add [524288] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<4x524288xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[%i] : memref<4xf32>
  }
  return
}
