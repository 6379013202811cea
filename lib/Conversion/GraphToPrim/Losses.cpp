//===- Losses.cpp - mse, l1, smooth_l1, huber, kl_div, bce (with logits) ---===//
//
// Elementwise losses: the per-element formula of eager's kernel, then the
// reduction (`mean` is the sum divided by the element count: NaN when there
// are none, as eager). f16/bf16 compute in f32 and round once.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

/// Elementwise helpers on one tensor type.
struct Elementwise {
  PrimBuilder &pb;
  RankedTensorType t;
  Value c(double v) { return pb.splat(t, v); }
  Value add(Value a, Value b) { return prim::AddOp::create(pb.b, pb.loc, t, a, b); }
  Value sub(Value a, Value b) { return prim::SubOp::create(pb.b, pb.loc, t, a, b); }
  Value mul(Value a, Value b) { return prim::MulOp::create(pb.b, pb.loc, t, a, b); }
  Value div(Value a, Value b) { return prim::DivOp::create(pb.b, pb.loc, t, a, b); }
  Value max(Value a, Value b) { return prim::MaxOp::create(pb.b, pb.loc, t, a, b); }
  Value min(Value a, Value b) { return prim::MinOp::create(pb.b, pb.loc, t, a, b); }
  Value abs(Value a) { return prim::AbsOp::create(pb.b, pb.loc, t, a); }
  Value exp(Value a) { return prim::ExpOp::create(pb.b, pb.loc, t, a); }
  Value log(Value a) { return prim::LogOp::create(pb.b, pb.loc, t, a); }
  Value log1p(Value a) { return prim::Log1pOp::create(pb.b, pb.loc, t, a); }
  Value neg(Value a) { return prim::NegOp::create(pb.b, pb.loc, t, a); }
  template <typename Cmp> Value select(Value l, Value r, Value a, Value b) {
    Value cond = Cmp::create(pb.b, pb.loc, t.clone(pb.b.getI1Type()), l, r);
    return prim::SelectOp::create(pb.b, pb.loc, t, cond, a, b);
  }
};

Value pointwise(Elementwise &e, graph::MseLossOp, Value x, Value y) {
  Value d = e.sub(x, y);
  return e.mul(d, d);
}
Value pointwise(Elementwise &e, graph::L1LossOp, Value x, Value y) { return e.abs(e.sub(x, y)); }
Value pointwise(Elementwise &e, graph::SmoothL1LossOp op, Value x, Value y) {
  double beta = op.getBeta().convertToDouble();
  Value d = e.abs(e.sub(x, y));
  if (beta == 0)
    return d;
  Value small = e.div(e.mul(e.c(0.5), e.mul(d, d)), e.c(beta));
  return e.select<prim::LtOp>(d, e.c(beta), small, e.sub(d, e.c(0.5 * beta)));
}
Value pointwise(Elementwise &e, graph::HuberLossOp op, Value x, Value y) {
  double delta = op.getDelta().convertToDouble();
  Value d = e.abs(e.sub(x, y));
  Value small = e.mul(e.c(0.5), e.mul(d, d));
  return e.select<prim::LtOp>(d, e.c(delta), small, e.mul(e.c(delta), e.sub(d, e.c(0.5 * delta))));
}
Value pointwise(Elementwise &e, graph::KlDivOp op, Value x, Value y) {
  if (op.getLogTarget())
    return e.mul(e.exp(y), e.sub(y, x));
  // xlogy(t, t) - t x: 0 where t == 0 (NaN where t is)
  Value tlogt = e.select<prim::EqOp>(y, e.c(0), e.c(0), e.mul(y, e.log(y)));
  return e.sub(tlogt, e.mul(y, x));
}
Value pointwise(Elementwise &e, graph::BinaryCrossEntropyOp, Value x, Value y) {
  Value logx = e.max(e.log(x), e.c(-100));
  Value log1mx = e.max(e.log(e.sub(e.c(1), x)), e.c(-100));
  return e.neg(e.add(e.mul(y, logx), e.mul(e.sub(e.c(1), y), log1mx)));
}
Value pointwise(Elementwise &e, graph::BinaryCrossEntropyWithLogitsOp, Value x, Value y) {
  // (1 - t) x - log(sigmoid(x)), log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))
  Value logSigmoid = e.sub(e.min(x, e.c(0)), e.log1p(e.exp(e.neg(e.abs(x)))));
  return e.sub(e.mul(e.sub(e.c(1), y), x), logSigmoid);
}

template <typename LossOp>
struct PointwiseLossToPrim : OpConversionPattern<LossOp> {
  using OpConversionPattern<LossOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(LossOp op, typename LossOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Type et = op.getType().getElementType();
    Type compute = et.isF16() || et.isBF16() ? rewriter.getF32Type() : et;
    Value x = pb.convert(adaptor.getInput(), compute);
    Value y = pb.convert(adaptor.getTarget(), compute);
    RankedTensorType t = tensorType(x);
    Elementwise e{pb, t};
    Value r = pointwise(e, op, x, y);
    if (op.getReduction() != graph::LossReduction::none) {
      SmallVector<int64_t> dims;
      for (int64_t i = 0; i < t.getRank(); ++i)
        dims.push_back(i);
      RankedTensorType scalar = RankedTensorType::get({}, compute);
      r = prim::ReduceSumOp::create(rewriter, op.getLoc(), scalar, r, dims);
      if (op.getReduction() == graph::LossReduction::mean)
        r = prim::DivOp::create(rewriter, op.getLoc(), scalar, r,
                                pb.splat(scalar, (double)t.getNumElements()));
    }
    rewriter.replaceOp(op, pb.convert(r, et));
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateLossPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<PointwiseLossToPrim<graph::MseLossOp>, PointwiseLossToPrim<graph::L1LossOp>,
               PointwiseLossToPrim<graph::SmoothL1LossOp>, PointwiseLossToPrim<graph::HuberLossOp>,
               PointwiseLossToPrim<graph::KlDivOp>, PointwiseLossToPrim<graph::BinaryCrossEntropyOp>,
               PointwiseLossToPrim<graph::BinaryCrossEntropyWithLogitsOp>>(ctx);
}
