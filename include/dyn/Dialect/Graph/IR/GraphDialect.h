//===- GraphDialect.h - the graph dialect and its ops ---------------*- C++ -*-===//
#ifndef DYN_DIALECT_GRAPH_IR_GRAPHDIALECT_H
#define DYN_DIALECT_GRAPH_IR_GRAPHDIALECT_H

#include "dyn/Dialect/Common/Traits.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dyn/Dialect/Graph/IR/GraphDialect.h.inc"
#include "dyn/Dialect/Graph/IR/GraphEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dyn/Dialect/Graph/IR/GraphAttrs.h.inc"

#define GET_OP_CLASSES
#include "dyn/Dialect/Graph/IR/GraphOps.h.inc"

namespace dyn::graph {
/// Where each dynamic result dim of a `graph.reshape` without sizes takes its
/// size: an input dim, or -1 for the element count over the other dims.
mlir::FailureOr<llvm::SmallVector<int64_t>> reshapeSizeSources(mlir::RankedTensorType in,
                                                               mlir::RankedTensorType out);
} // namespace dyn::graph

#endif // DYN_DIALECT_GRAPH_IR_GRAPHDIALECT_H
