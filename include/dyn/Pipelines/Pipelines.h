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

#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace dyn {

/// The GPU a GPU pipeline compiles for (docs/gpu.md, "Target description"):
/// the PTX target and how many threads fill the device. The defaults describe
/// an H100/H200; the compiler reads the device's own (dyn-gpu{chip=sm_80
/// sm-count=108} for an A100). A new GPU is a new description, not a pass edit.
struct GpuTarget : public mlir::PassPipelineOptions<GpuTarget> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("PTX target: sm_XY for compute capability X.Y"),
                           llvm::cl::init("sm_90")};
  Option<int64_t> smCount{*this, "sm-count", llvm::cl::desc("Streaming multiprocessors"),
                          llvm::cl::init(132)};
  Option<int64_t> threadsPerSm{*this, "threads-per-sm",
                               llvm::cl::desc("Threads resident on one multiprocessor"),
                               llvm::cl::init(2048)};
};

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
/// loop -> GPU: kernels mapped to launches for the target, compiled to PTX
/// (with libdevice) or cubins for its chip; the host function keeps
/// gpu.launch_func ops.
void buildLoopToPTXPipeline(mlir::OpPassManager &pm, const GpuTarget &target);
/// The whole GPU pipeline, graph -> PTX: the GPU's prim and loop stages, then
/// loop -> PTX for the target.
void buildGpuPipeline(mlir::OpPassManager &pm, const GpuTarget &target);
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
