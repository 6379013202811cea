//===- LoopInterfaces.td - loop dialect interfaces ----------*- tablegen -*-===//
#ifndef DYN_LOOP_INTERFACES
#define DYN_LOOP_INTERFACES

include "mlir/IR/OpBase.td"

def Loop_LibraryCallOpInterface : OpInterface<"LibraryCallOpInterface"> {
  let cppNamespace = "::dyn::loop";
  let description = [{
    An op computed by a library call between kernels (a GEMM, a convolution,
    attention): the fusion pass gives its operands and result buffers and
    fuses around it, never into it. Its buffers are contiguous row-major
    (attention and `strided` library calls also take strided views): the inputs, then the outputs it
    writes (one for a GEMM, values and indices for a sort). Buffers are
    signless; an op's `unsigned_buffers` (where it has one) lists those of
    uint8 elements. The lowerings call it through
    one runtime entry with the name, the buffers (with their element types,
    shapes and strides) and the integer parameters below: a call from the JIT-compiled
    host code on the CPU, a step of the launch plan between kernel launches
    on the GPU. docs/library_calls.md lists the names and their parameters.
  }];
  let methods = [
    InterfaceMethod<"The name the runtime looks the implementation up by.",
                    "::llvm::StringRef", "getLibraryCallName">,
    InterfaceMethod<"The buffers read, in the order the implementation takes them.",
                    "::llvm::SmallVector<::mlir::Value>", "getLibraryCallInputs">,
    InterfaceMethod<"The buffers written, in the order the implementation takes them.",
                    "::llvm::SmallVector<::mlir::Value>", "getLibraryCallOutputs">,
    InterfaceMethod<"The integer parameters (attributes) of the call.",
                    "::llvm::SmallVector<int64_t>", "getLibraryCallParams">,
  ];
}

#endif // DYN_LOOP_INTERFACES
