// RUN: dyn-opt %s -dyn-split-gpu-kernel-modules="parts=2" | FileCheck %s
// RUN: dyn-opt %s -pass-pipeline="builtin.module(dyn-split-gpu-kernel-modules{parts=2},gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}),reconcile-unrealized-casts,dyn-gpu-modules-to-ptx{toolkit-path=/usr/local/cuda})" | FileCheck %s --check-prefix=PTX
// RUN: dyn-opt %s -dyn-split-gpu-kernel-modules | FileCheck %s --check-prefix=AUTO

// Three kernels into two modules: the largest (@big) alone, the two small
// ones together; the launches name their new modules. The modules keep the
// original's target.
// CHECK-LABEL: gpu.module @k_0 [#nvvm.target<chip = "sm_90">]
// CHECK-NEXT: gpu.func @big
// CHECK-NOT: gpu.func
// CHECK: gpu.module @k_1 [#nvvm.target<chip = "sm_90">]
// CHECK-DAG: gpu.func @small_a
// CHECK-DAG: gpu.func @small_b
// CHECK-NOT: gpu.module @k {
// CHECK: gpu.launch_func @k_1::@small_a
// CHECK: gpu.launch_func @k_0::@big
// CHECK: gpu.launch_func @k_1::@small_b

// Each module becomes a gpu.binary holding its kernels' PTX.
// PTX: gpu.binary @k_0 [#gpu.object<#nvvm.target<chip = "sm_90">, {{.*}}assembly = "{{.*}}.entry big
// PTX-NOT: small_
// PTX: gpu.binary @k_1 [#gpu.object<#nvvm.target<chip = "sm_90">, {{.*}}assembly = "{{.*}}.entry small_

// Without `parts`: at most one module per 8 kernels, so three stay together.
// AUTO: gpu.module @k [
// AUTO-NOT: gpu.module
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90">] {
    gpu.func @small_a(%a: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %a[%i] : memref<64xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %a[%i] : memref<64xf32>
      gpu.return
    }
    gpu.func @big(%a: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %a[%i] : memref<64xf32>
      %w = arith.mulf %v, %v : f32
      %x = arith.addf %w, %v : f32
      %y = arith.mulf %x, %w : f32
      %z = arith.subf %y, %v : f32
      memref.store %z, %a[%i] : memref<64xf32>
      gpu.return
    }
    gpu.func @small_b(%a: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %a[%i] : memref<64xf32>
      %w = arith.subf %v, %v : f32
      memref.store %w, %a[%i] : memref<64xf32>
      gpu.return
    }
  }
  func.func @forward(%a: memref<64xf32>) {
    %one = arith.constant 1 : index
    %n = arith.constant 64 : index
    gpu.launch_func @k::@small_a blocks in (%one, %one, %one) threads in (%n, %one, %one) args(%a : memref<64xf32>)
    gpu.launch_func @k::@big blocks in (%one, %one, %one) threads in (%n, %one, %one) args(%a : memref<64xf32>)
    gpu.launch_func @k::@small_b blocks in (%one, %one, %one) threads in (%n, %one, %one) args(%a : memref<64xf32>)
    return
  }
}
