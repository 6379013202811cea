// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim | FileCheck %s

// Type promotion converts first, then each operand is broadcast explicitly.
// CHECK-LABEL: func @broadcast_promote
// CHECK: %[[A:.*]] = prim.convert_element_type %{{.*}} : tensor<4x1xf32> -> tensor<4x1xf64>
// CHECK: %[[AB:.*]] = prim.broadcast_in_dim %[[A]] dims [0, 1] : tensor<4x1xf64> -> tensor<4x8xf64>
// CHECK: %[[BB:.*]] = prim.broadcast_in_dim %{{.*}} dims [1] : tensor<8xf64> -> tensor<4x8xf64>
// CHECK: prim.add %[[AB]], %[[BB]] : tensor<4x8xf64>
func.func @broadcast_promote(%a: tensor<4x1xf32>, %b: tensor<8xf64>) -> tensor<4x8xf64> {
  %0 = graph.add %a, %b : tensor<4x1xf32>, tensor<8xf64> -> tensor<4x8xf64>
  return %0 : tensor<4x8xf64>
}

// -----

// mean is a sum and a division; keepdim is a reshape.
// CHECK-LABEL: func @mean_keepdim
// CHECK: %[[S:.*]] = prim.reduce_sum %{{.*}} dims [1] : tensor<4x8xf32> -> tensor<4xf32>
// CHECK: %[[N:.*]] = prim.constant dense<8.000000e+00> : tensor<4xf32>
// CHECK: %[[M:.*]] = prim.div %[[S]], %[[N]]
// CHECK: prim.reshape %[[M]] : tensor<4xf32> -> tensor<4x1xf32>
func.func @mean_keepdim(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %0 = graph.mean %x dims [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// softmax subtracts the row max before exp.
// CHECK-LABEL: func @softmax
// CHECK: %[[MAX:.*]] = prim.reduce_max %{{.*}} dims [1]
// CHECK: prim.sub %{{.*}}, %{{.*}}
// CHECK: %[[E:.*]] = prim.exp
// CHECK: %[[SUM:.*]] = prim.reduce_sum %[[E]] dims [1]
// CHECK: %[[SB:.*]] = prim.broadcast_in_dim %[[SUM]] dims [0]
// CHECK: prim.div %[[E]], %[[SB]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = graph.softmax %x dim 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// x ** 2 is x * x (exact, and it vectorizes).
// CHECK-LABEL: func @pow_two
// CHECK-NOT: prim.pow
// CHECK: prim.mul %[[X:.*]], %[[X]]
func.func @pow_two(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = graph.constant dense<2.0> : tensor<f32>
  %0 = graph.pow %x, %c : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// relu is max(x, 0); matmul is a dot_general.
// CHECK-LABEL: func @relu_matmul
// CHECK: %[[Z:.*]] = prim.constant dense<0.000000e+00> : tensor<4x8xf32>
// CHECK: %[[R:.*]] = prim.max %{{.*}}, %[[Z]]
// CHECK: prim.dot_general %[[R]], %{{.*}} batch [], [] contract [1], [0]
func.func @relu_matmul(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %0 = graph.relu %a : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = graph.matmul %0, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  return %1 : tensor<4x2xf32>
}

// -----

// Comparisons promote both sides to a common type.
// CHECK-LABEL: func @compare_mixed
// CHECK: %[[C:.*]] = prim.convert_element_type %{{.*}} : tensor<4xi64> -> tensor<4xf32>
// CHECK: prim.lt %[[C]], %{{.*}} : tensor<4xf32> -> tensor<4xi1>
func.func @compare_mixed(%a: tensor<4xi64>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %0 = graph.lt %a, %b : tensor<4xi64>, tensor<4xf32> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Booleans follow PyTorch (an i1 result is the 0/1 integer result converted
// to bool): add and maximum are or, mul and minimum are and, never the 1-bit
// integer add (1 + 1 wraps to 0) or signed max (true is -1).
// CHECK-LABEL: func @bool_arith
// CHECK-NOT: prim.add
// CHECK-NOT: prim.max
// CHECK: %[[A:.*]] = prim.or %{{.*}}, %{{.*}} : tensor<4xi1>
// CHECK: %[[M:.*]] = prim.or %[[A]], %{{.*}} : tensor<4xi1>
// CHECK: %[[P:.*]] = prim.and %[[M]], %{{.*}} : tensor<4xi1>
// CHECK: prim.and %[[P]], %{{.*}} : tensor<4xi1>
func.func @bool_arith(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %0 = graph.add %a, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %1 = graph.maximum %0, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %2 = graph.mul %1, %a : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %3 = graph.minimum %2, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return %3 : tensor<4xi1>
}

// -----

// A bool and an integer promote to the integer: bool operands are 0/1.
// CHECK-LABEL: func @bool_int_add
// CHECK: %[[C:.*]] = prim.convert_element_type %{{.*}} : tensor<4xi1> -> tensor<4xi64>
// CHECK: prim.add %[[C]], %{{.*}} : tensor<4xi64>
func.func @bool_int_add(%a: tensor<4xi1>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %0 = graph.add %a, %b : tensor<4xi1>, tensor<4xi64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// amax / amin of booleans ("any" / "all") reduce 0/1 integers and convert
// back; a bool sum (dtype=torch.bool) counts in i64, then compares with 0.
// CHECK-LABEL: func @bool_reductions
// CHECK: %[[W:.*]] = prim.convert_element_type %{{.*}} : tensor<4x8xi1> -> tensor<4x8xi32>
// CHECK: %[[MX:.*]] = prim.reduce_max %[[W]] dims [1] : tensor<4x8xi32> -> tensor<4xi32>
// CHECK: prim.ne %[[MX]], %{{.*}} : tensor<4xi32> -> tensor<4xi1>
// CHECK: prim.reduce_min %{{.*}} dims [0, 1] : tensor<4x8xi32> -> tensor<i32>
// CHECK: %[[S:.*]] = prim.reduce_sum %{{.*}} dims [0] : tensor<4x8xi64> -> tensor<8xi64>
// CHECK: prim.ne %[[S]], %{{.*}} : tensor<8xi64> -> tensor<8xi1>
func.func @bool_reductions(%x: tensor<4x8xi1>) -> (tensor<4xi1>, tensor<i1>, tensor<8xi1>) {
  %0 = graph.amax %x dims [1] : tensor<4x8xi1> -> tensor<4xi1>
  %1 = graph.amin %x dims [0, 1] : tensor<4x8xi1> -> tensor<i1>
  %2 = graph.sum %x dims [0] : tensor<4x8xi1> -> tensor<8xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<i1>, tensor<8xi1>
}

// -----

// gather maps one to one; the index keeps its integer type.
// CHECK-LABEL: func @gather
// CHECK: prim.gather %{{.*}} dim 0 index %{{.*}} : tensor<10x4xf32>, tensor<3x4xi32> -> tensor<3x4xf32>
func.func @gather(%w: tensor<10x4xf32>, %i: tensor<3x4xi32>) -> tensor<3x4xf32> {
  %0 = graph.gather %w dim 0 index %i : tensor<10x4xf32>, tensor<3x4xi32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
