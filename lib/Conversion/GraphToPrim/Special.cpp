//===- Special.cpp - pointwise math and special functions --------------------===//
//
// The registry's `Dyn_Special` lowerings (GraphSpecialOps.td). Each op becomes
// prim arithmetic that both back ends compile the same way: the CPU kernels
// and the GPU kernels run one algorithm (docs/special-functions.md). Simple
// ops are written as eager's CPU kernel computes them (same special cases and
// order), in float32 for float16 and bfloat16 with one rounding.
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
/// float16 and bfloat16 round after each step, as eager's vectorized kernel.
Value logit(Pointwise &p, Value x, graph::LogitOp op) {
  Type t = op.getType().getElementType();
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

} // namespace

void dyn::graph_to_prim::populateSpecialPatterns(RewritePatternSet &patterns) {
  // The registry's Dyn_Special lowerings (GraphSpecialOps.td), generated by dyn-tblgen.
#define GEN_SPECIAL_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
