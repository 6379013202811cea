//===- Normalization.cpp - softmax and the normalization ops ----------------===//
//
// Numerically stable softmax: max, exp, sum and division. layer_norm,
// rms_norm, batch_norm, instance_norm and group_norm: the moments over the
// normalized dims (two reductions: the mean, then the sum of squared
// deviations; batch norm's across the outer dims in one pass, shifted by the
// first samples' mean), the normalization and the affine part, computed in f32 for
// f16/bf16 inputs and rounded once at the end, as eager's kernels do.
// batch_norm and instance_norm in training also return the updated running
// statistics: (1 - m) * old + m * batch, with the unbiased batch variance.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

#include "dyn/Dialect/Graph/IR/BatchNormShift.h"

#include <cmath>

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
    if constexpr (!std::is_same_v<GraphOp, graph::LogSoftmaxOp>)
      result = prim::DivOp::create(rewriter, loc, type, exp, sumB);
    else
      result = prim::SubOp::create(rewriter, loc, type, shifted,
                                   prim::LogOp::create(rewriter, loc, type, sumB));
    if constexpr (std::is_same_v<GraphOp, graph::SafeSoftmaxOp>) {
      // a row's maximum is -inf only where every element is
      Value none = prim::EqOp::create(rewriter, loc, reducedType.clone(rewriter.getI1Type()), max,
                                      pb.splatLike(max, -INFINITY));
      result = prim::SelectOp::create(rewriter, loc, type,
                                      pb.broadcastKept(none, type.clone(rewriter.getI1Type()), keptDims),
                                      pb.splatLike(result, 0.0), result);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};
using SafeSoftmaxToPrim = SoftmaxToPrim<graph::SafeSoftmaxOp>;

/// Where eager's kernels compute: f32 for f16/bf16, else the input's type.
Type computeType(Type et) {
  if (et.isF16() || et.isBF16())
    return Float32Type::get(et.getContext());
  return et;
}

/// The moments of `x` over `dims`: `sumSquares` of the deviations and `mean`
/// (both with `dims` removed); `centered` (x - mean, x's shape) where the
/// moments' own computation made it.
struct Moments {
  Value input, mean, centered, sumSquares;
  RankedTensorType reducedType;
  SmallVector<int64_t> keptDims;
  int64_t count = 1; // the reduced elements per slice, where all reduced dims are static
  Value dynamicCount; // else the count at run time (reducedType): a sum of ones, fused with the sums
};

/// The reduced elements per slice minus `minus`, as a tensor like `like` (of the moments' reduced type).
Value countOf(PrimBuilder &pb, const Moments &m, Value like, double minus = 0.0) {
  if (!m.dynamicCount)
    return pb.splatLike(like, (double)m.count - minus);
  if (minus == 0.0)
    return m.dynamicCount;
  return prim::SubOp::create(pb.b, pb.loc, m.reducedType, m.dynamicCount, pb.splatLike(like, minus));
}

/// Whether `dims` are the trailing dims of a rank-`rank` tensor: each reduced
/// slice is a row, which a kernel reads twice from its cache.
bool trailing(ArrayRef<int64_t> dims, int64_t rank) {
  for (auto [i, d] : llvm::enumerate(llvm::reverse(dims)))
    if (d != rank - 1 - (int64_t)i)
      return false;
  return true;
}

Moments moments(PrimBuilder &pb, Value x, ArrayRef<int64_t> dims) {
  OpBuilder &b = pb.b;
  RankedTensorType type = tensorType(x);
  Moments m;
  m.input = x;
  SmallVector<int64_t> reducedShape;
  bool dynamic = false;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (llvm::is_contained(dims, i)) {
      dynamic |= type.isDynamicDim(i);
      m.count *= type.isDynamicDim(i) ? 1 : type.getDimSize(i);
    } else {
      reducedShape.push_back(type.getDimSize(i));
      m.keptDims.push_back(i);
    }
  }
  m.reducedType = RankedTensorType::get(reducedShape, type.getElementType());
  // the values of a channel in each sample (0 where a reduced dim other than the batch is `?`)
  int64_t perSample = 1;
  for (int64_t d : dims)
    if (d != 0)
      perSample *= type.isDynamicDim(d) ? 0 : type.getDimSize(d);
  std::optional<int64_t> rows;
  if (!trailing(dims, type.getRank()) && llvm::is_contained(dims, 0) &&
      llvm::all_of(m.keptDims, [&](int64_t i) { return !type.isDynamicDim(i); }))
    rows = graph::batchNormShiftRows(type.getDimSize(0), perSample);
  if (dynamic) // batch statistics over a runtime batch: the count is a sum of ones over the same dims
    m.dynamicCount = prim::ReduceSumOp::create(b, pb.loc, m.reducedType, pb.splatLike(x, 1.0), dims);
  if (rows) {
    // Batch norm's statistics (a reduction across the outer dims, each pass a
    // full read of x) in one pass (BatchNormShift.h): the sums of d = x - k
    // and of d^2, sibling reductions of one kernel, k the mean of the first
    // samples (a small reduction); clamped at 0.
    SmallVector<int64_t> start(type.getRank(), 0), stride(type.getRank(), 1), firstShape(type.getShape());
    firstShape[0] = *rows;
    Value first = prim::SliceOp::create(b, pb.loc, RankedTensorType::get(firstShape, type.getElementType()),
                                        x, start, stride);
    Value kSum = prim::ReduceSumOp::create(b, pb.loc, m.reducedType, first, dims);
    Value k = prim::DivOp::create(b, pb.loc, m.reducedType, kSum, pb.splatLike(kSum, (double)(*rows * perSample)));
    Value d = prim::SubOp::create(b, pb.loc, type, x, pb.broadcastKept(k, type, m.keptDims));
    Value s1 = prim::ReduceSumOp::create(b, pb.loc, m.reducedType, d, dims);
    Value dd = prim::MulOp::create(b, pb.loc, type, d, d);
    Value s2 = prim::ReduceSumOp::create(b, pb.loc, m.reducedType, dd, dims);
    Value shift = prim::DivOp::create(b, pb.loc, m.reducedType, s1, countOf(pb, m, s1));
    m.mean = prim::AddOp::create(b, pb.loc, m.reducedType, k, shift);
    Value ss = prim::SubOp::create(b, pb.loc, m.reducedType, s2,
                                   prim::MulOp::create(b, pb.loc, m.reducedType, s1, shift));
    m.sumSquares = prim::MaxOp::create(b, pb.loc, m.reducedType, ss, pb.splatLike(ss, 0.0));
    return m;
  }
  Value sum = prim::ReduceSumOp::create(b, pb.loc, m.reducedType, x, dims);
  m.mean = prim::DivOp::create(b, pb.loc, m.reducedType, sum, countOf(pb, m, sum));
  m.centered = prim::SubOp::create(b, pb.loc, type, x, pb.broadcastKept(m.mean, type, m.keptDims));
  Value sq = prim::MulOp::create(b, pb.loc, type, m.centered, m.centered);
  m.sumSquares = prim::ReduceSumOp::create(b, pb.loc, m.reducedType, sq, dims);
  return m;
}

/// 1 / sqrt(v + eps), elementwise.
Value invStd(PrimBuilder &pb, Value v, double eps) {
  RankedTensorType t = tensorType(v);
  Value plus = prim::AddOp::create(pb.b, pb.loc, t, v, pb.splatLike(v, eps));
  return prim::RsqrtOp::create(pb.b, pb.loc, t, plus);
}

/// (x - mean) / sqrt(var + eps) with the biased variance of the moments.
Value normalized(PrimBuilder &pb, const Moments &m, double eps) {
  RankedTensorType type = tensorType(m.input);
  Value centered = m.centered ? m.centered
                              : prim::SubOp::create(pb.b, pb.loc, type, m.input,
                                                    pb.broadcastKept(m.mean, type, m.keptDims)).getResult();
  Value var = prim::DivOp::create(pb.b, pb.loc, m.reducedType, m.sumSquares, countOf(pb, m, m.sumSquares));
  Value inv = invStd(pb, var, eps);
  return prim::MulOp::create(pb.b, pb.loc, type, centered, pb.broadcastKept(inv, type, m.keptDims));
}

/// `y * weight + bias` (either may be absent), the parameters converted to
/// y's type and broadcast with their dims at `dims` of y.
Value affine(PrimBuilder &pb, Value y, Value weight, Value bias, ArrayRef<int64_t> dims) {
  RankedTensorType type = tensorType(y);
  if (weight)
    y = prim::MulOp::create(
        pb.b, pb.loc, type, y,
        pb.broadcastKept(pb.convert(weight, type.getElementType()), type, dims));
  if (bias)
    y = prim::AddOp::create(
        pb.b, pb.loc, type, y,
        pb.broadcastKept(pb.convert(bias, type.getElementType()), type, dims));
  return y;
}

SmallVector<int64_t> range(int64_t from, int64_t to) {
  SmallVector<int64_t> r;
  for (int64_t i = from; i < to; ++i)
    r.push_back(i);
  return r;
}

/// The dims of a `[N, C, *]` tensor but the channel dim (batch_norm's).
SmallVector<int64_t> allButChannel(int64_t rank) {
  SmallVector<int64_t> r{0};
  r.append(range(2, rank));
  return r;
}

/// momentum * batch + (1 - momentum) * old, in old's type; `momentum` is a
/// tensor of old's type and shape.
Value runningUpdate(PrimBuilder &pb, Value old, Value batch, Value momentum) {
  RankedTensorType t = tensorType(old);
  Value one = pb.splat(t, 1.0);
  Value keep = prim::SubOp::create(pb.b, pb.loc, t, one, momentum);
  Value fresh =
      prim::MulOp::create(pb.b, pb.loc, t, momentum, pb.convert(batch, t.getElementType()));
  Value kept = prim::MulOp::create(pb.b, pb.loc, t, keep, old);
  return prim::AddOp::create(pb.b, pb.loc, t, fresh, kept);
}

/// The momentum as a tensor like `like`: the attribute, or 1 / count.
Value momentumTensor(PrimBuilder &pb, RankedTensorType like, std::optional<double> momentum,
                     Value count) {
  if (momentum)
    return pb.splat(like, *momentum);
  RankedTensorType scalar = RankedTensorType::get({}, like.getElementType());
  Value n = pb.convert(count, like.getElementType());
  Value f = prim::DivOp::create(pb.b, pb.loc, scalar, pb.splat(scalar, 1.0), n);
  return pb.broadcastKept(f, like, {});
}

/// Eval-mode batch norm: x * a + b per channel, a = w / sqrt(var + eps) and
/// b = bias - mean * a (eager's CPU kernel's form).
Value normalizeWithStats(PrimBuilder &pb, Value x, Value mean, Value var, Value weight,
                         Value bias, double eps) {
  RankedTensorType type = tensorType(x);
  Type ct = type.getElementType();
  RankedTensorType cType = RankedTensorType::get({type.getDimSize(1)}, ct);
  Value a = invStd(pb, pb.convert(var, ct), eps);
  if (weight)
    a = prim::MulOp::create(pb.b, pb.loc, cType, a, pb.convert(weight, ct));
  Value shift = prim::MulOp::create(pb.b, pb.loc, cType, pb.convert(mean, ct), a);
  Value bShift = bias ? prim::SubOp::create(pb.b, pb.loc, cType, pb.convert(bias, ct), shift)
                      : prim::NegOp::create(pb.b, pb.loc, cType, shift).getResult();
  Value y = prim::MulOp::create(pb.b, pb.loc, type, x, pb.broadcastKept(a, type, {1}));
  return prim::AddOp::create(pb.b, pb.loc, type, y, pb.broadcastKept(bShift, type, {1}));
}

struct LayerNormToPrim : OpConversionPattern<graph::LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::LayerNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Value x = pb.convert(adaptor.getInput(), computeType(type.getElementType()));
    SmallVector<int64_t> dims = range(type.getRank() - op.getNormalizedRank(), type.getRank());
    Value y = normalized(pb, moments(pb, x, dims), op.getEps().convertToDouble());
    y = affine(pb, y, adaptor.getWeight(), adaptor.getBias(), dims);
    rewriter.replaceOp(op, pb.convert(y, type.getElementType()));
    return success();
  }
};

struct RmsNormToPrim : OpConversionPattern<graph::RmsNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::RmsNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PrimBuilder pb{rewriter, loc};
    RankedTensorType type = op.getType();
    Value x = pb.convert(adaptor.getInput(), computeType(type.getElementType()));
    RankedTensorType cType = tensorType(x);
    SmallVector<int64_t> dims = range(type.getRank() - op.getNormalizedRank(), type.getRank());
    SmallVector<int64_t> kept = range(0, type.getRank() - op.getNormalizedRank());
    int64_t count = 1;
    SmallVector<int64_t> reducedShape;
    for (int64_t i = 0; i < type.getRank(); ++i) {
      if (llvm::is_contained(dims, i))
        count *= type.getDimSize(i);
      else
        reducedShape.push_back(type.getDimSize(i));
    }
    auto reducedType = RankedTensorType::get(reducedShape, cType.getElementType());
    Value sq = prim::MulOp::create(rewriter, loc, cType, x, x);
    Value sum = prim::ReduceSumOp::create(rewriter, loc, reducedType, sq, dims);
    Value ms = prim::DivOp::create(rewriter, loc, reducedType, sum,
                                   pb.splat(reducedType, (double)count));
    Value inv = invStd(pb, ms, op.getEps().convertToDouble());
    Value y = prim::MulOp::create(rewriter, loc, cType, x, pb.broadcastKept(inv, cType, kept));
    y = affine(pb, y, adaptor.getWeight(), Value(), dims);
    rewriter.replaceOp(op, pb.convert(y, type.getElementType()));
    return success();
  }
};

struct GroupNormToPrim : OpConversionPattern<graph::GroupNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::GroupNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PrimBuilder pb{rewriter, loc};
    RankedTensorType type = op.getType();
    Value x = pb.convert(adaptor.getInput(), computeType(type.getElementType()));
    RankedTensorType cType = tensorType(x);
    int64_t n = type.getDimSize(0), g = op.getGroups();
    // [N, C, *] -> [N, G, C/G * prod(*)]: each (sample, group) is a row
    auto grouped = RankedTensorType::get({n, g, cType.getNumElements() / std::max<int64_t>(n * g, 1)},
                                         cType.getElementType());
    Value rows = prim::ReshapeOp::create(rewriter, loc, grouped, x);
    Value y = normalized(pb, moments(pb, rows, {2}), op.getEps().convertToDouble());
    y = prim::ReshapeOp::create(rewriter, loc, cType, y);
    y = affine(pb, y, adaptor.getWeight(), adaptor.getBias(), {1});
    rewriter.replaceOp(op, pb.convert(y, type.getElementType()));
    return success();
  }
};

struct BatchNormToPrim : OpConversionPattern<graph::BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::BatchNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PrimBuilder pb{rewriter, loc};
    RankedTensorType type = op.getResult().getType();
    Value x = pb.convert(adaptor.getInput(), computeType(type.getElementType()));
    double eps = op.getEps().convertToDouble();
    if (!op.getTraining()) {
      Value y = normalizeWithStats(pb, x, adaptor.getRunningMean(), adaptor.getRunningVar(),
                                   adaptor.getWeight(), adaptor.getBias(), eps);
      rewriter.replaceOp(op, pb.convert(y, type.getElementType()));
      return success();
    }
    Moments m = moments(pb, x, allButChannel(type.getRank()));
    Value var = prim::DivOp::create(rewriter, loc, m.reducedType, m.sumSquares, countOf(pb, m, m.sumSquares));
    Value y = normalizeWithStats(pb, x, m.mean, var, adaptor.getWeight(), adaptor.getBias(), eps);
    SmallVector<Value> results{pb.convert(y, type.getElementType())};
    if (Value rm = adaptor.getRunningMean()) {
      Value rv = adaptor.getRunningVar();
      Value unbiased = prim::DivOp::create(rewriter, loc, m.reducedType, m.sumSquares,
                                           countOf(pb, m, m.sumSquares, 1.0));
      std::optional<double> mom;
      if (op.getMomentum())
        mom = op.getMomentum()->convertToDouble();
      Value nbt = adaptor.getNumBatchesTracked();
      results.push_back(runningUpdate(pb, rm, m.mean, momentumTensor(pb, tensorType(rm), mom, nbt)));
      results.push_back(
          runningUpdate(pb, rv, unbiased, momentumTensor(pb, tensorType(rv), mom, nbt)));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct InstanceNormToPrim : OpConversionPattern<graph::InstanceNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::InstanceNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PrimBuilder pb{rewriter, loc};
    RankedTensorType type = op.getResult().getType();
    Value x = pb.convert(adaptor.getInput(), computeType(type.getElementType()));
    double eps = op.getEps().convertToDouble();
    if (!op.getUseInputStats()) {
      Value y = normalizeWithStats(pb, x, adaptor.getRunningMean(), adaptor.getRunningVar(),
                                   adaptor.getWeight(), adaptor.getBias(), eps);
      rewriter.replaceOp(op, pb.convert(y, type.getElementType()));
      return success();
    }
    Moments m = moments(pb, x, range(2, type.getRank()));
    Value y = normalized(pb, m, eps);
    y = affine(pb, y, adaptor.getWeight(), adaptor.getBias(), {1});
    SmallVector<Value> results{pb.convert(y, type.getElementType())};
    if (Value rm = adaptor.getRunningMean()) {
      // eager updates a copy of the statistics per sample (batch_norm of
      // [1, N*C, *]) and keeps their mean over the samples
      Value rv = adaptor.getRunningVar();
      int64_t n = type.getDimSize(0);
      Value unbiased = prim::DivOp::create(rewriter, loc, m.reducedType, m.sumSquares,
                                           countOf(pb, m, m.sumSquares, 1.0));
      for (auto [old, batch] : {std::pair{rm, m.mean}, std::pair{rv, unbiased}}) {
        RankedTensorType st = tensorType(old);
        auto perSample = RankedTensorType::get({n, st.getDimSize(0)}, st.getElementType());
        Value upd = runningUpdate(pb, pb.broadcastKept(old, perSample, {1}), batch,
                                  pb.splat(perSample, op.getMomentum().convertToDouble()));
        Value sum = prim::ReduceSumOp::create(rewriter, loc, st, upd, ArrayRef<int64_t>{0});
        results.push_back(prim::DivOp::create(rewriter, loc, st, sum, pb.splat(st, (double)n)));
      }
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// The saved statistics of layer_norm and batch_norm: the moments' mean and
/// 1 / sqrt(var + eps) (a division, as eager's kernels, not rsqrt).
struct NormStatsToPrim : OpConversionPattern<graph::NormStatsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::NormStatsOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType in = tensorType(adaptor.getInput());
    Value x = pb.convert(adaptor.getInput(), computeType(in.getElementType()));
    Moments m = moments(pb, x, op.getDims());
    RankedTensorType t = m.reducedType;
    Value var = prim::DivOp::create(rewriter, loc, t, m.sumSquares, countOf(pb, m, m.sumSquares));
    Value plus = prim::AddOp::create(rewriter, loc, t, var, pb.splat(t, op.getEps().convertToDouble()));
    Value rstd = prim::DivOp::create(rewriter, loc, t, pb.splat(t, 1.0),
                                     prim::SqrtOp::create(rewriter, loc, t, plus));
    rewriter.replaceOp(op, {m.mean, rstd});
    return success();
  }
};

/// (grad - sum(grad * y, dim)) * y, f16/bf16 in f32 (eager's CPU kernel).
struct SoftmaxBackwardToPrim : OpConversionPattern<graph::SoftmaxBackwardOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::SoftmaxBackwardOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType(), compute = opmathType(type);
    int64_t dim = op.getDim();
    Pointwise p{pb, compute};
    Value g = p.in(adaptor.getGradOutput()), y = p.in(adaptor.getOutput());
    SmallVector<int64_t> kept, reduced;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (i != dim) {
        kept.push_back(i);
        reduced.push_back(type.getDimSize(i));
      }
    Value s = prim::ReduceSumOp::create(rewriter, op.getLoc(), compute.clone(reduced), p.mul(g, y),
                                        ArrayRef<int64_t>{dim});
    Value r = p.mul(p.sub(g, pb.broadcastKept(s, compute, kept)), y);
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateNormalizationPatterns(RewritePatternSet &patterns) {
  // The registry's patterns of the family (softmax, the norms, their backward ops), generated by dyn-tblgen.
#define GEN_NORMALIZATION_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
