//===- InitAll.cpp - the one registration point --------------------------===//
#include "dyn/InitAll.h"

#include "dyn/Conversion/Passes.h"
#include "dyn/Pipelines/Pipelines.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/AllExtensions.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

namespace dyn {

void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, prim::PrimDialect, loop::LoopDialect,
                  mlir::func::FuncDialect, mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect, mlir::cf::ControlFlowDialect,
                  mlir::affine::AffineDialect, mlir::vector::VectorDialect,
                  mlir::omp::OpenMPDialect, mlir::LLVM::LLVMDialect>();
  mlir::func::registerAllExtensions(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerOpenMPDialectTranslation(registry);
}

void registerAllPasses() {
  registerDynPasses();
  registerPipelines();
  mlir::registerTransformsPasses();
  mlir::registerConversionPasses();
  mlir::memref::registerMemRefPasses();
}

} // namespace dyn
