//===- Passes.h - dyn pass declarations -------------------------*- C++ -*-===//
#ifndef DYN_CONVERSION_PASSES_H
#define DYN_CONVERSION_PASSES_H

#include "dyn/Dialect/Graph/IR/GraphDialect.h"
#include "dyn/Dialect/Loop/IR/LoopDialect.h"
#include "dyn/Dialect/Prim/IR/PrimDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace dyn {

#define GEN_PASS_DECL
#include "dyn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dyn/Conversion/Passes.h.inc"

} // namespace dyn

#endif // DYN_CONVERSION_PASSES_H

namespace mlir {
class RewritePatternSet;
}
namespace dyn {
/// graph -> prim patterns, one per op family (used by dyn-convert-graph-to-prim).
void populateGraphToPrimPatterns(mlir::RewritePatternSet &patterns);
} // namespace dyn
