// RUN: dyn-opt %s -split-input-file -verify-diagnostics

func.func @unreferenced_operand(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand 1 must appear exactly once in args/kwargs, appears 0 times}}
  %0 = graph.torch_call "torch.add"(%x, %y) {args = [0 : index]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @operand_twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand 0 must appear exactly once in args/kwargs, appears 2 times}}
  %0 = graph.torch_call "torch.add"(%x) {args = [0 : index], kwargs = {other = 0 : index}} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @operand_out_of_range(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{argument refers to operand 3 but there are 1 operands}}
  %0 = graph.torch_call "torch.sin"(%x) {args = [[3 : index]]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @no_callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{needs a callee}}
  %0 = graph.torch_call ""(%x) {args = [0 : index]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @no_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{needs at least one result}}
  graph.torch_call "torch.sin"(%x) {args = [0 : index]} : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @in_place_type(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{in_place: the single result must have the written operand's type}}
  %0 = graph.torch_call "torch.Tensor.exponential_"(%x) {args = [0 : index], in_place = 0 : i64, seeded} : (tensor<4xf32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @in_place_range(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{in_place operand 2 is out of range}}
  %0 = graph.torch_call "torch.Tensor.exponential_"(%x) {args = [0 : index], in_place = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
