//===- GatherVerifier.h - shared verifier of graph.gather and prim.gather -===//
//
// Both dialects' gather ops have the same operands (input, index), dim attribute and shape rules; one
// verifier keeps their diagnostics identical.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_DIALECT_COMMON_GATHERVERIFIER_H
#define DYN_DIALECT_COMMON_GATHERVERIFIER_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LogicalResult.h"

namespace dyn {

/// result[i] = input[i with i[dim] = index[i]]: the index has the input's rank and the result's shape,
/// the result the input's element type, and no index dim but `dim` exceeds the input's.
template <typename GatherOp> mlir::LogicalResult verifyGather(GatherOp op) {
  auto in = mlir::cast<mlir::RankedTensorType>(op.getInput().getType());
  auto index = mlir::cast<mlir::RankedTensorType>(op.getIndex().getType());
  mlir::RankedTensorType out = op.getType();
  int64_t dim = op.getDim(), rank = in.getRank();
  if (rank == 0)
    return op.emitOpError("needs an input of rank 1 or more");
  if (dim < 0 || dim >= rank)
    return op.emitOpError() << "dim " << dim << " is out of range for rank " << rank;
  if (index.getRank() != rank)
    return op.emitOpError("index must have the input's rank");
  if (out.getShape() != index.getShape())
    return op.emitOpError("result must have the index's shape");
  if (out.getElementType() != in.getElementType())
    return op.emitOpError("result must have the input's element type");
  // A dynamic index dim beside `dim` needs a dynamic input dim (capture guarantees it is no larger);
  // a static one is checked against a static input dim.
  for (int64_t i = 0; i < rank; ++i) {
    if (i == dim)
      continue;
    if (index.isDynamicDim(i) && !in.isDynamicDim(i))
      return op.emitOpError() << "index dim " << i << " is dynamic but the input's is not";
    if (!index.isDynamicDim(i) && !in.isDynamicDim(i) && index.getDimSize(i) > in.getDimSize(i))
      return op.emitOpError() << "index dim " << i << " is larger than the input's";
  }
  return mlir::success();
}

} // namespace dyn

#endif // DYN_DIALECT_COMMON_GATHERVERIFIER_H
