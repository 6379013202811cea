// RUN: dyn-opt %s -split-input-file -dyn-convert-graph-to-prim -mlir-elide-elementsattrs-if-larger=16 | FileCheck %s
// RUN: dyn-opt %s -split-input-file -dyn-graph-to-prim -dyn-prim-to-loop-gpu -dyn-convert-loop-to-gpu | FileCheck %s --check-prefix=GPU

// frexp: the exponent from floor(log |x| / ln 2) in f64, corrected against
// the table of 2^k (k from -1074: the index is k + 1074); the mantissa is x
// times two powers of two (k split by an arithmetic shift), (x, 0) where x is
// 0, infinite or NaN.
// CHECK-LABEL: func @frexp
// CHECK: %[[X:.*]] = prim.convert_element_type %arg0 : tensor<4xf32> -> tensor<4xf64>
// CHECK: %[[A:.*]] = prim.abs %[[X]]
// CHECK: prim.log
// CHECK: prim.constant dense<1.4426950408889634> : tensor<4xf64>
// CHECK: prim.floor
// CHECK: prim.constant dense_resource<__elided__> : tensor<2098xf64>
// CHECK: prim.gather %{{.*}} dim 0 index %{{.*}} : tensor<2098xf64>, tensor<4xi64> -> tensor<4xf64>
// CHECK: prim.shr
// CHECK: %[[M:.*]] = prim.mul
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf64> -> tensor<4xf32>
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xi64> -> tensor<4xi32>
// GPU-LABEL: func @frexp
// GPU: gpu.launch blocks
func.func @frexp(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0:2 = graph.frexp %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xi32>
}

// -----

// nextafter of bf16: the exponent at least bf16's smallest normal one (-126),
// the ulp 2^(E - 7) (8 significand bits), half of it toward 0 at a power of
// two; the smallest subnormal 2^-133 from 0, bf16's largest finite value from
// an infinity, NaN where either operand is.
// CHECK-LABEL: func @nextafter
// CHECK: prim.constant dense<-126> : tensor<4xi64>
// CHECK: prim.constant dense<7> : tensor<4xi64>
// CHECK: prim.constant dense<5.000000e-01> : tensor<4xf64>
// CHECK: prim.constant dense<9.1835496157991212E-41> : tensor<4xf64>
// CHECK: prim.constant dense<3.3895313892515355E+38> : tensor<4xf64>
// CHECK: prim.constant dense<0x7FF8000000000000> : tensor<4xf64>
// CHECK: prim.convert_element_type %{{.*}} : tensor<4xf64> -> tensor<4xbf16>
// GPU-LABEL: func @nextafter
// GPU: gpu.launch blocks
func.func @nextafter(%x: tensor<4xbf16>, %y: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = graph.nextafter %x, %y : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}
