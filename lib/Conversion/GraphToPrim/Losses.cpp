//===- Losses.cpp - mse, l1, smooth_l1, huber, kl_div, bce, nll -----------===//
//
// Elementwise losses: the per-element formula of eager's kernel, then the
// reduction (`mean` is the sum divided by the element count: NaN when there
// are none, as eager); nll_loss gathers at the class indices. f16/bf16
// compute in f32 and round once.
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

Value pointwise(Elementwise &e, graph::SoftMarginLossOp, Value x, Value y) {
  return e.log1p(e.exp(e.neg(e.mul(y, x))));
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

/// nll_loss: the input and the weight read at each target's class (an
/// ignored target reads class 0 and weighs 0), -x[t] * w[t], then summed, or
/// divided by the summed weights for mean.
struct NllLossToPrim : OpConversionPattern<graph::NllLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::NllLossOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    Type et = op.getType().getElementType();
    Type compute = et.isF16() || et.isBF16() ? rewriter.getF32Type() : et;
    Value x = pb.convert(adaptor.getInput(), compute), w = pb.convert(adaptor.getWeight(), compute);
    Value target = adaptor.getTarget();
    RankedTensorType xt = tensorType(x), tt = tensorType(target);
    int64_t cdim = xt.getRank() >= 2 ? 1 : 0;
    // Dynamic dims (a batch, a sequence) beside the class dim: splats and reshapes take the target's
    // runtime sizes (target dim i is input dim i, or i + 1 after the class dim).
    auto like = [&](Value v, double value) { return pb.splatLike(v, value); };
    // the target with ignored elements at class 0
    Value ignored = prim::EqOp::create(rewriter, loc, tt.clone(rewriter.getI1Type()), target,
                                       like(target, (double)(int64_t)op.getIgnoreIndex()));
    Value safe = prim::SelectOp::create(rewriter, loc, tt, ignored, like(target, 0.0), target);
    // sizes per dim of a shape made of the target's dims (null where static)
    auto targetSizes = [&](ArrayRef<int64_t> shape, int64_t inserted) {
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < (int64_t)shape.size(); ++d) {
        int64_t from = inserted >= 0 && d > inserted ? d - 1 : d;
        sizes.push_back(ShapedType::isDynamic(shape[d]) && d != inserted ? pb.dim(target, from) : Value());
      }
      return sizes;
    };
    auto reshaped = [&](Value v, ArrayRef<int64_t> shape, ArrayRef<Value> sizes) -> Value {
      RankedTensorType vt = tensorType(v);
      if (vt.getShape() == shape && vt.getNumDynamicDims() <= 1)
        return v;
      return pb.reshape(v, RankedTensorType::get(shape, vt.getElementType()), sizes);
    };
    SmallVector<int64_t> picks(xt.getShape());
    picks[cdim] = 1;
    Value picked = prim::GatherOp::create(rewriter, loc, xt.clone(picks), x, cdim,
                                          reshaped(safe, picks, targetSizes(picks, cdim)));
    picked = reshaped(picked, tt.getShape(), targetSizes(tt.getShape(), -1));
    int64_t n = tt.hasStaticShape() ? tt.getNumElements() : ShapedType::kDynamic;
    SmallVector<Value> flat{Value()};
    if (!tt.hasStaticShape()) {
      Value count = pb.dim(target, 0);
      for (int64_t d = 1; d < tt.getRank(); ++d)
        count = arith::MulIOp::create(rewriter, loc, count, pb.dim(target, d));
      flat[0] = count;
    }
    Value wt = prim::GatherOp::create(rewriter, loc, RankedTensorType::get({n}, compute), w, 0,
                                      reshaped(safe, {n}, flat));
    RankedTensorType lt = tt.clone(compute);
    Value weights = reshaped(wt, tt.getShape(), targetSizes(tt.getShape(), -1));
    Value cw = prim::SelectOp::create(rewriter, loc, lt, ignored, like(weights, 0.0), weights);
    Value loss =
        prim::MulOp::create(rewriter, loc, lt, prim::NegOp::create(rewriter, loc, lt, picked), cw);
    if (op.getReduction() != graph::LossReduction::none) {
      RankedTensorType scalar = RankedTensorType::get({}, compute);
      auto total = [&](Value v) -> Value {
        if (lt.getRank() == 0)
          return v;
        SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, lt.getRank()));
        return prim::ReduceSumOp::create(rewriter, loc, scalar, v, dims);
      };
      loss = total(loss);
      if (op.getReduction() == graph::LossReduction::mean)
        loss = prim::DivOp::create(rewriter, loc, scalar, loss, total(cw));
    }
    rewriter.replaceOp(op, pb.convert(loss, et));
    return success();
  }
};

/// Per sample n: sum over classes d != t[n] of max(0, margin - x[n, t] +
/// x[n, d])^p (* w[t]), / C, in the input's type (eager's per-element
/// arithmetic), then the samples' mean or sum (f16/bf16 accumulating in f32).
struct MultiMarginLossToPrim : OpConversionPattern<graph::MultiMarginLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::MultiMarginLossOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType xt = tensorType(adaptor.getInput());
    Type et = xt.getElementType(), i64 = rewriter.getI64Type();
    int64_t n = xt.getDimSize(0), c = xt.getDimSize(1);
    auto column = RankedTensorType::get({n, 1}, et);
    Value t = adaptor.getTarget();
    Value t1 = prim::ReshapeOp::create(rewriter, loc, RankedTensorType::get({n, 1}, i64), t);
    Value picked = prim::GatherOp::create(rewriter, loc, column, adaptor.getInput(), 1, t1);
    Pointwise p{pb, xt};
    Value z = p.add(p.sub(p.c(op.getMargin().convertToDouble()), pb.broadcast(picked, xt.getShape())),
                    adaptor.getInput());
    Value h = p.max(z, p.c(0.0));
    if (op.getP() == 2)
      h = p.mul(h, h);
    if (Value w = adaptor.getWeight()) {
      Value wt = prim::GatherOp::create(rewriter, loc, RankedTensorType::get({n}, et), w, 0, t);
      h = p.mul(h, pb.broadcastKept(wt, xt, {0}));
    }
    Value classes = prim::IotaOp::create(rewriter, loc, xt.clone(i64), 1);
    Value other = prim::NeOp::create(rewriter, loc, xt.clone(rewriter.getI1Type()), classes,
                                     pb.broadcastKept(t, xt.clone(i64), {0}));
    h = p.select(other, h, p.c(0.0));
    Type acc = opmathType(xt).getElementType();
    auto rows = RankedTensorType::get({n}, acc);
    Value loss = prim::ReduceSumOp::create(rewriter, loc, rows, pb.convert(h, acc), ArrayRef<int64_t>{1});
    loss = pb.convert(loss, et);
    loss = prim::DivOp::create(rewriter, loc, tensorType(loss), loss, pb.splat(tensorType(loss), (double)c));
    StringRef reduction = op.getReduction();
    if (reduction != "none") {
      auto scalar = RankedTensorType::get({}, acc);
      Value s = prim::ReduceSumOp::create(rewriter, loc, scalar, pb.convert(loss, acc), ArrayRef<int64_t>{0});
      if (reduction == "mean")
        s = prim::DivOp::create(rewriter, loc, scalar, s, pb.splat(scalar, (double)n));
      loss = pb.convert(s, et);
    }
    rewriter.replaceOp(op, loss);
    return success();
  }
};

/// Per sample n, over [N, j, i]: j a target slot before the first negative
/// target (a triangular count of the negatives), i a class that is no valid
/// target; max(0, 1 - x[t_j] + x[i]) summed in the accumulate type, / C; mean
/// and sum add the samples' sums first (eager's order).
struct MultilabelMarginLossToPrim : OpConversionPattern<graph::MultilabelMarginLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::MultilabelMarginLossOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), t = adaptor.getTarget();
    RankedTensorType xt = tensorType(x);
    Type et = xt.getElementType(), i64 = rewriter.getI64Type(), i1 = rewriter.getI1Type();
    int64_t n = xt.getDimSize(0), c = xt.getDimSize(1);
    auto nc = RankedTensorType::get({n, c}, i64);
    auto cube = RankedTensorType::get({n, c, c}, i64);
    auto wide = [&](Value v, ArrayRef<int64_t> dims) {
      return prim::BroadcastInDimOp::create(rewriter, loc, cube.clone(tensorType(v).getElementType()), v, dims);
    };
    auto i1s = [&](RankedTensorType ty) { return ty.clone(i1); };
    // valid[n, j]: no negative target among t[n, 0..j]
    Value neg = pb.convert(prim::LtOp::create(rewriter, loc, i1s(nc), t, pb.splat(nc, 0.0)), i64);
    Value upTo = prim::LeOp::create(rewriter, loc, i1s(cube), prim::IotaOp::create(rewriter, loc, cube, 2),
                                    prim::IotaOp::create(rewriter, loc, cube, 1));  // [n, j, k]: k <= j
    Value seen = prim::ReduceSumOp::create(
        rewriter, loc, nc, prim::SelectOp::create(rewriter, loc, cube, upTo, wide(neg, {0, 2}), pb.splat(cube, 0.0)),
        ArrayRef<int64_t>{2});
    Value valid = prim::EqOp::create(rewriter, loc, i1s(nc), seen, pb.splat(nc, 0.0));
    Value safe = prim::SelectOp::create(rewriter, loc, nc, valid, t, pb.splat(nc, 0.0));
    // [n, j, i]: class i is target j (a valid one); is_target[n, i] counts them
    Value validW = wide(valid, {0, 1});
    Value hit = prim::AndOp::create(rewriter, loc, i1s(cube),
                                    prim::EqOp::create(rewriter, loc, i1s(cube), wide(safe, {0, 1}),
                                                       prim::IotaOp::create(rewriter, loc, cube, 2)),
                                    validW);
    Value hits = prim::ReduceSumOp::create(rewriter, loc, nc, pb.convert(hit, i64), ArrayRef<int64_t>{1});
    Value other = prim::EqOp::create(rewriter, loc, i1s(nc), hits, pb.splat(nc, 0.0));  // [n, i]: no target
    RankedTensorType acc = opmathType(RankedTensorType::get({n, c, c}, et));
    Value picked = prim::GatherOp::create(rewriter, loc, xt, x, 1, safe);  // x[n, t_j]
    Pointwise p{pb, acc};
    Value z = p.add(p.sub(p.c(1.0), wide(pb.convert(picked, acc.getElementType()), {0, 1})),
                    wide(pb.convert(x, acc.getElementType()), {0, 2}));
    z = p.max(z, p.c(0.0));
    Value keep = prim::AndOp::create(rewriter, loc, i1s(acc), validW, wide(other, {0, 2}));
    z = p.select(keep, z, p.c(0.0));
    auto rows = RankedTensorType::get({n}, acc.getElementType());
    Value sums = prim::ReduceSumOp::create(rewriter, loc, rows, z, ArrayRef<int64_t>{1, 2});
    StringRef reduction = op.getReduction();
    Value loss = sums;
    if (reduction != "none") {
      auto scalar = RankedTensorType::get({}, acc.getElementType());
      loss = prim::ReduceSumOp::create(rewriter, loc, scalar, sums, ArrayRef<int64_t>{0});
    }
    RankedTensorType lt = tensorType(loss);
    loss = prim::DivOp::create(rewriter, loc, lt, loss, pb.splat(lt, (double)c));
    if (reduction == "mean")
      loss = prim::DivOp::create(rewriter, loc, lt, loss, pb.splat(lt, (double)n));
    rewriter.replaceOp(op, pb.convert(loss, et));
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateLossPatterns(RewritePatternSet &patterns) {
  // The registry's patterns of the family (GraphFamilyOps.td's losses), generated by dyn-tblgen.
#define GEN_LOSSES_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
