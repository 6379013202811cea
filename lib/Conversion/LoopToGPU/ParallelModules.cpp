//===- ParallelModules.cpp - kernel modules compiled side by side ---------===//
//
// dyn-split-gpu-kernel-modules deals a kernel module's functions into a few
// modules of about equal size; dyn-gpu-modules-to-ptx then compiles those
// modules on the context's threads (the NVPTX backend and ptxas are each
// single-threaded per module), to cubins where the toolkit has ptxas, so the
// CUDA driver has nothing to compile at the first call. Splitting into fewer
// modules than kernels keeps the per-module work (linking libdevice,
// optimizing it) from growing with the number of kernels.
//
//===----------------------------------------------------------------------===//
#include "dyn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Threading.h"
#include "llvm/Support/Threading.h"

namespace dyn {
#define GEN_PASS_DEF_SPLITGPUKERNELMODULESPASS
#define GEN_PASS_DEF_GPUMODULESTOPTXPASS
#include "dyn/Conversion/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;

namespace {

/// Operations in a kernel: what its compile time grows with.
int64_t size(gpu::GPUFuncOp fn) {
  int64_t n = 0;
  fn.walk([&](Operation *) { ++n; });
  return n;
}

/// Each module links and optimizes libdevice: worth it for a few kernels.
constexpr size_t kMinKernelsPerModule = 8;

struct SplitGpuKernelModulesPass
    : dyn::impl::SplitGpuKernelModulesPassBase<SplitGpuKernelModulesPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    unsigned threads = llvm::hardware_concurrency().compute_thread_count();
    SmallVector<gpu::GPUModuleOp> originals(module.getOps<gpu::GPUModuleOp>());
    SymbolTable symbols(module);
    for (gpu::GPUModuleOp gm : originals) {
      SmallVector<gpu::GPUFuncOp> fns(gm.getOps<gpu::GPUFuncOp>());
      unsigned n = parts ? std::min<unsigned>(parts, fns.size())
                         : std::min<unsigned>(threads, fns.size() / kMinKernelsPerModule);
      if (n < 2)
        continue;
      // Largest kernels first, each to the part with the least work so far.
      DenseMap<Operation *, int64_t> sizes;
      for (gpu::GPUFuncOp fn : fns)
        sizes[fn] = size(fn);
      llvm::stable_sort(fns, [&](gpu::GPUFuncOp a, gpu::GPUFuncOp b) { return sizes[a] > sizes[b]; });
      SmallVector<gpu::GPUModuleOp> part(n);
      SmallVector<int64_t> load(n, 0);
      OpBuilder b(gm);
      b.setInsertionPointAfter(gm);
      DenseMap<StringAttr, StringAttr> moduleOf; // kernel name -> its new module's name
      for (gpu::GPUFuncOp fn : fns) {
        unsigned k = std::min_element(load.begin(), load.end()) - load.begin();
        if (!part[k]) {
          // The clone keeps the module's attributes (its target) and its
          // other contents (globals the kernels may share); kernels are moved in.
          part[k] = cast<gpu::GPUModuleOp>(b.clone(*gm));
          for (auto f : llvm::make_early_inc_range(part[k].getOps<gpu::GPUFuncOp>()))
            f.erase();
          symbols.insert(part[k]); // a unique name: <module>_<n>
        }
        load[k] += sizes[fn];
        Block *body = part[k].getBody();
        if (!body->empty() && body->back().hasTrait<mlir::OpTrait::IsTerminator>())
          fn->moveBefore(&body->back());
        else
          fn->moveBefore(body, body->end());
        moduleOf[SymbolTable::getSymbolName(fn)] = part[k].getSymNameAttr();
      }
      module.walk([&](gpu::LaunchFuncOp launch) {
        if (launch.getKernelModuleName() != gm.getSymNameAttr())
          return;
        auto it = moduleOf.find(launch.getKernelName());
        if (it != moduleOf.end())
          launch.setKernelAttr(SymbolRefAttr::get(it->second, {FlatSymbolRefAttr::get(launch.getKernelName())}));
      });
      symbols.erase(gm);
    }
  }
};

struct GpuModulesToPtxPass : dyn::impl::GpuModulesToPtxPassBase<GpuModulesToPtxPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp gm : modules)
      if (!gm.getTargetsAttr() || gm.getTargetsAttr().empty())
        return signalPassFailure(), void(gm.emitError("has no target"));
    auto format = cubin ? gpu::CompilationTarget::Binary : gpu::CompilationTarget::Assembly;
    // One object per (module, target), compiled on the context's threads;
    // with cubins, the PTX ptxas read is kept for display.
    SmallVector<SmallVector<SmallVector<char, 0>>> objects(modules.size());
    SmallVector<std::string> ptx(modules.size());
    LogicalResult compiled = failableParallelForEach(
        &getContext(), llvm::seq<size_t>(0, modules.size()), [&](size_t i) -> LogicalResult {
          gpu::GPUModuleOp gm = modules[i];
          // TargetOptions keeps a function_ref: the callback must outlive it (a lambda
          // temporary in the constructor call would be gone before serialization calls it)
          auto keepPtx = [&](StringRef isa) { ptx[i] = isa.str(); };
          gpu::TargetOptions options(toolkitPath, {}, {}, {}, format, {}, {}, {}, {}, keepPtx);
          for (Attribute attr : gm.getTargetsAttr()) {
            auto target = dyn_cast<gpu::TargetAttrInterface>(attr);
            if (!target)
              return gm.emitError("has a target that does not serialize: ") << attr;
            std::optional<SmallVector<char, 0>> object = target.serializeToObject(gm, options);
            if (!object)
              return gm.emitError("could not be compiled for its target");
            objects[i].push_back(std::move(*object));
          }
          return success();
        });
    if (failed(compiled))
      return signalPassFailure();
    gpu::TargetOptions options(toolkitPath, {}, {}, {}, format);
    for (auto [i, gm] : llvm::enumerate(modules)) {
      SmallVector<Attribute> objs;
      for (auto [t, attr] : llvm::enumerate(gm.getTargetsAttr()))
        objs.push_back(cast<gpu::TargetAttrInterface>(attr).createObject(gm, objects[i][t], options));
      OpBuilder b(gm);
      auto binary = gpu::BinaryOp::create(b, gm.getLoc(), gm.getName(), gm.getOffloadingHandlerAttr(), objs);
      if (cubin)
        binary->setAttr("dyn.ptx", b.getStringAttr(ptx[i]));
      gm->erase();
    }
  }
};

} // namespace
