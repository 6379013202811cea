// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim | FileCheck %s

// all/any: non-zero as 0/1 in i32, reduced by min (all) or max (any), then
// `> 0`: an empty reduction (INT_MAX, INT_MIN) is true for all, false for any.
// CHECK-LABEL: func @all_any
// CHECK: %[[B:.*]] = prim.ne %{{.*}}, %{{.*}} : tensor<4x6xf32> -> tensor<4x6xi1>
// CHECK: %[[I:.*]] = prim.convert_element_type %[[B]] : tensor<4x6xi1> -> tensor<4x6xi32>
// CHECK: %[[MIN:.*]] = prim.reduce_min %[[I]] dims [0] : tensor<4x6xi32> -> tensor<6xi32>
// CHECK: prim.gt %[[MIN]], %{{.*}} : tensor<6xi32> -> tensor<6xi1>
// CHECK: %[[MAX:.*]] = prim.reduce_max %{{.*}} dims [1] : tensor<4x6xi32> -> tensor<4xi32>
// CHECK: %[[ANY:.*]] = prim.gt %[[MAX]], %{{.*}} : tensor<4xi32> -> tensor<4xi1>
// CHECK: prim.reshape %[[ANY]] : tensor<4xi1> -> tensor<4x1xi1>
func.func @all_any(%x: tensor<4x6xf32>, %b: tensor<4x6xi1>) -> (tensor<6xi1>, tensor<4x1xi1>) {
  %0 = graph.all %x dims [0] : tensor<4x6xf32> -> tensor<6xi1>
  %1 = graph.any %b dims [1] keepdim : tensor<4x6xi1> -> tensor<4x1xi1>
  return %0, %1 : tensor<6xi1>, tensor<4x1xi1>
}

// -----

// argmax: the least position where x is its max or NaN.
// CHECK-LABEL: func @argmax
// CHECK: %[[M:.*]] = prim.reduce_max %[[X:.*]] dims [1] : tensor<4x6xf32> -> tensor<4xf32>
// CHECK: %[[MB:.*]] = prim.broadcast_in_dim %[[M]] dims [0] : tensor<4xf32> -> tensor<4x6xf32>
// CHECK: %[[EQ:.*]] = prim.eq %[[X]], %[[MB]]
// CHECK: %[[NAN:.*]] = prim.ne %[[X]], %[[X]]
// CHECK: %[[HIT:.*]] = prim.or %[[EQ]], %[[NAN]]
// CHECK: %[[POS:.*]] = prim.iota dim 1 : tensor<4x6xi64>
// CHECK: %[[N:.*]] = prim.constant dense<6> : tensor<4x6xi64>
// CHECK: %[[C:.*]] = prim.select %[[HIT]], %[[POS]], %[[N]]
// CHECK: %[[I:.*]] = prim.reduce_min %[[C]] dims [1] : tensor<4x6xi64> -> tensor<4xi64>
// CHECK: prim.reshape %[[I]] : tensor<4xi64> -> tensor<4x1xi64>
func.func @argmax(%x: tensor<4x6xf32>) -> tensor<4x1xi64> {
  %0 = graph.argmax %x dim 1 keepdim : tensor<4x6xf32> -> tensor<4x1xi64>
  return %0 : tensor<4x1xi64>
}

// -----

// argmin of booleans compares them as i32.
// CHECK-LABEL: func @argmin_bool
// CHECK: %[[I:.*]] = prim.convert_element_type %{{.*}} : tensor<4x6xi1> -> tensor<4x6xi32>
// CHECK: prim.reduce_min %[[I]] dims [0] : tensor<4x6xi32> -> tensor<6xi32>
// CHECK-NOT: prim.ne
// CHECK: prim.reduce_min %{{.*}} dims [0] : tensor<4x6xi64> -> tensor<6xi64>
func.func @argmin_bool(%b: tensor<4x6xi1>) -> tensor<6xi64> {
  %0 = graph.argmin %b dim 0 : tensor<4x6xi1> -> tensor<6xi64>
  return %0 : tensor<6xi64>
}

// -----

// logsumexp: max + log(sum(exp(x - max))), an infinite max taken as 0 (one
// max, used in the sum and added at the end). bf16 computes in f32.
// CHECK-LABEL: func @logsumexp
// CHECK: %[[X:.*]] = prim.convert_element_type %{{.*}} : tensor<4x6xbf16> -> tensor<4x6xf32>
// CHECK: %[[M:.*]] = prim.reduce_max %[[X]] dims [1]
// CHECK: %[[A:.*]] = prim.abs %[[M]]
// CHECK: %[[INF:.*]] = prim.eq %[[A]], %{{.*}} : tensor<4xf32> -> tensor<4xi1>
// CHECK: %[[SAFE:.*]] = prim.select %[[INF]], %{{.*}}, %[[M]]
// CHECK-NOT: prim.reduce_min
// CHECK: %[[MB:.*]] = prim.broadcast_in_dim %[[SAFE]] dims [0]
// CHECK: %[[D:.*]] = prim.sub %[[X]], %[[MB]]
// CHECK: %[[E:.*]] = prim.exp %[[D]]
// CHECK: %[[S:.*]] = prim.reduce_sum %[[E]] dims [1]
// CHECK: %[[L:.*]] = prim.log %[[S]]
// CHECK: %[[R:.*]] = prim.add %[[L]], %[[SAFE]]
// CHECK: prim.convert_element_type %[[R]] : tensor<4xf32> -> tensor<4xbf16>
func.func @logsumexp(%x: tensor<4x6xbf16>) -> tensor<4xbf16> {
  %0 = graph.logsumexp %x dims [1] : tensor<4x6xbf16> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// Vector norms by order.
// CHECK-LABEL: func @vector_norm
// CHECK: %[[SQ:.*]] = prim.mul %[[X:.*]], %[[X]] : tensor<4x6xf32>
// CHECK: %[[S:.*]] = prim.reduce_sum %[[SQ]] dims [0, 1] : tensor<4x6xf32> -> tensor<f32>
// CHECK: prim.sqrt %[[S]] : tensor<f32>
// CHECK: %[[A:.*]] = prim.abs %[[X]]
// CHECK: prim.reduce_max %[[A]] dims [1]
// CHECK: %[[P:.*]] = prim.pow %{{.*}}, %{{.*}} : tensor<4x6xf32>
// CHECK: %[[PS:.*]] = prim.reduce_sum %[[P]] dims [0]
// CHECK: prim.pow %[[PS]], %{{.*}} : tensor<6xf32>
func.func @vector_norm(%x: tensor<4x6xf32>) -> (tensor<f32>, tensor<4x1xf32>, tensor<6xf32>) {
  %0 = graph.vector_norm %x ord 2.0 dims [0, 1] : tensor<4x6xf32> -> tensor<f32>
  %1 = graph.vector_norm %x ord 0x7FF0000000000000 dims [1] keepdim : tensor<4x6xf32> -> tensor<4x1xf32>
  %2 = graph.vector_norm %x ord 3.5 dims [0] : tensor<4x6xf32> -> tensor<6xf32>
  return %0, %1, %2 : tensor<f32>, tensor<4x1xf32>, tensor<6xf32>
}

// -----

// A scan is a reduction over a triangular mask j <= i next to the scanned dim.
// CHECK-LABEL: func @cumsum
// CHECK: %[[X:.*]] = prim.convert_element_type %{{.*}} : tensor<4x6xbf16> -> tensor<4x6xf32>
// CHECK: %[[Y:.*]] = prim.broadcast_in_dim %[[X]] dims [0, 2] : tensor<4x6xf32> -> tensor<4x6x6xf32>
// CHECK: %[[I:.*]] = prim.iota dim 1 : tensor<4x6x6xi64>
// CHECK: %[[J:.*]] = prim.iota dim 2 : tensor<4x6x6xi64>
// CHECK: %[[MASK:.*]] = prim.le %[[J]], %[[I]]
// CHECK: %[[ZERO:.*]] = prim.constant dense<0.000000e+00> : tensor<4x6x6xf32>
// CHECK: %[[SEL:.*]] = prim.select %[[MASK]], %[[Y]], %[[ZERO]]
// CHECK: %[[S:.*]] = prim.reduce_sum %[[SEL]] dims [2] : tensor<4x6x6xf32> -> tensor<4x6xf32>
// CHECK: prim.convert_element_type %[[S]] : tensor<4x6xf32> -> tensor<4x6xbf16>
func.func @cumsum(%x: tensor<4x6xbf16>) -> tensor<4x6xbf16> {
  %0 = graph.cumulative sum %x dim 1 : tensor<4x6xbf16> -> tensor<4x6xbf16>
  return %0 : tensor<4x6xbf16>
}

// -----

// cummin of i64 masks with INT64_MAX; cumprod with 1.
// CHECK-LABEL: func @cummin_cumprod
// CHECK: prim.constant dense<9223372036854775807> : tensor<6x4x4xi64>
// CHECK: prim.reduce_min %{{.*}} dims [2] : tensor<6x4x4xi64> -> tensor<6x4xi64>
// CHECK: prim.constant dense<1> : tensor<4x4x6xi64>
// CHECK: prim.reduce_prod %{{.*}} dims [1] : tensor<4x4x6xi64> -> tensor<4x6xi64>
func.func @cummin_cumprod(%x: tensor<6x4xi64>, %y: tensor<4x6xi64>) -> (tensor<6x4xi64>, tensor<4x6xi64>) {
  %0 = graph.cumulative min %x dim 1 : tensor<6x4xi64> -> tensor<6x4xi64>
  %1 = graph.cumulative prod %y dim 0 : tensor<4x6xi64> -> tensor<4x6xi64>
  return %0, %1 : tensor<6x4xi64>, tensor<4x6xi64>
}

// -----

// cummax indices: the last j <= i where x[j] is the running max, or NaN.
// CHECK-LABEL: func @cummax_indices
// CHECK: %[[SOFAR:.*]] = prim.reduce_max %{{.*}} dims [1] : tensor<5x5xf32> -> tensor<5xf32>
// CHECK: %[[RB:.*]] = prim.broadcast_in_dim %[[SOFAR]] dims [0] : tensor<5xf32> -> tensor<5x5xf32>
// CHECK: %[[EQ:.*]] = prim.eq %[[Y:.*]], %[[RB]]
// CHECK: %[[NAN:.*]] = prim.ne %[[Y]], %[[Y]]
// CHECK: %[[HIT:.*]] = prim.or %[[EQ]], %[[NAN]]
// CHECK: %[[C:.*]] = prim.select %[[HIT]], %{{.*}}, %{{.*}} : tensor<5x5xi1>, tensor<5x5xi64>
// CHECK: %[[M:.*]] = prim.select %{{.*}}, %[[C]], %{{.*}} : tensor<5x5xi1>, tensor<5x5xi64>
// CHECK: prim.reduce_max %[[M]] dims [1] : tensor<5x5xi64> -> tensor<5xi64>
func.func @cummax_indices(%x: tensor<5xf32>) -> tensor<5xi64> {
  %0 = graph.cumulative_index max %x dim 0 : tensor<5xf32> -> tensor<5xi64>
  return %0 : tensor<5xi64>
}

// -----

// flip: a gather at n-1-i per flipped dim; roll: two slices concatenated per
// dim (shift -7 of 4 is 1: the last element first); repeat: a broadcast
// between two reshapes.
// CHECK-LABEL: func @rearrange
// CHECK: %[[I:.*]] = prim.iota dim 1 : tensor<4x6xi64>
// CHECK: %[[N:.*]] = prim.constant dense<5> : tensor<4x6xi64>
// CHECK: %[[R:.*]] = prim.sub %[[N]], %[[I]]
// CHECK: prim.gather %{{.*}} dim 1 index %[[R]] : tensor<4x6xf32>, tensor<4x6xi64> -> tensor<4x6xf32>
// CHECK: %[[A:.*]] = prim.slice %[[X:.*]] start [3, 0] stride [1, 1] : tensor<4x6xf32> -> tensor<1x6xf32>
// CHECK: %[[B:.*]] = prim.slice %[[X]] start [0, 0] stride [1, 1] : tensor<4x6xf32> -> tensor<3x6xf32>
// CHECK: prim.concatenate %[[A]], %[[B]] dim 0
// CHECK: %[[W:.*]] = prim.reshape %[[X]] : tensor<4x6xf32> -> tensor<1x1x1x4x1x6xf32>
// CHECK: %[[BC:.*]] = prim.broadcast_in_dim %[[W]] dims [0, 1, 2, 3, 4, 5] : tensor<1x1x1x4x1x6xf32> -> tensor<2x1x3x4x1x6xf32>
// CHECK: prim.reshape %[[BC]] : tensor<2x1x3x4x1x6xf32> -> tensor<2x12x6xf32>
func.func @rearrange(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<2x12x6xf32>) {
  %0 = graph.flip %x dims [1] : tensor<4x6xf32> -> tensor<4x6xf32>
  %1 = graph.roll %x shifts [-7] dims [0] : tensor<4x6xf32> -> tensor<4x6xf32>
  %2 = graph.repeat %x repeats [2, 3, 1] : tensor<4x6xf32> -> tensor<2x12x6xf32>
  return %0, %1, %2 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<2x12x6xf32>
}

// -----

// var: the mean, the squared deviations summed, divided by N - correction;
// bfloat16 in float32, rounded once. std takes the square root.
// CHECK-LABEL: func @var_std
// CHECK: %[[X:.*]] = prim.convert_element_type %{{.*}} : tensor<4x6xbf16> -> tensor<4x6xf32>
// CHECK: %[[S:.*]] = prim.reduce_sum %[[X]] dims [1] : tensor<4x6xf32> -> tensor<4xf32>
// CHECK: %[[N:.*]] = prim.constant dense<6.000000e+00> : tensor<4xf32>
// CHECK: %[[M:.*]] = prim.div %[[S]], %[[N]] : tensor<4xf32>
// CHECK: %[[MB:.*]] = prim.broadcast_in_dim %[[M]] dims [0] : tensor<4xf32> -> tensor<4x6xf32>
// CHECK: %[[D:.*]] = prim.sub %[[X]], %[[MB]] : tensor<4x6xf32>
// CHECK: %[[SQ:.*]] = prim.mul %[[D]], %[[D]] : tensor<4x6xf32>
// CHECK: %[[SS:.*]] = prim.reduce_sum %[[SQ]] dims [1] : tensor<4x6xf32> -> tensor<4xf32>
// CHECK: %[[C:.*]] = prim.constant dense<5.000000e+00> : tensor<4xf32>
// CHECK: %[[V:.*]] = prim.div %[[SS]], %[[C]] : tensor<4xf32>
// CHECK: %[[VB:.*]] = prim.convert_element_type %[[V]] : tensor<4xf32> -> tensor<4xbf16>
// CHECK: prim.reshape %[[VB]] : tensor<4xbf16> -> tensor<4x1xbf16>
// CHECK: %[[Z:.*]] = prim.constant dense<0.000000e+00> : tensor<f64>
// CHECK: %[[SV:.*]] = prim.div %{{.*}}, %[[Z]] : tensor<f64>
// CHECK: prim.sqrt %[[SV]] : tensor<f64>
func.func @var_std(%x: tensor<4x6xbf16>, %y: tensor<3xf64>) -> (tensor<4x1xbf16>, tensor<f64>) {
  %0 = graph.var %x {correction = 1.0 : f64, dims = array<i64: 1>, keepdim} : tensor<4x6xbf16> -> tensor<4x1xbf16>
  %1 = graph.std %y {correction = 3.0 : f64, dims = array<i64: 0>} : tensor<3xf64> -> tensor<f64>
  return %0, %1 : tensor<4x1xbf16>, tensor<f64>
}

// -----

// tril/triu: the column minus the row compared with the diagonal, a select.
// CHECK-LABEL: func @triangles
// CHECK: %[[R:.*]] = prim.iota dim 1 : tensor<2x3x4xi64>
// CHECK: %[[C:.*]] = prim.iota dim 2 : tensor<2x3x4xi64>
// CHECK: %[[O:.*]] = prim.sub %[[C]], %[[R]] : tensor<2x3x4xi64>
// CHECK: %[[DG:.*]] = prim.constant dense<-1> : tensor<2x3x4xi64>
// CHECK: %[[K:.*]] = prim.le %[[O]], %[[DG]] : tensor<2x3x4xi64>
// CHECK: prim.select %[[K]], %{{.*}}, %{{.*}} : tensor<2x3x4xi1>, tensor<2x3x4xf32>
// CHECK: prim.ge %{{.*}}, %{{.*}} : tensor<3x3xi64>
// CHECK: prim.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<3x3xi1>, tensor<3x3xi1>
func.func @triangles(%x: tensor<2x3x4xf32>, %b: tensor<3x3xi1>) -> (tensor<2x3x4xf32>, tensor<3x3xi1>) {
  %0 = graph.tril %x {diagonal = -1 : i64} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %1 = graph.triu %b {diagonal = 1 : i64} : tensor<3x3xi1> -> tensor<3x3xi1>
  return %0, %1 : tensor<2x3x4xf32>, tensor<3x3xi1>
}

// -----

// nansum: NaN (x != x) selected as 0, then the sum.
// CHECK-LABEL: func @nansum
// CHECK: %[[NAN:.*]] = prim.ne %[[X:.*]], %[[X]] : tensor<4x6xf32> -> tensor<4x6xi1>
// CHECK: %[[Z:.*]] = prim.select %[[NAN]], %{{.*}}, %[[X]] : tensor<4x6xi1>, tensor<4x6xf32>
// CHECK: prim.reduce_sum %[[Z]] dims [1] : tensor<4x6xf32> -> tensor<4xf32>
func.func @nansum(%x: tensor<4x6xf32>) -> tensor<4xf32> {
  %0 = graph.nansum %x dims [1] : tensor<4x6xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// cdist: the rows' differences over [B, P, R, M], 2-norm over M.
// CHECK-LABEL: func @cdist
// CHECK: %[[A:.*]] = prim.broadcast_in_dim %{{.*}} dims [0, 1, 3] : tensor<2x3x4xf32> -> tensor<2x3x5x4xf32>
// CHECK: %[[B:.*]] = prim.broadcast_in_dim %{{.*}} dims [0, 2, 3] : tensor<2x5x4xf32> -> tensor<2x3x5x4xf32>
// CHECK: %[[D:.*]] = prim.sub %[[A]], %[[B]]
// CHECK: %[[SQ:.*]] = prim.mul %[[D]], %[[D]]
// CHECK: %[[S:.*]] = prim.reduce_sum %[[SQ]] dims [3] : tensor<2x3x5x4xf32> -> tensor<2x3x5xf32>
// CHECK: prim.sqrt %[[S]]
func.func @cdist(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  %0 = graph.cdist %a, %b {p = 2.0 : f64} : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// pdist: the pairs (0,1), (0,2), (1,2) gathered, 1-norm of their differences.
// CHECK-LABEL: func @pdist
// CHECK: prim.constant dense<[0, 0, 1]> : tensor<3xi64>
// CHECK: prim.gather %{{.*}} dim 0 index
// CHECK: prim.constant dense<[1, 2, 2]> : tensor<3xi64>
// CHECK: prim.sub
// CHECK: prim.abs
// CHECK: prim.reduce_sum %{{.*}} dims [1] : tensor<3x4xf32> -> tensor<3xf32>
func.func @pdist(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = graph.pdist %x {p = 1.0 : f64} : tensor<3x4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// dist of bf16: the difference in bf16, the inf-norm accumulated in f32.
// CHECK-LABEL: func @dist
// CHECK: %[[D:.*]] = prim.sub %{{.*}}, %{{.*}} : tensor<6xbf16>
// CHECK: %[[F:.*]] = prim.convert_element_type %[[D]] : tensor<6xbf16> -> tensor<6xf32>
// CHECK: prim.reduce_max %{{.*}} dims [0] : tensor<6xf32> -> tensor<f32>
// CHECK: prim.convert_element_type %{{.*}} : tensor<f32> -> tensor<bf16>
func.func @dist(%a: tensor<6xbf16>, %b: tensor<6xbf16>) -> tensor<bf16> {
  %0 = graph.dist %a, %b {p = 0x7FF0000000000000 : f64} : tensor<6xbf16>, tensor<6xbf16> -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// isin: i32 elements against f32 test elements, compared in f32 along a new
// dim, any as a max of 0/1; invert negates.
// CHECK-LABEL: func @isin
// CHECK: %[[E:.*]] = prim.broadcast_in_dim %{{.*}} dims [0] : tensor<5xf32> -> tensor<5x3xf32>
// CHECK: %[[T:.*]] = prim.broadcast_in_dim %{{.*}} dims [1] : tensor<3xf32> -> tensor<5x3xf32>
// CHECK: %[[EQ:.*]] = prim.eq %[[E]], %[[T]]
// CHECK: prim.reduce_max %{{.*}} dims [1] : tensor<5x3xi32> -> tensor<5xi32>
// CHECK: prim.gt
// CHECK: prim.not
func.func @isin(%e: tensor<5xi32>, %t: tensor<3xf32>) -> tensor<5xi1> {
  %0 = graph.isin %e, %t {invert = true} : tensor<5xi32>, tensor<3xf32> -> tensor<5xi1>
  return %0 : tensor<5xi1>
}

// -----

// bucketize: the boundaries below each element (NaN after all), summed in i32.
// CHECK-LABEL: func @bucketize
// CHECK: %[[LT:.*]] = prim.lt %{{.*}}, %{{.*}} : tensor<2x5x4xf32> -> tensor<2x5x4xi1>
// CHECK: %[[NAN:.*]] = prim.ne
// CHECK: prim.or %[[LT]], %[[NAN]]
// CHECK: prim.reduce_sum %{{.*}} dims [2] : tensor<2x5x4xi32> -> tensor<2x5xi32>
func.func @bucketize(%x: tensor<2x5xf32>, %b: tensor<4xf32>) -> tensor<2x5xi32> {
  %0 = graph.bucketize %x, %b {right = false, out_int32 = true} : tensor<2x5xf32>, tensor<4xf32> -> tensor<2x5xi32>
  return %0 : tensor<2x5xi32>
}

// -----

// renorm: the 2-norm of each row; rows above maxnorm scaled by
// maxnorm / (norm + 1e-7).
// CHECK-LABEL: func @renorm
// CHECK: %[[SQ:.*]] = prim.mul %[[X:.*]], %[[X]] : tensor<3x4xf32>
// CHECK: %[[S:.*]] = prim.reduce_sum %[[SQ]] dims [1] : tensor<3x4xf32> -> tensor<3xf32>
// CHECK: %[[N:.*]] = prim.sqrt %[[S]]
// CHECK: %[[GT:.*]] = prim.gt %[[N]], %{{.*}} : tensor<3xf32> -> tensor<3xi1>
// CHECK: %[[F:.*]] = prim.select %[[GT]]
// CHECK: %[[B:.*]] = prim.broadcast_in_dim %[[F]] dims [0] : tensor<3xf32> -> tensor<3x4xf32>
// CHECK: prim.mul %[[X]], %[[B]]
func.func @renorm(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = graph.renorm %x {p = 2.0 : f64, dim = 0 : i64, maxnorm = 1.5 : f64} : tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
