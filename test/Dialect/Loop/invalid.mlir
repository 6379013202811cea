// RUN: dyn-opt %s -split-input-file -verify-diagnostics

// Buffers hold dyn's element types only: an index buffer reached the GPU
// lowering's vector-width analysis, which asks for its bit width (a fuzzer
// case, a crash).
func.func @index_buffer(%x: memref<64xindex>, %y: memref<64xindex>) {
  loop.kernel "k" [64] {
  ^bb0(%i: index):
    // expected-error @+1 {{'memref' must be memref of stored element type values}}
    %v = loop.load %x[%i] : memref<64xindex>
    loop.store %v, %y[%i] : memref<64xindex>
  }
  return
}

// -----

// Buffers are signless: a uint8 tensor is stored as i8 (PrimToLoop), since
// arith takes signless integers only.
func.func @unsigned_buffer(%x: memref<64xui8>, %y: memref<64xi8>) {
  loop.kernel "k" [64] {
  ^bb0(%i: index):
    // expected-error @+1 {{'memref' must be memref of stored element type values}}
    %v = loop.load %x[%i] : memref<64xui8>
    loop.store %v, %y[%i] : memref<64xi8>
  }
  return
}

// -----

func.func @wrong_arity(%x: memref<4x8xf32>) {
  // expected-error @+1 {{body must take 2 index arguments, one per domain dim}}
  loop.kernel "k" [4, 8] {
  ^bb0(%i: index):
    loop.yield
  }
  return
}

// -----

func.func @wrong_indices(%x: memref<4x8xf32>) {
  loop.kernel "k" [4] {
  ^bb0(%i: index):
    // expected-error @+1 {{expects 2 indices, got 1}}
    %v = loop.load %x[%i] : memref<4x8xf32>
    loop.yield
  }
  return
}

// -----

func.func @reduce_yields_nothing(%x: memref<4xf32>) {
  loop.kernel "k" [] {
  // expected-error @+1 {{body must yield one value of the result type}}
    %s = loop.reduce add [4] : f32 {
    ^bb0(%j: index):
      loop.yield
    }
    loop.yield
  }
  return
}

// -----

func.func @bad_matmul(%a: memref<4x8xf32>, %b: memref<7x2xf32>, %c: memref<4x2xf32>) {
  // expected-error @+1 {{shapes must be [B,]MxK, [B,]KxN, [B,]MxN}}
  loop.matmul %a, %b, %c : memref<4x8xf32>, memref<7x2xf32>, memref<4x2xf32>
  return
}

// -----

func.func @bad_matmul_transpose_b(%a: memref<4x8xf32>, %b: memref<8x2xf32>, %c: memref<4x2xf32>) {
  // expected-error @+1 {{shapes must be [B,]MxK, [B,]NxK, [B,]MxN}}
  loop.matmul %a, %b, %c transpose_b : memref<4x8xf32>, memref<8x2xf32>, memref<4x2xf32>
  return
}

// -----

func.func @matmul_mixed(%a: memref<4x8xf32>, %b: memref<8x2xf16>, %c: memref<4x2xf32>) {
  // expected-error @+1 {{buffers must share one element type}}
  loop.matmul %a, %b, %c : memref<4x8xf32>, memref<8x2xf16>, memref<4x2xf32>
  return
}

// -----

func.func @conv_bad_out(%x: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x8x8xf32>) {
  // expected-error @+1 {{result shape must be [1, 4, 6, 6]}}
  loop.convolution %x, %w, %y stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>, memref<1x4x8x8xf32>
  return
}

// -----

func.func @attention_dynamic_offset(%q: memref<2x8x16xf32, strided<[256, 32, 1], offset: ?>>, %o: memref<2x8x16xf32>) {
  // expected-error @+1 {{needs contiguous buffers or views with a static offset}}
  loop.attention %q, %q, %q, %o scale 0.25 : memref<2x8x16xf32, strided<[256, 32, 1], offset: ?>>, memref<2x8x16xf32, strided<[256, 32, 1], offset: ?>>, memref<2x8x16xf32, strided<[256, 32, 1], offset: ?>>, memref<2x8x16xf32>
  return
}

// -----

func.func @matmul_strided(%a: memref<4x8xf32, strided<[16, 1]>>, %b: memref<8x2xf32>, %c: memref<4x2xf32>) {
  // expected-error @+1 {{needs contiguous (identity layout) buffers}}
  loop.matmul %a, %b, %c : memref<4x8xf32, strided<[16, 1]>>, memref<8x2xf32>, memref<4x2xf32>
  return
}

// -----

func.func @conv_bad_bias(%x: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x6x6xf32>, %b: memref<3xf32>) {
  // expected-error @+1 {{bias must be [C_out]}}
  loop.convolution %x, %w, %y bias %b stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>, memref<1x4x6x6xf32>, memref<3xf32>
  return
}

// -----

func.func @matmul_bad_addend(%a: memref<4x8xbf16>, %b: memref<8x2xbf16>, %c: memref<4x2xbf16>, %d: memref<4xbf16>) {
  // expected-error @+1 {{addend must broadcast to the output}}
  loop.matmul %a, %b, %c addend %d : memref<4x8xbf16>, memref<8x2xbf16>, memref<4x2xbf16>, memref<4xbf16>
  return
}

// -----

// A library call writes at least one buffer.
func.func @library_call_no_output(%a: memref<4xf32>) {
  // expected-error @+1 {{writes at least one buffer}}
  "loop.library_call"(%a) <{callee = "sort", params = array<i64>, operandSegmentSizes = array<i32: 1, 0>}> : (memref<4xf32>) -> ()
  return
}

// -----

// Buffers are contiguous: a strided view cannot be passed to the C ABI.
func.func @library_call_strided(%a: memref<4xf32, strided<[2]>>, %b: memref<4xf32>) {
  // expected-error @+1 {{needs contiguous (identity layout) buffers}}
  loop.library_call "sort" ins(%a : memref<4xf32, strided<[2]>>) outs(%b : memref<4xf32>) params []
  return
}

// -----

// A `strided` call takes views, but with a unit innermost stride.
func.func @library_call_strided_inner(%a: memref<4x4xf32, strided<[1, 4]>>, %b: memref<4x4xf32>) {
  // expected-error @+1 {{needs a static offset and a unit innermost stride}}
  loop.library_call "attention_lse" ins(%a : memref<4x4xf32, strided<[1, 4]>>) outs(%b : memref<4x4xf32>) params [] {strided}
  return
}

// -----

func.func @unsigned_buffers_not_i8(%a: memref<4x8xi32>, %b: memref<8x2xi32>, %c: memref<4x2xi32>) {
  // expected-error @+1 {{unsigned_buffers must list i8 buffers, got 2}}
  loop.matmul %a, %b, %c {unsigned_buffers = array<i64: 2>} : memref<4x8xi32>, memref<8x2xi32>, memref<4x2xi32>
  return
}

// -----

func.func @bool_matmul(%a: memref<4x8xi1>, %b: memref<8x2xi1>, %c: memref<4x2xi1>) {
  // expected-error @+1 {{supports f16, bf16, f32, f64 and i8-i64}}
  loop.matmul %a, %b, %c : memref<4x8xi1>, memref<8x2xi1>, memref<4x2xi1>
  return
}

// -----

// A `?` domain dim needs its size operand.
func.func @dynamic_domain_without_size(%x: memref<?xf32>) {
  // expected-error @+1 {{has 1 dynamic domain dims but 0 size operands}}
  "loop.kernel"() <{name = "k", domain = array<i64: -9223372036854775808>}> ({
  ^bb0(%i: index):
    loop.yield
  }) : () -> ()
  return
}

// -----

// A view at a runtime offset: the GPU launch plan places views at constant offsets.
func.func @library_call_strided_dynamic_offset(%a: memref<4x?xf32, strided<[?, 1], offset: ?>>, %b: memref<4x4xf32>) {
  // expected-error @+1 {{needs a static offset and a unit innermost stride}}
  loop.library_call "attention_lse" ins(%a : memref<4x?xf32, strided<[?, 1], offset: ?>>) outs(%b : memref<4x4xf32>) params [] {strided}
  return
}
