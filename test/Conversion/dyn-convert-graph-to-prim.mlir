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

// Rounding an integer tensor is the identity; a float one is prim.floor.
// CHECK-LABEL: func @floor_int
// CHECK-SAME: (%[[X:.*]]: tensor<4xi64>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NOT: prim.floor %[[X]]
// CHECK: %[[F:.*]] = prim.floor %[[Y]] : tensor<4xf32>
// CHECK: return %[[X]], %[[F]]
func.func @floor_int(%x: tensor<4xi64>, %y: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf32>) {
  %0 = graph.floor %x : tensor<4xi64> -> tensor<4xi64>
  %1 = graph.floor %y : tensor<4xf32> -> tensor<4xf32>
  return %0, %1 : tensor<4xi64>, tensor<4xf32>
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

// Integer powers as eager's powi, wrapping in the type: a constant exponent
// unrolls its own bits (x^5 = x * (x^2)^2), a tensor exponent all of its
// type's (8 for uint8; a signed one also gives 1, +-1 or 0 where negative).
// CHECK-LABEL: func @integer_pow_constant
// CHECK-NOT: prim.pow
// CHECK: %[[X2:.*]] = prim.mul %[[X:.*]], %[[X]] : tensor<4xi64>
// CHECK: %[[X4:.*]] = prim.mul %[[X2]], %[[X2]]
// CHECK: prim.mul %[[X]], %[[X4]]
// CHECK-LABEL: func @integer_pow_tensor
// CHECK-NOT: prim.pow
// CHECK-COUNT-8: prim.and %{{.*}} : tensor<4xui8>
// CHECK-NOT: prim.and
// CHECK-NOT: prim.lt
// CHECK-LABEL: func @integer_pow_signed
// CHECK-COUNT-15: prim.and
// CHECK: prim.lt
func.func @integer_pow_constant(%x: tensor<4xi64>) -> tensor<4xi64> {
  %c = graph.constant dense<5> : tensor<i64>
  %0 = graph.pow %x, %c : tensor<4xi64>, tensor<i64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
func.func @integer_pow_tensor(%x: tensor<4xui8>, %e: tensor<4xui8>) -> tensor<4xui8> {
  %0 = graph.pow %x, %e : tensor<4xui8>, tensor<4xui8> -> tensor<4xui8>
  return %0 : tensor<4xui8>
}
func.func @integer_pow_signed(%x: tensor<4xi16>, %e: tensor<4xi16>) -> tensor<4xi16> {
  %0 = graph.pow %x, %e : tensor<4xi16>, tensor<4xi16> -> tensor<4xi16>
  return %0 : tensor<4xi16>
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

// addmm: the GEMM, then the input added (beta 1, alpha 1: no scaling; the add
// marked dyn.addmm, eager adds it in its GEMM); with
// beta 0 the input is not read. A contraction of one element (addr) is a
// broadcast multiply; bfloat16 scales in float32 and rounds once.
// CHECK-LABEL: func @addmm
// CHECK: %[[P:.*]] = prim.dot_general %{{.*}}, %{{.*}} batch [], [] contract [1], [0]
// CHECK: %[[B:.*]] = prim.broadcast_in_dim %{{.*}} dims [1] : tensor<2xf32> -> tensor<4x2xf32>
// CHECK: prim.add %[[B]], %[[P]] {dyn.addmm} : tensor<4x2xf32>
// CHECK: %[[Q:.*]] = prim.dot_general %{{.*}}, %{{.*}} batch [0], [0] contract [2], [1]
// CHECK: %[[A:.*]] = prim.constant dense<5.000000e-01> : tensor<3x4x2xf32>
// CHECK: %[[S:.*]] = prim.mul %[[Q]], %[[A]] : tensor<3x4x2xf32>
// CHECK-NOT: prim.add
// CHECK: %[[C:.*]] = prim.broadcast_in_dim %{{.*}} dims [0, 1] : tensor<4x1xbf16> -> tensor<4x2xbf16>
// CHECK: %[[R:.*]] = prim.broadcast_in_dim %{{.*}} dims [0, 1] : tensor<1x2xbf16> -> tensor<4x2xbf16>
// CHECK: %[[O:.*]] = prim.mul %[[C]], %[[R]] : tensor<4x2xbf16>
// CHECK: prim.convert_element_type %[[O]] : tensor<4x2xbf16> -> tensor<4x2xf32>
// CHECK: prim.convert_element_type %{{.*}} : tensor<4x2xf32> -> tensor<4x2xbf16>
func.func @addmm(%x: tensor<2xf32>, %a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %ba: tensor<3x4x8xf32>,
                 %bb: tensor<3x8x2xf32>, %y: tensor<4x2xbf16>, %c: tensor<4x1xbf16>, %r: tensor<1x2xbf16>)
    -> (tensor<4x2xf32>, tensor<3x4x2xf32>, tensor<4x2xbf16>) {
  %0 = graph.addmm %x, %a, %b {alpha = 1.0 : f64, beta = 1.0 : f64} : tensor<2xf32>, tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  %1 = graph.addmm %x, %ba, %bb {alpha = 0.5 : f64, beta = 0.0 : f64} : tensor<2xf32>, tensor<3x4x8xf32>, tensor<3x8x2xf32> -> tensor<3x4x2xf32>
  %2 = graph.addmm %y, %c, %r {alpha = 2.0 : f64, beta = 3.0 : f64} : tensor<4x2xbf16>, tensor<4x1xbf16>, tensor<1x2xbf16> -> tensor<4x2xbf16>
  return %0, %1, %2 : tensor<4x2xf32>, tensor<3x4x2xf32>, tensor<4x2xbf16>
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

// -----

// A convolution is a library primitive; the library adds its bias (one
// rounding, as eager's).
// CHECK-LABEL: func @convolution_bias
// CHECK: prim.convolution %{{.*}}, %{{.*}} bias %{{.*}} stride [2, 2] padding [1, 1] dilation [1, 1] groups 2 : tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<8xf32> -> tensor<1x8x5x5xf32>
// CHECK-NOT: prim.add
func.func @convolution_bias(%x: tensor<1x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x5x5xf32> {
  %0 = graph.convolution %x, %w bias %b stride [2, 2] padding [1, 1] dilation [1, 1] groups 2 : tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<8xf32> -> tensor<1x8x5x5xf32>
  return %0 : tensor<1x8x5x5xf32>
}

// -----

// Transposed convolutions keep output_padding.
// CHECK-LABEL: func @convolution_transposed
// CHECK: prim.convolution %{{.*}}, %{{.*}} stride [2] padding [0] dilation [1] groups 1 transposed output_padding [1] : tensor<1x4x5xf64>, tensor<4x2x3xf64> -> tensor<1x2x12xf64>
func.func @convolution_transposed(%x: tensor<1x4x5xf64>, %w: tensor<4x2x3xf64>) -> tensor<1x2x12xf64> {
  %0 = graph.convolution %x, %w stride [2] padding [0] dilation [1] groups 1 transposed output_padding [1] : tensor<1x4x5xf64>, tensor<4x2x3xf64> -> tensor<1x2x12xf64>
  return %0 : tensor<1x2x12xf64>
}

// -----

// Attention resolves its default scale, 1/sqrt(E); a boolean mask becomes the
// additive one ATen would make of it (0 where attended, -inf elsewhere).
// CHECK-LABEL: func @attention_default_scale
// CHECK: prim.attention %{{.*}}, %{{.*}}, %{{.*}} causal scale 2.500000e-01
// CHECK-DAG: %[[ZERO:.*]] = prim.constant dense<0.000000e+00> : tensor<8x8xf32>
// CHECK-DAG: %[[NINF:.*]] = prim.constant dense<0xFF800000> : tensor<8x8xf32>
// CHECK: %[[MASK:.*]] = prim.select %{{.*}}, %[[ZERO]], %[[NINF]] : tensor<8x8xi1>, tensor<8x8xf32>
// CHECK: prim.attention %{{.*}}, %{{.*}}, %{{.*}} mask %[[MASK]] scale 5.000000e-01
func.func @attention_default_scale(%q: tensor<2x8x16xf32>, %m: tensor<8x8xi1>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %0 = graph.scaled_dot_product_attention %q, %q, %q causal : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  %1 = graph.scaled_dot_product_attention %q, %q, %q mask %m scale 0.5 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<8x8xi1> -> tensor<2x8x16xf32>
  return %0, %1 : tensor<2x8x16xf32>, tensor<2x8x16xf32>
}

// -----

// Max pooling, one pooled dim after the other: pad with -inf (1 in front,
// and behind as far as the last window reaches), a strided slice per kernel
// offset, elementwise max.
// CHECK-LABEL: func @max_pool
// CHECK: %[[P:.*]] = prim.pad %{{.*}} low [0, 0, 1, 0] high [0, 0, 1, 0] value 0xFFF0000000000000 : tensor<1x2x5x5xf32> -> tensor<1x2x7x5xf32>
// CHECK: %[[S0:.*]] = prim.slice %[[P]] start [0, 0, 0, 0] stride [1, 1, 2, 1] : tensor<1x2x7x5xf32> -> tensor<1x2x3x5xf32>
// CHECK: %[[S1:.*]] = prim.slice %[[P]] start [0, 0, 1, 0] stride [1, 1, 2, 1]
// CHECK: %[[M:.*]] = prim.max %[[S0]], %[[S1]]
// CHECK: %[[S2:.*]] = prim.slice %[[P]] start [0, 0, 2, 0] stride [1, 1, 2, 1]
// CHECK: %[[H:.*]] = prim.max %[[M]], %[[S2]] : tensor<1x2x3x5xf32>
// CHECK: prim.pad %[[H]] low [0, 0, 0, 1] high [0, 0, 0, 1]
// CHECK-COUNT-2: prim.max
// CHECK-NOT: prim.max
func.func @max_pool(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %0 = graph.max_pool %x kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Average pooling divides the window sums by PyTorch's divisors: here the
// first window holds one input element and one padding element.
// CHECK-LABEL: func @avg_pool
// CHECK: prim.pad %{{.*}} low [0, 0, 1] high [0, 0, 0] value 0.000000e+00
// CHECK: %[[S:.*]] = prim.add
// CHECK: %[[D:.*]] = prim.constant dense<[1.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK: %[[DB:.*]] = prim.broadcast_in_dim %[[D]] dims [2] : tensor<3xf32> -> tensor<1x2x3xf32>
// CHECK: prim.div %[[S]], %[[DB]]
// CHECK-LABEL: func @avg_pool_include_pad
// CHECK: prim.constant dense<2.000000e+00> : tensor<3xf32>
func.func @avg_pool(%x: tensor<1x2x5xf32>) -> tensor<1x2x3xf32> {
  %0 = graph.avg_pool %x kernel [2] stride [2] padding [1] : tensor<1x2x5xf32> -> tensor<1x2x3xf32>
  return %0 : tensor<1x2x3xf32>
}
func.func @avg_pool_include_pad(%x: tensor<1x2x5xf32>) -> tensor<1x2x3xf32> {
  %0 = graph.avg_pool %x kernel [2] stride [2] padding [1] count_include_pad : tensor<1x2x5xf32> -> tensor<1x2x3xf32>
  return %0 : tensor<1x2x3xf32>
}

// -----

// Integer pooling, as eager's CPU kernels: max pads with the type's least
// value, an average divides the sum by integer divisors (truncating).
// CHECK-LABEL: func @max_pool_integer
// CHECK: prim.pad %{{.*}} low [0, 0, 1] high [0, 0, 0] value -1.280000e+02 : tensor<1x2x5xi8>
// CHECK: prim.max
// CHECK-LABEL: func @avg_pool_integer
// CHECK: %[[S:.*]] = prim.add %{{.*}} : tensor<1x2x3xi64>
// CHECK: %[[D:.*]] = prim.constant dense<[1, 2, 2]> : tensor<3xi64>
// CHECK: %[[DB:.*]] = prim.broadcast_in_dim %[[D]]
// CHECK: prim.div %[[S]], %[[DB]] : tensor<1x2x3xi64>
func.func @max_pool_integer(%x: tensor<1x2x5xi8>) -> tensor<1x2x3xi8> {
  %0 = graph.max_pool %x kernel [2] stride [2] padding [1] dilation [1] : tensor<1x2x5xi8> -> tensor<1x2x3xi8>
  return %0 : tensor<1x2x3xi8>
}
func.func @avg_pool_integer(%x: tensor<1x2x5xi64>) -> tensor<1x2x3xi64> {
  %0 = graph.avg_pool %x kernel [2] stride [2] padding [1] : tensor<1x2x5xi64> -> tensor<1x2x3xi64>
  return %0 : tensor<1x2x3xi64>
}

// -----

// Large non-overlapping windows are a reshape and a reduction, not unrolled slices.
// CHECK-LABEL: func @avg_pool_tiles
// CHECK: prim.reshape %{{.*}} : tensor<1x3x16xf32> -> tensor<1x3x2x8xf32>
// CHECK: prim.reduce_sum %{{.*}} dims [3] : tensor<1x3x2x8xf32> -> tensor<1x3x2xf32>
// CHECK: prim.constant dense<8.000000e+00> : tensor<2xf32>
func.func @avg_pool_tiles(%x: tensor<1x3x16xf32>) -> tensor<1x3x2xf32> {
  %0 = graph.avg_pool %x kernel [8] stride [8] padding [0] : tensor<1x3x16xf32> -> tensor<1x3x2xf32>
  return %0 : tensor<1x3x2xf32>
}

// -----

// Global pooling reduces all pooled dims at once.
// CHECK-LABEL: func @adaptive_global
// CHECK: %[[R:.*]] = prim.reduce_sum %{{.*}} dims [2, 3] : tensor<2x8x7x7xf32> -> tensor<2x8xf32>
// CHECK: %[[K:.*]] = prim.reshape %[[R]] : tensor<2x8xf32> -> tensor<2x8x1x1xf32>
// CHECK: prim.constant dense<4.900000e+01> : tensor<1x1xf32>
// CHECK: prim.div %[[K]]
func.func @adaptive_global(%x: tensor<2x8x7x7xf32>) -> tensor<2x8x1x1xf32> {
  %0 = graph.adaptive_avg_pool %x output_size [1, 1] : tensor<2x8x7x7xf32> -> tensor<2x8x1x1xf32>
  return %0 : tensor<2x8x1x1xf32>
}

// -----

// Irregular adaptive windows ([0,2), [1,4), [3,5) of 5) gather offset j of
// every window, clamped to the window's last element.
// CHECK-LABEL: func @adaptive_irregular
// CHECK: prim.constant dense<[0, 1, 3]> : tensor<3xi64>
// CHECK: prim.gather %{{.*}} dim 1 index
// CHECK: prim.constant dense<[1, 2, 4]> : tensor<3xi64>
// CHECK: prim.max
// CHECK: prim.constant dense<[1, 3, 4]> : tensor<3xi64>
// CHECK: prim.max
func.func @adaptive_irregular(%x: tensor<2x5xf32>) -> tensor<2x3xf32> {
  %0 = graph.adaptive_max_pool %x output_size [3] : tensor<2x5xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Averages over irregular windows mask the clamped repeats out.
// CHECK-LABEL: func @adaptive_avg_irregular
// CHECK: prim.constant dense<[false, true, false]> : tensor<3xi1>
// CHECK: prim.select
// CHECK: prim.constant dense<[2.000000e+00, 3.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK: prim.div
func.func @adaptive_avg_irregular(%x: tensor<2x5xf32>) -> tensor<2x3xf32> {
  %0 = graph.adaptive_avg_pool %x output_size [3] : tensor<2x5xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Reflect padding gathers at mirrored indices; constant padding is prim.pad.
// CHECK-LABEL: func @pad
// CHECK: prim.constant dense<[2, 1, 0, 1, 2, 1, 0]> : tensor<7xi64>
// CHECK: prim.gather %{{.*}} dim 1 index %{{.*}} : tensor<2x3xf32>, tensor<2x7xi64> -> tensor<2x7xf32>
// CHECK: prim.pad %{{.*}} low [1, 0] high [1, 0] value 1.500000e+00
// CHECK: prim.constant dense<[2, 0, 1, 2, 0]> : tensor<5xi64>
// CHECK: prim.constant dense<[0, 0, 1, 2, 2, 2]> : tensor<6xi64>
func.func @pad(%x: tensor<2x3xf32>) -> (tensor<2x7xf32>, tensor<4x3xf32>, tensor<2x5xf32>, tensor<2x6xf32>) {
  %0 = graph.pad %x reflect low [0, 2] high [0, 2] : tensor<2x3xf32> -> tensor<2x7xf32>
  %1 = graph.pad %x constant low [1, 0] high [1, 0] value 1.5 : tensor<2x3xf32> -> tensor<4x3xf32>
  %2 = graph.pad %x circular low [0, 1] high [0, 1] : tensor<2x3xf32> -> tensor<2x5xf32>
  %3 = graph.pad %x replicate low [0, 1] high [0, 2] : tensor<2x3xf32> -> tensor<2x6xf32>
  return %0, %1, %2, %3 : tensor<2x7xf32>, tensor<4x3xf32>, tensor<2x5xf32>, tensor<2x6xf32>
}

// -----

// A negative replicate pad cuts that side off: index j - low, clamped.
// CHECK-LABEL: func @pad_negative_replicate
// CHECK: prim.constant dense<3> : tensor<5xi64>
func.func @pad_negative_replicate(%x: tensor<2x4xf32>) -> tensor<2x5xf32> {
  %0 = graph.pad %x replicate low [0, -4] high [0, 5] : tensor<2x4xf32> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// bitwise_and computes in the integer result type (logical_and converts to
// booleans first); bitwise_xor of booleans is their xor.
// CHECK-LABEL: func @bitwise
// CHECK: prim.and %{{.*}}, %{{.*}} : tensor<8xui8>
// CHECK: prim.xor %{{.*}}, %{{.*}} : tensor<8xi1>
// CHECK: prim.shl %{{.*}}, %{{.*}} : tensor<8xi64>
func.func @bitwise(%a: tensor<8xui8>, %b: tensor<8xui8>, %p: tensor<8xi1>, %q: tensor<8xi1>,
                   %n: tensor<8xi64>) -> (tensor<8xui8>, tensor<8xi1>, tensor<8xi64>) {
  %0 = graph.bitwise_and %a, %b : tensor<8xui8>, tensor<8xui8> -> tensor<8xui8>
  %1 = graph.bitwise_xor %p, %q : tensor<8xi1>, tensor<8xi1> -> tensor<8xi1>
  %2 = graph.bitwise_left_shift %a, %n : tensor<8xui8>, tensor<8xi64> -> tensor<8xi64>
  return %0, %1, %2 : tensor<8xui8>, tensor<8xi1>, tensor<8xi64>
}

// -----

// vecdot: products summed over dim (bfloat16 in float32, one rounding);
// trace: the diagonal of the leading square gathered, in the result type,
// summed.
// CHECK-LABEL: func @vecdot_trace
// CHECK: %[[P:.*]] = prim.mul %{{.*}}, %{{.*}} : tensor<3x5xf32>
// CHECK: %[[S:.*]] = prim.reduce_sum %[[P]] dims [1] : tensor<3x5xf32> -> tensor<3xf32>
// CHECK: prim.convert_element_type %[[S]] : tensor<3xf32> -> tensor<3xbf16>
// CHECK: %[[R:.*]] = prim.slice %{{.*}} start [0, 0] stride [1, 1] : tensor<4x3xi32> -> tensor<3x3xi32>
// CHECK: %[[I:.*]] = prim.iota dim 0 : tensor<3x1xi64>
// CHECK: %[[D:.*]] = prim.gather %[[R]] dim 1 index %[[I]] : tensor<3x3xi32>, tensor<3x1xi64> -> tensor<3x1xi32>
// CHECK: %[[W:.*]] = prim.convert_element_type %[[D]] : tensor<3x1xi32> -> tensor<3x1xi64>
// CHECK: prim.reduce_sum %[[W]] dims [0, 1] : tensor<3x1xi64> -> tensor<i64>
func.func @vecdot_trace(%a: tensor<3x5xbf16>, %b: tensor<3x5xbf16>, %m: tensor<4x3xi32>) -> (tensor<3xbf16>, tensor<i64>) {
  %0 = graph.vecdot %a, %b {dim = 1 : i64} : tensor<3x5xbf16>, tensor<3x5xbf16> -> tensor<3xbf16>
  %1 = graph.trace %m : tensor<4x3xi32> -> tensor<i64>
  return %0, %1 : tensor<3xbf16>, tensor<i64>
}

// -----

// max pooling with indices: the running maximum starts at -inf and the
// window's first position inside the input (0 for the padded first window),
// and takes each tap that is greater or NaN; padding (tap 0 of window 0,
// position -1) is never greater.
// CHECK-LABEL: func @max_pool_with_indices
// CHECK: %[[P:.*]] = prim.pad %{{.*}} low [0, 0, 1] high [0, 0, 1] value 0xFFF0000000000000
// CHECK: %[[LEAST:.*]] = prim.constant dense<0xFF800000> : tensor<1x2x3xf32>
// CHECK: prim.constant dense<[0, 1, 3]> : tensor<3xi64>
// CHECK: %[[T0:.*]] = prim.slice %[[P]] start [0, 0, 0] stride [1, 1, 2]
// CHECK: %[[GT:.*]] = prim.gt %[[T0]], %[[LEAST]]
// CHECK: %[[NAN:.*]] = prim.ne %[[T0]], %[[T0]]
// CHECK: %[[TAKE:.*]] = prim.or %[[GT]], %[[NAN]]
// CHECK: prim.select %[[TAKE]], %[[T0]], %[[LEAST]]
// CHECK: prim.constant dense<[-1, 1, 3]> : tensor<3xi64>
// CHECK: prim.slice %[[P]] start [0, 0, 1] stride [1, 1, 2]
// CHECK: prim.slice %[[P]] start [0, 0, 2] stride [1, 1, 2]
// CHECK: prim.constant dense<[1, 3, 5]> : tensor<3xi64>
// CHECK-NOT: graph.
func.func @max_pool_with_indices(%x: tensor<1x2x5xf32>) -> (tensor<1x2x3xf32>, tensor<1x2x3xi64>) {
  %0:2 = graph.max_pool_with_indices %x {kernel = array<i64: 3>, stride = array<i64: 2>, padding = array<i64: 1>, dilation = array<i64: 1>, ceil_mode = false} : (tensor<1x2x5xf32>) -> (tensor<1x2x3xf32>, tensor<1x2x3xi64>)
  return %0#0, %0#1 : tensor<1x2x3xf32>, tensor<1x2x3xi64>
}

// -----

// adaptive max pooling with indices: windows [0,2), [1,4), [3,5) read by
// gathers; the shorter windows repeat their last position.
// CHECK-LABEL: func @adaptive_max_pool_with_indices
// CHECK: prim.constant dense<[0, 1, 3]> : tensor<3xi64>
// CHECK: prim.gather %{{.*}} dim 2 index
// CHECK: prim.constant dense<[1, 2, 4]> : tensor<3xi64>
// CHECK: prim.constant dense<[1, 3, 4]> : tensor<3xi64>
// CHECK: prim.gather %{{.*}} dim 2 index
// CHECK-NOT: prim.gather
// CHECK-NOT: graph.
func.func @adaptive_max_pool_with_indices(%x: tensor<1x2x5xf32>) -> (tensor<1x2x3xf32>, tensor<1x2x3xi64>) {
  %0:2 = graph.adaptive_max_pool_with_indices %x {output_size = array<i64: 3>} : (tensor<1x2x5xf32>) -> (tensor<1x2x3xf32>, tensor<1x2x3xi64>)
  return %0#0, %0#1 : tensor<1x2x3xf32>, tensor<1x2x3xi64>
}

// -----

// cross: component i is a[i+1] b[i+2] - a[i+2] b[i+1], concatenated along dim.
// CHECK-LABEL: func @cross
// CHECK-COUNT-6: prim.slice
// CHECK-COUNT-2: prim.mul
// CHECK: prim.sub
// CHECK: prim.concatenate %{{.*}}, %{{.*}}, %{{.*}} dim 1 : tensor<2x1xi32>, tensor<2x1xi32>, tensor<2x1xi32> -> tensor<2x3xi32>
// CHECK-NOT: graph.
func.func @cross(%a: tensor<2x3xi32>, %b: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = graph.cross %a, %b {dim = 1 : i64} : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// bilinear: one GEMM with the weight as [in1, out * in2], the product with
// x2 summed over in2 in f32 for f16 (one rounding), then the bias.
// CHECK-LABEL: func @bilinear
// CHECK: %[[T:.*]] = prim.transpose %{{.*}} permutation [1, 0, 2] : tensor<2x3x5xf16> -> tensor<3x2x5xf16>
// CHECK: %[[W:.*]] = prim.reshape %[[T]] : tensor<3x2x5xf16> -> tensor<3x10xf16>
// CHECK: prim.dot_general %{{.*}}, %[[W]] batch [], [] contract [1], [0] : tensor<4x3xf16>, tensor<3x10xf16> -> tensor<4x10xf16>
// CHECK: prim.reduce_sum %{{.*}} dims [2] : tensor<4x2x5xf32> -> tensor<4x2xf32>
// CHECK: prim.add %{{.*}}, %{{.*}} : tensor<4x2xf16>
func.func @bilinear(%a: tensor<4x3xf16>, %b: tensor<4x5xf16>, %w: tensor<2x3x5xf16>, %bias: tensor<2xf16>) -> tensor<4x2xf16> {
  %0 = graph.bilinear %a, %b, %w, %bias {} : (tensor<4x3xf16>, tensor<4x5xf16>, tensor<2x3x5xf16>, tensor<2xf16>) -> tensor<4x2xf16>
  return %0 : tensor<4x2xf16>
}

// -----

// Dynamic dims: a broadcast to a dynamic shape takes its size from the
// operand that has the dim (a `?` is never broadcast); a conversion to
// booleans compares with a zero broadcast to the runtime sizes.
// CHECK-LABEL: func @dynamic_broadcast
// CHECK: %[[N:.*]] = prim.dim %{{.*}}, 0 : tensor<?x8xf32>
// CHECK: %[[B:.*]] = prim.broadcast_in_dim %{{.*}} dims [1] sizes(%[[N]]) : tensor<8xf32> -> tensor<?x8xf32>
// CHECK: prim.add %{{.*}}, %[[B]] : tensor<?x8xf32>
// CHECK: %[[Z:.*]] = prim.constant dense<0.000000e+00> : tensor<f32>
// CHECK: prim.broadcast_in_dim %[[Z]] dims [] sizes(%{{.*}}) : tensor<f32> -> tensor<?x8xf32>
// CHECK: prim.ne
func.func @dynamic_broadcast(%a: tensor<?x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xi1> {
  %0 = graph.add %a, %b : tensor<?x8xf32>, tensor<8xf32> -> tensor<?x8xf32>
  %1 = graph.logical_and %0, %a : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xi1>
  return %1 : tensor<?x8xi1>
}
