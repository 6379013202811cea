// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim | FileCheck %s
// RUN: dyn-opt %s -split-input-file -dyn-graph-to-prim -dyn-prim-to-loop-gpu -dyn-convert-loop-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: dyn-opt %s -split-input-file -dyn-gpu | FileCheck %s --check-prefix=PTX

// Plain scatter: the candidates k (index rows) spread next to the result's
// dim 0, masked by index == position (the index padded with -1 to the
// input's width, matching nothing); the last matching k is gathered from src
// (cut to the index's extent), positions with no match keep the input.
// CHECK-LABEL: func @scatter_none
// CHECK: %[[PAD:.*]] = prim.pad %arg1 low [0, 0] high [0, 1] value -1.0{{.*}} : tensor<3x5xi64> -> tensor<3x6xi64>
// CHECK: %[[IDX:.*]] = prim.broadcast_in_dim %[[PAD]] dims [1, 2] : tensor<3x6xi64> -> tensor<4x3x6xi64>
// CHECK: %[[POS:.*]] = prim.iota dim 0 : tensor<4x3x6xi64>
// CHECK: %[[MASK:.*]] = prim.eq %[[IDX]], %[[POS]]
// CHECK: %[[K:.*]] = prim.iota dim 1 : tensor<4x3x6xi64>
// CHECK: %[[CAND:.*]] = prim.select %[[MASK]], %[[K]], %{{.*}} : tensor<4x3x6xi1>, tensor<4x3x6xi64>
// CHECK: %[[LAST:.*]] = prim.reduce_max %[[CAND]] dims [1] : tensor<4x3x6xi64> -> tensor<4x6xi64>
// CHECK: %[[HIT:.*]] = prim.ge %[[LAST]]
// CHECK: %[[AT:.*]] = prim.max %[[LAST]]
// CHECK: %[[CUT:.*]] = prim.slice %arg2 start [0, 0] stride [1, 1] : tensor<3x6xf32> -> tensor<3x5xf32>
// CHECK: %[[SRC:.*]] = prim.pad %[[CUT]]
// CHECK: %[[G:.*]] = prim.gather %[[SRC]] dim 0 index %[[AT]] : tensor<3x6xf32>, tensor<4x6xi64> -> tensor<4x6xf32>
// CHECK: prim.select %[[HIT]], %[[G]], %arg0
// GPU-LABEL: func.func @scatter_none
// GPU: gpu.launch
// GPU: loop.reduce max [3] : i64
// GPU: loop.store {{.*}} : memref<4x6xf32>
// PTX: gpu.binary
func.func @scatter_none(%x: tensor<4x6xf32>, %i: tensor<3x5xi64>, %s: tensor<3x6xf32>) -> tensor<4x6xf32> {
  %0 = graph.scatter none %x dim 0 index %i src %s : tensor<4x6xf32>, tensor<3x5xi64>, tensor<3x6xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// scatter_add with the input: the masked src summed over k, added to the input.
// CHECK-LABEL: func @scatter_sum
// CHECK: %[[MASK:.*]] = prim.eq
// CHECK: %[[S:.*]] = prim.broadcast_in_dim %arg2 dims [0, 2] : tensor<5x3xf32> -> tensor<5x5x3xf32>
// CHECK: %[[M:.*]] = prim.select %[[MASK]], %[[S]], %{{.*}} : tensor<5x5x3xi1>, tensor<5x5x3xf32>
// CHECK: %[[SUM:.*]] = prim.reduce_sum %[[M]] dims [2] : tensor<5x5x3xf32> -> tensor<5x5xf32>
// CHECK: prim.add %arg0, %[[SUM]] : tensor<5x5xf32>
// GPU-LABEL: func.func @scatter_sum
// GPU: gpu.launch
// GPU: scf.for {{.*}} -> (f32)
// GPU: loop.store {{.*}} : memref<5x5xf32>
func.func @scatter_sum(%x: tensor<5x5xf32>, %i: tensor<5x3xi64>, %s: tensor<5x3xf32>) -> tensor<5x5xf32> {
  %0 = graph.scatter sum %x dim 1 index %i src %s include_self : tensor<5x5xf32>, tensor<5x3xi64>, tensor<5x3xf32> -> tensor<5x5xf32>
  return %0 : tensor<5x5xf32>
}

// -----

// mean without the input: the sum over the count of candidates written (at
// least 1); positions nothing is written to keep the input. bf16 computes in
// f32 and rounds once.
// CHECK-LABEL: func @scatter_mean
// CHECK: prim.convert_element_type %arg2 : tensor<3xbf16> -> tensor<3xf32>
// CHECK: %[[SUM:.*]] = prim.reduce_sum {{.*}} : tensor<4x3xf32> -> tensor<4xf32>
// CHECK: %[[CNT:.*]] = prim.reduce_sum {{.*}} : tensor<4x3xi64> -> tensor<4xi64>
// CHECK: %[[DEN:.*]] = prim.convert_element_type %[[CNT]] : tensor<4xi64> -> tensor<4xf32>
// CHECK: %[[ONE:.*]] = prim.max %[[DEN]]
// CHECK: %[[Q:.*]] = prim.div %[[SUM]], %[[ONE]]
// CHECK: %[[W:.*]] = prim.gt %[[CNT]]
// CHECK: %[[R:.*]] = prim.select %[[W]], %[[Q]]
// CHECK: prim.convert_element_type %[[R]] : tensor<4xf32> -> tensor<4xbf16>
func.func @scatter_mean(%x: tensor<4xbf16>, %i: tensor<3xi32>, %s: tensor<3xbf16>) -> tensor<4xbf16> {
  %0 = graph.scatter mean %x dim 0 index %i src %s : tensor<4xbf16>, tensor<3xi32>, tensor<3xbf16> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// amax over integers: the lowest i32 as the identity, max with the input.
// CHECK-LABEL: func @scatter_amax_int
// CHECK: prim.constant dense<-2147483648> : tensor<4x3xi32>
// CHECK: prim.reduce_max {{.*}} : tensor<4x3xi32> -> tensor<4xi32>
// CHECK: prim.max %arg0
func.func @scatter_amax_int(%x: tensor<4xi32>, %i: tensor<3xi64>, %s: tensor<3xi32>) -> tensor<4xi32> {
  %0 = graph.scatter amax %x dim 0 index %i src %s include_self : tensor<4xi32>, tensor<3xi64>, tensor<3xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// An empty index writes nothing: the input.
// CHECK-LABEL: func @scatter_empty
// CHECK-NEXT: return %arg0
func.func @scatter_empty(%x: tensor<4xf32>, %i: tensor<0xi64>, %s: tensor<0xf32>) -> tensor<4xf32> {
  %0 = graph.scatter prod %x dim 0 index %i src %s : tensor<4xf32>, tensor<0xi64>, tensor<0xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// as_strided_scatter (here a diagonal_scatter): each result element gathers
// its writer in src (a constant), or keeps the input where none writes.
// CHECK-LABEL: func @as_strided_scatter
// CHECK: %[[I:.*]] = prim.constant dense<[0, 0, 0, 0, 1, 0, 0, 0, 2]> : tensor<9xi64>
// CHECK: %[[G:.*]] = prim.gather %{{.*}} dim 0 index %[[I]] : tensor<3xf32>, tensor<9xi64> -> tensor<9xf32>
// CHECK: %[[M:.*]] = prim.constant dense<[true, false, false, false, true, false, false, false, true]> : tensor<9xi1>
// CHECK: %[[X:.*]] = prim.reshape %{{.*}} : tensor<3x3xf32> -> tensor<9xf32>
// CHECK: %[[S:.*]] = prim.select %[[M]], %[[G]], %[[X]]
// CHECK: prim.reshape %[[S]] : tensor<9xf32> -> tensor<3x3xf32>
// CHECK-NOT: graph.
func.func @as_strided_scatter(%x: tensor<3x3xf32>, %s: tensor<3xf32>) -> tensor<3x3xf32> {
  %0 = graph.as_strided_scatter %x, %s {size = array<i64: 3>, stride = array<i64: 4>, storage_offset = 0 : i64} : tensor<3x3xf32>, tensor<3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// Repeated positions (stride 0): the last write in src's order wins; every
// position written: no select.
// CHECK-LABEL: func @as_strided_scatter_overlap
// CHECK: prim.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-NOT: prim.select
func.func @as_strided_scatter_overlap(%x: tensor<2xf32>, %s: tensor<2x2xf32>) -> tensor<2xf32> {
  %0 = graph.as_strided_scatter %x, %s {size = array<i64: 2, 2>, stride = array<i64: 0, 1>, storage_offset = 0 : i64} : tensor<2xf32>, tensor<2x2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// wraps: a negative index counts from the end (index + 4) before matching.
// CHECK-LABEL: func @scatter_wraps
// CHECK: %[[LT:.*]] = prim.lt %[[I:.*]], %{{.*}} : tensor<2xi64> -> tensor<2xi1>
// CHECK: %[[UP:.*]] = prim.add %[[I]], %{{.*}} : tensor<2xi64>
// CHECK: prim.select %[[LT]], %[[UP]], %[[I]] : tensor<2xi1>, tensor<2xi64>
func.func @scatter_wraps(%x: tensor<4xf32>, %i: tensor<2xi64>, %s: tensor<2xf32>) -> tensor<4xf32> {
  %0 = graph.scatter none %x dim 0 index %i src %s wraps : tensor<4xf32>, tensor<2xi64>, tensor<2xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// index_add: source times alpha, the 1-D index broadcast along dim 0 to
// source's shape, then graph.scatter's sum with the input included.
// CHECK-LABEL: func @index_add
// CHECK: %[[A:.*]] = prim.constant dense<2.000000e+00> : tensor<2x3xf32>
// CHECK: %[[S:.*]] = prim.mul %arg2, %[[A]] : tensor<2x3xf32>
// CHECK: %[[I:.*]] = prim.broadcast_in_dim %arg1 dims [0] : tensor<2xi64> -> tensor<2x3xi64>
// CHECK: prim.broadcast_in_dim %[[I]] dims [1, 2] : tensor<2x3xi64> -> tensor<5x2x3xi64>
// CHECK: prim.broadcast_in_dim %[[S]] dims [1, 2] : tensor<2x3xf32> -> tensor<5x2x3xf32>
// CHECK: %[[AGG:.*]] = prim.reduce_sum %{{.*}} dims [1] : tensor<5x2x3xf32> -> tensor<5x3xf32>
// CHECK: prim.add %arg0, %[[AGG]] : tensor<5x3xf32>
func.func @index_add(%x: tensor<5x3xf32>, %i: tensor<2xi64>, %s: tensor<2x3xf32>) -> tensor<5x3xf32> {
  %0 = graph.index_add %x, %i, %s {dim = 0 : i64, alpha = 2.0 : f64} : tensor<5x3xf32>, tensor<2xi64>, tensor<2x3xf32> -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// masked_scatter: the running count of the mask (j <= i over [6, 6]) less
// one picks source's element where the mask is set.
// CHECK-LABEL: func @masked_scatter
// CHECK: %[[M:.*]] = prim.reshape %arg1 : tensor<2x3xi1> -> tensor<6xi1>
// CHECK: %[[X:.*]] = prim.reshape %arg0 : tensor<2x3xf32> -> tensor<6xf32>
// CHECK: prim.le %{{.*}}, %{{.*}} : tensor<6x6xi64> -> tensor<6x6xi1>
// CHECK: %[[K:.*]] = prim.reduce_sum %{{.*}} dims [1] : tensor<6x6xi64> -> tensor<6xi64>
// CHECK: %[[K1:.*]] = prim.sub %[[K]]
// CHECK: %[[AT:.*]] = prim.max %[[K1]]
// CHECK: %[[P:.*]] = prim.gather %arg2 dim 0 index %[[AT]] : tensor<8xf32>, tensor<6xi64> -> tensor<6xf32>
// CHECK: %[[R:.*]] = prim.select %[[M]], %[[P]], %[[X]]
// CHECK: prim.reshape %[[R]] : tensor<6xf32> -> tensor<2x3xf32>
func.func @masked_scatter(%x: tensor<2x3xf32>, %m: tensor<2x3xi1>, %s: tensor<8xf32>) -> tensor<2x3xf32> {
  %0 = graph.masked_scatter %x, %m, %s : tensor<2x3xf32>, tensor<2x3xi1>, tensor<8xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// histc with min == max: the elements' own range (widened where it is one
// value), each element's bin (x - lo) * bins / (hi - lo) truncated, hi in the
// last bin, outside -1; ones summed per bin.
// CHECK-LABEL: func @histc
// CHECK: %[[V:.*]] = prim.reshape %arg0 : tensor<2x3xf32> -> tensor<6xf32>
// CHECK: %[[MN:.*]] = prim.reduce_min %[[V]] dims [0] : tensor<6xf32> -> tensor<f32>
// CHECK: %[[MX:.*]] = prim.reduce_max %[[V]] dims [0] : tensor<6xf32> -> tensor<f32>
// CHECK: prim.eq %[[MN]], %[[MX]] : tensor<f32> -> tensor<i1>
// CHECK: %[[BIN:.*]] = prim.div
// CHECK: prim.constant dense<3> : tensor<6xi64>
// CHECK: prim.convert_element_type %[[BIN]] : tensor<6xf32> -> tensor<6xi64>
// CHECK: prim.constant dense<-1> : tensor<6xi64>
// CHECK: prim.reduce_sum %{{.*}} dims [1] : tensor<4x6xf32> -> tensor<4xf32>
func.func @histc(%x: tensor<2x3xf32>) -> tensor<4xf32> {
  %0 = graph.histc %x {bins = 4 : i64, min = 0.0 : f64, max = 0.0 : f64} : tensor<2x3xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// embedding_bag: each entry's bag is the count of offsets at or before it less
// one (-1 for padding_idx 2), the weight rows gathered times
// per_sample_weights, summed into zeros by bag.
// CHECK-LABEL: func @embedding_bag
// CHECK: %[[OFFS:.*]] = prim.broadcast_in_dim %arg2 dims [1] : tensor<3xi64> -> tensor<6x3xi64>
// CHECK: prim.le %[[OFFS]], %{{.*}} : tensor<6x3xi64> -> tensor<6x3xi1>
// CHECK: prim.reduce_sum %{{.*}} dims [1] : tensor<6x3xi64> -> tensor<6xi64>
// CHECK: prim.constant dense<2> : tensor<6xi64>
// CHECK: %[[PAD:.*]] = prim.eq %arg1
// CHECK: %[[BAG:.*]] = prim.select %[[PAD]]
// CHECK: %[[ROWS:.*]] = prim.gather %arg0 dim 0 index %{{.*}} : tensor<10x4xf32>, tensor<6x4xi64> -> tensor<6x4xf32>
// CHECK: %[[W:.*]] = prim.broadcast_in_dim %arg3 dims [0] : tensor<6xf32> -> tensor<6x4xf32>
// CHECK: prim.mul %[[ROWS]], %[[W]] : tensor<6x4xf32>
// CHECK: prim.broadcast_in_dim %[[BAG]] dims [0] : tensor<6xi64> -> tensor<6x4xi64>
// CHECK: prim.reduce_sum %{{.*}} dims [1] : tensor<3x6x4xf32> -> tensor<3x4xf32>
func.func @embedding_bag(%w: tensor<10x4xf32>, %i: tensor<6xi64>, %o: tensor<3xi64>, %p: tensor<6xf32>) -> tensor<3x4xf32> {
  %0 = graph.embedding_bag %w, %i, %o, %p {mode = "sum", padding_idx = 2 : i64, include_last_offset = false} : (tensor<10x4xf32>, tensor<6xi64>, tensor<3xi64>, tensor<6xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// masked_index: the two stacked indices clamped into [0, 5] and [0, 6],
// combined into a linear index over the flattened dims 1-2 (6 x 7 = 42),
// gathered, then the fill where the broadcast mask is false.
// CHECK-LABEL: func @masked_index
// CHECK: prim.slice %arg2 start [0, 0, 0] stride [1, 1, 1] : tensor<2x2x3xi64> -> tensor<1x2x3xi64>
// CHECK: prim.constant dense<5> : tensor<2x3xi64>
// CHECK: prim.constant dense<7> : tensor<2x3xi64>
// CHECK: prim.slice %arg2 start [1, 0, 0]
// CHECK: prim.constant dense<6> : tensor<2x3xi64>
// CHECK: %[[LIN:.*]] = prim.add
// CHECK: %[[FLAT:.*]] = prim.reshape %arg0 : tensor<5x6x7xf32> -> tensor<5x42xf32>
// CHECK: %[[L:.*]] = prim.reshape %[[LIN]] : tensor<2x3xi64> -> tensor<6xi64>
// CHECK: %[[IDX:.*]] = prim.broadcast_in_dim %[[L]] dims [1] : tensor<6xi64> -> tensor<5x6xi64>
// CHECK: %[[G:.*]] = prim.gather %[[FLAT]] dim 1 index %[[IDX]] : tensor<5x42xf32>, tensor<5x6xi64> -> tensor<5x6xf32>
// CHECK: %[[R:.*]] = prim.reshape %[[G]] : tensor<5x6xf32> -> tensor<5x2x3xf32>
// CHECK: %[[M:.*]] = prim.broadcast_in_dim %arg1 dims [1, 2] : tensor<2x3xi1> -> tensor<5x2x3xi1>
// CHECK: %[[F:.*]] = prim.constant dense<5.000000e-01> : tensor<5x2x3xf32>
// CHECK: prim.select %[[M]], %[[R]], %[[F]]
func.func @masked_index(%x: tensor<5x6x7xf32>, %m: tensor<2x3xi1>, %i: tensor<2x2x3xi64>) -> tensor<5x2x3xf32> {
  %0 = graph.masked_index %x, %m, %i {dim = 1 : i64, fill = 0.5 : f64} : tensor<5x6x7xf32>, tensor<2x3xi1>, tensor<2x2x3xi64> -> tensor<5x2x3xf32>
  return %0 : tensor<5x2x3xf32>
}

// -----

// masked_index_put: the index clamped into [-5, 4] and wrapped, the values 0
// where the mask is false, summed in with the input (graph.scatter's sum).
// CHECK-LABEL: func @masked_index_put
// CHECK: prim.constant dense<-5> : tensor<3xi64>
// CHECK: prim.constant dense<4> : tensor<3xi64>
// CHECK: prim.lt
// CHECK: %[[M:.*]] = prim.broadcast_in_dim %arg1 dims [0, 1] : tensor<3x1xi1> -> tensor<3x6xi1>
// CHECK: %[[V:.*]] = prim.select %[[M]], %arg3
// CHECK: prim.broadcast_in_dim %[[V]] dims [1, 2] : tensor<3x6xf32> -> tensor<5x3x6xf32>
// CHECK: %[[AGG:.*]] = prim.reduce_sum %{{.*}} dims [1] : tensor<5x3x6xf32> -> tensor<5x6xf32>
// CHECK: prim.add %arg0, %[[AGG]] : tensor<5x6xf32>
func.func @masked_index_put(%x: tensor<5x6xf32>, %m: tensor<3x1xi1>, %i: tensor<1x3xi64>, %v: tensor<3x6xf32>) -> tensor<5x6xf32> {
  %0 = graph.masked_index_put %x, %m, %i, %v {dim = 0 : i64} : tensor<5x6xf32>, tensor<3x1xi1>, tensor<1x3xi64>, tensor<3x6xf32> -> tensor<5x6xf32>
  return %0 : tensor<5x6xf32>
}

// -----

// histc of integers (CUDA's kernel; capture records it on CUDA only): the
// bounds truncated to integers (0.5 -> 0), the bin (x - min) * bins / (max -
// min) in int64 with a truncating division, the counts in the input's type.
// CHECK-LABEL: func @histc_int
// CHECK: %[[X:.*]] = prim.convert_element_type %arg0 : tensor<6xi32> -> tensor<6xi64>
// CHECK: %[[LO:.*]] = prim.constant dense<0> : tensor<6xi64>
// CHECK: %[[D:.*]] = prim.sub %[[X]], %[[LO]] : tensor<6xi64>
// CHECK: %[[M:.*]] = prim.mul %[[D]], %{{.*}} : tensor<6xi64>
// CHECK: prim.div %[[M]], %{{.*}} : tensor<6xi64>
// CHECK: prim.reduce_sum %{{.*}} dims [1] : tensor<4x6xi32> -> tensor<4xi32>
func.func @histc_int(%x: tensor<6xi32>) -> tensor<4xi32> {
  %0 = graph.histc %x {bins = 4 : i64, min = 0.5 : f64, max = 8.0 : f64} : tensor<6xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
