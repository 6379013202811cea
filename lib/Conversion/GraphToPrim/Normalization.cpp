//===- Normalization.cpp - softmax and log-softmax --------------------------===//
//
// Numerically stable softmax: max, exp, sum and division.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

/// softmax(x) = exp(x - max) / sum(exp(x - max));
/// log_softmax(x) = (x - max) - log(sum(exp(x - max))).
template <typename GraphOp>
struct SoftmaxToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PrimBuilder pb{rewriter, loc};
    RankedTensorType type = op.getType();
    if (!isa<FloatType>(type.getElementType()))
      return rewriter.notifyMatchFailure(op, "softmax needs a float tensor");
    int64_t dim = op.getDim();
    Value x = adaptor.getInput();
    SmallVector<int64_t> reducedShape, keptDims;
    for (int64_t i = 0; i < type.getRank(); ++i) {
      if (i == dim)
        continue;
      reducedShape.push_back(type.getDimSize(i));
      keptDims.push_back(i);
    }
    auto reducedType = RankedTensorType::get(reducedShape, type.getElementType());
    Value max = prim::ReduceMaxOp::create(rewriter, loc, reducedType, x, ArrayRef<int64_t>{dim});
    Value shifted =
        prim::SubOp::create(rewriter, loc, type, x, pb.broadcastKept(max, type, keptDims));
    Value exp = prim::ExpOp::create(rewriter, loc, type, shifted);
    Value sum = prim::ReduceSumOp::create(rewriter, loc, reducedType, exp, ArrayRef<int64_t>{dim});
    Value sumB = pb.broadcastKept(sum, type, keptDims);
    Value result;
    if constexpr (std::is_same_v<GraphOp, graph::SoftmaxOp>)
      result = prim::DivOp::create(rewriter, loc, type, exp, sumB);
    else
      result = prim::SubOp::create(rewriter, loc, type, shifted,
                                   prim::LogOp::create(rewriter, loc, type, sumB));
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateNormalizationPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<SoftmaxToPrim<graph::SoftmaxOp>, SoftmaxToPrim<graph::LogSoftmaxOp>>(ctx);
}
