//===- Special.cpp - pointwise math and special functions --------------------===//
//
// The registry's `Dyn_Special` lowerings (GraphSpecialOps.td). Each op becomes
// prim arithmetic that both back ends compile the same way: the CPU kernels
// and the GPU kernels run one algorithm (docs/special-functions.md). Simple
// ops are written as eager's CPU kernel computes them (same special cases and
// order), in float32 for float16 and bfloat16 with one rounding.
//
// One file past ~800 lines on purpose: the registry's generated pattern list
// (GEN_SPECIAL_PATTERNS) names every pattern class of the family, so their
// definitions share this TU.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

#include <cmath>
#include <limits>
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = llvm::numbers::pi;

Value andI1(Pointwise &p, Value a, Value b) {
  return prim::AndOp::create(p.pb.b, p.pb.loc, p.type.clone(p.pb.b.getI1Type()), a, b);
}
Value orI1(Pointwise &p, Value a, Value b) {
  return prim::OrOp::create(p.pb.b, p.pb.loc, p.type.clone(p.pb.b.getI1Type()), a, b);
}
Value isNan(Pointwise &p, Value x) { return p.cmp<prim::NeOp>(x, x); }
/// `v` rounded to `t` and back (eager's 16-bit kernels round after each step).
Value roundTo(Pointwise &p, Value v, Type t) {
  Type self = p.type.getElementType();
  return t == self ? v : p.pb.convert(p.pb.convert(v, t), self);
}

/// A unary op computed in the opmath type of its result and rounded once:
/// `Fn(p, x, op)` gives the value.
template <typename GraphOp, Value (*Fn)(Pointwise &, Value, GraphOp)>
struct OpmathUnary : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Pointwise p{pb, opmathType(type)};
    Value r = Fn(p, p.in(adaptor.getInput()), op);
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

/// The same for binary ops (operands converted to the opmath type and broadcast).
template <typename GraphOp, Value (*Fn)(Pointwise &, Value, Value)>
struct OpmathBinary : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Pointwise p{pb, opmathType(type)};
    Value r = Fn(p, p.in(adaptor.getLhs()), p.in(adaptor.getRhs()));
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Elementwise math
//===----------------------------------------------------------------------===//

Value deg2rad(Pointwise &p, Value x, graph::Deg2RadOp) { return p.mul(x, p.c(kPi / 180.0)); }
Value rad2deg(Pointwise &p, Value x, graph::Rad2DegOp) { return p.mul(x, p.c(180.0 / kPi)); }
using Deg2RadToPrim = OpmathUnary<graph::Deg2RadOp, deg2rad>;
using Rad2DegToPrim = OpmathUnary<graph::Rad2DegOp, rad2deg>;

/// 1 at 0, else sin(pi x) / (pi x) (NaN for infinities, as eager).
Value sinc(Pointwise &p, Value x, graph::SincOp) {
  Value px = p.mul(p.c(kPi), x);
  return p.select(p.cmp<prim::EqOp>(x, p.c(0)), p.c(1), p.div(p.un<prim::SinOp>(px), px));
}
using SincToPrim = OpmathUnary<graph::SincOp, sinc>;

/// NaN kept; pi where x < 0; else 0.
Value angle(Pointwise &p, Value x, graph::AngleOp) {
  Value r = p.select(p.cmp<prim::LtOp>(x, p.c(0)), p.c(kPi), p.c(0));
  return p.select(isNan(p, x), x, r);
}
using AngleToPrim = OpmathUnary<graph::AngleOp, angle>;

/// NaN kept; -x log x for x > 0; 0 at 0; -inf below.
Value entr(Pointwise &p, Value x, graph::EntrOp) {
  Value r = p.select(p.cmp<prim::EqOp>(x, p.c(0)), p.c(0), p.c(-kInf));
  r = p.select(p.cmp<prim::GtOp>(x, p.c(0)), p.mul(p.un<prim::NegOp>(x), p.un<prim::LogOp>(x)), r);
  return p.select(isNan(p, x), x, r);
}
using EntrToPrim = OpmathUnary<graph::EntrOp, entr>;

/// x clamped to [eps, 1 - eps] (eps >= 0; NaN passes), then +inf at 1, else
/// log(x / (1 - x)).
/// float16 and bfloat16 round after each step with round_steps (eager's
/// vectorized CPU kernel), else once (CUDA's).
Value logit(Pointwise &p, Value x, graph::LogitOp op) {
  Type t = op.getRoundSteps() ? op.getType().getElementType() : p.type.getElementType();
  double eps = op.getEps().convertToDouble();
  if (eps >= 0) {
    Value lo = roundTo(p, p.c(eps), t), hi = roundTo(p, p.sub(p.c(1), p.c(eps)), t);
    x = p.select(p.cmp<prim::LtOp>(x, lo), lo, p.select(p.cmp<prim::GtOp>(x, hi), hi, x));
  }
  Value r = p.un<prim::LogOp>(roundTo(p, p.div(x, roundTo(p, p.sub(p.c(1), x), t)), t));
  return p.select(p.cmp<prim::EqOp>(x, p.c(1)), p.c(kInf), r);
}
using LogitToPrim = OpmathUnary<graph::LogitOp, logit>;

/// The sign bit: copysign(1, x) < 0 for floats (-0.0 and NaN's sign bit
/// included), x < 0 for integers, false for booleans.
struct SignbitToPrim : OpConversionPattern<graph::SignbitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::SignbitOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Value x = adaptor.getInput();
    RankedTensorType in = tensorType(x);
    if (in.getElementType().isInteger(1)) {
      rewriter.replaceOp(op, pb.splat(op.getType(), 0));
      return success();
    }
    Pointwise p{pb, in};
    if (isa<FloatType>(in.getElementType()))
      x = p.bin<prim::CopySignOp>(p.c(1), x);
    rewriter.replaceOp(op, p.cmp<prim::LtOp>(x, p.c(0)));
    return success();
  }
};

/// Real tensors have no imaginary part: true everywhere.
struct IsRealToPrim : OpConversionPattern<graph::IsRealOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::IsRealOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    rewriter.replaceOp(op, pb.splat(op.getType(), 1));
    return success();
  }
};

/// NaN, +inf and -inf replaced (floats); integers and booleans unchanged.
struct NanToNumToPrim : OpConversionPattern<graph::NanToNumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::NanToNumOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Value x = adaptor.getInput();
    RankedTensorType type = op.getType();
    if (!isa<FloatType>(type.getElementType())) {
      rewriter.replaceOp(op, x);
      return success();
    }
    Pointwise p{pb, type};
    Value r = p.select(p.cmp<prim::EqOp>(x, p.c(kInf)), p.c(op.getPosinf().convertToDouble()), x);
    r = p.select(p.cmp<prim::EqOp>(x, p.c(-kInf)), p.c(op.getNeginf().convertToDouble()), r);
    r = p.select(isNan(p, x), p.c(op.getNan().convertToDouble()), r);
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// atan2 on the prim op, with the signed zeros' cases made explicit: the
/// angle of (+-0, y) is y's signed zero or +-pi by x's sign bit, which the
/// CPU path's atan2 does not give (docs/special-functions.md).
Value atan2(Pointwise &p, Value y, Value x) {
  Value r = p.bin<prim::Atan2Op>(y, x);
  Value bothZero = andI1(p, p.cmp<prim::EqOp>(y, p.c(0)), p.cmp<prim::EqOp>(x, p.c(0)));
  Value xNeg = p.cmp<prim::LtOp>(p.bin<prim::CopySignOp>(p.c(1), x), p.c(0));
  Value zero = p.select(xNeg, p.bin<prim::CopySignOp>(p.c(kPi), y), y);
  return p.select(bothZero, zero, r);
}
/// In float64 for every float type: the CPU path's float32 atan2 is wrong at
/// infinities (libm's float64 atan2 and libdevice's are exact there).
struct Atan2ToPrim : OpConversionPattern<graph::Atan2Op> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::Atan2Op op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Pointwise d{pb, type.clone(rewriter.getF64Type())};
    Value r = atan2(d, d.in(adaptor.getLhs()), d.in(adaptor.getRhs()));
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

/// fmax/fmin: the other operand where one is NaN (NaN where both are);
/// integers: max/min.
template <bool IsMax>
Value fmaxmin(Pointwise &p, Value a, Value b) {
  Value m = IsMax ? p.max(a, b) : p.min(a, b);
  if (!isa<FloatType>(p.type.getElementType()))
    return m;
  return p.select(isNan(p, a), b, p.select(isNan(p, b), a, m));
}
using FMaxToPrim = OpmathBinary<graph::FMaxOp, fmaxmin<true>>;
using FMinToPrim = OpmathBinary<graph::FMinOp, fmaxmin<false>>;

/// (lhs != 0) != (rhs != 0).
struct LogicalXorToPrim : OpConversionPattern<graph::LogicalXorOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::LogicalXorOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Pointwise p{pb, type.clone(rewriter.getI1Type())};
    Value r = p.cmp<prim::NeOp>(p.in(adaptor.getLhs()), p.in(adaptor.getRhs()));
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

/// rhs where lhs is 0, else lhs > 0 (so 0 for NaN), as eager's kernel.
Value heaviside(Pointwise &p, Value x, Value v) {
  Value pos = p.pb.convert(p.cmp<prim::GtOp>(x, p.c(0)), p.type.getElementType());
  return p.select(p.cmp<prim::EqOp>(x, p.c(0)), v, pos);
}
using HeavisideToPrim = OpmathBinary<graph::HeavisideOp, heaviside>;

/// NaN where y is NaN, 0 where x is 0, else x * log1p(y).
Value xlog1py(Pointwise &p, Value x, Value y) {
  Value r = p.select(p.cmp<prim::EqOp>(x, p.c(0)), p.c(0), p.mul(x, p.un<prim::Log1pOp>(y)));
  return p.select(isNan(p, y), y, r);
}
using XLog1pYToPrim = OpmathBinary<graph::XLog1pYOp, xlog1py>;

/// x * 2^e (eager: x * pow(2, e)).
Value ldexp(Pointwise &p, Value x, Value e) { return p.mul(x, p.un<prim::Exp2Op>(e)); }
using LdexpToPrim = OpmathBinary<graph::LdexpOp, ldexp>;

/// isclose as eager computes it: input == other, or (equal_nan) both NaN, or
/// |input - other| finite and <= atol + |rtol * other|; integer operands
/// compare in float32 (eager's default dtype) where the tolerances are not 0.
struct IsCloseToPrim : OpConversionPattern<graph::IsCloseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::IsCloseOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Value a = adaptor.getInput(), b = adaptor.getOther();
    Type et = promoteTypes(tensorType(a).getElementType(), tensorType(b).getElementType());
    RankedTensorType type = op.getType().clone(et);
    Pointwise p{pb, type};
    a = p.in(a);
    b = p.in(b);
    Value close = p.cmp<prim::EqOp>(a, b);
    bool isFloat = isa<FloatType>(et);
    if (op.getEqualNan() && isFloat)
      close = orI1(p, close, andI1(p, isNan(p, a), isNan(p, b)));
    double rtol = op.getRtol().convertToDouble(), atol = op.getAtol().convertToDouble();
    if (rtol != 0 || atol != 0) {
      // Eager's tensor ops: float16 and bfloat16 round after each step.
      Type t = isFloat ? et : rewriter.getF32Type();
      Pointwise f{pb, opmathType(type.clone(t))};
      a = f.in(a);
      b = f.in(b);
      Value allowed = roundTo(f, f.add(f.c(atol), f.un<prim::AbsOp>(roundTo(f, f.mul(f.c(rtol), b), t))), t);
      Value actual = f.un<prim::AbsOp>(roundTo(f, f.sub(a, b), t));
      Value within = andI1(f, f.cmp<prim::LtOp>(actual, f.c(kInf)), f.cmp<prim::LeOp>(actual, allowed));
      close = orI1(f, close, within);
    }
    rewriter.replaceOp(op, close);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Special functions, in float64 (docs/special-functions.md). Loops of the
// algorithms are unrolled to a fixed count that covers every input, with
// selects where a step applies to some elements only.
//===----------------------------------------------------------------------===//

/// A unary special function computed in float64 and rounded once.
template <typename GraphOp, Value (*Fn)(Pointwise &, Value, GraphOp)>
struct F64Unary : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Pointwise d{pb, type.clone(rewriter.getF64Type())};
    Value r = Fn(d, d.in(adaptor.getInput()), op);
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

/// Horner: coeffs from the highest power down.
Value horner(Pointwise &p, Value x, ArrayRef<double> coeffs) {
  Value r = p.c(coeffs.front());
  for (double c : coeffs.drop_front())
    r = p.add(p.mul(r, x), p.c(c));
  return r;
}

constexpr double kTwoOverSqrtPi = 1.1283791670955125738961589; // 2 / sqrt(pi)
constexpr double kSqrt2 = llvm::numbers::sqrt2;

/// erfinv of a = |y| given q = 1 - a exactly (ndtri passes q for tiny tails):
/// Giles' single-precision approximation ("Approximating the erfinv
/// function", GPU Computing Gems, 2011) refined by two Halley steps on
/// erf(x) - a (on q - erfc(x) where a >= 0.5, so the tail keeps its
/// accuracy). Infinite where q is 0; NaN beyond.
Value erfinvCore(Pointwise &d, Value a, Value q) {
  Value w = d.un<prim::NegOp>(d.un<prim::LogOp>(d.mul(q, d.add(d.c(1), a))));
  Value central = horner(d, d.sub(w, d.c(2.5)),
                         {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                          0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941});
  Value tail = horner(d, d.sub(d.un<prim::SqrtOp>(w), d.c(3)),
                      {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                       0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682});
  Value x = d.mul(d.select(d.cmp<prim::LtOp>(w, d.c(5)), central, tail), a);
  Value useErf = d.cmp<prim::LtOp>(a, d.c(0.5));
  for (int i = 0; i < 2; ++i) {
    Value g = d.select(useErf, d.sub(d.un<prim::ErfOp>(x), a), d.sub(q, d.un<prim::ErfcOp>(x)));
    Value slope = d.mul(d.c(kTwoOverSqrtPi), d.un<prim::ExpOp>(d.un<prim::NegOp>(d.mul(x, x))));
    Value step = d.div(g, d.add(slope, d.mul(x, g)));
    // Where the slope underflows (|x| > 26), the estimate stays.
    x = d.select(d.cmp<prim::GtOp>(slope, d.c(0)), d.sub(x, step), x);
  }
  x = d.select(d.cmp<prim::EqOp>(q, d.c(0)), d.c(kInf), x);
  return d.select(d.cmp<prim::LtOp>(q, d.c(0)), d.c(std::nan("")), x);
}

Value erfinv(Pointwise &d, Value y, graph::ErfinvOp) {
  Value a = d.un<prim::AbsOp>(y);
  return d.bin<prim::CopySignOp>(erfinvCore(d, a, d.sub(d.c(1), a)), y);
}
using ErfinvToPrim = F64Unary<graph::ErfinvOp, erfinv>;

/// ndtri(p) = sqrt(2) erfinv(2p - 1), with 1 - |2p - 1| passed exactly (2p or
/// 2(1 - p)); NaN outside [0, 1].
Value ndtri(Pointwise &d, Value p, graph::NdtriOp) {
  Value low = d.cmp<prim::LtOp>(p, d.c(0.5));
  Value q = d.select(low, d.mul(d.c(2), p), d.mul(d.c(2), d.sub(d.c(1), p)));
  Value a = d.sub(d.c(1), q);
  Value x = d.mul(d.c(kSqrt2), erfinvCore(d, a, q));
  Value r = d.select(low, d.un<prim::NegOp>(x), x);
  Value outside = orI1(d, d.cmp<prim::LtOp>(p, d.c(0)), d.cmp<prim::GtOp>(p, d.c(1)));
  return d.select(outside, d.c(std::nan("")), r);
}
using NdtriToPrim = F64Unary<graph::NdtriOp, ndtri>;

/// ndtr(x) = erfc(-x / sqrt(2)) / 2.
Value ndtr(Pointwise &d, Value x, graph::NdtrOp) {
  return d.mul(d.c(0.5), d.un<prim::ErfcOp>(d.mul(x, d.c(-1 / kSqrt2))));
}
using NdtrToPrim = F64Unary<graph::NdtrOp, ndtr>;

/// erfcx(x) = exp(x^2) erfc(x) where erfc(x) does not underflow (x < 25),
/// else the asymptotic series 1 / (x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k
/// (6 terms: relative error below 1e-14 there). x^2 is rounded to `type`'s
/// opmath type first, as eager's kernel computes it: below 0, where the
/// result is 2 exp(x^2), that rounding is eager's whole error.
Value erfcxOf(Pointwise &d, Value x, RankedTensorType type) {
  Value x2 = d.mul(x, x);
  Type opmath = opmathType(type).getElementType();
  if (!opmath.isF64())
    x2 = d.pb.convert(d.pb.convert(x2, opmath), d.type.getElementType());
  Value direct = d.mul(d.un<prim::ExpOp>(x2), d.un<prim::ErfcOp>(x));
  Value big = d.max(x, d.c(25));
  Value inv2x2 = d.div(d.c(0.5), d.mul(big, big));
  Value term = d.c(1), sum = d.c(1);
  for (int k = 1; k <= 6; ++k) {
    term = d.mul(term, d.mul(d.c(-(2.0 * k - 1)), inv2x2));
    sum = d.add(sum, term);
  }
  Value asym = d.div(sum, d.mul(big, d.c(std::sqrt(kPi))));
  return d.select(d.cmp<prim::LtOp>(x, d.c(25)), direct, asym);
}
Value erfcx(Pointwise &d, Value x, graph::ErfcxOp op) {
  return d.select(isNan(d, x), x, erfcxOf(d, x, op.getType()));
}
using ErfcxToPrim = F64Unary<graph::ErfcxOp, erfcx>;

/// log_ndtr as eager: t = x / sqrt(2); log(erfcx(-t) / 2) - t^2 where x < -1,
/// else log1p(-erfc(t) / 2).
Value logNdtr(Pointwise &d, Value x, graph::LogNdtrOp op) {
  Value t = d.mul(x, d.c(1 / kSqrt2));
  Value low = d.sub(d.un<prim::LogOp>(d.mul(erfcxOf(d, d.un<prim::NegOp>(t), op.getType()), d.c(0.5))), d.mul(t, t));
  Value high = d.un<prim::Log1pOp>(d.mul(d.un<prim::ErfcOp>(t), d.c(-0.5)));
  return d.select(d.cmp<prim::LtOp>(x, d.c(-1)), low, high);
}
using LogNdtrToPrim = F64Unary<graph::LogNdtrOp, logNdtr>;

/// |sin(pi x)| through x's fraction (exact), so large |x| lose nothing.
Value absSinPi(Pointwise &d, Value x) {
  Value r = d.sub(x, d.un<prim::TruncOp>(x));
  return d.un<prim::AbsOp>(d.un<prim::SinOp>(d.mul(d.c(kPi), r)));
}

/// lgamma: Lanczos' approximation (g = 7, 9 terms; relative error of gamma
/// about 1e-15) for x >= 0.5, the reflection log(pi / |sin(pi x)|) -
/// lgamma(1 - x) below; +inf at the poles and at +-inf.
Value lgammaOf(Pointwise &d, Value x) {
  static constexpr double kLanczos[] = {0.99999999999980993,  676.5203681218851,
                                        -1259.1392167224028,  771.32342877765313,
                                        -176.61502916214059,  12.507343278686905,
                                        -0.13857109526572012, 9.9843695780195716e-6,
                                        1.5056327351493116e-7};
  Value reflect = d.cmp<prim::LtOp>(x, d.c(0.5));
  Value xp = d.select(reflect, d.sub(d.c(1), x), x); // >= 0.5
  Value z = d.sub(xp, d.c(1));
  Value sum = d.c(kLanczos[0]);
  for (int i = 1; i < 9; ++i)
    sum = d.add(sum, d.div(d.c(kLanczos[i]), d.add(z, d.c(i))));
  Value t = d.add(z, d.c(7.5));
  Value lg = d.add(d.c(0.5 * std::log(2 * kPi)),
                   d.add(d.sub(d.mul(d.add(z, d.c(0.5)), d.un<prim::LogOp>(t)), t), d.un<prim::LogOp>(sum)));
  Value refl = d.sub(d.un<prim::LogOp>(d.div(d.c(kPi), absSinPi(d, x))), lg);
  Value r = d.select(reflect, refl, lg);
  return d.select(d.cmp<prim::EqOp>(d.un<prim::AbsOp>(x), d.c(kInf)), d.c(kInf), r);
}
Value lgamma(Pointwise &d, Value x, graph::LgammaOp) { return lgammaOf(d, x); }
using LgammaToPrim = F64Unary<graph::LgammaOp, lgamma>;

/// Shift x >= 0 up to y = x + k >= 10 (at most 10 steps), accumulating
/// sum 1 / (x + j)^s; returns y.
Value shiftToTen(Pointwise &d, Value x, int s, Value &acc) {
  for (int i = 0; i < 10; ++i) {
    Value below = d.cmp<prim::LtOp>(x, d.c(10));
    Value inv = d.div(d.c(1), x), pw = inv;
    for (int k = 1; k < s; ++k)
      pw = d.mul(pw, inv);
    acc = d.select(below, d.add(acc, pw), acc);
    x = d.select(below, d.add(x, d.c(1)), x);
  }
  return x;
}

/// psi(y) for y >= 10: log y - 1/(2y) - sum B_2k / (2k y^2k) (7 terms: the
/// error is below 1e-16 there).
Value digammaAsymptotic(Pointwise &d, Value y) {
  Value z = d.div(d.c(1), d.mul(y, y));
  Value series = d.mul(z, horner(d, z, {1.0 / 12, -691.0 / 32760, 1.0 / 132, -1.0 / 240, 1.0 / 252,
                                        -1.0 / 120, 1.0 / 12}));
  return d.sub(d.sub(d.un<prim::LogOp>(y), d.div(d.c(0.5), y)), series);
}

/// digamma: the reflection psi(1 - x) - pi / tan(pi frac(x)) below 0 (NaN at
/// negative integers), the recurrence psi(x) = psi(x + 1) - 1/x up to 10, the
/// asymptotic series there; -+inf at +-0 (eager's).
Value digammaOf(Pointwise &d, Value x) {
  Value neg = d.cmp<prim::LtOp>(x, d.c(0));
  Value xp = d.select(neg, d.sub(d.c(1), x), x);
  Value acc = d.c(0);
  Value y = shiftToTen(d, xp, 1, acc);
  Value r = d.sub(digammaAsymptotic(d, y), acc);
  Value frac = d.sub(x, d.un<prim::TruncOp>(x));
  Value refl = d.sub(r, d.div(d.c(kPi), d.un<prim::TanOp>(d.mul(d.c(kPi), frac))));
  r = d.select(neg, refl, r);
  r = d.select(andI1(d, neg, d.cmp<prim::EqOp>(frac, d.c(0))), d.c(std::nan("")), r);
  Value zero = d.cmp<prim::EqOp>(x, d.c(0));
  return d.select(zero, d.bin<prim::CopySignOp>(d.c(kInf), d.un<prim::NegOp>(x)), r);
}
Value digamma(Pointwise &d, Value x, graph::DigammaOp) { return digammaOf(d, x); }
using DigammaToPrim = F64Unary<graph::DigammaOp, digamma>;

/// polygamma(n, x), n >= 1: (-1)^(n+1) n! zeta(n + 1, x), the Hurwitz zeta
/// summed directly up to x + k >= 10 and by Euler-Maclaurin (7 Bernoulli
/// terms) beyond; below 0 the reflection psi^(n)(x) = (-1)^n psi^(n)(1 - x) -
/// pi d^n/dx^n cot(pi x); at 0 and the negative integers eager's infinity.
Value polygammaOf(Pointwise &d, Value x, int n, Type opmath) {
  if (n == 0)
    return digammaOf(d, x);
  int s = n + 1;
  Value neg = d.cmp<prim::LtOp>(x, d.c(0));
  Value xp = d.select(neg, d.sub(d.c(1), x), x);
  Value sum = d.c(0);
  Value y = shiftToTen(d, xp, s, sum);
  // Euler-Maclaurin: y^(1-s)/(s-1) + y^-s/2 + sum_j B_2j/(2j)! s(s+1)..(s+2j-2) y^(-s-2j+1).
  Value inv = d.div(d.c(1), y), ys1 = inv;
  for (int k = 2; k < s; ++k)
    ys1 = d.mul(ys1, inv); // y^(1-s) (0 at y = inf)
  Value ys = d.mul(ys1, inv); // y^-s
  Value tail = d.add(d.div(ys1, d.c(s - 1)), d.mul(ys, d.c(0.5)));
  static constexpr double kBernoulli[] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66,
                                          -691.0 / 2730, 7.0 / 6};
  double rising = s, factorial = 2; // s(s+1)..(s+2j-2), (2j)!
  Value yPow = d.mul(ys, inv);      // y^(-s-1)
  Value inv2 = d.mul(inv, inv);
  for (int j = 1; j <= 7; ++j) {
    tail = d.add(tail, d.mul(yPow, d.c(kBernoulli[j - 1] / factorial * rising)));
    rising *= (s + 2 * j - 1) * (s + 2 * j);
    factorial *= (2 * j + 1) * (2 * j + 2);
    yPow = d.mul(yPow, inv2);
  }
  double nFact = 1;
  for (int k = 2; k <= n; ++k)
    nFact *= k;
  double sign = n % 2 ? 1 : -1;
  Value r = d.mul(d.c(sign * nFact), d.add(sum, tail));
  // Reflection: c = cot(pi x); D_n = d^n/dx^n cot(pi x).
  Value c = d.div(d.c(1), d.un<prim::TanOp>(d.mul(d.c(kPi), d.sub(x, d.un<prim::TruncOp>(x)))));
  Value c2 = d.mul(c, c), csc2 = d.add(d.c(1), c2);
  Value dn;
  if (n == 1)
    dn = d.mul(d.c(-kPi), csc2);
  else if (n == 2)
    dn = d.mul(d.c(2 * kPi * kPi), d.mul(c, csc2));
  else if (n == 3)
    dn = d.mul(d.c(-2 * kPi * kPi * kPi), d.mul(csc2, d.add(d.c(1), d.mul(d.c(3), c2))));
  else
    dn = d.mul(d.c(8 * kPi * kPi * kPi * kPi), d.mul(d.mul(c, csc2), d.add(d.c(2), d.mul(d.c(3), c2))));
  Value refl = d.sub(n % 2 ? d.un<prim::NegOp>(r) : r, d.mul(d.c(kPi), dn));
  if (n == 1) {
    // Eager's trigamma: pi^2 / sin(pi x)^2 with pi x rounded to its opmath
    // type (float32 for float32 inputs), which decides the value near poles.
    Value px = roundTo(d, d.mul(roundTo(d, d.c(kPi), opmath), x), opmath);
    Value sinPx = d.un<prim::SinOp>(px);
    refl = d.sub(d.div(d.c(kPi * kPi), d.mul(sinPx, sinPx)), r);
  }
  r = d.select(neg, refl, r);
  // Eager's values: its zeta (n >= 2) is infinite at the poles and -inf, NaN
  // at +inf; its trigamma (n = 1) is NaN at -inf (sin(-inf)).
  Value pole = andI1(d, d.cmp<prim::LeOp>(x, d.c(0)), d.cmp<prim::EqOp>(x, d.un<prim::TruncOp>(x)));
  if (n == 1)
    pole = andI1(d, pole, d.cmp<prim::GtOp>(x, d.c(-kInf)));
  r = d.select(pole, d.c(sign * kInf), r);
  if (n >= 2)
    r = d.select(d.cmp<prim::EqOp>(x, d.c(kInf)), d.c(std::nan("")), r);
  return r;
}

struct PolygammaToPrim : OpConversionPattern<graph::PolygammaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::PolygammaOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Pointwise d{pb, type.clone(rewriter.getF64Type())};
    Value r = polygammaOf(d, d.in(adaptor.getInput()), op.getN(), opmathType(type).getElementType());
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

/// mvlgamma(x, p) = p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(x - j / 2).
struct MvlgammaToPrim : OpConversionPattern<graph::MvlgammaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::MvlgammaOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Pointwise d{pb, type.clone(rewriter.getF64Type())};
    Value x = d.in(adaptor.getInput());
    int64_t p = op.getP();
    Value sum = lgammaOf(d, x);
    for (int64_t j = 1; j < p; ++j)
      sum = d.add(sum, lgammaOf(d, d.sub(x, d.c(0.5 * j))));
    sum = d.add(sum, d.c(p * (p - 1) / 4.0 * std::log(kPi)));
    rewriter.replaceOp(op, pb.convert(sum, type.getElementType()));
    return success();
  }
};

/// Modified Bessel functions of the first kind of order nu (0 or 1) of
/// a = |x|, scaled by exp(-a): the power series (x/2)^nu sum (a^2/4)^k /
/// (k! (k+nu)!) times exp(-a) for a <= 20 (all terms positive: no
/// cancellation; 60 terms), the asymptotic series 1 / sqrt(2 pi a) sum_k
/// prod_j (-(4nu^2 - (2j-1)^2)) / (8 j a) beyond (30 terms: relative error
/// below 1e-15 for a > 20).
Value besselIScaled(Pointwise &d, Value a, int nu) {
  Value small = d.min(a, d.c(20));
  Value q = d.mul(d.mul(small, small), d.c(0.25));
  Value term = d.c(1), sum = d.c(1);
  for (int k = 1; k <= 60; ++k) {
    term = d.mul(term, d.div(q, d.c(double(k) * (k + nu))));
    sum = d.add(sum, term);
  }
  if (nu == 1)
    sum = d.mul(sum, d.mul(small, d.c(0.5)));
  Value series = d.mul(sum, d.un<prim::ExpOp>(d.un<prim::NegOp>(small)));
  Value big = d.max(a, d.c(20));
  Value invA = d.div(d.c(1), big);
  Value aterm = d.c(1), asum = d.c(1);
  double mu = 4.0 * nu * nu;
  for (int k = 1; k <= 30; ++k) {
    double odd = 2.0 * k - 1;
    aterm = d.mul(aterm, d.mul(invA, d.c(-(mu - odd * odd) / (8.0 * k))));
    asum = d.add(asum, aterm);
  }
  Value asym = d.mul(asum, d.un<prim::RsqrtOp>(d.mul(big, d.c(2 * kPi))));
  Value r = d.select(d.cmp<prim::LeOp>(a, d.c(20)), series, asym);
  return d.select(isNan(d, a), a, r);
}

/// I_nu(x) (exp(|x|) times the scaled value: +inf beyond 709; NaN at +-inf,
/// eager's value there) or the scaled one; I1 is odd.
template <typename GraphOp, int Nu, bool Scaled>
Value besselI(Pointwise &d, Value x, GraphOp) {
  Value a = d.un<prim::AbsOp>(x);
  Value r = besselIScaled(d, a, Nu);
  if (!Scaled)
    r = d.select(d.cmp<prim::EqOp>(a, d.c(kInf)), d.c(std::nan("")), d.mul(r, d.un<prim::ExpOp>(a)));
  return Nu == 1 ? d.bin<prim::CopySignOp>(r, x) : r;
}
using I0ToPrim = F64Unary<graph::I0Op, besselI<graph::I0Op, 0, false>>;
using I0eToPrim = F64Unary<graph::I0eOp, besselI<graph::I0eOp, 0, true>>;
using I1ToPrim = F64Unary<graph::I1Op, besselI<graph::I1Op, 1, false>>;
using I1eToPrim = F64Unary<graph::I1eOp, besselI<graph::I1eOp, 1, true>>;

/// sin(x) / x; its Taylor series 1 - x^2/6 + ... where |x| < 0.5 (eager's
/// split), 0 at +-inf.
Value sphericalJ0(Pointwise &d, Value x, graph::SphericalBesselJ0Op) {
  Value x2 = d.mul(x, x);
  Value series = horner(d, x2, {1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0,
                                -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0, 1.0});
  Value direct = d.div(d.un<prim::SinOp>(x), x);
  Value r = d.select(d.cmp<prim::LtOp>(d.un<prim::AbsOp>(x), d.c(0.5)), series, direct);
  return d.select(d.cmp<prim::EqOp>(d.un<prim::AbsOp>(x), d.c(kInf)), d.c(0), r);
}
using SphericalBesselJ0ToPrim = F64Unary<graph::SphericalBesselJ0Op, sphericalJ0>;

//===----------------------------------------------------------------------===//
// Bessel functions J0, J1, Y0, Y1, K0, K1 and Airy Ai: eager's approximations
// (Cephes' rational and Chebyshev fits as ATen's Math.h evaluates them: the
// same polynomials, ranges and special values) in float64. A float32 input's
// phase x - pi/4 (x - 3pi/4) is rounded to float32 as eager's float32 kernel
// rounds it: for large x that rounding decides eager's value.
//===----------------------------------------------------------------------===//

/// Chebyshev series sum' c_i T_i(t / 2) by Clenshaw's recurrence (Cephes'
/// chbevl): coeffs from the highest order down.
Value chebyshev(Pointwise &d, Value t, ArrayRef<double> coeffs) {
  Value b0 = d.c(coeffs.front()), b1 = d.c(0), b2 = d.c(0);
  for (double c : coeffs.drop_front()) {
    b2 = b1;
    b1 = b0;
    b0 = d.add(d.sub(d.mul(t, b1), b2), d.c(c));
  }
  return d.mul(d.c(0.5), d.sub(b0, b2));
}

constexpr double kSqrt2OverPi = 0.797884560802865355879892119868763737; // sqrt(2 / pi)
constexpr double kTwoOverPi = 0.636619772367581343075535053490057448;

/// The asymptotic forms' rational functions of w = 25 / x^2 (J0, Y0) or
/// (5 / x)^2 (J1, Y1): P = pp / pq and Q = qp / qq.
struct BesselAsymptotic {
  ArrayRef<double> pp, pq, qp, qq;
};
constexpr double kJ0PP[] = {7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
                            5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
                            9.99999999999999997821e-01};
constexpr double kJ0PQ[] = {9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
                            5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
                            1.00000000000000000218e+00};
constexpr double kJ0QP[] = {-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
                            -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
                            -5.14105326766599330220e+01, -6.05014350600728481186e+00};
constexpr double kJ0QQ[] = {6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
                            7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
                            2.42005740240291393179e+02};
constexpr double kJ1PP[] = {7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
                            5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
                            1.00000000000000000254e+00};
constexpr double kJ1PQ[] = {5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
                            5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
                            9.99999999999999997461e-01};
constexpr double kJ1QP[] = {5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
                            3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
                            2.11688757100572135698e+02, 2.52070205858023719784e+01};
constexpr double kJ1QQ[] = {7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
                            9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
                            3.36093607810698293419e+02};

/// sqrt(2 / (pi x)) (P cos(phase) - 5/x Q sin(phase)) for J (Sine = false),
/// sqrt(2 / (pi x)) (P sin(phase) + 5/x Q cos(phase)) for Y, x > 5; phase =
/// x - shift rounded to `opmath` (eager's kernel type).
Value besselAsymptotic(Pointwise &d, Value x, int order, bool isY, Type opmath) {
  BesselAsymptotic c = order == 0 ? BesselAsymptotic{kJ0PP, kJ0PQ, kJ0QP, kJ0QQ}
                                  : BesselAsymptotic{kJ1PP, kJ1PQ, kJ1QP, kJ1QQ};
  Value w;
  if (order == 0) {
    w = d.div(d.c(25), d.mul(x, x));
  } else {
    Value f = d.div(d.c(5), x);
    w = d.mul(f, f);
  }
  Value p = d.div(horner(d, w, c.pp), horner(d, w, c.pq));
  Value q = d.mul(d.div(d.c(5), x), d.div(horner(d, w, c.qp), horner(d, w, c.qq)));
  double shift = order == 0 ? kPi / 4 : 3 * kPi / 4;
  Value phase = roundTo(d, d.sub(x, roundTo(d, d.c(shift), opmath)), opmath);
  Value cs = d.un<prim::CosOp>(phase), sn = d.un<prim::SinOp>(phase);
  Value r = isY ? d.add(d.mul(p, sn), d.mul(q, cs)) : d.sub(d.mul(p, cs), d.mul(q, sn));
  return d.div(d.mul(r, d.c(kSqrt2OverPi)), d.un<prim::SqrtOp>(x));
}

/// J0 of a = |x| <= 5: (a^2 - j1^2)(a^2 - j2^2) R(a^2) with j1, j2 its first
/// zeros; 1 - a^2 / 4 below 1e-5.
Value besselJ0Small(Pointwise &d, Value a) {
  static constexpr double kRP[] = {-4.79443220978201773821e+09, 1.95617491946556577543e+12,
                                   -2.49248344360967716204e+14, 9.70862251047306323952e+15};
  static constexpr double kRQ[] = {4.99563147152651017219e+02, 1.73785401676374683123e+05,
                                   4.84409658339962045305e+07, 1.11855537045356834862e+10,
                                   2.11277520115489217587e+12, 3.10518229857422583814e+14,
                                   3.18121955943204943306e+16, 1.71086294081043136091e+18};
  Value z = d.mul(a, a);
  Value r = d.mul(d.mul(d.sub(z, d.c(5.78318596294678452118e+00)), d.sub(z, d.c(3.04712623436620863991e+01))),
                  d.div(horner(d, z, kRP), horner(d, z, kRQ)));
  Value tiny = d.sub(d.c(1), d.div(z, d.c(4)));
  return d.select(d.cmp<prim::LtOp>(a, d.c(1e-5)), tiny, r);
}

/// J1 of x with |x| <= 5: x (x^2 - j1^2)(x^2 - j2^2) R(x^2) (odd).
Value besselJ1Small(Pointwise &d, Value x) {
  static constexpr double kRP[] = {-8.99971225705559398224e+08, 4.52228297998194034323e+11,
                                   -7.27494245221818276015e+13, 3.68295732863852883286e+15};
  static constexpr double kRQ[] = {6.20836478118054335476e+02, 2.56987256757748830383e+05,
                                   8.35146791431949253037e+07, 2.21511595479792499675e+10,
                                   4.74914122079991414898e+12, 7.84369607876235854894e+14,
                                   8.95222336184627338078e+16, 5.32278620332680085395e+18};
  Value z = d.mul(x, x);
  Value r = d.mul(d.div(horner(d, z, kRP), horner(d, z, kRQ)), x);
  return d.mul(d.mul(r, d.sub(z, d.c(1.46819706421238932572e+01))), d.sub(z, d.c(4.92184563216946036703e+01)));
}

/// The op's opmath element type (the type eager's kernel computes in).
template <typename GraphOp> Type opmathOf(GraphOp op) {
  return opmathType(op.getType()).getElementType();
}

/// J0: even; the rational form to 5, the asymptotic form beyond (NaN at +-inf:
/// cos(inf), as eager).
Value besselJ0(Pointwise &d, Value x, graph::BesselJ0Op op) {
  Value a = d.un<prim::AbsOp>(x);
  return d.select(d.cmp<prim::LeOp>(a, d.c(5)), besselJ0Small(d, a),
                  besselAsymptotic(d, a, 0, false, opmathOf(op)));
}
using BesselJ0ToPrim = F64Unary<graph::BesselJ0Op, besselJ0>;

/// J1: odd.
Value besselJ1(Pointwise &d, Value x, graph::BesselJ1Op op) {
  Value a = d.un<prim::AbsOp>(x);
  Value big = besselAsymptotic(d, a, 1, false, opmathOf(op));
  big = d.select(d.cmp<prim::LtOp>(x, d.c(0)), d.un<prim::NegOp>(big), big);
  return d.select(d.cmp<prim::LeOp>(a, d.c(5)), besselJ1Small(d, x), big);
}
using BesselJ1ToPrim = F64Unary<graph::BesselJ1Op, besselJ1>;

/// Y0: R(x^2) + 2/pi log(x) J0(x) to 5, the asymptotic form beyond; -inf at
/// 0, NaN below.
Value besselY0(Pointwise &d, Value x, graph::BesselY0Op op) {
  static constexpr double kYP[] = {1.55924367855235737965e+04, -1.46639295903971606143e+07,
                                   5.43526477051876500413e+09, -9.82136065717911466409e+11,
                                   8.75906394395366999549e+13, -3.46628303384729719441e+15,
                                   4.42733268572569800351e+16, -1.84950800436986690637e+16};
  static constexpr double kYQ[] = {1.04128353664259848412e+03, 6.26107330137134956842e+05,
                                   2.68919633393814121987e+08, 8.64002487103935000337e+10,
                                   2.02979612750105546709e+13, 3.17157752842975028269e+15,
                                   2.50596256172653059228e+17};
  Value z = d.mul(x, x);
  Value small = d.add(d.div(horner(d, z, kYP), horner(d, z, kYQ)),
                      d.mul(d.mul(d.c(kTwoOverPi), d.un<prim::LogOp>(x)), besselJ0Small(d, x)));
  small = d.select(d.cmp<prim::LtOp>(x, d.c(0)), d.c(std::nan("")), small);
  small = d.select(d.cmp<prim::EqOp>(x, d.c(0)), d.c(-kInf), small);
  return d.select(d.cmp<prim::LeOp>(x, d.c(5)), small, besselAsymptotic(d, x, 0, true, opmathOf(op)));
}
using BesselY0ToPrim = F64Unary<graph::BesselY0Op, besselY0>;

/// Y1: x R(x^2) + 2/pi (J1(x) log(x) - 1/x) to 5, the asymptotic form beyond;
/// -inf at 0, NaN below.
Value besselY1(Pointwise &d, Value x, graph::BesselY1Op op) {
  static constexpr double kYP[] = {1.26320474790178026440e+09, -6.47355876379160291031e+11,
                                   1.14509511541823727583e+14, -8.12770255501325109621e+15,
                                   2.02439475713594898196e+17, -7.78877196265950026825e+17};
  static constexpr double kYQ[] = {5.94301592346128195359e+02, 2.35564092943068577943e+05,
                                   7.34811944459721705660e+07, 1.87601316108706159478e+10,
                                   3.88231277496238566008e+12, 6.20557727146953693363e+14,
                                   6.87141087355300489866e+16, 3.97270608116560655612e+18};
  Value z = d.mul(x, x);
  Value bracket = d.sub(d.mul(besselJ1Small(d, x), d.un<prim::LogOp>(x)), d.div(d.c(1), x));
  Value small = d.add(d.mul(x, d.div(horner(d, z, kYP), horner(d, z, kYQ))), d.mul(d.c(kTwoOverPi), bracket));
  small = d.select(d.cmp<prim::LtOp>(x, d.c(0)), d.c(std::nan("")), small);
  small = d.select(d.cmp<prim::EqOp>(x, d.c(0)), d.c(-kInf), small);
  return d.select(d.cmp<prim::LeOp>(x, d.c(5)), small, besselAsymptotic(d, x, 1, true, opmathOf(op)));
}
using BesselY1ToPrim = F64Unary<graph::BesselY1Op, besselY1>;

/// I0(x) and I1(x) for |x| <= 8 (the Chebyshev fits of Cephes' i0, i1; the
/// K functions use them to 2).
Value besselI0Chebyshev(Pointwise &d, Value a) {
  static constexpr double kA[] = {
      -4.41534164647933937950e-18, 3.33079451882223809783e-17,  -2.43127984654795469359e-16,
      1.71539128555513303061e-15,  -1.16853328779934516808e-14, 7.67618549860493561688e-14,
      -4.85644678311192946090e-13, 2.95505266312963983461e-12,  -1.72682629144155570723e-11,
      9.67580903537323691224e-11,  -5.18979560163526290666e-10, 2.65982372468238665035e-09,
      -1.30002500998624804212e-08, 6.04699502254191894932e-08,  -2.67079385394061173391e-07,
      1.11738753912010371815e-06,  -4.41673835845875056359e-06, 1.64484480707288970893e-05,
      -5.75419501008210370398e-05, 1.88502885095841655729e-04,  -5.76375574538582365885e-04,
      1.63947561694133579842e-03,  -4.32430999505057594430e-03, 1.05464603945949983183e-02,
      -2.37374148058994688156e-02, 4.93052842396707084878e-02,  -9.49010970480476444210e-02,
      1.71620901522208775349e-01,  -3.04682672343198398683e-01, 6.76795274409476084995e-01};
  return d.mul(d.un<prim::ExpOp>(a), chebyshev(d, d.sub(d.div(a, d.c(2)), d.c(2)), kA));
}
Value besselI1Chebyshev(Pointwise &d, Value a) {
  static constexpr double kA[] = {
      2.77791411276104639959e-18,  -2.11142121435816608115e-17, 1.55363195773620046921e-16,
      -1.10559694773538630805e-15, 7.60068429473540693410e-15,  -5.04218550472791168711e-14,
      3.22379336594557470981e-13,  -1.98397439776494371520e-12, 1.17361862988909016308e-11,
      -6.66348972350202774223e-11, 3.62559028155211703701e-10,  -1.88724975172282928790e-09,
      9.38153738649577178388e-09,  -4.44505912879632808065e-08, 2.00329475355213526229e-07,
      -8.56872026469545474066e-07, 3.47025130813767847674e-06,  -1.32731636560394358279e-05,
      4.78156510755005422638e-05,  -1.61760815825896745588e-04, 5.12285956168575772895e-04,
      -1.51357245063125314899e-03, 4.15642294431288815669e-03,  -1.05640848946261981558e-02,
      2.47264490306265168283e-02,  -5.29459812080949914269e-02, 1.02643658689847095384e-01,
      -1.76416518357834055153e-01, 2.52587186443633654823e-01};
  Value c = chebyshev(d, d.sub(d.div(a, d.c(2)), d.c(2)), kA);
  return d.mul(d.mul(c, a), d.un<prim::ExpOp>(a));
}

/// What K0 and K1 share: `small` (the form up to 2) beside exp(-x) sqrt(1/x)
/// times the fit in 8/x - 2 beyond (both times exp(x) when Scaled); +inf at 0,
/// NaN below.
template <bool Scaled>
Value besselKSelect(Pointwise &d, Value x, Value small, ArrayRef<double> kB) {
  Value big = d.div(chebyshev(d, d.sub(d.div(d.c(8), x), d.c(2)), kB), d.un<prim::SqrtOp>(x));
  if (Scaled)
    small = d.mul(small, d.un<prim::ExpOp>(x));
  else
    big = d.mul(d.un<prim::ExpOp>(d.un<prim::NegOp>(x)), big);
  Value r = d.select(d.cmp<prim::LeOp>(x, d.c(2)), small, big);
  r = d.select(d.cmp<prim::LtOp>(x, d.c(0)), d.c(std::nan("")), r);
  return d.select(d.cmp<prim::EqOp>(x, d.c(0)), d.c(kInf), r);
}

/// K0 (Scaled: exp(x) K0): the Chebyshev fit in x^2 - 2 minus log(x / 2) I0(x)
/// to 2, exp(-x) sqrt(1/x) times the fit in 8/x - 2 beyond; +inf at 0, NaN
/// below.
template <typename GraphOp, bool Scaled>
Value besselK0(Pointwise &d, Value x, GraphOp) {
  static constexpr double kA[] = {1.37446543561352307156e-16, 4.25981614279661018399e-14,
                                  1.03496952576338420167e-11, 1.90451637722020886025e-09,
                                  2.53479107902614945675e-07, 2.28621210311945178607e-05,
                                  1.26461541144692592338e-03, 3.59799365153615016266e-02,
                                  3.44289899924628486886e-01, -5.35327393233902768720e-01};
  static constexpr double kB[] = {
      5.30043377268626276149e-18,  -1.64758043015242134646e-17, 5.21039150503902756861e-17,
      -1.67823109680541210385e-16, 5.51205597852431940784e-16,  -1.84859337734377901440e-15,
      6.34007647740507060557e-15,  -2.22751332699166985548e-14, 8.03289077536357521100e-14,
      -2.98009692317273043925e-13, 1.14034058820847496303e-12,  -4.51459788337394416547e-12,
      1.85594911495471785253e-11,  -7.95748924447710747776e-11, 3.57739728140030116597e-10,
      -1.69753450938905987466e-09, 8.57403401741422608519e-09,  -4.66048989768794782956e-08,
      2.76681363944501510342e-07,  -1.83175552271911948767e-06, 1.39498137188764993662e-05,
      -1.28495495816278026384e-04, 1.56988388573005337491e-03,  -3.14481013119645005427e-02,
      2.44030308206595545468e+00};
  Value small = d.sub(chebyshev(d, d.sub(d.mul(x, x), d.c(2)), kA),
                      d.mul(d.un<prim::LogOp>(d.mul(d.c(0.5), x)), besselI0Chebyshev(d, x)));
  return besselKSelect<Scaled>(d, x, small, kB);
}
using ModifiedBesselK0ToPrim = F64Unary<graph::ModifiedBesselK0Op, besselK0<graph::ModifiedBesselK0Op, false>>;
using ScaledModifiedBesselK0ToPrim =
    F64Unary<graph::ScaledModifiedBesselK0Op, besselK0<graph::ScaledModifiedBesselK0Op, true>>;

/// K1 (Scaled: exp(x) K1): log(x / 2) I1(x) plus the fit in x^2 - 2 over x to
/// 2, exp(-x) sqrt(1/x) times the fit in 8/x - 2 beyond; +inf at 0, NaN below.
template <typename GraphOp, bool Scaled>
Value besselK1(Pointwise &d, Value x, GraphOp) {
  static constexpr double kA[] = {-7.02386347938628759343e-18, -2.42744985051936593393e-15,
                                  -6.66690169419932900609e-13, -1.41148839263352776110e-10,
                                  -2.21338763073472585583e-08, -2.43340614156596823496e-06,
                                  -1.73028895751305206302e-04, -6.97572385963986435018e-03,
                                  -1.22611180822657148235e-01, -3.53155960776544875667e-01,
                                  1.52530022733894777053e+00};
  static constexpr double kB[] = {
      -5.75674448366501715755e-18, 1.79405087314755922667e-17,  -5.68946255844285935196e-17,
      1.83809354436663880070e-16,  -6.05704724837331885336e-16, 2.03870316562433424052e-15,
      -7.01983709041831346144e-15, 2.47715442448130437068e-14,  -8.97670518232499435011e-14,
      3.34841966607842919884e-13,  -1.28917396095102890680e-12, 5.13963967348173025100e-12,
      -2.12996783842756842877e-11, 9.21831518760500529508e-11,  -4.19035475934189648750e-10,
      2.01504975519703286596e-09,  -1.03457624656780970260e-08, 5.74108412545004946722e-08,
      -3.50196060308781257119e-07, 2.40648494783721712015e-06,  -1.93619797416608296024e-05,
      1.95215518471351631108e-04,  -2.85781685962277938680e-03, 1.03923736576817238437e-01,
      2.72062619048444266945e+00};
  Value small = d.add(d.mul(d.un<prim::LogOp>(d.mul(d.c(0.5), x)), besselI1Chebyshev(d, x)),
                      d.div(chebyshev(d, d.sub(d.mul(x, x), d.c(2)), kA), x));
  return besselKSelect<Scaled>(d, x, small, kB);
}
using ModifiedBesselK1ToPrim = F64Unary<graph::ModifiedBesselK1Op, besselK1<graph::ModifiedBesselK1Op, false>>;
using ScaledModifiedBesselK1ToPrim =
    F64Unary<graph::ScaledModifiedBesselK1Op, besselK1<graph::ScaledModifiedBesselK1Op, true>>;

/// Airy Ai: the oscillating asymptotic form below -2.09, the decaying one from
/// 2.09 (0 beyond 103.892), the Maclaurin series c1 f(x) - c2 g(x) between
/// (14 terms: |x^3| <= 9.2 there, so the last is below 1e-19 of the sum); NaN
/// at +-inf.
Value airyAi(Pointwise &d, Value x, graph::AiryAiOp op) {
  static constexpr double kAN[] = {3.46538101525629032477e-01, 1.20075952739645805542e+01,
                                   7.62796053615234516538e+01, 1.68089224934630576269e+02,
                                   1.59756391350164413639e+02, 7.05360906840444183113e+01,
                                   1.40264691163389668864e+01, 9.99999999999999995305e-01};
  static constexpr double kAD[] = {5.67594532638770212846e-01, 1.47562562584847203173e+01,
                                   8.45138970141474626562e+01, 1.77318088145400459522e+02,
                                   1.64234692871529701831e+02, 7.14778400825575695274e+01,
                                   1.40959135607834029598e+01, 1.00000000000000000470e+00};
  static constexpr double kAFN[] = {-1.31696323418331795333e-01, -6.26456544431912369773e-01,
                                    -6.93158036036933542233e-01, -2.79779981545119124951e-01,
                                    -4.91900132609500318020e-02, -4.06265923594885404393e-03,
                                    -1.59276496239262096340e-04, -2.77649108155232920844e-06,
                                    -1.67787698489114633780e-08};
  static constexpr double kAFD[] = {1.33560420706553243746e+01, 3.26825032795224613948e+01,
                                    2.67367040941499554804e+01, 9.18707402907259625840e+00,
                                    1.47529146771666414581e+00, 1.15687173795188044134e-01,
                                    4.40291641615211203805e-03, 7.54720348287414296618e-05,
                                    4.51850092970580378464e-07};
  static constexpr double kAGN[] = {1.97339932091685679179e-02, 3.91103029615688277255e-01,
                                    1.06579897599595591108e+00, 9.39169229816650230044e-01,
                                    3.51465656105547619242e-01, 6.33888919628925490927e-02,
                                    5.85804113048388458567e-03, 2.82851600836737019778e-04,
                                    6.98793669997260967291e-06, 8.11789239554389293311e-08,
                                    3.41551784765923618484e-10};
  static constexpr double kAGD[] = {9.30892908077441974853e+00, 1.98352928718312140417e+01,
                                    1.55646628932864612953e+01, 5.47686069422975497931e+00,
                                    9.54293611618961883998e-01, 8.64580826352392193095e-02,
                                    4.12656523824222607191e-03, 1.01259085116509135510e-04,
                                    1.17166733214413521882e-06, 4.91834570062930015649e-09};
  constexpr double kInvSqrtPi = 5.64189583547756286948e-01;
  // x < -2.09: zeta = 2/3 (-x)^(3/2), z = 1 / zeta.
  Value nx = d.un<prim::NegOp>(x);
  Value twoX32 = d.mul(d.mul(d.c(-2), x), d.un<prim::SqrtOp>(nx));
  Value z = d.div(d.c(1), d.div(twoX32, d.c(3)));
  Value zz = d.mul(z, z);
  // The phase, rounded after each step as eager's kernel computes it in its
  // type (float32 for float32: it decides the value for large -x, and it
  // overflows to NaN where -2 x sqrt(-x) does).
  Type opmath = opmathOf(op);
  auto rd = [&](Value v) { return roundTo(d, v, opmath); };
  Value t = rd(d.add(rd(d.div(rd(d.mul(rd(d.mul(d.c(-2), x)), rd(d.un<prim::SqrtOp>(nx)))), d.c(3))),
                     rd(d.c(0.25 * kPi))));
  Value f = d.add(d.c(1), d.mul(zz, d.div(horner(d, zz, kAFN), horner(d, zz, kAFD))));
  Value g = d.mul(z, d.div(horner(d, zz, kAGN), horner(d, zz, kAGD)));
  Value neg = d.mul(d.div(d.c(kInvSqrtPi), d.un<prim::SqrtOp>(d.un<prim::SqrtOp>(nx))),
                    d.sub(d.mul(d.un<prim::SinOp>(t), f), d.mul(d.un<prim::CosOp>(t), g)));
  // x >= 2.09: zeta = 2/3 x^(3/2).
  Value zeta = d.div(d.mul(d.mul(d.c(2), x), d.un<prim::SqrtOp>(x)), d.c(3));
  Value iz = d.div(d.c(1), zeta);
  Value pos = d.div(d.mul(d.c(kInvSqrtPi), d.div(horner(d, iz, kAN), horner(d, iz, kAD))),
                    d.mul(d.mul(d.c(2), d.un<prim::SqrtOp>(d.un<prim::SqrtOp>(x))), d.un<prim::ExpOp>(zeta)));
  // |x| < 2.09: f = sum x^3k / prod (3j-1)(3j), g = x sum x^3k / prod 3j(3j+1).
  Value x3 = d.mul(d.mul(x, x), x);
  Value m = d.c(1), n = x, fs = d.c(1), gs = x;
  for (int j = 1; j <= 14; ++j) {
    m = d.div(d.mul(m, x3), d.c(double(3 * j - 1) * (3 * j)));
    n = d.div(d.mul(n, x3), d.c(double(3 * j) * (3 * j + 1)));
    fs = d.add(fs, m);
    gs = d.add(gs, n);
  }
  Value series = d.sub(d.mul(d.c(0.355028053887817239260), fs), d.mul(d.c(0.258819403792806798405), gs));
  Value r = d.select(d.cmp<prim::LtOp>(x, d.c(-2.09)), neg,
                     d.select(d.cmp<prim::GeOp>(x, d.c(2.09)), pos, series));
  r = d.select(d.cmp<prim::GtOp>(x, d.c(103.892)), d.c(0), r);
  return d.select(d.cmp<prim::EqOp>(d.un<prim::AbsOp>(x), d.c(kInf)), d.c(std::nan("")), r);
}
using AiryAiToPrim = F64Unary<graph::AiryAiOp, airyAi>;

//===----------------------------------------------------------------------===//
// Hurwitz zeta
//===----------------------------------------------------------------------===//

Value notI1(Pointwise &d, Value a) { return prim::NotOp::create(d.pb.b, d.pb.loc, a.getType(), a); }

/// zeta(x, q) for q > 0 (or NaN), x > 1, as eager's Cephes algorithm sums it:
/// the terms (q + k)^-x for k <= 9 (one more while q + k <= 9: q below 1e-15),
/// then the Euler-Maclaurin tail at w = q + k with 12 Bernoulli terms; both
/// stop where a term falls below 2^-53 of the sum (which decides the value at
/// infinite and huge x: 1 at q = 1, +inf below, NaN above, as eager).
Value zetaPositive(Pointwise &d, Value x, Value q) {
  // (2j)! / B_2j, j = 1..12.
  static constexpr double kA[] = {12.0,
                                  -720.0,
                                  30240.0,
                                  -1209600.0,
                                  47900160.0,
                                  -1.8924375803183791606e9,
                                  7.47242496e10,
                                  -2.950130727918164224e12,
                                  1.1646782814350067249e14,
                                  -4.5979787224074726105e15,
                                  1.8152105401943546773e17,
                                  -7.1661652561756670113e18};
  constexpr double kMachEp = 1.11022302462515654042e-16;
  Value negX = d.un<prim::NegOp>(x);
  auto small = [&](Value term, Value sum) { // -eps s < term < eps s
    Value bound = d.mul(d.c(kMachEp), sum);
    return andI1(d, d.cmp<prim::LtOp>(d.un<prim::NegOp>(bound), term), d.cmp<prim::LtOp>(term, bound));
  };
  Value s = d.bin<prim::PowOp>(q, negX), a = q, b = d.c(0);
  Value done = d.pb.splat(d.type.clone(d.pb.b.getI1Type()), 0);
  for (int i = 1; i <= 10; ++i) {
    Value active = notI1(d, done);
    if (i == 10)
      active = andI1(d, active, d.cmp<prim::LeOp>(a, d.c(9)));
    Value a1 = d.add(a, d.c(1));
    Value b1 = d.bin<prim::PowOp>(a1, negX);
    Value s1 = d.add(s, b1);
    a = d.select(active, a1, a);
    b = d.select(active, b1, b);
    s = d.select(active, s1, s);
    done = orI1(d, done, andI1(d, active, small(b1, s1)));
  }
  Value w = a;
  Value t = d.add(s, d.div(d.mul(b, w), d.sub(x, d.c(1))));
  t = d.sub(t, d.mul(d.c(0.5), b));
  Value fac = d.c(1), k = d.c(0), stop = done;
  for (double coeff : kA) {
    fac = d.mul(fac, d.add(x, k));
    b = d.div(b, w);
    Value term = d.div(d.mul(fac, b), d.c(coeff));
    Value t1 = d.add(t, term);
    Value active = notI1(d, stop);
    t = d.select(active, t1, t);
    Value rel = d.un<prim::AbsOp>(d.div(term, t1));
    stop = orI1(d, stop, andI1(d, active, d.cmp<prim::LtOp>(rel, d.c(kMachEp))));
    k = d.add(k, d.c(1));
    fac = d.mul(fac, d.add(x, k));
    b = d.div(b, w);
    k = d.add(k, d.c(1));
  }
  return d.select(done, s, t);
}

/// Hurwitz zeta(x, q): eager's special values (+inf at x = 1 and at q a
/// non-positive integer; NaN for x < 1 and for q < 0 with x not an integer);
/// for q < 0 and integer x, with r = -q and its fraction f, the finite sum of
/// the negative terms in closed form:
///   zeta(x, q) = zeta(x, 1 - f) + (-1)^x (zeta(x, f) - zeta(x, r + 1)),
/// which eager sums term by term up to |q| + 9 (a loop without a bound).
Value zeta(Pointwise &d, Value x, Value q) {
  Value pos = zetaPositive(d, x, q);
  Value r = d.un<prim::NegOp>(q);
  Value f = d.sub(r, d.un<prim::FloorOp>(r));
  // zeta(x, r + 1 > 1) is NaN in eager's algorithm only where x is huge
  // (its tail overflows); the value there is 0.
  Value tail = zetaPositive(d, x, d.add(r, d.c(1)));
  tail = d.select(andI1(d, isNan(d, tail), d.cmp<prim::EqOp>(x, x)), d.c(0), tail);
  Value negTerms = d.sub(zetaPositive(d, x, f), tail);
  Value halfX = d.mul(x, d.c(0.5));
  Value odd = d.cmp<prim::NeOp>(halfX, d.un<prim::FloorOp>(halfX));
  negTerms = d.select(odd, d.un<prim::NegOp>(negTerms), negTerms);
  Value neg = d.add(zetaPositive(d, x, d.sub(d.c(1), f)), negTerms);
  Value nonPositive = d.cmp<prim::LeOp>(q, d.c(0));
  Value v = d.select(nonPositive, neg, pos);
  v = d.select(andI1(d, nonPositive, d.cmp<prim::NeOp>(x, d.un<prim::FloorOp>(x))), d.c(std::nan("")), v);
  v = d.select(andI1(d, nonPositive, d.cmp<prim::EqOp>(q, d.un<prim::FloorOp>(q))), d.c(kInf), v);
  v = d.select(d.cmp<prim::LtOp>(x, d.c(1)), d.c(std::nan("")), v);
  return d.select(d.cmp<prim::EqOp>(x, d.c(1)), d.c(kInf), v);
}

/// In float64 for every float type (eager's CPU kernel sums in double).
struct ZetaToPrim : OpConversionPattern<graph::ZetaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ZetaOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Pointwise d{pb, type.clone(rewriter.getF64Type())};
    Value r = zeta(d, d.in(adaptor.getLhs()), d.in(adaptor.getRhs()));
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateSpecialPatterns(RewritePatternSet &patterns) {
  // The registry's Dyn_Special lowerings (GraphSpecialOps.td), generated by dyn-tblgen.
#define GEN_SPECIAL_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
