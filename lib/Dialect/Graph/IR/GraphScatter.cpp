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
