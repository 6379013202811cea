//===- dyn-opt.cpp - dyn's pass driver ------------------------------------===//
//
// mlir-opt with dyn's dialects, passes and pipelines, registered through the
// one registration point shared with the compiler and Python. The input is
// read here first so that text the upstream parser crashes on is reported as
// an error (dyn/Support/ParserGuard.h).
//
//===----------------------------------------------------------------------===//
#include "dyn/InitAll.h"
#include "dyn/Support/ParserGuard.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::DialectRegistry registry;
  dyn::registerAllDialects(registry);
  dyn::registerAllPasses();
  auto [inputFilename, outputFilename] =
      mlir::registerAndParseCLIOptions(argc, argv, "dyn optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  // Listing dialects or passes reads no input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
  }
  if (std::optional<size_t> at = dyn::findIndexDenseArray(input->getBuffer())) {
    llvm::SourceMgr sources;
    const char *where = input->getBufferStart() + *at;
    sources.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    sources.PrintMessage(llvm::SMLoc::getFromPointer(where), llvm::SourceMgr::DK_Error,
                         "dense arrays of `index` are not supported (MLIR's parser crashes on "
                         "them); use `array<i64: ...>`");
    return EXIT_FAILURE;
  }
  std::unique_ptr<llvm::ToolOutputFile> output = mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
