/*===- Dialects.h - dyn's dialects for C users -------------------*- C -*-===*\
|*                                                                            *|
|* The C API in MLIR's style: handles for dyn's dialects, and one call that   *|
|* registers them with every upstream dialect dyn's pipelines produce         *|
|* (dyn::registerAllDialects, the one registration point).                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef DYN_C_DIALECTS_H
#define DYN_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Graph, graph);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Prim, prim);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Loop, loop);

/// Inserts dyn's dialects, the upstream dialects its pipelines produce and
/// their interfaces (LLVM IR translation included) into `registry`.
MLIR_CAPI_EXPORTED void dynRegisterAllDialects(MlirDialectRegistry registry);

#ifdef __cplusplus
}
#endif

#endif /* DYN_C_DIALECTS_H */
