//===- Registration.cpp - dyn's dialects, passes and pipelines in C -------===//
#include "dyn-c/Dialects.h"
#include "dyn-c/Passes.h"

#include "dyn/Dialect/Graph/IR/GraphDialect.h"
#include "dyn/Dialect/Loop/IR/LoopDialect.h"
#include "dyn/Dialect/Prim/IR/PrimDialect.h"
#include "dyn/InitAll.h"
#include "dyn/Pipelines/Pipelines.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Graph, graph, dyn::graph::GraphDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Prim, prim, dyn::prim::PrimDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Loop, loop, dyn::loop::LoopDialect)

void dynRegisterAllDialects(MlirDialectRegistry registry) {
  dyn::registerAllDialects(*unwrap(registry));
}

void dynRegisterAllPasses() { dyn::registerAllPasses(); }

void dynBuildGraphToPrimPipeline(MlirOpPassManager pm) {
  dyn::buildGraphToPrimPipeline(*unwrap(pm));
}
void dynBuildPrimToLoopPipeline(MlirOpPassManager pm) {
  dyn::buildPrimToLoopPipeline(*unwrap(pm));
}
void dynBuildLoopToLLVMCpuPipeline(MlirOpPassManager pm) {
  dyn::buildLoopToLLVMCpuPipeline(*unwrap(pm));
}
void dynBuildLoopToPTXPipeline(MlirOpPassManager pm) {
  dyn::buildLoopToPTXPipeline(*unwrap(pm), dyn::GpuTarget()); // the default target (an H100/H200)
}
void dynBuildCpuPipeline(MlirOpPassManager pm) { dyn::buildCpuPipeline(*unwrap(pm)); }
