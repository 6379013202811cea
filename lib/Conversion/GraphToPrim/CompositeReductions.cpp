//===- CompositeReductions.cpp - all/any, arg-, logsumexp, norms, var/std ---===//
//
// Reductions built from the four prim reductions and elementwise ops. Each
// reduces with the dims removed and reshapes to the keepdim shape last.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

#include <cmath>

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

/// The ord-norm of x (in its accumulate type) over dims, the dims removed.
Value vectorNorm(PrimBuilder &pb, Value x, ArrayRef<int64_t> dims, double ord) {
  OpBuilder &b = pb.b;
  Location loc = pb.loc;
  RankedTensorType t = tensorType(x);
  if (ord == 2) {
    Value r = reduce<prim::ReduceSumOp>(pb, prim::MulOp::create(b, loc, t, x, x), dims);
    return prim::SqrtOp::create(b, loc, tensorType(r), r);
  }
  Value a = prim::AbsOp::create(b, loc, t, x);
  if (std::isinf(ord) && ord > 0)
    return reduce<prim::ReduceMaxOp>(pb, a, dims);
  if (std::isinf(ord))
    return reduce<prim::ReduceMinOp>(pb, a, dims);
  if (ord == 0) {
    Value nonzero = pb.convert(pb.convert(x, b.getI1Type()), t.getElementType());
    return reduce<prim::ReduceSumOp>(pb, nonzero, dims);
  }
  if (ord == 1)
    return reduce<prim::ReduceSumOp>(pb, a, dims);
  Value p = prim::PowOp::create(b, loc, t, a, pb.splat(t, ord));
  Value r = reduce<prim::ReduceSumOp>(pb, p, dims);
  return prim::PowOp::create(b, loc, tensorType(r), r, pb.splat(tensorType(r), 1.0 / ord));
}

SmallVector<int64_t> iotaDims(int64_t from, int64_t to) {
  SmallVector<int64_t> dims;
  for (int64_t i = from; i < to; ++i)
    dims.push_back(i);
  return dims;
}

struct VectorNormToPrim : OpConversionPattern<graph::VectorNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::VectorNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Type resultElement = op.getType().getElementType();
    Value x = pb.convert(adaptor.getInput(), accumulatorType(resultElement));
    Value r = vectorNorm(pb, x, op.getDims(), op.getOrd().convertToDouble());
    r = pb.convert(r, resultElement);
    rewriter.replaceOp(op, reshapeTo(pb, r, op.getType().getShape()));
    return success();
  }
};

/// The p-norm over `dims` of a - b (taken in their type, broadcast to
/// `shape` along aDims and bDims), in the result type.
Value distance(PrimBuilder &pb, Value a, ArrayRef<int64_t> aDims, Value b, ArrayRef<int64_t> bDims,
               ArrayRef<int64_t> shape, ArrayRef<int64_t> dims, double p) {
  RankedTensorType t = RankedTensorType::get(shape, tensorType(a).getElementType());
  Value d = prim::SubOp::create(pb.b, pb.loc, t, pb.broadcastKept(a, t, aDims), pb.broadcastKept(b, t, bDims));
  Value r = vectorNorm(pb, pb.convert(d, accumulatorType(t.getElementType())), dims, p);
  return pb.convert(r, t.getElementType());
}

struct DistToPrim : OpConversionPattern<graph::DistOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::DistOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType t = tensorType(adaptor.getInput());
    SmallVector<int64_t> all = iotaDims(0, t.getRank());
    rewriter.replaceOp(op, distance(pb, adaptor.getInput(), all, adaptor.getOther(), all, t.getShape(), all,
                                    op.getP().convertToDouble()));
    return success();
  }
};

/// [*, P, M] and [*, R, M]: differences over [*, P, R, M], normed over M.
struct CdistToPrim : OpConversionPattern<graph::CdistOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::CdistOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    ArrayRef<int64_t> a = tensorType(adaptor.getInput()).getShape(), b = tensorType(adaptor.getOther()).getShape();
    int64_t k = a.size() - 2;
    SmallVector<int64_t> shape(a.drop_back(1));
    shape.append({b[k], a[k + 1]});
    SmallVector<int64_t> aDims = iotaDims(0, k + 1), bDims = iotaDims(0, k);
    aDims.push_back(k + 2);
    bDims.append({k + 1, k + 2});
    rewriter.replaceOp(op, distance(pb, adaptor.getInput(), aDims, adaptor.getOther(), bDims, shape, {k + 2},
                                    op.getP().convertToDouble()));
    return success();
  }
};

/// Rows i < j of [N, M] gathered at constant pair indices, then normed.
struct PdistToPrim : OpConversionPattern<graph::PdistOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::PdistOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType in = tensorType(adaptor.getInput());
    int64_t n = in.getDimSize(0), m = in.getDimSize(1), pairs = n * (n - 1) / 2;
    if (pairs == 0 || m == 0) {  // no pairs, or distances of empty rows
      rewriter.replaceOp(op, pb.splat(op.getType(), 0.0));
      return success();
    }
    SmallVector<int64_t> first, second;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) {
        first.push_back(i);
        second.push_back(j);
      }
    auto rowsType = RankedTensorType::get({pairs, m}, in.getElementType());
    auto rows = [&](ArrayRef<int64_t> which) -> Value {
      auto vt = RankedTensorType::get({pairs}, rewriter.getI64Type());
      Value index = prim::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(vt, which));
      index = prim::BroadcastInDimOp::create(rewriter, loc, rowsType.clone(rewriter.getI64Type()), index,
                                             ArrayRef<int64_t>{0});
      return prim::GatherOp::create(rewriter, loc, rowsType, adaptor.getInput(), 0, index);
    };
    rewriter.replaceOp(op, distance(pb, rows(first), {0, 1}, rows(second), {0, 1}, {pairs, m}, {1},
                                    op.getP().convertToDouble()));
    return success();
  }
};

/// renorm: per slice along dim, the p-norm over the other dims; slices whose
/// norm exceeds maxnorm scaled by maxnorm / (norm + 1e-7), in the
/// accumulate type.
struct RenormToPrim : OpConversionPattern<graph::RenormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::RenormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    int64_t dim = op.getDim();
    Value x = pb.convert(adaptor.getInput(), accumulatorType(type.getElementType()));
    RankedTensorType t = tensorType(x);
    SmallVector<int64_t> others;
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (i != dim)
        others.push_back(i);
    // [size of dim]; a 1-D input's slices are its elements: |x| (eager's)
    Value norm = others.empty() ? (Value)prim::AbsOp::create(rewriter, loc, t, x)
                                : vectorNorm(pb, x, others, op.getP().convertToDouble());
    RankedTensorType nt = tensorType(norm);
    Pointwise n{pb, nt};
    double maxnorm = op.getMaxnorm().convertToDouble();
    Value factor = n.select(n.cmp<prim::GtOp>(norm, n.c(maxnorm)), n.div(n.c(maxnorm), n.add(norm, n.c(1e-7))),
                            n.c(1.0));
    Value r = prim::MulOp::create(rewriter, loc, t, x, pb.broadcastKept(factor, t, {dim}));
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

/// Elements (shape S) against K candidates (1-d) along a new last dim: the
/// candidates compared there and reduced.
struct Against {
  PrimBuilder &pb;
  RankedTensorType wide;  // S + [K], in the compared type
  int64_t rank;           // of S

  static Against of(PrimBuilder &pb, Value x, Value candidates, Type compared) {
    SmallVector<int64_t> shape(tensorType(x).getShape());
    int64_t rank = shape.size();
    shape.push_back(tensorType(candidates).getDimSize(0));
    return {pb, RankedTensorType::get(shape, compared), rank};
  }
  Value elements(Value x) { return pb.broadcastKept(pb.convert(x, wide.getElementType()), wide, iotaDims(0, rank)); }
  Value candidates(Value c) {
    return pb.broadcastKept(pb.convert(c, wide.getElementType()), wide, {rank});
  }
};

struct IsinToPrim : OpConversionPattern<graph::IsinOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::IsinOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    Type common = promoteTypes(tensorType(adaptor.getElements()).getElementType(),
                               tensorType(adaptor.getTestElements()).getElementType());
    Against w = Against::of(pb, adaptor.getElements(), adaptor.getTestElements(), common);
    Value eq = prim::EqOp::create(rewriter, loc, w.wide.clone(rewriter.getI1Type()), w.elements(adaptor.getElements()),
                                  w.candidates(adaptor.getTestElements()));
    // any, as 0/1 in i32: no candidates reduce to INT_MIN, not > 0
    Value r = reduce<prim::ReduceMaxOp>(pb, pb.convert(eq, rewriter.getI32Type()), {w.rank});
    RankedTensorType rt = tensorType(r);
    r = prim::GtOp::create(rewriter, loc, rt.clone(rewriter.getI1Type()), r, pb.splat(rt, 0));
    if (op.getInvert())
      r = prim::NotOp::create(rewriter, loc, tensorType(r), r);
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct BucketizeToPrim : OpConversionPattern<graph::BucketizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::BucketizeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    Type common = promoteTypes(tensorType(adaptor.getInput()).getElementType(),
                               tensorType(adaptor.getBoundaries()).getElementType());
    Against w = Against::of(pb, adaptor.getInput(), adaptor.getBoundaries(), common);
    Value x = w.elements(adaptor.getInput()), bounds = w.candidates(adaptor.getBoundaries());
    RankedTensorType i1 = w.wide.clone(rewriter.getI1Type());
    Value below = op.getRight() ? (Value)prim::LeOp::create(rewriter, loc, i1, bounds, x)
                                : (Value)prim::LtOp::create(rewriter, loc, i1, bounds, x);
    if (isa<FloatType>(common))  // NaN sorts after every boundary
      below = prim::OrOp::create(rewriter, loc, i1, below, prim::NeOp::create(rewriter, loc, i1, x, x));
    Value r = reduce<prim::ReduceSumOp>(pb, pb.convert(below, op.getType().getElementType()), {w.rank});
    rewriter.replaceOp(op, r);
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
  // The registry's patterns of the family (GraphOps.td, GraphFamilyOps.td), generated by dyn-tblgen.
#define GEN_COMPOSITEREDUCTIONS_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
