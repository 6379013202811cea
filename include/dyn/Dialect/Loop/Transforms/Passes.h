//===- Passes.h - loop dialect transforms -------------------------*- C++ -*-===//
#ifndef DYN_DIALECT_LOOP_TRANSFORMS_PASSES_H
#define DYN_DIALECT_LOOP_TRANSFORMS_PASSES_H

#include "dyn/Dialect/Loop/IR/LoopDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace dyn {

#define GEN_PASS_DECL
#include "dyn/Dialect/Loop/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dyn/Dialect/Loop/Transforms/Passes.h.inc"

} // namespace dyn

#endif // DYN_DIALECT_LOOP_TRANSFORMS_PASSES_H
