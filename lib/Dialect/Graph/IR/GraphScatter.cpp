//===- GraphScatter.cpp - verifier of graph.scatter ---------------------===//
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
