// RUN: dyn-opt %s -split-input-file -verify-diagnostics

func.func @philox_word(%s: tensor<i64>) -> tensor<4xi32> {
  // expected-error @+1 {{word 4 is not one of the four Philox words (0-3)}}
  %0 = prim.philox %s offset 0 word 4 : tensor<i64> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @philox_offset(%s: tensor<i64>) -> tensor<4xi32> {
  // expected-error @+1 {{offset -2 is negative}}
  %0 = prim.philox %s offset -2 word 0 : tensor<i64> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @philox_bits_are_i32(%s: tensor<i64>) -> tensor<4xi64> {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit signless integer values}}
  %0 = prim.philox %s offset 0 word 0 : tensor<i64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
