// RUN: dyn-opt %s -split-input-file -verify-diagnostics

// Buffers hold dyn's element types only: an index buffer reached the GPU
// lowering's vector-width analysis, which asks for its bit width (a fuzzer
// case, a crash).
func.func @index_buffer(%x: memref<64xindex>, %y: memref<64xindex>) {
  loop.kernel "k" [64] {
  ^bb0(%i: index):
    // expected-error @+1 {{'memref' must be memref of supported element type values}}
    %v = loop.load %x[%i] : memref<64xindex>
    loop.store %v, %y[%i] : memref<64xindex>
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
