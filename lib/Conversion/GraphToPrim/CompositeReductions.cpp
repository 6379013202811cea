//===- CompositeReductions.cpp - all/any, arg-, logsumexp, norms, var/std ---===//
//
// Reductions built from the four prim reductions and elementwise ops. Each
// reduces with the dims removed and reshapes to the keepdim shape last.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

/// `x` reduced over `dims` by PrimOp (dims removed).
template <typename PrimOp>
Value reduce(PrimBuilder &pb, Value x, ArrayRef<int64_t> dims) {
  RankedTensorType t = tensorType(x);
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (!llvm::is_contained(dims, i))
      shape.push_back(t.getDimSize(i));
  return PrimOp::create(pb.b, pb.loc, RankedTensorType::get(shape, t.getElementType()), x, dims);
}

/// `v` reshaped to `shape` (the keepdim form of a reduction), unless it has it.
Value reshapeTo(PrimBuilder &pb, Value v, ArrayRef<int64_t> shape) {
  RankedTensorType t = tensorType(v);
  if (t.getShape() == shape)
    return v;
  return prim::ReshapeOp::create(pb.b, pb.loc, RankedTensorType::get(shape, t.getElementType()), v);
}

/// A reduced value broadcast back over the reduced dims of `like`.
Value broadcastBack(PrimBuilder &pb, Value reduced, RankedTensorType like, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < like.getRank(); ++i)
    if (!llvm::is_contained(dims, i))
      kept.push_back(i);
  return pb.broadcastKept(reduced, like.clone(tensorType(reduced).getElementType()), kept);
}

/// f16 and bf16 accumulate in f32, as eager's reductions do.
Type accumulatorType(Type et) { return et.isF16() || et.isBF16() ? Float32Type::get(et.getContext()) : et; }

/// A max of +-inf taken as 0 (logsumexp's shift: all -inf gives -inf, a +inf
/// gives +inf, never NaN).
Value safeMax(PrimBuilder &pb, Value m) {
  RankedTensorType mt = tensorType(m);
  Value infinite = prim::EqOp::create(pb.b, pb.loc, mt.clone(pb.b.getI1Type()),
                                      prim::AbsOp::create(pb.b, pb.loc, mt, m),
                                      pb.splat(mt, INFINITY));
  return prim::SelectOp::create(pb.b, pb.loc, mt, infinite, pb.splat(mt, 0.0), m);
}

template <typename GraphOp, typename PrimOp>
struct LogicalReductionToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    // non-zero as 0/1 in i32; an empty reduction gives the kind's identity
    // (INT_MAX for all, INT_MIN for any), which `> 0` maps to true and false
    Value bits = pb.convert(pb.convert(adaptor.getInput(), rewriter.getI1Type()),
                            rewriter.getI32Type());
    Value r = reduce<PrimOp>(pb, bits, op.getDims());
    RankedTensorType rt = tensorType(r);
    r = prim::GtOp::create(rewriter, op.getLoc(), rt.clone(rewriter.getI1Type()), r,
                           pb.splat(rt, 0));
    rewriter.replaceOp(op, reshapeTo(pb, r, op.getType().getShape()));
    return success();
  }
};

/// argmax/argmin: the least index where x equals its extremum along dim, or
/// is NaN (a NaN is the extremum of a NaN-propagating prim.reduce_max/min).
template <typename GraphOp, typename PrimOp>
struct ArgReductionToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    if (tensorType(x).getElementType().isInteger(1))
      x = pb.convert(x, rewriter.getI32Type());
    RankedTensorType t = tensorType(x);
    int64_t dim = op.getDim();
    Value extremum = broadcastBack(pb, reduce<PrimOp>(pb, x, {dim}), t, {dim});
    RankedTensorType boolType = t.clone(rewriter.getI1Type());
    Value hit = prim::EqOp::create(rewriter, loc, boolType, x, extremum);
    if (isa<FloatType>(t.getElementType()))
      hit = prim::OrOp::create(rewriter, loc, boolType, hit,
                               prim::NeOp::create(rewriter, loc, boolType, x, x));
    RankedTensorType indexType = t.clone(rewriter.getI64Type());
    Value pos = prim::IotaOp::create(rewriter, loc, indexType, dim);
    Value candidates = prim::SelectOp::create(rewriter, loc, indexType, hit, pos,
                                              pb.splat(indexType, (double)t.getDimSize(dim)));
    Value r = reduce<prim::ReduceMinOp>(pb, candidates, {dim});
    rewriter.replaceOp(op, reshapeTo(pb, r, op.getType().getShape()));
    return success();
  }
};

/// max + log(sum(exp(x - max))), with a max of +-inf taken as 0 (eager's:
/// all -inf gives -inf, a +inf gives +inf, not NaN).
struct LogsumexpToPrim : OpConversionPattern<graph::LogsumexpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::LogsumexpOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    Type resultElement = op.getType().getElementType();
    Value x = pb.convert(adaptor.getInput(), accumulatorType(resultElement));
    RankedTensorType t = tensorType(x);
    ArrayRef<int64_t> dims = op.getDims();
    // The max is used inside the sum and after it: fusion computes it once.
    Value m = safeMax(pb, reduce<prim::ReduceMaxOp>(pb, x, dims));
    RankedTensorType mt = tensorType(m);
    Value shifted = prim::SubOp::create(rewriter, loc, t, x, broadcastBack(pb, m, t, dims));
    Value sum = reduce<prim::ReduceSumOp>(pb, prim::ExpOp::create(rewriter, loc, t, shifted), dims);
    Value r = prim::AddOp::create(rewriter, loc, mt, prim::LogOp::create(rewriter, loc, mt, sum), m);
    r = pb.convert(r, resultElement);
    rewriter.replaceOp(op, reshapeTo(pb, r, op.getType().getShape()));
    return success();
  }
};

struct VectorNormToPrim : OpConversionPattern<graph::VectorNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::VectorNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    Type resultElement = op.getType().getElementType();
    Value x = pb.convert(adaptor.getInput(), accumulatorType(resultElement));
    RankedTensorType t = tensorType(x);
    ArrayRef<int64_t> dims = op.getDims();
    double ord = op.getOrd().convertToDouble();
    Value a = prim::AbsOp::create(rewriter, loc, t, x);
    Value r;
    if (std::isinf(ord) && ord > 0) {
      r = reduce<prim::ReduceMaxOp>(pb, a, dims);
    } else if (std::isinf(ord)) {
      r = reduce<prim::ReduceMinOp>(pb, a, dims);
    } else if (ord == 0) {
      Value nonzero = pb.convert(pb.convert(x, rewriter.getI1Type()), t.getElementType());
      r = reduce<prim::ReduceSumOp>(pb, nonzero, dims);
    } else if (ord == 1) {
      r = reduce<prim::ReduceSumOp>(pb, a, dims);
    } else if (ord == 2) {
      Value sq = prim::MulOp::create(rewriter, loc, t, x, x);
      r = reduce<prim::ReduceSumOp>(pb, sq, dims);
      r = prim::SqrtOp::create(rewriter, loc, tensorType(r), r);
    } else {
      Value p = prim::PowOp::create(rewriter, loc, t, a, pb.splat(t, ord));
      r = reduce<prim::ReduceSumOp>(pb, p, dims);
      r = prim::PowOp::create(rewriter, loc, tensorType(r), r, pb.splat(tensorType(r), 1.0 / ord));
    }
    r = pb.convert(r, resultElement);
    rewriter.replaceOp(op, reshapeTo(pb, r, op.getType().getShape()));
    return success();
  }
};

/// var/std: sum((x - mean)^2) / max(0, N - correction), two passes, in f32
/// for f16/bf16 (eager's); std takes the square root.
template <typename GraphOp, bool takeSqrt>
struct MomentToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    Type resultElement = op.getType().getElementType();
    Value x = pb.convert(adaptor.getInput(), accumulatorType(resultElement));
    RankedTensorType t = tensorType(x);
    ArrayRef<int64_t> dims = op.getDims();
    int64_t count = 1;
    for (int64_t d : dims)
      count *= t.getDimSize(d);
    Value sum = reduce<prim::ReduceSumOp>(pb, x, dims);
    RankedTensorType rt = tensorType(sum);
    Value mean = prim::DivOp::create(rewriter, loc, rt, sum, pb.splat(rt, (double)count));
    Value dev = prim::SubOp::create(rewriter, loc, t, x, broadcastBack(pb, mean, t, dims));
    Value sq = reduce<prim::ReduceSumOp>(pb, prim::MulOp::create(rewriter, loc, t, dev, dev), dims);
    double divisor = std::max(0.0, (double)count - op.getCorrection().convertToDouble());
    Value r = prim::DivOp::create(rewriter, loc, rt, sq, pb.splat(rt, divisor));
    if constexpr (takeSqrt)
      r = prim::SqrtOp::create(rewriter, loc, rt, r);
    r = pb.convert(r, resultElement);
    rewriter.replaceOp(op, reshapeTo(pb, r, op.getType().getShape()));
    return success();
  }
};
using VarToPrim = MomentToPrim<graph::VarOp, false>;
using StdToPrim = MomentToPrim<graph::StdOp, true>;

} // namespace

void dyn::graph_to_prim::populateCompositeReductionPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<LogicalReductionToPrim<graph::AllOp, prim::ReduceMinOp>,
               LogicalReductionToPrim<graph::AnyOp, prim::ReduceMaxOp>,
               ArgReductionToPrim<graph::ArgmaxOp, prim::ReduceMaxOp>,
               ArgReductionToPrim<graph::ArgminOp, prim::ReduceMinOp>, LogsumexpToPrim,
               VectorNormToPrim>(ctx);
  // The registry's (GraphOps.td: var, std), generated by dyn-tblgen.
#define GEN_COMPOSITEREDUCTIONS_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
