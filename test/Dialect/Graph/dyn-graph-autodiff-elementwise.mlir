// RUN: dyn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(dyn-graph-autodiff))' | FileCheck %s

// Unary rules: sin' = cos, used through the product rule. The joint function
// returns the result, then d/dx; its new argument is the result's cotangent.

// CHECK-LABEL: func.func @sin_times_x
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32> {dyn.requires_grad}, %[[CT:.*]]: tensor<4xf32> {dyn.cotangent}) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-SAME: dyn.joint = {differentiable = array<i64: 0>, outputs = 1 : i64}
// CHECK: %[[S:.*]] = graph.sin %[[X]]
// CHECK: %[[Y:.*]] = graph.mul %[[S]], %[[X]]
// CHECK-DAG: %[[G1:.*]] = graph.mul %[[CT]], %[[X]]
// CHECK-DAG: %[[G2:.*]] = graph.mul %[[CT]], %[[S]]
// CHECK: %[[C:.*]] = graph.cos %[[X]]
// CHECK: %[[G3:.*]] = graph.mul %[[G1]], %[[C]]
// CHECK: %[[SUM:.*]] = graph.add %[[G2]], %[[G3]]
// CHECK: return %[[Y]], %[[SUM]]
func.func @sin_times_x(%x: tensor<4xf32> {dyn.requires_grad}) -> tensor<4xf32> {
  %0 = graph.sin %x : tensor<4xf32> -> tensor<4xf32>
  %1 = graph.mul %0, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Broadcasting: the gradient of a broadcast operand is summed back to its
// shape (SumTo); an argument without dyn.requires_grad gets none.

// CHECK-LABEL: func.func @bias_add
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3xf32> {dyn.requires_grad}, %[[CT:.*]]: tensor<2x3xf32> {dyn.cotangent}) -> (tensor<2x3xf32>, tensor<3xf32>)
// CHECK: %[[Y:.*]] = graph.add %[[X]], %[[B]]
// CHECK: %[[S:.*]] = graph.sum %[[CT]] dims [0] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK: return %[[Y]], %[[S]]
func.func @bias_add(%x: tensor<2x3xf32>, %b: tensor<3xf32> {dyn.requires_grad}) -> tensor<2x3xf32> {
  %0 = graph.add %x, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A size-1 dim broadcast keeps its rank: summed, then reshaped back.

// CHECK-LABEL: func.func @keepdim_broadcast
// CHECK: graph.sum %{{.*}} dims [1] : tensor<2x3xf32> -> tensor<2xf32>
// CHECK: graph.reshape %{{.*}} : tensor<2xf32> -> tensor<2x1xf32>
func.func @keepdim_broadcast(%x: tensor<2x3xf32>, %m: tensor<2x1xf32> {dyn.requires_grad}) -> tensor<2x3xf32> {
  %0 = graph.mul %x, %m : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// graph.detach and comparisons stop gradients: relu's rule selects on the
// result; the masked branch carries no gradient to %x through the mask.

// CHECK-LABEL: func.func @relu_detach
// CHECK-SAME: -> (tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[R:.*]] = graph.relu %[[X:[^ ]*]]
// CHECK: %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[P:.*]] = graph.gt %[[R]], %[[Z]]
// CHECK: graph.where %[[P]]
func.func @relu_detach(%x: tensor<4xf32> {dyn.requires_grad}) -> tensor<4xf32> {
  %0 = graph.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = graph.detach %x : tensor<4xf32>
  %2 = graph.mul %0, %1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Integer results are not differentiable; a requires_grad argument no
// differentiable result reaches gets zeros.

// CHECK-LABEL: func.func @unused
// CHECK-SAME: (%{{.*}}: tensor<3xf32> {dyn.requires_grad}, %{{.*}}: tensor<3xf32> {dyn.requires_grad}, %[[CT:.*]]: tensor<3xf32> {dyn.cotangent}) -> (tensor<3xf32>, tensor<3xi1>, tensor<3xf32>, tensor<3xf32>)
// CHECK-SAME: dyn.joint = {differentiable = array<i64: 0>, outputs = 2 : i64}
// CHECK: %[[N:.*]] = graph.neg %[[CT]]
// CHECK: %[[G:.*]] = graph.neg %[[N]]
// CHECK: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: return %{{.*}}, %{{.*}}, %[[G]], %[[ZERO]]
func.func @unused(%x: tensor<3xf32> {dyn.requires_grad}, %y: tensor<3xf32> {dyn.requires_grad}) -> (tensor<3xf32>, tensor<3xi1>) {
  %0 = graph.neg %x : tensor<3xf32> -> tensor<3xf32>
  %1 = graph.neg %0 : tensor<3xf32> -> tensor<3xf32>
  %2 = graph.gt %y, %x : tensor<3xf32>, tensor<3xf32> -> tensor<3xi1>
  return %1, %2 : tensor<3xf32>, tensor<3xi1>
}
