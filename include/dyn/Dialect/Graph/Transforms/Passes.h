//===- Passes.h - graph dialect transforms ------------------------*- C++ -*-===//
#ifndef DYN_DIALECT_GRAPH_TRANSFORMS_PASSES_H
#define DYN_DIALECT_GRAPH_TRANSFORMS_PASSES_H

#include "dyn/Dialect/Graph/IR/GraphDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace dyn::graph {

#define GEN_PASS_DECL
#include "dyn/Dialect/Graph/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dyn/Dialect/Graph/Transforms/Passes.h.inc"

} // namespace dyn::graph

#endif // DYN_DIALECT_GRAPH_TRANSFORMS_PASSES_H
