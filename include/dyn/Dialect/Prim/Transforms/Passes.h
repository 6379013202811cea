//===- Passes.h - prim dialect transforms -------------------------*- C++ -*-===//
#ifndef DYN_DIALECT_PRIM_TRANSFORMS_PASSES_H
#define DYN_DIALECT_PRIM_TRANSFORMS_PASSES_H

#include "dyn/Dialect/Prim/IR/PrimDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace dyn {

#define GEN_PASS_DECL
#include "dyn/Dialect/Prim/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dyn/Dialect/Prim/Transforms/Passes.h.inc"

} // namespace dyn

#endif // DYN_DIALECT_PRIM_TRANSFORMS_PASSES_H
