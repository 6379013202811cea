//===- GridSample.cpp - grid_sampler: gathers at coordinates from a grid --===//
//
// Every output point is a sum of gathers from the input at indices computed
// from the grid, times weights computed from it, as eager's kernels compute
// them (aten/src/ATen/native/GridSampler.h, cpu/GridSamplerKernel.cpp,
// cuda/GridSampler.cuh): the grid unnormalized to pixel coordinates, border
// and reflection padding applied to the coordinates, the 2^d neighbours'
// linear weights, nearest (rounded half to even), bicubic (2-d, A = -0.75,
// padding applied to each of the 4x4 taps); taps outside the input read 0.
// f16/bf16 compute in f32 and round once. Everything is pointwise in the
// output: one fused kernel.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

constexpr double kCubicA = -0.75;  // the cubic convolution's coefficient (eager's)

/// How eager's kernel computes source coordinates, on [N, 1, Q] tensors. The
/// CPU's 2-d kernel is vectorized: its own unnormalize and reflect formulas, a
/// NaN clipped to 0, no downgrade of non-finite coordinates. The CPU's 3-d
/// kernel: std::max/min clip a NaN to size - 1, and a coordinate that is not
/// finite (or out of the int range) becomes -100. CUDA's kernels: fmaxf clips
/// a NaN to 0, then the downgrade.
struct Coords {
  Pointwise &p;
  bool vectorized, nanToZero, downgrade;

  Value both(Value a, Value b) {
    return prim::AndOp::create(p.pb.b, p.pb.loc, p.type.clone(p.pb.b.getI1Type()), a, b);
  }

  /// [-1, 1] to the centers of the corner pixels (align) or to the image's edges.
  Value unnormalize(Value g, int64_t size, bool align) {
    Value g1 = p.add(g, p.c(1.0));
    if (vectorized)
      return align ? p.mul(g1, p.c((double)(size - 1) / 2)) : p.sub(p.mul(g1, p.c((double)size / 2)), p.c(0.5));
    if (align)
      return p.mul(p.div(g1, p.c(2.0)), p.c((double)(size - 1)));
    return p.div(p.sub(p.mul(g1, p.c((double)size)), p.c(1.0)), p.c(2.0));
  }

  /// min(size - 1, max(x, 0)), a NaN clipped to 0 or to size - 1 as the kernel does.
  Value clip(Value x, int64_t size) {
    Value hi = p.c((double)(size - 1));
    if (nanToZero)
      x = p.select(p.cmp<prim::GtOp>(x, p.c(0.0)), x, p.c(0.0));
    else
      x = p.select(p.cmp<prim::LtOp>(x, p.c(0.0)), p.c(0.0), x);  // std::max(x, 0)
    return p.select(p.cmp<prim::LtOp>(x, hi), x, hi);
  }

  /// x reflected by the image's bounds until it lies between them.
  Value reflect(Value x, int64_t size, bool align) {
    int64_t twiceLow = align ? 0 : -1, twiceHigh = align ? 2 * (size - 1) : 2 * size - 1;
    if (twiceLow == twiceHigh)
      return p.mul(x, p.c(0.0));
    if (vectorized) {  // |x - low| folded by the double span, then the nearer of extra and span - extra
      double twiceSpan = (double)(twiceHigh - twiceLow);
      Value a = p.un<prim::AbsOp>(align ? x : p.add(x, p.c(0.5)));
      Value flips = p.un<prim::TruncOp>(p.div(a, p.c(twiceSpan)));
      Value extra = p.sub(a, p.mul(flips, p.c(twiceSpan)));
      Value r = p.min(extra, p.sub(p.c(twiceSpan), extra));
      return align ? r : p.sub(r, p.c(0.5));
    }
    double lo = twiceLow / 2.0, span = (twiceHigh - twiceLow) / 2.0;
    Value a = p.un<prim::AbsOp>(p.sub(x, p.c(lo)));
    Value extra = p.bin<prim::FmodOp>(a, p.c(span));
    Value flips = p.un<prim::FloorOp>(p.div(a, p.c(span)));
    Value half = p.mul(p.un<prim::FloorOp>(p.div(flips, p.c(2.0))), p.c(2.0));
    Value odd = p.cmp<prim::NeOp>(p.sub(flips, half), p.c(0.0));
    return p.select(odd, p.add(p.sub(p.c(span), extra), p.c(lo)), p.add(extra, p.c(lo)));
  }

  /// compute_coordinates: border clips, reflection reflects then clips.
  Value pad(Value x, int64_t size, int64_t padding, bool align) {
    if (padding == 1)
      return clip(x, size);
    if (padding == 2)
      return clip(reflect(x, size, align), size);
    return x;
  }

  /// grid_sampler_compute_source_index.
  Value source(Value g, int64_t size, int64_t padding, bool align) {
    Value x = pad(unnormalize(g, size, align), size, padding, align);
    if (!downgrade)
      return x;
    Value ok = both(both(p.cmp<prim::EqOp>(x, x), p.cmp<prim::LeOp>(x, p.c(2147483646.0))),
                    p.cmp<prim::GeOp>(x, p.c(-2147483648.0)));
    return p.select(ok, x, p.c(-100.0));
  }
};

/// The gathers of one grid_sampler: the input viewed as [N, C, P], taps read
/// at [N, 1, Q] coordinates into [N, C, Q].
struct Sampler {
  Coords &cs;
  Value flat;
  ArrayRef<int64_t> sizes;  // the input's spatial sizes, outermost first
  RankedTensorType out;     // [N, C, Q] in the compute type

  /// The input at integer-valued float coordinates (outermost first), 0 where one is outside.
  Value tap(ArrayRef<Value> coords) {
    Pointwise &p = cs.p;
    PrimBuilder &pb = p.pb;
    RankedTensorType it = p.type.clone(pb.b.getI64Type());
    Pointwise q{pb, it};
    Value inside, index;
    for (auto [c, s] : llvm::zip(coords, sizes)) {
      Value ok = cs.both(p.cmp<prim::GeOp>(c, p.c(0.0)), p.cmp<prim::LtOp>(c, p.c((double)s)));
      inside = inside ? cs.both(inside, ok) : ok;
      Value i = pb.convert(p.select(ok, c, p.c(0.0)), it.getElementType());
      index = index ? q.add(q.mul(index, q.c((double)s)), i) : i;
    }
    Value v = prim::GatherOp::create(pb.b, pb.loc, out, flat, 2, pb.broadcast(index, out.getShape()));
    Pointwise o{pb, out};
    return o.select(pb.broadcast(inside, out.getShape()), v, o.c(0.0));
  }
};

/// get_cubic_upsample_coefficients: the weights of the taps at -1, 0, 1, 2.
SmallVector<Value> cubicCoefficients(Pointwise &p, Value t) {
  auto cc1 = [&](Value x) {  // |x| <= 1
    return p.add(p.mul(p.mul(p.sub(p.mul(x, p.c(kCubicA + 2)), p.c(kCubicA + 3)), x), x), p.c(1.0));
  };
  auto cc2 = [&](Value x) {  // 1 < |x| < 2
    return p.sub(p.mul(p.add(p.mul(p.sub(p.mul(x, p.c(kCubicA)), p.c(5 * kCubicA)), x), p.c(8 * kCubicA)), x),
                 p.c(4 * kCubicA));
  };
  return {cc2(p.add(t, p.c(1.0))), cc1(t), cc1(p.sub(p.c(1.0), t)), cc2(p.sub(p.c(2.0), t))};
}

struct GridSamplerToPrim : OpConversionPattern<graph::GridSamplerOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::GridSamplerOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType type = op.getType(), in = tensorType(adaptor.getInput());
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, pb.splat(type, 0.0));
      return success();
    }
    int64_t nd = in.getRank() - 2, n = in.getDimSize(0), c = in.getDimSize(1);
    ArrayRef<int64_t> sizes = in.getShape().drop_front(2);
    int64_t p = 1, q = 1;
    for (int64_t s : sizes)
      p *= s;
    RankedTensorType gt = tensorType(adaptor.getGrid());
    for (int64_t s : gt.getShape().drop_front().drop_back())
      q *= s;
    Type ct = opmathType(in).getElementType();
    Value flat = prim::ReshapeOp::create(rewriter, loc, RankedTensorType::get({n, c, p}, ct),
                                         pb.convert(adaptor.getInput(), ct));
    Value grid = pb.convert(adaptor.getGrid(), ct);
    auto coordType = RankedTensorType::get({n, 1, q}, ct);
    // the grid's coordinates: x (the last spatial dim) first in the grid, outermost first here
    SmallVector<Value> g;
    for (int64_t k = nd - 1; k >= 0; --k) {
      SmallVector<int64_t> start(gt.getRank(), 0), stride(gt.getRank(), 1), shape(gt.getShape());
      start.back() = k;
      shape.back() = 1;
      Value s = prim::SliceOp::create(rewriter, loc, RankedTensorType::get(shape, ct), grid, start, stride);
      g.push_back(prim::ReshapeOp::create(rewriter, loc, coordType, s));
    }
    Pointwise pw{pb, coordType};
    bool cuda = op.getCudaRules();
    Coords cs{pw, /*vectorized=*/nd == 2 && !cuda, /*nanToZero=*/nd == 2 || cuda, /*downgrade=*/nd == 3 || cuda};
    auto outType = RankedTensorType::get({n, c, q}, ct);
    Sampler smp{cs, flat, sizes, outType};
    Pointwise acc{pb, outType};
    auto weighted = [&](Value tap, Value w) { return acc.mul(tap, pb.broadcast(w, outType.getShape())); };
    int64_t mode = op.getMode(), padding = op.getPadding();
    bool align = op.getAlignCorners();
    Value r;
    if (mode == 2) {  // bicubic: the 4x4 taps, interpolated along x in each row, then along y
      Value iy = cs.unnormalize(g[0], sizes[0], align), ix = cs.unnormalize(g[1], sizes[1], align);
      Value y0 = pw.un<prim::FloorOp>(iy), x0 = pw.un<prim::FloorOp>(ix);
      SmallVector<Value> cy = cubicCoefficients(pw, pw.sub(iy, y0)), cx = cubicCoefficients(pw, pw.sub(ix, x0));
      auto bounded = [&](Value v, int64_t size) {
        return pw.un<prim::TruncOp>(cs.pad(v, size, padding, align));
      };
      for (int i = 0; i < 4; ++i) {
        Value yy = bounded(pw.add(y0, pw.c(i - 1)), sizes[0]);
        Value row;
        for (int j = 0; j < 4; ++j) {
          Value xx = bounded(pw.add(x0, pw.c(j - 1)), sizes[1]);
          Value t = weighted(smp.tap({yy, xx}), cx[j]);
          row = row ? acc.add(row, t) : t;
        }
        Value t = weighted(row, cy[i]);
        r = r ? acc.add(r, t) : t;
      }
    } else {
      SmallVector<Value> src;
      for (int64_t d = 0; d < nd; ++d)
        src.push_back(cs.source(g[d], sizes[d], padding, align));
      if (mode == 1) {  // nearest: std::nearbyint, half to even
        SmallVector<Value> at;
        for (Value s : src)
          at.push_back(pw.un<prim::RoundOp>(s));
        r = smp.tap(at);
      } else {  // the 2^d neighbours weighted by the distances to the opposite ones, in eager's order
        SmallVector<Value> lo, hi;
        for (Value s : src) {
          lo.push_back(pw.un<prim::FloorOp>(s));
          hi.push_back(pw.add(lo.back(), pw.c(1.0)));
        }
        for (int64_t k = 0; k < (1 << nd); ++k) {
          SmallVector<Value> at;
          Value w;
          for (int64_t d = 0; d < nd; ++d) {
            bool high = (k >> (nd - 1 - d)) & 1;
            at.push_back(high ? hi[d] : lo[d]);
            Value f = high ? pw.sub(src[d], lo[d]) : pw.sub(hi[d], src[d]);
            w = w ? pw.mul(w, f) : f;
          }
          Value t = weighted(smp.tap(at), w);
          r = r ? acc.add(r, t) : t;
        }
      }
    }
    r = prim::ReshapeOp::create(rewriter, loc, type.clone(ct), r);
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateGridSamplePatterns(RewritePatternSet &patterns) {
  // The registry's (GraphOps.td: grid_sampler), generated by dyn-tblgen.
#define GEN_GRIDSAMPLE_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
