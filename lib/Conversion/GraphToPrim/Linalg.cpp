//===- Linalg.cpp - matmul, addmm, convolution, attention ------------------===//
//
// Contractions and the library primitives: matmul becomes prim.dot_general
// (addmm too, its added term after it), convolution prim.convolution (the
// bias added by the library, one rounding as in eager), attention
// prim.attention with its scale (a boolean mask made additive first, as ATen
// does).
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

/// beta * input + alpha * (lhs @ rhs): prim.dot_general (a broadcast
/// multiply for a contraction of one element: addr's outer product), then the
/// input added; scaled by alpha and beta in float32 for float16/bfloat16,
/// rounded once.
struct AddmmToPrim : OpConversionPattern<graph::AddmmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::AddmmOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Type et = type.getElementType();
    Value lhs = pb.convert(adaptor.getLhs(), et), rhs = pb.convert(adaptor.getRhs(), et);
    int64_t rank = type.getRank();
    Value prod;
    if (tensorType(lhs).getDimSize(rank - 1) == 1) {
      prod = prim::MulOp::create(rewriter, op.getLoc(), type, pb.broadcast(lhs, type.getShape()),
                                 pb.broadcast(rhs, type.getShape()));
    } else {
      SmallVector<int64_t> batch = rank == 3 ? SmallVector<int64_t>{0} : SmallVector<int64_t>{};
      prod = prim::DotGeneralOp::create(rewriter, op.getLoc(), type, lhs, rhs, batch, batch,
                                        ArrayRef<int64_t>{rank - 1}, ArrayRef<int64_t>{rank - 2});
    }
    double alpha = op.getAlpha().convertToDouble(), beta = op.getBeta().convertToDouble();
    if (!isa<FloatType>(et))
      alpha = std::trunc(alpha), beta = std::trunc(beta);
    if (alpha == 1 && beta == 0) {
      rewriter.replaceOp(op, prod);
      return success();
    }
    if (alpha == 1 && beta == 1) {
      // in the result type: the GEMM's addend (eager's one rounding of
      // float16/bfloat16 products plus the input) where the fusion takes it
      rewriter.replaceOpWithNewOp<prim::AddOp>(op, type, pb.promote(adaptor.getInput(), type),
                                               prod);
      return success();
    }
    Pointwise p{pb, opmathType(type)};
    Value r = p.in(prod);
    if (alpha != 1)
      r = p.mul(r, p.c(alpha));
    if (beta != 0) {
      Value x = p.in(adaptor.getInput());
      r = p.add(beta == 1 ? x : p.mul(x, p.c(beta)), r);
    }
    rewriter.replaceOp(op, pb.convert(r, et));
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
  // The registry's (GraphOps.td: addmm), generated by dyn-tblgen.
#define GEN_LINALG_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
