// RUN: not dyn-opt %s -split-input-file -dyn-convert-graph-to-prim 2>&1 | FileCheck %s

// A PyTorch op capture kept whole (graph.torch_call) has no prim form: the lowering stops there and
// says which op (the dyn backend then runs the graph with PyTorch ops). (Arithmetic PyTorch does not
// define on booleans is refused earlier, by the verifiers: test/Dialect/Graph/invalid.mlir.)
// CHECK: error: graph.torch_call "torch.nn.functional.hardswish" has no lowering in dyn's compiler
func.func @torch_call(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.torch_call "torch.nn.functional.hardswish"(%a) {args = [0 : index]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
