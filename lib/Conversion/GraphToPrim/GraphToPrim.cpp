//===- GraphToPrim.cpp - decompose graph ops into prim ops ---------------===//
//
// Makes PyTorch's implicit semantics explicit, one op family at a time:
// broadcasting becomes prim.broadcast_in_dim, type promotion
// prim.convert_element_type, composites (mean, softmax, relu, ...) their
// primitive definitions. The patterns live in one file per op family
// (PrimBuilder.h lists them); this file holds the pass and the shared helpers.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace dyn {
#define GEN_PASS_DEF_CONVERTGRAPHTOPRIMPASS
#include "dyn/Conversion/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;

//===----------------------------------------------------------------------===//
// PrimBuilder (shared by the op families)
//===----------------------------------------------------------------------===//

Value graph_to_prim::PrimBuilder::convert(Value v, Type elementType) {
  RankedTensorType t = tensorType(v);
  if (t.getElementType() == elementType)
    return v;
  if (elementType.isInteger(1) && !t.getElementType().isInteger(1))
    return prim::NeOp::create(b, loc, t.clone(elementType), v, splatLike(v, 0.0));
  return prim::ConvertElementTypeOp::create(b, loc, t.clone(elementType), v);
}

/// The sizes of the dynamic dims of `shape`, read from the op being rewritten
/// (the builder's position): from an operand whose right-aligned dim is
/// dynamic there. The ops that admit dynamic dims have one for every dynamic
/// result dim (their verifiers: same shape, or numpy broadcasting).
SmallVector<Value> graph_to_prim::PrimBuilder::dynamicSizes(ArrayRef<int64_t> shape) {
  SmallVector<Value> sizes;
  Operation *root = b.getInsertionPoint() != b.getInsertionBlock()->end() ? &*b.getInsertionPoint() : nullptr;
  auto source = sizeSource ? cast<RankedTensorType>(sizeSource.getType()) : RankedTensorType();
  for (int64_t d = 0, r = shape.size(); d < r; ++d) {
    if (!ShapedType::isDynamic(shape[d]))
      continue;
    if (source && source.getRank() == r && source.isDynamicDim(d)) {
      sizes.push_back(prim::DimOp::create(b, loc, sizeSource, d));
      continue;
    }
    Value size;
    for (Value operand : root ? root->getOperands() : ValueRange()) {
      auto t = dyn_cast<RankedTensorType>(operand.getType());
      int64_t od = t ? t.getRank() - (r - d) : -1;
      if (t && od >= 0 && t.isDynamicDim(od)) {
        size = prim::DimOp::create(b, loc, operand, od);
        break;
      }
    }
    if (!size)
      llvm::report_fatal_error("dyn-convert-graph-to-prim: a dynamic dim with no operand to size it");
    sizes.push_back(size);
  }
  return sizes;
}

SmallVector<Value> graph_to_prim::PrimBuilder::dimsOf(Value v) {
  SmallVector<Value> sizes;
  for (int64_t d = 0, r = tensorType(v).getRank(); d < r; ++d)
    if (tensorType(v).isDynamicDim(d))
      sizes.push_back(prim::DimOp::create(b, loc, v, d));
  return sizes;
}

Value graph_to_prim::PrimBuilder::dim(Value v, int64_t d) {
  if (!tensorType(v).isDynamicDim(d))
    return arith::ConstantIndexOp::create(b, loc, tensorType(v).getDimSize(d));
  return prim::DimOp::create(b, loc, v, d);
}

Value graph_to_prim::PrimBuilder::splatLike(Value like, double value) {
  RankedTensorType t = tensorType(like);
  if (t.hasStaticShape())
    return splat(t, value);
  Value c = splat(RankedTensorType::get({}, t.getElementType()), value);
  return prim::BroadcastInDimOp::create(b, loc, t, c, ArrayRef<int64_t>{}, dimsOf(like));
}

Value graph_to_prim::PrimBuilder::reshape(Value v, RankedTensorType type, ArrayRef<Value> sizes) {
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamic.push_back(sizes[d]);
  return prim::ReshapeOp::create(b, loc, type, v, dynamic);
}

Value graph_to_prim::PrimBuilder::broadcast(Value v, ArrayRef<int64_t> shape) {
  RankedTensorType t = tensorType(v);
  if (t.getShape() == shape)
    return v;
  int64_t offset = shape.size() - t.getRank();
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < t.getRank(); ++i)
    dims.push_back(offset + i);
  return prim::BroadcastInDimOp::create(b, loc, RankedTensorType::get(shape, t.getElementType()),
                                        v, dims, dynamicSizes(shape));
}

Value graph_to_prim::PrimBuilder::broadcastKept(Value v, RankedTensorType to,
                                                ArrayRef<int64_t> keptDims) {
  return prim::BroadcastInDimOp::create(b, loc, to, v, keptDims, dynamicSizes(to.getShape()));
}

Value graph_to_prim::PrimBuilder::promote(Value v, RankedTensorType to) {
  return broadcast(convert(v, to.getElementType()), to.getShape());
}

Value graph_to_prim::PrimBuilder::splat(RankedTensorType like, double value) {
  Type et = like.getElementType();
  Attribute scalar;
  if (auto ft = dyn_cast<FloatType>(et))
    scalar = FloatAttr::get(ft, value);
  else
    scalar = IntegerAttr::get(et, (int64_t)value);
  if (like.hasStaticShape())
    return prim::ConstantOp::create(b, loc, DenseElementsAttr::get(like, scalar));
  // a dynamic shape: the scalar broadcast to the runtime sizes
  auto scalarType = RankedTensorType::get({}, et);
  Value c = prim::ConstantOp::create(b, loc, DenseElementsAttr::get(scalarType, scalar));
  return prim::BroadcastInDimOp::create(b, loc, like, c, ArrayRef<int64_t>{}, dynamicSizes(like.getShape()));
}

void dyn::populateGraphToPrimPatterns(RewritePatternSet &patterns) {
  graph_to_prim::populateElementwisePatterns(patterns);
  graph_to_prim::populateMathPatterns(patterns);
  graph_to_prim::populateActivationsPatterns(patterns);
  graph_to_prim::populateReductionPatterns(patterns);
  graph_to_prim::populateNormalizationPatterns(patterns);
  graph_to_prim::populateDataMovementPatterns(patterns);
  graph_to_prim::populateIndexingPatterns(patterns);
  graph_to_prim::populateLinalgPatterns(patterns);
  graph_to_prim::populatePoolingPatterns(patterns);
  graph_to_prim::populateResamplePatterns(patterns);
  graph_to_prim::populateGridSamplePatterns(patterns);
  graph_to_prim::populateCompositeReductionPatterns(patterns);
  graph_to_prim::populateScanPatterns(patterns);
  graph_to_prim::populateRearrangePatterns(patterns);
  graph_to_prim::populateLossPatterns(patterns);
  graph_to_prim::populateScatterPatterns(patterns);
  graph_to_prim::populateRandomPatterns(patterns);
  graph_to_prim::populateLibraryCallPatterns(patterns);
  graph_to_prim::populateSpecialPatterns(patterns);
  graph_to_prim::populateFloatBitsPatterns(patterns);
}

namespace {
struct ConvertGraphToPrimPass : dyn::impl::ConvertGraphToPrimPassBase<ConvertGraphToPrimPass> {
  void runOnOperation() override {
    // a PyTorch op kept whole by capture: no prim form exists, say which op stops the lowering
    WalkResult calls = getOperation().walk([](graph::TorchCallOp op) {
      op.emitError() << "graph.torch_call \"" << op.getCallee()
                     << "\" has no lowering in dyn's compiler (the graph runs with PyTorch ops)";
      return WalkResult::interrupt();
    });
    if (calls.wasInterrupted())
      return signalPassFailure();
    ConversionTarget target(getContext());
    target.addIllegalDialect<graph::GraphDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateGraphToPrimPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
