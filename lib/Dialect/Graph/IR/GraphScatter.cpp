//===- GraphScatter.cpp - verifiers of the scatter family -----------------===//
//
// The shapes eager's scatter checks (one rank; index dims at most src's, and
// at most input's except along dim), so that the lowering (Scatter.cpp)
// handles everything it accepts.
//
//===----------------------------------------------------------------------===//
#include "dyn/Dialect/Graph/IR/GraphDialect.h"

using namespace mlir;
using namespace dyn::graph;

LogicalResult ScatterOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto index = cast<RankedTensorType>(getIndex().getType());
  auto src = cast<RankedTensorType>(getSrc().getType());
  int64_t rank = in.getRank(), dim = getDim();
  if (rank == 0)
    return emitOpError("needs at least one dim (capture views a 0-d tensor as 1-element)");
  if (index.getRank() != rank || src.getRank() != rank)
    return emitOpError("input, index and src must have one rank");
  if (dim < 0 || dim >= rank)
    return emitOpError() << "dim " << dim << " is out of range for rank " << rank;
  for (int64_t e = 0; e < rank; ++e) {
    if (index.getDimSize(e) > src.getDimSize(e))
      return emitOpError() << "index dim " << e << " is larger than src's";
    if (e != dim && index.getDimSize(e) > in.getDimSize(e))
      return emitOpError() << "index dim " << e << " is larger than input's";
  }
  if (getReduce() != ScatterReduce::none && in.getElementType().isInteger(1))
    return emitOpError("a combining scatter needs a numeric input");
  if (getIncludeSelf() && getReduce() == ScatterReduce::none)
    return emitOpError("include_self is for combining scatters only");
  return success();
}

/// The view lies inside the input (eager's as_strided check) and src is its shape.
LogicalResult AsStridedScatterOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto src = cast<RankedTensorType>(getSrc().getType());
  ArrayRef<int64_t> size = getSize(), stride = getStride();
  if (size.size() != stride.size())
    return emitOpError("size and stride must have one length");
  if (src.getShape() != size)
    return emitOpError("src must have the view's size");
  int64_t offset = getStorageOffset(), last = offset;
  if (offset < 0)
    return emitOpError("storage_offset must not be negative");
  bool empty = false;
  for (auto [n, s] : llvm::zip(size, stride)) {
    if (n < 0 || s < 0)
      return emitOpError("sizes and strides must not be negative");
    empty |= n == 0;
    last += (n - 1) * s;
  }
  if (!empty && last >= in.getNumElements())
    return emitOpError("the view reaches past the input's elements");
  return success();
}

/// Eager's index_add shapes: a 1-D index naming source's slices along dim; the
/// other dims of source are the input's.
LogicalResult IndexAddOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto index = cast<RankedTensorType>(getIndex().getType());
  auto src = cast<RankedTensorType>(getSource().getType());
  int64_t rank = in.getRank(), dim = getDim();
  if (rank == 0 || index.getRank() != 1 || src.getRank() != rank)
    return emitOpError("input and source must have one rank (at least 1) and index must be 1-D");
  if (dim < 0 || dim >= rank)
    return emitOpError() << "dim " << dim << " is out of range for rank " << rank;
  for (int64_t e = 0; e < rank; ++e)
    if (src.getDimSize(e) != (e == dim ? index.getDimSize(0) : in.getDimSize(e)))
      return emitOpError("source must have the input's shape with index's length along dim");
  return success();
}

/// One shape for input and mask; source 1-D with an element for every position.
LogicalResult MaskedScatterOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto src = cast<RankedTensorType>(getSource().getType());
  if (cast<RankedTensorType>(getMask().getType()).getShape() != in.getShape())
    return emitOpError("mask must have the input's shape");
  if (src.getRank() != 1 || src.getDimSize(0) < in.getNumElements())
    return emitOpError("source must be 1-D with at least as many elements as the input");
  return success();
}

LogicalResult HistcOp::verify() {
  int64_t bins = getBins();
  if (bins <= 0)
    return emitOpError("bins must be positive");
  if (getMin().convertToDouble() > getMax().convertToDouble())
    return emitOpError("min must not exceed max");
  if (getType().getShape() != ArrayRef<int64_t>{bins} ||
      getType().getElementType() != cast<RankedTensorType>(getInput().getType()).getElementType())
    return emitOpError("result must be [bins] of the input's type");
  return success();
}

LogicalResult EmbeddingBagOp::verify() {
  auto w = cast<RankedTensorType>(getWeight().getType());
  auto in = cast<RankedTensorType>(getInput().getType());
  auto offs = cast<RankedTensorType>(getOffsets().getType());
  if (w.getRank() != 2 || in.getRank() != 1 || offs.getRank() != 1)
    return emitOpError("weight must be 2-D, input and offsets 1-D");
  StringRef mode = getMode();
  if (mode != "sum" && mode != "mean" && mode != "max")
    return emitOpError("mode must be sum, mean or max");
  if (Value psw = getPerSampleWeights()) {
    if (cast<RankedTensorType>(psw.getType()) != in.clone(w.getElementType()))
      return emitOpError("per_sample_weights must have the input's shape and weight's type");
    if (mode != "sum")
      return emitOpError("per_sample_weights needs mode sum");
  }
  int64_t pad = getPaddingIdx();
  if (pad < -1 || pad >= w.getDimSize(0))
    return emitOpError("padding_idx must be a row of weight, or -1");
  int64_t bags = offs.getDimSize(0) - (getIncludeLastOffset() ? 1 : 0);
  if (bags < 0 || getType().getShape() != ArrayRef<int64_t>{bags, w.getDimSize(1)})
    return emitOpError("result must be [bags, embedding dim]");
  return success();
}

/// `shape` broadcasts (numpy rules) to `to`.
static bool broadcastsTo(ArrayRef<int64_t> shape, ArrayRef<int64_t> to) {
  if (shape.size() > to.size())
    return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t s = shape[shape.size() - 1 - i], t = to[to.size() - 1 - i];
    if (s != 1 && s != t)
      return false;
  }
  return true;
}

/// The input's shape with the k dims from dim on replaced by the indices' [*B].
static FailureOr<SmallVector<int64_t>> indexedShape(Operation *op, RankedTensorType in, RankedTensorType indices,
                                                    int64_t dim) {
  if (indices.getRank() < 1 || indices.getDimSize(0) < 1)
    return op->emitOpError("indices must be stacked along a leading dim of at least one index");
  int64_t k = indices.getDimSize(0);
  if (dim < 0 || dim + k > in.getRank())
    return op->emitOpError("the indexed dims must lie inside the input");
  SmallVector<int64_t> shape(in.getShape().take_front(dim));
  llvm::append_range(shape, indices.getShape().drop_front());
  shape.append(in.getShape().begin() + dim + k, in.getShape().end());
  return shape;
}

LogicalResult MaskedIndexOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  FailureOr<SmallVector<int64_t>> shape =
      indexedShape(*this, in, cast<RankedTensorType>(getIndices().getType()), getDim());
  if (failed(shape))
    return failure();
  if (getType() != RankedTensorType::get(*shape, in.getElementType()))
    return emitOpError("result must be the indexed shape of the input's type");
  if (!broadcastsTo(cast<RankedTensorType>(getMask().getType()).getShape(), *shape))
    return emitOpError("mask must broadcast to the result");
  return success();
}

LogicalResult MaskedIndexPutOp::verify() {
  FailureOr<SmallVector<int64_t>> shape = indexedShape(
      *this, cast<RankedTensorType>(getInput().getType()), cast<RankedTensorType>(getIndices().getType()), getDim());
  if (failed(shape))
    return failure();
  if (!broadcastsTo(cast<RankedTensorType>(getValues().getType()).getShape(), *shape) ||
      !broadcastsTo(cast<RankedTensorType>(getMask().getType()).getShape(), *shape))
    return emitOpError("values and mask must broadcast to the indexed shape");
  return success();
}
