// RUN: dyn-opt %s -dyn-cpu | FileCheck %s --check-prefix=CPU
// RUN: dyn-opt %s -dyn-gpu | FileCheck %s --check-prefix=GPU

// A dense graph.constant (torch.arange's values, the row and column numbers of
// tril/triu) becomes a read-only global: on the CPU an LLVM global the loop
// reads, on the GPU a memref.global that the host function passes to the
// kernel (the GPU runtime copies it into the workspace: lib/Compiler).
// CPU-LABEL: llvm.func @positions
// CPU: llvm.mlir.addressof @[[G:__dyn_constant_positions_0]]
// CPU: omp.parallel
// CPU: llvm.sitofp %{{.*}} : i64 to f32
// CPU: llvm.mlir.global private constant @[[G]](dense<[0, 1, 2, 3, 4]> : tensor<5xi64>)
// GPU-LABEL: func.func @positions
// GPU: %[[C:.*]] = memref.get_global @[[G:__dyn_constant_positions_0]] : memref<5xi64>
// GPU: gpu.launch_func {{.*}} args({{.*}}%[[C]] : memref<5xi64>
// GPU: gpu.binary
// GPU: memref.global "private" constant @[[G]] : memref<5xi64> = dense<[0, 1, 2, 3, 4]>
func.func @positions(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = graph.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
  %1 = graph.add %x, %0 : tensor<2x5xf32>, tensor<5xi64> -> tensor<2x5xf32>
  return %1 : tensor<2x5xf32>
}
