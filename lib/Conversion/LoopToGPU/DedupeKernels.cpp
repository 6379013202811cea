//===- DedupeKernels.cpp - one outlined kernel per distinct body ----------===//
//
// dyn-dedupe-gpu-kernels: outlining turns the buffers a kernel touches into
// its arguments, so the kernels of a model's repeated layers become identical
// gpu.funcs under different names. Each duplicate is erased and its launches
// retargeted to the first copy: the NVPTX backend and the driver's PTX
// compiler then see each distinct kernel once.
//
//===----------------------------------------------------------------------===//
#include "dyn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

namespace dyn {
#define GEN_PASS_DEF_DEDUPEGPUKERNELSPASS
#include "dyn/Conversion/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;

namespace {

/// The function's text with its name left out: equal for identical kernels.
std::string bodyKey(gpu::GPUFuncOp fn) {
  StringAttr name = SymbolTable::getSymbolName(fn);
  SymbolTable::setSymbolName(fn, "kernel");
  std::string key;
  llvm::raw_string_ostream os(key);
  fn->print(os, OpPrintingFlags().useLocalScope());
  SymbolTable::setSymbolName(fn, name);
  return key;
}

struct DedupeGpuKernelsPass : dyn::impl::DedupeGpuKernelsPassBase<DedupeGpuKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto gm : module.getOps<gpu::GPUModuleOp>()) {
      llvm::StringMap<StringAttr> first; // body -> the first kernel's name
      DenseMap<StringAttr, StringAttr> canonical;
      SmallVector<gpu::GPUFuncOp> duplicates;
      for (auto fn : gm.getOps<gpu::GPUFuncOp>()) {
        auto [it, fresh] = first.try_emplace(bodyKey(fn), SymbolTable::getSymbolName(fn));
        if (!fresh) {
          canonical[SymbolTable::getSymbolName(fn)] = it->second;
          duplicates.push_back(fn);
        }
      }
      if (duplicates.empty())
        continue;
      module.walk([&](gpu::LaunchFuncOp launch) {
        if (launch.getKernelModuleName() != gm.getSymNameAttr())
          return;
        auto it = canonical.find(launch.getKernelName());
        if (it != canonical.end())
          launch.setKernelAttr(
              SymbolRefAttr::get(gm.getSymNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
      });
      for (gpu::GPUFuncOp fn : duplicates)
        fn.erase();
    }
  }
};

} // namespace
