// Registers dyn's dialects and pipelines in a foreign tool and lowers a graph function.
#include "dyn/InitAll.h"
#include "dyn/Pipelines/Pipelines.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

int main() {
  mlir::DialectRegistry registry;
  dyn::registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  const char *ir = R"(
    func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
      %0 = graph.exp %x : tensor<8xf32> -> tensor<8xf32>
      return %0 : tensor<8xf32>
    })";
  auto module = mlir::parseSourceString<mlir::ModuleOp>(ir, &ctx);
  mlir::PassManager pm(&ctx);
  dyn::buildGraphToPrimPipeline(pm);
  dyn::buildPrimToLoopPipeline(pm);
  if (!module || mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}
