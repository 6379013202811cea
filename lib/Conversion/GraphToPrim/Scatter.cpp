//===- Scatter.cpp - graph.scatter as a masked reduction ------------------===//
//
// A scatter along dim d writes src[q] at the result position p with
// p[d] = index[q] and p[e] = q[e] elsewhere. Read from the result's side it
// is a reduction: the K = index.size(d) candidates of a position p are
// spread over a new dim k next to d, those with index == p[d] are kept
// (the mask), the others replaced by the identity, and k is reduced away.
// Plain scatter keeps the last matching k (eager's CPU order) and gathers it.
//
// Only existing prim ops are used, so both targets run it the same way: one
// fused kernel per scatter, each result element reading its K candidates
// (no atomics, deterministic; O(input size x K) work, like the scans). An
// index out of [0, size) matches no position: nothing is written, nothing
// out of bounds is read.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

/// The type the combination computes in: f32 for f16/bf16 (eager's kernels
/// accumulate in float), else the element type.
Type computeType(OpBuilder &b, Type et) {
  return et.isF16() || et.isBF16() ? b.getF32Type() : et;
}

/// A splat of the identity of the combination (the lowest or highest value for amax and amin).
Value identity(PrimBuilder &pb, RankedTensorType type, graph::ScatterReduce kind) {
  switch (kind) {
  case graph::ScatterReduce::prod:
    return pb.splat(type, 1.0);
  case graph::ScatterReduce::amax:
  case graph::ScatterReduce::amin:
    break;
  default:
    return pb.splat(type, 0.0);
  }
  bool lowest = kind == graph::ScatterReduce::amax;
  Type et = type.getElementType();
  if (isa<FloatType>(et))
    return pb.splat(type, lowest ? -INFINITY : INFINITY);
  APInt v = integerExtreme(et, lowest);
  return prim::ConstantOp::create(pb.b, pb.loc,
                                  DenseElementsAttr::get(type, IntegerAttr::get(et, v)));
}

/// `v` (the index's shape) cut to the index's extent and padded with `fill`
/// to the input's extent in every dim but d.
Value fitToInput(PrimBuilder &pb, Value v, ArrayRef<int64_t> indexShape,
                 ArrayRef<int64_t> inputShape, int64_t d, double fill) {
  RankedTensorType t = tensorType(v);
  if (t.getShape() != indexShape) {
    SmallVector<int64_t> start(indexShape.size(), 0), stride(indexShape.size(), 1);
    v = prim::SliceOp::create(pb.b, pb.loc, RankedTensorType::get(indexShape, t.getElementType()), v,
                              start, stride);
  }
  SmallVector<int64_t> low(indexShape.size(), 0), high, shape;
  for (int64_t e = 0, r = indexShape.size(); e < r; ++e) {
    high.push_back(e == d ? 0 : inputShape[e] - indexShape[e]);
    shape.push_back(e == d ? indexShape[e] : inputShape[e]);
  }
  if (llvm::all_of(high, [](int64_t h) { return h == 0; }))
    return v;
  return prim::PadOp::create(pb.b, pb.loc, RankedTensorType::get(shape, t.getElementType()), v,
                             low, high, llvm::APFloat(fill));
}

struct ScatterToPrim : OpConversionPattern<graph::ScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ScatterOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    RankedTensorType inType = tensorType(input);
    ArrayRef<int64_t> inShape = inType.getShape();
    ArrayRef<int64_t> indexShape = tensorType(adaptor.getIndex()).getShape();
    int64_t d = op.getDim(), rank = inType.getRank();
    if (inType.getNumElements() == 0 || tensorType(adaptor.getIndex()).getNumElements() == 0) {
      rewriter.replaceOp(op, input);  // nothing is written
      return success();
    }
    Type i64 = rewriter.getI64Type(), i1 = rewriter.getI1Type();
    // [..., j, k, ...]: the result's dims with the K candidates next to d
    SmallVector<int64_t> wideShape(inShape);
    wideShape.insert(wideShape.begin() + d + 1, indexShape[d]);
    RankedTensorType wideI64 = RankedTensorType::get(wideShape, i64);
    SmallVector<int64_t> spreadDims;  // where a candidate-shaped tensor's dims go in the wide shape
    for (int64_t e = 0; e < rank; ++e)
      spreadDims.push_back(e < d ? e : e + 1);
    auto spread = [&](Value v) {
      return prim::BroadcastInDimOp::create(
          rewriter, loc, RankedTensorType::get(wideShape, tensorType(v).getElementType()), v,
          spreadDims);
    };
    Value index = pb.convert(adaptor.getIndex(), i64);
    if (op.getWraps()) {  // a negative index counts from the end
      Pointwise p{pb, tensorType(index)};
      index = p.select(p.cmp<prim::LtOp>(index, p.c(0)), p.add(index, p.c((double)inShape[d])), index);
    }
    index = fitToInput(pb, index, indexShape, inShape, d, -1.0);
    Value mask = prim::EqOp::create(rewriter, loc, wideI64.clone(i1), spread(index),
                                    prim::IotaOp::create(rewriter, loc, wideI64, d));
    SmallVector<int64_t> reduced{d + 1};
    RankedTensorType resI64 = inType.clone(i64), resBool = inType.clone(i1);
    graph::ScatterReduce kind = op.getReduce();

    if (kind == graph::ScatterReduce::none) {
      // the last candidate k that matches, gathered from src
      Value k = prim::IotaOp::create(rewriter, loc, wideI64, d + 1);
      Value cand = prim::SelectOp::create(rewriter, loc, wideI64, mask, k, pb.splat(wideI64, -1.0));
      Value last = prim::ReduceMaxOp::create(rewriter, loc, resI64, cand, reduced);
      Value hit = prim::GeOp::create(rewriter, loc, resBool, last, pb.splat(resI64, 0.0));
      Value pos = prim::MaxOp::create(rewriter, loc, resI64, last, pb.splat(resI64, 0.0));
      Value src = fitToInput(pb, adaptor.getSrc(), indexShape, inShape, d, 0.0);
      Value picked = prim::GatherOp::create(rewriter, loc, inType, src, d, pos);
      rewriter.replaceOpWithNewOp<prim::SelectOp>(op, inType, hit, picked, input);
      return success();
    }

    Type et = inType.getElementType(), ct = computeType(rewriter, et);
    RankedTensorType res = inType.clone(ct), wide = RankedTensorType::get(wideShape, ct);
    Value src = fitToInput(pb, pb.convert(adaptor.getSrc(), ct), indexShape, inShape, d, 0.0);
    Value masked = prim::SelectOp::create(rewriter, loc, wide, mask, spread(src),
                                          identity(pb, wide, kind));
    Value agg;
    switch (kind) {
    case graph::ScatterReduce::prod:
      agg = prim::ReduceProdOp::create(rewriter, loc, res, masked, reduced);
      break;
    case graph::ScatterReduce::amax:
      agg = prim::ReduceMaxOp::create(rewriter, loc, res, masked, reduced);
      break;
    case graph::ScatterReduce::amin:
      agg = prim::ReduceMinOp::create(rewriter, loc, res, masked, reduced);
      break;
    default:
      agg = prim::ReduceSumOp::create(rewriter, loc, res, masked, reduced);
      break;
    }
    // how many candidates each position received
    Value ones = prim::SelectOp::create(rewriter, loc, wideI64, mask, pb.splat(wideI64, 1.0),
                                        pb.splat(wideI64, 0.0));
    Value count = prim::ReduceSumOp::create(rewriter, loc, resI64, ones, reduced);
    Value x = pb.convert(input, ct);
    Pointwise p{pb, res};
    bool self = op.getIncludeSelf();
    Value combined;
    switch (kind) {
    case graph::ScatterReduce::sum:
      combined = self ? p.add(x, agg) : agg;
      break;
    case graph::ScatterReduce::prod:
      combined = self ? p.mul(x, agg) : agg;
      break;
    case graph::ScatterReduce::amax:
      combined = self ? p.max(x, agg) : agg;
      break;
    case graph::ScatterReduce::amin:
      combined = self ? p.min(x, agg) : agg;
      break;
    default: {  // mean: the sum over the count (the input counting as one with include_self)
      Value num = self ? p.add(x, agg) : agg;
      Value den = pb.convert(count, ct);
      if (self)
        den = p.add(den, p.c(1.0));
      den = p.max(den, p.c(1.0));
      combined = p.div(num, den);
      if (!isa<FloatType>(ct)) {  // integer division rounds down (prim's truncates)
        Value inexact = p.cmp<prim::NeOp>(p.mul(combined, den), num);
        Value negative = p.cmp<prim::LtOp>(num, p.c(0.0));
        Value down = prim::AndOp::create(rewriter, loc, res.clone(i1), inexact, negative);
        combined = p.select(down, p.sub(combined, p.c(1.0)), combined);
      }
      break;
    }
    }
    if (!self) {  // positions nothing is written to keep the input
      Value written = prim::GtOp::create(rewriter, loc, resBool, count, pb.splat(resI64, 0.0));
      combined = p.select(written, combined, x);
    }
    rewriter.replaceOp(op, pb.convert(combined, et));
    return success();
  }
};

/// as_strided_scatter: each result position's writer (the last element of src
/// in row-major order whose view position it is) is known from the shapes, so
/// the result is a gather of src there and the input elsewhere.
struct AsStridedScatterToPrim : OpConversionPattern<graph::AsStridedScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::AsStridedScatterOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type et = type.getElementType();
    ArrayRef<int64_t> size = op.getSize(), stride = op.getStride();
    int64_t n = type.getNumElements(), m = tensorType(adaptor.getSrc()).getNumElements();
    if (n == 0 || m == 0) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    SmallVector<int64_t> writer(n, -1);
    SmallVector<int64_t> q(size.size(), 0);
    for (int64_t k = 0; k < m; ++k) {
      int64_t pos = op.getStorageOffset();
      for (size_t i = 0; i < size.size(); ++i)
        pos += q[i] * stride[i];
      writer[pos] = k;
      for (int64_t i = (int64_t)size.size() - 1; i >= 0; --i) {  // the next q in row-major order
        if (++q[i] < size[i])
          break;
        q[i] = 0;
      }
    }
    SmallVector<int64_t> from;
    SmallVector<bool> written;
    for (int64_t w : writer) {
      from.push_back(std::max<int64_t>(w, 0));
      written.push_back(w >= 0);
    }
    auto flatType = RankedTensorType::get({n}, et);
    auto indexType = RankedTensorType::get({n}, rewriter.getI64Type());
    Value src = adaptor.getSrc();
    if (tensorType(src).getRank() != 1)
      src = prim::ReshapeOp::create(rewriter, loc, RankedTensorType::get({m}, et), src);
    Value index = prim::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(indexType, ArrayRef(from)));
    Value r = prim::GatherOp::create(rewriter, loc, flatType, src, 0, index);
    if (llvm::is_contained(written, false)) {
      auto maskType = RankedTensorType::get({n}, rewriter.getI1Type());
      Value mask = prim::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(maskType, ArrayRef(written)));
      Value x = adaptor.getInput();
      if (type.getRank() != 1)
        x = prim::ReshapeOp::create(rewriter, loc, flatType, x);
      r = prim::SelectOp::create(rewriter, loc, flatType, mask, r, x);
    }
    if (type.getRank() != 1)
      r = prim::ReshapeOp::create(rewriter, loc, type, r);
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateScatterPatterns(RewritePatternSet &patterns) {
  patterns.add<ScatterToPrim>(patterns.getContext());
  // The registry's (GraphScatterOps.td: as_strided_scatter), generated by dyn-tblgen.
#define GEN_SCATTER_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
