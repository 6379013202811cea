// RUN: dyn-opt %s -dyn-gpu | FileCheck %s --check-prefix=GPU
// RUN: dyn-opt %s -dyn-cpu | FileCheck %s --check-prefix=CPU

// The normalization ops through both targets: row reductions become block
// reductions on the GPU, OpenMP loops on the CPU; nothing of the graph or
// prim dialects is left.
// GPU-LABEL: func.func @norms
// GPU: gpu.launch_func
// GPU: gpu.binary
// GPU-NOT: graph.
// GPU-NOT: prim.
// CPU-LABEL: llvm.func @norms
// CPU: omp.parallel
// CPU-NOT: graph.
// CPU-NOT: prim.
func.func @norms(%x: tensor<8x16x32xf32>, %w: tensor<32xf32>, %b: tensor<32xf32>, %c: tensor<16xf32>,
                 %rm: tensor<16xf32>, %rv: tensor<16xf32>, %h: tensor<8x16x32xbf16>)
    -> (tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<16xf32>, tensor<16xf32>,
        tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xbf16>) {
  %0 = graph.layer_norm %x weight %w bias %b normalized_rank 1 eps 1.0e-5 : tensor<8x16x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<8x16x32xf32>
  %1 = graph.rms_norm %x weight %w normalized_rank 1 eps 1.0e-6 : tensor<8x16x32xf32>, tensor<32xf32> -> tensor<8x16x32xf32>
  %2:3 = graph.batch_norm %x weight %c bias %c running_mean %rm running_var %rv training momentum 0.1 eps 1.0e-5 : tensor<8x16x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<8x16x32xf32>, tensor<16xf32>, tensor<16xf32>
  %3 = graph.group_norm %x weight %c bias %c groups 4 eps 1.0e-5 : tensor<8x16x32xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<8x16x32xf32>
  %4 = graph.instance_norm %x use_input_stats momentum 0.1 eps 1.0e-5 : tensor<8x16x32xf32> -> tensor<8x16x32xf32>
  %5 = graph.batch_norm %h weight %c bias %c running_mean %rm running_var %rv eps 1.0e-5 : tensor<8x16x32xbf16>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<8x16x32xbf16>
  return %0, %1, %2#0, %2#1, %2#2, %3, %4, %5 : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xbf16>
}
