//===- Linalg.cpp - matmul, convolution, attention --------------------------------------------------===//
//
// Contractions and the library primitives: matmul becomes prim.dot_general,
// convolution prim.convolution (the bias added by the library, one rounding
// as in eager), attention prim.attention with its scale (a boolean mask made
// additive first, as ATen does).
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

#include <limits>

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

struct MatmulToPrim : OpConversionPattern<graph::MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::MatmulOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Type et = op.getType().getElementType();
    Value lhs = pb.convert(adaptor.getLhs(), et), rhs = pb.convert(adaptor.getRhs(), et);
    bool batched = op.getType().getRank() == 3;
    SmallVector<int64_t> batch = batched ? SmallVector<int64_t>{0} : SmallVector<int64_t>{};
    int64_t lc = batched ? 2 : 1, rc = batched ? 1 : 0;
    rewriter.replaceOpWithNewOp<prim::DotGeneralOp>(op, op.getType(), lhs, rhs, batch, batch,
                                                    ArrayRef<int64_t>{lc}, ArrayRef<int64_t>{rc});
    return success();
  }
};

struct ConvolutionToPrim : OpConversionPattern<graph::ConvolutionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ConvolutionOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    // The operands and the attributes carry over (by name).
    rewriter.replaceOpWithNewOp<prim::ConvolutionOp>(op, TypeRange{op.getType()},
                                                     adaptor.getOperands(), op->getAttrs());
    return success();
  }
};

struct AttentionToPrim : OpConversionPattern<graph::ScaledDotProductAttentionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ScaledDotProductAttentionOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    int64_t e = tensorType(op.getQuery()).getShape().back();
    double scale = op.getScale() ? op.getScale()->convertToDouble() : 1.0 / std::sqrt((double)e);
    SmallVector<Value> operands{adaptor.getQuery(), adaptor.getKey(), adaptor.getValue()};
    if (Value mask = adaptor.getMask()) {
      // A boolean mask becomes the additive mask ATen makes of it at every
      // call (convert_boolean_attn_mask: 0 where attended, -inf elsewhere, in
      // the query's dtype), here one fused kernel instead of three ATen ops
      // on the host before each attention call.
      auto maskType = cast<RankedTensorType>(mask.getType());
      if (maskType.getElementType().isInteger(1)) {
        PrimBuilder pb{rewriter, op.getLoc()};
        Pointwise p{pb, maskType.clone(tensorType(op.getQuery()).getElementType())};
        mask = p.select(mask, p.c(0.0), p.c(-std::numeric_limits<double>::infinity()));
      }
      operands.push_back(mask);
    }
    auto attention = prim::AttentionOp::create(rewriter, op.getLoc(), TypeRange{op.getType()},
                                               operands, ArrayRef<NamedAttribute>{});
    attention.setScale(llvm::APFloat(scale));
    if (op.getIsCausal())
      attention.setIsCausal(true);
    rewriter.replaceOp(op, attention.getResult());
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateLinalgPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<MatmulToPrim, ConvolutionToPrim, AttentionToPrim>(ctx);
}
