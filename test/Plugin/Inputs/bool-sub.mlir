// Arithmetic PyTorch does not define on booleans: the pipeline rejects it.
func.func @bool_sub(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %0 = graph.sub %a, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
