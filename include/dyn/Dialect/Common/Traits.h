//===- Traits.h - op traits shared by dyn's dialects ----------------*- C++ -*-===//
#ifndef DYN_DIALECT_COMMON_TRAITS_H
#define DYN_DIALECT_COMMON_TRAITS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

namespace dyn::OpTrait {

/// Every tensor operand and result has a static shape: the lowerings size
/// buffers, kernel domains and launches from the types.
template <typename ConcreteType>
class StaticShapes : public mlir::OpTrait::TraitBase<ConcreteType, StaticShapes> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    auto check = [&](mlir::Type type, llvm::StringRef what, unsigned i) -> mlir::LogicalResult {
      auto tensor = llvm::dyn_cast<mlir::TensorType>(type);
      if (!tensor || tensor.hasStaticShape())
        return mlir::success();
      return op->emitOpError() << "needs static shapes, but " << what << " #" << i << " has type "
                               << type;
    };
    for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
      if (mlir::failed(check(t, "operand", i)))
        return mlir::failure();
    for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
      if (mlir::failed(check(t, "result", i)))
        return mlir::failure();
    return mlir::success();
  }
};

} // namespace dyn::OpTrait

#endif // DYN_DIALECT_COMMON_TRAITS_H
