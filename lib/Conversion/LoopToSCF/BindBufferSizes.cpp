//===- BindBufferSizes.cpp - dynamic buffer dims as index arguments -------===//
//
// dyn-bind-buffer-sizes: the runtime passes one bare data pointer per buffer,
// which only a statically shaped memref has. A buffer argument with dynamic
// dims becomes a memref<0xT> (its pointer) viewed as the original type, its
// dynamic sizes new trailing index arguments.
//
//===----------------------------------------------------------------------===//
#include "dyn/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace dyn {
#define GEN_PASS_DEF_BINDBUFFERSIZESPASS
#include "dyn/Conversion/Passes.h.inc"
} // namespace dyn

using namespace mlir;

namespace {

bool hasDynamicDims(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  return m && !m.hasStaticShape();
}

LogicalResult bind(func::FuncOp func) {
  Block &entry = func.front();
  Location loc = func.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  unsigned numBuffers = entry.getNumArguments();
  // The sizes first (they follow every buffer), then the views.
  SmallVector<int64_t> pairs;
  DenseMap<std::pair<unsigned, int64_t>, Value> sizes;
  for (unsigned i = 0; i < numBuffers; ++i) {
    auto t = dyn_cast<MemRefType>(entry.getArgument(i).getType());
    if (!t || t.hasStaticShape())
      continue;
    if (!t.getLayout().isIdentity())
      return func.emitError("buffer argument ") << i << " has dynamic dims and a non-identity layout";
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (t.isDynamicDim(d)) {
        sizes[{i, d}] = entry.addArgument(b.getIndexType(), loc);
        pairs.append({(int64_t)i, d});
      }
  }
  for (unsigned i = 0; i < numBuffers; ++i) {
    BlockArgument arg = entry.getArgument(i);
    auto t = dyn_cast<MemRefType>(arg.getType());
    if (!t || t.hasStaticShape())
      continue;
    SmallVector<OpFoldResult> dims, strides(t.getRank());
    for (int64_t d = 0; d < t.getRank(); ++d)
      dims.push_back(t.isDynamicDim(d) ? OpFoldResult(sizes[{i, d}]) : b.getIndexAttr(t.getDimSize(d)));
    // row-major strides: constants while the dims after are constants
    OpFoldResult stride = b.getIndexAttr(1);
    for (int64_t d = t.getRank() - 1; d >= 0; --d) {
      strides[d] = stride;
      if (d == 0)
        break;
      auto a = getConstantIntValue(stride), s = getConstantIntValue(dims[d]);
      if (a && s) {
        stride = b.getIndexAttr(*a * *s);
      } else {
        Value sv = getValueOrCreateConstantIndexOp(b, loc, stride);
        Value dv = getValueOrCreateConstantIndexOp(b, loc, dims[d]);
        stride = arith::MulIOp::create(b, loc, sv, dv).getResult();
      }
    }
    arg.setType(MemRefType::get({0}, t.getElementType(), MemRefLayoutAttrInterface(), t.getMemorySpace()));
    auto view = memref::ReinterpretCastOp::create(b, loc, t, arg, b.getIndexAttr(0), dims, strides);
    arg.replaceAllUsesExcept(view, view);
  }
  func.setType(FunctionType::get(func.getContext(), entry.getArgumentTypes(),
                                 func.getFunctionType().getResults()));
  func->setAttr("dyn.buffer_sizes", b.getDenseI64ArrayAttr(pairs));
  return success();
}

struct BindBufferSizesPass : dyn::impl::BindBufferSizesPassBase<BindBufferSizesPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || func.isPrivate() ||
          llvm::none_of(func.getArgumentTypes(), hasDynamicDims))
        continue;
      if (failed(bind(func)))
        return signalPassFailure();
    }
  }
};

} // namespace
