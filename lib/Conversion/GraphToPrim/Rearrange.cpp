//===- Rearrange.cpp - flip, roll, repeat, tril, triu -----------------------===//
//
// Ops that copy elements to new positions: a flip is a gather at n-1-i (prim
// slices take positive strides only), a roll two slices concatenated, a
// repeat a broadcast between two reshapes. All are index remaps that fuse
// into their consumers.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

using namespace mlir;
using namespace dyn;
using namespace dyn::graph_to_prim;

namespace {

struct FlipToPrim : OpConversionPattern<graph::FlipOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::FlipOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Value x = adaptor.getInput();
    RankedTensorType t = op.getType();
    for (int64_t d : op.getDims()) {
      int64_t n = t.getDimSize(d);
      if (n <= 1 || t.getNumElements() == 0)
        continue;
      RankedTensorType positions = t.clone(rewriter.getI64Type());
      Value i = prim::IotaOp::create(rewriter, op.getLoc(), positions, d);
      Value index = prim::SubOp::create(rewriter, op.getLoc(), positions,
                                        pb.splat(positions, (double)(n - 1)), i);
      x = prim::GatherOp::create(rewriter, op.getLoc(), t, x, d, index);
    }
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// `x[start:start+size]` along `d`.
Value sliceDim(PrimBuilder &pb, Value x, int64_t d, int64_t start, int64_t size) {
  RankedTensorType t = tensorType(x);
  SmallVector<int64_t> starts(t.getRank(), 0), strides(t.getRank(), 1), shape(t.getShape());
  starts[d] = start;
  shape[d] = size;
  return prim::SliceOp::create(pb.b, pb.loc, RankedTensorType::get(shape, t.getElementType()), x,
                               starts, strides);
}

struct RollToPrim : OpConversionPattern<graph::RollOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::RollOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Value x = adaptor.getInput();
    RankedTensorType t = op.getType();
    for (auto [shift, d] : llvm::zip(op.getShifts(), op.getDims())) {
      int64_t n = t.getDimSize(d);
      if (n == 0 || t.getNumElements() == 0)
        continue;
      int64_t s = ((shift % n) + n) % n;
      if (s == 0)
        continue;
      // the last s elements move to the front
      Value parts[] = {sliceDim(pb, x, d, n - s, s), sliceDim(pb, x, d, 0, n - s)};
      x = prim::ConcatenateOp::create(rewriter, op.getLoc(), t, parts, d);
    }
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// x viewed as [1, a0, 1, a1, ...] (leading dims of size 1 up to the repeats'
/// count), broadcast to [r0, a0, r1, a1, ...], then reshaped to [r0*a0, ...].
struct RepeatToPrim : OpConversionPattern<graph::RepeatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::RepeatOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType t = tensorType(adaptor.getInput()), rt = op.getType();
    if (rt.getNumElements() == 0) {
      rewriter.replaceOp(op, pb.splat(rt, 0));
      return success();
    }
    ArrayRef<int64_t> reps = op.getRepeats();
    size_t offset = reps.size() - t.getRank();
    SmallVector<int64_t> interleaved, wide, dims;
    for (size_t i = 0; i < reps.size(); ++i) {
      int64_t size = i < offset ? 1 : t.getDimSize(i - offset);
      interleaved.append({1, size});
      wide.append({reps[i], size});
      dims.append({(int64_t)(2 * i), (int64_t)(2 * i + 1)});
    }
    Type et = t.getElementType();
    Value x = prim::ReshapeOp::create(rewriter, loc, RankedTensorType::get(interleaved, et),
                                      adaptor.getInput());
    x = prim::BroadcastInDimOp::create(rewriter, loc, RankedTensorType::get(wide, et), x, dims);
    rewriter.replaceOpWithNewOp<prim::ReshapeOp>(op, rt, x);
    return success();
  }
};

/// tril/triu: select(col - row <= diagonal (>= for triu), x, 0) over the
/// last two dims, the positions as iotas that fuse into the select.
template <typename GraphOp, bool lower>
struct TriangleToPrim : OpConversionPattern<GraphOp> {
  using OpConversionPattern<GraphOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(GraphOp op, typename GraphOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    RankedTensorType t = op.getType();
    int64_t rank = t.getRank();
    RankedTensorType positions = t.clone(rewriter.getI64Type());
    Value rows = prim::IotaOp::create(rewriter, loc, positions, rank - 2);
    Value cols = prim::IotaOp::create(rewriter, loc, positions, rank - 1);
    Value offset = prim::SubOp::create(rewriter, loc, positions, cols, rows);
    // I64Attr reads back as uint64_t: the sign comes from the cast.
    Value diagonal = pb.splat(positions, (double)(int64_t)op.getDiagonal());
    RankedTensorType mask = t.clone(rewriter.getI1Type());
    Value keep = lower ? (Value)prim::LeOp::create(rewriter, loc, mask, offset, diagonal)
                       : (Value)prim::GeOp::create(rewriter, loc, mask, offset, diagonal);
    rewriter.replaceOpWithNewOp<prim::SelectOp>(op, t, keep, adaptor.getInput(), pb.splat(t, 0.0));
    return success();
  }
};
using TrilToPrim = TriangleToPrim<graph::TrilOp, true>;
using TriuToPrim = TriangleToPrim<graph::TriuOp, false>;

} // namespace

void dyn::graph_to_prim::populateRearrangePatterns(RewritePatternSet &patterns) {
  // The registry's patterns of the family (GraphFamilyOps.td: flip, roll, repeat, tril, triu), generated by
  // dyn-tblgen.
#define GEN_REARRANGE_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
