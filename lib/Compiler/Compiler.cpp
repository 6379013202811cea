//===- Compiler.cpp - graph text -> JIT-compiled host function -----------===//
#include "dyn/Compiler/Compiler.h"

#include "dyn/InitAll.h"
#include "dyn/Pipelines/Pipelines.h"
#include "dyn/Runtime/Runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <dlfcn.h>
#include <mutex>

using namespace mlir;

extern "C" int omp_get_max_threads(void);

namespace dyn {

CompiledFunction::~CompiledFunction() = default;

namespace {

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

/// Collects every diagnostic, with its location, into one string.
struct DiagnosticCollector {
  std::string text;
  ScopedDiagnosticHandler handler;
  explicit DiagnosticCollector(MLIRContext &ctx)
      : handler(&ctx, [this](Diagnostic &diag) {
          llvm::raw_string_ostream os(text);
          os << diag.getLocation() << ": ";
          switch (diag.getSeverity()) {
          case DiagnosticSeverity::Error: os << "error: "; break;
          case DiagnosticSeverity::Warning: os << "warning: "; break;
          default: os << "note: "; break;
          }
          os << diag << "\n";
          for (Diagnostic &note : diag.getNotes())
            os << note.getLocation() << ": note: " << note << "\n";
          return success();
        }) {}
};

/// The libomp this library was loaded with (the runtime matmul links it), so
/// that JIT-compiled OpenMP loops use the same runtime wherever dyn is
/// installed; the build-time path is the fallback.
std::string libompPath() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&omp_get_max_threads), &info) && info.dli_fname)
    return info.dli_fname;
  return llvm::sys::fs::exists(DYN_LIBOMP_PATH) ? DYN_LIBOMP_PATH : "";
}

std::string print(ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module.print(os);
  return s;
}

class JitFunction final : public CompiledFunction {
public:
  std::unique_ptr<ExecutionEngine> engine;
  void (*entry)(void **) = nullptr;
  size_t numBuffers = 0;
  std::vector<StageIR> stageIR;
  double seconds = 0;

  void run(void **buffers) override {
    // The packed entry takes a pointer to each argument; each argument is a
    // bare data pointer.
    void *argPtrs[64];
    std::vector<void *> heapArgs;
    void **args = argPtrs;
    if (numBuffers > 64) {
      heapArgs.resize(numBuffers);
      args = heapArgs.data();
    }
    for (size_t i = 0; i < numBuffers; ++i)
      args[i] = &buffers[i];
    entry(args);
  }
  const std::vector<StageIR> &stages() const override { return stageIR; }
  double compileSeconds() const override { return seconds; }
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
    if (error)
      *error = what + (diags.text.empty() ? "" : ":\n" + diags.text);
    return nullptr;
  };
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(graphIR, ParserConfig(&ctx), "graph");
  if (!module)
    return fail("could not parse the graph");
  auto func = module->lookupSymbol<func::FuncOp>(funcName);
  if (!func)
    return fail("no function @" + funcName + " in the graph");
  size_t numBuffers = func.getNumArguments() + func.getNumResults();

  auto result = std::make_unique<JitFunction>();
  if (options.keepStageIR)
    result->stageIR.push_back({"graph", print(*module)});
  for (const PipelineStage &stage : cpuPipelineStages()) {
    PassManager pm(&ctx);
    stage.build(pm);
    if (failed(pm.run(*module)))
      return fail(("stage '" + stage.name + "' failed").str());
    if (options.keepStageIR)
      result->stageIR.push_back({stage.name.str(), print(*module)});
  }

  auto tmBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmBuilder)
    return fail("could not detect the host target: " + llvm::toString(tmBuilder.takeError()));
  tmBuilder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto tm = tmBuilder->createTargetMachine();
  if (!tm)
    return fail("could not create a target machine: " + llvm::toString(tm.takeError()));
  auto transformer = makeOptimizingTransformer(options.optLevel, 0, tm->get());

  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  SmallVector<StringRef> libs;
  std::string omp = libompPath();
  if (!omp.empty())
    libs.push_back(omp);
  engineOptions.sharedLibPaths = libs;
  engineOptions.enableGDBNotificationListener = false;
  engineOptions.enablePerfNotificationListener = false;
  auto engine = ExecutionEngine::create(*module, engineOptions, std::move(*tm));
  if (!engine)
    return fail("JIT compilation failed: " + llvm::toString(engine.takeError()));
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    map[interner("dyn_matmul_f32")] = {llvm::orc::ExecutorAddr::fromPtr(&dyn_matmul_f32),
                                       llvm::JITSymbolFlags::Exported};
    map[interner("dyn_matmul_f64")] = {llvm::orc::ExecutorAddr::fromPtr(&dyn_matmul_f64),
                                       llvm::JITSymbolFlags::Exported};
    return map;
  });
  auto entry = (*engine)->lookupPacked(funcName);
  if (!entry)
    return fail("JIT lookup failed: " + llvm::toString(entry.takeError()));
  result->engine = std::move(*engine);
  result->entry = *entry;
  result->numBuffers = numBuffers;
  result->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

bool lowerGraph(const std::string &graphIR, const std::string &pipeline, std::string *result,
                std::string *error) {
  MLIRContext ctx(registry(), MLIRContext::Threading::DISABLED);
  DiagnosticCollector diags(ctx);
  static std::once_flag passes;
  std::call_once(passes, [] { registerAllPasses(); });
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(graphIR, ParserConfig(&ctx), "graph");
  PassManager pm(&ctx);
  std::string pipelineError;
  llvm::raw_string_ostream errs(pipelineError);
  if (!module || failed(parsePassPipeline(pipeline, pm, errs)) || failed(pm.run(*module))) {
    if (error)
      *error = diags.text + pipelineError;
    return false;
  }
  *result = print(*module);
  return true;
}

} // namespace dyn
