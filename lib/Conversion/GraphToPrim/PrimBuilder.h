//===- PrimBuilder.h - shared helpers of the graph->prim patterns -*- C++ -*-===//
//
// Private to lib/Conversion/GraphToPrim: the prim-building helpers every op
// family uses, and one populate function per family (the files next to this
// one), as torch-mlir's TorchToLinalg/PopulatePatterns.h.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_LIB_CONVERSION_GRAPHTOPRIM_PRIMBUILDER_H
#define DYN_LIB_CONVERSION_GRAPHTOPRIM_PRIMBUILDER_H

#include "dyn/Conversion/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace dyn::graph_to_prim {

inline mlir::RankedTensorType tensorType(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

/// Helpers that build prim ops; each returns its input unchanged when there
/// is nothing to do, so patterns can apply them unconditionally.
struct PrimBuilder {
  mlir::OpBuilder &b;
  mlir::Location loc;

  mlir::Value convert(mlir::Value v, mlir::Type elementType);
  /// Right-aligned (numpy) broadcast to `shape`.
  mlir::Value broadcast(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  /// Broadcast after dropping dims: operand dim i is result dim keptDims[i].
  mlir::Value broadcastKept(mlir::Value v, mlir::RankedTensorType to,
                            llvm::ArrayRef<int64_t> keptDims);
  mlir::Value promote(mlir::Value v, mlir::RankedTensorType to);
  mlir::Value splat(mlir::RankedTensorType like, double value);
};

/// PyTorch's promotion between two tensor element types (category, then width).
mlir::Type promoteTypes(mlir::Type a, mlir::Type b);

// One per op family.
void populateElementwisePatterns(mlir::RewritePatternSet &patterns);
void populateReductionPatterns(mlir::RewritePatternSet &patterns);
void populateNormalizationPatterns(mlir::RewritePatternSet &patterns);
void populateDataMovementPatterns(mlir::RewritePatternSet &patterns);
void populateIndexingPatterns(mlir::RewritePatternSet &patterns);
void populateLinalgPatterns(mlir::RewritePatternSet &patterns);
void populatePoolingPatterns(mlir::RewritePatternSet &patterns);
// Issue 10 item 3 families (GraphFamilyOps.td).
void populateCompositeReductionPatterns(mlir::RewritePatternSet &patterns);
void populateScanPatterns(mlir::RewritePatternSet &patterns);
void populateRearrangePatterns(mlir::RewritePatternSet &patterns);

} // namespace dyn::graph_to_prim

#endif // DYN_LIB_CONVERSION_GRAPHTOPRIM_PRIMBUILDER_H
