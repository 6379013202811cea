//===- GpuCompiler.cpp - graph text -> PTX and a launch plan --------------===//
//
// The GPU entry point: the common stages, then the GPU stage, then the launch
// plan (GpuLaunchPlan.cpp) of the resulting host function (GpuFunction.h).
//
//===----------------------------------------------------------------------===//
#include "dyn/Compiler/Compiler.h"
#include "dyn/Compiler/LibraryCalls.h"
#include "HostJit.h"
#include "dyn/Dialect/Loop/IR/LoopDialect.h"

#include "dyn/InitAll.h"
#include "dyn/Pipelines/Pipelines.h"
#include "dyn/Runtime/CudaRuntime.h"
#include "dyn/Runtime/Runtime.h"
#include "dyn/Support/ParserGuard.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <map>
#include <dlfcn.h>
#include <mutex>
#include <thread>

#include "GpuFunction.h"
#include "Stages.h"

using namespace mlir;
namespace dyn {

using namespace detail;

namespace {

/// The GPU stage: loop kernels -> gpu kernels -> NVVM -> PTX for the target,
/// leaving the host function at the level of gpu.launch_func.
const char *kGpuStage = "dyn-loop-to-ptx";

} // namespace

using gpuplan::GpuFunction;

std::unique_ptr<CompiledGpuFunction> compileGraphForGPU(const std::string &graphIR,
                                                        const std::string &funcName,
                                                        const CompileOptions &options,
                                                        std::string *error) {
  auto start = std::chrono::steady_clock::now();
  ensurePassesRegistered();
  MLIRContext ctx(registry(), MLIRContext::Threading::DISABLED);
  // Kernel modules are compiled side by side (dyn-gpu-modules-to-ptx), on
  // one pool of the host's threads shared by every compile.
  static llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
  ctx.setThreadPool(pool);
  DiagnosticCollector diags(ctx);
  auto fail = [&](const std::string &what) -> std::unique_ptr<CompiledGpuFunction> {
    diags.report(what, error);
    return nullptr;
  };
  OwningOpRef<ModuleOp> module = parseGraph(graphIR, ctx);
  if (!module)
    return fail("could not parse the graph");
  auto result = std::make_unique<GpuFunction>();
  // The GPU stage replaces the host lowering ("llvm").
  if (auto failedStage = runStages(*module, "llvm", options.keepStageIR, result->stageIR,
                                   result->facts, /*gpu=*/true))
    return fail("stage '" + *failedStage + "' failed");
  // Anchored on the module; pipeline text names the passes to run on it.
  auto pm = PassManager::on<ModuleOp>(&ctx);
  std::string pipelineError;
  llvm::raw_string_ostream errs(pipelineError);
  std::string stage = kGpuStage;
  if (!options.gpuTarget.empty())
    stage += "{" + options.gpuTarget + "}";
  if (failed(parsePassPipeline(stage, pm, errs)))
    return fail("GPU pipeline unavailable: " + pipelineError);
  if (failed(pm.run(*module)))
    return fail("stage 'gpu' failed");
  if (options.keepStageIR)
    result->stageIR.push_back({"gpu", print(*module)});
  auto func = module->lookupSymbol<func::FuncOp>(funcName);
  if (!func)
    return fail("no function @" + funcName + " in the graph");
  if (failed(gpuplan::buildLaunchPlan(*module, func, *result, options.scratchMinBytes)))
    return fail("unsupported GPU host code");
  result->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace dyn
