// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop="f32-gemm-addend=true" -canonicalize | FileCheck %s
// RUN: dyn-opt %s -split-input-file -dyn-prim-to-loop | FileCheck %s
// RUN: dyn-opt %s -split-input-file -dyn-prim-to-loop-gpu | FileCheck %s --check-prefix=GPU

// With f32-gemm-addend (the CPU pipeline sets it), a float32 linear layer's
// bias (an add marked dyn.addmm: graph.addmm's) goes into the GEMM's epilogue
// (ATen's addmm, eager's rounding) and the kernel after it reads the sum. The
// GPU pipeline does not: the kernel after the GEMM adds the bias (for addmm
// cuBLAS picks slower kernels than for mm, benchmarks/gemm_epilogue.py).
// The pipelines' dyn-reuse-buffers then has the GEMM write the output, which
// the kernel after it overwrites in place (the fusion alone: a temporary).
// CHECK-LABEL: func @linear_gelu_f32
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[W:.*]]: memref<16x8xf32>, %[[B:.*]]: memref<16xf32>, %[[OUT:.*]]: memref<4x16xf32>)
// CHECK: loop.matmul %[[X]], %[[W]], %[[Y:[a-z_0-9]+]] addend %[[B]] transpose_b
// CHECK: loop.kernel "tanh_0" [4, 16]
// CHECK: loop.load %[[Y]]
// CHECK-NOT: loop.load %[[B]]
// GPU-LABEL: func @linear_gelu_f32
// GPU: loop.matmul %{{.*}}, %{{.*}}, %{{.*}} transpose_b :
// GPU: loop.kernel "tanh_0" [4, 16]
// GPU: loop.load %arg2
func.func @linear_gelu_f32(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %wt = prim.transpose %w permutation [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %m = prim.dot_general %x, %wt batch [], [] contract [1], [0] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %bb = prim.broadcast_in_dim %b dims [1] : tensor<16xf32> -> tensor<4x16xf32>
  %y = prim.add %m, %bb {dyn.addmm} : tensor<4x16xf32>
  %r = prim.tanh %y : tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// A float32 matmul and an add that eager computes as two ops (`x @ w + b`,
// two roundings), no `dyn.addmm`: the kernel after the GEMM adds.
// CHECK-LABEL: func @matmul_then_add_f32
// CHECK: loop.matmul %{{.*}}, %{{.*}}, %{{.*}} transpose_b :
// CHECK: loop.kernel "tanh_0" [4, 16]
// CHECK: loop.load %arg2
func.func @matmul_then_add_f32(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %wt = prim.transpose %w permutation [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %m = prim.dot_general %x, %wt batch [], [] contract [1], [0] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %bb = prim.broadcast_in_dim %b dims [1] : tensor<16xf32> -> tensor<4x16xf32>
  %y = prim.add %m, %bb : tensor<4x16xf32>
  %r = prim.tanh %y : tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// dyn's own runtime matmul (dyn.cpu_gemm = "runtime": chosen, or no torch to
// call, as in a C API program) has no epilogue: the kernel after it adds.
// CHECK-LABEL: func @runtime_gemm
// CHECK: loop.matmul %{{.*}}, %{{.*}}, %{{.*}} transpose_b :
// CHECK: loop.kernel "tanh_0" [4, 16]
// CHECK: loop.load %arg2
module attributes {dyn.cpu_gemm = "runtime"} {
func.func @runtime_gemm(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %wt = prim.transpose %w permutation [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %m = prim.dot_general %x, %wt batch [], [] contract [1], [0] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %bb = prim.broadcast_in_dim %b dims [1] : tensor<16xf32> -> tensor<4x16xf32>
  %y = prim.add %m, %bb {dyn.addmm} : tensor<4x16xf32>
  %r = prim.tanh %y : tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
}

// -----

// A product the function returns reshaped (an LM head's logits, [B*L, V] as
// [B, L, V]) is written into the output buffer through a row-major view: no
// temporary of the output's size and no copy kernel.
// CHECK-LABEL: func @logits_reshaped
// CHECK-SAME: (%{{.*}}: memref<6x8xf32>, %{{.*}}: memref<16x8xf32>, %[[OUT:.*]]: memref<2x3x16xf32>)
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [6, 16], strides: [16, 1] : memref<2x3x16xf32> to memref<6x16xf32>
// CHECK-NOT: memref.alloc
// CHECK: loop.matmul %{{.*}}, %{{.*}}, %[[V]] transpose_b
// CHECK-NOT: loop.kernel
// CHECK: return
// GPU-LABEL: func @logits_reshaped
// GPU-NOT: memref.alloc
// GPU: loop.matmul
// GPU-NOT: loop.kernel
func.func @logits_reshaped(%x: tensor<6x8xf32>, %w: tensor<16x8xf32>) -> tensor<2x3x16xf32> {
  %wt = prim.transpose %w permutation [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %m = prim.dot_general %x, %wt batch [], [] contract [1], [0] : tensor<6x8xf32>, tensor<8x16xf32> -> tensor<6x16xf32>
  %r = prim.reshape %m : tensor<6x16xf32> -> tensor<2x3x16xf32>
  return %r : tensor<2x3x16xf32>
}
