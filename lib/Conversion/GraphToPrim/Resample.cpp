//===- Resample.cpp - linear and bicubic resampling -----------------------===//
//
// graph.upsample is separable: each resampled dim in turn becomes a sum of
// gathers at constant source indices times constant weights, one of each per
// tap (2 for linear, 4 for bicubic). The indices and weights are computed
// here as eager's kernels compute them (aten/src/ATen/native/UpSample.h:
// area_pixel_compute_scale and _source_index, the cubic convolution
// coefficients with A = -0.75), in the accumulate type: float for float,
// f16 and bf16 (which resample in f32 and round once), double for f64.
// Everything is pointwise in the output: one fused kernel.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

/// One tap of a resampled dim: per output position, the source index read
/// and its weight.
template <typename T>
struct Tap {
  SmallVector<int64_t> index;
  SmallVector<T> weight;
};

/// area_pixel_compute_scale: (in - 1) / (out - 1) with align_corners, else
/// 1 / scale for a given scale, else in / out (in T's arithmetic).
template <typename T>
T sourceScale(int64_t in, int64_t out, bool alignCorners, double scale) {
  if (alignCorners)
    return out > 1 ? (T)((double)(in - 1) / (double)(out - 1)) : (T)0;
  if (scale > 0)
    return (T)(1.0 / scale);
  return (T)in / (T)out;
}

/// Separate statements: each step rounds in T as eager's tensor arithmetic
/// does (no fused multiply-add).
template <typename T>
T halfPixel(T s, T d) {
  T shifted = d + (T)0.5;
  T scaled = s * shifted;
  return scaled - (T)0.5;
}

template <typename T>
SmallVector<Tap<T>> linearTaps(int64_t in, int64_t out, bool alignCorners, double scale) {
  T s = sourceScale<T>(in, out, alignCorners, scale);
  SmallVector<Tap<T>> taps(2);
  for (int64_t o = 0; o < out; ++o) {
    T d = (T)o;
    T src = alignCorners ? s * d : std::max(halfPixel(s, d), (T)0);
    int64_t i0 = (int64_t)src;  // truncation of a non-negative source
    T lambda = src - (T)i0;
    taps[0].index.push_back(i0);
    taps[0].weight.push_back((T)1 - lambda);
    taps[1].index.push_back(i0 < in - 1 ? i0 + 1 : i0);
    taps[1].weight.push_back(lambda);
  }
  return taps;
}

/// The cubic convolution coefficients (A = -0.75) for |x| <= 1 and 1 < |x| < 2.
template <typename T>
T cubic1(T x) {
  const T a = (T)-0.75;
  T u = (a + (T)2) * x;
  T v = u - (a + (T)3);
  T w = v * x;
  T y = w * x;
  return y + (T)1;
}

template <typename T>
T cubic2(T x) {
  const T a = (T)-0.75;
  T u = a * x;
  T v = u - (T)5 * a;
  T w = v * x;
  T y = w + (T)8 * a;
  T z = y * x;
  return z - (T)4 * a;
}

template <typename T>
SmallVector<Tap<T>> cubicTaps(int64_t in, int64_t out, bool alignCorners, double scale) {
  T s = sourceScale<T>(in, out, alignCorners, scale);
  SmallVector<Tap<T>> taps(4);
  for (int64_t o = 0; o < out; ++o) {
    T d = (T)o;
    T src = alignCorners ? s * d : halfPixel(s, d);
    T fl = std::floor(src);
    T t = src - fl;
    int64_t i = (int64_t)fl;
    T weights[4] = {cubic2(t + (T)1), cubic1(t), cubic1((T)1 - t), cubic2((T)2 - t)};
    for (int64_t k = 0; k < 4; ++k) {
      taps[k].index.push_back(std::clamp<int64_t>(i + k - 1, 0, in - 1));
      taps[k].weight.push_back(weights[k]);
    }
  }
  return taps;
}

template <typename T>
Value resampleDim(OpBuilder &b, Location loc, Value x, int64_t dim, ArrayRef<Tap<T>> taps) {
  RankedTensorType t = tensorType(x);
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] = taps.front().index.size();
  auto type = t.clone(shape);
  auto vectorType = [&](Type et) { return RankedTensorType::get({shape[dim]}, et); };
  Value sum;
  for (const Tap<T> &tap : taps) {
    Value index = prim::ConstantOp::create(b, loc, DenseElementsAttr::get(vectorType(b.getI64Type()),
                                                                          ArrayRef(tap.index)));
    index = prim::BroadcastInDimOp::create(b, loc, type.clone(b.getI64Type()), index, ArrayRef<int64_t>{dim});
    Value g = prim::GatherOp::create(b, loc, type, x, dim, index);
    Value w = prim::ConstantOp::create(b, loc, DenseElementsAttr::get(vectorType(t.getElementType()),
                                                                      ArrayRef(tap.weight)));
    w = prim::BroadcastInDimOp::create(b, loc, type, w, ArrayRef<int64_t>{dim});
    Value term = prim::MulOp::create(b, loc, type, g, w);
    sum = sum ? (Value)prim::AddOp::create(b, loc, type, sum, term) : term;
  }
  return sum;
}

struct UpsampleToPrim : OpConversionPattern<graph::UpsampleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::UpsampleOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    bool f64 = type.getElementType().isF64(), cubic = op.getMode() == "cubic";
    Value x = pb.convert(adaptor.getInput(), f64 ? (Type)rewriter.getF64Type() : rewriter.getF32Type());
    ArrayRef<int64_t> out = op.getOutputSize();
    ArrayRef<double> scales = op.getScales();
    for (int64_t i = 0; i < (int64_t)out.size(); ++i) {
      int64_t dim = 2 + i, in = tensorType(x).getDimSize(dim);
      double scale = scales.empty() ? 0.0 : scales[i];
      bool align = op.getAlignCorners();
      if (f64)
        x = resampleDim<double>(rewriter, op.getLoc(), x, dim,
                                cubic ? cubicTaps<double>(in, out[i], align, scale)
                                      : linearTaps<double>(in, out[i], align, scale));
      else
        x = resampleDim<float>(rewriter, op.getLoc(), x, dim,
                               cubic ? cubicTaps<float>(in, out[i], align, scale)
                                     : linearTaps<float>(in, out[i], align, scale));
    }
    rewriter.replaceOp(op, pb.convert(x, type.getElementType()));
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateResamplePatterns(RewritePatternSet &patterns) {
  // The registry's (GraphOps.td: upsample), generated by dyn-tblgen.
#define GEN_RESAMPLE_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
