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

/// Dynamic dims of an op whose operands broadcast (right-aligned) into its
/// first result: a dynamic operand dim is dynamic in the result; a dynamic
/// result dim comes from a dynamic operand dim; and a dynamic dim meets only
/// dynamic dims or 1 (a `?` is never broadcast, and a constant other than 1
/// would fix it). The lowering then sizes every dynamic dim from an operand.
template <typename ConcreteType>
class DynamicDimsStay : public mlir::OpTrait::TraitBase<ConcreteType, DynamicDimsStay> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    if (op->getNumResults() == 0)
      return mlir::success();
    auto result = llvm::dyn_cast<mlir::RankedTensorType>(op->getResult(0).getType());
    if (!result)
      return mlir::success();
    int64_t rank = result.getRank();
    for (int64_t rd = 0; rd < rank; ++rd) {
      bool fromOperand = false, staticOperand = false;
      for (auto [i, type] : llvm::enumerate(op->getOperandTypes())) {
        auto t = llvm::dyn_cast<mlir::RankedTensorType>(type);
        if (!t)
          continue;
        int64_t d = t.getRank() - rank + rd;
        if (d < 0)
          continue;
        if (t.isDynamicDim(d) && !result.isDynamicDim(rd))
          return op->emitOpError() << "operand #" << i << " has a dynamic dim " << d
                                   << " that is not dynamic in the result " << result;
        fromOperand |= t.isDynamicDim(d);
        staticOperand |= !t.isDynamicDim(d) && t.getDimSize(d) != 1;
      }
      if (result.isDynamicDim(rd) && (!fromOperand || staticOperand))
        return op->emitOpError() << "result dim " << rd << " is dynamic, so the operands' dims there must "
                                 << "be dynamic or 1, one of them dynamic";
    }
    return mlir::success();
  }
};

} // namespace dyn::OpTrait

#endif // DYN_DIALECT_COMMON_TRAITS_H
