// RUN: dyn-opt %s -dyn-gpu | FileCheck %s
// RUN: dyn-opt %s -dyn-gpu | %python %S/extract_ptx.py > %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// A block with `?` rows (a transformer's batch x sequence), through the whole
// GPU pipeline: the host function the launch plan reads computes every size
// from its buffers' dims (memref.dim of the arguments, index arithmetic), the
// launch geometry and the kernels' size operands from them. A buffer with
// `?` dims goes to a kernel as its bare pointer (memref<0xf32>) with its
// sizes beside it; a temporary of runtime size is a memref.alloc of them; the
// GEMM stays a library call on memref<?x...> operands, its sizes evaluated by
// the launch plan at each call.
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[X:.*]]: memref<?x64xf32>,
// CHECK-DAG: %[[N:.*]] = memref.dim %[[X]], %c0 : memref<?x64xf32>
// CHECK-DAG: memref.alloc(%{{.*}}) {{.*}} : memref<?x64xf32>
// CHECK: %[[XP:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [0], strides: [1] : memref<?x64xf32> to memref<0xf32>
// CHECK: gpu.launch_func @dyn_block_kernels{{.*}} blocks in (%[[N]], %c1, %c1) threads in (%c32, %c1, %c1) args({{.*}}%[[XP]] : memref<0xf32>
// CHECK: loop.matmul {{.*}} : memref<?x64xf32>, memref<64x32xf32>, memref<?x32xf32>
// CHECK: arith.ceildivui
// CHECK: gpu.launch_func
// CHECK: gpu.launch_func @dyn_block_kernels{{.*}} blocks in (%{{.*}}, %c1, %c1) threads in (%c256, %c1, %c1) args({{.*}}: index
// CHECK: return
// CHECK: gpu.binary
func.func @block(%x: tensor<?x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>, %w: tensor<64x32xf32>,
                 %bias: tensor<32xf32>, %y: tensor<?x?xf32>) -> (tensor<?x32xf32>, tensor<?x?xf32>) {
  %0 = graph.layer_norm %x weight %g bias %b normalized_rank 1 eps 1.0e-5 : tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  %1 = graph.matmul %0, %w : tensor<?x64xf32>, tensor<64x32xf32> -> tensor<?x32xf32>
  %2 = graph.add %1, %bias : tensor<?x32xf32>, tensor<32xf32> -> tensor<?x32xf32>
  %3 = graph.relu %2 : tensor<?x32xf32> -> tensor<?x32xf32>
  %4 = graph.softmax %y dim 1 : tensor<?x?xf32> -> tensor<?x?xf32>
  return %3, %4 : tensor<?x32xf32>, tensor<?x?xf32>
}
