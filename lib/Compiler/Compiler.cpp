//===- Compiler.cpp - graph text -> JIT-compiled host function -----------===//
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

/// Named pipelines are looked up by text (the GPU stage, lowerGraph).
void ensurePassesRegistered() {
  static std::once_flag once;
  std::call_once(once, [] { registerAllPasses(); });
}

/// Collects every diagnostic, with its location, into one string.
struct DiagnosticCollector {
  std::string text;
  /// `what`, followed by the collected diagnostics, into `*error` (if given).
  void report(const std::string &what, std::string *error) const {
    if (error)
      *error = what + (text.empty() ? "" : ":\n" + text);
  }
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
                                     std::vector<StageIR> &stages, std::vector<int64_t> &inPlace,
                                     bool gpu = false) {
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
    if (stage.name == "loop")
      for (auto f : module.getOps<func::FuncOp>())
        if (auto a = f->getAttrOfType<DenseI64ArrayAttr>("dyn.in_place"))
          inPlace.assign(a.asArrayRef().begin(), a.asArrayRef().end());
  }
  return std::nullopt;
}

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
  const std::vector<int64_t> &inPlace() const override { return inPlaceOutputs; }
  const std::vector<int64_t> &bufferSizes() const override { return sizeArgs; }
  std::vector<int64_t> inPlaceOutputs;
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
  if (auto failedStage = runStages(*module, "", options.keepStageIR, result->stageIR, result->inPlaceOutputs))
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

//===----------------------------------------------------------------------===//
// GPU: the host function after the GPU stage is a straight list of
// allocations and gpu.launch_func ops with constant geometry. It is read into
// a launch plan here, so a call needs no host JIT: just driver launches.
//===----------------------------------------------------------------------===//

namespace {

/// The GPU stage: loop kernels -> gpu kernels -> NVVM -> PTX for the target,
/// leaving the host function at the level of gpu.launch_func.
const char *kGpuStage = "dyn-loop-to-ptx";

struct ArgRef {
  enum Kind { Buffer, Temp, Scalar } kind;
  int64_t value;          // buffer index, temp slot, or the scalar itself
  int64_t byteOffset = 0; // a view's start in its buffer (library-call operands)
};

/// A library call between launches (loop.matmul, loop.convolution, ...).
struct LibraryStep {
  std::string name;
  std::vector<ArgRef> buffers; // inputs, then the outputs
  int32_t numInputs = 0;
  std::vector<int32_t> dtypes;
  std::vector<std::vector<int64_t>> sizes;
  std::vector<std::vector<int64_t>> strides; // in elements
  std::vector<int64_t> params;
};

/// One step of the plan: a kernel launch, or a library call.
struct Launch {
  cuda::LaunchGeometry geometry;
  std::string module; // the gpu.binary (one PTX module) holding the kernel
  std::string kernel;
  std::vector<ArgRef> args;
  cuda::Kernel loaded;
  std::optional<LibraryStep> library;
};

struct TempBuffer {
  uint64_t offset; // into the workspace, 256-byte aligned
  uint64_t bytes;  // rounded up to 256
  bool constant;   // a dense constant's slot: uploaded before the launches, never shared
};

/// A dense constant (a read-only global of the host function): its bytes are
/// copied into its workspace slot before the launches of each call.
struct ConstantUpload {
  uint64_t offset;
  std::vector<char> bytes;
};

class GpuFunction final : public CompiledGpuFunction {
public:
  std::string ptxText;                       // every module, for display
  std::map<std::string, std::string> modules; // gpu.binary name -> its cubin or PTX
  std::map<std::string, std::string> ptxOf;   // a cubin module's PTX, should the driver refuse the cubin
  std::vector<Launch> launches;
  std::vector<TempBuffer> temps;
  std::vector<ConstantUpload> uploads;
  std::vector<StageIR> stageIR;
  std::vector<int64_t> inPlaceOutputs;
  double seconds = 0;
  bool modulesLoaded = false;

  uint64_t workspace = 0;

  uint64_t workspaceBytes() const override { return workspace; }

  bool uploadConstants(void *workspacePtr, void *stream, std::string *error) override {
    if (!checkWorkspace(workspacePtr, error))
      return false;
    for (const ConstantUpload &u : uploads)
      if (!cuda::copyToDevice(static_cast<char *>(workspacePtr) + u.offset, u.bytes.data(), u.bytes.size(),
                              stream, error))
        return false;
    return true;
  }

  bool launch(void **buffers, void *workspacePtr, void *stream, std::string *error) override {
    if (!checkWorkspace(workspacePtr, error))
      return false;
    std::vector<uint64_t> tempPtrs(temps.size(), 0);
    for (size_t i = 0; i < temps.size(); ++i)
      tempPtrs[i] = reinterpret_cast<uint64_t>(workspacePtr) + temps[i].offset;
    if (!modulesLoaded) { // the first call loads every kernel module
      std::vector<const std::string *> codes;
      for (const auto &[name, code] : modules)
        codes.push_back(&code);
      if (!cuda::loadModules(codes, error)) {
        // A driver older than the toolkit's ptxas refuses its cubins: it
        // compiles the PTX instead.
        if (ptxOf.empty())
          return false;
        for (auto &[name, ptx] : ptxOf)
          modules[name] = std::move(ptx);
        ptxOf.clear();
        codes.clear();
        for (const auto &[name, code] : modules)
          codes.push_back(&code);
        if (!cuda::loadModules(codes, error))
          return false;
      }
      modulesLoaded = true;
    }
    bool ok = true;
    auto address = [&](const ArgRef &ref) {
      return ref.kind == ArgRef::Buffer ? reinterpret_cast<uint64_t>(buffers[ref.value]) + ref.byteOffset
             : ref.kind == ArgRef::Temp ? tempPtrs[ref.value] + ref.byteOffset
                                        : static_cast<uint64_t>(ref.value);
    };
    for (Launch &l : launches) {
      if (!ok)
        break;
      if (l.library) {
        ok = runLibraryStep(*l.library, address, stream, error);
        continue;
      }
      if (!l.loaded.function && !cuda::getKernel(modules[l.module], l.kernel, &l.loaded, error)) {
        ok = false;
        break;
      }
      std::vector<uint64_t> values(l.args.size());
      std::vector<void *> params(l.args.size());
      for (size_t a = 0; a < l.args.size(); ++a) {
        const ArgRef &ref = l.args[a];
        values[a] = address(ref);
        params[a] = &values[a];
      }
      ok = cuda::launch(l.loaded, l.geometry, stream, params.data(), error);
    }
    return ok;
  }
  bool checkWorkspace(void *workspacePtr, std::string *error) const {
    if (workspace && !workspacePtr) {
      if (error)
        *error = "this function needs a device workspace of " + std::to_string(workspace) + " bytes";
      return false;
    }
    return true;
  }

  /// The library call on the plan's stream (it runs between the launches
  /// before and after it, in order).
  template <typename Address>
  static bool runLibraryStep(const LibraryStep &step, Address address, void *stream,
                             std::string *error) {
    std::vector<DynBuffer> bufs(step.buffers.size());
    for (size_t i = 0; i < bufs.size(); ++i) {
      bufs[i].data = reinterpret_cast<void *>(address(step.buffers[i]));
      bufs[i].dtype = step.dtypes[i];
      bufs[i].rank = (int32_t)step.sizes[i].size();
      bufs[i].sizes = step.sizes[i].data();
      bufs[i].strides = step.strides[i].data();
    }
    DynLibraryCall call{};
    call.name = step.name.c_str();
    call.device = DYN_DEVICE_CUDA;
    call.stream = stream;
    call.num_inputs = step.numInputs;
    call.inputs = bufs.data();
    call.num_outputs = (int32_t)bufs.size() - step.numInputs;
    call.outputs = bufs.data() + step.numInputs;
    call.num_params = (int32_t)step.params.size();
    call.params = step.params.data();
    return callLibrary(call, error);
  }
  const std::vector<StageIR> &stages() const override { return stageIR; }
  double compileSeconds() const override { return seconds; }
  const std::vector<int64_t> &inPlace() const override { return inPlaceOutputs; }
  const std::string &ptx() const override { return ptxText; }
  size_t numLaunches() const override { return launches.size(); }
};

std::optional<int64_t> constantInt(Value v) {
  if (!v)
    return std::nullopt;
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return i.getInt();
  return std::nullopt;
}

/// A scalar kernel argument as the bytes the driver copies (little-endian:
/// a 4-byte parameter is read from the low half).
std::optional<int64_t> constantBits(Value v) {
  auto c = v.getDefiningOp<arith::ConstantOp>();
  if (!c)
    return std::nullopt;
  if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
    return i.getValue().getZExtValue();
  if (auto f = dyn_cast<FloatAttr>(c.getValue()))
    return (int64_t)f.getValue().bitcastToAPInt().getZExtValue();
  return std::nullopt;
}

/// The elements of a dense constant in memory order, little-endian, each in
/// the bytes of its type (i1 in one byte, as LLVM stores it); false for other
/// element types that are no whole number of bytes.
bool denseBytes(DenseElementsAttr value, std::vector<char> &bytes) {
  Type et = value.getElementType();
  if (!et.isIntOrFloat() || (et.getIntOrFloatBitWidth() % 8 && !et.isInteger(1)))
    return false;
  unsigned width = (et.getIntOrFloatBitWidth() + 7) / 8;
  auto append = [&](const APInt &v) {
    APInt whole = v.zext(8 * width);
    for (unsigned i = 0; i < width; ++i)
      bytes.push_back((char)whole.extractBitsAsZExtValue(8, 8 * i));
  };
  bytes.reserve(value.getNumElements() * width);
  if (isa<FloatType>(et))
    for (const APFloat &v : value.getValues<APFloat>())
      append(v.bitcastToAPInt());
  else
    for (const APInt &v : value.getValues<APInt>())
      append(v);
  return true;
}

/// Places the temporaries in the workspace by liveness: a temporary occupies
/// its bytes from the first step that reads or writes it to the last, and
/// temporaries whose lifetimes do not overlap share memory (the launches run
/// in order on one stream, library calls too). Constants keep slots of their
/// own for the whole call (uploaded before the launches, or once before a CUDA
/// graph's capture). First fit, in order of first use.
void placeTemporaries(GpuFunction &fn) {
  size_t n = fn.temps.size(), steps = fn.launches.size();
  std::vector<int64_t> first(n, (int64_t)steps), last(n, -1);
  auto use = [&](const ArgRef &ref, int64_t step) {
    if (ref.kind != ArgRef::Temp)
      return;
    first[ref.value] = std::min(first[ref.value], step);
    last[ref.value] = std::max(last[ref.value], step);
  };
  for (size_t k = 0; k < steps; ++k) {
    const Launch &l = fn.launches[k];
    for (const ArgRef &ref : l.args)
      use(ref, (int64_t)k);
    if (l.library)
      for (const ArgRef &ref : l.library->buffers)
        use(ref, (int64_t)k);
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) {
    order[i] = i;
    if (fn.temps[i].constant || last[i] < first[i]) { // constants and unused slots: the whole call
      first[i] = -1;
      last[i] = (int64_t)steps;
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
  std::vector<size_t> placed;
  fn.workspace = 0;
  for (size_t i : order) {
    // the live intervals of the placed temporaries that overlap i's lifetime, by offset
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t j : placed)
      if (first[j] <= last[i] && first[i] <= last[j])
        busy.push_back({fn.temps[j].offset, fn.temps[j].offset + fn.temps[j].bytes});
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (auto [lo, hi] : busy) {
      if (offset + fn.temps[i].bytes <= lo)
        break;
      offset = std::max(offset, hi);
    }
    fn.temps[i].offset = offset;
    fn.workspace = std::max(fn.workspace, offset + fn.temps[i].bytes);
    placed.push_back(i);
  }
  for (ConstantUpload &u : fn.uploads)
    u.offset = fn.temps[u.offset].offset;
}

/// Reads the host function into `fn`; fails with a diagnostic on anything
/// that is not an allocation, a constant or a launch with constant geometry.
LogicalResult buildLaunchPlan(ModuleOp module, func::FuncOp func, GpuFunction &fn) {
  DenseMap<Value, ArgRef> refs;
  for (auto [i, arg] : llvm::enumerate(func.getArguments()))
    refs[arg] = {ArgRef::Buffer, (int64_t)i};
  for (Operation &op : func.getBody().front()) {
    if (isa<arith::ConstantOp, memref::DeallocOp, func::ReturnOp>(op))
      continue;
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      MemRefType t = alloc.getType();
      if (!t.hasStaticShape())
        return alloc.emitOpError("needs a static shape on the GPU path");
      uint64_t bytes = t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8);
      refs[alloc] = {ArgRef::Temp, (int64_t)fn.temps.size()};
      fn.temps.push_back({0, (std::max<uint64_t>(bytes, 1) + 255) / 256 * 256, false});
      continue;
    }
    if (auto get = dyn_cast<memref::GetGlobalOp>(op)) {
      // A dense constant: it gets a workspace slot, filled before each call's launches.
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(get, get.getNameAttr());
      auto value = global && global.getConstant()
                       ? dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr())
                       : DenseElementsAttr();
      ConstantUpload upload{(uint64_t)fn.temps.size(), {}}; // its temp until the plan places it
      if (!value || !get.getType().hasStaticShape() || !denseBytes(value, upload.bytes))
        return get.emitOpError("needs a constant global of integers or floats on the GPU path");
      refs[get] = {ArgRef::Temp, (int64_t)fn.temps.size()};
      fn.temps.push_back({0, (std::max<uint64_t>(upload.bytes.size(), 1) + 255) / 256 * 256, true});
      fn.uploads.push_back(std::move(upload));
      continue;
    }
    if (auto view = dyn_cast<memref::ReinterpretCastOp>(op)) {
      // A library call's operand read (or written) in place in another buffer.
      auto it = refs.find(view.getSource());
      auto [strides, offset] = view.getType().getStridesAndOffset();
      if (it == refs.end() || it->second.kind == ArgRef::Scalar || ShapedType::isDynamic(offset))
        return view.emitOpError("needs a static view of a buffer on the GPU path");
      ArgRef ref = it->second;
      ref.byteOffset += offset * ((view.getType().getElementTypeBitWidth() + 7) / 8);
      refs[view] = ref;
      continue;
    }
    if (auto call = dyn_cast<loop::LibraryCallOpInterface>(op)) {
      LibraryStep step;
      step.name = call.getLibraryCallName().str();
      SmallVector<Value> operands = call.getLibraryCallInputs();
      step.numInputs = (int32_t)operands.size();
      llvm::append_range(operands, call.getLibraryCallOutputs());
      SmallVector<int32_t> dtypes = loop::libraryCallDTypes(call);
      step.dtypes.assign(dtypes.begin(), dtypes.end());
      for (Value v : operands) {
        auto it = refs.find(v);
        if (it == refs.end())
          return op.emitOpError("has a buffer the launch plan cannot provide");
        auto type = cast<MemRefType>(v.getType());
        step.buffers.push_back(it->second);
        step.sizes.emplace_back(type.getShape().begin(), type.getShape().end());
        auto [strides, offset] = type.getStridesAndOffset();
        step.strides.emplace_back(strides.begin(), strides.end());
      }
      SmallVector<int64_t> params = call.getLibraryCallParams();
      step.params.assign(params.begin(), params.end());
      Launch l;
      l.library = std::move(step);
      fn.launches.push_back(std::move(l));
      continue;
    }
    auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
    if (!launch)
      return op.emitOpError("is not supported in a GPU host function");
    Launch l;
    l.module = launch.getKernelModuleName().str();
    l.kernel = launch.getKernelName().str();
    Value dims[6] = {launch.getGridSizeX(),  launch.getGridSizeY(),  launch.getGridSizeZ(),
                     launch.getBlockSizeX(), launch.getBlockSizeY(), launch.getBlockSizeZ()};
    for (int d = 0; d < 6; ++d) {
      auto v = constantInt(dims[d]);
      if (!v)
        return launch.emitOpError("needs constant launch geometry");
      (d < 3 ? l.geometry.grid[d] : l.geometry.block[d - 3]) = (uint32_t)*v;
    }
    if (Value smem = launch.getDynamicSharedMemorySize()) {
      auto v = constantInt(smem);
      if (!v)
        return launch.emitOpError("needs a constant shared memory size");
      l.geometry.sharedBytes = (uint32_t)*v;
    }
    for (Value operand : launch.getKernelOperands()) {
      if (auto it = refs.find(operand); it != refs.end()) {
        l.args.push_back(it->second);
      } else if (auto v = constantBits(operand)) {
        l.args.push_back({ArgRef::Scalar, *v});
      } else {
        return launch.emitOpError("has a kernel operand the launch plan cannot provide");
      }
    }
    fn.launches.push_back(std::move(l));
  }
  // Each kernel module's code for the driver: a cubin, or PTX text (read up
  // to the NUL that std::string::c_str() provides).
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute a : binary.getObjects())
      if (auto object = dyn_cast<gpu::ObjectAttr>(a)) {
        std::string code = object.getObject().getValue().str();
        if (object.getFormat() == gpu::CompilationTarget::Binary) { // a cubin, its PTX beside it
          if (auto ptx = binary->getAttrOfType<StringAttr>("dyn.ptx")) {
            fn.ptxText += ptx.getValue().str();
            fn.ptxOf[binary.getSymName().str()] = ptx.getValue().str();
          }
        } else {
          while (!code.empty() && code.back() == '\0')
            code.pop_back();
          fn.ptxText += code;
        }
        fn.modules[binary.getSymName().str()] = std::move(code);
      }
  for (const Launch &l : fn.launches)
    if (!l.library && fn.modules[l.module].empty())
      return func.emitOpError() << "GPU stage produced no PTX for module " << l.module;
  placeTemporaries(fn);
  return success();
}

} // namespace

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
                                   result->inPlaceOutputs, /*gpu=*/true))
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
  if (failed(buildLaunchPlan(*module, func, *result)))
    return fail("unsupported GPU host code");
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

} // namespace dyn
