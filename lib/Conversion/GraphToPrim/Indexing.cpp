//===- Indexing.cpp - gather ------------------------------------------------===//
//
// Data-dependent indexing.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

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

void dyn::graph_to_prim::populateIndexingPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<GatherToPrim>(ctx);
}
