//===- DataMovement.cpp - reshape, permute, expand, slice, cat, pad --------------===//
//
// Ops that only move data: index remaps, padding and concatenation.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

// detach only matters to differentiation: the value itself.
struct DetachToPrim : OpConversionPattern<graph::DetachOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::DetachOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getInput());
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

/// Constant padding is prim.pad. The other modes take, in each padded dim,
/// the input at a constant index per output position: a gather.
struct PadToPrim : OpConversionPattern<graph::PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::PadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    if (op.getMode() == graph::PadMode::constant) {
      double v = op.getValue().convertToDouble();
      Type et = op.getType().getElementType();
      if (et.isInteger(1))
        v = v != 0.0;
      else if (!isa<FloatType>(et))
        v = std::trunc(v); // as eager converts the value to the tensor's type
      rewriter.replaceOpWithNewOp<prim::PadOp>(op, op.getType(), x, op.getLow(), op.getHigh(),
                                               llvm::APFloat(v));
      return success();
    }
    for (int64_t dim = 0, rank = op.getType().getRank(); dim < rank; ++dim) {
      int64_t lo = op.getLow()[dim], hi = op.getHigh()[dim];
      if (!lo && !hi)
        continue;
      RankedTensorType t = tensorType(x);
      int64_t n = t.getDimSize(dim), size = n + lo + hi;
      SmallVector<int64_t> index;
      for (int64_t j = 0; j < size; ++j) {
        int64_t i = j - lo;
        switch (op.getMode()) {
        case graph::PadMode::reflect:
          i = i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i);
          break;
        case graph::PadMode::replicate:
          i = std::clamp<int64_t>(i, 0, n - 1);
          break;
        default: // circular
          i = ((i % n) + n) % n;
          break;
        }
        index.push_back(i);
      }
      SmallVector<int64_t> shape(t.getShape());
      shape[dim] = size;
      auto resultType = t.clone(shape);
      Value indices = prim::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(RankedTensorType::get({size}, rewriter.getI64Type()),
                                 ArrayRef(index)));
      indices = prim::BroadcastInDimOp::create(rewriter, loc, resultType.clone(rewriter.getI64Type()),
                                               indices, ArrayRef<int64_t>{dim});
      x = prim::GatherOp::create(rewriter, loc, resultType, x, dim, indices);
    }
    rewriter.replaceOp(op, x);
    return success();
  }
};

} // namespace

void dyn::graph_to_prim::populateDataMovementPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<DetachToPrim, ReshapeToPrim, PermuteToPrim, ExpandToPrim, SliceToPrim, CatToPrim, PadToPrim>(ctx);
}
