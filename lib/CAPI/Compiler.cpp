//===- Compiler.cpp - the compiler's C face -------------------------------===//
//
// The module is handed to dyn::compileGraph as text, printed with its
// locations: the compiler owns its context (its registry, no threading) and
// the caller's module stays untouched, while diagnostics still point into
// the caller's source.
//
//===----------------------------------------------------------------------===//
#include "dyn-c/Compiler.h"

#include "dyn/Compiler/Compiler.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/raw_ostream.h"

static dyn::CompiledFunction *unwrap(DynCompiledFunction function) {
  return static_cast<dyn::CompiledFunction *>(function.ptr);
}

DynCompiledFunction dynCompileGraph(MlirModule module, MlirStringRef funcName, int optLevel,
                                    MlirStringCallback errorCallback, void *userData) {
  auto fail = [&](const std::string &error) -> DynCompiledFunction {
    if (errorCallback)
      errorCallback(mlirStringRefCreate(error.data(), error.size()), userData);
    return {nullptr};
  };
  if (optLevel < 0 || optLevel > 3)
    return fail("optimization level " + std::to_string(optLevel) + " is not in 0-3");
  std::string text;
  llvm::raw_string_ostream os(text);
  unwrap(module).getOperation()->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  dyn::CompileOptions options;
  options.optLevel = optLevel;
  std::string error;
  std::unique_ptr<dyn::CompiledFunction> compiled =
      dyn::compileGraph(text, unwrap(funcName).str(), options, &error);
  if (!compiled)
    return fail(error);
  return {compiled.release()};
}

void dynCompiledFunctionRun(DynCompiledFunction function, void **buffers) {
  unwrap(function)->run(buffers);
}

double dynCompiledFunctionGetCompileSeconds(DynCompiledFunction function) {
  return unwrap(function)->compileSeconds();
}

void dynCompiledFunctionDestroy(DynCompiledFunction function) { delete unwrap(function); }
