//===- Pipelines.h - dyn's named pipelines ---------------------*- C++ -*-===//
//
// The compile pipeline reads as a short list of named stages:
//
//   graph --decompose--> prim --fuse--> loop --lower-cpu--> llvm
//
// Each stage is a registered pipeline (dyn-opt --<name>) with its own lit
// test; the compiler library runs the same stages and records the IR after
// each one.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_PIPELINES_PIPELINES_H
#define DYN_PIPELINES_PIPELINES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace dyn {

/// graph -> prim: decomposition, then clean-up.
void buildGraphToPrimPipeline(mlir::OpPassManager &pm);
/// The same for the GPU, where only depthwise convolutions run channels-last.
void buildGraphToPrimGpuPipeline(mlir::OpPassManager &pm);
/// prim -> loop: fusion into kernels and buffer assignment, then clean-up.
void buildPrimToLoopPipeline(mlir::OpPassManager &pm);
/// The same for the GPU, where a reused transcendental is recomputed.
void buildPrimToLoopGpuPipeline(mlir::OpPassManager &pm);
/// loop -> LLVM dialect for the host: OpenMP-parallel, vectorizable loops.
void buildLoopToLLVMCpuPipeline(mlir::OpPassManager &pm);
/// loop -> GPU: kernels mapped to launches, compiled to PTX for sm_90 (with
/// libdevice); the host function keeps gpu.launch_func ops.
void buildLoopToPTXPipeline(mlir::OpPassManager &pm);
/// The whole CPU pipeline, graph -> LLVM dialect.
void buildCpuPipeline(mlir::OpPassManager &pm);

struct PipelineStage {
  llvm::StringLiteral name; // the IR this stage produces
  void (*build)(mlir::OpPassManager &);
};
/// The CPU pipeline's stages in order: "prim", "loop", "llvm".
llvm::ArrayRef<PipelineStage> cpuPipelineStages();
/// The GPU pipeline's stages before the GPU one (loop -> PTX): "prim", "loop".
llvm::ArrayRef<PipelineStage> gpuPipelineStages();

void registerPipelines();

} // namespace dyn

#endif // DYN_PIPELINES_PIPELINES_H
