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

#include <cmath>

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

} // namespace

Value dyn::graph_to_prim::buildScatter(PrimBuilder &pb, Value input, Value indexIn, Value srcIn,
                                       graph::ScatterReduce kind, int64_t d, bool self, bool wraps) {
  OpBuilder &rewriter = pb.b;
  Location loc = pb.loc;
  RankedTensorType inType = tensorType(input);
  ArrayRef<int64_t> inShape = inType.getShape();
  ArrayRef<int64_t> indexShape = tensorType(indexIn).getShape();
  int64_t rank = inType.getRank();
  if (inType.getNumElements() == 0 || tensorType(indexIn).getNumElements() == 0)
    return input;  // nothing is written
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
  Value index = pb.convert(indexIn, i64);
  if (wraps) {  // a negative index counts from the end
    Pointwise p{pb, tensorType(index)};
    index = p.select(p.cmp<prim::LtOp>(index, p.c(0)), p.add(index, p.c((double)inShape[d])), index);
  }
  index = fitToInput(pb, index, indexShape, inShape, d, -1.0);
  Value mask = prim::EqOp::create(rewriter, loc, wideI64.clone(i1), spread(index),
                                  prim::IotaOp::create(rewriter, loc, wideI64, d));
  SmallVector<int64_t> reduced{d + 1};
  RankedTensorType resI64 = inType.clone(i64), resBool = inType.clone(i1);

  if (kind == graph::ScatterReduce::none) {
    // the last candidate k that matches, gathered from src
    Value k = prim::IotaOp::create(rewriter, loc, wideI64, d + 1);
    Value cand = prim::SelectOp::create(rewriter, loc, wideI64, mask, k, pb.splat(wideI64, -1.0));
    Value last = prim::ReduceMaxOp::create(rewriter, loc, resI64, cand, reduced);
    Value hit = prim::GeOp::create(rewriter, loc, resBool, last, pb.splat(resI64, 0.0));
    Value pos = prim::MaxOp::create(rewriter, loc, resI64, last, pb.splat(resI64, 0.0));
    Value src = fitToInput(pb, srcIn, indexShape, inShape, d, 0.0);
    Value picked = prim::GatherOp::create(rewriter, loc, inType, src, d, pos);
    return prim::SelectOp::create(rewriter, loc, inType, hit, picked, input);
  }

  Type et = inType.getElementType(), ct = computeType(rewriter, et);
  RankedTensorType res = inType.clone(ct), wide = RankedTensorType::get(wideShape, ct);
  Value src = fitToInput(pb, pb.convert(srcIn, ct), indexShape, inShape, d, 0.0);
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
  return pb.convert(combined, et);
}

namespace {

struct ScatterToPrim : OpConversionPattern<graph::ScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ScatterOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    rewriter.replaceOp(op, buildScatter(pb, adaptor.getInput(), adaptor.getIndex(), adaptor.getSrc(),
                                        op.getReduce(), op.getDim(), op.getIncludeSelf(), op.getWraps()));
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

/// index_add: source * alpha (rounded in the element type; an unsigned type
/// takes alpha modulo 2^width, as eager's conversion) summed in at the index,
/// broadcast along dim to source's shape.
struct IndexAddToPrim : OpConversionPattern<graph::IndexAddOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::IndexAddOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Value src = adaptor.getSource();
    RankedTensorType st = tensorType(src);
    Type et = st.getElementType();
    double alpha = op.getAlpha().convertToDouble();
    if (alpha != 1.0) {
      Attribute a;
      if (auto ft = dyn_cast<FloatType>(et))
        a = FloatAttr::get(ft, alpha);
      else
        a = IntegerAttr::get(et, APInt(et.getIntOrFloatBitWidth(), (uint64_t)(int64_t)alpha,
                                       /*isSigned=*/false, /*implicitTrunc=*/true));
      Value c = prim::ConstantOp::create(rewriter, op.getLoc(), DenseElementsAttr::get(st, a));
      src = prim::MulOp::create(rewriter, op.getLoc(), st, src, c);
    }
    int64_t d = op.getDim();
    RankedTensorType it = tensorType(adaptor.getIndex());
    Value index = prim::BroadcastInDimOp::create(rewriter, op.getLoc(), st.clone(it.getElementType()),
                                                 adaptor.getIndex(), ArrayRef<int64_t>{d});
    rewriter.replaceOp(op, buildScatter(pb, adaptor.getInput(), index, src, graph::ScatterReduce::sum, d,
                                        /*includeSelf=*/true, /*wraps=*/false));
    return success();
  }
};

/// masked_scatter: the running count k of the set positions up to each one (a
/// triangular masked sum over [n, n]) picks source[k - 1] where the mask is set.
struct MaskedScatterToPrim : OpConversionPattern<graph::MaskedScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::MaskedScatterOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t n = type.getNumElements();
    if (n == 0) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    Type et = type.getElementType(), i64 = rewriter.getI64Type(), i1 = rewriter.getI1Type();
    auto flat = RankedTensorType::get({n}, et);
    auto flatI64 = RankedTensorType::get({n}, i64), square = RankedTensorType::get({n, n}, i64);
    auto flatten = [&](Value v, Type t) -> Value {
      return tensorType(v).getRank() == 1 ? v : prim::ReshapeOp::create(rewriter, loc, RankedTensorType::get({n}, t), v);
    };
    Value m = flatten(adaptor.getMask(), i1), x = flatten(adaptor.getInput(), et);
    Value counts = pb.convert(m, i64);  // [j]
    Value wide = prim::BroadcastInDimOp::create(rewriter, loc, square, counts, ArrayRef<int64_t>{1});
    Value upTo = prim::LeOp::create(rewriter, loc, square.clone(i1), prim::IotaOp::create(rewriter, loc, square, 1),
                                    prim::IotaOp::create(rewriter, loc, square, 0));  // j <= i
    Value kept = prim::SelectOp::create(rewriter, loc, square, upTo, wide, pb.splat(square, 0.0));
    Value k = prim::ReduceSumOp::create(rewriter, loc, flatI64, kept, ArrayRef<int64_t>{1});
    Pointwise p{pb, flatI64};
    k = p.max(p.sub(k, p.c(1.0)), p.c(0.0));
    Value picked = prim::GatherOp::create(rewriter, loc, flat, adaptor.getSource(), 0, k);
    Value r = prim::SelectOp::create(rewriter, loc, flat, m, picked, x);
    if (type.getRank() != 1)
      r = prim::ReshapeOp::create(rewriter, loc, type, r);
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// histc: each element's bin (or -1: none) in the input's type as eager
/// computes it, then a scatter-sum of ones into zeros.
struct HistcToPrim : OpConversionPattern<graph::HistcOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::HistcOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType in = tensorType(adaptor.getInput()), type = op.getType();
    int64_t n = in.getNumElements(), bins = op.getBins();
    if (n == 0) {
      rewriter.replaceOp(op, pb.splat(type, 0.0));
      return success();
    }
    Type et = in.getElementType();
    Value v = adaptor.getInput();
    if (in.getRank() != 1)
      v = prim::ReshapeOp::create(rewriter, loc, RankedTensorType::get({n}, et), v);
    double lo = op.getMin().convertToDouble(), hi = op.getMax().convertToDouble();
    if (isa<IntegerType>(et)) {
      // CUDA's kernel on integers (the CPU's refuses them): the bounds converted to the input's type,
      // the bin (x - min) * bins / (max - min) in int64 arithmetic, truncated
      et = rewriter.getI64Type();
      v = pb.convert(v, et);
      lo = std::trunc(lo);
      hi = std::trunc(hi);
    }
    auto vec = RankedTensorType::get({n}, et), scalar = RankedTensorType::get({}, et);
    Pointwise p{pb, vec};
    Value low, high;
    if (lo != hi) {
      low = p.c(lo);
      high = p.c(hi);
    } else {  // the elements' own range, widened by 1 where it is one value
      Value mn = prim::ReduceMinOp::create(rewriter, loc, scalar, v, ArrayRef<int64_t>{0});
      Value mx = prim::ReduceMaxOp::create(rewriter, loc, scalar, v, ArrayRef<int64_t>{0});
      Pointwise s{pb, scalar};
      Value same = s.cmp<prim::EqOp>(mn, mx);
      low = pb.broadcast(s.select(same, s.sub(mn, s.c(1.0)), mn), {n});
      high = pb.broadcast(s.select(same, s.add(mx, s.c(1.0)), mx), {n});
    }
    Value bin = p.div(p.mul(p.sub(v, low), p.c((double)bins)), p.sub(high, low));
    auto idx = RankedTensorType::get({n}, rewriter.getI64Type());
    Pointwise q{pb, idx};
    Value pos = q.select(p.cmp<prim::EqOp>(v, high), q.c((double)(bins - 1)), pb.convert(bin, idx.getElementType()));
    Value inside = prim::AndOp::create(rewriter, loc, idx.clone(rewriter.getI1Type()), p.cmp<prim::GeOp>(v, low),
                                       p.cmp<prim::LeOp>(v, high));
    pos = q.select(inside, pos, q.c(-1.0));
    Value one = pb.splat(RankedTensorType::get({n}, type.getElementType()), 1.0);
    rewriter.replaceOp(op, buildScatter(pb, pb.splat(type, 0.0), pos, one, graph::ScatterReduce::sum, 0,
                                        /*includeSelf=*/true, /*wraps=*/false));
    return success();
  }
};

/// embedding_bag: each entry's bag is the number of offsets at or before it,
/// less one (-1, nothing written, for padding_idx and, with
/// include_last_offset, entries from the last offset on); the weight rows
/// gathered (times per_sample_weights) are scattered into zeros by bag.
struct EmbeddingBagToPrim : OpConversionPattern<graph::EmbeddingBagOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::EmbeddingBagOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType type = op.getType(), wt = tensorType(adaptor.getWeight());
    int64_t n = tensorType(adaptor.getInput()).getDimSize(0), nb = tensorType(adaptor.getOffsets()).getDimSize(0);
    int64_t bags = type.getDimSize(0), dim = type.getDimSize(1);
    if (n == 0 || type.getNumElements() == 0) {
      rewriter.replaceOp(op, pb.splat(type, 0.0));
      return success();
    }
    Type i64 = rewriter.getI64Type(), i1 = rewriter.getI1Type();
    auto grid = RankedTensorType::get({n, nb}, i64);
    auto entries = RankedTensorType::get({n}, i64);
    Value input = pb.convert(adaptor.getInput(), i64);
    Value offs = prim::BroadcastInDimOp::create(rewriter, loc, grid, pb.convert(adaptor.getOffsets(), i64),
                                                ArrayRef<int64_t>{1});
    Value started = prim::LeOp::create(rewriter, loc, grid.clone(i1), offs, prim::IotaOp::create(rewriter, loc, grid, 0));
    Pointwise p{pb, entries};
    Value bag = p.sub(prim::ReduceSumOp::create(rewriter, loc, entries, pb.convert(started, i64), ArrayRef<int64_t>{1}),
                      p.c(1.0));
    if (op.getIncludeLastOffset())
      bag = p.select(p.cmp<prim::LtOp>(bag, p.c((double)bags)), bag, p.c(-1.0));
    if (op.getPaddingIdx() >= 0)
      bag = p.select(p.cmp<prim::EqOp>(input, p.c((double)op.getPaddingIdx())), p.c(-1.0), bag);
    auto rowsType = RankedTensorType::get({n, dim}, wt.getElementType());
    auto wide = [&](Value v, Type et) {
      return prim::BroadcastInDimOp::create(rewriter, loc, rowsType.clone(et), v, ArrayRef<int64_t>{0});
    };
    Value rows = prim::GatherOp::create(rewriter, loc, rowsType, adaptor.getWeight(), 0, wide(input, i64));
    if (Value w = adaptor.getPerSampleWeights())
      rows = prim::MulOp::create(rewriter, loc, rowsType, rows, wide(w, wt.getElementType()));
    StringRef mode = op.getMode();
    graph::ScatterReduce kind = mode == "sum"    ? graph::ScatterReduce::sum
                                : mode == "mean" ? graph::ScatterReduce::mean
                                                 : graph::ScatterReduce::amax;
    rewriter.replaceOp(op, buildScatter(pb, pb.splat(type, 0.0), wide(bag, i64), rows, kind, 0,
                                        /*includeSelf=*/false, /*wraps=*/false));
    return success();
  }
};

/// v reshaped to `type` (v itself where it has the type).
Value reshapeTo(PrimBuilder &pb, Value v, RankedTensorType type) {
  return v.getType() == type ? v : prim::ReshapeOp::create(pb.b, pb.loc, type, v).getResult();
}

/// The stacked indices of masked_index / masked_index_put ([k, *B]) as one
/// linear index over the input's dims dim..dim+k-1 ([*B]), each clamped into
/// [lo(size), size - 1] and, where `wrap`, a negative one counted from the end.
Value linearIndex(PrimBuilder &pb, Value indices, ArrayRef<int64_t> shape, int64_t d, bool wrap) {
  RankedTensorType it = tensorType(indices);
  int64_t k = it.getDimSize(0);
  auto b = RankedTensorType::get(it.getShape().drop_front(), it.getElementType());
  Pointwise p{pb, b};
  Value linear;
  for (int64_t j = 0; j < k; ++j) {
    SmallVector<int64_t> start(it.getRank(), 0), stride(it.getRank(), 1);
    start[0] = j;
    SmallVector<int64_t> one(it.getShape());
    one[0] = 1;
    Value t = k == 1 ? indices
                     : prim::SliceOp::create(pb.b, pb.loc, RankedTensorType::get(one, it.getElementType()),
                                             indices, start, stride).getResult();
    t = reshapeTo(pb, t, b);
    double n = (double)shape[d + j];
    t = p.min(p.max(t, p.c(wrap ? -n : 0.0)), p.c(n - 1));
    if (wrap)
      t = p.select(p.cmp<prim::LtOp>(t, p.c(0.0)), p.add(t, p.c(n)), t);
    int64_t step = 1;
    for (int64_t e = d + j + 1; e < d + k; ++e)
      step *= shape[e];
    if (step != 1)
      t = p.mul(t, p.c((double)step));
    linear = linear ? p.add(linear, t) : t;
  }
  return linear;
}

/// The input with dims d..d+k-1 flattened into one, and the linear index [*B]
/// broadcast along that dim to [pre, nb, post].
std::pair<Value, Value> flattenIndexed(PrimBuilder &pb, Value input, Value linear, int64_t d, int64_t k) {
  RankedTensorType t = tensorType(input);
  ArrayRef<int64_t> shape = t.getShape();
  SmallVector<int64_t> flat(shape.take_front(d)), at(shape.take_front(d));
  int64_t m = 1;
  for (int64_t e = d; e < d + k; ++e)
    m *= shape[e];
  int64_t nb = tensorType(linear).getNumElements();
  flat.push_back(m);
  at.push_back(nb);
  flat.append(shape.begin() + d + k, shape.end());
  at.append(shape.begin() + d + k, shape.end());
  Value x = reshapeTo(pb, input, t.clone(flat));
  Value l = reshapeTo(pb, linear, RankedTensorType::get({nb}, pb.b.getI64Type()));
  Value index = prim::BroadcastInDimOp::create(pb.b, pb.loc, RankedTensorType::get(at, pb.b.getI64Type()), l,
                                               ArrayRef<int64_t>{d});
  return {x, index};
}

/// masked_index: the flattened indexed dims gathered at the clamped linear
/// index, `fill` where the mask is false.
struct MaskedIndexToPrim : OpConversionPattern<graph::MaskedIndexOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::MaskedIndexOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    double fill = op.getFill().convertToDouble();
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, pb.splat(type, fill));
      return success();
    }
    int64_t d = op.getDim(), k = tensorType(adaptor.getIndices()).getDimSize(0);
    ArrayRef<int64_t> shape = tensorType(adaptor.getInput()).getShape();
    Value linear = linearIndex(pb, adaptor.getIndices(), shape, d, /*wrap=*/false);
    auto [x, index] = flattenIndexed(pb, adaptor.getInput(), linear, d, k);
    RankedTensorType it = tensorType(index);
    Value r = prim::GatherOp::create(rewriter, loc, it.clone(type.getElementType()), x, d, index);
    r = reshapeTo(pb, r, type);
    Value mask = pb.broadcast(adaptor.getMask(), type.getShape());
    rewriter.replaceOpWithNewOp<prim::SelectOp>(op, type, mask, r, pb.splat(type, fill));
    return success();
  }
};

/// masked_index_put: values (0 where the mask is false) summed in at the
/// clamped, wrapped linear index of the flattened indexed dims.
struct MaskedIndexPutToPrim : OpConversionPattern<graph::MaskedIndexPutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::MaskedIndexPutOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    RankedTensorType it = tensorType(adaptor.getIndices());
    if (type.getNumElements() == 0 || it.getNumElements() == 0) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    int64_t d = op.getDim(), k = it.getDimSize(0);
    ArrayRef<int64_t> shape = type.getShape();
    Value linear = linearIndex(pb, adaptor.getIndices(), shape, d, /*wrap=*/true);
    auto [x, index] = flattenIndexed(pb, adaptor.getInput(), linear, d, k);
    // values over the indexed shape [pre, *B, post], then as [pre, nb, post]
    SmallVector<int64_t> vshape(shape.take_front(d));
    llvm::append_range(vshape, it.getShape().drop_front());
    vshape.append(shape.begin() + d + k, shape.end());
    auto vt = RankedTensorType::get(vshape, type.getElementType());
    Value v = prim::SelectOp::create(rewriter, loc, vt, pb.broadcast(adaptor.getMask(), vshape),
                                     pb.broadcast(adaptor.getValues(), vshape), pb.splat(vt, 0.0));
    v = reshapeTo(pb, v, tensorType(index).clone(type.getElementType()));
    graph::ScatterReduce kind = graph::ScatterReduce::sum;
    Type et = type.getElementType();
    if (et.isInteger(1)) {  // eager's boolean sum is an or: the maximum of bytes (no count to overflow)
      Type byte = rewriter.getIntegerType(8);
      x = pb.convert(x, byte);
      v = pb.convert(v, byte);
      kind = graph::ScatterReduce::amax;
    }
    Value r = buildScatter(pb, x, index, v, kind, d, /*includeSelf=*/true, /*wraps=*/false);
    rewriter.replaceOp(op, reshapeTo(pb, pb.convert(r, et), type));
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateScatterPatterns(RewritePatternSet &patterns) {
  // The registry's patterns of the family (GraphScatterOps.td), generated by dyn-tblgen.
#define GEN_SCATTER_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
