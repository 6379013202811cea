//===- InitAll.h - the one registration point ------------------*- C++ -*-===//
//
// dyn-opt, the compiler library and the Python extension all register dyn's
// dialects, passes and pipelines (and the upstream ones they use) here.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_INITALL_H
#define DYN_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dyn {
/// dyn's dialects and every upstream dialect its pipelines produce.
void registerAllDialects(mlir::DialectRegistry &registry);
/// dyn's passes, named pipelines, and the upstream passes they use (once per
/// process; later calls do nothing).
void registerAllPasses();
} // namespace dyn

#endif // DYN_INITALL_H
