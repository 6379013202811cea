//===- DataMovement.cpp - reshape, permute, expand, slice, cat --------------===//
//
// Ops that only move data: index remaps and concatenation.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

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

} // namespace

void dyn::graph_to_prim::populateDataMovementPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ReshapeToPrim, PermuteToPrim, ExpandToPrim, SliceToPrim, CatToPrim>(ctx);
}
