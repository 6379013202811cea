//===- Pipelines.cpp - dyn's named pipelines -----------------------------===//
#include "dyn/Pipelines/Pipelines.h"

#include "dyn/Conversion/Passes.h"
#include "dyn/Dialect/Loop/Transforms/Passes.h"
#include "dyn/Dialect/Prim/Transforms/Passes.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"

#include <cstdlib>

using namespace mlir;

namespace dyn {

/// Defined in lib/Conversion/LoopToGPU/LoopToGPU.cpp: buffers with `?` dims
/// passed to kernels as bare pointers viewed with their runtime sizes, then
/// upstream's gpu-launch-sink-index-computations without memref.dim.
std::unique_ptr<mlir::Pass> createPrepareGpuOutliningPass();

static void addCleanup(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

static void buildGraphToPrim(OpPassManager &pm, bool gpu) {
  pm.addPass(createConvertGraphToPrimPass());
  // The GPU computes small depthwise convolutions in its own fused kernels.
  if (gpu)
    pm.addPass(createDecomposeDepthwiseConvolutionsPass());
  // oneDNN runs every convolution fastest channels-last; cuDNN large ones (the pass's description).
  PropagateLayoutsPassOptions layouts;
  if (gpu)
    layouts.denseMinElements = int64_t(1) << 24;
  pm.addPass(createPropagateLayoutsPass(layouts));
  // cuDNN's convolutions leave the bias to a separate add: fused downstream.
  if (gpu)
    pm.addPass(createSplitConvolutionBiasPass());
  addCleanup(pm);
}

void buildGraphToPrimPipeline(OpPassManager &pm) { buildGraphToPrim(pm, /*gpu=*/false); }
void buildGraphToPrimGpuPipeline(OpPassManager &pm) { buildGraphToPrim(pm, /*gpu=*/true); }

static void buildPrimToLoop(OpPassManager &pm, bool gpu) {
  FusePrimToLoopPassOptions fusion;
  // The CPU computes a reused exp once; the GPU, bound by memory bandwidth,
  // recomputes it rather than writing and reading a buffer.
  fusion.materializeReusedTranscendentals = !gpu;
  // A float32 linear layer's bias stays out of cuBLAS's epilogue on the GPU:
  // for addmm cuBLAS picks slower kernels than for mm on the transformers'
  // shapes (benchmarks/gemm_epilogue.py on an H200: GPT-2's fc2 129 -> 77 us,
  // ViT-B's 224 -> 205 us, never slower), and the kernel reading the product
  // adds the bias at no extra pass. On the CPU ATen's addmm takes it (MKL's
  // beta = 1): a linear layer whose product only a library call reads (the
  // attention's projections) saved a pass, 256x256 -> 1024 0.74 -> 0.99x
  // eager (docs/performance.md, sixteenth session). Half-precision addends
  // stay in the epilogue on both (one rounding, as eager's).
  fusion.f32GemmAddend = !gpu;
  pm.addPass(createFusePrimToLoopPass(fusion));
  // A kernel's result over a temporary it reads for the last time (both targets' memory).
  pm.addNestedPass<func::FuncOp>(createReuseBuffersPass());
  addCleanup(pm);
}

void buildPrimToLoopPipeline(OpPassManager &pm) { buildPrimToLoop(pm, /*gpu=*/false); }
void buildPrimToLoopGpuPipeline(OpPassManager &pm) { buildPrimToLoop(pm, /*gpu=*/true); }

void buildLoopToLLVMCpuPipeline(OpPassManager &pm) {
  // Temporaries held only while used: the host allocator reuses their memory.
  pm.addNestedPass<func::FuncOp>(createPlaceTemporariesPass());
  pm.addPass(createConvertLoopToSCFPass());
  // Buffers with dynamic dims: bare pointers plus their sizes as arguments.
  pm.addPass(createBindBufferSizesPass());
  pm.addPass(createApproximateMathPass());
  addCleanup(pm);
  pm.addPass(createConvertSCFToOpenMPPass());
  // Inlines the memref.alloca_scope that wraps each parallel body (kernels
  // allocate nothing on the stack), before SCF->CF splits it into blocks.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Generated functions take bare pointers: the runtime passes data pointers
  // of contiguous tensors, nothing else.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  // Temporaries go through _mlir_memref_to_llvm_alloc/free, which the JIT maps
  // to dyn's caching host allocator (lib/Runtime/HostAllocator.cpp).
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  addCleanup(pm);
}

/// The CUDA toolkit whose libdevice the kernels link (for math functions):
/// $CUDA_HOME or $CUDA_PATH, else /usr/local/cuda.
static std::string cudaToolkitPath() {
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(var); v && *v)
      return v;
  return "/usr/local/cuda";
}

void buildLoopToPTXPipeline(OpPassManager &pm, const GpuTarget &target) {
  ConvertLoopToGPUPassOptions launches;
  launches.smCount = target.smCount;
  launches.threadsPerSm = target.threadsPerSm;
  pm.addPass(createConvertLoopToGPUPass(launches));
  // Inner loops and memory accesses left in the launch bodies; library calls
  // stay for the launch plan.
  ConvertLoopToSCFPassOptions scf;
  scf.lowerLibraryCalls = false;
  pm.addPass(createConvertLoopToSCFPass(scf));
  addCleanup(pm);
  // Canonicalization hoists constants out of the launch bodies; sunk back, they
  // are immediates in the kernels (a division by a constant size becomes a
  // multiply and shift, not a 64-bit division by a parameter) and no vector
  // constant is left for the launch plan to pass.
  pm.addPass(createPrepareGpuOutliningPass());
  pm.addPass(createGpuKernelOutliningPass());
  // A model's repeated layers outline to identical kernels: compile each once.
  pm.addPass(createDedupeGpuKernelsPass());
  // A few modules, compiled side by side here and by the driver
  // (DYN_GPU_KERNEL_MODULES=n sets how many; 1 keeps one module).
  SplitGpuKernelModulesPassOptions split;
  if (const char *n = std::getenv("DYN_GPU_KERNEL_MODULES"); n && *n)
    split.parts = static_cast<unsigned>(std::strtoul(n, nullptr, 10));
  pm.addPass(createSplitGpuKernelModulesPass(split));
  GpuNVVMAttachTargetOptions nvvmTarget;
  nvvmTarget.chip = target.chip;
  nvvmTarget.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(nvvmTarget));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertVectorToLLVMPass()); // 16-byte loads and stores
  // Kernels take bare pointers; math ops become libdevice calls.
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // Math ops without a libdevice mapping there (math.trunc) become LLVM
  // intrinsics that the NVPTX backend selects (cvt.rzi).
  kernels.addPass(createConvertMathToLLVMPass());
  addCleanup(kernels);
  pm.addPass(createReconcileUnrealizedCastsPass());
  // Cubins from the toolkit's ptxas, compiled side by side, where it has one
  // (the driver would compile the PTX at the first call, one module at a
  // time); else PTX for the driver.
  GpuModulesToPtxPassOptions ptx;
  ptx.toolkitPath = cudaToolkitPath();
  ptx.cubin = llvm::sys::fs::can_execute(ptx.toolkitPath + "/bin/ptxas");
  pm.addPass(createGpuModulesToPtxPass(ptx));
}

void buildGpuPipeline(OpPassManager &pm, const GpuTarget &target) {
  for (const PipelineStage &stage : gpuPipelineStages())
    stage.build(pm);
  buildLoopToPTXPipeline(pm, target);
}

void buildCpuPipeline(OpPassManager &pm) {
  for (const PipelineStage &stage : cpuPipelineStages())
    stage.build(pm);
}

llvm::ArrayRef<PipelineStage> cpuPipelineStages() {
  static const PipelineStage stages[] = {
      {"prim", buildGraphToPrimPipeline},
      {"loop", buildPrimToLoopPipeline},
      {"llvm", buildLoopToLLVMCpuPipeline},
  };
  return stages;
}

llvm::ArrayRef<PipelineStage> gpuPipelineStages() {
  static const PipelineStage stages[] = {
      {"prim", buildGraphToPrimGpuPipeline},
      {"loop", buildPrimToLoopGpuPipeline},
  };
  return stages;
}

void registerPipelines() {
  PassPipelineRegistration<>("dyn-graph-to-prim", "graph -> prim: decompose and clean up",
                             buildGraphToPrimPipeline);
  PassPipelineRegistration<>("dyn-graph-to-prim-gpu",
                             "graph -> prim for the GPU (small depthwise convolutions fused, larger "
                             "ones channels-last; convolution biases as adds)",
                             buildGraphToPrimGpuPipeline);
  PassPipelineRegistration<>("dyn-prim-to-loop", "prim -> loop: fuse into kernels, assign buffers",
                             buildPrimToLoopPipeline);
  PassPipelineRegistration<>("dyn-prim-to-loop-gpu",
                             "prim -> loop for the GPU (reused transcendentals recomputed)",
                             buildPrimToLoopGpuPipeline);
  PassPipelineRegistration<>("dyn-loop-to-llvm-cpu",
                             "loop -> LLVM dialect: OpenMP-parallel, vectorizable host loops",
                             buildLoopToLLVMCpuPipeline);
  PassPipelineRegistration<>("dyn-cpu", "graph -> LLVM dialect for the host (all stages)",
                             buildCpuPipeline);
  PassPipelineRegistration<GpuTarget>(
      "dyn-loop-to-ptx",
      "loop -> gpu launches and PTX kernels for the target GPU (host stays at gpu.launch_func)",
      buildLoopToPTXPipeline);
  PassPipelineRegistration<GpuTarget>(
      "dyn-gpu", "graph -> PTX for the target GPU (all stages the compiler runs for CUDA)",
      buildGpuPipeline);
}

} // namespace dyn
