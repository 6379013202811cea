// RUN: dyn-opt %s -dyn-convert-graph-to-prim | FileCheck %s

// Random ops become Philox bits (prim.philox: seed, offset, word) and the
// pointwise arithmetic of their distribution.

// A uniform f32 takes 24 bits of word 0: (bits & 0xffffff) * 2^-24.
// CHECK-LABEL: func.func @uniform
// CHECK: %[[B:.*]] = prim.philox %arg0 offset 3 word 0 : tensor<i64> -> tensor<4x8xi32>
// CHECK: %[[M:.*]] = prim.constant dense<16777215> : tensor<4x8xi32>
// CHECK: %[[A:.*]] = prim.and %[[B]], %[[M]] : tensor<4x8xi32>
// CHECK: %[[F:.*]] = prim.convert_element_type %[[A]] : tensor<4x8xi32> -> tensor<4x8xf32>
// CHECK: %[[S:.*]] = prim.constant dense<5.96046448E-8> : tensor<4x8xf32>
// CHECK: prim.mul %[[F]], %[[S]] : tensor<4x8xf32>
// CHECK-NOT: graph.
func.func @uniform(%seed: tensor<i64>) -> tensor<4x8xf32> {
  %0 = graph.random uniform %seed offset 3 a 0.0 b 1.0 : tensor<i64> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// A uniform f64 takes 53 bits of words 0 and 1; the range is an affine map.
// CHECK-LABEL: func.func @uniform_f64
// CHECK: prim.philox %arg0 offset 0 word 1 : tensor<i64> -> tensor<5xi32>
// CHECK: prim.constant dense<2097151> : tensor<5xi64>
// CHECK: prim.philox %arg0 offset 0 word 0 : tensor<i64> -> tensor<5xi32>
// CHECK: prim.constant dense<1.1102230246251565E-16> : tensor<5xf64>
// CHECK: prim.add
func.func @uniform_f64(%seed: tensor<i64>) -> tensor<5xf64> {
  %0 = graph.random uniform %seed offset 0 a -2.0 b 2.0 : tensor<i64> -> tensor<5xf64>
  return %0 : tensor<5xf64>
}

// Normal: Box-Muller over words 0 and 1.
// CHECK-LABEL: func.func @normal
// CHECK: prim.philox %arg0 offset 1 word 0
// CHECK: prim.philox %arg0 offset 1 word 1
// CHECK: prim.log
// CHECK: prim.sqrt
// CHECK: prim.cos
// CHECK: prim.convert_element_type {{.*}} : tensor<16xf32> -> tensor<16xbf16>
func.func @normal(%seed: tensor<i64>) -> tensor<16xbf16> {
  %0 = graph.random normal %seed offset 1 a 0.0 b 1.0 : tensor<i64> -> tensor<16xbf16>
  return %0 : tensor<16xbf16>
}

// Integers in [a, b): the unsigned word, its remainder by b - a, plus a.
// CHECK-LABEL: func.func @integers
// CHECK: prim.philox %arg0 offset 2 word 0 : tensor<i64> -> tensor<7xi32>
// CHECK: prim.convert_element_type {{.*}} : tensor<7xi32> -> tensor<7xi64>
// CHECK: prim.constant dense<4294967295> : tensor<7xi64>
// CHECK: prim.and
// CHECK: prim.constant dense<13> : tensor<7xi64>
// CHECK: prim.rem
// CHECK: prim.constant dense<-3> : tensor<7xi64>
// CHECK: prim.add
// CHECK: prim.convert_element_type {{.*}} : tensor<7xi64> -> tensor<7xi32>
func.func @integers(%seed: tensor<i64>) -> tensor<7xi32> {
  %0 = graph.random integers %seed offset 2 a -3.0 b 10.0 : tensor<i64> -> tensor<7xi32>
  return %0 : tensor<7xi32>
}

// Dropout keeps u < 1 - p and scales by 1/(1-p): one select.
// CHECK-LABEL: func.func @dropout
// CHECK: prim.philox %arg1 offset 0 word 0 : tensor<i64> -> tensor<4x8xi32>
// CHECK: %[[P:.*]] = prim.constant dense<7.500000e-01> : tensor<4x8xf32>
// CHECK: %[[K:.*]] = prim.lt {{.*}}, %[[P]] : tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK: %[[S:.*]] = prim.constant dense<1.33333337> : tensor<4x8xf32>
// CHECK: %[[X:.*]] = prim.mul %arg0, %[[S]] : tensor<4x8xf32>
// CHECK: prim.select %[[K]], %[[X]], {{.*}} : tensor<4x8xi1>, tensor<4x8xf32>
func.func @dropout(%x: tensor<4x8xf32>, %seed: tensor<i64>) -> tensor<4x8xf32> {
  %0 = graph.dropout %x, %seed p 0.25 offset 0 : tensor<4x8xf32>, tensor<i64> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// Feature dropout (dropout2d): one draw per (batch, channel), broadcast.
// CHECK-LABEL: func.func @dropout2d
// CHECK: prim.philox %arg1 offset 5 word 0 : tensor<i64> -> tensor<2x3x1x1xi32>
// CHECK: prim.broadcast_in_dim {{.*}} : tensor<2x3x1x1xi1> -> tensor<2x3x4x4xi1>
func.func @dropout2d(%x: tensor<2x3x4x4xf32>, %seed: tensor<i64>) -> tensor<2x3x4x4xf32> {
  %0 = graph.dropout %x, %seed p 0.5 offset 5 {feature_dims = 2 : i64} : tensor<2x3x4x4xf32>, tensor<i64> -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// Dropout over a `?` batch: the draws are sized as the input at run time.
// CHECK-LABEL: func.func @dropout_dynamic
// CHECK: %[[N:.*]] = prim.dim %arg0, 0 : tensor<?x3x4x4xf32>
// CHECK: prim.philox %arg1 offset 2 word 0 sizes(%[[N]]) : tensor<i64> -> tensor<?x3x1x1xi32>
// CHECK: prim.broadcast_in_dim {{.*}} : tensor<?x3x1x1xi1> -> tensor<?x3x4x4xi1>
func.func @dropout_dynamic(%x: tensor<?x3x4x4xf32>, %seed: tensor<i64>) -> tensor<?x3x4x4xf32> {
  %0 = graph.dropout %x, %seed p 0.5 offset 2 {feature_dims = 2 : i64} : tensor<?x3x4x4xf32>, tensor<i64> -> tensor<?x3x4x4xf32>
  return %0 : tensor<?x3x4x4xf32>
}

// Bernoulli: 1 where u < p.
// CHECK-LABEL: func.func @bernoulli
// CHECK: prim.philox %arg1 offset 4 word 0
// CHECK: prim.lt {{.*}}, %arg0 : tensor<6xf32> -> tensor<6xi1>
// CHECK: prim.select
func.func @bernoulli(%p: tensor<6xf32>, %seed: tensor<i64>) -> tensor<6xf32> {
  %0 = graph.bernoulli %p, %seed offset 4 : tensor<6xf32>, tensor<i64> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// Cauchy: median + sigma * tan(pi * (u - 0.5)).
// CHECK-LABEL: func.func @cauchy
// CHECK: prim.philox %arg0 offset 2 word 0
// CHECK: prim.sub
// CHECK: prim.tan
// CHECK: prim.add
// CHECK-NOT: graph.
func.func @cauchy(%seed: tensor<i64>) -> tensor<8xf32> {
  %0 = graph.random cauchy %seed offset 2 a 1.0 b 2.0 : tensor<i64> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// Log-normal: exp of Box-Muller's normal.
// CHECK-LABEL: func.func @log_normal
// CHECK: prim.cos
// CHECK: prim.exp
// CHECK-NOT: graph.
func.func @log_normal(%seed: tensor<i64>) -> tensor<8xf64> {
  %0 = graph.random log_normal %seed offset 0 a 0.5 b 0.25 : tensor<i64> -> tensor<8xf64>
  return %0 : tensor<8xf64>
}

// Geometric: ceil(log(1 - u) / log1p(-p)).
// CHECK-LABEL: func.func @geometric
// CHECK: prim.log
// CHECK: prim.div
// CHECK: prim.ceil
// CHECK-NOT: graph.
func.func @geometric(%seed: tensor<i64>) -> tensor<8xf32> {
  %0 = graph.random geometric %seed offset 0 a 0.2 b 0.0 : tensor<i64> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// dropout_backward: grad * mask * scale, bf16 in f32 and rounded once.
// CHECK-LABEL: func @dropout_backward
// CHECK: %[[G:.*]] = prim.convert_element_type %{{.*}} : tensor<4xbf16> -> tensor<4xf32>
// CHECK: %[[M:.*]] = prim.convert_element_type %{{.*}} : tensor<4xi1> -> tensor<4xf32>
// CHECK: %[[P:.*]] = prim.mul %[[G]], %[[M]]
// CHECK: %[[S:.*]] = prim.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK: %[[R:.*]] = prim.mul %[[P]], %[[S]]
// CHECK: prim.convert_element_type %[[R]] : tensor<4xf32> -> tensor<4xbf16>
func.func @dropout_backward(%g: tensor<4xbf16>, %m: tensor<4xi1>) -> tensor<4xbf16> {
  %0 = graph.dropout_backward %g, %m {scale = 2.0 : f64} : tensor<4xbf16>, tensor<4xi1> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// A `?` dim sized by the op's `sizes` (torch.rand(x.shape[0], 1)): the bits
// take it, and the distribution's arithmetic is sized as the bits.
// CHECK-LABEL: func.func @uniform_dynamic
// CHECK: %[[B:.*]] = prim.philox %arg0 offset 4 word 0 sizes(%arg1) : tensor<i64> -> tensor<?x1xi32>
// CHECK: %[[N:.*]] = prim.dim %[[B]], 0 : tensor<?x1xi32>
// CHECK: prim.broadcast_in_dim %{{.*}} dims [] sizes(%[[N]]) : tensor<i32> -> tensor<?x1xi32>
// CHECK-NOT: graph.
func.func @uniform_dynamic(%seed: tensor<i64>, %n: index) -> tensor<?x1xf32> {
  %0 = graph.random uniform %seed sizes(%n) offset 4 a -1.0 b 1.0 : tensor<i64> -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}
