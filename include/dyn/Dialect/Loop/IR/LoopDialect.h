//===- LoopDialect.h - the loop dialect and its ops ---------------*- C++ -*-===//
#ifndef DYN_DIALECT_LOOP_IR_LOOPDIALECT_H
#define DYN_DIALECT_LOOP_IR_LOOPDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "dyn/Dialect/Loop/IR/LoopDialect.h.inc"
#include "dyn/Dialect/Loop/IR/LoopEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dyn/Dialect/Loop/IR/LoopAttrs.h.inc"

#include "dyn/Dialect/Loop/IR/LoopInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dyn/Dialect/Loop/IR/LoopOps.h.inc"

namespace mlir {
class OpBuilder;
} // namespace mlir

namespace dyn::loop {
/// The value a reduction of `kind` starts from (0, 1, -inf, +inf, or the
/// integer extremes).
mlir::TypedAttr reduceIdentity(mlir::OpBuilder &b, ReduceKind kind, mlir::Type type);
/// acc `kind` v. Float sums and products carry `reassoc` so that they may be
/// reordered (vectorized on the CPU, tree-combined on the GPU); max and min
/// propagate NaN like PyTorch.
mlir::Value reduceCombine(mlir::OpBuilder &b, mlir::Location loc, ReduceKind kind,
                          mlir::Value acc, mlir::Value v);
/// Which GEMM the CPU lowering calls for `op`: dyn's own runtime matmul (f32
/// and f64 without an addend), the registered `matmul` library call, or, for
/// a product whose row count is `?`, the runtime matmul where the rows are few
/// at run time and the library call otherwise.
enum class MatmulChoice { Library, Runtime, ByRows };
MatmulChoice matmulChoice(MatmulOp op);
/// The rows up to which a transposed-B product calls the runtime matmul.
constexpr int64_t kRuntimeMatmulRows = 64;
/// matmulChoice(op) == Runtime: no library call is needed.
bool hasRuntimeMatmul(MatmulOp op);
/// The one store into buffer `out`: in a kernel directly in `body`, at the kernel's own indices, when
/// every other use of `out` but its dealloc is in an op of `body` after that kernel and no library call
/// writes it; else null. (A kernel writing `out` point by point, once.)
StoreOp soleIdentityStore(mlir::Value out, mlir::Block &body);
/// Whether buffer `in` is used before `kernel` only by kernels and library calls of `body` (not through
/// views), in `kernel` only by loads at its own indices before `store`, and after it only by its dealloc:
/// each point reads its element of `in` before `store` writes that point, so `store` may write into `in`.
bool readOnlyAtPointBefore(mlir::Value in, KernelOp kernel, StoreOp store, mlir::Block &body);
/// The same, with `atPoint` deciding whether a load in `kernel` reads the element `store` writes (a
/// buffer of another shape read at the same row-major offset).
bool readOnlyAtPointBefore(mlir::Value in, KernelOp kernel, StoreOp store, mlir::Block &body,
                           llvm::function_ref<bool(LoadOp)> atPoint);
/// The DynDType (dyn/Runtime/LibraryCall.h) of a library-call buffer element.
int32_t libraryCallDType(mlir::Type elementType);
/// The DynDType of each of a library call's buffers, inputs then outputs
/// (DYN_U8 for those its `unsigned_buffers` lists).
llvm::SmallVector<int32_t> libraryCallDTypes(LibraryCallOpInterface op);
} // namespace dyn::loop

#endif // DYN_DIALECT_LOOP_IR_LOOPDIALECT_H
