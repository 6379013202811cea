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
    loop::StoreOp store = loop::soleIdentityStore(out, body);
    if (!store || !loop::readOnlyAtPointBefore(in, cast<loop::KernelOp>(store->getParentOp()), store, body))
      continue;
    inPlace[k] = j;
    any = true;
  }
  if (any)
    fn->setAttr("dyn.in_place", DenseI64ArrayAttr::get(fn.getContext(), inPlace));
}

} // namespace dyn
