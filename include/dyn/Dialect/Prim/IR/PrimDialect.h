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
/// Library calls that take dynamic (`?`) dims: backward calls whose result k is the gradient of operand
/// k + 1, with its sizes.
bool isSizedLikeOperands(llvm::StringRef callee);
} // namespace dyn::prim

#endif // DYN_DIALECT_PRIM_IR_PRIMDIALECT_H
