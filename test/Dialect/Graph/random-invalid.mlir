// RUN: dyn-opt %s -split-input-file -verify-diagnostics

func.func @uniform_of_ints(%s: tensor<i64>) -> tensor<4xi32> {
  // expected-error @+1 {{uniform draws floats}}
  %0 = graph.random uniform %s offset 0 a 0.0 b 1.0 : tensor<i64> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @uniform_reversed(%s: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{uniform needs a <= b}}
  %0 = graph.random uniform %s offset 0 a 1.0 b 0.0 : tensor<i64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @normal_negative_std(%s: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{normal needs a standard deviation b >= 0}}
  %0 = graph.random normal %s offset 0 a 0.0 b -1.0 : tensor<i64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @exponential_rate(%s: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{exponential needs a rate a > 0}}
  %0 = graph.random exponential %s offset 0 a 0.0 b 0.0 : tensor<i64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @integers_empty_range(%s: tensor<i64>) -> tensor<4xi64> {
  // expected-error @+1 {{integers needs integral bounds a < b}}
  %0 = graph.random integers %s offset 0 a 3.0 b 3.0 : tensor<i64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @integers_fraction(%s: tensor<i64>) -> tensor<4xi64> {
  // expected-error @+1 {{integers needs integral bounds a < b}}
  %0 = graph.random integers %s offset 0 a 0.5 b 3.0 : tensor<i64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @negative_offset(%s: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{offset -1 is negative}}
  %0 = graph.random uniform %s offset -1 a 0.0 b 1.0 : tensor<i64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @seed_not_scalar(%s: tensor<2xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 must be 0D tensor of 64-bit signless integer values}}
  %0 = graph.random uniform %s offset 0 a 0.0 b 1.0 : tensor<2xi64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dropout_p(%x: tensor<4xf32>, %s: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{p must be in [0, 1]}}
  %0 = graph.dropout %x, %s p 1.5 offset 0 : tensor<4xf32>, tensor<i64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dropout_feature_dims(%x: tensor<4xf32>, %s: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{feature_dims 2 is out of range for rank 1}}
  %0 = graph.dropout %x, %s p 0.5 offset 0 {feature_dims = 2 : i64} : tensor<4xf32>, tensor<i64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dropout_of_ints(%x: tensor<4xi32>, %s: tensor<i64>) -> tensor<4xi32> {
  // expected-error @+1 {{must be ranked tensor of floating-point values}}
  %0 = graph.dropout %x, %s p 0.5 offset 0 : tensor<4xi32>, tensor<i64> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @geometric_probability(%s: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{geometric needs a probability 0 < a < 1}}
  %0 = graph.random geometric %s offset 0 a 1.5 b 0.0 : tensor<i64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @cauchy_of_integers(%s: tensor<i64>) -> tensor<4xi32> {
  // expected-error @+1 {{cauchy and log_normal draw floats}}
  %0 = graph.random cauchy %s offset 0 a 0.0 b 1.0 : tensor<i64> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
