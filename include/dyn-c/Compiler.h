/*===- Compiler.h - graph-dialect module in, callable CPU function out -*- C -*-===*\
|*                                                                                  *|
|* The C face of dyn's compiler (include/dyn/Compiler/Compiler.h): a graph-dialect  *|
|* function lowered through the CPU pipeline and JIT-compiled.                      *|
|*                                                                                  *|
\*===----------------------------------------------------------------------------===*/
#ifndef DYN_C_COMPILER_H
#define DYN_C_COMPILER_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A JIT-compiled graph function; owned by the caller (dynCompiledFunctionDestroy).
typedef struct DynCompiledFunction {
  void *ptr;
} DynCompiledFunction;

static inline bool dynCompiledFunctionIsNull(DynCompiledFunction function) {
  return !function.ptr;
}

/// Lowers function `funcName` of the graph-dialect `module` through the CPU
/// pipeline and JIT-compiles it with LLVM optimization level `optLevel`
/// (0-3). The compiler works on a copy of the module in a context of its own;
/// `module` is left as it was. On failure returns a null function and calls
/// `errorCallback` (when not NULL) with the located diagnostics.
MLIR_CAPI_EXPORTED DynCompiledFunction dynCompileGraph(MlirModule module, MlirStringRef funcName,
                                                       int optLevel,
                                                       MlirStringCallback errorCallback,
                                                       void *userData);

/// Calls the function. `buffers` holds one bare data pointer per tensor:
/// every input, then every output, in function order. Inputs are contiguous;
/// outputs are preallocated and contiguous, with the function's result shapes
/// and element types.
MLIR_CAPI_EXPORTED void dynCompiledFunctionRun(DynCompiledFunction function, void **buffers);

/// Wall time spent in the pipeline and the JIT, in seconds.
MLIR_CAPI_EXPORTED double dynCompiledFunctionGetCompileSeconds(DynCompiledFunction function);

MLIR_CAPI_EXPORTED void dynCompiledFunctionDestroy(DynCompiledFunction function);

#ifdef __cplusplus
}
#endif

#endif /* DYN_C_COMPILER_H */
