//===- Elementwise.cpp - elementwise graph ops ------------------------------===//
//
// Unary, binary, comparison and select ops: broadcasting becomes
// prim.broadcast_in_dim, type promotion prim.convert_element_type, and
// composites (sigmoid, relu, reciprocal) their primitive definitions.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

/// Elementwise unary ops that map to one prim op on the result type.
template <typename GraphOp, typename PrimOp>
struct UnaryToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    if (type.getElementType().isInteger(1))
      return rewriter.notifyMatchFailure(op, "arithmetic on booleans (PyTorch raises)");
    if constexpr (std::is_same_v<PrimOp, void>) {
      return failure();
    } else {
      // Rounding an integer tensor is the identity (the verifier keeps its type).
      if constexpr (std::is_same_v<PrimOp, prim::FloorOp> || std::is_same_v<PrimOp, prim::CeilOp> ||
                    std::is_same_v<PrimOp, prim::TruncOp> || std::is_same_v<PrimOp, prim::RoundOp>)
        if (!isa<FloatType>(type.getElementType())) {
          rewriter.replaceOp(op, adaptor.getInput());
          return success();
        }
      Value x = pb.convert(adaptor.getInput(), type.getElementType());
      rewriter.replaceOpWithNewOp<PrimOp>(op, type, x);
      return success();
    }
  }
};

/// 1/x on the result type.
struct ReciprocalToPrim : OpConversionPattern<graph::ReciprocalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ReciprocalOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Value x = pb.convert(adaptor.getInput(), type.getElementType());
    rewriter.replaceOpWithNewOp<prim::DivOp>(op, type, pb.splat(type, 1.0), x);
    return success();
  }
};

/// max(x, 0) on the result type.
struct ReluToPrim : OpConversionPattern<graph::ReluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ReluOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    if (type.getElementType().isInteger(1))
      return rewriter.notifyMatchFailure(op, "relu of booleans (PyTorch raises)");
    Value x = pb.convert(adaptor.getInput(), type.getElementType());
    rewriter.replaceOpWithNewOp<prim::MaxOp>(op, type, x, pb.splat(type, 0.0));
    return success();
  }
};

/// not(bool(x)), converted to the result type.
struct LogicalNotToPrim : OpConversionPattern<graph::LogicalNotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::LogicalNotOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Value x = pb.convert(adaptor.getInput(), rewriter.getI1Type());
    Value result = prim::NotOp::create(rewriter, op.getLoc(), cast<RankedTensorType>(x.getType()), x);
    rewriter.replaceOp(op, pb.convert(result, op.getType().getElementType()));
    return success();
  }
};

/// The element of a splat graph or prim constant (an exponent may already be
/// converted by the adaptor, or not yet); null for anything else.
static Attribute splatElement(Value v) {
  DenseElementsAttr dense;
  if (auto c = v.getDefiningOp<graph::ConstantOp>())
    dense = dyn_cast<DenseElementsAttr>(c.getValue());
  else if (auto c = v.getDefiningOp<prim::ConstantOp>())
    dense = dyn_cast<DenseElementsAttr>(c.getValue());
  return dense && dense.isSplat() ? dense.getSplatValue<Attribute>() : Attribute();
}

Value powByConstant(PrimBuilder &pb, Value base, Value exponent, RankedTensorType type) {
  Attribute splat = splatElement(exponent);
  if (!splat)
    return {};
  double e;
  if (auto f = dyn_cast<FloatAttr>(splat))
    e = f.getValueAsDouble();
  else
    e = (double)cast<IntegerAttr>(splat).getInt();
  Location loc = pb.loc;
  if (e == 1.0)
    return base;
  if (e == 2.0)
    return prim::MulOp::create(pb.b, loc, type, base, base);
  if (e == 3.0)
    return prim::MulOp::create(pb.b, loc, type, prim::MulOp::create(pb.b, loc, type, base, base),
                               base);
  if (e == 0.5)
    return prim::SqrtOp::create(pb.b, loc, type, base);
  if (e == -0.5)
    return prim::RsqrtOp::create(pb.b, loc, type, base);
  if (e == -1.0)
    return prim::DivOp::create(pb.b, loc, type, pb.splat(type, 1.0), base);
  if (e == -2.0) // eager's kernels (CPU and CUDA): the reciprocal of the square
    return prim::DivOp::create(pb.b, loc, type, pb.splat(type, 1.0),
                               prim::MulOp::create(pb.b, loc, type, base, base));
  return {};
}

/// A splat integer constant's value (booleans and unsigned types zero-extended).
static std::optional<int64_t> splatInteger(Value v) {
  auto i = dyn_cast_or_null<IntegerAttr>(splatElement(v));
  if (!i)
    return std::nullopt;
  bool zext = i.getType().isInteger(1) || i.getType().isUnsignedInteger();
  return zext ? (int64_t)i.getValue().getZExtValue() : i.getValue().getSExtValue();
}

/// Integer a^b as eager's powi: square and multiply over b's bits, wrapping
/// in the type; a negative b gives 0, but 1 for a == 1 and +-1 for a == -1.
/// A constant b unrolls its own bits; a tensor b all of the type's.

static Value integerPow(PrimBuilder &pb, Value a, Value b, std::optional<int64_t> constant,
                        RankedTensorType type) {
  auto et = cast<IntegerType>(type.getElementType());
  unsigned width = et.getWidth();
  // a splat of the result's shape (`a` has it): with dynamic dims, a 0-d constant broadcast to a's sizes
  auto c = [&](int64_t v) {
    auto scalar = IntegerAttr::get(et, APInt(width, (uint64_t)v, v < 0));
    if (type.hasStaticShape())
      return prim::ConstantOp::create(pb.b, pb.loc, DenseElementsAttr::get(type, scalar)).getResult();
    Value s = prim::ConstantOp::create(pb.b, pb.loc, DenseElementsAttr::get(type.clone(ArrayRef<int64_t>{}), scalar));
    return prim::BroadcastInDimOp::create(pb.b, pb.loc, type, s, ArrayRef<int64_t>{}, pb.dimsOf(a)).getResult();
  };
  auto mul = [&](Value x, Value y) { return prim::MulOp::create(pb.b, pb.loc, type, x, y).getResult(); };
  auto boolType = type.clone(pb.b.getI1Type());
  auto eq = [&](Value x, int64_t v) { return prim::EqOp::create(pb.b, pb.loc, boolType, x, c(v)).getResult(); };
  auto select = [&](Value cond, Value x, Value y) {
    return prim::SelectOp::create(pb.b, pb.loc, type, cond, x, y).getResult();
  };
  // a negative exponent: 1 for a == 1, -1 or 1 (odd or even b) for a == -1, else 0
  auto negative = [&](Value minusOne) { return select(eq(a, 1), c(1), select(eq(a, -1), minusOne, c(0))); };
  if (constant) {
    int64_t e = *constant;
    if (e < 0)
      return negative(c((e & 1) ? -1 : 1));
    Value result, p = a;
    for (uint64_t rest = (uint64_t)e; rest; rest >>= 1) {
      if (rest & 1)
        result = result ? mul(result, p) : p;
      if (rest > 1)
        p = mul(p, p);
    }
    return result ? result : c(1);
  }
  bool isUnsigned = et.isUnsigned();
  unsigned bits = isUnsigned ? width : width - 1; // a signed b's top bit: negative, below
  Value result, p = a;
  for (unsigned i = 0; i < bits; ++i) {
    Value bit = prim::AndOp::create(pb.b, pb.loc, type, b, c((int64_t)(uint64_t(1) << i)));
    Value set = prim::NeOp::create(pb.b, pb.loc, boolType, bit, c(0));
    result = result ? select(set, mul(result, p), result) : select(set, p, c(1));
    if (i + 1 < bits)
      p = mul(p, p);
  }
  if (isUnsigned)
    return result;
  Value odd = prim::NeOp::create(pb.b, pb.loc, boolType, prim::AndOp::create(pb.b, pb.loc, type, b, c(1)), c(0));
  Value isNegative = prim::LtOp::create(pb.b, pb.loc, boolType, b, c(0));
  return select(isNegative, negative(select(odd, c(-1), c(1))), result);
}

/// Arithmetic: both operands converted to the result type and broadcast.
/// Booleans follow PyTorch: an i1 result is the integer result of 0/1
/// operands converted to bool, so add and maximum are `or`, mul and minimum
/// `and`; sub, div, remainder and pow of booleans are not defined (PyTorch
/// raises or promotes).
template <typename GraphOp, typename PrimOp>
struct BinaryToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    if constexpr (std::is_same_v<PrimOp, prim::PowOp>) {
      if (type.getElementType().isInteger(1))
        return rewriter.notifyMatchFailure(op, "pow of booleans is not defined");
      if (isa<IntegerType>(type.getElementType())) {
        rewriter.replaceOp(op, integerPow(pb, pb.promote(adaptor.getLhs(), type),
                                          pb.promote(adaptor.getRhs(), type),
                                          splatInteger(adaptor.getRhs()), type));
        return success();
      }
    }
    // Logical ops compute on booleans, then convert to the result type.
    RankedTensorType computeType = type;
    constexpr bool isOr = std::is_same_v<PrimOp, prim::OrOp> || std::is_same_v<PrimOp, prim::AddOp> ||
                          std::is_same_v<PrimOp, prim::MaxOp>;
    constexpr bool isAnd = std::is_same_v<PrimOp, prim::AndOp> ||
                           std::is_same_v<PrimOp, prim::MulOp> || std::is_same_v<PrimOp, prim::MinOp>;
    // logical_and/or compute on booleans; bitwise_and/or/xor in the result
    // type (booleans: and, or, xor).
    if constexpr (std::is_same_v<GraphOp, graph::LogicalAndOp> ||
                  std::is_same_v<GraphOp, graph::LogicalOrOp>)
      computeType = type.clone(rewriter.getI1Type());
    constexpr bool isXor = std::is_same_v<PrimOp, prim::XorOp>;
    bool boolean = computeType.getElementType().isInteger(1);
    if (boolean && !isOr && !isAnd && !isXor)
      return rewriter.notifyMatchFailure(op, "this arithmetic on booleans is not defined");
    Value lhs = pb.promote(adaptor.getLhs(), computeType);
    if constexpr (std::is_same_v<PrimOp, prim::PowOp>) {
      // Small constant exponents become multiplies or sqrt: exact, and
      // vectorizable where a general pow is a scalar libm call.
      if (Value special = powByConstant(pb, lhs, adaptor.getRhs(), computeType)) {
        rewriter.replaceOp(op, special);
        return success();
      }
    }
    Value rhs = pb.promote(adaptor.getRhs(), computeType);
    Value result;
    if (boolean && isOr)
      result = prim::OrOp::create(rewriter, op.getLoc(), computeType, lhs, rhs);
    else if (boolean && isAnd)
      result = prim::AndOp::create(rewriter, op.getLoc(), computeType, lhs, rhs);
    else
      result = PrimOp::create(rewriter, op.getLoc(), computeType, lhs, rhs);
    rewriter.replaceOp(op, pb.convert(result, type.getElementType()));
    return success();
  }
};


template <typename GraphOp, typename PrimOp>
struct CompareToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Type common = promoteTypes(tensorType(adaptor.getLhs()).getElementType(),
                               tensorType(adaptor.getRhs()).getElementType());
    RankedTensorType computeType = op.getType().clone(common);
    Value lhs = pb.promote(adaptor.getLhs(), computeType);
    Value rhs = pb.promote(adaptor.getRhs(), computeType);
    rewriter.replaceOpWithNewOp<PrimOp>(op, op.getType(), lhs, rhs);
    return success();
  }
};

struct WhereToPrim : OpConversionPattern<graph::WhereOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::WhereOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Value cond = pb.broadcast(adaptor.getCond(), type.getShape());
    rewriter.replaceOpWithNewOp<prim::SelectOp>(op, type, cond, pb.promote(adaptor.getLhs(), type),
                                                pb.promote(adaptor.getRhs(), type));
    return success();
  }
};

struct ConstantToPrim : OpConversionPattern<graph::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ConstantOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<prim::ConstantOp>(op, op.getValue());
    return success();
  }
};

struct ConvertToPrim : OpConversionPattern<graph::ConvertOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ConvertOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    rewriter.replaceOp(op, pb.convert(adaptor.getInput(), op.getType().getElementType()));
    return success();
  }
};

} // namespace

/// PyTorch's promotion between two tensor element types (category, then width).
Type dyn::graph_to_prim::promoteTypes(Type a, Type b) {
  if (a == b)
    return a;
  auto fa = dyn_cast<FloatType>(a), fb = dyn_cast<FloatType>(b);
  if (fa && !fb)
    return a;
  if (fb && !fa)
    return b;
  if (fa && fb) {
    if (fa.getWidth() != fb.getWidth())
      return fa.getWidth() > fb.getWidth() ? a : b;
    return Float32Type::get(a.getContext()); // bf16 vs f16
  }
  if (a.isInteger(1))
    return b;
  if (b.isInteger(1))
    return a;
  return a.getIntOrFloatBitWidth() >= b.getIntOrFloatBitWidth() ? a : b;
}

void dyn::graph_to_prim::populateElementwisePatterns(RewritePatternSet &patterns) {
  // The registry's elementwise ops (GraphOps.td), generated by dyn-tblgen.
#define GEN_ELEMENTWISE_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
