//===- GraphToPrim.cpp - decompose graph ops into prim ops ---------------===//
//
// Makes PyTorch's implicit semantics explicit, one op family at a time:
// broadcasting becomes prim.broadcast_in_dim, type promotion
// prim.convert_element_type, composites (mean, softmax, relu, ...) their
// primitive definitions.
//
//===----------------------------------------------------------------------===//
#include "dyn/Conversion/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace dyn {
#define GEN_PASS_DEF_CONVERTGRAPHTOPRIMPASS
#include "dyn/Conversion/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;

namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Helpers that build prim ops; each returns its input unchanged when there
/// is nothing to do, so patterns can apply them unconditionally.
struct PrimBuilder {
  OpBuilder &b;
  Location loc;

  Value convert(Value v, Type elementType) {
    RankedTensorType t = tensorType(v);
    if (t.getElementType() == elementType)
      return v;
    if (elementType.isInteger(1) && !t.getElementType().isInteger(1))
      return prim::NeOp::create(b, loc, t.clone(elementType), v, splat(t, 0.0));
    return prim::ConvertElementTypeOp::create(b, loc, t.clone(elementType), v);
  }

  /// Right-aligned (numpy) broadcast to `shape`.
  Value broadcast(Value v, ArrayRef<int64_t> shape) {
    RankedTensorType t = tensorType(v);
    if (t.getShape() == shape)
      return v;
    int64_t offset = shape.size() - t.getRank();
    SmallVector<int64_t> dims;
    for (int64_t i = 0; i < t.getRank(); ++i)
      dims.push_back(offset + i);
    return prim::BroadcastInDimOp::create(b, loc, RankedTensorType::get(shape, t.getElementType()),
                                          v, dims);
  }

  /// Broadcast after dropping dims: operand dim i is result dim keptDims[i].
  Value broadcastKept(Value v, RankedTensorType to, ArrayRef<int64_t> keptDims) {
    return prim::BroadcastInDimOp::create(b, loc, to, v, keptDims);
  }

  Value promote(Value v, RankedTensorType to) {
    return broadcast(convert(v, to.getElementType()), to.getShape());
  }

  Value splat(RankedTensorType like, double value) {
    Type et = like.getElementType();
    Attribute scalar;
    if (auto ft = dyn_cast<FloatType>(et))
      scalar = FloatAttr::get(ft, value);
    else
      scalar = IntegerAttr::get(et, (int64_t)value);
    return prim::ConstantOp::create(b, loc, DenseElementsAttr::get(like, scalar));
  }
};

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
      Value x = pb.convert(adaptor.getInput(), type.getElementType());
      rewriter.replaceOpWithNewOp<PrimOp>(op, type, x);
      return success();
    }
  }
};

/// Unary composites defined by a small prim expression.
template <typename GraphOp>
struct UnaryComposite : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Location loc = op.getLoc();
    Value result;
    if constexpr (std::is_same_v<GraphOp, graph::SigmoidOp>) {
      result = prim::LogisticOp::create(rewriter, loc, type,
                                        pb.convert(adaptor.getInput(), type.getElementType()));
    } else if constexpr (std::is_same_v<GraphOp, graph::ReluOp>) {
      if (type.getElementType().isInteger(1))
        return rewriter.notifyMatchFailure(op, "relu of booleans (PyTorch raises)");
      Value x = pb.convert(adaptor.getInput(), type.getElementType());
      result = prim::MaxOp::create(rewriter, loc, type, x, pb.splat(type, 0.0));
    } else if constexpr (std::is_same_v<GraphOp, graph::ReciprocalOp>) {
      Value x = pb.convert(adaptor.getInput(), type.getElementType());
      result = prim::DivOp::create(rewriter, loc, type, pb.splat(type, 1.0), x);
    } else if constexpr (std::is_same_v<GraphOp, graph::LogicalNotOp>) {
      Value x = pb.convert(adaptor.getInput(), rewriter.getI1Type());
      result = prim::NotOp::create(rewriter, loc, cast<RankedTensorType>(x.getType()), x);
      result = pb.convert(result, type.getElementType());
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

Value powByConstant(PrimBuilder &pb, Value base, Value exponent, RankedTensorType type) {
  // The exponent may already be converted (adaptor) or not yet.
  DenseElementsAttr dense;
  if (auto c = exponent.getDefiningOp<graph::ConstantOp>())
    dense = dyn_cast<DenseElementsAttr>(c.getValue());
  else if (auto c = exponent.getDefiningOp<prim::ConstantOp>())
    dense = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!dense || !dense.isSplat())
    return {};
  double e;
  if (auto f = dyn_cast<FloatAttr>(dense.getSplatValue<Attribute>()))
    e = f.getValueAsDouble();
  else
    e = (double)cast<IntegerAttr>(dense.getSplatValue<Attribute>()).getInt();
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
  return {};
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
    if (std::is_same_v<PrimOp, prim::PowOp> && !isa<FloatType>(type.getElementType()))
      return rewriter.notifyMatchFailure(op, "integer pow is not supported yet");
    // Logical ops compute on booleans, then convert to the result type.
    RankedTensorType computeType = type;
    constexpr bool isOr = std::is_same_v<PrimOp, prim::OrOp> || std::is_same_v<PrimOp, prim::AddOp> ||
                          std::is_same_v<PrimOp, prim::MaxOp>;
    constexpr bool isAnd = std::is_same_v<PrimOp, prim::AndOp> ||
                           std::is_same_v<PrimOp, prim::MulOp> || std::is_same_v<PrimOp, prim::MinOp>;
    if constexpr (std::is_same_v<PrimOp, prim::AndOp> || std::is_same_v<PrimOp, prim::OrOp>)
      computeType = type.clone(rewriter.getI1Type());
    bool boolean = computeType.getElementType().isInteger(1);
    if (boolean && !isOr && !isAnd)
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
    else if (boolean)
      result = prim::AndOp::create(rewriter, op.getLoc(), computeType, lhs, rhs);
    else
      result = PrimOp::create(rewriter, op.getLoc(), computeType, lhs, rhs);
    rewriter.replaceOp(op, pb.convert(result, type.getElementType()));
    return success();
  }
};

/// PyTorch's promotion between two tensor element types (category, then width).
Type promoteTypes(Type a, Type b) {
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

/// sum/prod/amax/amin/mean: reduce (dims removed), scale for mean, and
/// reshape back to the keepdim shape. A boolean result reduces 0/1 integers
/// (i64 for sum, i32 otherwise) and converts back: amax and sum are "any",
/// amin and prod "all".
template <typename GraphOp, typename PrimOp>
struct ReductionToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType resultType = op.getType();
    RankedTensorType type = resultType;
    if (resultType.getElementType().isInteger(1)) {
      if constexpr (std::is_same_v<GraphOp, graph::MeanOp>)
        return rewriter.notifyMatchFailure(op, "mean of booleans (PyTorch raises)");
      unsigned width = std::is_same_v<GraphOp, graph::SumOp> ? 64 : 32;
      type = resultType.clone(rewriter.getIntegerType(width));
    }
    Value x = pb.convert(adaptor.getInput(), type.getElementType());
    RankedTensorType in = tensorType(x);
    ArrayRef<int64_t> dims = op.getDims();
    SmallVector<int64_t> reducedShape;
    int64_t count = 1;
    for (int64_t i = 0; i < in.getRank(); ++i) {
      if (llvm::is_contained(dims, i))
        count *= in.getDimSize(i);
      else
        reducedShape.push_back(in.getDimSize(i));
    }
    RankedTensorType reducedType = RankedTensorType::get(reducedShape, type.getElementType());
    Value result = PrimOp::create(rewriter, op.getLoc(), reducedType, x, dims);
    if constexpr (std::is_same_v<GraphOp, graph::MeanOp>)
      result = prim::DivOp::create(rewriter, op.getLoc(), reducedType, result,
                                   pb.splat(reducedType, (double)count));
    if (reducedType != type)
      result = prim::ReshapeOp::create(rewriter, op.getLoc(), type, result);
    rewriter.replaceOp(op, pb.convert(result, resultType.getElementType()));
    return success();
  }
};

/// softmax(x) = exp(x - max) / sum(exp(x - max));
/// log_softmax(x) = (x - max) - log(sum(exp(x - max))).
template <typename GraphOp>
struct SoftmaxToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PrimBuilder pb{rewriter, loc};
    RankedTensorType type = op.getType();
    if (!isa<FloatType>(type.getElementType()))
      return rewriter.notifyMatchFailure(op, "softmax needs a float tensor");
    int64_t dim = op.getDim();
    Value x = adaptor.getInput();
    SmallVector<int64_t> reducedShape, keptDims;
    for (int64_t i = 0; i < type.getRank(); ++i) {
      if (i == dim)
        continue;
      reducedShape.push_back(type.getDimSize(i));
      keptDims.push_back(i);
    }
    auto reducedType = RankedTensorType::get(reducedShape, type.getElementType());
    Value max = prim::ReduceMaxOp::create(rewriter, loc, reducedType, x, ArrayRef<int64_t>{dim});
    Value shifted =
        prim::SubOp::create(rewriter, loc, type, x, pb.broadcastKept(max, type, keptDims));
    Value exp = prim::ExpOp::create(rewriter, loc, type, shifted);
    Value sum = prim::ReduceSumOp::create(rewriter, loc, reducedType, exp, ArrayRef<int64_t>{dim});
    Value sumB = pb.broadcastKept(sum, type, keptDims);
    Value result;
    if constexpr (std::is_same_v<GraphOp, graph::SoftmaxOp>)
      result = prim::DivOp::create(rewriter, loc, type, exp, sumB);
    else
      result = prim::SubOp::create(rewriter, loc, type, shifted,
                                   prim::LogOp::create(rewriter, loc, type, sumB));
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MatmulToPrim : OpConversionPattern<graph::MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::MatmulOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Type et = op.getType().getElementType();
    Value lhs = pb.convert(adaptor.getLhs(), et), rhs = pb.convert(adaptor.getRhs(), et);
    bool batched = op.getType().getRank() == 3;
    SmallVector<int64_t> batch = batched ? SmallVector<int64_t>{0} : SmallVector<int64_t>{};
    int64_t lc = batched ? 2 : 1, rc = batched ? 1 : 0;
    rewriter.replaceOpWithNewOp<prim::DotGeneralOp>(op, op.getType(), lhs, rhs, batch, batch,
                                                    ArrayRef<int64_t>{lc}, ArrayRef<int64_t>{rc});
    return success();
  }
};

struct ReshapeToPrim : OpConversionPattern<graph::ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ReshapeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<prim::ReshapeOp>(op, op.getType(), adaptor.getInput());
    return success();
  }
};

struct PermuteToPrim : OpConversionPattern<graph::PermuteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::PermuteOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<prim::TransposeOp>(op, op.getType(), adaptor.getInput(),
                                                   op.getDims());
    return success();
  }
};

struct ExpandToPrim : OpConversionPattern<graph::ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ExpandOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    rewriter.replaceOp(op, pb.broadcast(adaptor.getInput(), op.getType().getShape()));
    return success();
  }
};

struct SliceToPrim : OpConversionPattern<graph::SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::SliceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    int64_t rank = op.getType().getRank();
    SmallVector<int64_t> start(rank, 0), stride(rank, 1);
    start[op.getDim()] = op.getStart();
    stride[op.getDim()] = op.getStep();
    rewriter.replaceOpWithNewOp<prim::SliceOp>(op, op.getType(), adaptor.getInput(), start,
                                               stride);
    return success();
  }
};

struct CatToPrim : OpConversionPattern<graph::CatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::CatOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    SmallVector<Value> inputs;
    for (Value v : adaptor.getInputs())
      inputs.push_back(pb.convert(v, op.getType().getElementType()));
    rewriter.replaceOpWithNewOp<prim::ConcatenateOp>(op, op.getType(), inputs, op.getDim());
    return success();
  }
};

struct GatherToPrim : OpConversionPattern<graph::GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::GatherOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<prim::GatherOp>(op, op.getType(), adaptor.getInput(), op.getDim(),
                                                adaptor.getIndex());
    return success();
  }
};

} // namespace

namespace dyn {

void populateGraphToPrimPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<UnaryToPrim<graph::NegOp, prim::NegOp>, UnaryToPrim<graph::AbsOp, prim::AbsOp>,
               UnaryToPrim<graph::ExpOp, prim::ExpOp>, UnaryToPrim<graph::LogOp, prim::LogOp>,
               UnaryToPrim<graph::SinOp, prim::SinOp>, UnaryToPrim<graph::CosOp, prim::CosOp>,
               UnaryToPrim<graph::TanOp, prim::TanOp>, UnaryToPrim<graph::TanhOp, prim::TanhOp>,
               UnaryToPrim<graph::SqrtOp, prim::SqrtOp>,
               UnaryToPrim<graph::RsqrtOp, prim::RsqrtOp>, UnaryToPrim<graph::ErfOp, prim::ErfOp>,
               UnaryToPrim<graph::FloorOp, prim::FloorOp>,
               UnaryToPrim<graph::CeilOp, prim::CeilOp>,
               UnaryToPrim<graph::Log1pOp, prim::Log1pOp>,
               UnaryToPrim<graph::Expm1Op, prim::Expm1Op>>(ctx);
  patterns.add<UnaryComposite<graph::SigmoidOp>, UnaryComposite<graph::ReluOp>,
               UnaryComposite<graph::ReciprocalOp>, UnaryComposite<graph::LogicalNotOp>>(ctx);
  patterns.add<BinaryToPrim<graph::AddOp, prim::AddOp>, BinaryToPrim<graph::SubOp, prim::SubOp>,
               BinaryToPrim<graph::MulOp, prim::MulOp>, BinaryToPrim<graph::DivOp, prim::DivOp>,
               BinaryToPrim<graph::PowOp, prim::PowOp>,
               BinaryToPrim<graph::MaximumOp, prim::MaxOp>,
               BinaryToPrim<graph::MinimumOp, prim::MinOp>,
               BinaryToPrim<graph::RemainderOp, prim::RemOp>,
               BinaryToPrim<graph::LogicalAndOp, prim::AndOp>,
               BinaryToPrim<graph::LogicalOrOp, prim::OrOp>>(ctx);
  patterns.add<CompareToPrim<graph::EqOp, prim::EqOp>, CompareToPrim<graph::NeOp, prim::NeOp>,
               CompareToPrim<graph::LtOp, prim::LtOp>, CompareToPrim<graph::LeOp, prim::LeOp>,
               CompareToPrim<graph::GtOp, prim::GtOp>, CompareToPrim<graph::GeOp, prim::GeOp>>(ctx);
  patterns.add<ReductionToPrim<graph::SumOp, prim::ReduceSumOp>,
               ReductionToPrim<graph::MeanOp, prim::ReduceSumOp>,
               ReductionToPrim<graph::ProdOp, prim::ReduceProdOp>,
               ReductionToPrim<graph::AmaxOp, prim::ReduceMaxOp>,
               ReductionToPrim<graph::AminOp, prim::ReduceMinOp>>(ctx);
  patterns.add<SoftmaxToPrim<graph::SoftmaxOp>, SoftmaxToPrim<graph::LogSoftmaxOp>>(ctx);
  patterns.add<WhereToPrim, ConstantToPrim, ConvertToPrim, MatmulToPrim, ReshapeToPrim,
               PermuteToPrim, ExpandToPrim, SliceToPrim, CatToPrim, GatherToPrim>(ctx);
}

namespace {
struct ConvertGraphToPrimPass : impl::ConvertGraphToPrimPassBase<ConvertGraphToPrimPass> {
  void runOnOperation() override {
    // a PyTorch op kept whole by capture: no prim form exists, say which op stops the lowering
    WalkResult calls = getOperation().walk([](graph::TorchCallOp op) {
      op.emitError() << "graph.torch_call \"" << op.getCallee()
                     << "\" has no lowering in dyn's compiler (the graph runs with PyTorch ops)";
      return WalkResult::interrupt();
    });
    if (calls.wasInterrupted())
      return signalPassFailure();
    ConversionTarget target(getContext());
    target.addIllegalDialect<graph::GraphDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateGraphToPrimPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

} // namespace dyn
