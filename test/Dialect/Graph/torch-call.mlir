// RUN: dyn-opt %s -split-input-file | dyn-opt | FileCheck %s
// RUN: dyn-opt %s -split-input-file -cse -canonicalize | FileCheck %s --check-prefix=SIMPLIFY
// graph.torch_call: a PyTorch op without a graph op of its own, as capture records it
// (python/dyn/ops/torch_call.py). Round trip, and what CSE and canonicalization may do to it.

// CHECK-LABEL: func @hardswish
func.func @hardswish(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // CHECK: graph.torch_call "torch.nn.functional.hardswish"(%{{.*}}) {args = [0 : index], kwargs = {inplace = false}} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %0 = graph.torch_call "torch.nn.functional.hardswish"(%x) {args = [0 : index], kwargs = {inplace = false}} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// Several results; every kind of argument: operands inside lists, None as unit, a dtype as a type,
// floats, strings, tuples.
// CHECK-LABEL: func @arguments
func.func @arguments(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4x8xf64>) {
  // CHECK: %[[R:.*]]:2 = graph.torch_call "torch.std_mean"(%{{.*}}) {args = [0 : index, 1], kwargs = {correction = 0 : i64, keepdim = false}} : (tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %0:2 = graph.torch_call "torch.std_mean"(%x) {args = [0 : index, 1 : i64], kwargs = {correction = 0 : i64, keepdim = false}} : (tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  // CHECK: graph.torch_call "torch.Tensor.custom"(%{{.*}}, %{{.*}}) {args = {{\[\[}}0 : index, [1 : index]], unit, f64, 2.500000e-01, "mode", [2, 3]]}
  %1 = graph.torch_call "torch.Tensor.custom"(%x, %y) {args = [[0 : index, [1 : index]], unit, f64, 2.500000e-01 : f64, "mode", [2, 3]]} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf64>
  // CHECK: return %[[R]]#0, %[[R]]#1
  return %0#0, %0#1, %1 : tensor<4xf32>, tensor<4xf32>, tensor<4x8xf64>
}

// -----

// A random op in place: its value is the written operand after the op.
// CHECK-LABEL: func @random_in_place
func.func @random_in_place(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: graph.torch_call "torch.Tensor.bernoulli_"(%{{.*}}) {args = [0 : index, 5.000000e-01], in_place = 0 : i64, seeded}
  %0 = graph.torch_call "torch.Tensor.bernoulli_"(%x) {args = [0 : index, 5.000000e-01 : f64], in_place = 0 : i64, seeded} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Pure calls are values: equal ones are one, unused ones go. Random ones (seeded) read and advance
// PyTorch's generator: each stays, used or not.
// SIMPLIFY-LABEL: func @effects
// SIMPLIFY: graph.torch_call "torch.special.erfinv"
// SIMPLIFY-NOT: torch.special
// SIMPLIFY-COUNT-3: graph.torch_call "torch.nn.functional.dropout"
// SIMPLIFY-NOT: graph.torch_call
// SIMPLIFY: return
func.func @effects(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = graph.torch_call "torch.special.erfinv"(%x) {args = [0 : index]} : (tensor<8xf32>) -> tensor<8xf32>
  %1 = graph.torch_call "torch.special.erfinv"(%x) {args = [0 : index]} : (tensor<8xf32>) -> tensor<8xf32>
  %2 = graph.torch_call "torch.special.ndtri"(%x) {args = [0 : index]} : (tensor<8xf32>) -> tensor<8xf32>
  %3 = graph.torch_call "torch.nn.functional.dropout"(%x) {args = [0 : index], kwargs = {p = 5.000000e-01 : f64, training = true}, seeded} : (tensor<8xf32>) -> tensor<8xf32>
  %4 = graph.torch_call "torch.nn.functional.dropout"(%x) {args = [0 : index], kwargs = {p = 5.000000e-01 : f64, training = true}, seeded} : (tensor<8xf32>) -> tensor<8xf32>
  %5 = graph.torch_call "torch.nn.functional.dropout"(%x) {args = [0 : index], kwargs = {p = 5.000000e-01 : f64, training = true}, seeded} : (tensor<8xf32>) -> tensor<8xf32>
  return %0, %1, %3, %4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
