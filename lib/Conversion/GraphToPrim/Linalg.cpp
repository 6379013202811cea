//===- Linalg.cpp - matmul, addmm, convolution, attention ------------------===//
//
// Contractions and the library primitives: matmul becomes prim.dot_general
// (addmm too, its added term after it), convolution prim.convolution (the
// bias added by the library, one rounding as in eager), attention
// prim.attention with its scale (a boolean mask made additive first, as ATen
// does).
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <limits>

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

/// `v` with its leading dims but the last `keep` merged into one (sizes read
/// at run time where dynamic).
static Value collapseLeading(PrimBuilder &pb, Value v, int64_t keep) {
  RankedTensorType t = tensorType(v);
  int64_t lead = t.getRank() - keep, n = 1;
  bool dynamic = false;
  Value size = arith::ConstantIndexOp::create(pb.b, pb.loc, 1);
  for (int64_t d = 0; d < lead; ++d) {
    dynamic |= t.isDynamicDim(d);
    n *= t.isDynamicDim(d) ? 1 : t.getDimSize(d);
    size = arith::MulIOp::create(pb.b, pb.loc, size, pb.dim(v, d));
  }
  SmallVector<int64_t> shape{dynamic ? ShapedType::kDynamic : n};
  SmallVector<Value> sizes{size};
  for (int64_t d = lead; d < t.getRank(); ++d) {
    shape.push_back(t.getDimSize(d));
    sizes.push_back(t.isDynamicDim(d) ? pb.dim(v, d) : Value());
  }
  return pb.reshape(v, t.clone(shape), sizes);
}

/// The matrix product as a matmul-shaped prim.dot_general (2-D, or 3-D with
/// one batch dim, what the fusion computes by a GEMM): more batch dims are
/// merged into one, and a batched lhs times a matrix is one [batch * M, K]
/// by [K, N] product; the result is reshaped back.
struct MatmulToPrim : OpConversionPattern<graph::MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::MatmulOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Type et = type.getElementType();
    Value lhs = pb.convert(adaptor.getLhs(), et), rhs = pb.convert(adaptor.getRhs(), et);
    int64_t r = type.getRank(), rb = tensorType(rhs).getRank();
    if (r <= 3 && rb == r) {
      bool batched = r == 3;
      SmallVector<int64_t> batch = batched ? SmallVector<int64_t>{0} : SmallVector<int64_t>{};
      int64_t lc = batched ? 2 : 1, rc = batched ? 1 : 0;
      rewriter.replaceOpWithNewOp<prim::DotGeneralOp>(op, type, lhs, rhs, batch, batch, ArrayRef<int64_t>{lc},
                                                      ArrayRef<int64_t>{rc});
      return success();
    }
    // the result's sizes, read from the operands before they are merged
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < r - 1; ++d)
      sizes.push_back(type.isDynamicDim(d) ? pb.dim(lhs, d) : Value());
    sizes.push_back(type.isDynamicDim(r - 1) ? pb.dim(rhs, rb - 1) : Value());
    Value product;
    if (rb == 2) {
      Value a = collapseLeading(pb, lhs, 1);
      RankedTensorType at = tensorType(a);
      auto pt = RankedTensorType::get({at.getDimSize(0), tensorType(rhs).getDimSize(1)}, et);
      product = prim::DotGeneralOp::create(rewriter, op.getLoc(), pt, a, rhs, ArrayRef<int64_t>{},
                                           ArrayRef<int64_t>{}, ArrayRef<int64_t>{1}, ArrayRef<int64_t>{0});
    } else {
      Value a = collapseLeading(pb, lhs, 2), b = collapseLeading(pb, rhs, 2);
      RankedTensorType at = tensorType(a), bt = tensorType(b);
      auto pt = RankedTensorType::get({at.getDimSize(0), at.getDimSize(1), bt.getDimSize(2)}, et);
      product = prim::DotGeneralOp::create(rewriter, op.getLoc(), pt, a, b, ArrayRef<int64_t>{0},
                                           ArrayRef<int64_t>{0}, ArrayRef<int64_t>{2}, ArrayRef<int64_t>{1});
    }
    rewriter.replaceOp(op, pb.reshape(product, type, sizes));
    return success();
  }
};

/// beta * input + alpha * (lhs @ rhs): prim.dot_general (a broadcast
/// multiply for a contraction of one element: addr's outer product), then the
/// input added; scaled by alpha and beta in float32 for float16/bfloat16,
/// rounded once.
struct AddmmToPrim : OpConversionPattern<graph::AddmmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::AddmmOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType type = op.getType();
    Type et = type.getElementType();
    Value lhs = pb.convert(adaptor.getLhs(), et), rhs = pb.convert(adaptor.getRhs(), et);
    int64_t rank = type.getRank();
    Value prod;
    if (tensorType(lhs).getDimSize(rank - 1) == 1) {
      prod = prim::MulOp::create(rewriter, op.getLoc(), type, pb.broadcast(lhs, type.getShape()),
                                 pb.broadcast(rhs, type.getShape()));
    } else {
      SmallVector<int64_t> batch = rank == 3 ? SmallVector<int64_t>{0} : SmallVector<int64_t>{};
      prod = prim::DotGeneralOp::create(rewriter, op.getLoc(), type, lhs, rhs, batch, batch,
                                        ArrayRef<int64_t>{rank - 1}, ArrayRef<int64_t>{rank - 2});
    }
    // the operands do not size the result right-aligned (K sits under N): the product does
    pb.sizeSource = prod;
    double alpha = op.getAlpha().convertToDouble(), beta = op.getBeta().convertToDouble();
    if (!isa<FloatType>(et))
      alpha = std::trunc(alpha), beta = std::trunc(beta);
    if (alpha == 1 && beta == 0) {
      rewriter.replaceOp(op, prod);
      return success();
    }
    if (alpha == 1 && beta == 1) {
      // in the result type: the GEMM's addend (eager's one rounding of
      // float16/bfloat16 products plus the input) where the fusion takes it;
      // `dyn.addmm` says eager adds it in the GEMM (a float32 matmul + add
      // it does not: two roundings)
      auto add = rewriter.replaceOpWithNewOp<prim::AddOp>(
          op, type, pb.promote(adaptor.getInput(), type), prod);
      add->setAttr("dyn.addmm", rewriter.getUnitAttr());
      return success();
    }
    Pointwise p{pb, opmathType(type)};
    Value r = p.in(prod);
    if (alpha != 1)
      r = p.mul(r, p.c(alpha));
    if (beta != 0) {
      Value x = p.in(adaptor.getInput());
      r = p.add(beta == 1 ? x : p.mul(x, p.c(beta)), r);
    }
    rewriter.replaceOp(op, pb.convert(r, et));
    return success();
  }
};

/// vecdot: the products summed over dim, in float32 for f16/bf16.
struct VecdotToPrim : OpConversionPattern<graph::VecdotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::VecdotOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    RankedTensorType in = opmathType(tensorType(adaptor.getLhs()));
    Pointwise p{pb, in};
    Value prod = p.mul(p.in(adaptor.getLhs()), p.in(adaptor.getRhs()));
    RankedTensorType summed = op.getType().clone(in.getElementType());
    Value r = prim::ReduceSumOp::create(rewriter, op.getLoc(), summed, prod,
                                        ArrayRef<int64_t>{(int64_t)op.getDim()});
    rewriter.replaceOp(op, pb.convert(r, op.getType().getElementType()));
    return success();
  }
};

/// trace: the diagonal gathered from the leading square (row i, column i),
/// converted to the result type and summed.
struct TraceToPrim : OpConversionPattern<graph::TraceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::TraceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType in = tensorType(adaptor.getInput()), type = op.getType();
    int64_t k = std::min(in.getDimSize(0), in.getDimSize(1));
    if (k == 0) {
      rewriter.replaceOp(op, pb.splat(type, 0.0));
      return success();
    }
    RankedTensorType rows = RankedTensorType::get({k, in.getDimSize(1)}, in.getElementType());
    Value x = prim::SliceOp::create(rewriter, loc, rows, adaptor.getInput(), ArrayRef<int64_t>{0, 0},
                                    ArrayRef<int64_t>{1, 1});
    RankedTensorType column = RankedTensorType::get({k, 1}, rewriter.getI64Type());
    Value index = prim::IotaOp::create(rewriter, loc, column, 0);
    Value diagonal = prim::GatherOp::create(rewriter, loc, column.clone(in.getElementType()), x, 1, index);
    diagonal = pb.convert(diagonal, type.getElementType());
    rewriter.replaceOpWithNewOp<prim::ReduceSumOp>(op, type, diagonal, ArrayRef<int64_t>{0, 1});
    return success();
  }
};

struct ConvolutionToPrim : OpConversionPattern<graph::ConvolutionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ConvolutionOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    // The operands and the attributes carry over (by name).
    rewriter.replaceOpWithNewOp<prim::ConvolutionOp>(op, TypeRange{op.getType()},
                                                     adaptor.getOperands(), op->getAttrs());
    return success();
  }
};

struct AttentionToPrim : OpConversionPattern<graph::ScaledDotProductAttentionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ScaledDotProductAttentionOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    int64_t e = tensorType(op.getQuery()).getShape().back();
    double scale = op.getScale() ? op.getScale()->convertToDouble() : 1.0 / std::sqrt((double)e);
    SmallVector<Value> operands{adaptor.getQuery(), adaptor.getKey(), adaptor.getValue()};
    if (Value mask = adaptor.getMask()) {
      // A boolean mask becomes the additive mask ATen makes of it at every
      // call (convert_boolean_attn_mask: 0 where attended, -inf elsewhere, in
      // the query's dtype), here one fused kernel instead of three ATen ops
      // on the host before each attention call.
      auto maskType = cast<RankedTensorType>(mask.getType());
      if (maskType.getElementType().isInteger(1)) {
        PrimBuilder pb{rewriter, op.getLoc()};
        Pointwise p{pb, maskType.clone(tensorType(op.getQuery()).getElementType())};
        mask = p.select(mask, p.c(0.0), p.c(-std::numeric_limits<double>::infinity()));
      }
      operands.push_back(mask);
    }
    auto attention = prim::AttentionOp::create(rewriter, op.getLoc(), TypeRange{op.getType()},
                                               operands, ArrayRef<NamedAttribute>{});
    attention.setScale(llvm::APFloat(scale));
    if (op.getIsCausal())
      attention.setIsCausal(true);
    rewriter.replaceOp(op, attention.getResult());
    return success();
  }
};

/// a x b along dim: component i is a[i+1] b[i+2] - a[i+2] b[i+1] (indices
/// mod 3), in the operands' type as eager's kernel computes it.
struct CrossToPrim : OpConversionPattern<graph::CrossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::CrossOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t dim = op.getDim(), rank = type.getRank();
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = 1;
    RankedTensorType part = type.clone(shape);
    auto component = [&](Value v, int64_t i) -> Value {
      SmallVector<int64_t> start(rank, 0), stride(rank, 1);
      start[dim] = i;
      return prim::SliceOp::create(rewriter, loc, part, v, start, stride);
    };
    Value a[3], b[3];
    for (int64_t i = 0; i < 3; ++i) {
      a[i] = component(adaptor.getInput(), i);
      b[i] = component(adaptor.getOther(), i);
    }
    SmallVector<Value> parts;
    for (int64_t i = 0; i < 3; ++i) {
      Value l = prim::MulOp::create(rewriter, loc, part, a[(i + 1) % 3], b[(i + 2) % 3]);
      Value r = prim::MulOp::create(rewriter, loc, part, a[(i + 2) % 3], b[(i + 1) % 3]);
      parts.push_back(prim::SubOp::create(rewriter, loc, part, l, r));
    }
    rewriter.replaceOpWithNewOp<prim::ConcatenateOp>(op, type, parts, dim);
    return success();
  }
};

/// x1 [B, in1] @ w as [in1, out * in2] (one GEMM), times x2 broadcast over
/// out, summed over in2 in the accumulate type (i64 for integers, f32 for
/// f16/bf16) and rounded once; the bias added in the result type.
struct BilinearToPrim : OpConversionPattern<graph::BilinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::BilinearOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type et = type.getElementType();
    ArrayRef<int64_t> w = tensorType(adaptor.getWeight()).getShape();
    int64_t batch = type.getDimSize(0), out = w[0], in1 = w[1], in2 = w[2];
    Value wt = prim::TransposeOp::create(rewriter, loc, RankedTensorType::get({in1, out, in2}, et),
                                         adaptor.getWeight(), ArrayRef<int64_t>{1, 0, 2});
    wt = prim::ReshapeOp::create(rewriter, loc, RankedTensorType::get({in1, out * in2}, et), wt);
    Value t = prim::DotGeneralOp::create(rewriter, loc, RankedTensorType::get({batch, out * in2}, et),
                                         adaptor.getInput(), wt, ArrayRef<int64_t>{}, ArrayRef<int64_t>{},
                                         ArrayRef<int64_t>{1}, ArrayRef<int64_t>{0});
    auto wide = RankedTensorType::get({batch, out, in2}, et);
    t = prim::ReshapeOp::create(rewriter, loc, wide, t);
    Value prod = prim::MulOp::create(rewriter, loc, wide, t, pb.broadcastKept(adaptor.getInput2(), wide, {0, 2}));
    Type acc = isa<FloatType>(et) ? opmathType(wide).getElementType() : (Type)rewriter.getI64Type();
    Value sum = prim::ReduceSumOp::create(rewriter, loc, type.clone(acc), pb.convert(prod, acc),
                                          ArrayRef<int64_t>{2});
    Value r = pb.convert(sum, et);
    if (Value bias = adaptor.getBias())
      r = prim::AddOp::create(rewriter, loc, type, r, pb.broadcastKept(bias, type, {1}));
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateLinalgPatterns(RewritePatternSet &patterns) {
  // The registry's patterns of the family (matmul, addmm, convolution, attention), generated by dyn-tblgen.
#define GEN_LINALG_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
