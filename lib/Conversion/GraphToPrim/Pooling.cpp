//===- Pooling.cpp - max, average and adaptive pooling ---------------------===//
//
// Pooling is a windowed reduction, written here in primitives that fuse:
// each pooled dim is padded (-inf for max, 0 for sums) and its windows are
// the strided slices at the kernel offsets (or, for the irregular windows of
// adaptive pooling, gathers with constant indices), combined by elementwise
// max or add. The fusion pass inlines all of them, so a pooling is one
// kernel reading each input element once per window that holds it, fused
// with its producers (a ReLU before a max pool) and consumers.
//
// Max and sum over a box are separable: the dims are pooled one after the
// other. Average pooling divides the sum by a constant of the output's
// pooled shape (PyTorch's per-window divisor: the window within the padded
// input, within the input, or divisor_override). Windows that cover a whole
// dim (global pooling) and large non-overlapping windows become reductions.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

enum class PoolKind { Max, Sum };

/// Windows larger than this that tile a dim become a reshape and a
/// reduction (a loop) rather than that many slices (unrolled code).
constexpr int64_t kMaxUnrolledWindow = 4;

RankedTensorType withDim(RankedTensorType t, int64_t dim, int64_t size) {
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] = size;
  return t.clone(shape);
}

/// The sizes of `type`'s dynamic dims, read from `like`: only the dims in front of the pooled ones
/// may be dynamic, and every value built here has them where the pooled input has them.
SmallVector<Value> sizesFrom(OpBuilder &b, Location loc, Value like, RankedTensorType type) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(prim::DimOp::create(b, loc, like, d));
  return sizes;
}

struct Pooler {
  OpBuilder &b;
  Location loc;
  PoolKind kind;

  Value reshape(RankedTensorType to, Value v) {
    return prim::ReshapeOp::create(b, loc, to, v, sizesFrom(b, loc, v, to));
  }

  Value combine(Value acc, Value v) {
    if (!acc)
      return v;
    if (kind == PoolKind::Max)
      return prim::MaxOp::create(b, loc, acc.getType(), acc, v);
    return prim::AddOp::create(b, loc, acc.getType(), acc, v);
  }

  /// What padding contributes: nothing to a sum, the least value to a max (-inf, or an integer
  /// type's minimum, exact as a double).
  double padValue(Type et) {
    if (kind != PoolKind::Max)
      return 0.0;
    if (auto it = dyn_cast<IntegerType>(et))
      return it.isUnsigned() ? 0.0 : -std::ldexp(1.0, it.getWidth() - 1);
    return -std::numeric_limits<double>::infinity();
  }

  Value padDim(Value x, int64_t dim, int64_t lo, int64_t hi) {
    if (lo == 0 && hi == 0)
      return x;
    RankedTensorType t = tensorType(x);
    SmallVector<int64_t> low(t.getRank(), 0), high(t.getRank(), 0);
    low[dim] = lo;
    high[dim] = hi;
    return prim::PadOp::create(b, loc, withDim(t, dim, t.getDimSize(dim) + lo + hi), x, low, high,
                               llvm::APFloat(padValue(t.getElementType())));
  }

  Value sliceDim(Value x, int64_t dim, int64_t start, int64_t stride, int64_t size) {
    RankedTensorType t = tensorType(x);
    if (start == 0 && stride == 1 && size == t.getDimSize(dim))
      return x;
    SmallVector<int64_t> starts(t.getRank(), 0), strides(t.getRank(), 1);
    starts[dim] = start;
    strides[dim] = stride;
    return prim::SliceOp::create(b, loc, withDim(t, dim, size), x, starts, strides);
  }

  /// Reduces `dims` of x, keeping them as size 1.
  Value reduceKeep(Value x, ArrayRef<int64_t> dims) {
    RankedTensorType t = tensorType(x);
    SmallVector<int64_t> reduced, kept(t.getShape());
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (!llvm::is_contained(dims, i))
        reduced.push_back(t.getDimSize(i));
    for (int64_t d : dims)
      kept[d] = 1;
    auto reducedType = t.clone(reduced);
    Value r = kind == PoolKind::Max
                  ? (Value)prim::ReduceMaxOp::create(b, loc, reducedType, x, dims)
                  : (Value)prim::ReduceSumOp::create(b, loc, reducedType, x, dims);
    return prim::ReshapeOp::create(b, loc, t.clone(kept), r, sizesFrom(b, loc, x, t.clone(kept)));
  }

  /// Regular windows along `dim`: output o covers padded indices
  /// o*s + j*d, j < k, after `lo` padding elements in front.
  Value regular(Value x, int64_t dim, int64_t k, int64_t s, int64_t lo, int64_t d, int64_t out) {
    int64_t in = tensorType(x).getDimSize(dim);
    if (k > kMaxUnrolledWindow && s == k && d == 1 && lo == 0 && out * k <= in) {
      // Non-overlapping windows: [.., out*k, ..] -> [.., out, k, ..], reduce k.
      Value cut = sliceDim(x, dim, 0, 1, out * k);
      RankedTensorType t = tensorType(cut);
      SmallVector<int64_t> split(t.getShape());
      split[dim] = out;
      split.insert(split.begin() + dim + 1, k);
      Value r = reshape(t.clone(split), cut);
      r = reduceKeep(r, {dim + 1});
      return reshape(withDim(t, dim, out), r);
    }
    int64_t needed = (out - 1) * s + d * (k - 1) + 1;
    Value padded = padDim(x, dim, lo, std::max<int64_t>(0, needed - lo - in));
    Value acc;
    for (int64_t j = 0; j < k; ++j)
      acc = combine(acc, sliceDim(padded, dim, j * d, s, out));
    return acc;
  }

  /// Adaptive windows along `dim`: output o covers [start[o], end[o]).
  /// Offset j of every window is a gather at min(start + j, end - 1); sums
  /// mask the repeated elements of shorter windows out.
  Value irregular(Value x, int64_t dim, ArrayRef<int64_t> start, ArrayRef<int64_t> end) {
    RankedTensorType t = tensorType(x);
    int64_t out = start.size(), longest = 0;
    for (int64_t o = 0; o < out; ++o)
      longest = std::max(longest, end[o] - start[o]);
    RankedTensorType resultType = withDim(t, dim, out);
    auto indexType = resultType.clone(b.getI64Type());
    auto vectorType = RankedTensorType::get({out}, b.getI64Type());
    auto maskType = RankedTensorType::get({out}, b.getI1Type());
    Value acc;
    for (int64_t j = 0; j < longest; ++j) {
      SmallVector<int64_t> index;
      SmallVector<bool> inside;
      for (int64_t o = 0; o < out; ++o) {
        index.push_back(std::min(start[o] + j, end[o] - 1));
        inside.push_back(start[o] + j < end[o]);
      }
      Value indices = prim::ConstantOp::create(b, loc, DenseElementsAttr::get(vectorType,
                                                                              ArrayRef(index)));
      indices = prim::BroadcastInDimOp::create(b, loc, indexType, indices, ArrayRef<int64_t>{dim},
                                               sizesFrom(b, loc, x, indexType));
      Value g = prim::GatherOp::create(b, loc, resultType, x, dim, indices);
      if (kind == PoolKind::Sum && llvm::is_contained(inside, false)) {
        Value mask = prim::ConstantOp::create(b, loc, DenseElementsAttr::get(maskType,
                                                                             ArrayRef(inside)));
        mask = prim::BroadcastInDimOp::create(b, loc, resultType.clone(b.getI1Type()), mask,
                                              ArrayRef<int64_t>{dim}, sizesFrom(b, loc, x, resultType));
        PrimBuilder pb{b, loc};
        g = prim::SelectOp::create(b, loc, resultType, mask, g, pb.splatLike(g, 0.0));
      }
      acc = combine(acc, g);
    }
    return acc;
  }
};

/// sum / divisor, with one divisor per output position of the pooled dims
/// (the outer product of `perDim`).
Value divide(OpBuilder &b, Location loc, Value sum, ArrayRef<SmallVector<int64_t>> perDim) {
  RankedTensorType t = tensorType(sum);
  int64_t nd = perDim.size(), rank = t.getRank();
  SmallVector<int64_t> shape;
  for (const auto &v : perDim)
    shape.push_back(v.size());
  SmallVector<double> divisors{1.0};
  for (const auto &v : perDim) {
    SmallVector<double> next;
    for (double prefix : divisors)
      for (int64_t f : v)
        next.push_back(prefix * f);
    divisors = std::move(next);
  }
  auto type = RankedTensorType::get(shape, t.getElementType());
  // An integer sum is divided with truncation (eager's CPU kernel: int64 sum / int64 divisor).
  SmallVector<Attribute> values;
  for (double v : divisors)
    values.push_back(isa<FloatType>(t.getElementType())
                         ? Attribute(FloatAttr::get(t.getElementType(), v))
                         : Attribute(IntegerAttr::get(t.getElementType(), (int64_t)v)));
  Value divisor = prim::ConstantOp::create(b, loc, DenseElementsAttr::get(type, values));
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < nd; ++i)
    dims.push_back(rank - nd + i);
  divisor = prim::BroadcastInDimOp::create(b, loc, t, divisor, dims, sizesFrom(b, loc, sum, t));
  return prim::DivOp::create(b, loc, t, sum, divisor);
}

template <typename GraphOp>
struct PoolToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    constexpr bool isMax = std::is_same_v<GraphOp, graph::MaxPoolOp>;
    Pooler pool{rewriter, op.getLoc(), isMax ? PoolKind::Max : PoolKind::Sum};
    RankedTensorType type = op.getType();
    ArrayRef<int64_t> kernel = op.getKernel(), stride = op.getStride(), padding = op.getPadding();
    int64_t nd = kernel.size(), rank = type.getRank();
    Value x = adaptor.getInput();
    SmallVector<SmallVector<int64_t>> divisors;
    for (int64_t i = 0; i < nd; ++i) {
      int64_t dim = rank - nd + i, in = tensorType(x).getDimSize(dim), out = type.getDimSize(dim);
      int64_t k = kernel[i], s = stride[i], p = padding[i], d = 1;
      if constexpr (isMax)
        d = op.getDilation()[i];
      x = pool.regular(x, dim, k, s, p, d, out);
      if constexpr (!isMax) {
        // PyTorch's avg_pool divisor per output index.
        SmallVector<int64_t> f;
        for (int64_t o = 0; o < out; ++o) {
          int64_t start = o * s - p, end = std::min(start + k, in + p);
          int64_t size = end - start;
          int64_t valid = std::min(end, in) - std::max<int64_t>(start, 0);
          f.push_back(op.getCountIncludePad() ? size : valid);
        }
        divisors.push_back(std::move(f));
      }
    }
    if constexpr (!isMax) {
      if (auto fixed = op.getDivisorOverride()) {
        // The override as the last dim's factor, 1 for the others.
        for (int64_t i = 0; i < nd; ++i)
          for (int64_t &v : divisors[i])
            v = i == nd - 1 ? (int64_t)*fixed : 1;
      }
      x = divide(rewriter, op.getLoc(), x, divisors);
    }
    rewriter.replaceOp(op, x);
    return success();
  }
};

template <typename GraphOp>
struct AdaptivePoolToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    constexpr bool isMax = std::is_same_v<GraphOp, graph::AdaptiveMaxPoolOp>;
    Pooler pool{rewriter, op.getLoc(), isMax ? PoolKind::Max : PoolKind::Sum};
    RankedTensorType type = op.getType();
    ArrayRef<int64_t> outSizes = op.getOutputSize();
    int64_t nd = outSizes.size(), rank = type.getRank();
    Value x = adaptor.getInput();
    SmallVector<SmallVector<int64_t>> divisors;
    // Dims pooled to one element are reduced together (global pooling).
    SmallVector<int64_t> global;
    for (int64_t i = 0; i < nd; ++i)
      if (outSizes[i] == 1)
        global.push_back(rank - nd + i);
    if (!global.empty())
      x = pool.reduceKeep(x, global);
    for (int64_t i = 0; i < nd; ++i) {
      int64_t dim = rank - nd + i, in = tensorType(adaptor.getInput()).getDimSize(dim),
              out = outSizes[i];
      SmallVector<int64_t> start, end, count;
      for (int64_t o = 0; o < out; ++o) {
        start.push_back(o * in / out);
        end.push_back(((o + 1) * in + out - 1) / out);
        count.push_back(end.back() - start.back());
      }
      divisors.push_back(count);
      if (out == 1)
        continue;
      if (in % out == 0)
        x = pool.regular(x, dim, in / out, in / out, 0, 1, out);
      else
        x = pool.irregular(x, dim, start, end);
    }
    if constexpr (!isMax)
      x = divide(rewriter, op.getLoc(), x, divisors);
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// Max pooling with indices, as eager's kernels loop over a window: a running
/// maximum starts at the least value and the window's first element inside
/// the input, and takes each tap (in window order) that is greater or NaN.
/// Taps are the products of per-dim taps; a per-dim tap j gives, for each
/// output position, the input position it reads (padding: never picked,
/// its value the least) and a way to take those values along the dim.
struct WindowTaps {
  // positions[i][j][o]: dim i, tap j, output position o
  SmallVector<SmallVector<SmallVector<int64_t>>> positions;
  SmallVector<SmallVector<int64_t>> first; // [i][o]: the window's first position in the input
  std::function<Value(Value, int64_t, int64_t)> take; // (tensor, pooled dim i, tap j) -> values
};

struct IndexedPool {
  OpBuilder &b;
  Location loc;
  RankedTensorType valuesType, indicesType;
  ArrayRef<int64_t> inSizes; // the pooled input dims
  Value like;                // the input: the sizes of the dynamic dims in front of the pooled ones

  /// sum over dims of positions[i][o_i] * (the input elements per step of dim i), broadcast.
  Value flat(ArrayRef<ArrayRef<int64_t>> perDim) {
    int64_t nd = perDim.size(), rank = indicesType.getRank();
    Value sum;
    for (int64_t i = 0; i < nd; ++i) {
      int64_t step = 1;
      for (int64_t k = i + 1; k < nd; ++k)
        step *= inSizes[k];
      SmallVector<int64_t> terms;
      for (int64_t v : perDim[i])
        terms.push_back(v * step);
      auto vt = RankedTensorType::get({(int64_t)terms.size()}, b.getI64Type());
      Value c = prim::ConstantOp::create(b, loc, DenseElementsAttr::get(vt, ArrayRef(terms)));
      c = prim::BroadcastInDimOp::create(b, loc, indicesType, c, ArrayRef<int64_t>{rank - nd + i},
                                         sizesFrom(b, loc, like, indicesType));
      sum = sum ? (Value)prim::AddOp::create(b, loc, indicesType, sum, c) : c;
    }
    return sum;
  }

  std::pair<Value, Value> run(Value x, const WindowTaps &taps, double least) {
    PrimBuilder pb{b, loc};
    int64_t nd = taps.positions.size();
    SmallVector<ArrayRef<int64_t>> firsts(taps.first.begin(), taps.first.end());
    Value best = pb.splat(valuesType, least), index = flat(firsts);
    bool isFloat = isa<FloatType>(valuesType.getElementType());
    auto boolType = valuesType.clone(b.getI1Type());
    SmallVector<int64_t> combo(nd, 0);
    std::function<void(Value, int64_t)> visit = [&](Value v, int64_t i) {
      if (i == nd) {
        SmallVector<ArrayRef<int64_t>> pos;
        for (int64_t k = 0; k < nd; ++k)
          pos.push_back(taps.positions[k][combo[k]]);
        Value take = prim::GtOp::create(b, loc, boolType, v, best);
        if (isFloat)
          take = prim::OrOp::create(b, loc, boolType, take, prim::NeOp::create(b, loc, boolType, v, v));
        best = prim::SelectOp::create(b, loc, valuesType, take, v, best);
        index = prim::SelectOp::create(b, loc, indicesType, take, flat(pos), index);
        return;
      }
      for (int64_t j = 0; j < (int64_t)taps.positions[i].size(); ++j) {
        combo[i] = j;
        visit(taps.take(v, i, j), i + 1);
      }
    };
    visit(x, 0);
    return {best, index};
  }
};

struct MaxPoolWithIndicesToPrim : OpConversionPattern<graph::MaxPoolWithIndicesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::MaxPoolWithIndicesOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Pooler pool{rewriter, loc, PoolKind::Max};
    RankedTensorType type = op.getResult().getType();
    ArrayRef<int64_t> kernel = op.getKernel(), stride = op.getStride(), padding = op.getPadding(),
                      dilation = op.getDilation();
    int64_t nd = kernel.size(), rank = type.getRank();
    Value x = adaptor.getInput();
    ArrayRef<int64_t> inSizes = tensorType(x).getShape().take_back(nd);
    WindowTaps taps;
    for (int64_t i = 0; i < nd; ++i) {
      int64_t dim = rank - nd + i, in = inSizes[i], out = type.getDimSize(dim);
      int64_t k = kernel[i], s = stride[i], p = padding[i], d = dilation[i];
      int64_t needed = (out - 1) * s + d * (k - 1) + 1;
      x = pool.padDim(x, dim, p, std::max<int64_t>(0, needed - p - in));
      SmallVector<SmallVector<int64_t>> perTap(k);
      SmallVector<int64_t> first;
      for (int64_t o = 0; o < out; ++o) {
        int64_t start = o * s - p;
        for (int64_t j = 0; j < k; ++j)
          perTap[j].push_back(start + j * d);
        while (start < 0)
          start += d;
        first.push_back(start);
      }
      taps.positions.push_back(std::move(perTap));
      taps.first.push_back(std::move(first));
    }
    taps.take = [&](Value v, int64_t i, int64_t j) {
      int64_t dim = rank - nd + i;
      return pool.sliceDim(v, dim, j * dilation[i], stride[i], type.getDimSize(dim));
    };
    IndexedPool ip{rewriter, loc, type, op.getIndices().getType(), inSizes, adaptor.getInput()};
    auto [values, indices] = ip.run(x, taps, pool.padValue(type.getElementType()));
    rewriter.replaceOp(op, {values, indices});
    return success();
  }
};

struct AdaptiveMaxPoolWithIndicesToPrim : OpConversionPattern<graph::AdaptiveMaxPoolWithIndicesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::AdaptiveMaxPoolWithIndicesOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Pooler pool{rewriter, loc, PoolKind::Max};
    RankedTensorType type = op.getResult().getType();
    ArrayRef<int64_t> outSizes = op.getOutputSize();
    int64_t nd = outSizes.size(), rank = type.getRank();
    Value x = adaptor.getInput();
    ArrayRef<int64_t> inSizes = tensorType(x).getShape().take_back(nd);
    WindowTaps taps;
    for (int64_t i = 0; i < nd; ++i) {
      int64_t in = inSizes[i], out = outSizes[i], longest = 0;
      SmallVector<int64_t> start, end;
      for (int64_t o = 0; o < out; ++o) {
        start.push_back(o * in / out);
        end.push_back(((o + 1) * in + out - 1) / out);
        longest = std::max(longest, end.back() - start.back());
      }
      // offset j of every window, its last element again in shorter windows (never greater)
      SmallVector<SmallVector<int64_t>> perTap(longest);
      for (int64_t j = 0; j < longest; ++j)
        for (int64_t o = 0; o < out; ++o)
          perTap[j].push_back(std::min(start[o] + j, end[o] - 1));
      taps.positions.push_back(std::move(perTap));
      taps.first.push_back(start);
    }
    taps.take = [&](Value v, int64_t i, int64_t j) -> Value {
      int64_t dim = rank - nd + i;
      ArrayRef<int64_t> pos = taps.positions[i][j];
      RankedTensorType t = tensorType(v);
      auto resultType = withDim(t, dim, pos.size());
      auto vt = RankedTensorType::get({(int64_t)pos.size()}, rewriter.getI64Type());
      Value index = prim::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(vt, pos));
      index = prim::BroadcastInDimOp::create(rewriter, loc, resultType.clone(rewriter.getI64Type()), index,
                                             ArrayRef<int64_t>{dim});
      return prim::GatherOp::create(rewriter, loc, resultType, v, dim, index);
    };
    IndexedPool ip{rewriter, loc, type, op.getIndices().getType(), inSizes, adaptor.getInput()};
    auto [values, indices] = ip.run(x, taps, pool.padValue(type.getElementType()));
    rewriter.replaceOp(op, {values, indices});
    return success();
  }
};

/// max_pool2d's input gradient from its indices, gathered (eager's CUDA kernels, inductor's lowering):
/// input position h of a pooled dim lies in the windows o = floor((h + p) / s) - t, t < ceil(k / s),
/// that exist and reach it (h + p - o * s < k); it receives each such window's cotangent where the
/// window's index names it, added in window order as eager's kernels add them. One kernel over the
/// input that fuses with the ReLU and batch norm gradients around it, where the library call (tried
/// after this pattern: dilation, many windows a position) scatters into a buffer of its own.
struct MaxPool2dBackwardToPrim : OpConversionPattern<graph::MaxPool2dBackwardOp> {
  using OpConversionPattern::OpConversionPattern;
  static constexpr int64_t kMaxWindows = 9; // windows reaching a position, over both dims

  LogicalResult matchAndRewrite(graph::MaxPool2dBackwardOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value g = adaptor.getGradOutput(), indices = adaptor.getIndices();
    RankedTensorType type = op.getType(), gt = tensorType(g), it = tensorType(indices);
    int64_t rank = type.getRank();
    if (op.getKernelSize().size() != 2 || rank < 3 || gt.getRank() != rank || it.getShape() != gt.getShape() ||
        !isa<FloatType>(type.getElementType()))
      return failure();
    // per dim: a 1-element array holds for both dims; an empty stride is the kernel's (aten.max_pool2d's
    // default), empty padding and dilation 0 and 1
    auto perDim = [](ArrayRef<int64_t> v, ArrayRef<int64_t> otherwise) {
      ArrayRef<int64_t> a = v.empty() ? otherwise : v;
      return std::array<int64_t, 2>{a.front(), a.back()};
    };
    ArrayRef<int64_t> kernel = op.getKernelSize();
    if (op.getStride().size() > 2 || op.getPadding().size() > 2 || op.getDilation().size() > 2)
      return failure();
    std::array<int64_t, 2> k = perDim(kernel, {}), s = perDim(op.getStride(), kernel),
                           p = perDim(op.getPadding(), {0}), d = perDim(op.getDilation(), {1});
    int64_t in[2], windows[2];
    // per dim i and window t: the window each input position reads (clamped into range), and that
    // position's term of the flat index (h * W for the rows, w for the columns), or `never` where window
    // t does not reach it: -2 * H * W, which no index plus the other dim's term (at most H * W - 1) equals
    SmallVector<SmallVector<int64_t>> which[2], term[2];
    for (int i = 0; i < 2; ++i) {
      in[i] = type.getDimSize(rank - 2 + i);
      int64_t out = gt.getDimSize(rank - 2 + i);
      if (ShapedType::isDynamic(in[i]) || ShapedType::isDynamic(out) || d[i] != 1 || s[i] < 1)
        return failure();
      windows[i] = (k[i] + s[i] - 1) / s[i];
    }
    if (windows[0] * windows[1] > kMaxWindows)
      return failure();
    int64_t never = -2 * in[0] * in[1];
    for (int i = 0; i < 2; ++i) {
      int64_t out = gt.getDimSize(rank - 2 + i), step = i == 0 ? in[1] : 1;
      for (int64_t t = 0; t < windows[i]; ++t) {
        which[i].emplace_back();
        term[i].emplace_back();
        for (int64_t h = 0; h < in[i]; ++h) {
          int64_t o = (h + p[i]) / s[i] - t;
          bool reaches = o >= 0 && o < out && h + p[i] - o * s[i] < k[i];
          which[i][t].push_back(std::clamp<int64_t>(o, 0, out - 1));
          term[i][t].push_back(reaches ? h * step : never);
        }
      }
    }
    Type indexType = it.getElementType();
    auto vector = [&](ArrayRef<int64_t> v, Type et) -> Value {
      auto vt = RankedTensorType::get({(int64_t)v.size()}, et);
      SmallVector<Attribute> attrs;
      for (int64_t x : v)
        attrs.push_back(IntegerAttr::get(et, x));
      return prim::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(vt, attrs));
    };
    // x [.., OH, OW] -> [.., H, W]: rows then columns of window (th, tw)
    auto gatherWindows = [&](Value x, int64_t th, int64_t tw) {
      for (int i = 0; i < 2; ++i) {
        int64_t dim = rank - 2 + i;
        auto resultType = withDim(tensorType(x), dim, in[i]);
        auto whichType = resultType.clone(rewriter.getI64Type());
        Value index = prim::BroadcastInDimOp::create(rewriter, loc, whichType,
                                                     vector(which[i][i == 0 ? th : tw], rewriter.getI64Type()),
                                                     ArrayRef<int64_t>{dim}, sizesFrom(rewriter, loc, x, whichType));
        x = prim::GatherOp::create(rewriter, loc, resultType, x, dim, index);
      }
      return x;
    };
    auto boolType = type.clone(rewriter.getI1Type());
    auto targetType = type.clone(indexType);
    Value acc;
    for (int64_t th = windows[0] - 1; th >= 0; --th)  // the earlier windows first
      for (int64_t tw = windows[1] - 1; tw >= 0; --tw) {
        Value target;
        for (int i = 0; i < 2; ++i) {
          Value t = prim::BroadcastInDimOp::create(rewriter, loc, targetType,
                                                   vector(term[i][i == 0 ? th : tw], indexType),
                                                   ArrayRef<int64_t>{rank - 2 + i},
                                                   sizesFrom(rewriter, loc, adaptor.getInput(), targetType));
          target = target ? (Value)prim::AddOp::create(rewriter, loc, targetType, target, t) : t;
        }
        Value picked = prim::EqOp::create(rewriter, loc, boolType, gatherWindows(indices, th, tw), target);
        Value v = gatherWindows(g, th, tw);
        Value zero = PrimBuilder{rewriter, loc}.splatLike(v, 0.0);
        v = prim::SelectOp::create(rewriter, loc, type, picked, v, zero);
        acc = acc ? (Value)prim::AddOp::create(rewriter, loc, type, acc, v) : v;
      }
    rewriter.replaceOp(op, acc);
    return success();
  }
};

/// The window geometry of im2col/col2im along one spatial dim: `in` input elements padded by `pad`
/// on both sides, `out` windows of `k` taps `d` apart every `s`.
struct WindowDim {
  int64_t in, k, d, pad, s, out;
  int64_t tap(int64_t j) const { return j * d; }   // offset of tap j in the padded input
  int64_t padded() const { return in + 2 * pad; }
  bool tiles() const { return k == s && d == 1 && pad == 0; }
};

std::array<WindowDim, 2> windowDims(ArrayRef<int64_t> in, ArrayRef<int64_t> k, ArrayRef<int64_t> d,
                                    ArrayRef<int64_t> p, ArrayRef<int64_t> s) {
  std::array<WindowDim, 2> w;
  for (int i = 0; i < 2; ++i)
    w[i] = {in[i], k[i], d[i], p[i], s[i], (in[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1};
  return w;
}

/// im2col: each tap (i, j) is a strided slice [N, C, oh, ow] of the padded input; the taps stacked
/// after C give the rows (c, i, j). Windows that tile the input are a reshape and a transpose.
struct Im2colToPrim : OpConversionPattern<graph::Im2colOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::Im2colOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Pooler pool{rewriter, loc, PoolKind::Sum};  // pads with zeros
    Value x = adaptor.getInput();
    RankedTensorType xt = tensorType(x), type = op.getType();
    int64_t n = xt.getDimSize(0), c = xt.getDimSize(1);
    auto w = windowDims(xt.getShape().take_back(2), op.getKernel(), op.getDilation(), op.getPadding(),
                        op.getStride());
    auto shaped = [&](Value v, ArrayRef<int64_t> shape) -> Value {
      return prim::ReshapeOp::create(rewriter, loc, xt.clone(shape), v);
    };
    Value r;
    if (w[0].tiles() && w[1].tiles()) {
      // [N, C, oh*kh, ow*kw] -> [N, C, oh, kh, ow, kw] -> [N, C, kh, kw, oh, ow]
      Value cut = pool.sliceDim(pool.sliceDim(x, 2, 0, 1, w[0].out * w[0].k), 3, 0, 1, w[1].out * w[1].k);
      Value six = shaped(cut, {n, c, w[0].out, w[0].k, w[1].out, w[1].k});
      r = prim::TransposeOp::create(rewriter, loc, xt.clone({n, c, w[0].k, w[1].k, w[0].out, w[1].out}), six,
                                    ArrayRef<int64_t>{0, 1, 3, 5, 2, 4});
    } else {
      Value padded = x;
      for (int i = 0; i < 2; ++i) {
        int64_t needed = (w[i].out - 1) * w[i].s + w[i].tap(w[i].k - 1) + 1;
        padded = pool.padDim(padded, 2 + i, w[i].pad, std::max<int64_t>(0, needed - w[i].pad - w[i].in));
      }
      SmallVector<Value> taps;
      for (int64_t i = 0; i < w[0].k; ++i)
        for (int64_t j = 0; j < w[1].k; ++j) {
          Value t = pool.sliceDim(padded, 2, w[0].tap(i), w[0].s, w[0].out);
          t = pool.sliceDim(t, 3, w[1].tap(j), w[1].s, w[1].out);
          taps.push_back(shaped(t, {n, c, 1, w[0].out * w[1].out}));
        }
      r = taps.size() == 1 ? taps[0]
                           : prim::ConcatenateOp::create(
                                 rewriter, loc, xt.clone({n, c, (int64_t)taps.size(), w[0].out * w[1].out}),
                                 taps, 2);
    }
    rewriter.replaceOp(op, shaped(r, type.getShape()));
    return success();
  }
};

/// col2im: tap (i, j)'s [N, C, oh, ow] placed at its positions of the padded output (s-1 zeros
/// interleaved after each element, then padded to its offset), added in eager's CPU order (taps in
/// row order onto zeros), the padding cut off. Windows that tile the output are the inverse reshape
/// and transpose of im2col's.
struct Col2imToPrim : OpConversionPattern<graph::Col2imOp> {
  using OpConversionPattern::OpConversionPattern;

  static Value place(OpBuilder &b, Location loc, Pooler &pool, Value t, int64_t dim, const WindowDim &w,
                     int64_t j) {
    RankedTensorType tt = tensorType(t);
    if (w.s > 1) {  // [.., out, ..] -> [.., out, s, ..] with zeros after each element -> [.., out*s, ..]
      SmallVector<int64_t> one(tt.getShape()), many(tt.getShape());
      one.insert(one.begin() + dim + 1, 1);
      many.insert(many.begin() + dim + 1, w.s - 1);
      Value v = prim::ReshapeOp::create(b, loc, tt.clone(one), t);
      Value zeros = PrimBuilder{b, loc}.splat(tt.clone(many), 0.0);
      SmallVector<int64_t> both(one);
      both[dim + 1] = w.s;
      v = prim::ConcatenateOp::create(b, loc, tt.clone(both), ValueRange{v, zeros}, dim + 1);
      t = prim::ReshapeOp::create(b, loc, withDim(tt, dim, w.out * w.s), v);
    }
    int64_t start = w.tap(j), len = std::min(tensorType(t).getDimSize(dim), w.padded() - start);
    t = pool.sliceDim(t, dim, 0, 1, len);  // only trailing zeros are cut
    return pool.padDim(t, dim, start, w.padded() - start - len);
  }

  LogicalResult matchAndRewrite(graph::Col2imOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Pooler pool{rewriter, loc, PoolKind::Sum};
    Value x = adaptor.getInput();
    RankedTensorType xt = tensorType(x), type = op.getType();
    int64_t n = type.getDimSize(0), c = type.getDimSize(1);
    auto w = windowDims(op.getOutputSize(), op.getKernel(), op.getDilation(), op.getPadding(), op.getStride());
    auto shaped = [&](Value v, ArrayRef<int64_t> shape) -> Value {
      return prim::ReshapeOp::create(rewriter, loc, xt.clone(shape), v);
    };
    Value six = shaped(x, {n, c, w[0].k, w[1].k, w[0].out, w[1].out});
    if (w[0].tiles() && w[1].tiles()) {
      Value r = prim::TransposeOp::create(rewriter, loc, xt.clone({n, c, w[0].out, w[0].k, w[1].out, w[1].k}),
                                          six, ArrayRef<int64_t>{0, 1, 4, 2, 5, 3});
      r = shaped(r, {n, c, w[0].out * w[0].k, w[1].out * w[1].k});
      // the rows and columns no window reaches are zero
      r = pool.padDim(pool.padDim(r, 2, 0, w[0].in - w[0].out * w[0].k), 3, 0, w[1].in - w[1].out * w[1].k);
      rewriter.replaceOp(op, r);
      return success();
    }
    Value acc = PrimBuilder{rewriter, loc}.splat(xt.clone({n, c, w[0].padded(), w[1].padded()}), 0.0);
    for (int64_t i = 0; i < w[0].k; ++i)
      for (int64_t j = 0; j < w[1].k; ++j) {
        SmallVector<int64_t> starts{0, 0, i, j, 0, 0}, strides(6, 1);
        Value t = prim::SliceOp::create(rewriter, loc, xt.clone({n, c, 1, 1, w[0].out, w[1].out}), six, starts,
                                        strides);
        t = shaped(t, {n, c, w[0].out, w[1].out});
        t = place(rewriter, loc, pool, place(rewriter, loc, pool, t, 2, w[0], i), 3, w[1], j);
        acc = prim::AddOp::create(rewriter, loc, acc.getType(), acc, t);
      }
    acc = pool.sliceDim(pool.sliceDim(acc, 2, w[0].pad, 1, w[0].in), 3, w[1].pad, 1, w[1].in);
    rewriter.replaceOp(op, acc);
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populatePoolingPatterns(RewritePatternSet &patterns) {
  // The registry's patterns of the family (GraphWindowOps.td's pooling), generated by dyn-tblgen.
#define GEN_POOLING_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
  // before the registry's library call of max_pool2d_backward, which takes the shapes it declines
  patterns.add<MaxPool2dBackwardToPrim>(patterns.getContext(), /*benefit=*/2);
}
