//===- ZeroCotangents.cpp - dyn-graph-zero-cotangents ---------------------===//
//
// A backward function specialized for outputs autograd gives no cotangent:
// each such cotangent becomes a splat of -0.0 (x + -0.0 == x for every x, so
// dropping the addition is exact), views of it become splats of their type,
// and additions of it become their other operand. The arguments leave the
// signature, so the runtime neither makes nor passes them.
//
//===----------------------------------------------------------------------===//
#include "dyn/Dialect/Graph/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"

namespace dyn::graph {
#define GEN_PASS_DEF_GRAPHZEROCOTANGENTSPASS
#include "dyn/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace dyn::graph

using namespace mlir;
using namespace dyn::graph;

namespace {

Value negativeZero(OpBuilder &b, Location loc, RankedTensorType type) {
  auto et = cast<FloatType>(type.getElementType());
  llvm::APFloat z = llvm::APFloat::getZero(et.getFloatSemantics(), /*Negative=*/true);
  return ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, b.getFloatAttr(et, z))).getResult();
}

/// Folds the uses of `zero` (a -0.0 splat): views become splats of their type, an addition its
/// other operand; other users keep reading the splat (the lowering fuses it as a scalar).
void foldUses(OpBuilder &b, Value zero) {
  SmallVector<Value> work{zero};
  while (!work.empty()) {
    Value z = work.pop_back_val();
    llvm::SetVector<Operation *> users(z.getUsers().begin(), z.getUsers().end());
    bool again = false; // an addition of z to itself is z: its users are z's now
    for (Operation *user : users) {
      Value result = user->getNumResults() == 1 ? user->getResult(0) : Value();
      auto type = result ? dyn_cast<RankedTensorType>(result.getType()) : RankedTensorType();
      if (isa<ReshapeOp, PermuteOp, ExpandOp, SliceOp>(user) && type && type.hasStaticShape() &&
          user->getOperand(0) == z) {
        b.setInsertionPoint(user);
        Value splat = negativeZero(b, user->getLoc(), type);
        result.replaceAllUsesWith(splat);
        user->erase();
        work.push_back(splat);
      } else if (auto add = dyn_cast<AddOp>(user)) {
        Value other = add.getLhs() == z ? add.getRhs() : add.getLhs();
        if (other.getType() != add.getType())
          continue; // a broadcasting addition keeps the splat operand
        again |= other == z;
        add.getResult().replaceAllUsesWith(other);
        add->erase();
      }
    }
    if (again) {
      work.push_back(z);
      continue;
    }
    if (Operation *def = z.getDefiningOp(); def && def->use_empty())
      def->erase();
  }
}

struct GraphZeroCotangentsPass : dyn::graph::impl::GraphZeroCotangentsPassBase<GraphZeroCotangentsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (outputs.empty() || f.isExternal())
      return;
    auto saved = f->getAttrOfType<DenseI64ArrayAttr>("dyn.saved");
    auto differentiable = f->getAttrOfType<DenseI64ArrayAttr>("dyn.differentiable");
    if (!saved || !differentiable) {
      f.emitError("dyn-graph-zero-cotangents: not a backward function (no dyn.saved and dyn.differentiable)");
      return signalPassFailure();
    }
    unsigned numSaved = saved.size();
    if (f.getNumArguments() != numSaved + differentiable.size()) {
      f.emitError("dyn-graph-zero-cotangents: expected ") << numSaved + differentiable.size()
                                                           << " arguments (saved values, then cotangents)";
      return signalPassFailure();
    }
    llvm::BitVector erase(f.getNumArguments());
    SmallVector<int64_t> kept, zeroed, sized;
    for (auto [j, k] : llvm::enumerate(differentiable.asArrayRef())) {
      if (!llvm::is_contained(outputs, k)) {
        kept.push_back(k);
        continue;
      }
      BlockArgument arg = f.getArgument(numSaved + j);
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !isa<FloatType>(type.getElementType())) {
        f.emitError("dyn-graph-zero-cotangents: the cotangent of output ") << k << " is not a float tensor";
        return signalPassFailure();
      }
      OpBuilder b(f.getContext());
      b.setInsertionPointToStart(&f.getBody().front());
      Value zero;
      if (type.hasStaticShape()) {
        zero = negativeZero(b, f.getLoc(), type);
      } else {
        // `?` dims: the splat takes its sizes from the argument, which stays for them alone (the caller
        // passes a tensor of the output's shape whose values nothing reads)
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            sizes.push_back(DimOp::create(b, f.getLoc(), b.getIndexType(), arg, static_cast<uint64_t>(d)));
        Value scalar = negativeZero(b, f.getLoc(), RankedTensorType::get({}, type.getElementType()));
        zero = ExpandOp::create(b, f.getLoc(), type, scalar, sizes);
      }
      arg.replaceUsesWithIf(zero, [](OpOperand &use) { return !isa<DimOp>(use.getOwner()); });
      foldUses(b, zero);
      if (type.hasStaticShape()) {
        erase.set(numSaved + j);
        zeroed.push_back(k);
      } else {
        kept.push_back(k);
        sized.push_back(k);
      }
    }
    for (int64_t k : outputs)
      if (!llvm::is_contained(zeroed, k) && !llvm::is_contained(sized, k)) {
        f.emitError("dyn-graph-zero-cotangents: output ") << k << " has no cotangent argument";
        return signalPassFailure();
      }
    if (failed(f.eraseArguments(erase)))
      return signalPassFailure();
    OpBuilder b(f.getContext());
    f->setAttr("dyn.differentiable", b.getDenseI64ArrayAttr(kept));
    f->setAttr("dyn.zero_cotangents", b.getDenseI64ArrayAttr(zeroed));
    if (!sized.empty())
      f->setAttr("dyn.sized_cotangents", b.getDenseI64ArrayAttr(sized));
  }
};

} // namespace
