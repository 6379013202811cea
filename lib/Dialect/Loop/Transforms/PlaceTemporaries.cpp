//===- PlaceTemporaries.cpp - temporaries held only while used -----------===//
//
// dyn-place-temporaries: each temporary of a function's body is allocated just
// before the first op that uses it (through any view) and freed just after the
// last, instead of at the function's entry and return: the CPU's host
// allocator then reuses a freed buffer for the next temporary of its size, so
// a call holds the temporaries live at once, not all of them.
//
//===----------------------------------------------------------------------===//
#include "dyn/Dialect/Loop/Transforms/Passes.h"

namespace dyn {
#define GEN_PASS_DEF_PLACETEMPORARIESPASS
#include "dyn/Dialect/Loop/Transforms/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;

namespace {

/// The first and last op of `body` that use `alloc` or a value derived from it (an op's memref result
/// counts as a view of its memref operands), and its one dealloc in `body`; false where the temporary
/// escapes `body`'s ops or is freed otherwise.
bool lifetime(memref::AllocOp alloc, Block &body, Operation *&first, Operation *&last,
              memref::DeallocOp &dealloc) {
  first = last = nullptr;
  dealloc = nullptr;
  SmallVector<Value> values{alloc.getResult()};
  DenseSet<Value> seen{alloc.getResult()};
  while (!values.empty()) {
    Value v = values.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto d = dyn_cast<memref::DeallocOp>(user)) {
        if (v != alloc.getResult() || dealloc || d->getBlock() != &body)
          return false; // freed through a view, twice, or inside a region
        dealloc = d;
        continue;
      }
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        return false;
      if (!first || top->isBeforeInBlock(first))
        first = top;
      if (!last || last->isBeforeInBlock(top))
        last = top;
      for (Value r : user->getResults())
        if (isa<BaseMemRefType>(r.getType()) && seen.insert(r).second)
          values.push_back(r);
    }
  }
  return first && dealloc && last->isBeforeInBlock(dealloc);
}

struct PlaceTemporariesPass : dyn::impl::PlaceTemporariesPassBase<PlaceTemporariesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    Block &body = func.getBody().front();
    SmallVector<memref::AllocOp> allocs(body.getOps<memref::AllocOp>());
    for (memref::AllocOp alloc : allocs) {
      Operation *first, *last;
      memref::DeallocOp dealloc;
      if (!lifetime(alloc, body, first, last, dealloc))
        continue;
      alloc->moveBefore(first); // its size operands are defined before its old place
      dealloc->moveAfter(last);
    }
  }
};

} // namespace
