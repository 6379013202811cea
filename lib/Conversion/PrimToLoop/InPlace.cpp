//===- InPlace.cpp - outputs written into the inputs they update ----------===//
//
// A graph that updates an input in place (an optimizer's parameters and
// moments, batch norm's running statistics, a KV cache) returns the new value
// as an output, which the runtime copies into the input after the call. Where
// one kernel computes the output from the input point by point and nothing
// after it reads the input, the output's buffer may be the input's: the
// runtime then passes the input as the output and there is no copy (nor a
// fresh buffer to allocate and fault in). Each point of the kernel reads the
// input's element before it writes the same element, so the kernel's own
// iterations never see each other's writes.
//
//===----------------------------------------------------------------------===//
#include "InPlace.h"

#include "dyn/Dialect/Loop/IR/LoopDialect.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace dyn {
namespace {

/// The kernel's one store into `out`, directly in its body at the kernel's own indices, or null.
loop::StoreOp soleIdentityStore(Value out, Block &fnBody) {
  loop::StoreOp store;
  for (Operation *user : out.getUsers()) {
    if (auto s = dyn_cast<loop::StoreOp>(user); s && s.getMemref() == out) {
      if (store)
        return {};
      store = s;
      continue;
    }
    if (auto call = dyn_cast<loop::LibraryCallOpInterface>(user))
      if (llvm::is_contained(call.getLibraryCallOutputs(), out))
        return {};
    // every other use reads the value, after the kernel that writes it
  }
  if (!store)
    return {};
  auto kernel = dyn_cast<loop::KernelOp>(store->getParentOp());
  if (!kernel || kernel->getBlock() != &fnBody)
    return {};
  if (!llvm::equal(store.getIndices(), kernel.getBodyBlock().getArguments()))
    return {};
  return store;
}

/// Whether every use of `in` is before `kernel`, or a load in its body at the point it stores
/// (`store`), before the store.
bool onlyReadBefore(Value in, loop::KernelOp kernel, loop::StoreOp store, Block &fnBody) {
  Block &kb = kernel.getBodyBlock();
  for (OpOperand &use : in.getUses()) {
    Operation *user = use.getOwner();
    Operation *top = fnBody.findAncestorOpInBlock(*user);
    if (!top)
      return false;
    if (top != kernel) {
      // before the kernel: a kernel or a library call reading it (a view could be read later)
      if (!top->isBeforeInBlock(kernel) || !isa<loop::KernelOp, loop::LibraryCallOpInterface>(top))
        return false;
      continue;
    }
    auto load = dyn_cast<loop::LoadOp>(user);
    if (!load || load->getBlock() != &kb || !llvm::equal(load.getIndices(), kb.getArguments()) ||
        !load->isBeforeInBlock(store))
      return false;
  }
  return true;
}

} // namespace

void markInPlaceUpdates(func::FuncOp fn, unsigned numInputs, ArrayRef<int64_t> requested) {
  Block &body = fn.getBody().front();
  SmallVector<int64_t> inPlace(requested.size(), -1);
  bool any = false;
  for (auto [k, j] : llvm::enumerate(requested)) {
    if (j < 0 || j >= static_cast<int64_t>(numInputs) || llvm::is_contained(inPlace, j))
      continue;
    Value in = body.getArgument(j), out = body.getArgument(numInputs + k);
    if (in.getType() != out.getType())
      continue;
    loop::StoreOp store = soleIdentityStore(out, body);
    if (!store || !onlyReadBefore(in, cast<loop::KernelOp>(store->getParentOp()), store, body))
      continue;
    inPlace[k] = j;
    any = true;
  }
  if (any)
    fn->setAttr("dyn.in_place", DenseI64ArrayAttr::get(fn.getContext(), inPlace));
}

} // namespace dyn
