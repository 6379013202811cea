//===- SymbolicDims.h - where a `?` dim's runtime size comes from -*- C++ -*-===//
//
// Private to lib/Dialect/Graph/Transforms. The derivative builders give the
// reshapes, expands and splats of a backward with `?` dims their `sizes`
// operands, and dyn-graph-partition tells the runtime how to size the
// forward's results, from one walk: a `?` dim of a value is followed back
// through ops that keep it (elementwise and broadcasting ops, views,
// reductions of other dims, GEMMs, norms, attention) to a function argument,
// or to a `sizes` operand of the reshape or expand that made it.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_LIB_DIALECT_GRAPH_TRANSFORMS_SYMBOLICDIMS_H
#define DYN_LIB_DIALECT_GRAPH_TRANSFORMS_SYMBOLICDIMS_H

#include "mlir/IR/Builders.h"

#include <optional>
#include <string>

namespace dyn::graph {

/// Where the runtime size of dim `dim` of a value can be read: an `index` value already in the function
/// (a reshape's or expand's `sizes` operand), or dim `dim` of `tensor`, the earliest value along the
/// definitions whose dim is known to be equal (a function argument where the walk reaches one).
struct DimSource {
  mlir::Value index;
  mlir::Value tensor;
  int64_t dim = 0;
};

DimSource traceDim(mlir::Value v, int64_t dim);

/// An `index` value holding the runtime size of dim `dim` of v: the traced source, read with a
/// graph.dim placed right after the tensor's definition (reused where one is there already).
mlir::Value materializeDim(mlir::OpBuilder &b, mlir::Value v, int64_t dim);

/// The size of dim `dim` of v as a Python expression over `s[k][i]`, dim i of the enclosing function's
/// argument k (a static dim: its number); nullopt where it depends on a value that is no argument.
std::optional<std::string> dimExpression(mlir::Value v, int64_t dim);

} // namespace dyn::graph

#endif // DYN_LIB_DIALECT_GRAPH_TRANSFORMS_SYMBOLICDIMS_H
