//===- HostJit.h - a CPU graph's LLVM module compiled on several threads --===//
//
// Private to lib/Compiler.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_COMPILER_HOSTJIT_H
#define DYN_COMPILER_HOSTJIT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dyn {

struct HostJitOptions {
  unsigned optLevel = 3;
  unsigned threads = 1;                 // parts compiled at once
  std::vector<std::string> sharedLibs;  // searched for undefined symbols (libomp)
  bool perfListener = false;            // DYN_JIT_PERF
  /// Symbols defined for the code (dyn's runtime, compiler-rt builtins, the OpenMP shim).
  std::function<llvm::orc::SymbolMap(llvm::orc::MangleAndInterner &)> symbols;
};

struct HostJit {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*entry)(void **) = nullptr; // funcName's packed form: one pointer per argument
};

/// Translates `module` (LLVM dialect) to LLVM IR, merges identical functions,
/// splits the functions into `options.threads` modules that are optimized and
/// compiled to objects on as many threads, and links them in one LLJIT.
llvm::Expected<HostJit> compileHostModule(mlir::ModuleOp module, llvm::StringRef funcName,
                                          const llvm::orc::JITTargetMachineBuilder &tmBuilder,
                                          const HostJitOptions &options);

} // namespace dyn

#endif // DYN_COMPILER_HOSTJIT_H
