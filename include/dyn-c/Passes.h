/*===- Passes.h - dyn's passes and named pipelines for C users ---*- C -*-===*\
|*                                                                            *|
|* Registration makes dyn's passes and pipelines (dyn-cpu, dyn-graph-to-prim, *|
|* ...) known to textual pipelines (mlirParsePassPipeline,                    *|
|* mlirOpPassManagerAddPipeline); the builders add a pipeline's passes to a   *|
|* pass manager nested on builtin.module directly.                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef DYN_C_PASSES_H
#define DYN_C_PASSES_H

#include "mlir-c/Pass.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Registers dyn's passes, its named pipelines and the upstream passes they
/// use. Idempotent.
MLIR_CAPI_EXPORTED void dynRegisterAllPasses(void);

/// graph -> prim: decomposition, then clean-up (dyn-graph-to-prim).
MLIR_CAPI_EXPORTED void dynBuildGraphToPrimPipeline(MlirOpPassManager pm);
/// prim -> loop: fusion into kernels and buffer assignment (dyn-prim-to-loop).
MLIR_CAPI_EXPORTED void dynBuildPrimToLoopPipeline(MlirOpPassManager pm);
/// loop -> LLVM dialect for the host (dyn-loop-to-llvm-cpu).
MLIR_CAPI_EXPORTED void dynBuildLoopToLLVMCpuPipeline(MlirOpPassManager pm);
/// loop -> GPU launches and PTX kernels (dyn-loop-to-ptx) for the default GPU
/// target description (an H100/H200; docs/gpu.md).
MLIR_CAPI_EXPORTED void dynBuildLoopToPTXPipeline(MlirOpPassManager pm);
/// The whole CPU pipeline, graph -> LLVM dialect (dyn-cpu).
MLIR_CAPI_EXPORTED void dynBuildCpuPipeline(MlirOpPassManager pm);

#ifdef __cplusplus
}
#endif

#endif /* DYN_C_PASSES_H */
