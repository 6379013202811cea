//===- dyn-opt.cpp - dyn's pass driver ------------------------------------===//
//
// mlir-opt with dyn's dialects, passes and pipelines, registered through the
// one registration point shared with the compiler and Python.
//
//===----------------------------------------------------------------------===//
#include "dyn/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  dyn::registerAllDialects(registry);
  dyn::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dyn optimizer driver\n", registry));
}
