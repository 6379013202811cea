//===- Activations.cpp - activation composites --------------------------------===//
//
// The registry's activations (GraphOps.td, Graph_ActivationOp): each is written
// as eager's CPU kernel computes it (same formula, same order of operations,
// same handling of NaN), in float32 for float16 and bfloat16 inputs with one
// rounding at the end, as those kernels compute. softsign and tanhshrink are
// Python compositions of two ops in PyTorch: they round in between too.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

#include <cmath>

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

template <typename GraphOp>
Value activation(GraphOp op, Pointwise &p, Value x);

/// elu, selu and celu: x <= 0 ? expm1(x * inputScale) * alpha * scale : x * scale.
Value eluLike(Pointwise &p, Value x, double alpha, double scale, double inputScale) {
  Value neg = p.mul(p.un<prim::Expm1Op>(p.mul(x, p.c(inputScale))), p.c(alpha * scale));
  return p.select(p.cmp<prim::LeOp>(x, p.c(0)), neg, p.mul(x, p.c(scale)));
}

/// log1p(exp(x)), as softplus and mish compute it.
Value softplusOne(Pointwise &p, Value x) { return p.un<prim::Log1pOp>(p.un<prim::ExpOp>(x)); }

template <>
Value activation(graph::GeluOp op, Pointwise &p, Value x) {
  Value half = p.mul(x, p.c(0.5));
  if (op.getApproximate() == "tanh") {
    const double beta = M_SQRT2 * M_2_SQRTPI * 0.5, kappa = 0.044715;
    Value cube = p.mul(p.mul(x, x), x);
    Value inner = p.mul(p.c(beta), p.add(x, p.mul(p.c(kappa), cube)));
    return p.mul(half, p.add(p.c(1), p.un<prim::TanhOp>(inner)));
  }
  return p.mul(half, p.add(p.c(1), p.un<prim::ErfOp>(p.mul(x, p.c(M_SQRT1_2)))));
}
template <>
Value activation(graph::SiluOp, Pointwise &p, Value x) {
  return p.div(x, p.add(p.c(1), p.un<prim::ExpOp>(p.un<prim::NegOp>(x))));
}
template <>
Value activation(graph::MishOp, Pointwise &p, Value x) {
  return p.mul(x, p.un<prim::TanhOp>(softplusOne(p, x)));
}
template <>
Value activation(graph::EluOp op, Pointwise &p, Value x) {
  return eluLike(p, x, op.getAlpha().convertToDouble(), 1.0, 1.0);
}
template <>
Value activation(graph::SeluOp, Pointwise &p, Value x) {
  return eluLike(p, x, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1.0);
}
template <>
Value activation(graph::CeluOp op, Pointwise &p, Value x) {
  double alpha = op.getAlpha().convertToDouble();
  return eluLike(p, x, alpha, 1.0, 1.0 / alpha);
}
template <>
Value activation(graph::SoftplusOp op, Pointwise &p, Value x) {
  double beta = op.getBeta().convertToDouble();
  Value bx = p.mul(x, p.c(beta));
  Value soft = p.div(softplusOne(p, bx), p.c(beta));
  return p.select(p.cmp<prim::GtOp>(bx, p.c(op.getThreshold().convertToDouble())), x, soft);
}
template <>
Value activation(graph::LogSigmoidOp, Pointwise &p, Value x) {
  Value z = p.un<prim::ExpOp>(p.un<prim::NegOp>(p.un<prim::AbsOp>(x)));
  return p.sub(p.min(p.c(0), x), p.un<prim::Log1pOp>(z));
}
template <>
Value activation(graph::HardswishOp, Pointwise &p, Value x) {
  Value c = p.min(p.max(p.add(x, p.c(3)), p.c(0)), p.c(6));
  return p.div(p.mul(x, c), p.c(6));
}
template <>
Value activation(graph::HardsigmoidOp, Pointwise &p, Value x) {
  return p.div(p.min(p.max(p.add(x, p.c(3)), p.c(0)), p.c(6)), p.c(6));
}
/// A value rounded to the op's own type and back (a PyTorch composition of
/// two ops rounds between them).
Value rounded(Pointwise &p, Value v, Type own) {
  return p.pb.convert(p.pb.convert(v, own), p.type.getElementType());
}
template <>
Value activation(graph::SoftsignOp op, Pointwise &p, Value x) {
  Value d = rounded(p, p.add(p.un<prim::AbsOp>(x), p.c(1)), op.getType().getElementType());
  return p.div(x, d);
}
template <>
Value activation(graph::TanhshrinkOp op, Pointwise &p, Value x) {
  return p.sub(x, rounded(p, p.un<prim::TanhOp>(x), op.getType().getElementType()));
}
template <>
Value activation(graph::SoftshrinkOp op, Pointwise &p, Value x) {
  Value l = p.c(op.getLambd().convertToDouble()), nl = p.c(-op.getLambd().convertToDouble());
  Value inner = p.select(p.cmp<prim::LtOp>(x, nl), p.add(x, l), p.mul(x, p.c(0)));
  return p.select(p.cmp<prim::GtOp>(x, l), p.sub(x, l), inner);
}
template <>
Value activation(graph::HardshrinkOp op, Pointwise &p, Value x) {
  Value l = p.c(op.getLambd().convertToDouble()), nl = p.c(-op.getLambd().convertToDouble());
  Value inside = prim::AndOp::create(p.pb.b, p.pb.loc, p.type.clone(p.pb.b.getI1Type()),
                                     p.cmp<prim::GeOp>(x, nl), p.cmp<prim::LeOp>(x, l));
  return p.select(inside, p.c(0), x);
}
template <>
Value activation(graph::ThresholdOp op, Pointwise &p, Value x) {
  return p.select(p.cmp<prim::LeOp>(x, p.c(op.getThreshold().convertToDouble())),
                  p.c(op.getValue().convertToDouble()), x);
}
template <>
Value activation(graph::LeakyReluOp op, Pointwise &p, Value x) {
  return p.select(p.cmp<prim::GtOp>(x, p.c(0)), x,
                  p.mul(x, p.c(op.getNegativeSlope().convertToDouble())));
}
template <>
Value activation(graph::HardtanhOp op, Pointwise &p, Value x) {
  return p.min(p.max(x, p.c(op.getMinVal().convertToDouble())), p.c(op.getMaxVal().convertToDouble()));
}

template <typename GraphOp>
struct ActivationToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Pointwise p{pb, opmathType(type)};
    Value r = activation(op, p, p.in(adaptor.getInput()));
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

using GeluToPrim = ActivationToPrim<graph::GeluOp>;
using SiluToPrim = ActivationToPrim<graph::SiluOp>;
using MishToPrim = ActivationToPrim<graph::MishOp>;
using EluToPrim = ActivationToPrim<graph::EluOp>;
using SeluToPrim = ActivationToPrim<graph::SeluOp>;
using CeluToPrim = ActivationToPrim<graph::CeluOp>;
using SoftplusToPrim = ActivationToPrim<graph::SoftplusOp>;
using LogSigmoidToPrim = ActivationToPrim<graph::LogSigmoidOp>;
using HardswishToPrim = ActivationToPrim<graph::HardswishOp>;
using HardsigmoidToPrim = ActivationToPrim<graph::HardsigmoidOp>;
using SoftsignToPrim = ActivationToPrim<graph::SoftsignOp>;
using TanhshrinkToPrim = ActivationToPrim<graph::TanhshrinkOp>;
using SoftshrinkToPrim = ActivationToPrim<graph::SoftshrinkOp>;
using HardshrinkToPrim = ActivationToPrim<graph::HardshrinkOp>;
using ThresholdToPrim = ActivationToPrim<graph::ThresholdOp>;
using LeakyReluToPrim = ActivationToPrim<graph::LeakyReluOp>;
using HardtanhToPrim = ActivationToPrim<graph::HardtanhOp>;

/// glu: a * sigmoid(b) of the halves of `dim`, in float32 for f16/bf16.
struct GluToPrim : OpConversionPattern<graph::GluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::GluOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank(), dim = (int64_t)op.getDim();
    dim = dim < 0 ? dim + rank : dim;
    Value x = adaptor.getInput();
    RankedTensorType half = tensorType(x).clone(type.getShape());
    SmallVector<int64_t> starts(rank, 0), strides(rank, 1);
    Value a = prim::SliceOp::create(rewriter, op.getLoc(), half, x, starts, strides);
    starts[dim] = type.getDimSize(dim);
    Value b = prim::SliceOp::create(rewriter, op.getLoc(), half, x, starts, strides);
    Pointwise p{pb, opmathType(type)};
    Value r = p.mul(p.in(a), p.un<prim::LogisticOp>(p.in(b)));
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

/// prelu: select(x > 0, x, w * x), the weight broadcast along the channel
/// dim (1, or 0 for a 1-d input) or from its one value.
struct PreluToPrim : OpConversionPattern<graph::PreluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::PreluOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType(), compute = opmathType(type);
    Value w = pb.convert(adaptor.getWeight(), compute.getElementType());
    RankedTensorType wt = tensorType(w);
    if (wt.getNumElements() == 1 || type.getRank() == 0) {
      w = prim::ReshapeOp::create(rewriter, op.getLoc(), RankedTensorType::get({}, wt.getElementType()), w);
      w = pb.broadcast(w, type.getShape());
    } else {
      int64_t channel = type.getRank() >= 2 ? 1 : 0;
      w = pb.broadcastKept(w, compute, {channel});
    }
    Pointwise p{pb, compute};
    Value x = p.in(adaptor.getInput());
    Value r = p.select(p.cmp<prim::GtOp>(x, p.c(0)), x, p.mul(w, x));
    rewriter.replaceOp(op, pb.convert(r, type.getElementType()));
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateActivationsPatterns(RewritePatternSet &patterns) {
  // The registry's Activations lowerings (GraphOps.td), generated by dyn-tblgen.
#define GEN_ACTIVATIONS_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
