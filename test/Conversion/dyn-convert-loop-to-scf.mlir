// RUN: dyn-opt %s -split-input-file -dyn-convert-loop-to-scf | FileCheck %s
// RUN: dyn-opt %s -split-input-file -dyn-convert-loop-to-scf="chunk-size=256 min-parallel-iterations=8" | FileCheck %s --check-prefix=CHUNK

// A long 1-D kernel is split into parallel chunks, each a serial inner loop.
// CHECK-LABEL: func @pointwise
// CHECK: scf.parallel
// CHECK: %[[B:.*]] = arith.muli
// CHECK: %[[E:.*]] = arith.minsi
// CHECK: scf.for %[[I:.*]] = %[[B]] to %[[E]]
// CHECK: memref.load %{{.*}}[%[[I]]]
// CHECK: memref.store
// CHUNK-LABEL: func @pointwise
// CHUNK: %[[C:.*]] = arith.constant 256 : index
// CHUNK: scf.parallel
func.func @pointwise(%x: memref<65536xf32>, %y: memref<65536xf32>) {
  loop.kernel "neg" [65536] {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<65536xf32>
    %n = arith.negf %v : f32
    loop.store %n, %y[%i] : memref<65536xf32>
  }
  return
}

// -----

// A column reduction (a channels-last global pool: each (n, c) sums [n, h, w, c]
// over h and w) keeps a row of accumulators per chunk of c; the loop over c is
// innermost in the reduction's nest, so it reads contiguously. The value the
// reduction's body takes from the kernel (a per-channel scale) is computed
// once per column into a row of its own.
// CHECK-LABEL: func @column_sum
// CHECK: scf.parallel
// CHECK: %[[ACC:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
// CHECK: %[[ROW:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[ROW]]
// CHECK: scf.for %[[H:.*]] =
// CHECK: scf.for %[[W:.*]] =
// CHECK: scf.for %[[C:.*]] =
// CHECK: memref.load %[[ROW]]
// CHECK: memref.load %arg0[%{{.*}}, %[[H]], %[[W]], %[[C]]]
// CHECK: memref.store %{{.*}}, %[[ACC]]
// CHECK: scf.for
// CHECK: memref.load %[[ACC]]
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: memref.dealloc %[[ACC]]
func.func @column_sum(%x: memref<4x8x8x16xf32>, %s: memref<16xf32>, %y: memref<4x16xf32>) {
  loop.kernel "pool" [4, 16] {
  ^bb0(%n: index, %c: index):
    %k = loop.load %s[%c] : memref<16xf32>
    %e = math.exp %k : f32
    %r = loop.reduce add [8, 8] : f32 {
    ^bb0(%h: index, %w: index):
      %v = loop.load %x[%n, %h, %w, %c] : memref<4x8x8x16xf32>
      %m = arith.mulf %v, %e : f32
      loop.yield %m : f32
    }
    loop.store %r, %y[%n, %c] : memref<4x16xf32>
  }
  return
}

// -----

// A reduction is a serial loop with one accumulator whose adds may be reassociated.
// CHECK-LABEL: func @row_sum
// CHECK: scf.parallel
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32)
// CHECK: arith.addf %[[ACC]], %{{.*}} fastmath<reassoc,contract>
// CHECK: scf.yield
func.func @row_sum(%x: memref<128x64xf32>, %y: memref<128xf32>) {
  loop.kernel "sum" [128] {
  ^bb0(%i: index):
    %s = loop.reduce add [64] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<128x64xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[%i] : memref<128xf32>
  }
  return
}

// -----

// A max reduction starts from -inf.
// CHECK-LABEL: func @row_max
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
func.func @row_max(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  loop.kernel "max" [4] {
  ^bb0(%i: index):
    %s = loop.reduce max [8] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[%i] : memref<4xf32>
  }
  return
}

// -----

// A 2-d loop.matmul with transpose_b (F.linear's weight read in place) of at
// most 64 rows is a call into dyn's runtime on raw addresses.
// CHECK: func.func private @dyn_matmul_nt_f32(i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func @matmul
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: call @dyn_matmul_nt_f32
func.func @matmul(%a: memref<4x8xf32>, %b: memref<2x8xf32>, %c: memref<4x2xf32>) {
  loop.matmul %a, %b, %c transpose_b : memref<4x8xf32>, memref<2x8xf32>, memref<4x2xf32>
  return
}

// -----

// With more rows it calls the library (ATen's, MKL: even or faster there).
// CHECK-LABEL: func @matmul_tall
// CHECK-NOT: dyn_matmul
// CHECK: call @dyn_library_call(
func.func @matmul_tall(%a: memref<65x8xf32>, %b: memref<2x8xf32>, %c: memref<65x2xf32>) {
  loop.matmul %a, %b, %c transpose_b : memref<65x8xf32>, memref<2x8xf32>, memref<65x2xf32>
  return
}

// -----

// A plain GEMM calls the library (ATen's, measured faster than the runtime's
// blocked matmul) unless dyn.cpu_gemm = "runtime" asks for the runtime.
// CHECK-LABEL: func @matmul_plain
// CHECK-NOT: dyn_matmul
// CHECK: call @dyn_library_call(
func.func @matmul_plain(%a: memref<4x8xf32>, %b: memref<8x2xf32>, %c: memref<4x2xf32>) {
  loop.matmul %a, %b, %c : memref<4x8xf32>, memref<8x2xf32>, memref<4x2xf32>
  return
}

// -----

// With dyn.cpu_gemm = "runtime", every f32/f64 GEMM is the runtime's; with
// transpose_b it reads B as [batch,]NxK: the nt entry point, with the same
// (batch, M, N, K) arguments.
// CHECK-DAG: func.func private @dyn_matmul_nt_f64(i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func @matmul_transpose_b
// CHECK-DAG: %[[BATCH:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[M:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 8 : i64
// CHECK: call @dyn_matmul_nt_f64(%{{.*}}, %{{.*}}, %{{.*}}, %[[BATCH]], %[[M]], %[[N]], %[[K]])
module attributes {dyn.cpu_gemm = "runtime"} {
func.func @matmul_transpose_b(%a: memref<2x4x8xf64>, %b: memref<2x3x8xf64>, %c: memref<2x4x3xf64>) {
  loop.matmul %a, %b, %c transpose_b : memref<2x4x8xf64>, memref<2x3x8xf64>, memref<2x4x3xf64>
  return
}
}

// -----

// Other library calls go through dyn_library_call: the name as a C string,
// an i64 descriptor [num_inputs, num_outputs, (dtype, rank, sizes, strides,
// byte offset) per buffer, num_params, params], and the buffers' addresses in
// a stack array.
// Here a convolution: two f32 (dtype 0) inputs and the output, then nd=1, stride 2, padding 1,
// dilation 1, output_padding 0, groups 1, not transposed, no bias, not channels-last.
// CHECK-DAG: memref.global "private" constant @__dyn_libcall_name_convolution : memref<12xi8> = dense<[99, 111, 110, 118, 111, 108, 117, 116, 105, 111, 110, 0]>
// CHECK-DAG: memref.global "private" constant @__dyn_libcall_convolution : memref<39xi64> = dense<[2, 1, 0, 3, 1, 3, 8, 24, 8, 1, 0, 0, 3, 4, 3, 3, 9, 3, 1, 0, 0, 3, 1, 4, 4, 16, 4, 1, 0, 9, 1, 2, 1, 1, 0, 1, 0, 0, 0]>
// CHECK-DAG: func.func private @dyn_library_call(i64, i64, i64)
// CHECK-LABEL: func @convolution
// CHECK: %[[A:.*]] = memref.alloca() : memref<3xi64>
// CHECK-COUNT-3: memref.store %{{.*}}, %[[A]]
// CHECK: call @dyn_library_call(
func.func @convolution(%x: memref<1x3x8xf32>, %w: memref<4x3x3xf32>, %y: memref<1x4x4xf32>) {
  loop.convolution %x, %w, %y stride [2] padding [1] dilation [1] groups 1 : memref<1x3x8xf32>, memref<4x3x3xf32>, memref<1x4x4xf32>
  return
}

// -----

// GEMMs in half precision have no runtime matmul: they are library calls too.
// CHECK-LABEL: func @matmul_bf16
// CHECK-NOT: dyn_matmul
// CHECK: call @dyn_library_call(
func.func @matmul_bf16(%a: memref<4x8xbf16>, %b: memref<8x2xbf16>, %c: memref<4x2xbf16>) {
  loop.matmul %a, %b, %c : memref<4x8xbf16>, memref<8x2xbf16>, memref<4x2xbf16>
  return
}

// -----

// dyn.cpu_gemm = "library" on the module: f32 GEMMs call the library too
// (benchmarks/cpu_gemm.py compares it with the runtime matmul).
// CHECK-LABEL: func @matmul_library_attr
// CHECK-NOT: dyn_matmul
// CHECK: call @dyn_library_call(
module attributes {dyn.cpu_gemm = "library"} {
func.func @matmul_library_attr(%a: memref<4x8xf32>, %b: memref<8x2xf32>, %c: memref<4x2xf32>) {
  loop.matmul %a, %b, %c : memref<4x8xf32>, memref<8x2xf32>, memref<4x2xf32>
  return
}
}

// -----

// A call by name with several outputs (a sort: values and indices): the
// descriptor counts one input and two outputs, then its parameters [dim,
// descending, stable]; the stack array holds three addresses.
// CHECK-DAG: memref.global "private" constant @__dyn_libcall_name_sort : memref<5xi8> = dense<[115, 111, 114, 116, 0]>
// CHECK-DAG: memref.global "private" constant @__dyn_libcall_sort : memref<27xi64> = dense<[1, 2, 0, 2, 4, 8, 8, 1, 0, 0, 2, 4, 8, 8, 1, 0, 4, 2, 4, 8, 8, 1, 0, 3, 1, 1, 1]>
// CHECK-LABEL: func @sort
// CHECK: %[[A:.*]] = memref.alloca() : memref<3xi64>
// CHECK-COUNT-3: memref.store %{{.*}}, %[[A]]
// CHECK: call @dyn_library_call(
func.func @sort(%x: memref<4x8xf32>, %v: memref<4x8xf32>, %i: memref<4x8xi64>) {
  loop.library_call "sort" ins(%x : memref<4x8xf32>) outs(%v, %i : memref<4x8xf32>, memref<4x8xi64>) params [1, 1, 1]
  return
}

// -----

// Attention reads q, k and v in place as views of one [B, S, 3E] buffer: each
// buffer's descriptor entry carries its strides and its byte offset (k starts
// 64 floats in: 256 bytes), and the stack array holds the buffers' bases.
// CHECK-DAG: memref.global "private" constant @__dyn_libcall_attention : memref<50xi64> = dense<[3, 1, 0, 4, 2, 4, 5, 16, 960, 16, 192, 1, 0, 0, 4, 2, 4, 5, 16, 960, 16, 192, 1, 256, 0, 4, 2, 4, 5, 16, 960, 16, 192, 1, 512, 0, 4, 2, 4, 5, 16, 320, 16, 64, 1, 0, 3, 0, 0, 4598175219545276416]>
// CHECK-LABEL: func @attention_views
// CHECK: call @dyn_library_call(
func.func @attention_views(%qkv: memref<2x5x192xf32>, %o: memref<2x5x4x16xf32>) {
  %q = memref.reinterpret_cast %qkv to offset: [0], sizes: [2, 4, 5, 16], strides: [960, 16, 192, 1] : memref<2x5x192xf32> to memref<2x4x5x16xf32, strided<[960, 16, 192, 1]>>
  %k = memref.reinterpret_cast %qkv to offset: [64], sizes: [2, 4, 5, 16], strides: [960, 16, 192, 1] : memref<2x5x192xf32> to memref<2x4x5x16xf32, strided<[960, 16, 192, 1], offset: 64>>
  %v = memref.reinterpret_cast %qkv to offset: [128], sizes: [2, 4, 5, 16], strides: [960, 16, 192, 1] : memref<2x5x192xf32> to memref<2x4x5x16xf32, strided<[960, 16, 192, 1], offset: 128>>
  %out = memref.reinterpret_cast %o to offset: [0], sizes: [2, 4, 5, 16], strides: [320, 16, 64, 1] : memref<2x5x4x16xf32> to memref<2x4x5x16xf32, strided<[320, 16, 64, 1]>>
  loop.attention %q, %k, %v, %out scale 0.25 : memref<2x4x5x16xf32, strided<[960, 16, 192, 1]>>, memref<2x4x5x16xf32, strided<[960, 16, 192, 1], offset: 64>>, memref<2x4x5x16xf32, strided<[960, 16, 192, 1], offset: 128>>, memref<2x4x5x16xf32, strided<[320, 16, 64, 1]>>
  return
}

// -----

// Dynamic domains: the bounds are the size operands. A 1-D kernel is split
// into chunks at run time (enough to feed the threads, each at most
// chunk-size units of work).
// CHECK-LABEL: func @dynamic_pointwise
// CHECK-SAME: %[[N:[a-z0-9]+]]: index
// CHECK: %[[CH:.*]] = arith.ceildivsi %[[N]]
// CHECK: %[[MAX:.*]] = arith.maxsi %[[CH]]
// CHECK: %[[SZ:.*]] = arith.minsi %[[MAX]]
// CHECK: %[[NCH:.*]] = arith.ceildivsi %[[N]], %[[SZ]]
// CHECK: scf.parallel (%[[P:.*]]) = (%{{.*}}) to (%[[NCH]])
// CHECK: %[[B:.*]] = arith.muli %[[P]], %[[SZ]]
// CHECK: %[[E:.*]] = arith.minsi %{{.*}}, %[[N]]
// CHECK: scf.for %{{.*}} = %[[B]] to %[[E]]
func.func @dynamic_pointwise(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
  loop.kernel "neg" [%n] {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<?xf32>
    %r = arith.negf %v : f32
    loop.store %r, %y[%i] : memref<?xf32>
  }
  return
}

// -----

// A dynamic dim before the innermost is taken as enough parallel work:
// [%n, 4] runs its points in parallel, the innermost dim unsplit; each
// point's dynamic reduction is a serial loop to its runtime bound.
// CHECK-LABEL: func @dynamic_rows
// CHECK-SAME: %[[N:[a-z0-9]+]]: index, %[[M:[a-z0-9]+]]: index
// CHECK-NOT: arith.ceildivsi
// CHECK: scf.parallel (%[[I:.*]], %{{.*}}) = (%{{.*}}, %{{.*}}) to (%[[N]], %{{.*}})
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[M]] step %{{.*}} iter_args
// CHECK: memref.load %{{.*}}[%[[I]], %{{.*}}, %[[J]]]
func.func @dynamic_rows(%x: memref<?x4x?xf32>, %y: memref<?x4xf32>, %n: index, %m: index) {
  loop.kernel "rowsum" [%n, 4] {
  ^bb0(%i: index, %k: index):
    %s = loop.reduce add [%m] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %k, %j] : memref<?x4x?xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[%i, %k] : memref<?x4xf32>
  }
  return
}

// -----

// GEMM sizes and library-call descriptors of dynamic buffers are read at run
// time: the runtime matmul's M from the buffer, a library call's descriptor
// built on the stack.
// CHECK-LABEL: func @dynamic_library_calls
// CHECK: %[[M:.*]] = memref.dim %{{.*}}, %c0
// CHECK: %[[M64:.*]] = arith.index_cast %[[M]] : index to i64
// CHECK: call @dyn_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[M64]],
// CHECK: %[[DESC:.*]] = memref.alloca() : memref<{{[0-9]+}}xi64>
// CHECK: memref.dim
// CHECK: memref.store %{{.*}}, %[[DESC]]
// CHECK: call @dyn_library_call
module attributes {dyn.cpu_gemm = "runtime"} {
func.func @dynamic_library_calls(%a: memref<?x8xf32>, %b: memref<8x2xf32>, %c: memref<?x2xf32>, %s: memref<?xf32>) {
  loop.matmul %a, %b, %c : memref<?x8xf32>, memref<8x2xf32>, memref<?x2xf32>
  loop.library_call "sort" ins(%s : memref<?xf32>) outs(%s : memref<?xf32>) params []
  return
}
}
