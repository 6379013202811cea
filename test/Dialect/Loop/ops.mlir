// RUN: dyn-opt %s -split-input-file | dyn-opt | FileCheck %s

// CHECK-LABEL: func @row_kernel
// CHECK: loop.kernel "rmsnorm" [4]
// CHECK: loop.reduce add [8] : f32
// CHECK: loop.for [8]
// CHECK: loop.store
func.func @row_kernel(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  loop.kernel "rmsnorm" [4] {
  ^bb0(%i: index):
    %s = loop.reduce add [8] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      %sq = arith.mulf %v, %v : f32
      loop.yield %sq : f32
    }
    %r = math.rsqrt %s : f32
    loop.for [8] {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      %o = arith.mulf %v, %r : f32
      loop.store %o, %y[%i, %j] : memref<4x8xf32>
    }
  }
  return
}

// -----

// CHECK-LABEL: func @matmul
// CHECK: loop.matmul %{{.*}}, %{{.*}}, %{{.*}} : memref<4x8xf32>, memref<8x2xf32>, memref<4x2xf32>
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x2xf32>, %c: memref<4x2xf32>) {
  loop.matmul %a, %b, %c : memref<4x8xf32>, memref<8x2xf32>, memref<4x2xf32>
  return
}

// -----

// CHECK-LABEL: func @matmul_transpose_b
// CHECK: loop.matmul %{{.*}}, %{{.*}}, %{{.*}} transpose_b : memref<2x4x8xf64>, memref<2x3x8xf64>, memref<2x4x3xf64>
func.func @matmul_transpose_b(%a: memref<2x4x8xf64>, %b: memref<2x3x8xf64>, %c: memref<2x4x3xf64>) {
  loop.matmul %a, %b, %c transpose_b : memref<2x4x8xf64>, memref<2x3x8xf64>, memref<2x4x3xf64>
  return
}

// -----

// Library calls: a GEMM in half precision, a convolution, attention with a boolean mask.
// CHECK-LABEL: func @library_calls
// CHECK: loop.matmul %{{.*}}, %{{.*}}, %{{.*}} : memref<4x8xbf16>, memref<8x2xbf16>, memref<4x2xbf16>
// CHECK: loop.convolution %{{.*}}, %{{.*}}, %{{.*}} stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>, memref<1x4x8x8xf32>
// CHECK: loop.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} scale 2.500000e-01 : memref<2x8x16xf32>, memref<2x8x16xf32>, memref<2x8x16xf32>, memref<2x8x16xf32>, memref<8x8xi1>
// CHECK: loop.convolution %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>, memref<1x4x8x8xf32>, memref<4xf32>
func.func @library_calls(%a: memref<4x8xbf16>, %b: memref<8x2xbf16>, %c: memref<4x2xbf16>,
                         %x: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x8x8xf32>,
                         %q: memref<2x8x16xf32>, %m: memref<8x8xi1>, %o: memref<2x8x16xf32>, %bias: memref<4xf32>) {
  loop.matmul %a, %b, %c : memref<4x8xbf16>, memref<8x2xbf16>, memref<4x2xbf16>
  loop.convolution %x, %w, %y stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>, memref<1x4x8x8xf32>
  loop.attention %q, %q, %q, %o mask %m scale 0.25 : memref<2x8x16xf32>, memref<2x8x16xf32>, memref<2x8x16xf32>, memref<2x8x16xf32>, memref<8x8xi1>
  loop.convolution %x, %w, %y bias %bias stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>, memref<1x4x8x8xf32>, memref<4xf32>
  return
}

// -----

// A `strided` call reads views of other buffers (q, k and v sliced from one projection).
// CHECK-LABEL: func @library_call_strided
// CHECK: loop.library_call "attention_lse" ins({{.*}} : memref<2x4x5x16xf32, strided<[960, 16, 192, 1], offset: 64>>) outs({{.*}}) params [0] {strided}
func.func @library_call_strided(%q: memref<2x4x5x16xf32, strided<[960, 16, 192, 1], offset: 64>>, %o: memref<2x4x5x16xf32>) {
  loop.library_call "attention_lse" ins(%q : memref<2x4x5x16xf32, strided<[960, 16, 192, 1], offset: 64>>) outs(%o : memref<2x4x5x16xf32>) params [0] {strided}
  return
}

// CHECK-LABEL: func @library_call
// CHECK: loop.library_call "topk" ins(%{{.*}} : memref<4x8xf32>) outs(%{{.*}}, %{{.*}} : memref<4x2xf32>, memref<4x2xi64>) params [2, -1, 1, 1]
func.func @library_call(%x: memref<4x8xf32>, %v: memref<4x2xf32>, %i: memref<4x2xi64>) {
  loop.library_call "topk" ins(%x : memref<4x8xf32>) outs(%v, %i : memref<4x2xf32>, memref<4x2xi64>) params [2, -1, 1, 1]
  return
}

// -----

// Dynamic domains: a `?` dim's size is an index operand (here the rows of a
// buffer whose first dim is known only at run time).
// CHECK-LABEL: func @dynamic_rows
// CHECK: %[[N:.*]] = memref.dim
// CHECK: loop.kernel "rmsnorm" [%[[N]]]
// CHECK: loop.reduce add [%{{.*}}] : f32
// CHECK: loop.for [%[[N]], 8]
func.func @dynamic_rows(%x: memref<?x?xf32>, %y: memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  loop.kernel "rmsnorm" [%n] {
  ^bb0(%i: index):
    %s = loop.reduce add [%m] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      loop.yield %v : f32
    }
    loop.for [%n, 8] {
    ^bb0(%a: index, %b: index):
      loop.store %s, %y[%a, %b] : memref<?x8xf32>
    }
  }
  return
}
