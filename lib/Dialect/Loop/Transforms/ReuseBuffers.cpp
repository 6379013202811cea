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

/// The one store into `out` (a kernel directly in `body`, at the kernel's own indices) when every other use
/// of `out` is its dealloc or is in an op of `body` after that kernel; else null.
loop::StoreOp soleIdentityStore(Value out, Block &body) {
  loop::StoreOp store;
  for (Operation *user : out.getUsers())
    if (auto s = dyn_cast<loop::StoreOp>(user); s && s.getMemref() == out) {
      if (store)
        return {};
      store = s;
    }
  if (!store)
    return {};
  auto kernel = dyn_cast<loop::KernelOp>(store->getParentOp());
  if (!kernel || kernel->getBlock() != &body || !llvm::equal(store.getIndices(), kernel.getBodyBlock().getArguments()))
    return {};
  for (Operation *user : out.getUsers()) {
    if (user == store || isa<memref::DeallocOp>(user))
      continue;
    Operation *top = body.findAncestorOpInBlock(*user);
    if (!top || !kernel->isBeforeInBlock(top))
      return {};
  }
  return store;
}

/// Whether `in` is read by kernels and library calls before `kernel` (not through views), and in `kernel`
/// only by loads in its body at its own indices before `store`, and used by nothing after it but its dealloc.
bool lastReadPointwise(Value in, loop::KernelOp kernel, loop::StoreOp store, Block &body) {
  Block &kb = kernel.getBodyBlock();
  bool read = false;
  for (OpOperand &use : in.getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::DeallocOp>(user) && user->getBlock() == &body)
      continue;
    Operation *top = body.findAncestorOpInBlock(*user);
    if (!top)
      return false;
    if (top != kernel) {
      if (!top->isBeforeInBlock(kernel) || !isa<loop::KernelOp, loop::LibraryCallOpInterface>(top))
        return false;
      continue;
    }
    auto load = dyn_cast<loop::LoadOp>(user);
    if (!load || load->getBlock() != &kb || !llvm::equal(load.getIndices(), kb.getArguments()) ||
        !load->isBeforeInBlock(store))
      return false;
    read = true;
  }
  return read;
}

struct ReuseBuffersPass : dyn::impl::ReuseBuffersPassBase<ReuseBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    Block &body = func.getBody().front();
    SmallVector<memref::AllocOp> allocs(body.getOps<memref::AllocOp>());
    for (memref::AllocOp out : allocs) {
      loop::StoreOp store = soleIdentityStore(out.getResult(), body);
      if (!store)
        continue;
      auto kernel = cast<loop::KernelOp>(store->getParentOp());
      // the first dying temporary of the same type the kernel reads point by point
      memref::AllocOp reused;
      kernel.getBodyBlock().walk([&](loop::LoadOp load) {
        memref::AllocOp in = temporary(load.getMemref(), body);
        if (!reused && in && in != out && in.getType() == out.getType() &&
            in->getAttrDictionary() == out->getAttrDictionary() &&
            lastReadPointwise(in.getResult(), kernel, store, body))
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
};

} // namespace
