//===- Scans.cpp - cumsum, cumprod, cummax, cummin, logcumsumexp ----------===//
//
// An inclusive scan along dim d is a reduction over a triangular mask: the
// input is spread over a new dim j next to d (the scanned position i keeps
// d), elements with j > i are replaced by the identity of the combination, and
// j is reduced away. prim has no scan, and this form needs none: it fuses into
// one kernel per scan (an inner loop of n per element: O(n^2) work in the
// scanned dim, fine for the sequence lengths and feature dims models scan,
// slow for a scan over tens of thousands of elements; docs/ops.md).
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

/// The input spread over [..., i, j, ...] (i at d, j at d + 1) and the mask j <= i.
struct Spread {
  Value y, mask;
  RankedTensorType wide;
  int64_t d;
};

Spread spread(PrimBuilder &pb, Value x, int64_t d) {
  RankedTensorType t = tensorType(x);
  SmallVector<int64_t> shape(t.getShape());
  shape.insert(shape.begin() + d, t.getDimSize(d));
  RankedTensorType wide = RankedTensorType::get(shape, t.getElementType());
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < t.getRank(); ++i)
    dims.push_back(i < d ? i : i + 1);
  Value y = prim::BroadcastInDimOp::create(pb.b, pb.loc, wide, x, dims);
  RankedTensorType positions = wide.clone(pb.b.getI64Type());
  Value i = prim::IotaOp::create(pb.b, pb.loc, positions, d);
  Value j = prim::IotaOp::create(pb.b, pb.loc, positions, d + 1);
  Value mask = prim::LeOp::create(pb.b, pb.loc, wide.clone(pb.b.getI1Type()), j, i);
  return {y, mask, wide, d};
}

/// A splat of the identity of `kind` (the smallest or largest value for max and min).
Value identity(PrimBuilder &pb, RankedTensorType type, graph::ScanKind kind) {
  Type et = type.getElementType();
  switch (kind) {
  case graph::ScanKind::sum:
    return pb.splat(type, 0.0);
  case graph::ScanKind::prod:
    return pb.splat(type, 1.0);
  default:
    break;
  }
  bool lowest = kind == graph::ScanKind::max || kind == graph::ScanKind::logsumexp;
  if (isa<FloatType>(et))
    return pb.splat(type, lowest ? -INFINITY : INFINITY);
  APInt v = integerExtreme(et, lowest);
  return prim::ConstantOp::create(pb.b, pb.loc,
                                  DenseElementsAttr::get(type, IntegerAttr::get(et, v)));
}

/// A max of +-inf taken as 0 (logsumexp's shift).
Value safeMax(PrimBuilder &pb, Value m) {
  RankedTensorType mt = tensorType(m);
  Value infinite = prim::EqOp::create(pb.b, pb.loc, mt.clone(pb.b.getI1Type()),
                                      prim::AbsOp::create(pb.b, pb.loc, mt, m),
                                      pb.splat(mt, INFINITY));
  return prim::SelectOp::create(pb.b, pb.loc, mt, infinite, pb.splat(mt, 0.0), m);
}

/// Combines the masked elements over j with `Reduce`: the result has the input's shape.
template <typename Reduce>
Value reduceMasked(PrimBuilder &pb, const Spread &s, Value values, Value fill) {
  RankedTensorType vt = tensorType(values);
  Value masked = prim::SelectOp::create(pb.b, pb.loc, vt, s.mask, values, fill);
  SmallVector<int64_t> shape(vt.getShape());
  shape.erase(shape.begin() + s.d + 1);
  return Reduce::create(pb.b, pb.loc, RankedTensorType::get(shape, vt.getElementType()), masked,
                        ArrayRef<int64_t>{s.d + 1});
}

/// A value indexed by i broadcast over j.
Value overJ(PrimBuilder &pb, const Spread &s, Value v) {
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < s.wide.getRank(); ++i)
    if (i != s.d + 1)
      dims.push_back(i);
  RankedTensorType wide = s.wide;
  return prim::BroadcastInDimOp::create(pb.b, pb.loc, wide.clone(tensorType(v).getElementType()), v,
                                        dims);
}

/// The scan of x (already in its computation type).
Value scan(PrimBuilder &pb, Value x, graph::ScanKind kind, int64_t d, const Spread &s) {
  RankedTensorType w = s.wide;
  switch (kind) {
  case graph::ScanKind::sum:
    return reduceMasked<prim::ReduceSumOp>(pb, s, s.y, identity(pb, w, kind));
  case graph::ScanKind::prod:
    return reduceMasked<prim::ReduceProdOp>(pb, s, s.y, identity(pb, w, kind));
  case graph::ScanKind::max:
    return reduceMasked<prim::ReduceMaxOp>(pb, s, s.y, identity(pb, w, kind));
  case graph::ScanKind::min:
    return reduceMasked<prim::ReduceMinOp>(pb, s, s.y, identity(pb, w, kind));
  case graph::ScanKind::logsumexp:
    break;
  }
  // max + log(sum(exp(x - max))) over j <= i, a max of +-inf taken as 0
  // (logsumexp's rule); the max is used inside the sum and after it.
  Value m = safeMax(pb, reduceMasked<prim::ReduceMaxOp>(pb, s, s.y, identity(pb, w, kind)));
  RankedTensorType mt = tensorType(m);
  Value e = prim::ExpOp::create(pb.b, pb.loc, w,
                                prim::SubOp::create(pb.b, pb.loc, w, s.y, overJ(pb, s, m)));
  Value sum = reduceMasked<prim::ReduceSumOp>(pb, s, e, pb.splat(w, 0.0));
  return prim::AddOp::create(pb.b, pb.loc, mt, prim::LogOp::create(pb.b, pb.loc, mt, sum), m);
}

/// The type a scan computes in: f32 for f16/bf16 (eager accumulates in
/// float), i32 for booleans (max and min only).
Type computeType(OpBuilder &b, Type et) {
  if (et.isF16() || et.isBF16())
    return b.getF32Type();
  if (et.isInteger(1))
    return b.getI32Type();
  return et;
}

struct CumulativeToPrim : OpConversionPattern<graph::CumulativeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::CumulativeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Type et = op.getType().getElementType();
    Value x = pb.convert(adaptor.getInput(), computeType(rewriter, et));
    if (tensorType(x).getNumElements() == 0) {
      rewriter.replaceOp(op, pb.convert(x, et));
      return success();
    }
    Spread s = spread(pb, x, op.getDim());
    rewriter.replaceOp(op, pb.convert(scan(pb, x, op.getKind(), op.getDim(), s), et));
    return success();
  }
};

/// cummax/cummin indices: the last j <= i where x[j] is the running value at
/// i, or is NaN (then the running value is NaN: eager's kernel moves the
/// index to every NaN it meets, and to every value >= (<=) the running one).
struct CumulativeIndexToPrim : OpConversionPattern<graph::CumulativeIndexOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::CumulativeIndexOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    x = pb.convert(x, computeType(rewriter, tensorType(x).getElementType()));
    if (tensorType(x).getNumElements() == 0) {
      rewriter.replaceOp(op, pb.splat(op.getType(), 0));
      return success();
    }
    int64_t d = op.getDim();
    Spread s = spread(pb, x, d);
    Value running = overJ(pb, s, scan(pb, x, op.getKind(), d, s));
    RankedTensorType boolType = s.wide.clone(rewriter.getI1Type());
    Value hit = prim::EqOp::create(rewriter, loc, boolType, s.y, running);
    if (isa<FloatType>(s.wide.getElementType()))
      hit = prim::OrOp::create(rewriter, loc, boolType, hit,
                               prim::NeOp::create(rewriter, loc, boolType, s.y, s.y));
    RankedTensorType positions = s.wide.clone(rewriter.getI64Type());
    Value j = prim::IotaOp::create(rewriter, loc, positions, d + 1);
    Value candidates = prim::SelectOp::create(rewriter, loc, positions, hit, j,
                                              pb.splat(positions, -1.0));
    rewriter.replaceOp(op, reduceMasked<prim::ReduceMaxOp>(pb, s, candidates,
                                                           pb.splat(positions, -1.0)));
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateScanPatterns(RewritePatternSet &patterns) {
  // The registry's (GraphFamilyOps.td: cumulative, cumulative_index), generated by dyn-tblgen.
#define GEN_SCANS_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
