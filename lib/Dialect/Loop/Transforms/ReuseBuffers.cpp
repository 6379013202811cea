//===- ReuseBuffers.cpp - a kernel's result written over a dying input ---===//
//
// dyn-reuse-buffers: a kernel that computes a temporary point by point from
// another temporary it reads for the last time writes into that temporary's
// buffer (the convolution result a batch norm and ReLU consume), so the two
// are never held at once. The same condition as the updates of inputs that
// PrimToLoop/InPlace.cpp writes in place: each point reads its element before
// it writes the same element.
//
//===----------------------------------------------------------------------===//
#include "dyn/Dialect/Loop/Transforms/Passes.h"

namespace dyn {
#define GEN_PASS_DEF_REUSEBUFFERSPASS
#include "dyn/Dialect/Loop/Transforms/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;

namespace {

/// A temporary of `body`: allocated there, with static sizes and the identity layout.
memref::AllocOp temporary(Value v, Block &body) {
  auto alloc = v.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != &body || !alloc.getType().hasStaticShape() ||
      !alloc.getType().getLayout().isIdentity())
    return {};
  return alloc;
}

/// The function's output buffer (an argument past `dyn.num_inputs` that no `dyn.in_place` entry makes an
/// input's, or a row-major view of one) that `kernel`'s one store writes at its own indices when nothing
/// else uses that output before the kernel; else null.
Value freshOutput(Value target, loop::KernelOp kernel, func::FuncOp func, Block &body) {
  auto view = target.getDefiningOp<memref::ReinterpretCastOp>();
  Value root = view ? view.getSource() : target;
  auto arg = dyn_cast<BlockArgument>(root);
  auto numInputs = func->getAttrOfType<IntegerAttr>("dyn.num_inputs");
  if (!arg || arg.getOwner() != &body || !numInputs || arg.getArgNumber() < numInputs.getInt())
    return {};
  if (auto inPlace = func->getAttrOfType<DenseI64ArrayAttr>("dyn.in_place")) {
    int64_t k = arg.getArgNumber() - numInputs.getInt();
    if (k < (int64_t)inPlace.size() && inPlace[k] >= 0)
      return {}; // its buffer may be an input's at run time
  }
  auto type = dyn_cast<MemRefType>(target.getType());
  if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
      (view && !llvm::hasSingleElement(root.getUses())))
    return {};
  loop::StoreOp store = loop::soleIdentityStore(target, body);
  return store && store->getParentOp() == kernel ? target : Value();
}

struct ReuseBuffersPass : dyn::impl::ReuseBuffersPassBase<ReuseBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    Block &body = func.getBody().front();
    writeTemporariesIntoOutputs(func, body);
    SmallVector<memref::AllocOp> allocs(body.getOps<memref::AllocOp>());
    for (memref::AllocOp out : allocs) {
      loop::StoreOp store = loop::soleIdentityStore(out.getResult(), body);
      if (!store)
        continue;
      auto kernel = cast<loop::KernelOp>(store->getParentOp());
      // the first dying temporary of the same type the kernel reads point by point
      memref::AllocOp reused;
      kernel.getBodyBlock().walk([&](loop::LoadOp load) {
        memref::AllocOp in = temporary(load.getMemref(), body);
        if (!reused && in && in != out && in.getType() == out.getType() &&
            in->getAttrDictionary() == out->getAttrDictionary() &&
            loop::readOnlyAtPointBefore(in.getResult(), kernel, store, body))
          reused = in;
      });
      if (!reused)
        continue;
      for (Operation *user : llvm::make_early_inc_range(out->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      out.getResult().replaceAllUsesWith(reused.getResult());
      out->erase();
    }
  }

  /// A kernel that writes an output point by point from a temporary it reads for the last time (a bias
  /// added to a GEMM's product): the temporary's writers write the output instead (the GEMM writes the
  /// logits, the kernel adds the bias in place), and the temporary goes.
  void writeTemporariesIntoOutputs(func::FuncOp func, Block &body) {
    SmallVector<loop::KernelOp> kernels(body.getOps<loop::KernelOp>());
    for (loop::KernelOp kernel : kernels) {
      SmallVector<loop::StoreOp> stores;
      kernel.getBodyBlock().walk([&](loop::StoreOp s) { stores.push_back(s); });
      for (loop::StoreOp store : stores) {
        Value target = freshOutput(store.getMemref(), kernel, func, body);
        if (!target)
          continue;
        memref::AllocOp reused;
        kernel.getBodyBlock().walk([&](loop::LoadOp load) {
          memref::AllocOp in = temporary(load.getMemref(), body);
          if (!reused && in && in.getType() == target.getType() &&
              loop::readOnlyAtPointBefore(in.getResult(), kernel, store, body))
            reused = in;
        });
        if (!reused)
          continue;
        if (Operation *view = target.getDefiningOp(); view && !view->isBeforeInBlock(reused))
          view->moveBefore(reused); // (its operand is the function's argument)
        for (Operation *user : llvm::make_early_inc_range(reused->getUsers()))
          if (isa<memref::DeallocOp>(user))
            user->erase();
        reused.getResult().replaceAllUsesWith(target);
        reused->erase();
      }
    }
  }
};

} // namespace
