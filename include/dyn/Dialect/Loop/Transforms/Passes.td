//===- Passes.td - loop dialect transforms ------------------*- tablegen -*-===//
//
// Passes over the loop dialect itself (after dyn-fuse-prim-to-loop, before a
// target's lowering). Each has a lit test named after its flag under test/.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_LOOP_TRANSFORMS_PASSES
#define DYN_LOOP_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def PlaceTemporariesPass : Pass<"dyn-place-temporaries", "mlir::func::FuncOp"> {
  let summary = "Allocate each temporary just before its first use and free it after its last";
  let description = [{
    dyn-fuse-prim-to-loop allocates a function's temporaries at its entry and
    frees them at its return, so all of them are held for the whole call.
    This pass moves each `memref.alloc` of the function's body to just before
    the first op of the body that uses it (or a view of it), and its
    `memref.dealloc` to just after the last: a temporary is held only while
    the kernels and library calls that read or write it run. The CPU pipeline
    runs it; its host allocator hands a freed buffer to the next temporary of
    its size class, so temporaries whose lifetimes do not overlap share memory
    (the GPU places its temporaries in one workspace by the same lifetimes).

    A temporary allocated or freed inside a nested region, or used by an op
    of the body that frees it otherwise, stays where it is.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ReuseBuffersPass : Pass<"dyn-reuse-buffers", "mlir::func::FuncOp"> {
  let summary = "Write a kernel's temporary into a temporary it reads for the last time";
  let description = [{
    A kernel that writes a temporary `%b` point by point (one store at its
    own indices) and reads another temporary `%a` of the same type only at
    the point it writes, before writing it, where nothing after the kernel
    reads `%a`, writes into `%a` instead: `%b`'s uses read `%a` and `%b`'s
    allocation goes. Each point reads its element of `%a` before it writes
    the same element, so no point sees another's write (on the CPU's threads
    and the GPU's alike). A batch norm and ReLU after a convolution then
    overwrite the convolution's result rather than holding a second
    activation-sized buffer while they run, as eager's in-place ReLU and
    inductor's buffer reuse do.

    The same holds where the kernel writes a function output (an argument
    past `dyn.num_inputs` that no `dyn.in_place` entry makes an input's
    buffer, or a row-major view of one) that nothing uses before it: the
    temporary's writers write the output (a GEMM writes the logits, the
    kernel adds the bias in place) and the temporary goes; a temporary of
    another shape qualifies where the kernel reads it at the row-major offset
    it writes (the output's reshape fused into the kernel: `[i * L + j, k]`
    for `[i, j, k]`), and its writers write a row-major view of the output.
    Both pipelines run it after fusion.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

#endif // DYN_LOOP_TRANSFORMS_PASSES
