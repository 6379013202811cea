//===- Random.cpp - random, bernoulli, dropout ----------------------------===//
//
// Every random op becomes prim.philox bits (a pure function of seed, offset
// and element index) and pointwise arithmetic that turns them into the
// distribution, as torch's CPU transformations do: a uniform float takes the
// type's mantissa bits of one 32-bit word (53 bits of two for f64), a normal
// is Box-Muller over two uniforms, a bounded integer a remainder. Everything
// fuses into the kernels that read it: dropout is one kernel with its input.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

/// The bits of one random op (seed, offset) over `shape`, and the
/// distributions built from them in the float type `f` (f32 or f64).
struct Draw {
  PrimBuilder &pb;
  Value seed;
  int64_t offset;
  SmallVector<int64_t> shape;
  /// The `?` dims' sizes where the op gives them (graph.random); else each is sized as the rewritten op's
  /// operand (dropout's input, bernoulli's p).
  SmallVector<Value> sizes = {};

  RankedTensorType of(Type t) { return RankedTensorType::get(shape, t); }
  Value word(int64_t w) {
    return prim::PhiloxOp::create(pb.b, pb.loc, of(pb.b.getI32Type()), seed, offset, w,
                                  sizes.empty() ? pb.dynamicSizes(shape) : sizes);
  }
  /// Word w as an unsigned number, in i64: [0, 2^32).
  Value word64(int64_t w) {
    RankedTensorType t = of(pb.b.getI64Type());
    Value x = pb.convert(word(w), pb.b.getI64Type());
    return prim::AndOp::create(pb.b, pb.loc, t, x, pb.splat(t, 4294967295.0));
  }
  /// Uniform in [0, 1) with `bits` random mantissa bits (at most 24 from word
  /// w; 53 from words w and w+1), in the float type `f`.
  Value uniform(Type f, unsigned bits, int64_t w = 0) {
    RankedTensorType ft = of(f);
    Value n;
    if (bits > 24) {
      RankedTensorType t = of(pb.b.getI64Type());
      Value high = prim::AndOp::create(pb.b, pb.loc, t, word64(w + 1),
                                       pb.splat(t, (double)((1ll << (bits - 32)) - 1)));
      n = prim::AddOp::create(pb.b, pb.loc, t,
                              prim::MulOp::create(pb.b, pb.loc, t, high, pb.splat(t, 4294967296.0)),
                              word64(w));
    } else {
      RankedTensorType t = of(pb.b.getI32Type());
      n = prim::AndOp::create(pb.b, pb.loc, t, word(w), pb.splat(t, (double)((1ll << bits) - 1)));
    }
    return prim::MulOp::create(pb.b, pb.loc, ft, pb.convert(n, f), pb.splat(ft, std::ldexp(1.0, -(int)bits)));
  }
};

/// The mantissa bits (with the implicit one) of a float type: what torch's
/// uniform takes from the random word.
unsigned mantissaBits(Type t) {
  return cast<FloatType>(t).getFPMantissaWidth();
}

struct RandomToPrim : OpConversionPattern<graph::RandomOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::RandomOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType t = op.getType();
    Draw draw{pb, adaptor.getSeed(), (int64_t)op.getOffset(), SmallVector<int64_t>(t.getShape()),
              SmallVector<Value>(adaptor.getSizes())};
    // the first word's bits size every `?` dim of the arithmetic below (splats, conversions)
    if (!draw.sizes.empty())
      pb.sizeSource = draw.word(0);
    double a = op.getA().convertToDouble(), b = op.getB().convertToDouble();
    Value result;
    if (op.getDistribution() == graph::RandomDistribution::integers) {
      RankedTensorType it = t.clone(rewriter.getI64Type());
      auto range = (int64_t)(b - a);
      Value r = draw.word64(0);
      if (range > (1ll << 32)) // 64 random bits (wrapping into the sign: the remainder is still >= 0)
        r = prim::AddOp::create(rewriter, op.getLoc(), it,
                                prim::MulOp::create(rewriter, op.getLoc(), it, draw.word64(1),
                                                    pb.splat(it, 4294967296.0)),
                                r);
      r = prim::RemOp::create(rewriter, op.getLoc(), it, r, pb.splat(it, (double)range));
      r = prim::AddOp::create(rewriter, op.getLoc(), it, r, pb.splat(it, a));
      rewriter.replaceOp(op, pb.convert(r, t.getElementType()));
      return success();
    }
    RankedTensorType ct = opmathType(t);
    Pointwise p{pb, ct};
    Type f = ct.getElementType();
    unsigned full = f.isF64() ? 53 : 24;
    // Box-Muller: u1 in (0, 1], u2 in [0, 1), one of the pair (normal, log_normal)
    auto standardNormal = [&] {
      Value u1 = p.sub(p.c(1), draw.uniform(f, full, 0));
      Value u2 = draw.uniform(f, full, full > 24 ? 2 : 1);
      Value radius = p.un<prim::SqrtOp>(p.mul(p.c(-2), p.un<prim::LogOp>(u1)));
      return p.mul(radius, p.un<prim::CosOp>(p.mul(p.c(2 * M_PI), u2)));
    };
    switch (op.getDistribution()) {
    case graph::RandomDistribution::uniform: {
      Value u = draw.uniform(f, mantissaBits(t.getElementType()));
      result = (a == 0 && b == 1) ? u : p.add(p.mul(u, p.c(b - a)), p.c(a));
      break;
    }
    case graph::RandomDistribution::normal: {
      Value z = standardNormal();
      result = (a == 0 && b == 1) ? z : p.add(p.mul(z, p.c(b)), p.c(a));
      break;
    }
    case graph::RandomDistribution::exponential: {
      // -log(1 - u) / rate, never 0: log is at most -eps/2 of the result type, as torch's kernel clamps
      Value l = p.un<prim::LogOp>(p.sub(p.c(1), draw.uniform(f, full)));
      double eps = std::ldexp(1.0, 1 - (int)mantissaBits(t.getElementType()));
      result = p.div(p.un<prim::NegOp>(p.min(l, p.c(-eps / 2))), p.c(a));
      break;
    }
    case graph::RandomDistribution::cauchy: {
      // torch's CPU transformation: median + sigma * tan(pi * (u - 0.5))
      Value u = draw.uniform(f, full);
      result = p.add(p.c(a), p.mul(p.c(b), p.un<prim::TanOp>(p.mul(p.c(M_PI), p.sub(u, p.c(0.5))))));
      break;
    }
    case graph::RandomDistribution::log_normal: {
      result = p.un<prim::ExpOp>(p.add(p.mul(standardNormal(), p.c(b)), p.c(a)));
      break;
    }
    case graph::RandomDistribution::geometric: {
      // ceil(log(u) / log1p(-p)) with u in (0, 1], as torch's transformation
      Value u = p.sub(p.c(1), draw.uniform(f, full));
      result = p.un<prim::CeilOp>(p.div(p.un<prim::LogOp>(u), p.c(std::log1p(-a))));
      break;
    }
    case graph::RandomDistribution::integers:
      llvm_unreachable("handled above");
    }
    rewriter.replaceOp(op, pb.convert(result, t.getElementType()));
    return success();
  }
};

struct BernoulliToPrim : OpConversionPattern<graph::BernoulliOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::BernoulliOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType t = op.getType(), ct = opmathType(t);
    Pointwise p{pb, ct};
    Type f = ct.getElementType();
    Draw draw{pb, adaptor.getSeed(), (int64_t)op.getOffset(), SmallVector<int64_t>(t.getShape())};
    Value u = draw.uniform(f, f.isF64() ? 53 : 24);
    Value one = p.select(p.cmp<prim::LtOp>(u, p.in(adaptor.getP())), p.c(1), p.c(0));
    rewriter.replaceOp(op, pb.convert(one, t.getElementType()));
    return success();
  }
};

/// 1 / (1 - p) as eager's dropout scales: computed in the type's math type
/// (f32 for f16/bf16/f32) and rounded to the element type; 0 for p = 1
/// (nothing is kept).
double dropoutScale(Type et, double p) {
  if (p == 1)
    return 0;
  double scale = et.isF64() ? 1.0 / (1.0 - p) : (double)(1.0f / (float)(1.0 - p));
  llvm::APFloat v(scale);
  bool lost;
  v.convert(cast<FloatType>(et).getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
  v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return v.convertToDouble();
}

struct DropoutToPrim : OpConversionPattern<graph::DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::DropoutOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType t = op.getType(), ct = opmathType(t);
    Type f = ct.getElementType();
    double prob = op.getP().convertToDouble();
    // the mask's shape: one draw per element, or per element of the leading feature dims
    SmallVector<int64_t> maskShape(t.getShape());
    if (int64_t k = op.getFeatureDims(); k >= 0)
      for (int64_t i = k; i < t.getRank(); ++i)
        maskShape[i] = 1;
    Draw draw{pb, adaptor.getSeed(), (int64_t)op.getOffset(), maskShape};
    RankedTensorType mt = draw.of(f);
    Pointwise m{pb, mt};
    Value keep = m.cmp<prim::LtOp>(draw.uniform(f, f.isF64() ? 53 : 24), m.c(1 - prob));
    keep = pb.broadcast(keep, t.getShape());
    Pointwise p{pb, ct};
    // the scale as the element type holds it, then x * scale in the math type
    Value scale = pb.convert(pb.splat(t, dropoutScale(t.getElementType(), prob)), f);
    Value kept = p.mul(pb.convert(adaptor.getInput(), f), scale);
    rewriter.replaceOp(op, pb.convert(p.select(keep, kept, p.c(0)), t.getElementType()));
    return success();
  }
};

/// grad * mask * scale: the mask's 0/1 product is exact, the scale's is
/// rounded once (f16/bf16 in f32, as eager's scalar multiply).
struct DropoutBackwardToPrim : OpConversionPattern<graph::DropoutBackwardOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::DropoutBackwardOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Pointwise p{pb, opmathType(type)};
    Value r = p.mul(p.mul(p.in(adaptor.getInput()), p.in(adaptor.getMask())),
                    p.c(op.getScale().convertToDouble()));
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

} // namespace

void graph_to_prim::populateRandomPatterns(RewritePatternSet &patterns) {
  // The registry's patterns of the family (GraphRandomOps.td), generated by dyn-tblgen.
#define GEN_RANDOM_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
