//===- Math.cpp - pointwise math composites ----------------------------------===//
//
// The registry's pointwise math ops without a prim op of their own (their
// `Dyn_Math` lowering in GraphOps.td): each is a few prim ops, written as
// eager's CPU kernel computes it (same special cases, same order), in float32
// for float16 and bfloat16 operands.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// x - trunc(x); NaN for infinities (inf - inf), as eager.
struct FracToPrim : OpConversionPattern<graph::FracOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::FracOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Pointwise p{pb, op.getType()};
    Value x = p.in(adaptor.getInput());
    rewriter.replaceOp(op, p.sub(x, p.un<prim::TruncOp>(x)));
    return success();
  }
};

/// (x > 0) - (x < 0): 0 for NaN and -0.0 (eager's kernel); booleans unchanged.
struct SignToPrim : OpConversionPattern<graph::SignOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::SignOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Value x = pb.convert(adaptor.getInput(), type.getElementType());
    if (type.getElementType().isInteger(1)) {
      rewriter.replaceOp(op, x);
      return success();
    }
    Pointwise p{pb, type};
    Value pos = pb.convert(p.cmp<prim::GtOp>(x, p.c(0)), type.getElementType());
    Value neg = pb.convert(p.cmp<prim::LtOp>(x, p.c(0)), type.getElementType());
    rewriter.replaceOp(op, p.sub(pos, neg));
    return success();
  }
};

/// isnan, isinf, isfinite, isposinf, isneginf: comparisons on floats (ordered:
/// NaN is neither infinite nor finite); integers are finite numbers.
template <typename GraphOp>
struct ClassifyToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Value x = adaptor.getInput();
    RankedTensorType in = tensorType(x);
    RankedTensorType type = op.getType();
    constexpr bool finite = std::is_same_v<GraphOp, graph::IsFiniteOp>;
    if (!isa<FloatType>(in.getElementType())) {
      rewriter.replaceOp(op, pb.splat(type, finite ? 1.0 : 0.0));
      return success();
    }
    Pointwise p{pb, in};
    Value result;
    if constexpr (std::is_same_v<GraphOp, graph::IsNanOp>)
      result = p.cmp<prim::NeOp>(x, x);
    else if constexpr (std::is_same_v<GraphOp, graph::IsInfOp>)
      result = p.cmp<prim::EqOp>(p.un<prim::AbsOp>(x), p.c(kInf));
    else if constexpr (finite)
      result = p.cmp<prim::LtOp>(p.un<prim::AbsOp>(x), p.c(kInf));
    else if constexpr (std::is_same_v<GraphOp, graph::IsPosInfOp>)
      result = p.cmp<prim::EqOp>(x, p.c(kInf));
    else
      result = p.cmp<prim::EqOp>(x, p.c(-kInf));
    rewriter.replaceOp(op, result);
    return success();
  }
};
using IsNanToPrim = ClassifyToPrim<graph::IsNanOp>;
using IsInfToPrim = ClassifyToPrim<graph::IsInfOp>;
using IsFiniteToPrim = ClassifyToPrim<graph::IsFiniteOp>;
using IsPosInfToPrim = ClassifyToPrim<graph::IsPosInfOp>;
using IsNegInfToPrim = ClassifyToPrim<graph::IsNegInfOp>;

/// C fmod: prim.fmod on floats; on integers a - trunc(a / b) * b (capture
/// admits only nonzero divisors there).
struct FmodToPrim : OpConversionPattern<graph::FmodOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::FmodOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Pointwise p{pb, op.getType()};
    Value a = p.in(adaptor.getLhs()), b = p.in(adaptor.getRhs());
    if (isa<FloatType>(p.type.getElementType()))
      rewriter.replaceOp(op, p.bin<prim::FmodOp>(a, b));
    else
      rewriter.replaceOp(op, p.sub(a, p.mul(p.div(a, b), b)));
    return success();
  }
};

/// div with rounding, as eager's kernels compute it. Integers: truncating
/// division, floor one less where the remainder's sign differs from the
/// divisor's. Floats (c10's div_floor_floating): q = (a - fmod(a, b)) / b,
/// one less where the remainder and b differ in sign, then rounded to the
/// nearest integer (ties down); a zero quotient takes the sign of a / b, a
/// zero divisor gives a / b. `round_steps` rounds each step to the result
/// type (f16/bf16 computed in f32).
struct DivRoundedToPrim : OpConversionPattern<graph::DivRoundedOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::DivRoundedOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Type et = type.getElementType();
    bool trunc = op.getRoundingMode() == "trunc";
    if (!isa<FloatType>(et)) {
      Pointwise p{pb, type};
      Value a = p.in(adaptor.getLhs()), b = p.in(adaptor.getRhs());
      Value q = p.div(a, b);
      if (!trunc) {
        Value r = p.sub(a, p.mul(q, b));
        Value signs = p.cmp<prim::NeOp>(p.cmp<prim::LtOp>(r, p.c(0)), p.cmp<prim::LtOp>(b, p.c(0)));
        Value fix = prim::AndOp::create(rewriter, op.getLoc(), tensorType(signs),
                                        p.cmp<prim::NeOp>(r, p.c(0)), signs);
        q = p.select(fix, p.sub(q, p.c(1)), q);
      }
      rewriter.replaceOp(op, q);
      return success();
    }
    RankedTensorType ct = opmathType(type);
    Pointwise p{pb, ct};
    bool roundSteps = op.getRoundSteps() && ct != type;
    auto rnd = [&](Value v) { return roundSteps ? pb.convert(pb.convert(v, et), ct.getElementType()) : v; };
    Value a = p.in(adaptor.getLhs()), b = p.in(adaptor.getRhs());
    if (trunc) {
      rewriter.replaceOp(op, pb.convert(p.un<prim::TruncOp>(rnd(p.div(a, b))), et));
      return success();
    }
    Location loc = op.getLoc();
    Value mod = p.bin<prim::FmodOp>(a, b);  // exact
    Value q = rnd(p.div(rnd(p.sub(a, mod)), b));
    Value signs = p.cmp<prim::NeOp>(p.cmp<prim::LtOp>(b, p.c(0)), p.cmp<prim::LtOp>(mod, p.c(0)));
    Value fix = prim::AndOp::create(rewriter, loc, tensorType(signs), p.cmp<prim::NeOp>(mod, p.c(0)), signs);
    q = p.select(fix, rnd(p.sub(q, p.c(1))), q);
    Value fl = p.un<prim::FloorOp>(q);
    Value r = p.select(p.cmp<prim::GtOp>(rnd(p.sub(q, fl)), p.c(0.5)), rnd(p.add(fl, p.c(1))), fl);
    r = p.select(p.cmp<prim::EqOp>(q, p.c(0)), p.mul(p.div(a, b), p.c(0)), r);
    r = p.select(p.cmp<prim::EqOp>(b, p.c(0)), rnd(p.div(a, b)), r);
    rewriter.replaceOp(op, pb.convert(r, et));
    return success();
  }
};

/// hypot as a scaled sum that cannot overflow: m * sqrt(1 + (n/m)^2) with
/// m = max(|x|, |y|), n = min(|x|, |y|); 0 where m is 0, and +inf where either
/// is infinite (even against a NaN, as C's hypot).
struct HypotToPrim : OpConversionPattern<graph::HypotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::HypotOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Pointwise p{pb, opmathType(op.getType())};
    Value x = p.un<prim::AbsOp>(p.in(adaptor.getLhs())), y = p.un<prim::AbsOp>(p.in(adaptor.getRhs()));
    Value m = p.max(x, y), n = p.min(x, y);
    Value q = p.div(n, m);
    Value r = p.mul(m, p.un<prim::SqrtOp>(p.add(p.c(1), p.mul(q, q))));
    r = p.select(p.cmp<prim::EqOp>(m, p.c(0)), p.c(0), r);
    Value inf = prim::OrOp::create(rewriter, op.getLoc(), p.type.clone(rewriter.getI1Type()),
                                   p.cmp<prim::EqOp>(x, p.c(kInf)), p.cmp<prim::EqOp>(y, p.c(kInf)));
    r = p.select(inf, p.c(kInf), r);
    rewriter.replaceOp(op, pb.convert(r, op.getType().getElementType()));
    return success();
  }
};

/// logaddexp: m + log1p(exp(-|a - b|)), m = max(a, b); a where a and b are the
/// same infinity. logaddexp2: m + log1p(exp2(-|a - b|)) / ln 2.
template <typename GraphOp>
struct LogAddExpToPrimT : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Pointwise p{pb, opmathType(op.getType())};
    Value a = p.in(adaptor.getLhs()), b = p.in(adaptor.getRhs());
    Value m = p.max(a, b);
    Value d = p.un<prim::NegOp>(p.un<prim::AbsOp>(p.sub(a, b)));
    Value r;
    if constexpr (std::is_same_v<GraphOp, graph::LogAddExpOp>)
      r = p.add(m, p.un<prim::Log1pOp>(p.un<prim::ExpOp>(d)));
    else
      r = p.add(m, p.mul(p.un<prim::Log1pOp>(p.un<prim::Exp2Op>(d)), p.c(1.0 / std::log(2.0))));
    Value sameInf = prim::AndOp::create(rewriter, op.getLoc(), p.type.clone(rewriter.getI1Type()),
                                        p.cmp<prim::EqOp>(p.un<prim::AbsOp>(a), p.c(kInf)),
                                        p.cmp<prim::EqOp>(a, b));
    r = p.select(sameInf, a, r);
    rewriter.replaceOp(op, pb.convert(r, op.getType().getElementType()));
    return success();
  }
};
using LogAddExpToPrim = LogAddExpToPrimT<graph::LogAddExpOp>;
using LogAddExp2ToPrim = LogAddExpToPrimT<graph::LogAddExp2Op>;

/// xlogy: NaN where y is NaN, 0 where x is 0, else x * log(y).
struct XLogYToPrim : OpConversionPattern<graph::XLogYOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::XLogYOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Pointwise p{pb, opmathType(op.getType())};
    Value x = p.in(adaptor.getLhs()), y = p.in(adaptor.getRhs());
    Value r = p.mul(x, p.un<prim::LogOp>(y));
    r = p.select(p.cmp<prim::EqOp>(x, p.c(0)), p.c(0), r);
    r = p.select(p.cmp<prim::NeOp>(y, y), y, r);
    rewriter.replaceOp(op, pb.convert(r, op.getType().getElementType()));
    return success();
  }
};

/// lerp as eager's kernel: start + w * (end - start) where |w| < 0.5, else
/// end - (end - start) * (1 - w).
struct LerpToPrim : OpConversionPattern<graph::LerpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::LerpOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Pointwise p{pb, opmathType(op.getType())};
    Value s = p.in(adaptor.getStart()), e = p.in(adaptor.getEnd()), w = p.in(adaptor.getWeight());
    Value diff = p.sub(e, s);
    Value low = p.add(s, p.mul(w, diff));
    Value high = p.sub(e, p.mul(diff, p.sub(p.c(1), w)));
    Value r = p.select(p.cmp<prim::LtOp>(p.un<prim::AbsOp>(w), p.c(0.5)), low, high);
    rewriter.replaceOp(op, pb.convert(r, op.getType().getElementType()));
    return success();
  }
};

/// addcmul: input + (value * tensor1) * tensor2; addcdiv: input + (value *
/// tensor1) / tensor2 (eager's order), in float32 for float16 and bfloat16,
/// rounded once. Integer addcdiv is not defined (PyTorch raises).
template <typename GraphOp>
struct AddcToPrimT : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    constexpr bool isDiv = std::is_same_v<GraphOp, graph::AddcdivOp>;
    if (isDiv && !isa<FloatType>(type.getElementType()))
      return rewriter.notifyMatchFailure(op, "integer addcdiv (PyTorch raises)");
    Pointwise p{pb, opmathType(type)};
    double value = op.getValue().convertToDouble();
    if (!isa<FloatType>(type.getElementType()))
      value = std::trunc(value);
    Value scaled = p.mul(p.c(value), p.in(adaptor.getTensor1()));
    Value t2 = p.in(adaptor.getTensor2());
    Value r = p.add(p.in(adaptor.getInput()), isDiv ? p.div(scaled, t2) : p.mul(scaled, t2));
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};
/// clamp: min(max(x, lo), hi) in the result type (exact in every type;
/// NaN-propagating prim.max/min give eager's NaN, and hi where lo > hi).
struct ClampToPrim : OpConversionPattern<graph::ClampOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ClampOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Pointwise p{pb, op.getType()};
    Value lo = p.in(adaptor.getMin()), hi = p.in(adaptor.getMax());
    Value r = p.min(p.max(p.in(adaptor.getInput()), lo), hi);
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// round(x, decimals) as eager's kernel: each step in x's type, 10^|d|
/// rounded to it.
struct RoundDecimalsToPrim : OpConversionPattern<graph::RoundDecimalsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::RoundDecimalsOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Pointwise p{pb, op.getType()};
    int64_t d = (int64_t)op.getDecimals();
    Value ten = p.c(std::pow(10.0, (double)std::abs(d)));
    Value x = adaptor.getInput();
    Value r = d >= 0 ? p.div(p.un<prim::RoundOp>(p.mul(x, ten)), ten)
                     : p.mul(p.un<prim::RoundOp>(p.div(x, ten)), ten);
    rewriter.replaceOp(op, r);
    return success();
  }
};

using AddcmulToPrim = AddcToPrimT<graph::AddcmulOp>;
using AddcdivToPrim = AddcToPrimT<graph::AddcdivOp>;

} // namespace

void dyn::graph_to_prim::populateMathPatterns(RewritePatternSet &patterns) {
  // The registry's Dyn_Math lowerings (GraphOps.td), generated by dyn-tblgen.
#define GEN_MATH_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
