// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop="materialize-reused-transcendentals=true" -canonicalize | FileCheck %s --check-prefix=CPU
// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop -canonicalize | FileCheck %s --check-prefix=GPU
// The CPU and GPU pipelines choose each way:
// RUN: dyn-opt %s -split-input-file -dyn-prim-to-loop | FileCheck %s --check-prefix=CPU
// RUN: dyn-opt %s -split-input-file -dyn-prim-to-loop-gpu | FileCheck %s --check-prefix=GPU

// A SiLU read by two kernels (a column sum, materialized because the
// consumer's rows do not depend on it, and the scaling): with the option it is
// computed once into a buffer that both kernels read; without it each kernel
// recomputes the exp. (The CPU pipeline's buffer is the output's, which the
// scaling then overwrites in place: dyn-reuse-buffers.)
// CPU-LABEL: func @silu_read_by_two_kernels
// CPU: loop.kernel "mul_0" [4, 8]
// CPU: math.exp
// CPU: loop.store %{{[0-9]+}}, %[[SILU:[a-z_0-9]+]][
// CPU: loop.kernel "reduce_sum_1" [8]
// CPU-NOT: math.exp
// CPU: loop.load %[[SILU]]
// CPU: loop.kernel "mul_2" [4, 8]
// CPU-NOT: math.exp
// CPU: loop.load %[[SILU]]
// CPU: return
// GPU-LABEL: func @silu_read_by_two_kernels
// GPU: loop.kernel "reduce_sum_0" [8]
// GPU: math.exp
// GPU: loop.kernel "mul_1" [4, 8]
// GPU: math.exp
func.func @silu_read_by_two_kernels(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = prim.logistic %x : tensor<4x8xf32>
  %1 = prim.mul %x, %0 : tensor<4x8xf32>
  %2 = prim.reduce_sum %1 dims [0] : tensor<4x8xf32> -> tensor<8xf32>
  %3 = prim.broadcast_in_dim %2 dims [1] : tensor<8xf32> -> tensor<4x8xf32>
  %4 = prim.mul %1, %3 : tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// -----

// An exp used twice inside one kernel (softmax's numerator and its row sum)
// stays inlined: one kernel computes both.
// CPU-LABEL: func @exp_read_by_one_kernel
// CPU-NOT: memref.alloc
// CPU: loop.kernel "div_0" [4]
// CPU-NOT: loop.kernel
// CPU: return
func.func @exp_read_by_one_kernel(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = prim.exp %x : tensor<4x8xf32>
  %1 = prim.reduce_sum %0 dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %2 = prim.broadcast_in_dim %1 dims [0] : tensor<4xf32> -> tensor<4x8xf32>
  %3 = prim.div %0, %2 : tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// A scalar with a pow read by a larger kernel (Adam's bias correction
// 1 - beta^step, broadcast over a parameter): on the CPU its own kernel
// computes it once; on the GPU each element's thread computes it.
// CPU-LABEL: func @scalar_pow_broadcast
// CPU: %[[S:.*]] = memref.alloc() {{.*}} : memref<f64>
// CPU: loop.kernel "sub_0" []
// CPU: math.powf
// CPU: loop.store %{{.*}}, %[[S]]
// CPU: loop.kernel "mul_1" [4, 8]
// CPU-NOT: math.powf
// CPU: loop.load %[[S]]
// GPU-LABEL: func @scalar_pow_broadcast
// GPU-NOT: memref.alloc
// GPU: loop.kernel "mul_0" [4, 8]
// GPU: math.powf
func.func @scalar_pow_broadcast(%x: tensor<4x8xf64>, %step: tensor<f64>) -> tensor<4x8xf64> {
  %beta = prim.constant dense<0.9> : tensor<f64>
  %one = prim.constant dense<1.0> : tensor<f64>
  %0 = prim.pow %beta, %step : tensor<f64>
  %1 = prim.sub %one, %0 : tensor<f64>
  %2 = prim.broadcast_in_dim %1 dims [] : tensor<f64> -> tensor<4x8xf64>
  %3 = prim.mul %x, %2 : tensor<4x8xf64>
  return %3 : tensor<4x8xf64>
}
