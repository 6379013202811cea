// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop -canonicalize | FileCheck %s

// An elementwise chain is one kernel: two loads, one store, nothing in between.
// CHECK-LABEL: func @pointwise_chain
// CHECK-SAME: (%[[X:.*]]: memref<1024xf32>, %[[Y:.*]]: memref<1024xf32>, %[[OUT:.*]]: memref<1024xf32>)
// CHECK: loop.kernel "add_0" [1024]
// CHECK: loop.load %[[X]]
// CHECK: math.cos
// CHECK: loop.load %[[Y]]
// CHECK: math.sin
// CHECK: arith.addf
// CHECK: loop.store %{{.*}}, %[[OUT]]
// CHECK-NOT: loop.kernel
func.func @pointwise_chain(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = prim.cos %x : tensor<1024xf32>
  %1 = prim.sin %y : tensor<1024xf32>
  %2 = prim.add %0, %1 : tensor<1024xf32>
  return %2 : tensor<1024xf32>
}

// -----

// softmax is one kernel over rows: two reductions over the row, then one write pass.
// CHECK-LABEL: func @softmax
// CHECK-NOT: memref.alloc
// CHECK: loop.kernel "div_0" [4]
// CHECK: %[[MAX:.*]] = loop.reduce max [8]
// CHECK: %[[SUM:.*]] = loop.reduce add [8]
// CHECK: arith.subf %{{.*}}, %[[MAX]]
// CHECK: math.exp
// CHECK: loop.for [8]
// CHECK: arith.divf %{{.*}}, %[[SUM]]
// CHECK: loop.store
// CHECK-NOT: loop.kernel
func.func @softmax(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = prim.reduce_max %arg0 dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %1 = prim.broadcast_in_dim %0 dims [0] : tensor<4xf32> -> tensor<4x8xf32>
  %2 = prim.sub %arg0, %1 : tensor<4x8xf32>
  %3 = prim.exp %2 : tensor<4x8xf32>
  %4 = prim.reduce_sum %3 dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %5 = prim.broadcast_in_dim %4 dims [0] : tensor<4xf32> -> tensor<4x8xf32>
  %6 = prim.div %3, %5 : tensor<4x8xf32>
  return %6 : tensor<4x8xf32>
}

// -----

// A column sum used by every row would be recomputed per row if fused, so it gets its own kernel and buffer.
// CHECK-LABEL: func @column_sum_consumer
// CHECK: %[[TMP:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK: loop.kernel "reduce_sum_0" [8]
// CHECK: loop.reduce add [4]
// CHECK: loop.store %{{.*}}, %[[TMP]]
// CHECK: loop.kernel "div_1" [4, 8]
// CHECK: loop.load %[[TMP]]
// CHECK: memref.dealloc %[[TMP]]
func.func @column_sum_consumer(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = prim.reduce_sum %x dims [0] : tensor<4x8xf32> -> tensor<8xf32>
  %1 = prim.broadcast_in_dim %0 dims [1] : tensor<8xf32> -> tensor<4x8xf32>
  %2 = prim.div %x, %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Matmul operands and results live in buffers; the matmul is a library call.
// An operand that only views another buffer's elements in row-major order
// (here a transpose of a transpose) reads that buffer: no copy.
// CHECK-LABEL: func @matmul_relu
// CHECK-SAME: (%[[A:[^:]*]]: memref<4x8xf32>
// CHECK-NOT: loop.kernel "transpose
// CHECK: loop.matmul %[[A]],
// CHECK: loop.kernel "max_0" [4, 2]
// CHECK: arith.maximumf
func.func @matmul_relu(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %0 = prim.transpose %a permutation [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %1 = prim.transpose %0 permutation [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %2 = prim.dot_general %1, %b batch [], [] contract [1], [0] : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  %z = prim.constant dense<0.0> : tensor<4x2xf32>
  %3 = prim.max %2, %z : tensor<4x2xf32>
  return %3 : tensor<4x2xf32>
}

// -----

// A linear layer, matmul(x, transpose(w)): the matmul reads w in place
// (transpose_b) and the transposed weight is never materialized.
// CHECK-LABEL: func @linear
// CHECK-SAME: (%[[X:.*]]: memref<6x5xf32>, %[[W:.*]]: memref<7x5xf32>, %[[B:.*]]: memref<7xf32>
// CHECK-NOT: loop.kernel "transpose
// CHECK: loop.matmul %[[X]], %[[W]], %{{.*}} transpose_b : memref<6x5xf32>, memref<7x5xf32>, memref<6x7xf32>
// CHECK-NOT: transpose
// CHECK: loop.kernel "add
func.func @linear(%x: tensor<6x5xf32>, %w: tensor<7x5xf32>, %b: tensor<7xf32>) -> tensor<6x7xf32> {
  %0 = prim.transpose %w permutation [1, 0] : tensor<7x5xf32> -> tensor<5x7xf32>
  %1 = prim.dot_general %x, %0 batch [], [] contract [1], [0] : tensor<6x5xf32>, tensor<5x7xf32> -> tensor<6x7xf32>
  %2 = prim.broadcast_in_dim %b dims [1] : tensor<7xf32> -> tensor<6x7xf32>
  %3 = prim.add %1, %2 : tensor<6x7xf32>
  return %3 : tensor<6x7xf32>
}

// -----

// Batched: a transpose of the last two dims of a computed value. The value
// gets the buffer, the transpose none.
// CHECK-LABEL: func @batched_transpose_b
// CHECK: %[[T:.*]] = memref.alloc() {{.*}} : memref<2x3x8xf64>
// CHECK: loop.kernel "neg_0" [2, 3, 8]
// CHECK-NOT: loop.kernel
// CHECK: loop.matmul %{{.*}}, %[[T]], %{{.*}} transpose_b : memref<2x4x8xf64>, memref<2x3x8xf64>, memref<2x4x3xf64>
func.func @batched_transpose_b(%a: tensor<2x4x8xf64>, %b: tensor<2x3x8xf64>) -> tensor<2x4x3xf64> {
  %n = prim.neg %b : tensor<2x3x8xf64>
  %0 = prim.transpose %n permutation [0, 2, 1] : tensor<2x3x8xf64> -> tensor<2x8x3xf64>
  %1 = prim.dot_general %a, %0 batch [0], [0] contract [2], [1] : tensor<2x4x8xf64>, tensor<2x8x3xf64> -> tensor<2x4x3xf64>
  return %1 : tensor<2x4x3xf64>
}

// -----

// A transpose that is also returned is still materialized (into its output
// buffer); the matmul reads its source regardless.
// CHECK-LABEL: func @transpose_also_returned
// CHECK-SAME: (%[[X:.*]]: memref<6x5xf32>, %[[W:.*]]: memref<7x5xf32>
// CHECK: loop.kernel "transpose_
// CHECK: loop.matmul %[[X]], %[[W]], %{{.*}} transpose_b
func.func @transpose_also_returned(%x: tensor<6x5xf32>, %w: tensor<7x5xf32>) -> (tensor<6x7xf32>, tensor<5x7xf32>) {
  %0 = prim.transpose %w permutation [1, 0] : tensor<7x5xf32> -> tensor<5x7xf32>
  %1 = prim.dot_general %x, %0 batch [], [] contract [1], [0] : tensor<6x5xf32>, tensor<5x7xf32> -> tensor<6x7xf32>
  return %1, %0 : tensor<6x7xf32>, tensor<5x7xf32>
}

// -----

// A returned input is copied into its output buffer.
// CHECK-LABEL: func @returns_input
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>, %[[O0:.*]]: memref<4xf32>, %[[O1:.*]]: memref<4xf32>)
// CHECK: loop.kernel "neg_0"
// CHECK: loop.store %{{.*}}, %[[O1]]
// CHECK: loop.kernel "copy_1"
// CHECK: loop.load %[[X]]
// CHECK: loop.store %{{.*}}, %[[O0]]
func.func @returns_input(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = prim.neg %x : tensor<4xf32>
  return %x, %0 : tensor<4xf32>, tensor<4xf32>
}

// -----

// bf16 is loaded, widened to f32 for all arithmetic and the reduction, and rounded once on store.
// CHECK-LABEL: func @bf16_row_sum
// CHECK: loop.reduce add [8] : f32
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: loop.store
func.func @bf16_row_sum(%x: tensor<4x8xbf16>) -> tensor<4xbf16> {
  %0 = prim.reduce_sum %x dims [1] : tensor<4x8xbf16> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// Dense (non-splat) constants live in read-only globals that kernels load from
// (tril/triu masks compare row and column numbers, torch.arange's values); a
// splat constant stays a scalar in the kernel.
// CHECK-LABEL: func @dense_index_constants
// CHECK-SAME: (%[[X:.*]]: memref<4x4xf32>, %[[OUT:.*]]: memref<4x4xf32>)
// CHECK-DAG: %[[ROWS:.*]] = memref.get_global @[[G0:__dyn_constant_dense_index_constants_0]] : memref<4x1xi64>
// CHECK-DAG: %[[COLS:.*]] = memref.get_global @[[G1:__dyn_constant_dense_index_constants_1]] : memref<1x4xi64>
// CHECK: loop.kernel "select_0" [4, 4]
// CHECK-DAG: loop.load %[[ROWS]]
// CHECK-DAG: loop.load %[[COLS]]
// CHECK: arith.cmpi sge
// CHECK: loop.store %{{.*}}, %[[OUT]]
// CHECK-NOT: loop.kernel
// CHECK-DAG: memref.global "private" constant @[[G0]] : memref<4x1xi64> = dense<{{\[}}[0], [1], [2], [3]]>
// CHECK-DAG: memref.global "private" constant @[[G1]] : memref<1x4xi64> = dense<{{\[}}[0, 1, 2, 3]]>
func.func @dense_index_constants(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %rows = prim.constant dense<[[0], [1], [2], [3]]> : tensor<4x1xi64>
  %cols = prim.constant dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>
  %r = prim.broadcast_in_dim %rows dims [0, 1] : tensor<4x1xi64> -> tensor<4x4xi64>
  %c = prim.broadcast_in_dim %cols dims [0, 1] : tensor<1x4xi64> -> tensor<4x4xi64>
  %keep = prim.ge %r, %c : tensor<4x4xi64> -> tensor<4x4xi1>
  %z = prim.constant dense<0.0> : tensor<4x4xf32>
  %y = prim.select %keep, %x, %z : tensor<4x4xi1>, tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// A returned dense constant is copied from its global into the output buffer.
// CHECK-LABEL: func @returns_dense_constant
// CHECK-SAME: (%[[O:.*]]: memref<3xi64>)
// CHECK: %[[G:.*]] = memref.get_global @__dyn_constant_returns_dense_constant_0 : memref<3xi64>
// CHECK: loop.kernel "copy_0" [3]
// CHECK: loop.load %[[G]]
// CHECK: loop.store %{{.*}}, %[[O]]
// CHECK: memref.global "private" constant @__dyn_constant_returns_dense_constant_0 : memref<3xi64> = dense<[5, -1, 7]>
func.func @returns_dense_constant() -> tensor<3xi64> {
  %0 = prim.constant dense<[5, -1, 7]> : tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// An embedding lookup (index broadcast along the row) is one kernel: load the
// index at the row, wrap a negative one, clamp it into [0, 10), then load the
// weight at the computed row. Nothing is materialized in between.
// CHECK-LABEL: func @embedding
// CHECK-SAME: (%[[W:.*]]: memref<10x4xf32>, %[[I:.*]]: memref<3xi32>, %[[OUT:.*]]: memref<3x4xf32>)
// CHECK-NOT: memref.alloc
// CHECK: loop.kernel "gather_0" [3, 4]
// CHECK: ^bb0(%[[R:.*]]: index, %[[C:.*]]: index):
// CHECK: %[[RAW:.*]] = loop.load %[[I]][%[[R]]]
// CHECK: %[[IX:.*]] = arith.index_cast %[[RAW]] : i32 to index
// CHECK: arith.cmpi slt, %[[IX]]
// CHECK: arith.select
// CHECK: arith.maxsi
// CHECK: %[[ROW:.*]] = arith.minsi
// CHECK: %[[V:.*]] = loop.load %[[W]][%[[ROW]], %[[C]]]
// CHECK: loop.store %[[V]], %[[OUT]][%[[R]], %[[C]]]
// CHECK-NOT: loop.kernel
func.func @embedding(%w: tensor<10x4xf32>, %i: tensor<3xi32>) -> tensor<3x4xf32> {
  %r = prim.reshape %i : tensor<3xi32> -> tensor<3x1xi32>
  %b = prim.broadcast_in_dim %r dims [0, 1] : tensor<3x1xi32> -> tensor<3x4xi32>
  %0 = prim.gather %w dim 0 index %b : tensor<10x4xf32>, tensor<3x4xi32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// A reshape that splits leading dims keeps the trailing dims' indices: the
// embedding's [B*T, D] -> [B, T, D] loads the weight row with the innermost
// kernel index, unchanged (the GPU lowering then moves it with vector accesses).
// CHECK-LABEL: func @embedding_2d_index
// CHECK: loop.kernel "reshape_0" [2, 3, 8]
// CHECK: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[D:.*]]: index):
// CHECK: arith.minsi
// CHECK: %[[V:.*]] = loop.load %{{.*}}[%{{.*}}, %[[D]]] : memref<10x8xf32>
// CHECK: loop.store %[[V]]
func.func @embedding_2d_index(%w: tensor<10x8xf32>, %i: tensor<2x3xi64>) -> tensor<2x3x8xf32> {
  %f = prim.reshape %i : tensor<2x3xi64> -> tensor<6x1xi64>
  %b = prim.broadcast_in_dim %f dims [0, 1] : tensor<6x1xi64> -> tensor<6x8xi64>
  %g = prim.gather %w dim 0 index %b : tensor<10x8xf32>, tensor<6x8xi64> -> tensor<6x8xf32>
  %y = prim.reshape %g : tensor<6x8xf32> -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// A convolution is a library call into a buffer of its own; a bias added
// after it (as prim ops), the ReLU and a max pool with -inf padding fuse
// into one kernel that reads the convolution's buffer at clamped indices and
// selects the padding value outside it.
// CHECK-LABEL: func @convolution_epilogue
// CHECK-SAME: (%[[X:.*]]: memref<1x4x9x9xf32>, %[[W:.*]]: memref<8x2x3x3xf32>, %[[B:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<1x8x3x3xf32>)
// CHECK: %[[C:.*]] = memref.alloc() {{.*}} : memref<1x8x5x5xf32>
// CHECK: loop.convolution %[[X]], %[[W]], %[[C]] stride [2, 2] padding [1, 1] dilation [1, 1] groups 2
// CHECK: loop.kernel "max_{{.*}}" [1, 8, 3, 3]
// CHECK: arith.maxsi
// CHECK: loop.load %[[C]]
// CHECK: loop.load %[[B]]
// CHECK: arith.select
// CHECK: loop.store %{{.*}}, %[[OUT]]
// CHECK-NOT: loop.kernel
func.func @convolution_epilogue(%x: tensor<1x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x3x3xf32> {
  %c = prim.convolution %x, %w stride [2, 2] padding [1, 1] dilation [1, 1] groups 2 : tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32> -> tensor<1x8x5x5xf32>
  %bb = prim.broadcast_in_dim %b dims [1] : tensor<8xf32> -> tensor<1x8x5x5xf32>
  %y = prim.add %c, %bb : tensor<1x8x5x5xf32>
  %zero = prim.constant dense<0.0> : tensor<1x8x5x5xf32>
  %r = prim.max %y, %zero : tensor<1x8x5x5xf32>
  %p = prim.pad %r low [0, 0, 1, 1] high [0, 0, 1, 1] value 0xFFF0000000000000 : tensor<1x8x5x5xf32> -> tensor<1x8x7x7xf32>
  %s0 = prim.slice %p start [0, 0, 0, 0] stride [1, 1, 2, 2] : tensor<1x8x7x7xf32> -> tensor<1x8x3x3xf32>
  %s1 = prim.slice %p start [0, 0, 1, 1] stride [1, 1, 2, 2] : tensor<1x8x7x7xf32> -> tensor<1x8x3x3xf32>
  %m = prim.max %s0, %s1 : tensor<1x8x3x3xf32>
  return %m : tensor<1x8x3x3xf32>
}

// -----

// Attention's operands get buffers: a computed query is materialized by a
// kernel before the call; arguments and the mask are read in place.
// CHECK-LABEL: func @attention
// CHECK-SAME: (%[[Q:.*]]: memref<2x8x16xf32>, %[[M:.*]]: memref<8x8xi1>, %[[OUT:.*]]: memref<2x8x16xf32>)
// CHECK: %[[S:.*]] = memref.alloc() {{.*}} : memref<2x8x16xf32>
// CHECK: loop.kernel "mul_0" [2, 8, 16]
// CHECK: loop.store %{{.*}}, %[[S]]
// CHECK: loop.attention %[[S]], %[[Q]], %[[Q]], %[[OUT]] mask %[[M]] scale 2.500000e-01
func.func @attention(%q: tensor<2x8x16xf32>, %m: tensor<8x8xi1>) -> tensor<2x8x16xf32> {
  %s = prim.mul %q, %q : tensor<2x8x16xf32>
  %0 = prim.attention %s, %q, %q mask %m scale 0.25 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<8x8xi1> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// A call with several results (a sort) writes all its buffers in one
// loop.library_call: its computed operand is materialized first, the indices
// go straight to the function's output, the values to a temporary that the
// kernel after the call reads (values * 2 fuses there).
// CHECK-LABEL: func @sort_two_results
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[OUT0:.*]]: memref<4x8xf32>, %[[OUT1:.*]]: memref<4x8xi64>)
// CHECK: %[[IN:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// CHECK: %[[V:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// CHECK: loop.kernel "neg_0" [4, 8]
// CHECK: loop.store %{{.*}}, %[[IN]]
// CHECK: loop.library_call "sort" ins(%[[IN]] : memref<4x8xf32>) outs(%[[V]], %[[OUT1]] : memref<4x8xf32>, memref<4x8xi64>) params [1, 0, 1]
// CHECK-NOT: loop.library_call
// CHECK: loop.kernel
// CHECK: loop.load %[[V]]
// CHECK: loop.store %{{.*}}, %[[OUT0]]
func.func @sort_two_results(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi64>) {
  %n = prim.neg %x : tensor<4x8xf32>
  %r:2 = prim.library_call "sort"(%n) params [1, 0, 1] : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi64>)
  %two = prim.constant dense<2.0> : tensor<4x8xf32>
  %y = prim.mul %r#0, %two : tensor<4x8xf32>
  return %y, %r#1 : tensor<4x8xf32>, tensor<4x8xi64>
}

// -----

// A half-precision GEMM whose one use is an add: the library adds the
// (right-aligned broadcast) operand in its epilogue, one rounding as eager's
// addmm; the add gets the buffer, the GEMM's own result none.
// CHECK-LABEL: func @gemm_addend_bf16
// CHECK-SAME: (%[[X:.*]]: memref<4x8xbf16>, %[[W:.*]]: memref<16x8xbf16>, %[[B:.*]]: memref<16xbf16>, %[[OUT:.*]]: memref<4x16xbf16>)
// CHECK: %[[Y:.*]] = memref.alloc() {{.*}} : memref<4x16xbf16>
// CHECK: loop.matmul %[[X]], %[[W]], %[[Y]] addend %[[B]] transpose_b
// CHECK: loop.kernel "max_0" [4, 16]
// CHECK: loop.load %[[Y]]
func.func @gemm_addend_bf16(%x: tensor<4x8xbf16>, %w: tensor<16x8xbf16>, %b: tensor<16xbf16>) -> tensor<4x16xbf16> {
  %wt = prim.transpose %w permutation [1, 0] : tensor<16x8xbf16> -> tensor<8x16xbf16>
  %m = prim.dot_general %x, %wt batch [], [] contract [1], [0] : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>
  %bb = prim.broadcast_in_dim %b dims [1] : tensor<16xbf16> -> tensor<4x16xbf16>
  %y = prim.add %m, %bb : tensor<4x16xbf16>
  %zero = prim.constant dense<0.0> : tensor<4x16xbf16>
  %r = prim.max %y, %zero : tensor<4x16xbf16>
  return %r : tensor<4x16xbf16>
}

// -----

// In f32 the add stays a kernel (dyn's runtime GEMM on the CPU has no
// epilogue; one f32 rounding more is within eager's tolerances).
// CHECK-LABEL: func @gemm_add_f32
// CHECK: loop.matmul %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK: loop.kernel "add_0"
func.func @gemm_add_f32(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = prim.dot_general %x, %w batch [], [] contract [1], [0] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %bb = prim.broadcast_in_dim %b dims [1] : tensor<16xf32> -> tensor<4x16xf32>
  %y = prim.add %m, %bb : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A post-norm residual: the normalized value %n feeds a matmul through a
// reshape and the residual add. %n gets the buffer, which the matmul reads
// through a reshaped view (no copy kernel), and the add's kernel reads %n back
// from it instead of recomputing its reduction (recomputing nests every earlier
// norm in each later one: BERT's compile time and run time grew with the
// square of the depth).
// CHECK-LABEL: func @residual_reads_reshaped_buffer
// CHECK: %[[N:.*]] = memref.alloc() {{.*}} : memref<2x4x8xf32>
// CHECK: loop.kernel "sub_0" [2, 4]
// CHECK: loop.reduce add [8]
// CHECK: loop.store %{{.*}}, %[[N]]
// CHECK: %[[R:.*]] = memref.reinterpret_cast %[[N]] {{.*}} to memref<8x8xf32>
// CHECK: loop.matmul %[[R]]
// CHECK: loop.kernel "add_1" [2, 4, 8]
// CHECK-NOT: loop.reduce
// CHECK: loop.load %[[N]]
// CHECK-NOT: loop.reduce
// CHECK: return
func.func @residual_reads_reshaped_buffer(%x: tensor<2x4x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x4x8xf32> {
  %s = prim.reduce_sum %x dims [2] : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %b = prim.broadcast_in_dim %s dims [0, 1] : tensor<2x4xf32> -> tensor<2x4x8xf32>
  %n = prim.sub %x, %b : tensor<2x4x8xf32>
  %r = prim.reshape %n : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %m = prim.dot_general %r, %w batch [], [] contract [1], [0] : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %mr = prim.reshape %m : tensor<8x8xf32> -> tensor<2x4x8xf32>
  %o = prim.add %mr, %n : tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A matmul's rows as a reshape of a transpose (not a view of one buffer) get
// a buffer and a kernel of their own. A kernel that runs before the reshape's
// kernel computes the value itself: the buffer is not written yet.
// CHECK-LABEL: func @reshape_written_later
// CHECK: %[[R:.*]] = memref.alloc() {{.*}} : memref<8x8xf32>
// CHECK: loop.kernel "mul_1" [2, 8, 4]
// CHECK-NOT: loop.load %[[R]]
// CHECK: loop.kernel "reshape_2" [8, 8]
// CHECK: loop.matmul %[[R]]
func.func @reshape_written_later(%x: tensor<2x4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<2x8x4xf32>, tensor<8x8xf32>) {
  %s = prim.reduce_sum %x dims [2] : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %b = prim.broadcast_in_dim %s dims [0, 1] : tensor<2x4xf32> -> tensor<2x4x8xf32>
  %n = prim.sub %x, %b : tensor<2x4x8xf32>
  %t = prim.transpose %n permutation [0, 2, 1] : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %o = prim.mul %t, %t : tensor<2x8x4xf32>
  %r = prim.reshape %t : tensor<2x8x4xf32> -> tensor<8x8xf32>
  %m = prim.dot_general %r, %w batch [], [] contract [1], [0] : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %o, %m : tensor<2x8x4xf32>, tensor<8x8xf32>
}

// -----

// logsumexp written directly: the max feeds the sum's body (through a
// broadcast) and the sum's consumer. The max stays outside the sum's loop
// and both uses read it (this used to crash the emitter: the broadcast moved
// the max's level into the closed reduce body).
// CHECK-LABEL: func @reduction_feeds_reduction_and_consumer
// CHECK: loop.kernel "add_0" [4]
// CHECK: %[[MAX:.*]] = loop.reduce max [8]
// CHECK: %[[SUM:.*]] = loop.reduce add [8]
// CHECK: arith.subf %{{.*}}, %[[MAX]]
// CHECK: math.exp
// CHECK: loop.yield
// CHECK: arith.addf %[[SUM]], %[[MAX]]
// CHECK-NOT: loop.kernel
func.func @reduction_feeds_reduction_and_consumer(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %m = prim.reduce_max %x dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %b = prim.broadcast_in_dim %m dims [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = prim.sub %x, %b : tensor<4x8xf32>
  %e = prim.exp %d : tensor<4x8xf32>
  %s = prim.reduce_sum %e dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %r = prim.add %s, %m : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// The same with the consumer reading the max first.
// CHECK-LABEL: func @reduction_consumer_reads_first
// CHECK: %[[MAX:.*]] = loop.reduce max [8]
// CHECK: %[[SUM:.*]] = loop.reduce add [8]
// CHECK: arith.mulf %[[MAX]], %[[SUM]]
func.func @reduction_consumer_reads_first(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %m = prim.reduce_max %x dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %b = prim.broadcast_in_dim %m dims [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = prim.sub %x, %b : tensor<4x8xf32>
  %s = prim.reduce_sum %d dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %r = prim.mul %m, %s : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A value that reads more than four buffers and feeds two consumers gets a
// buffer of its own (a pre-norm residual stream); both consumers load it.
// (Over more than 4096 points: smaller kernels of one shape would merge.)
// CHECK-LABEL: func @wide_value_reused
// CHECK: %[[S:.*]] = memref.alloc() {{.*}} : memref<64x128xf32>
// CHECK: loop.kernel "add_0" [64, 128]
// CHECK-COUNT-5: loop.load %arg
// CHECK: loop.store %{{.*}}, %[[S]]
// CHECK: loop.kernel "mul_1" [64, 128]
// CHECK: loop.load %[[S]]
// CHECK: loop.kernel "reduce_sum_2" [64]
// CHECK: loop.load %[[S]]
func.func @wide_value_reused(%a: tensor<64x128xf32>, %b: tensor<64x128xf32>, %c: tensor<64x128xf32>, %d: tensor<64x128xf32>,
                             %e: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64xf32>) {
  %0 = prim.add %a, %b : tensor<64x128xf32>
  %1 = prim.add %0, %c : tensor<64x128xf32>
  %2 = prim.add %1, %d : tensor<64x128xf32>
  %s = prim.add %2, %e : tensor<64x128xf32>
  %m = prim.mul %s, %a : tensor<64x128xf32>
  %r = prim.reduce_sum %s dims [1] : tensor<64x128xf32> -> tensor<64xf32>
  return %m, %r : tensor<64x128xf32>, tensor<64xf32>
}

// -----

// Four buffers, or one consumer: recomputed, no buffer. (%m and %n, small
// kernels of one shape that read only inputs, are one kernel.)
// CHECK-LABEL: func @narrow_or_single_use
// CHECK-NOT: memref.alloc
// CHECK: loop.kernel "mul_0" [4, 8]
// CHECK: loop.store {{.*}} %arg5
// CHECK: loop.store {{.*}} %arg7
// CHECK: loop.kernel "reduce_sum_1" [4]
// CHECK-NOT: loop.kernel
func.func @narrow_or_single_use(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>, %d: tensor<4x8xf32>,
                                %e: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>) {
  %0 = prim.add %a, %b : tensor<4x8xf32>
  %1 = prim.add %0, %c : tensor<4x8xf32>
  %s = prim.add %1, %d : tensor<4x8xf32>
  %m = prim.mul %s, %a : tensor<4x8xf32>
  %r = prim.reduce_sum %s dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %t = prim.add %1, %e : tensor<4x8xf32>
  %u = prim.add %t, %d : tensor<4x8xf32>
  %n = prim.mul %u, %u : tensor<4x8xf32>
  return %m, %r, %n : tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>
}

// -----

// The gradient at a residual block's output (two gradients added, masked by
// the ReLU) read by a batch norm's sibling sums, its input gradient and the
// skip path: three kernels would each read a, b and out (48 MiB), a buffer
// costs a pass over them, its write and three reads (112 against 144 MiB):
// it gets one, and the consumers load it.
// CHECK-LABEL: func @residual_gradient_reused
// CHECK: %[[G:.*]] = memref.alloc() {{.*}} : memref<16x64x64x64xf32>
// CHECK: loop.kernel "select_{{[0-9]+}}" [16, 64, 64, 64]
// CHECK: loop.store %{{.*}}, %[[G]]
// CHECK: loop.kernel "reduce_sum_{{[0-9]+}}" [64]
// CHECK: loop.load %[[G]]
// CHECK: loop.kernel "mul_{{[0-9]+}}" [16, 64, 64, 64]
// CHECK: loop.load %[[G]]
// CHECK: loop.kernel "add_{{[0-9]+}}" [16, 64, 64, 64]
// CHECK: loop.load %[[G]]
func.func @residual_gradient_reused(%a: tensor<16x64x64x64xf32>, %b: tensor<16x64x64x64xf32>,
                                    %out: tensor<16x64x64x64xf32>, %x: tensor<16x64x64x64xf32>,
                                    %c: tensor<16x64x64x64xf32>, %k: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<16x64x64x64xf32>, tensor<16x64x64x64xf32>) {
  %zero = prim.constant dense<0.0> : tensor<16x64x64x64xf32>
  %sum = prim.add %a, %b : tensor<16x64x64x64xf32>
  %live = prim.gt %out, %zero : tensor<16x64x64x64xf32> -> tensor<16x64x64x64xi1>
  %g = prim.select %live, %sum, %zero : tensor<16x64x64x64xi1>, tensor<16x64x64x64xf32>
  %s0 = prim.reduce_sum %g dims [0, 2, 3] : tensor<16x64x64x64xf32> -> tensor<64xf32>
  %gx = prim.mul %g, %x : tensor<16x64x64x64xf32>
  %s1 = prim.reduce_sum %gx dims [0, 2, 3] : tensor<16x64x64x64xf32> -> tensor<64xf32>
  %kb = prim.broadcast_in_dim %k dims [1] : tensor<64xf32> -> tensor<16x64x64x64xf32>
  %dx = prim.mul %g, %kb : tensor<16x64x64x64xf32>
  %skip = prim.add %g, %c : tensor<16x64x64x64xf32>
  return %s0, %s1, %dx, %skip : tensor<64xf32>, tensor<64xf32>, tensor<16x64x64x64xf32>, tensor<16x64x64x64xf32>
}

// -----

// The same at a small size: recomputing saves the kernel a buffer would take.
// CHECK-LABEL: func @small_gradient_recomputed
// CHECK-NOT: memref.alloc
// CHECK-NOT: loop.kernel "select
func.func @small_gradient_recomputed(%a: tensor<2x8x4x4xf32>, %b: tensor<2x8x4x4xf32>,
                                     %out: tensor<2x8x4x4xf32>, %x: tensor<2x8x4x4xf32>,
                                     %c: tensor<2x8x4x4xf32>, %k: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>) {
  %zero = prim.constant dense<0.0> : tensor<2x8x4x4xf32>
  %sum = prim.add %a, %b : tensor<2x8x4x4xf32>
  %live = prim.gt %out, %zero : tensor<2x8x4x4xf32> -> tensor<2x8x4x4xi1>
  %g = prim.select %live, %sum, %zero : tensor<2x8x4x4xi1>, tensor<2x8x4x4xf32>
  %s0 = prim.reduce_sum %g dims [0, 2, 3] : tensor<2x8x4x4xf32> -> tensor<8xf32>
  %gx = prim.mul %g, %x : tensor<2x8x4x4xf32>
  %s1 = prim.reduce_sum %gx dims [0, 2, 3] : tensor<2x8x4x4xf32> -> tensor<8xf32>
  %kb = prim.broadcast_in_dim %k dims [1] : tensor<8xf32> -> tensor<2x8x4x4xf32>
  %dx = prim.mul %g, %kb : tensor<2x8x4x4xf32>
  %skip = prim.add %g, %c : tensor<2x8x4x4xf32>
  return %s0, %s1, %dx, %skip : tensor<8xf32>, tensor<8xf32>, tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>
}

// -----

// A ReLU's mask read by a batch norm backward's sum and by its input
// gradient, both of which read the activation it comes from anyway:
// recomputed, the mask costs no bytes, so it gets no buffer (a buffer would
// cost a pass over x, its write and two reads).
// CHECK-LABEL: func @mask_recomputed_where_read_anyway
// CHECK-NOT: xi1>
// CHECK: loop.kernel "reduce_sum_{{[0-9]+}}" [64]
// CHECK: arith.cmpf ogt
// CHECK: loop.kernel "mul_{{[0-9]+}}" [32, 64, 64, 64]
// CHECK: arith.cmpf ogt
func.func @mask_recomputed_where_read_anyway(%x: tensor<32x64x64x64xf32>, %dy: tensor<32x64x64x64xf32>)
    -> (tensor<64xf32>, tensor<32x64x64x64xf32>) {
  %zero = prim.constant dense<0.0> : tensor<32x64x64x64xf32>
  %live = prim.gt %x, %zero : tensor<32x64x64x64xf32> -> tensor<32x64x64x64xi1>
  %g = prim.select %live, %dy, %zero : tensor<32x64x64x64xi1>, tensor<32x64x64x64xf32>
  %gx = prim.mul %g, %x : tensor<32x64x64x64xf32>
  %s = prim.reduce_sum %gx dims [0, 1, 2] : tensor<32x64x64x64xf32> -> tensor<64xf32>
  %dx = prim.mul %gx, %x : tensor<32x64x64x64xf32>
  return %s, %dx : tensor<64xf32>, tensor<32x64x64x64xf32>
}

// -----

// The same mask computed from a saved ReLU output that neither kernel reads
// otherwise: recomputed, each reads it (4 bytes a point, twice); buffered, a
// pass over it, the mask's write and two reads (4 + 3 bytes): 14% fewer, not
// enough for a kernel more. Inductor recomputes it likewise.
// CHECK-LABEL: func @saved_relu_mask_recomputed
// CHECK-NOT: xi1>
// CHECK: loop.kernel "reduce_sum_{{[0-9]+}}" [64]
// CHECK: arith.cmpf ogt
// CHECK: loop.kernel "mul_{{[0-9]+}}" [32, 64, 64, 64]
// CHECK: arith.cmpf ogt
func.func @saved_relu_mask_recomputed(%out: tensor<32x64x64x64xf32>, %x: tensor<32x64x64x64xf32>,
                                      %dy: tensor<32x64x64x64xf32>) -> (tensor<64xf32>, tensor<32x64x64x64xf32>) {
  %zero = prim.constant dense<0.0> : tensor<32x64x64x64xf32>
  %live = prim.gt %out, %zero : tensor<32x64x64x64xf32> -> tensor<32x64x64x64xi1>
  %g = prim.select %live, %dy, %zero : tensor<32x64x64x64xi1>, tensor<32x64x64x64xf32>
  %gx = prim.mul %g, %x : tensor<32x64x64x64xf32>
  %s = prim.reduce_sum %gx dims [0, 1, 2] : tensor<32x64x64x64xf32> -> tensor<64xf32>
  %dx = prim.mul %gx, %x : tensor<32x64x64x64xf32>
  return %s, %dx : tensor<64xf32>, tensor<32x64x64x64xf32>
}

// -----

// A batch norm's per-channel scale and shift (a division and a rsqrt of its
// statistics) read through broadcasts by a kernel over 4M points are computed
// once per channel, in the epilogue of the kernel summing the channels, and
// the normalization loads them: inlined it would compute them per element.
// CHECK-LABEL: func @per_channel_scale_hoisted
// CHECK: %[[SCALE:.*]] = memref.alloc() {{.*}} : memref<64xf32>
// CHECK: %[[SHIFT:.*]] = memref.alloc() {{.*}} : memref<64xf32>
// CHECK: loop.kernel "reduce_sum_{{[0-9]+}}" [64]
// CHECK: loop.reduce
// CHECK: math.rsqrt
// CHECK: loop.store %{{.*}}, %[[SCALE]]
// CHECK: loop.store %{{.*}}, %[[SHIFT]]
// CHECK: loop.kernel "max_{{[0-9]+}}" [16, 64, 64, 64]
// CHECK-NOT: arith.divf
// CHECK-NOT: math.rsqrt
// CHECK: loop.load %[[SCALE]]
// CHECK: loop.load %[[SHIFT]]
// CHECK-NOT: loop.kernel
func.func @per_channel_scale_hoisted(%x: tensor<16x64x64x64xf32>, %mean: tensor<64xf32>, %w: tensor<64xf32>,
                                     %b: tensor<64xf32>) -> (tensor<64xf32>, tensor<16x64x64x64xf32>) {
  %mb = prim.broadcast_in_dim %mean dims [3] : tensor<64xf32> -> tensor<16x64x64x64xf32>
  %d = prim.sub %x, %mb : tensor<16x64x64x64xf32>
  %d2 = prim.mul %d, %d : tensor<16x64x64x64xf32>
  %ss = prim.reduce_sum %d2 dims [0, 1, 2] : tensor<16x64x64x64xf32> -> tensor<64xf32>
  %n = prim.constant dense<65536.0> : tensor<64xf32>
  %eps = prim.constant dense<1.0e-05> : tensor<64xf32>
  %var = prim.div %ss, %n : tensor<64xf32>
  %ve = prim.add %var, %eps : tensor<64xf32>
  %r = prim.rsqrt %ve : tensor<64xf32>
  %scale = prim.mul %r, %w : tensor<64xf32>
  %ms = prim.mul %mean, %scale : tensor<64xf32>
  %shift = prim.sub %b, %ms : tensor<64xf32>
  %sb = prim.broadcast_in_dim %scale dims [3] : tensor<64xf32> -> tensor<16x64x64x64xf32>
  %hb = prim.broadcast_in_dim %shift dims [3] : tensor<64xf32> -> tensor<16x64x64x64xf32>
  %y0 = prim.mul %x, %sb : tensor<16x64x64x64xf32>
  %y1 = prim.add %y0, %hb : tensor<16x64x64x64xf32>
  %zero = prim.constant dense<0.0> : tensor<16x64x64x64xf32>
  %y = prim.max %y1, %zero : tensor<16x64x64x64xf32>
  return %ss, %y : tensor<64xf32>, tensor<16x64x64x64xf32>
}

// -----

// A batch norm's backward: 1/sqrt(var + eps) of the saved statistics is read by
// the channel sums (a reduction) and by the input gradient's kernel over 4M
// points. Computed from the arguments alone, it runs first, in one kernel with
// the mean (a value it reads at its own point), and both the sums and the
// gradient load it: no rsqrt or division per element.
// CHECK-LABEL: func @backward_per_channel_first
// CHECK: %[[R:.*]] = memref.alloc() {{.*}} : memref<64xf32>
// CHECK: loop.kernel "div_0" [64]
// CHECK: arith.divf
// CHECK: math.rsqrt
// CHECK: loop.store %{{.*}}, %[[R]]
// CHECK: loop.kernel "reduce_sum_{{[0-9]+}}" [64]
// CHECK: loop.kernel "mul_{{[0-9]+}}" [16, 64, 64, 64]
// CHECK-NOT: arith.divf
// CHECK-NOT: math.rsqrt
// CHECK: loop.load %[[R]]
// CHECK-NOT: loop.kernel
func.func @backward_per_channel_first(%g: tensor<16x64x64x64xf32>, %x: tensor<16x64x64x64xf32>,
                                      %sum: tensor<64xf32>, %sumsq: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<16x64x64x64xf32>) {
  %n = prim.constant dense<65536.0> : tensor<64xf32>
  %eps = prim.constant dense<1.0e-05> : tensor<64xf32>
  %mean = prim.div %sum, %n : tensor<64xf32>
  %ex2 = prim.div %sumsq, %n : tensor<64xf32>
  %m2 = prim.mul %mean, %mean : tensor<64xf32>
  %var = prim.sub %ex2, %m2 : tensor<64xf32>
  %ve = prim.add %var, %eps : tensor<64xf32>
  %r = prim.rsqrt %ve : tensor<64xf32>
  %mb = prim.broadcast_in_dim %mean dims [3] : tensor<64xf32> -> tensor<16x64x64x64xf32>
  %rb = prim.broadcast_in_dim %r dims [3] : tensor<64xf32> -> tensor<16x64x64x64xf32>
  %d = prim.sub %x, %mb : tensor<16x64x64x64xf32>
  %xhat = prim.mul %d, %rb : tensor<16x64x64x64xf32>
  %gx = prim.mul %g, %xhat : tensor<16x64x64x64xf32>
  %s = prim.reduce_sum %gx dims [0, 1, 2] : tensor<16x64x64x64xf32> -> tensor<64xf32>
  %sn = prim.div %s, %n : tensor<64xf32>
  %sb = prim.broadcast_in_dim %sn dims [3] : tensor<64xf32> -> tensor<16x64x64x64xf32>
  %t = prim.mul %xhat, %sb : tensor<16x64x64x64xf32>
  %u = prim.sub %g, %t : tensor<16x64x64x64xf32>
  %gi = prim.mul %u, %rb : tensor<16x64x64x64xf32>
  return %s, %gi : tensor<64xf32>, tensor<16x64x64x64xf32>
}

// -----

// The same over 32K points keeps the arithmetic in the normalization's
// kernel: a kernel of its own would cost more than it saves.
// CHECK-LABEL: func @small_per_channel_scale_inlined
// CHECK: loop.kernel "max_{{[0-9]+}}" [2, 16, 16, 64]
// CHECK: math.rsqrt
func.func @small_per_channel_scale_inlined(%x: tensor<2x16x16x64xf32>, %mean: tensor<64xf32>, %w: tensor<64xf32>,
                                           %b: tensor<64xf32>) -> (tensor<64xf32>, tensor<2x16x16x64xf32>) {
  %mb = prim.broadcast_in_dim %mean dims [3] : tensor<64xf32> -> tensor<2x16x16x64xf32>
  %d = prim.sub %x, %mb : tensor<2x16x16x64xf32>
  %d2 = prim.mul %d, %d : tensor<2x16x16x64xf32>
  %ss = prim.reduce_sum %d2 dims [0, 1, 2] : tensor<2x16x16x64xf32> -> tensor<64xf32>
  %n = prim.constant dense<512.0> : tensor<64xf32>
  %eps = prim.constant dense<1.0e-05> : tensor<64xf32>
  %var = prim.div %ss, %n : tensor<64xf32>
  %ve = prim.add %var, %eps : tensor<64xf32>
  %r = prim.rsqrt %ve : tensor<64xf32>
  %scale = prim.mul %r, %w : tensor<64xf32>
  %ms = prim.mul %mean, %scale : tensor<64xf32>
  %shift = prim.sub %b, %ms : tensor<64xf32>
  %sb = prim.broadcast_in_dim %scale dims [3] : tensor<64xf32> -> tensor<2x16x16x64xf32>
  %hb = prim.broadcast_in_dim %shift dims [3] : tensor<64xf32> -> tensor<2x16x16x64xf32>
  %y0 = prim.mul %x, %sb : tensor<2x16x16x64xf32>
  %y1 = prim.add %y0, %hb : tensor<2x16x16x64xf32>
  %zero = prim.constant dense<0.0> : tensor<2x16x16x64xf32>
  %y = prim.max %y1, %zero : tensor<2x16x16x64xf32>
  return %ss, %y : tensor<64xf32>, tensor<2x16x16x64xf32>
}

// -----

// A windowed sum (five shifted slices of x: a depthwise convolution's taps)
// that two kernels read (a squeeze-excitation block's pool and its scaling)
// is computed once, into a buffer: only the activation after it, the last
// value of the chain, gets one.
// CHECK-LABEL: func @reused_window
// CHECK: %[[W:.*]] = memref.alloc() {{.*}} : memref<2x4x8xf32>
// CHECK: loop.kernel "tanh_0" [2, 4, 8]
// CHECK-COUNT-5: loop.load %arg0
// CHECK: math.tanh
// CHECK: loop.store %{{.*}}, %[[W]]
// CHECK: loop.kernel
// CHECK-NOT: loop.load %arg0
// CHECK: loop.reduce add [4]
// CHECK: loop.load %[[W]]
// CHECK: loop.kernel
// CHECK-NOT: loop.load %arg0
// CHECK: loop.load %[[W]]
func.func @reused_window(%x: tensor<2x4x12xf32>) -> tensor<2x4x8xf32> {
  %s0 = prim.slice %x start [0, 0, 0] stride [1, 1, 1] : tensor<2x4x12xf32> -> tensor<2x4x8xf32>
  %s1 = prim.slice %x start [0, 0, 1] stride [1, 1, 1] : tensor<2x4x12xf32> -> tensor<2x4x8xf32>
  %s2 = prim.slice %x start [0, 0, 2] stride [1, 1, 1] : tensor<2x4x12xf32> -> tensor<2x4x8xf32>
  %s3 = prim.slice %x start [0, 0, 3] stride [1, 1, 1] : tensor<2x4x12xf32> -> tensor<2x4x8xf32>
  %s4 = prim.slice %x start [0, 0, 4] stride [1, 1, 1] : tensor<2x4x12xf32> -> tensor<2x4x8xf32>
  %a0 = prim.add %s0, %s1 : tensor<2x4x8xf32>
  %a1 = prim.add %a0, %s2 : tensor<2x4x8xf32>
  %a2 = prim.add %a1, %s3 : tensor<2x4x8xf32>
  %a3 = prim.add %a2, %s4 : tensor<2x4x8xf32>
  %t = prim.tanh %a3 : tensor<2x4x8xf32>
  %r = prim.reduce_sum %t dims [1] : tensor<2x4x8xf32> -> tensor<2x8xf32>
  %b = prim.broadcast_in_dim %r dims [0, 2] : tensor<2x8xf32> -> tensor<2x4x8xf32>
  %m = prim.mul %t, %b : tensor<2x4x8xf32>
  return %m : tensor<2x4x8xf32>
}

// -----

// The same in bfloat16: the buffer rounds the activation to bfloat16 (as
// eager's op does); recomputed, both kernels would read the five windows.
// CHECK-LABEL: func @reused_window_bf16
// CHECK: %[[W:.*]] = memref.alloc() {{.*}} : memref<2x4x8xbf16>
// CHECK: loop.kernel "tanh_0" [2, 4, 8]
// CHECK-COUNT-5: loop.load %arg0
// CHECK: math.tanh
// CHECK: arith.truncf
// CHECK: loop.store %{{.*}}, %[[W]]
// CHECK: loop.kernel
// CHECK-NOT: loop.load %arg0
// CHECK: loop.load %[[W]]
// CHECK: loop.kernel
// CHECK-NOT: loop.load %arg0
// CHECK: loop.load %[[W]]
func.func @reused_window_bf16(%x: tensor<2x4x12xbf16>) -> tensor<2x4x8xbf16> {
  %s0 = prim.slice %x start [0, 0, 0] stride [1, 1, 1] : tensor<2x4x12xbf16> -> tensor<2x4x8xbf16>
  %s1 = prim.slice %x start [0, 0, 1] stride [1, 1, 1] : tensor<2x4x12xbf16> -> tensor<2x4x8xbf16>
  %s2 = prim.slice %x start [0, 0, 2] stride [1, 1, 1] : tensor<2x4x12xbf16> -> tensor<2x4x8xbf16>
  %s3 = prim.slice %x start [0, 0, 3] stride [1, 1, 1] : tensor<2x4x12xbf16> -> tensor<2x4x8xbf16>
  %s4 = prim.slice %x start [0, 0, 4] stride [1, 1, 1] : tensor<2x4x12xbf16> -> tensor<2x4x8xbf16>
  %a0 = prim.add %s0, %s1 : tensor<2x4x8xbf16>
  %a1 = prim.add %a0, %s2 : tensor<2x4x8xbf16>
  %a2 = prim.add %a1, %s3 : tensor<2x4x8xbf16>
  %a3 = prim.add %a2, %s4 : tensor<2x4x8xbf16>
  %t = prim.tanh %a3 : tensor<2x4x8xbf16>
  %r = prim.reduce_sum %t dims [1] : tensor<2x4x8xbf16> -> tensor<2x8xbf16>
  %b = prim.broadcast_in_dim %r dims [0, 2] : tensor<2x8xbf16> -> tensor<2x4x8xbf16>
  %m = prim.mul %t, %b : tensor<2x4x8xbf16>
  return %m : tensor<2x4x8xbf16>
}

// -----

// A division read through a separable 3x3 window (three slices of three:
// nine windows) is computed once, into a buffer, rather than nine times in
// the pooling kernel (PoolFormer's pool of a GroupNorm output).
// CHECK-LABEL: func @nested_windows
// CHECK: %[[D:.*]] = memref.alloc() {{.*}} : memref<4x6x6xf32>
// CHECK: loop.kernel "div_0" [4, 6, 6]
// CHECK: arith.divf
// CHECK: loop.store %{{.*}}, %[[D]]
// CHECK: loop.kernel
// CHECK-NOT: arith.divf
// CHECK-COUNT-9: loop.load %[[D]]
func.func @nested_windows(%x: tensor<4x6x6xf32>, %y: tensor<4x6x6xf32>) -> tensor<4x4x4xf32> {
  %d = prim.div %x, %y : tensor<4x6x6xf32>
  %a0 = prim.slice %d start [0, 0, 0] stride [1, 1, 1] : tensor<4x6x6xf32> -> tensor<4x6x4xf32>
  %a1 = prim.slice %d start [0, 0, 1] stride [1, 1, 1] : tensor<4x6x6xf32> -> tensor<4x6x4xf32>
  %a2 = prim.slice %d start [0, 0, 2] stride [1, 1, 1] : tensor<4x6x6xf32> -> tensor<4x6x4xf32>
  %s0 = prim.add %a0, %a1 : tensor<4x6x4xf32>
  %s1 = prim.add %s0, %a2 : tensor<4x6x4xf32>
  %b0 = prim.slice %s1 start [0, 0, 0] stride [1, 1, 1] : tensor<4x6x4xf32> -> tensor<4x4x4xf32>
  %b1 = prim.slice %s1 start [0, 1, 0] stride [1, 1, 1] : tensor<4x6x4xf32> -> tensor<4x4x4xf32>
  %b2 = prim.slice %s1 start [0, 2, 0] stride [1, 1, 1] : tensor<4x6x4xf32> -> tensor<4x4x4xf32>
  %t0 = prim.add %b0, %b1 : tensor<4x4x4xf32>
  %t1 = prim.add %t0, %b2 : tensor<4x4x4xf32>
  return %t1 : tensor<4x4x4xf32>
}

// -----

// A ViT block's attention: one QKV projection sliced into q, k and v, each
// viewed as heads. The bias add gets one buffer [B, S, 3E], which the
// attention reads in place through three strided views, and the attention
// writes its heads in [B, S, H, D] order into the buffer of the transpose
// that follows it, which the output projection reads as [B*S, E]: no copy
// kernel around the attention.
// CHECK-LABEL: func @attention_views
// CHECK: loop.matmul
// CHECK: loop.kernel "add_{{[0-9]+}}" [2, 5, 192]
// CHECK-NOT: loop.kernel
// CHECK-DAG: %[[Q:.*]] = memref.reinterpret_cast %[[QKV:.*]] to offset: [0], sizes: [2, 4, 5, 16], strides: [960, 16, 192, 1]
// CHECK-DAG: %[[K:.*]] = memref.reinterpret_cast %[[QKV]] to offset: [64], sizes: [2, 4, 5, 16], strides: [960, 16, 192, 1]
// CHECK-DAG: %[[V:.*]] = memref.reinterpret_cast %[[QKV]] to offset: [128], sizes: [2, 4, 5, 16], strides: [960, 16, 192, 1]
// CHECK-DAG: %[[O:.*]] = memref.reinterpret_cast %[[T:.*]] to offset: [0], sizes: [2, 4, 5, 16], strides: [320, 16, 64, 1] : memref<2x5x4x16xf32>
// CHECK: loop.attention %[[Q]], %[[K]], %[[V]], %[[O]]
// CHECK-NOT: loop.kernel
// CHECK: %[[X:.*]] = memref.reinterpret_cast %[[T]] to offset: [0], sizes: [10, 64], strides: [64, 1] : memref<2x5x4x16xf32> to memref<10x64xf32>
// CHECK: loop.matmul %[[X]]
func.func @attention_views(%x: tensor<10x64xf32>, %w: tensor<64x192xf32>, %b: tensor<192xf32>, %wo: tensor<64x64xf32>) -> tensor<10x64xf32> {
  %0 = prim.dot_general %x, %w batch [], [] contract [1], [0] : tensor<10x64xf32>, tensor<64x192xf32> -> tensor<10x192xf32>
  %1 = prim.reshape %0 : tensor<10x192xf32> -> tensor<2x5x192xf32>
  %2 = prim.broadcast_in_dim %b dims [2] : tensor<192xf32> -> tensor<2x5x192xf32>
  %3 = prim.add %1, %2 : tensor<2x5x192xf32>
  %4 = prim.slice %3 start [0, 0, 0] stride [1, 1, 1] : tensor<2x5x192xf32> -> tensor<2x5x64xf32>
  %5 = prim.slice %3 start [0, 0, 64] stride [1, 1, 1] : tensor<2x5x192xf32> -> tensor<2x5x64xf32>
  %6 = prim.slice %3 start [0, 0, 128] stride [1, 1, 1] : tensor<2x5x192xf32> -> tensor<2x5x64xf32>
  %7 = prim.reshape %4 : tensor<2x5x64xf32> -> tensor<2x5x4x16xf32>
  %8 = prim.transpose %7 permutation [0, 2, 1, 3] : tensor<2x5x4x16xf32> -> tensor<2x4x5x16xf32>
  %9 = prim.reshape %5 : tensor<2x5x64xf32> -> tensor<2x5x4x16xf32>
  %10 = prim.transpose %9 permutation [0, 2, 1, 3] : tensor<2x5x4x16xf32> -> tensor<2x4x5x16xf32>
  %11 = prim.reshape %6 : tensor<2x5x64xf32> -> tensor<2x5x4x16xf32>
  %12 = prim.transpose %11 permutation [0, 2, 1, 3] : tensor<2x5x4x16xf32> -> tensor<2x4x5x16xf32>
  %13 = prim.attention %8, %10, %12 scale 0.25 : tensor<2x4x5x16xf32>, tensor<2x4x5x16xf32>, tensor<2x4x5x16xf32> -> tensor<2x4x5x16xf32>
  %14 = prim.transpose %13 permutation [0, 2, 1, 3] : tensor<2x4x5x16xf32> -> tensor<2x5x4x16xf32>
  %15 = prim.reshape %14 : tensor<2x5x4x16xf32> -> tensor<10x64xf32>
  %16 = prim.dot_general %15, %wo batch [], [] contract [1], [0] : tensor<10x64xf32>, tensor<64x64xf32> -> tensor<10x64xf32>
  return %16 : tensor<10x64xf32>
}

// -----

// A call by name marked `strided` (attention's kernel with its log-sum-exp,
// for training) reads q, k and v in place from the QKV projection's buffer,
// as prim.attention does; the same call without `strided` gets a copy kernel
// per operand (small temporaries of one shape: one kernel with three stores).
// CHECK-LABEL: func @strided_library_call
// CHECK: loop.matmul
// CHECK-NOT: loop.kernel
// CHECK-DAG: %[[Q:.*]] = memref.reinterpret_cast %[[QKV:.*]] to offset: [0], sizes: [2, 4, 5, 16], strides: [960, 16, 192, 1]
// CHECK-DAG: %[[K:.*]] = memref.reinterpret_cast %[[QKV]] to offset: [64], sizes: [2, 4, 5, 16], strides: [960, 16, 192, 1]
// CHECK-DAG: %[[V:.*]] = memref.reinterpret_cast %[[QKV]] to offset: [128], sizes: [2, 4, 5, 16], strides: [960, 16, 192, 1]
// CHECK: loop.library_call "attention_lse" ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) {{.*}} {strided}
// CHECK-NOT: loop.kernel
// CHECK: return
// CHECK-LABEL: func @contiguous_library_call
// CHECK: loop.matmul
// CHECK: loop.kernel "transpose_{{[0-9]+}}"
// CHECK-COUNT-3: loop.store
// CHECK-NOT: loop.kernel
// CHECK: loop.library_call "attention_lse" ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<2x4x5x16xf32>, memref<2x4x5x16xf32>, memref<2x4x5x16xf32>)
func.func @strided_library_call(%x: tensor<10x64xf32>, %w: tensor<64x192xf32>) -> (tensor<2x4x5x16xf32>, tensor<2x4x32xf32>, tensor<2xi64>) {
  %0 = prim.dot_general %x, %w batch [], [] contract [1], [0] : tensor<10x64xf32>, tensor<64x192xf32> -> tensor<10x192xf32>
  %1 = prim.reshape %0 : tensor<10x192xf32> -> tensor<2x5x192xf32>
  %4 = prim.slice %1 start [0, 0, 0] stride [1, 1, 1] : tensor<2x5x192xf32> -> tensor<2x5x64xf32>
  %5 = prim.slice %1 start [0, 0, 64] stride [1, 1, 1] : tensor<2x5x192xf32> -> tensor<2x5x64xf32>
  %6 = prim.slice %1 start [0, 0, 128] stride [1, 1, 1] : tensor<2x5x192xf32> -> tensor<2x5x64xf32>
  %7 = prim.reshape %4 : tensor<2x5x64xf32> -> tensor<2x5x4x16xf32>
  %8 = prim.transpose %7 permutation [0, 2, 1, 3] : tensor<2x5x4x16xf32> -> tensor<2x4x5x16xf32>
  %9 = prim.reshape %5 : tensor<2x5x64xf32> -> tensor<2x5x4x16xf32>
  %10 = prim.transpose %9 permutation [0, 2, 1, 3] : tensor<2x5x4x16xf32> -> tensor<2x4x5x16xf32>
  %11 = prim.reshape %6 : tensor<2x5x64xf32> -> tensor<2x5x4x16xf32>
  %12 = prim.transpose %11 permutation [0, 2, 1, 3] : tensor<2x5x4x16xf32> -> tensor<2x4x5x16xf32>
  %r:3 = prim.library_call "attention_lse"(%8, %10, %12) params [0, 0, 4598175219545276416] {strided} : (tensor<2x4x5x16xf32>, tensor<2x4x5x16xf32>, tensor<2x4x5x16xf32>) -> (tensor<2x4x5x16xf32>, tensor<2x4x32xf32>, tensor<2xi64>)
  return %r#0, %r#1, %r#2 : tensor<2x4x5x16xf32>, tensor<2x4x32xf32>, tensor<2xi64>
}
func.func @contiguous_library_call(%x: tensor<10x64xf32>, %w: tensor<64x192xf32>) -> (tensor<2x4x5x16xf32>, tensor<2x4x32xf32>, tensor<2xi64>) {
  %0 = prim.dot_general %x, %w batch [], [] contract [1], [0] : tensor<10x64xf32>, tensor<64x192xf32> -> tensor<10x192xf32>
  %1 = prim.reshape %0 : tensor<10x192xf32> -> tensor<2x5x192xf32>
  %4 = prim.slice %1 start [0, 0, 0] stride [1, 1, 1] : tensor<2x5x192xf32> -> tensor<2x5x64xf32>
  %5 = prim.slice %1 start [0, 0, 64] stride [1, 1, 1] : tensor<2x5x192xf32> -> tensor<2x5x64xf32>
  %6 = prim.slice %1 start [0, 0, 128] stride [1, 1, 1] : tensor<2x5x192xf32> -> tensor<2x5x64xf32>
  %7 = prim.reshape %4 : tensor<2x5x64xf32> -> tensor<2x5x4x16xf32>
  %8 = prim.transpose %7 permutation [0, 2, 1, 3] : tensor<2x5x4x16xf32> -> tensor<2x4x5x16xf32>
  %9 = prim.reshape %5 : tensor<2x5x64xf32> -> tensor<2x5x4x16xf32>
  %10 = prim.transpose %9 permutation [0, 2, 1, 3] : tensor<2x5x4x16xf32> -> tensor<2x4x5x16xf32>
  %11 = prim.reshape %6 : tensor<2x5x64xf32> -> tensor<2x5x4x16xf32>
  %12 = prim.transpose %11 permutation [0, 2, 1, 3] : tensor<2x5x4x16xf32> -> tensor<2x4x5x16xf32>
  %r:3 = prim.library_call "attention_lse"(%8, %10, %12) params [0, 0, 4598175219545276416] : (tensor<2x4x5x16xf32>, tensor<2x4x5x16xf32>, tensor<2x4x5x16xf32>) -> (tensor<2x4x5x16xf32>, tensor<2x4x32xf32>, tensor<2xi64>)
  return %r#0, %r#1, %r#2 : tensor<2x4x5x16xf32>, tensor<2x4x32xf32>, tensor<2xi64>
}

// -----

// A padding mask [B, S] broadcast over heads and queries to [B, H, S, S] is
// read in place with zero strides: its buffer holds [B, S], as eager's
// expanded mask does.
// CHECK-LABEL: func @attention_broadcast_mask
// CHECK: memref.alloc() {{.*}} : memref<2x8xf32>
// CHECK-NOT: memref.alloc
// CHECK: %[[M:.*]] = memref.reinterpret_cast {{.*}} sizes: [2, 4, 8, 8], strides: [8, 0, 0, 1]
// CHECK: loop.attention {{.*}} mask %[[M]]
func.func @attention_broadcast_mask(%q: tensor<2x4x8x16xf32>, %m: tensor<2x8xf32>) -> tensor<2x4x8x16xf32> {
  %c = prim.constant dense<-1.0e+04> : tensor<2x8xf32>
  %0 = prim.mul %m, %c : tensor<2x8xf32>
  %1 = prim.reshape %0 : tensor<2x8xf32> -> tensor<2x1x1x8xf32>
  %2 = prim.broadcast_in_dim %1 dims [0, 1, 2, 3] : tensor<2x1x1x8xf32> -> tensor<2x1x8x8xf32>
  %3 = prim.broadcast_in_dim %2 dims [0, 1, 2, 3] : tensor<2x1x8x8xf32> -> tensor<2x4x8x8xf32>
  %4 = prim.attention %q, %q, %q mask %3 scale 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x16xf32>
  return %4 : tensor<2x4x8x16xf32>
}

// -----

// A per-sample mean (GroupNorm with one group) read through a reshape that
// merges dims (MobileViT's patches): every output dim seems to feed the
// mean's index, yet the mean has 2 values for 288 points. It gets a kernel of
// its own instead of being summed again for every output element.
// CHECK-LABEL: func @reduction_through_merging_reshape
// CHECK: loop.kernel "reduce_sum_0" [2]
// CHECK: loop.reduce add [4, 6, 6]
// CHECK: loop.kernel "mul_1" [2, 4, 4, 9]
// CHECK-NOT: loop.reduce
// CHECK: return
func.func @reduction_through_merging_reshape(%arg0: tensor<2x4x6x6xf32>) -> tensor<2x4x4x9xf32> {
  %0 = prim.constant dense<2.000000e+00> : tensor<f32>
  %1 = prim.constant dense<1.440000e+02> : tensor<2xf32>
  %2 = prim.reduce_sum %arg0 dims [1, 2, 3] : tensor<2x4x6x6xf32> -> tensor<2xf32>
  %3 = prim.div %2, %1 : tensor<2xf32>
  %4 = prim.reshape %3 : tensor<2xf32> -> tensor<2x1x1x1xf32>
  %5 = prim.broadcast_in_dim %4 dims [0, 1, 2, 3] : tensor<2x1x1x1xf32> -> tensor<2x4x6x6xf32>
  %6 = prim.sub %arg0, %5 : tensor<2x4x6x6xf32>
  %7 = prim.reshape %6 : tensor<2x4x6x6xf32> -> tensor<2x4x3x2x3x2xf32>
  %8 = prim.transpose %7 permutation [0, 1, 3, 5, 2, 4] : tensor<2x4x3x2x3x2xf32> -> tensor<2x4x2x2x3x3xf32>
  %9 = prim.reshape %8 : tensor<2x4x2x2x3x3xf32> -> tensor<2x4x4x9xf32>
  %10 = prim.broadcast_in_dim %0 dims [] : tensor<f32> -> tensor<2x4x4x9xf32>
  %11 = prim.mul %9, %10 : tensor<2x4x4x9xf32>
  return %11 : tensor<2x4x4x9xf32>
}

// -----

// A transposed lhs (a weight gradient's x^T @ grad) is read in place by the
// library call (transpose_a): no transpose kernel, no copy.
// CHECK-LABEL: func @transposed_lhs
// CHECK-SAME: (%[[X:[^:]*]]: memref<64x32xf32>, %[[G:[^:]*]]: memref<64x16xf32>
// CHECK-NOT: loop.kernel "transpose
// CHECK: loop.matmul %[[X]], %[[G]], %{{.*}} transpose_a : memref<64x32xf32>, memref<64x16xf32>, memref<32x16xf32>
func.func @transposed_lhs(%x: tensor<64x32xf32>, %g: tensor<64x16xf32>) -> tensor<32x16xf32> {
  %0 = prim.transpose %x permutation [1, 0] : tensor<64x32xf32> -> tensor<32x64xf32>
  %1 = prim.dot_general %0, %g batch [], [] contract [1], [0] : tensor<32x64xf32>, tensor<64x16xf32> -> tensor<32x16xf32>
  return %1 : tensor<32x16xf32>
}

// -----

// Dynamic dims: softmax over rows of runtime length is still one kernel; its
// domain and the reductions' come from the input buffer's dims.
// CHECK-LABEL: func @dynamic_softmax
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[OUT:.*]]: memref<?x?xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[N:.*]] = memref.dim %[[X]], %c0
// CHECK: loop.kernel "div_0" [%[[N]]]
// CHECK: loop.reduce max [%{{.*}}]
// CHECK: loop.reduce add [%{{.*}}]
// CHECK: loop.for [%{{.*}}]
// CHECK: loop.store %{{.*}}, %[[OUT]]
func.func @dynamic_softmax(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %n = prim.dim %x, 0 : tensor<?x?xf32>
  %m = prim.dim %x, 1 : tensor<?x?xf32>
  %mx = prim.reduce_max %x dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %b = prim.broadcast_in_dim %mx dims [0] sizes(%n, %m) : tensor<?xf32> -> tensor<?x?xf32>
  %d = prim.sub %x, %b : tensor<?x?xf32>
  %e = prim.exp %d : tensor<?x?xf32>
  %s = prim.reduce_sum %e dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %sb = prim.broadcast_in_dim %s dims [0] sizes(%n, %m) : tensor<?xf32> -> tensor<?x?xf32>
  %r = prim.div %e, %sb : tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// A temporary of a dynamic shape is allocated with its runtime size; the
// GEMM reads it as a buffer with a dynamic dim.
// CHECK-LABEL: func @dynamic_gemm
// CHECK-SAME: (%[[X:.*]]: memref<?x8xf32>, %[[W:.*]]: memref<8x4xf32>, %[[OUT:.*]]: memref<?x4xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[X]], %c0
// CHECK: %[[T:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x8xf32>
// CHECK: loop.kernel "tanh_0" [%{{.*}}, 8]
// CHECK: loop.matmul %[[T]], %[[W]], %[[OUT]] : memref<?x8xf32>, memref<8x4xf32>, memref<?x4xf32>
// CHECK: memref.dealloc %[[T]]
func.func @dynamic_gemm(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>) -> tensor<?x4xf32> {
  %t = prim.tanh %x : tensor<?x8xf32>
  %y = prim.dot_general %t, %w batch [], [] contract [1], [0] : tensor<?x8xf32>, tensor<8x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// A value that reads five windows (a max over shifted slices: max pooling's
// indices, say) read through two gathers gets a buffer: inlined, each gather
// would recompute all five windows.
// CHECK-LABEL: func @windows_read_through_gathers
// CHECK: %[[M:.*]] = memref.alloc() {{.*}} : memref<2x4xf32>
// CHECK: loop.kernel "max_{{[0-9]+}}" [2, 4]
// CHECK-COUNT-5: loop.load %arg0
// CHECK: loop.store %{{.*}}, %[[M]]
// CHECK: loop.kernel "add_{{[0-9]+}}" [2, 8]
// CHECK-NOT: loop.load %arg0
// CHECK-COUNT-2: loop.load %[[M]]
// CHECK-NOT: loop.load %arg0
// CHECK: return
func.func @windows_read_through_gathers(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s0 = prim.slice %x start [0, 0] stride [1, 1] : tensor<2x8xf32> -> tensor<2x4xf32>
  %s1 = prim.slice %x start [0, 1] stride [1, 1] : tensor<2x8xf32> -> tensor<2x4xf32>
  %s2 = prim.slice %x start [0, 2] stride [1, 1] : tensor<2x8xf32> -> tensor<2x4xf32>
  %s3 = prim.slice %x start [0, 3] stride [1, 1] : tensor<2x8xf32> -> tensor<2x4xf32>
  %s4 = prim.slice %x start [0, 4] stride [1, 1] : tensor<2x8xf32> -> tensor<2x4xf32>
  %m0 = prim.max %s0, %s1 : tensor<2x4xf32>
  %m1 = prim.max %m0, %s2 : tensor<2x4xf32>
  %m2 = prim.max %m1, %s3 : tensor<2x4xf32>
  %m3 = prim.max %m2, %s4 : tensor<2x4xf32>
  %c0 = prim.constant dense<[0, 0, 1, 1, 2, 2, 3, 3]> : tensor<8xi64>
  %i0 = prim.broadcast_in_dim %c0 dims [1] : tensor<8xi64> -> tensor<2x8xi64>
  %g0 = prim.gather %m3 dim 1 index %i0 : tensor<2x4xf32>, tensor<2x8xi64> -> tensor<2x8xf32>
  %c1 = prim.constant dense<[0, 1, 1, 2, 2, 3, 3, 3]> : tensor<8xi64>
  %i1 = prim.broadcast_in_dim %c1 dims [1] : tensor<8xi64> -> tensor<2x8xi64>
  %g1 = prim.gather %m3 dim 1 index %i1 : tensor<2x4xf32>, tensor<2x8xi64> -> tensor<2x8xf32>
  %r = prim.add %g0, %g1 : tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
