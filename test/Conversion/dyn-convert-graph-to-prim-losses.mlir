// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim -verify-diagnostics | FileCheck %s

// mse: (x - t)^2, mean = the sum over every dim divided by the count; bf16 in f32.
// CHECK-LABEL: func @mse_mean
// CHECK: %[[X:.*]] = prim.convert_element_type %{{.*}} : tensor<4x5xbf16> -> tensor<4x5xf32>
// CHECK: %[[T:.*]] = prim.convert_element_type %{{.*}} : tensor<4x5xbf16> -> tensor<4x5xf32>
// CHECK: %[[D:.*]] = prim.sub %[[X]], %[[T]]
// CHECK: %[[SQ:.*]] = prim.mul %[[D]], %[[D]]
// CHECK: %[[S:.*]] = prim.reduce_sum %[[SQ]] dims [0, 1] : tensor<4x5xf32> -> tensor<f32>
// CHECK: %[[N:.*]] = prim.constant dense<2.000000e+01> : tensor<f32>
// CHECK: %[[M:.*]] = prim.div %[[S]], %[[N]]
// CHECK: prim.convert_element_type %[[M]] : tensor<f32> -> tensor<bf16>
func.func @mse_mean(%x: tensor<4x5xbf16>, %t: tensor<4x5xbf16>) -> tensor<bf16> {
  %0 = graph.mse_loss mean %x, %t : tensor<4x5xbf16> -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// smooth_l1 without reduction: 0.5 d^2 / beta below beta, d - beta/2 above.
// CHECK-LABEL: func @smooth_l1_none
// CHECK: %[[D:.*]] = prim.abs
// CHECK: %[[C:.*]] = prim.lt %[[D]], %{{.*}} : tensor<4x5xf32> -> tensor<4x5xi1>
// CHECK: prim.select %[[C]], %{{.*}}, %{{.*}} : tensor<4x5xi1>, tensor<4x5xf32>
// CHECK-NOT: prim.reduce_sum
func.func @smooth_l1_none(%x: tensor<4x5xf32>, %t: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %0 = graph.smooth_l1_loss none %x, %t {beta = 5.000000e-01 : f64} : tensor<4x5xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// bce with logits: (1 - t) x - (min(x, 0) - log1p(exp(-|x|))), summed.
// CHECK-LABEL: func @bce_logits_sum
// CHECK: prim.min
// CHECK: prim.abs
// CHECK: prim.neg
// CHECK: prim.exp
// CHECK: prim.log1p
// CHECK: prim.reduce_sum %{{.*}} dims [0] : tensor<6xf64> -> tensor<f64>
// CHECK-NOT: prim.div
func.func @bce_logits_sum(%x: tensor<6xf64>, %t: tensor<6xf64>) -> tensor<f64> {
  %0 = graph.binary_cross_entropy_with_logits sum %x, %t : tensor<6xf64> -> tensor<f64>
  return %0 : tensor<f64>
}

// -----

func.func @loss_shape(%x: tensor<4x5xf32>, %t: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{result must have the input's shape without reduction, else be 0-d}}
  %0 = graph.l1_loss sum %x, %t : tensor<4x5xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// nll_loss: the ignored targets read class 0 and weigh 0; the input and the
// weights gathered at the targets; mean divides by the summed weights.
// CHECK-LABEL: func @nll_loss
// CHECK: %[[I:.*]] = prim.constant dense<-100> : tensor<4xi64>
// CHECK: %[[IG:.*]] = prim.eq %{{.*}}, %[[I]] : tensor<4xi64> -> tensor<4xi1>
// CHECK: %[[S:.*]] = prim.select %[[IG]], %{{.*}}, %{{.*}} : tensor<4xi1>, tensor<4xi64>
// CHECK: %[[R:.*]] = prim.reshape %[[S]] : tensor<4xi64> -> tensor<4x1xi64>
// CHECK: prim.gather %{{.*}} dim 1 index %[[R]] : tensor<4x5xf32>, tensor<4x1xi64> -> tensor<4x1xf32>
// CHECK: prim.gather %{{.*}} dim 0 index %[[S]] : tensor<5xf32>, tensor<4xi64> -> tensor<4xf32>
// CHECK: %[[L:.*]] = prim.mul
// CHECK: %[[N:.*]] = prim.reduce_sum %[[L]] dims [0] : tensor<4xf32> -> tensor<f32>
// CHECK: %[[D:.*]] = prim.reduce_sum %{{.*}} dims [0] : tensor<4xf32> -> tensor<f32>
// CHECK: prim.div %[[N]], %[[D]] : tensor<f32>
func.func @nll_loss(%x: tensor<4x5xf32>, %t: tensor<4xi64>, %w: tensor<5xf32>) -> tensor<f32> {
  %0 = graph.nll_loss mean %x, %t, %w {ignore_index = -100 : i64} : tensor<4x5xf32>, tensor<4xi64>, tensor<5xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// soft_margin_loss: log1p(exp(-t x)), summed.
// CHECK-LABEL: func @soft_margin
// CHECK: %[[P:.*]] = prim.mul %{{.*}}, %{{.*}} : tensor<6xf32>
// CHECK: %[[N:.*]] = prim.neg %[[P]] : tensor<6xf32>
// CHECK: %[[E:.*]] = prim.exp %[[N]] : tensor<6xf32>
// CHECK: %[[L:.*]] = prim.log1p %[[E]] : tensor<6xf32>
// CHECK: prim.reduce_sum %[[L]] dims [0] : tensor<6xf32> -> tensor<f32>
func.func @soft_margin(%x: tensor<6xf32>, %t: tensor<6xf32>) -> tensor<f32> {
  %0 = graph.soft_margin_loss sum %x, %t : tensor<6xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// multi_margin_loss: x[t] gathered per sample, max(0, margin - x[t] + x)^2
// weighted by w[t], the target's own class masked out by an iota, summed over
// the classes and divided by C, then the mean over the samples.
// CHECK-LABEL: func @multi_margin
// CHECK: %[[T:.*]] = prim.reshape %{{.*}} : tensor<3xi64> -> tensor<3x1xi64>
// CHECK: prim.gather %{{.*}} dim 1 index %[[T]] : tensor<3x4xf32>, tensor<3x1xi64> -> tensor<3x1xf32>
// CHECK: %[[H:.*]] = prim.max
// CHECK: prim.mul %[[H]], %[[H]]
// CHECK: prim.gather %{{.*}} dim 0 index %{{.*}} : tensor<4xf32>, tensor<3xi64> -> tensor<3xf32>
// CHECK: prim.iota dim 1 : tensor<3x4xi64>
// CHECK: prim.ne
// CHECK: prim.reduce_sum %{{.*}} dims [1] : tensor<3x4xf32> -> tensor<3xf32>
// CHECK: prim.div
// CHECK: prim.reduce_sum %{{.*}} dims [0] : tensor<3xf32> -> tensor<f32>
// CHECK: prim.div
func.func @multi_margin(%x: tensor<3x4xf32>, %t: tensor<3xi64>, %w: tensor<4xf32>) -> tensor<f32> {
  %0 = graph.multi_margin_loss %x, %t, %w {p = 2 : i64, margin = 1.0 : f64, reduction = "mean"} : (tensor<3x4xf32>, tensor<3xi64>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// multilabel_margin_loss: the targets before the first negative one (a
// triangular count of the negatives), the classes that are no such target,
// max(0, 1 - x[t_j] + x[i]) over [N, j, i], summed, / C, / N.
// CHECK-LABEL: func @multilabel_margin
// CHECK: prim.lt %arg1
// CHECK: %[[SEEN:.*]] = prim.reduce_sum %{{.*}} dims [2] : tensor<2x3x3xi64> -> tensor<2x3xi64>
// CHECK: %[[VALID:.*]] = prim.eq %[[SEEN]]
// CHECK: %[[SAFE:.*]] = prim.select %[[VALID]], %arg1
// CHECK: prim.reduce_sum %{{.*}} dims [1] : tensor<2x3x3xi64> -> tensor<2x3xi64>
// CHECK: prim.gather %arg0 dim 1 index %[[SAFE]] : tensor<2x3xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
// CHECK: prim.max
// CHECK: prim.reduce_sum %{{.*}} dims [1, 2] : tensor<2x3x3xf32> -> tensor<2xf32>
// CHECK: prim.reduce_sum %{{.*}} dims [0] : tensor<2xf32> -> tensor<f32>
// CHECK: prim.div
// CHECK: prim.div
func.func @multilabel_margin(%x: tensor<2x3xf32>, %t: tensor<2x3xi64>) -> tensor<f32> {
  %0 = graph.multilabel_margin_loss %x, %t {reduction = "mean"} : tensor<2x3xf32>, tensor<2x3xi64> -> tensor<f32>
  return %0 : tensor<f32>
}
