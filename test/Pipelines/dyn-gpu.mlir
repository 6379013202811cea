// RUN: dyn-opt %s -dyn-gpu | FileCheck %s --check-prefix=DEFAULT
// RUN: dyn-opt %s -dyn-gpu="chip=sm_80 sm-count=108" | FileCheck %s --check-prefix=A100
// RUN: dyn-opt %s -dyn-gpu="chip=sm_80" | %python %S/extract_ptx.py | FileCheck %s --check-prefix=PTX

// dyn-gpu is the pipeline the compiler runs for CUDA, graph in, PTX out, for
// the target described by its options (the compiler passes the device's:
// docs/gpu.md). The chip is the PTX target of the kernels' module.
// DEFAULT: gpu.launch_func
// DEFAULT: gpu.binary {{.*}}#nvvm.target<O = 3, chip = "sm_90">
// A100: gpu.launch_func
// A100: gpu.binary {{.*}}#nvvm.target<O = 3, chip = "sm_80">
// PTX: .target sm_80
func.func @gelu(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %0 = graph.gelu %x {approximate = "tanh"} : tensor<64x1024xf32> -> tensor<64x1024xf32>
  return %0 : tensor<64x1024xf32>
}
