//===- DataMovement.cpp - reshape, permute, expand, slice, cat, pad --------------===//
//
// Ops that only move data: index remaps, padding and concatenation.
//
//===----------------------------------------------------------------------===//
#include "PrimBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

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

/// A dynamic result dim takes its size from `sizes`, or (graph::reshapeSizeSources)
/// an input dim, or the element count over the other result dims.
struct ReshapeToPrim : OpConversionPattern<graph::ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::ReshapeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Value x = adaptor.getInput();
    if (type.hasStaticShape() || !adaptor.getSizes().empty()) {
      rewriter.replaceOpWithNewOp<prim::ReshapeOp>(op, type, x, adaptor.getSizes());
      return success();
    }
    PrimBuilder pb{rewriter, op.getLoc()};
    Location loc = op.getLoc();
    auto sources = graph::reshapeSizeSources(tensorType(x), type);
    if (failed(sources))
      return rewriter.notifyMatchFailure(op, "dynamic dims that the input does not size");
    SmallVector<Value> sizes(type.getRank());
    int64_t k = 0, left = -1;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      int64_t from = (*sources)[k++];
      if (from < 0)
        left = d;
      else
        sizes[d] = pb.dim(x, from);
    }
    if (left >= 0) {
      // the element count over the other result dims
      Value count = arith::ConstantIndexOp::create(rewriter, loc, 1);
      for (int64_t d = 0; d < tensorType(x).getRank(); ++d)
        count = arith::MulIOp::create(rewriter, loc, count, pb.dim(x, d));
      Value others = arith::ConstantIndexOp::create(rewriter, loc, 1);
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (d != left)
          others = arith::MulIOp::create(
              rewriter, loc, others,
              type.isDynamicDim(d) ? sizes[d] : arith::ConstantIndexOp::create(rewriter, loc, type.getDimSize(d)));
      sizes[left] = arith::DivUIOp::create(rewriter, loc, count, others);
    }
    rewriter.replaceOp(op, pb.reshape(x, type, sizes));
    return success();
  }
};

struct IotaToPrim : OpConversionPattern<graph::IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::IotaOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<prim::IotaOp>(op, op.getType(), 0, adaptor.getSizes());
    return success();
  }
};

/// An index remap by the runtime offset `start`, `end - start` elements long.
struct DynamicSliceToPrim : OpConversionPattern<graph::DynamicSliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::DynamicSliceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value size = arith::SubIOp::create(rewriter, op.getLoc(), adaptor.getEnd(), adaptor.getStart());
    rewriter.replaceOpWithNewOp<prim::DynamicSliceOp>(op, op.getType(), adaptor.getInput(), op.getDim(),
                                                      adaptor.getStart(), size);
    return success();
  }
};

struct DimToPrim : OpConversionPattern<graph::DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(graph::DimOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<prim::DimOp>(op, adaptor.getInput(), op.getDim());
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
    RankedTensorType type = op.getType();
    if (adaptor.getSizes().empty()) {
      rewriter.replaceOp(op, pb.broadcast(adaptor.getInput(), type.getShape()));
      return success();
    }
    // right-aligned, as pb.broadcast, with the given sizes
    int64_t rank = tensorType(adaptor.getInput()).getRank();
    SmallVector<int64_t> dims;
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(type.getRank() - rank + i);
    rewriter.replaceOpWithNewOp<prim::BroadcastInDimOp>(op, type, adaptor.getInput(), dims, adaptor.getSizes());
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
  // The registry's patterns of the family (GraphShapeOps.td, pad, detach), generated by dyn-tblgen.
#define GEN_DATAMOVEMENT_PATTERNS
#include "dyn/Dialect/Graph/IR/GraphToPrimPatterns.inc"
}
