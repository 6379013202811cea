//===- Compiler.cpp - graph text -> JIT-compiled host function -----------===//
//
// The stages every target runs (Stages.h) and the CPU: the host function
// JIT-compiled with LLVM. The GPU's launch plan is in GpuCompiler.cpp.
//
//===----------------------------------------------------------------------===//
#include "dyn/Compiler/Compiler.h"
#include "dyn/Compiler/LibraryCalls.h"
#include "HostJit.h"
#include "Stages.h"
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

using namespace mlir;

extern "C" int omp_get_max_threads(void);

#ifdef DYN_HAVE_COMPILER_RT_BUILTINS
// Float conversions LLVM lowers to libcalls that neither the process nor
// libLLVM provide (f64 -> bf16 and f64 -> f16 round once, from the double;
// via f32 would round twice). Linked from compiler-rt's builtins archive and
// handed to the JIT by address; only their addresses are taken here.
extern "C" void __truncdfbf2();
extern "C" void __truncdfhf2();
extern "C" void __truncsfhf2();
extern "C" void __truncsfbf2();
extern "C" void __extendhfsf2();
#endif

namespace dyn {

CompiledFunction::~CompiledFunction() = default;
CompiledGpuFunction::~CompiledGpuFunction() = default;

namespace detail {

const DialectRegistry &registry() {
  static DialectRegistry *r = [] {
    auto *reg = new DialectRegistry();
    registerAllDialects(*reg);
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return reg;
  }();
  return *r;
}

/// Named pipelines are looked up by text (the GPU stage, lowerGraph).
void ensurePassesRegistered() {
  static std::once_flag once;
  std::call_once(once, [] { registerAllPasses(); });
}

/// Collects every diagnostic, with its location, into one string.
/// How many threads optimize and compile a CPU graph's module:
/// DYN_JIT_THREADS, else the machine's hardware threads (at most 8).
unsigned jitThreads() {
  if (const char *v = std::getenv("DYN_JIT_THREADS"))
    if (int n = std::atoi(v); n > 0)
      return (unsigned)n;
  return std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
}

/// The libomp this library was loaded with (the runtime matmul links it), so
/// that JIT-compiled OpenMP loops use the same runtime wherever dyn is
/// installed; the build-time path is the fallback.
std::string libompPath() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&omp_get_max_threads), &info) && info.dli_fname)
    return info.dli_fname;
  return llvm::sys::fs::exists(DYN_LIBOMP_PATH) ? DYN_LIBOMP_PATH : "";
}

/// Whether the lowered module's OpenMP constructs are the ones the libgomp
/// shim implements (lib/Runtime/OpenMPShim.cpp): parallel regions with
/// statically scheduled loops, no reductions, no clauses.
bool shimmableOpenMP(ModuleOp module) {
  bool ok = true;
  module.walk([&](Operation *op) {
    if (!isa<omp::OpenMPDialect>(op->getDialect()))
      return WalkResult::advance();
    if (auto par = dyn_cast<omp::ParallelOp>(op))
      ok = par.getReductionVars().empty() && !par.getNumThreads() && !par.getIfExpr();
    else if (auto ws = dyn_cast<omp::WsloopOp>(op))
      ok = ws.getReductionVars().empty() && !ws.getScheduleKind() && !ws.getOrdered();
    else
      ok = isa<omp::LoopNestOp, omp::YieldOp, omp::TerminatorOp>(op);
    return ok ? WalkResult::advance() : WalkResult::interrupt();
  });
  return ok;
}

/// The graph text as a module; text the upstream parser would crash on is an
/// error diagnostic instead (dyn/Support/ParserGuard.h).
OwningOpRef<ModuleOp> parseGraph(const std::string &graphIR, MLIRContext &ctx) {
  if (std::optional<size_t> at = findIndexDenseArray(graphIR)) {
    StringRef before = StringRef(graphIR).take_front(*at);
    unsigned line = before.count('\n') + 1, col = *at - before.rfind('\n');
    emitError(FileLineColLoc::get(&ctx, "graph", line, col))
        << "dense arrays of `index` are not supported (MLIR's parser crashes on them)";
    return nullptr;
  }
  return parseSourceString<ModuleOp>(graphIR, ParserConfig(&ctx), "graph");
}

std::string print(ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module.print(os);
  return s;
}

/// Every library call the loop-level module makes must have an
/// implementation registered (dyn's own runtime matmul needs none on the
/// CPU); a located error names the first that has none.
LogicalResult checkLibraryCalls(ModuleOp module, bool gpu) {
  WalkResult result = module.walk([&](loop::LibraryCallOpInterface call) {
    if (auto matmul = dyn_cast<loop::MatmulOp>(call.getOperation());
        !gpu && matmul && loop::hasRuntimeMatmul(matmul))
      return WalkResult::advance();
    std::string name = call.getLibraryCallName().str();
    if (findLibraryCall(name))
      return WalkResult::advance();
    call->emitError(missingLibraryCallMessage(name));
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// compiler-rt's float conversions the JIT-compiled code may call (see the
/// declarations above); none when dyn was built without the builtins archive.
void addCompilerRtBuiltins(llvm::orc::SymbolMap &map, llvm::orc::MangleAndInterner &interner) {
#ifdef DYN_HAVE_COMPILER_RT_BUILTINS
  auto add = [&](const char *name, void (*fn)()) {
    map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn), llvm::JITSymbolFlags::Exported};
  };
  add("__truncdfbf2", &__truncdfbf2);
  add("__truncdfhf2", &__truncdfhf2);
  add("__truncsfhf2", &__truncsfhf2);
  add("__truncsfbf2", &__truncsfbf2);
  add("__extendhfsf2", &__extendhfsf2);
#else
  (void)map;
  (void)interner;
#endif
}

/// Runs the CPU (or GPU) pipeline's stages up to (not including) `stopBefore`,
/// recording the IR after each when asked; returns the failing stage's name.
std::optional<std::string> runStages(ModuleOp module, llvm::StringRef stopBefore, bool keep,
                                     std::vector<StageIR> &stages, BufferFacts &facts, bool gpu) {
  if (keep)
    stages.push_back({"graph", print(module)});
  for (const PipelineStage &stage : gpu ? gpuPipelineStages() : cpuPipelineStages()) {
    if (stage.name == stopBefore)
      break;
    PassManager pm(module.getContext());
    stage.build(pm);
    if (failed(pm.run(module)))
      return stage.name.str();
    if (keep)
      stages.push_back({stage.name.str(), print(module)});
    if (stage.name == "loop" && failed(checkLibraryCalls(module, gpu)))
      return std::string("library calls");
    for (auto f : module.getOps<func::FuncOp>()) {
      if (auto a = f->getAttrOfType<DenseI64ArrayAttr>("dyn.in_place"); a && stage.name == "loop")
        facts.inPlace.assign(a.asArrayRef().begin(), a.asArrayRef().end());
      if (auto a = f->getAttrOfType<DenseI64ArrayAttr>("dyn.channels_last_results"))
        facts.channelsLastResults.assign(a.asArrayRef().begin(), a.asArrayRef().end());
    }
  }
  return std::nullopt;
}

} // namespace detail

using namespace detail;

namespace {

class JitFunction final : public CompiledFunction {
public:
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*entry)(void **) = nullptr;
  size_t numBuffers = 0; // buffers, then the sizes of their dynamic dims
  std::vector<StageIR> stageIR;
  double seconds = 0;

  bool run(void **buffers, std::string *error) override {
    // The packed entry takes a pointer to each argument; each argument is a
    // bare data pointer, or a dynamic dim's size (an i64 in the pointer's slot).
    void *argPtrs[64];
    std::vector<void *> heapArgs;
    void **args = argPtrs;
    if (numBuffers > 64) {
      heapArgs.resize(numBuffers);
      args = heapArgs.data();
    }
    for (size_t i = 0; i < numBuffers; ++i)
      args[i] = &buffers[i];
    takeLibraryCallError(); // nothing left over from an earlier call on this thread
    entry(args);
    std::string failure = takeLibraryCallError();
    if (failure.empty())
      return true;
    if (error)
      *error = std::move(failure);
    return false;
  }
  const std::vector<StageIR> &stages() const override { return stageIR; }
  double compileSeconds() const override { return seconds; }
  const std::vector<int64_t> &inPlace() const override { return facts.inPlace; }
  const std::vector<int64_t> &channelsLastResults() const override { return facts.channelsLastResults; }
  const std::vector<int64_t> &bufferSizes() const override { return sizeArgs; }
  BufferFacts facts;
  std::vector<int64_t> sizeArgs;
};

} // namespace

std::unique_ptr<CompiledFunction> compileGraph(const std::string &graphIR,
                                               const std::string &funcName,
                                               const CompileOptions &options,
                                               std::string *error) {
  auto start = std::chrono::steady_clock::now();
  MLIRContext ctx(registry(), MLIRContext::Threading::DISABLED);
  DiagnosticCollector diags(ctx);
  auto fail = [&](const std::string &what) -> std::unique_ptr<CompiledFunction> {
    diags.report(what, error);
    return nullptr;
  };
  OwningOpRef<ModuleOp> module = parseGraph(graphIR, ctx);
  if (!module)
    return fail("could not parse the graph");
  auto func = module->lookupSymbol<func::FuncOp>(funcName);
  if (!func)
    return fail("no function @" + funcName + " in the graph");
  size_t numBuffers = func.getNumArguments() + func.getNumResults();
  // Without a registered `matmul` (no torch runtime: the C API, other
  // embedders) every f32/f64 GEMM runs on dyn's own runtime matmul.
  if (!findLibraryCall("matmul") && !(*module)->hasAttr("dyn.cpu_gemm"))
    (*module)->setAttr("dyn.cpu_gemm", StringAttr::get(&ctx, "runtime"));

  auto result = std::make_unique<JitFunction>();
  if (auto failedStage = runStages(*module, "", options.keepStageIR, result->stageIR, result->facts))
    return fail("stage '" + *failedStage + "' failed");
  // run() passes one bare data pointer per buffer. The bare-pointer calling
  // convention needs static strides; MLIR's canonical layout of a shape with
  // a zero-size dim before the last (6x0, 0x0) has dynamic ones, and then the
  // function takes memref descriptors instead: calling it would crash.
  // Buffers with dynamic dims add their sizes as trailing arguments
  // (dyn-bind-buffer-sizes), which run() takes after the buffers.
  auto lowered = dyn_cast_or_null<FunctionOpInterface>(module->lookupSymbol(funcName));
  if (lowered)
    if (auto sizes = lowered->getAttrOfType<DenseI64ArrayAttr>("dyn.buffer_sizes"))
      result->sizeArgs.assign(sizes.asArrayRef().begin(), sizes.asArrayRef().end());
  if (!lowered || lowered.getNumArguments() != numBuffers + result->sizeArgs.size() / 2)
    return fail("the lowered function does not take one pointer per buffer (a buffer with a "
                "zero-size dim?)");

  auto tmBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmBuilder)
    return fail("could not detect the host target: " + llvm::toString(tmBuilder.takeError()));
  tmBuilder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  // VCVTNEPS2BF16 (AVX512-BF16, AVX-NE-CONVERT) flushes subnormal floats to
  // zero; eager's f32 -> bf16 keeps them (bf16 subnormals), as the rounding
  // LLVM otherwise emits does.
  tmBuilder->getFeatures().AddFeature("avx512bf16", false);
  tmBuilder->getFeatures().AddFeature("avxneconvert", false);
  HostJitOptions jitOptions;
  jitOptions.optLevel = options.optLevel;
  jitOptions.threads = jitThreads();
  std::string omp = libompPath();
  if (!omp.empty())
    jitOptions.sharedLibs.push_back(omp);
  // DYN_JIT_PERF=1: the JIT reports its code to perf (jit-<pid>.dump for
  // `perf record -k 1` and `perf inject --jit`), so profiles name dyn's kernels.
  const char *perf = std::getenv("DYN_JIT_PERF");
  jitOptions.perfListener = perf && *perf && *perf != '0';
  // One thread pool with ATen's: a loaded libgomp (torch's) runs the kernels'
  // OpenMP loops, when the shim implements every construct they use.
  bool onGomp = gnuOpenMPPath() && shimmableOpenMP(*module);
  jitOptions.symbols = [onGomp](llvm::orc::MangleAndInterner &interner) {
    llvm::orc::SymbolMap map;
    addCompilerRtBuiltins(map, interner);
    if (onGomp)
      for (const auto &[name, address] : kmpcShimSymbols())
        map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address), llvm::JITSymbolFlags::Exported};
    auto add = [&](const char *name, auto *fn) {
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn), llvm::JITSymbolFlags::Exported};
    };
    add("dyn_matmul_f32", &dyn_matmul_f32);
    add("dyn_matmul_f64", &dyn_matmul_f64);
    add("dyn_matmul_nt_f32", &dyn_matmul_nt_f32);
    add("dyn_matmul_nt_f64", &dyn_matmul_nt_f64);
    add("_mlir_memref_to_llvm_alloc", &dyn_host_alloc);
    add("_mlir_memref_to_llvm_aligned_alloc", &dyn_host_aligned_alloc);
    add("_mlir_memref_to_llvm_free", &dyn_host_free);
    add("dyn_library_call", &dyn_library_call);
    return map;
  };
  auto jit = compileHostModule(*module, funcName, *tmBuilder, jitOptions);
  if (!jit)
    return fail("JIT compilation failed: " + llvm::toString(jit.takeError()));
  result->jit = std::move(jit->jit);
  result->entry = jit->entry;
  result->numBuffers = numBuffers + result->sizeArgs.size() / 2;
  result->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

bool lowerGraph(const std::string &graphIR, const std::string &pipeline, std::string *result,
                std::string *error) {
  MLIRContext ctx(registry(), MLIRContext::Threading::DISABLED);
  DiagnosticCollector diags(ctx);
  ensurePassesRegistered();
  OwningOpRef<ModuleOp> module = parseGraph(graphIR, ctx);
  // Anchored on the module; pipeline text names the passes to run on it.
  auto pm = PassManager::on<ModuleOp>(&ctx);
  std::string pipelineError;
  llvm::raw_string_ostream errs(pipelineError);
  // Accept `builtin.module(...)` as dyn-opt does; the module pm takes the contents.
  StringRef contents = StringRef(pipeline).trim();
  if (contents.consume_front("builtin.module(") && contents.consume_back(")"))
    contents = contents.trim();
  bool parsed = module && succeeded(parsePassPipeline(contents, pm, errs));
  if (!parsed || failed(pm.run(*module))) {
    if (error)
      *error = diags.text + pipelineError;
    return false;
  }
  *result = print(*module);
  return true;
}

HostCacheStats hostCacheCounters() { return hostCacheStats(); }

void emptyHostCache() { hostCacheEmpty(); }
void resetHostPeak() { hostCacheResetPeak(); }
void *hostAllocate(size_t bytes, bool counted) {
  return counted ? dyn_host_alloc(bytes) : dyn_host_alloc_untracked(bytes);
}
void hostFree(void *ptr) { dyn_host_free(ptr); }

} // namespace dyn
