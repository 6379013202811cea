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

/// The smallest (`lowest`) or largest value of an integer element type:
/// unsigned for ui8 and bool, signed otherwise (the identity of max / min).
inline llvm::APInt integerExtreme(mlir::Type et, bool lowest) {
  unsigned width = et.getIntOrFloatBitWidth();
  if (et.isUnsignedInteger() || et.isInteger(1))
    return lowest ? llvm::APInt::getMinValue(width) : llvm::APInt::getMaxValue(width);
  return lowest ? llvm::APInt::getSignedMinValue(width) : llvm::APInt::getSignedMaxValue(width);
}

inline mlir::RankedTensorType tensorType(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

/// Helpers that build prim ops; each returns its input unchanged when there
/// is nothing to do, so patterns can apply them unconditionally.
struct PrimBuilder {
  mlir::OpBuilder &b;
  mlir::Location loc;
  /// Where set, a tensor whose dynamic dims size every result-shaped value
  /// (dynamicSizes reads it first): a GEMM's product, which the operands do
  /// not size right-aligned.
  mlir::Value sizeSource = {};

  mlir::Value convert(mlir::Value v, mlir::Type elementType);
  /// Right-aligned (numpy) broadcast to `shape`.
  mlir::Value broadcast(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  /// Broadcast after dropping dims: operand dim i is result dim keptDims[i].
  mlir::Value broadcastKept(mlir::Value v, mlir::RankedTensorType to,
                            llvm::ArrayRef<int64_t> keptDims);
  mlir::Value promote(mlir::Value v, mlir::RankedTensorType to);
  mlir::Value splat(mlir::RankedTensorType like, double value);
  /// The sizes of `shape`'s dynamic dims, from `sizeSource` or the operands of the op being rewritten.
  llvm::SmallVector<mlir::Value> dynamicSizes(llvm::ArrayRef<int64_t> shape);
  /// prim.dim of each dynamic dim of `v`, in order.
  llvm::SmallVector<mlir::Value> dimsOf(mlir::Value v);
  /// The size of dim `d` of `v`: a constant, or prim.dim where dynamic.
  mlir::Value dim(mlir::Value v, int64_t d);
  /// A splat of `like`'s type and runtime shape.
  mlir::Value splatLike(mlir::Value like, double value);
  /// `v` reshaped to `type`, whose dynamic dims have the sizes `sizes` (one
  /// per dim of `type`, null where static).
  mlir::Value reshape(mlir::Value v, mlir::RankedTensorType type, llvm::ArrayRef<mlir::Value> sizes);
};

/// PyTorch's promotion between two tensor element types (category, then width).
mlir::Type promoteTypes(mlir::Type a, mlir::Type b);

/// The type composites compute in: float32 for float16 and bfloat16 (eager's
/// kernels compute those in float and round once), else the type itself.
inline mlir::RankedTensorType opmathType(mlir::RankedTensorType t) {
  if (t.getElementType().isF16() || t.getElementType().isBF16())
    return t.clone(mlir::Float32Type::get(t.getContext()));
  return t;
}

/// Pointwise prim arithmetic on one tensor type: the composites' vocabulary.
struct Pointwise {
  PrimBuilder &pb;
  mlir::RankedTensorType type;

  mlir::Value c(double v) { return pb.splat(type, v); }
  template <typename Op> mlir::Value un(mlir::Value x) { return Op::create(pb.b, pb.loc, type, x); }
  template <typename Op> mlir::Value bin(mlir::Value x, mlir::Value y) {
    return Op::create(pb.b, pb.loc, type, x, y);
  }
  template <typename Op> mlir::Value cmp(mlir::Value x, mlir::Value y) {
    return Op::create(pb.b, pb.loc, type.clone(pb.b.getI1Type()), x, y);
  }
  mlir::Value add(mlir::Value x, mlir::Value y) { return bin<prim::AddOp>(x, y); }
  mlir::Value sub(mlir::Value x, mlir::Value y) { return bin<prim::SubOp>(x, y); }
  mlir::Value mul(mlir::Value x, mlir::Value y) { return bin<prim::MulOp>(x, y); }
  mlir::Value div(mlir::Value x, mlir::Value y) { return bin<prim::DivOp>(x, y); }
  mlir::Value max(mlir::Value x, mlir::Value y) { return bin<prim::MaxOp>(x, y); }
  mlir::Value min(mlir::Value x, mlir::Value y) { return bin<prim::MinOp>(x, y); }
  mlir::Value select(mlir::Value cond, mlir::Value x, mlir::Value y) {
    return prim::SelectOp::create(pb.b, pb.loc, type, cond, x, y);
  }
  /// The operand converted and broadcast to this type.
  mlir::Value in(mlir::Value v) { return pb.promote(v, type); }
};

/// graph.scatter's decomposition (Scatter.cpp): src (index's shape) combined
/// by `kind` at index along d into input; index_add, histc and embedding_bag
/// build on it.
mlir::Value buildScatter(PrimBuilder &pb, mlir::Value input, mlir::Value index, mlir::Value src,
                         graph::ScatterReduce kind, int64_t d, bool includeSelf, bool wraps);

// One per op family.
void populateElementwisePatterns(mlir::RewritePatternSet &patterns);
void populateMathPatterns(mlir::RewritePatternSet &patterns);
void populateActivationsPatterns(mlir::RewritePatternSet &patterns);
void populateReductionPatterns(mlir::RewritePatternSet &patterns);
void populateNormalizationPatterns(mlir::RewritePatternSet &patterns);
void populateDataMovementPatterns(mlir::RewritePatternSet &patterns);
void populateIndexingPatterns(mlir::RewritePatternSet &patterns);
void populateLinalgPatterns(mlir::RewritePatternSet &patterns);
void populatePoolingPatterns(mlir::RewritePatternSet &patterns);
void populateResamplePatterns(mlir::RewritePatternSet &patterns);
void populateGridSamplePatterns(mlir::RewritePatternSet &patterns);
// Issue 10 item 3 families (GraphFamilyOps.td).
void populateCompositeReductionPatterns(mlir::RewritePatternSet &patterns);
void populateScanPatterns(mlir::RewritePatternSet &patterns);
void populateRearrangePatterns(mlir::RewritePatternSet &patterns);
void populateLossPatterns(mlir::RewritePatternSet &patterns);
void populateScatterPatterns(mlir::RewritePatternSet &patterns);
// Random ops (GraphRandomOps.td).
void populateRandomPatterns(mlir::RewritePatternSet &patterns);
// Ops computed by a library call (GraphLibraryOps.td).
void populateLibraryCallPatterns(mlir::RewritePatternSet &patterns);
// Pointwise math and special functions (GraphSpecialOps.td).
void populateSpecialPatterns(mlir::RewritePatternSet &patterns);
// frexp and nextafter (GraphSpecialOps.td).
void populateFloatBitsPatterns(mlir::RewritePatternSet &patterns);

} // namespace dyn::graph_to_prim

#endif // DYN_LIB_CONVERSION_GRAPHTOPRIM_PRIMBUILDER_H
