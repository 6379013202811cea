//===- DynPlugin.cpp - dyn as an MLIR dialect and pass plugin -------------===//
//
// Loaded into a stock MLIR tool (mlir-opt --load-dialect-plugin=DynPlugin.so
// --load-pass-plugin=DynPlugin.so), it registers dyn's dialects, passes and
// named pipelines through the one registration point. The plugin links the
// shared libMLIR/libLLVM the tool itself uses, so the tool's registries and
// TypeIDs are the ones dyn registers into.
//
//===----------------------------------------------------------------------===//
#include "dyn/InitAll.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Dyn", LLVM_VERSION_STRING, [](mlir::DialectRegistry *registry) {
            dyn::registerAllDialects(*registry);
            dyn::registerAllPasses(); // idempotent: a tool may load both entry points
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "DynPasses", LLVM_VERSION_STRING, dyn::registerAllPasses};
}
