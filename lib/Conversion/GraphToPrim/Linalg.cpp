//===- Linalg.cpp - matmul --------------------------------------------------===//
//
// Contractions: matmul becomes prim.dot_general.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

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

} // namespace

void dyn::graph_to_prim::populateLinalgPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<MatmulToPrim>(ctx);
}
