// RUN: dyn-opt %s -dyn-dedupe-gpu-kernels | FileCheck %s

// Two layers' kernels outlined to identical bodies on other buffers (now
// arguments): the second copy is erased and its launch retargeted; a kernel
// that differs (another constant) stays.
// CHECK-LABEL: gpu.module @dyn_forward_kernels
// CHECK: gpu.func @dyn_add_0
// CHECK-NOT: gpu.func @dyn_add_1
// CHECK: gpu.func @dyn_mul_2
// CHECK-LABEL: func.func @forward
// CHECK: gpu.launch_func @dyn_forward_kernels::@dyn_add_0 {{.*}} args(%arg0 : memref<64xf32>, %arg1 : memref<64xf32>)
// CHECK: gpu.launch_func @dyn_forward_kernels::@dyn_add_0 {{.*}} args(%arg1 : memref<64xf32>, %arg2 : memref<64xf32>)
// CHECK: gpu.launch_func @dyn_forward_kernels::@dyn_mul_2
module attributes {gpu.container_module} {
  gpu.module @dyn_forward_kernels {
    gpu.func @dyn_add_0(%x: memref<64xf32>, %y: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<64xf32>
      %c = arith.constant 1.0 : f32
      %s = arith.addf %v, %c : f32
      memref.store %s, %y[%i] : memref<64xf32>
      gpu.return
    }
    gpu.func @dyn_add_1(%x: memref<64xf32>, %y: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<64xf32>
      %c = arith.constant 1.0 : f32
      %s = arith.addf %v, %c : f32
      memref.store %s, %y[%i] : memref<64xf32>
      gpu.return
    }
    gpu.func @dyn_mul_2(%x: memref<64xf32>, %y: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<64xf32>
      %c = arith.constant 2.0 : f32
      %s = arith.addf %v, %c : f32
      memref.store %s, %y[%i] : memref<64xf32>
      gpu.return
    }
  }
  func.func @forward(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>) {
    %one = arith.constant 1 : index
    %n = arith.constant 64 : index
    gpu.launch_func @dyn_forward_kernels::@dyn_add_0 blocks in (%one, %one, %one) threads in (%n, %one, %one) args(%a : memref<64xf32>, %b : memref<64xf32>)
    gpu.launch_func @dyn_forward_kernels::@dyn_add_1 blocks in (%one, %one, %one) threads in (%n, %one, %one) args(%b : memref<64xf32>, %c : memref<64xf32>)
    gpu.launch_func @dyn_forward_kernels::@dyn_mul_2 blocks in (%one, %one, %one) threads in (%n, %one, %one) args(%c : memref<64xf32>, %a : memref<64xf32>)
    return
  }
}
