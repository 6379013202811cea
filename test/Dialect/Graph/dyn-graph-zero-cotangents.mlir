// RUN: dyn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(dyn-graph-zero-cotangents{outputs=1}))' -verify-diagnostics | FileCheck %s

// A loss beside its logits (an LM computing its own loss): autograd gives the
// logits no cotangent. Their cotangent argument goes; its views are -0.0
// splats and its addition into the loss's gradient is that gradient itself,
// so nothing reads a [4, 8] zero buffer.
// CHECK-LABEL: func @loss_and_logits
// CHECK-SAME: (%[[S:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[CT:.*]]: tensor<f32>)
// CHECK-SAME: dyn.differentiable = array<i64: 0>
// CHECK-SAME: dyn.zero_cotangents = array<i64: 1>
// CHECK: %[[G:.*]] = graph.expand %[[CT]]
// CHECK-NOT: graph.add
// CHECK-NOT: graph.constant
// CHECK: %[[T:.*]] = graph.permute %[[S]]
// CHECK: graph.matmul %[[T]], %[[G]]
func.func @loss_and_logits(%s: tensor<4x8xf32>, %w: tensor<8x8xf32>, %ct0: tensor<f32>, %ct1: tensor<32xf32>) -> tensor<8x8xf32>
    attributes {dyn.differentiable = array<i64: 0, 1>, dyn.saved = array<i64: 0, 1>} {
  %g = graph.expand %ct0 : tensor<f32> -> tensor<4x8xf32>
  %r = graph.reshape %ct1 : tensor<32xf32> -> tensor<4x8xf32>
  %a = graph.add %r, %g : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %t = graph.permute %s dims [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %m = graph.matmul %t, %a : tensor<8x4xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

// -----

// Where the zero cotangent is all an op reads, the op reads a -0.0 splat
// (the lowering fuses it as a scalar).
// CHECK-LABEL: func @only_zero
// CHECK-SAME: (%[[S:.*]]: tensor<4xf32>, %[[CT:.*]]: tensor<4xf32>)
// CHECK: %[[Z:.*]] = graph.constant dense<-0.000000e+00> : tensor<4xf32>
// CHECK: graph.mul %[[Z]], %[[S]]
func.func @only_zero(%s: tensor<4xf32>, %ct0: tensor<4xf32>, %ct1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    attributes {dyn.differentiable = array<i64: 0, 1>, dyn.saved = array<i64: 0>} {
  %m = graph.mul %ct1, %s : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %ct0, %m : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{not a backward function}}
func.func @not_backward(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{output 1 has no cotangent argument}}
func.func @no_such_output(%s: tensor<4xf32>, %ct0: tensor<4xf32>) -> tensor<4xf32>
    attributes {dyn.differentiable = array<i64: 0>, dyn.saved = array<i64: 0>} {
  return %ct0 : tensor<4xf32>
}

// -----

// With `?` dims (a symbolic sequence length): the zero is a -0.0 scalar
// expanded to the argument's runtime sizes, and the argument stays for those
// sizes alone (listed in dyn.sized_cotangents: the caller passes any tensor
// of the output's shape); the addition into the loss's gradient folds away.
// CHECK-LABEL: func @dynamic_loss_and_logits
// CHECK-SAME: (%[[S:.*]]: tensor<?x8xf32>, %[[CT:.*]]: tensor<f32>, %[[CT1:.*]]: tensor<?x8xf32>)
// CHECK-SAME: dyn.differentiable = array<i64: 0, 1>
// CHECK-SAME: dyn.sized_cotangents = array<i64: 1>
// CHECK-SAME: dyn.zero_cotangents = array<i64>
// CHECK: graph.dim %[[CT1]], 0
// CHECK-NOT: graph.add
// CHECK: %[[G:.*]] = graph.expand %[[CT]]
// CHECK: graph.mul %[[S]], %[[G]]
func.func @dynamic_loss_and_logits(%s: tensor<?x8xf32>, %ct0: tensor<f32>, %ct1: tensor<?x8xf32>) -> tensor<?x8xf32>
    attributes {dyn.differentiable = array<i64: 0, 1>, dyn.saved = array<i64: 0>} {
  %n = graph.dim %s, 0 : tensor<?x8xf32> -> index
  %g = graph.expand %ct0 sizes(%n) : tensor<f32> -> tensor<?x8xf32>
  %a = graph.add %ct1, %g : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  %m = graph.mul %s, %a : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %m : tensor<?x8xf32>
}
