//===- FloatBits.cpp - frexp and nextafter without a bit cast -------------===//
//
// Both need x's binary exponent E (2^E <= |x| < 2^(E+1)): floor(log2 |x|) in
// f64, corrected against exact powers of two (a constant table of 2^k for k in
// [-1074, 1023], gathered at the computed exponents) until the bracket holds.
// Everything else is exact f64 arithmetic on powers of two (every f16, bf16
// and f32 is an f64, and so are the results).
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

#include <cmath>

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

constexpr int64_t kLowest = -1074, kHighest = 1023;  // f64's powers of two, subnormal to largest

/// 2^k exactly (f64) for an i64 tensor k in [kLowest, kHighest].
Value pow2(PrimBuilder &pb, Value k) {
  RankedTensorType kt = tensorType(k);
  Type f64 = pb.b.getF64Type();
  int64_t n = kt.getNumElements();
  SmallVector<double> table;
  for (int64_t e = kLowest; e <= kHighest; ++e)
    table.push_back(std::ldexp(1.0, (int)e));
  auto tableType = RankedTensorType::get({(int64_t)table.size()}, f64);
  Value t = prim::ConstantOp::create(pb.b, pb.loc, DenseElementsAttr::get(tableType, ArrayRef<double>(table)));
  Pointwise p{pb, kt};
  Value idx = p.sub(k, p.c((double)kLowest));
  auto flat = RankedTensorType::get({n}, kt.getElementType());
  if (kt.getRank() != 1)
    idx = prim::ReshapeOp::create(pb.b, pb.loc, flat, idx);
  Value r = prim::GatherOp::create(pb.b, pb.loc, flat.clone(f64), t, 0, idx);
  return kt.getRank() != 1 ? prim::ReshapeOp::create(pb.b, pb.loc, kt.clone(f64), r).getResult() : r;
}

/// E with 2^E <= a < 2^(E+1) for a finite a > 0 (f64); elsewhere some E in range.
Value exponentOf(PrimBuilder &pb, Value a) {
  RankedTensorType ft = tensorType(a), it = ft.clone(pb.b.getI64Type());
  Pointwise f{pb, ft}, i{pb, it};
  Type i1 = pb.b.getI1Type();
  auto both = [&](Value x, Value y) { return prim::AndOp::create(pb.b, pb.loc, ft.clone(i1), x, y); };
  Value usable = both(f.cmp<prim::GtOp>(a, f.c(0.0)), f.cmp<prim::LtOp>(a, f.c(INFINITY)));
  Value lg = f.mul(f.un<prim::LogOp>(f.select(usable, a, f.c(1.0))), f.c(1.0 / std::log(2.0)));
  lg = f.select(usable, lg, f.c(0.0));
  Value e = pb.convert(f.min(f.max(f.un<prim::FloorOp>(lg), f.c((double)kLowest)), f.c((double)kHighest)),
                       it.getElementType());
  for (int step = 0; step < 2; ++step) {  // log is off by far less than a binade: two corrections suffice
    Value down = both(f.cmp<prim::GtOp>(pow2(pb, e), a), i.cmp<prim::GtOp>(e, i.c((double)kLowest)));
    e = i.select(down, i.sub(e, i.c(1.0)), e);
    Value up = i.min(i.add(e, i.c(1.0)), i.c((double)kHighest));
    Value rise = both(f.cmp<prim::LeOp>(pow2(pb, up), a), i.cmp<prim::LtOp>(e, i.c((double)kHighest)));
    e = i.select(rise, up, e);
  }
  return e;
}

/// frexp: e1 = E + 1; the mantissa x * 2^-e1 in two factors (each in range);
/// 0, inf and NaN give (x, 0) (eager's).
struct FrexpToPrim : OpConversionPattern<graph::FrexpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::FrexpOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getMantissa().getType();
    RankedTensorType ft = type.clone(rewriter.getF64Type()), it = type.clone(rewriter.getI64Type());
    Pointwise f{pb, ft}, i{pb, it};
    Value x = pb.convert(adaptor.getInput(), ft.getElementType());
    Value a = f.un<prim::AbsOp>(x);
    Value finite = prim::AndOp::create(rewriter, op.getLoc(), ft.clone(rewriter.getI1Type()),
                                       f.cmp<prim::GtOp>(a, f.c(0.0)), f.cmp<prim::LtOp>(a, f.c(INFINITY)));
    Value e1 = i.add(exponentOf(pb, a), i.c(1.0));
    Value k = i.sub(i.c(0.0), e1);
    Value k1 = i.bin<prim::ShrOp>(k, i.c(1.0));  // floor(k / 2)
    Value m = f.mul(f.mul(x, pow2(pb, k1)), pow2(pb, i.sub(k, k1)));
    Value mantissa = pb.convert(f.select(finite, m, x), type.getElementType());
    Value exponent = pb.convert(i.select(finite, e1, i.c(0.0)), rewriter.getI32Type());
    rewriter.replaceOp(op, {mantissa, exponent});
    return success();
  }
};

/// nextafter: x plus or minus its unit in the last place of the type (half of
/// it where x is a power of two and moves toward 0); from 0 the smallest
/// subnormal, from an infinity the largest finite value; other where equal,
/// NaN where either is.
struct NextafterToPrim : OpConversionPattern<graph::NextafterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::NextafterOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    auto et = cast<FloatType>(type.getElementType());
    const llvm::fltSemantics &sem = et.getFloatSemantics();
    int64_t precision = llvm::APFloat::semanticsPrecision(sem);
    int64_t emin = llvm::APFloat::semanticsMinExponent(sem);
    llvm::APFloat largest = llvm::APFloat::getLargest(sem);
    bool lost;
    largest.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
    double big = largest.convertToDouble(), tiny = std::ldexp(1.0, (int)(emin - precision + 1));

    RankedTensorType ft = type.clone(rewriter.getF64Type()), it = type.clone(rewriter.getI64Type());
    Type i1 = rewriter.getI1Type();
    Pointwise f{pb, ft}, i{pb, it};
    auto both = [&](Value x, Value y) { return prim::AndOp::create(rewriter, loc, ft.clone(i1), x, y); };
    auto either = [&](Value x, Value y) { return prim::OrOp::create(rewriter, loc, ft.clone(i1), x, y); };
    auto negate = [&](Value x) { return prim::NotOp::create(rewriter, loc, ft.clone(i1), x); };
    Value x = pb.convert(adaptor.getInput(), ft.getElementType());
    Value y = pb.convert(adaptor.getOther(), ft.getElementType());
    Value a = f.un<prim::AbsOp>(x);
    Value e = i.max(exponentOf(pb, a), i.c((double)emin));  // subnormals step by the smallest one
    Value ulp = pow2(pb, i.sub(e, i.c((double)(precision - 1))));
    Value up = f.cmp<prim::GtOp>(y, x);
    Value away = prim::SelectOp::create(rewriter, loc, ft.clone(i1), f.cmp<prim::GtOp>(x, f.c(0.0)), up,
                                        negate(up));
    Value atBinade = both(f.cmp<prim::EqOp>(a, pow2(pb, e)), i.cmp<prim::GtOp>(e, i.c((double)emin)));
    Value step = f.select(either(away, negate(atBinade)), ulp, f.mul(ulp, f.c(0.5)));
    Value moved = f.select(up, f.add(x, step), f.sub(x, step));
    moved = f.select(f.cmp<prim::EqOp>(moved, f.c(0.0)), f.mul(x, f.c(0.0)), moved);  // x's signed zero
    moved = f.select(f.cmp<prim::EqOp>(x, f.c(0.0)), f.select(up, f.c(tiny), f.c(-tiny)), moved);
    moved = f.select(f.cmp<prim::EqOp>(a, f.c(INFINITY)),
                     f.select(f.cmp<prim::GtOp>(x, f.c(0.0)), f.c(big), f.c(-big)), moved);
    Value r = f.select(f.cmp<prim::EqOp>(x, y), y, moved);
    r = f.select(either(f.cmp<prim::NeOp>(x, x), f.cmp<prim::NeOp>(y, y)), f.c(NAN), r);
    rewriter.replaceOp(op, pb.convert(r, et));
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateFloatBitsPatterns(RewritePatternSet &patterns) {
  // The registry's (GraphSpecialOps.td: frexp, nextafter), generated by dyn-tblgen.
#define GEN_FLOATBITS_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
