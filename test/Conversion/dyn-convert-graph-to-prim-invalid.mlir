// RUN: not dyn-opt %s -split-input-file -dyn-convert-graph-to-prim 2>&1 | FileCheck %s

// Arithmetic PyTorch does not define on booleans (it raises) is not lowered
// to 1-bit integer arithmetic: the conversion fails.
// CHECK: error: failed to legalize operation 'graph.sub'
func.func @bool_sub(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %0 = graph.sub %a, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK: error: failed to legalize operation 'graph.abs'
func.func @bool_abs(%a: tensor<4xi1>) -> tensor<4xi1> {
  %0 = graph.abs %a : tensor<4xi1> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// A PyTorch op capture kept whole (graph.torch_call) has no prim form: the lowering stops there and
// says which op (the dyn backend then runs the graph with PyTorch ops).
// CHECK: error: graph.torch_call "torch.nn.functional.hardswish" has no lowering in dyn's compiler
func.func @torch_call(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.torch_call "torch.nn.functional.hardswish"(%a) {args = [0 : index]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
