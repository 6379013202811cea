//===- Reductions.cpp - sum, mean, prod, amax, amin -------------------------===//
//
// Reductions over dims, with keepdim restored by a reshape.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

/// sum/prod/amax/amin/mean: reduce (dims removed), scale for mean, and
/// reshape back to the keepdim shape. A boolean result reduces 0/1 integers
/// (i64 for sum, i32 otherwise) and converts back: amax and sum are "any",
/// amin and prod "all".
template <typename GraphOp, typename PrimOp>
struct ReductionToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType resultType = op.getType();
    RankedTensorType type = resultType;
    if (resultType.getElementType().isInteger(1)) {
      if constexpr (std::is_same_v<GraphOp, graph::MeanOp>)
        return rewriter.notifyMatchFailure(op, "mean of booleans (PyTorch raises)");
      unsigned width = std::is_same_v<GraphOp, graph::SumOp> ? 64 : 32;
      type = resultType.clone(rewriter.getIntegerType(width));
    }
    Value x = pb.convert(adaptor.getInput(), type.getElementType());
    RankedTensorType in = tensorType(x);
    ArrayRef<int64_t> dims = op.getDims();
    SmallVector<int64_t> reducedShape;
    int64_t count = 1;
    for (int64_t i = 0; i < in.getRank(); ++i) {
      if (llvm::is_contained(dims, i))
        count *= in.getDimSize(i);
      else
        reducedShape.push_back(in.getDimSize(i));
    }
    RankedTensorType reducedType = RankedTensorType::get(reducedShape, type.getElementType());
    Value result = PrimOp::create(rewriter, op.getLoc(), reducedType, x, dims);
    if constexpr (std::is_same_v<GraphOp, graph::MeanOp>)
      result = prim::DivOp::create(rewriter, op.getLoc(), reducedType, result,
                                   pb.splat(reducedType, (double)count));
    if (reducedType != type)
      result = prim::ReshapeOp::create(rewriter, op.getLoc(), type, result);
    rewriter.replaceOp(op, pb.convert(result, resultType.getElementType()));
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateReductionPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ReductionToPrim<graph::SumOp, prim::ReduceSumOp>,
               ReductionToPrim<graph::MeanOp, prim::ReduceSumOp>,
               ReductionToPrim<graph::ProdOp, prim::ReduceProdOp>,
               ReductionToPrim<graph::AmaxOp, prim::ReduceMaxOp>,
               ReductionToPrim<graph::AminOp, prim::ReduceMinOp>>(ctx);
}
