//===- PrimDialect.h - the prim dialect and its ops ---------------*- C++ -*-===//
#ifndef DYN_DIALECT_PRIM_IR_PRIMDIALECT_H
#define DYN_DIALECT_PRIM_IR_PRIMDIALECT_H

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

#include "dyn/Dialect/Prim/IR/PrimDialect.h.inc"
#include "dyn/Dialect/Prim/IR/PrimEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dyn/Dialect/Prim/IR/PrimAttrs.h.inc"

#define GET_OP_CLASSES
#include "dyn/Dialect/Prim/IR/PrimOps.h.inc"

namespace dyn::prim {
/// How dim `dim` of result `result` of a library call with dynamic (`?`) dims is sized at run time: as
/// dim `dim` of operand `operand`, rounded up to a multiple of `multiple`.
struct LibraryResultDim {
  unsigned operand;
  int64_t dim;
  int64_t multiple = 1;
};
/// The sizing of a `?` dim of a library call's result; nothing for callees whose results are static.
/// The backward calls size result k as operand k + 1 (what it is the gradient of); attention with its
/// log-sum-exp sizes its result as the query's rows and the value's columns, and the log-sum-exp
/// [B, H, L] rounded up to a multiple of 32 columns (the memory-efficient kernel's layout).
std::optional<LibraryResultDim> libraryResultDim(llvm::StringRef callee, unsigned result, int64_t dim,
                                                 int64_t resultRank);
/// Whether the callee's results may have `?` dims (libraryResultDim sizes them).
bool takesDynamicShapes(llvm::StringRef callee);
} // namespace dyn::prim

#endif // DYN_DIALECT_PRIM_IR_PRIMDIALECT_H
