// RUN: dyn-opt %s -split-input-file -dyn-reuse-buffers | FileCheck %s

// A convolution's result, normalized and rectified point by point by the
// kernel that reads it for the last time: the kernel writes over it, and the
// next one reuses it again (one activation-sized buffer instead of three).
// CHECK-LABEL: func @conv_bn_relu
// CHECK: %[[A:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK-NOT: memref.alloc
// CHECK: loop.library_call "relu6"
// CHECK: loop.kernel "bn_relu"
// CHECK: loop.load %[[A]]
// CHECK: loop.store %{{.*}}, %[[A]]
// CHECK: loop.kernel "scale"
// CHECK: loop.load %[[A]]
// CHECK: loop.store %{{.*}}, %[[A]]
// CHECK: loop.kernel "out"
// CHECK: loop.load %[[A]]
// CHECK: memref.dealloc %[[A]]
// CHECK-NOT: memref.dealloc
func.func @conv_bn_relu(%x: memref<2x4xf32>, %y: memref<2x4xf32>) {
  %a = memref.alloc() : memref<2x4xf32>
  %b = memref.alloc() : memref<2x4xf32>
  %c = memref.alloc() : memref<2x4xf32>
  loop.library_call "relu6" ins(%x : memref<2x4xf32>) outs(%a : memref<2x4xf32>) params []
  loop.kernel "bn_relu" [2, 4] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %a[%i, %j] : memref<2x4xf32>
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %z : f32
    loop.store %r, %b[%i, %j] : memref<2x4xf32>
  }
  loop.kernel "scale" [2, 4] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %b[%i, %j] : memref<2x4xf32>
    %s = arith.mulf %v, %v : f32
    loop.store %s, %c[%i, %j] : memref<2x4xf32>
  }
  loop.kernel "out" [2, 4] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %c[%i, %j] : memref<2x4xf32>
    loop.store %v, %y[%i, %j] : memref<2x4xf32>
  }
  memref.dealloc %a : memref<2x4xf32>
  memref.dealloc %b : memref<2x4xf32>
  memref.dealloc %c : memref<2x4xf32>
  return
}

// -----

// Not reused: an input read after the kernel (%b does not take %a, which
// the next kernel reads), one read at another point (%c does not take %b,
// read transposed, but takes %a, read for the last time at its own point), one
// read after the kernel's store (%d does not take %c), another type (%e, %f).
// CHECK-LABEL: func @kept
// CHECK: %[[A:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK-NEXT: %[[D:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK-NEXT: memref.alloc() : memref<4x4xf16>
// CHECK-NEXT: memref.alloc() : memref<4x4xf32>
// CHECK-NEXT: loop.library_call
// CHECK: loop.kernel "read_again_later"
// CHECK: loop.store %{{.*}}, %[[B]]
// CHECK: loop.kernel "transposed"
// CHECK: loop.store %{{.*}}, %[[A]]
// CHECK: loop.kernel "store_first"
// CHECK: loop.store %{{.*}}, %[[D]]
func.func @kept(%x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %a = memref.alloc() : memref<4x4xf32>
  %b = memref.alloc() : memref<4x4xf32>
  %c = memref.alloc() : memref<4x4xf32>
  %d = memref.alloc() : memref<4x4xf32>
  %e = memref.alloc() : memref<4x4xf16>
  %f = memref.alloc() : memref<4x4xf32>
  loop.library_call "relu6" ins(%x : memref<4x4xf32>) outs(%a : memref<4x4xf32>) params []
  loop.kernel "read_again_later" [4, 4] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %a[%i, %j] : memref<4x4xf32>
    loop.store %v, %b[%i, %j] : memref<4x4xf32>
  }
  loop.kernel "transposed" [4, 4] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %b[%j, %i] : memref<4x4xf32>
    %w = loop.load %a[%i, %j] : memref<4x4xf32>
    %s = arith.addf %v, %w : f32
    loop.store %s, %c[%i, %j] : memref<4x4xf32>
  }
  loop.kernel "store_first" [4, 4] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : memref<4x4xf32>
    loop.store %v, %d[%i, %j] : memref<4x4xf32>
    %w = loop.load %c[%i, %j] : memref<4x4xf32>
    loop.store %w, %y[%i, %j] : memref<4x4xf32>
  }
  loop.kernel "narrow" [4, 4] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %d[%i, %j] : memref<4x4xf32>
    %h = arith.truncf %v : f32 to f16
    loop.store %h, %e[%i, %j] : memref<4x4xf16>
  }
  loop.kernel "widen" [4, 4] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %e[%i, %j] : memref<4x4xf16>
    %h = arith.extf %v : f16 to f32
    loop.store %h, %f[%i, %j] : memref<4x4xf32>
  }
  loop.kernel "use" [4, 4] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %f[%i, %j] : memref<4x4xf32>
    %w = loop.load %d[%i, %j] : memref<4x4xf32>
    %s = arith.addf %v, %w : f32
    loop.store %s, %y[%i, %j] : memref<4x4xf32>
  }
  memref.dealloc %a : memref<4x4xf32>
  memref.dealloc %b : memref<4x4xf32>
  memref.dealloc %c : memref<4x4xf32>
  memref.dealloc %d : memref<4x4xf32>
  memref.dealloc %e : memref<4x4xf16>
  memref.dealloc %f : memref<4x4xf32>
  return
}

// -----

// A kernel writing an output point by point from a temporary it reads for
// the last time (a GEMM's product plus a bias): the GEMM writes the output and
// the kernel adds in place; also through a row-major view of the output. An
// output that `dyn.in_place` makes an input's buffer keeps its temporary.
// CHECK-LABEL: func @into_outputs
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8xf32>, %[[O1:.*]]: memref<4x8xf32>, %[[O2:.*]]: memref<2x2x8xf32>, %[[O3:.*]]: memref<4x8xf32>)
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[O2]]
// CHECK: %[[T3:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK-NOT: memref.alloc
// CHECK: loop.library_call "relu6" ins(%[[X]] : memref<4x8xf32>) outs(%[[O1]] : memref<4x8xf32>)
// CHECK: loop.library_call "relu6" ins(%[[X]] : memref<4x8xf32>) outs(%[[V]] : memref<4x8xf32>)
// CHECK: loop.library_call "relu6" ins(%[[X]] : memref<4x8xf32>) outs(%[[T3]] : memref<4x8xf32>)
// CHECK: loop.kernel "bias1"
// CHECK: loop.load %[[O1]]
// CHECK: loop.store %{{.*}}, %[[O1]]
// CHECK: loop.kernel "bias2"
// CHECK: loop.load %[[V]]
// CHECK: loop.store %{{.*}}, %[[V]]
// CHECK: loop.kernel "bias3"
// CHECK: loop.load %[[T3]]
// CHECK: loop.store %{{.*}}, %[[O3]]
func.func @into_outputs(%x: memref<4x8xf32>, %b: memref<8xf32>, %o1: memref<4x8xf32>, %o2: memref<2x2x8xf32>,
                        %o3: memref<4x8xf32>) attributes {dyn.num_inputs = 2 : i64, dyn.in_place = array<i64: -1, -1, 0>} {
  %t1 = memref.alloc() : memref<4x8xf32>
  %t2 = memref.alloc() : memref<4x8xf32>
  %t3 = memref.alloc() : memref<4x8xf32>
  loop.library_call "relu6" ins(%x : memref<4x8xf32>) outs(%t1 : memref<4x8xf32>) params []
  loop.library_call "relu6" ins(%x : memref<4x8xf32>) outs(%t2 : memref<4x8xf32>) params []
  loop.library_call "relu6" ins(%x : memref<4x8xf32>) outs(%t3 : memref<4x8xf32>) params []
  loop.kernel "bias1" [4, 8] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %t1[%i, %j] : memref<4x8xf32>
    %c = loop.load %b[%j] : memref<8xf32>
    %s = arith.addf %v, %c : f32
    loop.store %s, %o1[%i, %j] : memref<4x8xf32>
  }
  %view = memref.reinterpret_cast %o2 to offset: [0], sizes: [4, 8], strides: [8, 1] : memref<2x2x8xf32> to memref<4x8xf32>
  loop.kernel "bias2" [4, 8] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %t2[%i, %j] : memref<4x8xf32>
    %c = loop.load %b[%j] : memref<8xf32>
    %s = arith.addf %v, %c : f32
    loop.store %s, %view[%i, %j] : memref<4x8xf32>
  }
  loop.kernel "bias3" [4, 8] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %t3[%i, %j] : memref<4x8xf32>
    %c = loop.load %b[%j] : memref<8xf32>
    %s = arith.addf %v, %c : f32
    loop.store %s, %o3[%i, %j] : memref<4x8xf32>
  }
  memref.dealloc %t1 : memref<4x8xf32>
  memref.dealloc %t2 : memref<4x8xf32>
  memref.dealloc %t3 : memref<4x8xf32>
  return
}

// -----

// The output's reshape fused into the kernel (an LM head's [B * L, V] product
// plus its bias, returned as [B, L, V]): the kernel reads the temporary at the
// row-major offset it writes, [i * 2 + j, k] for [i, j, k], so the GEMM writes
// a [4, 8] view of the output. Not where the offsets differ (%t2 read at
// [j * 2 + i, k]).
// CHECK-LABEL: func @reshaped_output
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8xf32>, %[[O1:.*]]: memref<2x2x8xf32>, %[[O2:.*]]: memref<2x2x8xf32>)
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[O1]] to offset: [0], sizes: [4, 8], strides: [8, 1] : memref<2x2x8xf32> to memref<4x8xf32>
// CHECK-NEXT: %[[T2:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK-NOT: memref.alloc
// CHECK: loop.library_call "relu6" ins(%[[X]] : memref<4x8xf32>) outs(%[[V]] : memref<4x8xf32>)
// CHECK: loop.library_call "relu6" ins(%[[X]] : memref<4x8xf32>) outs(%[[T2]] : memref<4x8xf32>)
// CHECK: loop.kernel "bias1"
// CHECK: loop.load %[[V]]
// CHECK: loop.store %{{.*}}, %[[O1]]
// CHECK: loop.kernel "bias2"
// CHECK: loop.load %[[T2]]
func.func @reshaped_output(%x: memref<4x8xf32>, %b: memref<8xf32>, %o1: memref<2x2x8xf32>, %o2: memref<2x2x8xf32>)
    attributes {dyn.num_inputs = 2 : i64} {
  %t1 = memref.alloc() : memref<4x8xf32>
  %t2 = memref.alloc() : memref<4x8xf32>
  loop.library_call "relu6" ins(%x : memref<4x8xf32>) outs(%t1 : memref<4x8xf32>) params []
  loop.library_call "relu6" ins(%x : memref<4x8xf32>) outs(%t2 : memref<4x8xf32>) params []
  loop.kernel "bias1" [2, 2, 8] {
  ^bb0(%i: index, %j: index, %k: index):
    %c2 = arith.constant 2 : index
    %r0 = arith.muli %i, %c2 : index
    %r = arith.addi %r0, %j : index
    %v = loop.load %t1[%r, %k] : memref<4x8xf32>
    %c = loop.load %b[%k] : memref<8xf32>
    %s = arith.addf %v, %c : f32
    loop.store %s, %o1[%i, %j, %k] : memref<2x2x8xf32>
  }
  loop.kernel "bias2" [2, 2, 8] {
  ^bb0(%i: index, %j: index, %k: index):
    %c2 = arith.constant 2 : index
    %r0 = arith.muli %j, %c2 : index
    %r = arith.addi %r0, %i : index
    %v = loop.load %t2[%r, %k] : memref<4x8xf32>
    %c = loop.load %b[%k] : memref<8xf32>
    %s = arith.addf %v, %c : f32
    loop.store %s, %o2[%i, %j, %k] : memref<2x2x8xf32>
  }
  memref.dealloc %t1 : memref<4x8xf32>
  memref.dealloc %t2 : memref<4x8xf32>
  return
}
