//===- Dynamic.cpp - loop kernels with `?` dims onto GPU launches ---------===//
//
// Kernels whose domains have `?` sizes: the geometry is computed in the host
// function from the runtime sizes (the launch plan evaluates it at each
// call), long `?` reductions split across blocks; and the preparation of
// launches with dynamically shaped buffers for outlining.
//
//===----------------------------------------------------------------------===//
#include "Mapping.h"

#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace dyn;

namespace dyn::loop_to_gpu {


namespace {
/// A kernel with `?` dims whose top-level reductions (one, or siblings folded
/// in one sweep) may be long (a `?` domain, or a constant one of at least
/// `minStatic` elements): split across blocks (splitDynamic, splitDynamicRows).
/// Their sizes must be host values.
SmallVector<loop::ReduceOp> dynamicSplittable(loop::KernelOp kernel, int64_t minStatic) {
  SmallVector<loop::ReduceOp> found = siblingReduces(kernel);
  if (found.empty())
    return {};
  for (loop::ReduceOp reduce : found) {
    bool nested = false;
    reduce.getRegion().walk([&](Operation *op) { nested |= isa<loop::ForOp, loop::ReduceOp>(op); });
    if (nested)
      return {};
    for (Value v : reduce->getOperands())
      if (kernel.getBodyRegion().isAncestor(v.getParentRegion()))
        return {};
  }
  bool dynamicLength = llvm::any_of(found[0].getDomain(), ShapedType::isDynamic);
  if (!dynamicLength && product(found[0].getDomain()) < minStatic)
    return {};
  return found;
}
} // namespace

/// A long reduction of a kernel with `?` dims, split as the static column
/// sums are (splitColumns), with sizes computed at run time by the static
/// rule: chunks of kMinChunk rows, shorter ones (down to kMinColumnChunk)
/// where a quarter of the GPU's threads would not have work otherwise (a
/// bias gradient over 156 tokens: 19 chunks of 8 rather than 4 of 39), at
/// most a chunk per resident thread; a thread per (chunk, group of `width`
/// points) sweeping its rows with kUnroll accumulators, then a block of 64
/// threads per point folding its partials and combining them as a tree.
/// Without it a thread per point summed the whole `?` length serially (a
/// column sum over 100,000 rows: slow, and ~5e-4 relative error in f32).
LogicalResult KernelMapper::splitDynamic(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces) {
  Location loc = kernel.getLoc();
  b.setInsertionPoint(kernel);
  SmallVector<OpFoldResult> domain = kernel.getMixedDomain();
  Value points = productValue(b, loc, domain);
  IRMapping none;
  Value length = productValue(b, loc, innerSizes(reduces[0], none));
  int64_t width = columnWidth(kernel, reduces);
  Value groups = width == 1 ? points : arith::DivUIOp::create(b, loc, points, cIndex(b, loc, width)).getResult();
  auto ceilDiv = [&](int64_t n, Value d) { return arith::CeilDivUIOp::create(b, loc, cIndex(b, loc, n), d); };
  Value quarter = arith::MinUIOp::create(b, loc, ceilDiv(fillThreads / 4, groups),
                                         arith::DivUIOp::create(b, loc, length, cIndex(b, loc, kMinColumnChunk)));
  Value chunks = arith::MaxUIOp::create(b, loc, quarter,
                                        arith::DivUIOp::create(b, loc, length, cIndex(b, loc, kMinChunk)));
  chunks = arith::MinUIOp::create(b, loc, chunks, ceilDiv(fillThreads, groups));
  chunks = arith::MaxUIOp::create(b, loc, chunks, cIndex(b, loc, 1));
  Value chunkLength = arith::CeilDivUIOp::create(b, loc, length, chunks);
  return splitColumns(kernel, reduces, domain, points, length, chunks, chunkLength, width,
                      /*combineThreads=*/64);
}

/// A short column reduction over few points: a block of kColumnBlockThreads per point, its threads
/// taking rows in turn (one or two loads each) and combining across the block, as the static lowering
/// takes a block per strided row. Neighbouring points' blocks read the rest of each row's sectors from
/// L2. A thread per point would wait on each row's load in turn with most of the GPU idle (a layer
/// norm's weight gradient over 96 tokens: 192 threads of 4 columns).
LogicalResult KernelMapper::columnsByBlock(loop::KernelOp kernel) {
  Location loc = kernel.getLoc();
  b.setInsertionPoint(kernel);
  SmallVector<OpFoldResult> domain = kernel.getMixedDomain();
  Value one = cIndex(b, loc, 1);
  auto launch = gpu::LaunchOp::create(b, loc, productValue(b, loc, domain), one, one,
                                      cIndex(b, loc, kColumnBlockThreads), one, one);
  launch->setAttr("dyn.kernel", kernel.getNameAttr());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  rowBody(kernel, launch, domain, kColumnBlockThreads, /*allowResident=*/false);
  gpu::TerminatorOp::create(b, loc);
  kernel.erase();
  return success();
}

/// A long-or-short reduction of a kernel with `?` dims: three forms, each
/// launch's grid zero where another form runs (the launch plan skips
/// launches without points). The split (splitDynamic: two launches) runs
/// where the static lowering would split: length >= 4 x kMinChunk and fewer
/// points than the GPU's threads (splittableReduces); a shorter reduction
/// over few points takes a block per point (columnsByBlock: a bias gradient
/// over a short batch of tokens); one over many points a thread per group of
/// points (sweepColumns).
LogicalResult KernelMapper::splitOrSerialDynamic(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces) {
  Location loc = kernel.getLoc();
  b.setInsertionPoint(kernel);
  IRMapping none;
  Value length = productValue(b, loc, innerSizes(reduces[0], none));
  Value points = productValue(b, loc, kernel.getMixedDomain());
  // (selects and comparisons only: what the launch plan evaluates; folded where sizes are constant)
  auto bit = [&](bool v) { return Value(arith::ConstantIntOp::create(b, loc, v, 1)); };
  auto cmp = [&](arith::CmpIPredicate p, Value x, int64_t c) {
    return b.createOrFold<arith::CmpIOp>(loc, p, x, cIndex(b, loc, c));
  };
  auto both = [&](Value x, Value y) {
    if (auto k = getConstantIntValue(x))
      return *k ? y : x;
    if (auto k = getConstantIntValue(y))
      return *k ? x : y;
    return Value(arith::SelectOp::create(b, loc, x, y, bit(false)));
  };
  auto negate = [&](Value x) {
    if (auto k = getConstantIntValue(x))
      return bit(!*k);
    return Value(arith::SelectOp::create(b, loc, x, bit(false), bit(true)));
  };
  Value split = both(cmp(arith::CmpIPredicate::uge, length, 4 * kMinChunk),
                     cmp(arith::CmpIPredicate::ult, points, fillThreads));
  Value few = cmp(arith::CmpIPredicate::ult, points, fillThreads / 4);
  Value byBlock = both(negate(split), few), sweep = both(negate(split), negate(few));
  auto is = [](Value c, bool v) { std::optional<int64_t> k = getConstantIntValue(c); return k && bool(*k) == v; };
  if (is(split, true))
    return splitDynamic(kernel, reduces);
  if (is(split, false) && is(byBlock, true))
    return columnsByBlock(kernel);
  if (is(split, false) && is(byBlock, false))
    return mapDynamic(kernel, /*allowSplit=*/false);
  Block *block = kernel->getBlock();
  auto launches = [&] {
    llvm::DenseSet<Operation *> set;
    for (Operation &op : *block)
      if (isa<gpu::LaunchOp>(op))
        set.insert(&op);
    return set;
  };
  // Emits one form; each of its launches runs only where `runs` holds.
  auto gated = [&](Value runs, llvm::function_ref<LogicalResult()> emit) -> LogicalResult {
    llvm::DenseSet<Operation *> before = launches();
    if (failed(emit()))
      return failure();
    for (Operation &op : *block)
      if (auto launch = dyn_cast<gpu::LaunchOp>(op); launch && !before.contains(&op)) {
        b.setInsertionPoint(launch);
        Value grid = launch.getGridSizeX();
        launch.getGridSizeXMutable().assign(arith::SelectOp::create(b, loc, runs, grid, cIndex(b, loc, 0)));
      }
    return success();
  };
  b.setInsertionPoint(kernel);
  loop::KernelOp serial, blocked;
  SmallVector<loop::ReduceOp> serialReduces;
  if (!is(sweep, false)) {
    serial = cast<loop::KernelOp>(b.clone(*kernel.getOperation()));
    serialReduces = dynamicSplittable(serial, 4 * kMinChunk); // the clone's own
    if (serialReduces.size() != reduces.size()) {
      serial.erase();
      return splitDynamic(kernel, reduces);
    }
  }
  if (!is(byBlock, false))
    blocked = cast<loop::KernelOp>(b.clone(*kernel.getOperation()));
  if (serial && failed(gated(sweep, [&] { return sweepColumns(serial, serialReduces); })))
    return failure();
  if (blocked && failed(gated(byBlock, [&] { return columnsByBlock(blocked); })))
    return failure();
  return gated(split, [&] { return splitDynamic(kernel, reduces); });
}

/// The short form of a `?` column reduction: one launch, a thread per group of `width` neighbouring points
/// sweeping the whole runtime length with kUnroll x width accumulators and 16-byte loads (as a split's
/// partial kernel sweeps a chunk), then running the rest of the kernel body. A thread summing one
/// accumulator would wait on each row's load in turn.
LogicalResult KernelMapper::sweepColumns(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces) {
  Location loc = kernel.getLoc();
  b.setInsertionPoint(kernel);
  SmallVector<OpFoldResult> domain = kernel.getMixedDomain();
  Value points = productValue(b, loc, domain);
  IRMapping none;
  Value length = productValue(b, loc, innerSizes(reduces[0], none));
  int64_t width = columnWidth(kernel, reduces);
  Value groups = width == 1 ? points : arith::DivUIOp::create(b, loc, points, cIndex(b, loc, width)).getResult();
  Value one = cIndex(b, loc, 1);
  int64_t threads = threadsPerBlock;
  auto launch = gpu::LaunchOp::create(b, loc, arith::CeilDivUIOp::create(b, loc, groups, cIndex(b, loc, threads)),
                                      one, one, cIndex(b, loc, threads), one, one);
  launch->setAttr("dyn.kernel", kernel.getNameAttr());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  auto [group, ifOp] = guardedThreadIndex(launch, threads, OpFoldResult(groups));
  Value point = width == 1 ? group : arith::MulIOp::create(b, loc, group, cIndex(b, loc, width)).getResult();
  Block &body = kernel.getBodyBlock();
  SmallVector<IRMapping> maps = laneMaps(kernel, reduces, point, domain, width);
  SmallVector<Value> folded = foldRangeLanes(reduces, cIndex(b, loc, 0), length, one, maps,
                                             body.getNumArguments() ? body.getArguments().back() : Value(), kUnroll);
  for (int64_t k = 0; k < width; ++k) {
    for (auto [r, reduce] : llvm::enumerate(reduces))
      maps[k].map(loop::ReduceOp(reduce).getResult(), folded[r * width + k]);
    for (Operation &op : body.without_terminator())
      if (!isa<loop::ReduceOp>(op) &&
          !(op.getNumResults() && llvm::all_of(op.getResults(), [&](Value v) { return maps[k].contains(v); })))
        b.clone(op, maps[k]); // (ops the sweep cloned already are not cloned again)
  }
  b.setInsertionPointAfter(ifOp);
  gpu::TerminatorOp::create(b, loc);
  kernel.erase();
  return success();
}

/// Few rows of a runtime length (the kernel's domain static, below a block
/// per SM slot) split as the static lowering splits few long rows (splitRows),
/// with chunks = max(1, min(slots / rows, length / kRowChunk)) computed at run
/// time: at most slots / rows, the partial buffers' static size. A row shorter
/// than 2 x kRowChunk is one chunk: a block per row and a combining pass.
LogicalResult KernelMapper::splitDynamicRows(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces) {
  Location loc = kernel.getLoc();
  b.setInsertionPoint(kernel);
  int64_t points = product(kernel.getDomain());
  SmallVector<OpFoldResult> domain = kernel.getMixedDomain();
  IRMapping none;
  Value length = productValue(b, loc, innerSizes(reduces[0], none));
  int64_t maxChunks = std::max<int64_t>(1, (fillBlocks + points - 1) / points);
  Value chunks = arith::MinUIOp::create(b, loc, cIndex(b, loc, maxChunks),
                                        arith::DivUIOp::create(b, loc, length, cIndex(b, loc, kRowChunk)));
  chunks = arith::MaxUIOp::create(b, loc, chunks, cIndex(b, loc, 1));
  Value chunkLength = arith::CeilDivUIOp::create(b, loc, length, chunks);
  // many partials a point (few rows) are combined by a block per row, as a tree
  bool blockCombine = maxChunks >= kBlockCombine || (maxChunks >= kFewPointsBlockCombine && points < fillThreads / 16);
  return splitRows(kernel, reduces, domain, chunks, maxChunks, chunkLength, length, blockCombine ? 64 : 0);
}

/// A kernel whose domain, or an inner loop's, has `?` dims: the geometry is
/// computed in the host function from the runtime sizes (the launch plan
/// evaluates it at each call). Conservative fixed plans where the static
/// lowering weighs sizes: pointwise kernels take a thread per point (16-byte
/// vectors where the innermost dim is a constant multiple of the width),
/// row kernels over contiguous rows a block per row (the static row's
/// threads and registers where the rows have a constant length, else 256
/// threads sweeping it; fewer long rows than the GPU runs blocks at once are
/// split into runs of a row at run time, splitDynamicRows), other kernels with
/// inner loops a thread per point running them serially, except a long
/// single reduction, split across blocks where it is long at run time
/// (splitOrSerialDynamic).
LogicalResult KernelMapper::mapDynamic(loop::KernelOp kernel, bool allowSplit) {
  Location loc = kernel.getLoc();
  b.setInsertionPoint(kernel);
  SmallVector<OpFoldResult> domain = kernel.getMixedDomain();
  Value points = productValue(b, loc, domain);
  bool hasInner = llvm::any_of(kernel.getBodyBlock(), [](Operation &op) {
    return isa<loop::ForOp, loop::ReduceOp>(op);
  });
  bool byRow = hasInner && rowsAreContiguous(kernel);
  // Few rows (a batch norm's channel sums over an NCHW tensor with a `?` batch, a loss over [tokens, vocab]):
  // a block per row would leave the GPU idle for long rows, so they are split into runs of rows at run time
  // (splitDynamicRows) where the rows' static part is long (2 x kRowChunk), or 1K elements times a `?` size;
  // a row of a `?` length alone (a mean over the tokens) stays one block, one launch.
  if (hasInner && byRow && llvm::none_of(kernel.getDomain(), ShapedType::isDynamic) &&
      product(kernel.getDomain()) < fillBlocks)
    if (SmallVector<loop::ReduceOp> reduces = dynamicSplittable(kernel, 2 * kRowChunk); !reduces.empty()) {
      ArrayRef<int64_t> length = reduces[0].getDomain();
      int64_t staticPart = 1;
      for (int64_t d : length)
        staticPart *= ShapedType::isDynamic(d) ? 1 : d;
      if (staticPart >= (llvm::any_of(length, ShapedType::isDynamic) ? kRowChunk / 8 : 2 * kRowChunk))
        return splitDynamicRows(kernel, reduces);
    }
  if (hasInner && !byRow && allowSplit)
    if (SmallVector<loop::ReduceOp> reduces = dynamicSplittable(kernel, 4 * kMinChunk); !reduces.empty())
      return splitOrSerialDynamic(kernel, reduces);
  if (!hasInner && !kernel.getDomain().empty())
    if (int64_t width = vectorWidth(kernel); width > 1)
      return vectorize(kernel, width, points);
  // The rows' length, where every inner loop has a constant domain.
  bool staticRows = true;
  int64_t innerPoints = 1;
  for (Operation &op : kernel.getBodyBlock())
    if (isa<loop::ForOp, loop::ReduceOp>(op)) {
      bool nestedDynamic = false;
      op.walk([&](Operation *inner) {
        if (isa<loop::ForOp, loop::ReduceOp>(inner) && inner->getNumOperands())
          nestedDynamic = true;
      });
      if (nestedDynamic)
        staticRows = false;
      else
        innerPoints = std::max(innerPoints, product(innerDomain(&op)));
    }
  int64_t threads = !byRow ? threadsPerBlock : staticRows ? rowThreads(kernel, innerPoints) : 256;
  Value grid = byRow ? points : arith::CeilDivUIOp::create(b, loc, points, cIndex(b, loc, threads)).getResult();
  Value one = cIndex(b, loc, 1);
  auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, cIndex(b, loc, threads), one, one);
  launch->setAttr("dyn.kernel", kernel.getNameAttr());
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  IRMapping map;
  if (byRow) {
    rowBody(kernel, launch, domain, threads, /*allowResident=*/staticRows);
  } else {
    auto [linear, guard] = guardedThreadIndex(launch, threads, OpFoldResult(points));
    SmallVector<Value> idx = delinearize(b, loc, linear, domain);
    cloneBody(b, kernel.getBodyBlock(), idx, map);
    b.setInsertionPointAfter(guard);
  }
  gpu::TerminatorOp::create(b, loc);
  kernel.erase();
  return success();
}


/// Every buffer with `?` dims that `launch` uses from the host: the host
/// passes `memref.reinterpret_cast %buf to memref<0xT>` (its pointer, the
/// launch plan's buffer) and its `?` sizes (`memref.dim`, index operands of
/// the kernel), and the body views the pointer with those sizes, row-major
/// (as dyn-bind-buffer-sizes does for the CPU's function arguments).
LogicalResult viewDynamicBuffers(OpBuilder &b, gpu::LaunchOp launch) {
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(launch.getBody(), used);
  for (Value v : used) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || type.hasStaticShape())
      continue;
    if (!type.getLayout().isIdentity())
      return launch.emitOpError() << "uses a buffer of type " << type
                                  << " with dynamic dims and a non-identity layout, which the GPU "
                                     "lowering does not support";
    Location loc = launch.getLoc();
    b.setInsertionPoint(launch);
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      sizes.push_back(type.isDynamicDim(d) ? memref::DimOp::create(b, loc, v, d).getResult() : Value());
    auto flatType = MemRefType::get({0}, type.getElementType(), MemRefLayoutAttrInterface(),
                                    type.getMemorySpace());
    Value flat = memref::ReinterpretCastOp::create(b, loc, flatType, v, b.getIndexAttr(0),
                                                   ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
                                                   ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    b.setInsertionPointToStart(&launch.getBody().front());
    SmallVector<OpFoldResult> dims, strides(type.getRank());
    for (int64_t d = 0; d < type.getRank(); ++d)
      dims.push_back(sizes[d] ? OpFoldResult(sizes[d]) : b.getIndexAttr(type.getDimSize(d)));
    OpFoldResult stride = b.getIndexAttr(1);
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      strides[d] = stride;
      if (d == 0)
        break;
      auto sc = getConstantIntValue(stride), dc = getConstantIntValue(dims[d]);
      if (sc && dc)
        stride = b.getIndexAttr(*sc * *dc);
      else
        stride = arith::MulIOp::create(b, loc, sizeValue(b, loc, stride), sizeValue(b, loc, dims[d])).getResult();
    }
    Value view = memref::ReinterpretCastOp::create(b, loc, type, flat, b.getIndexAttr(0), dims, strides);
    v.replaceUsesWithIf(view, [&](OpOperand &use) {
      return use.getOwner() != view.getDefiningOp() && launch->isProperAncestor(use.getOwner());
    });
  }
  return success();
}

/// Loads in `launch` from a buffer without elements (a `[5, 0, 5]` gradient a backward pads back to its
/// input's size) become zeros: no such load reads anything at run time (a pad's clamped read is selected
/// away), and the buffer then is no kernel argument (a bare pointer to no elements is no legal one).
void dropEmptyBufferLoads(OpBuilder &b, gpu::LaunchOp launch) {
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(launch.getBody(), used);
  for (Value v : used) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() != 0)
      continue;
    SmallVector<Operation *> loads;
    for (OpOperand &use : v.getUses())
      if (launch->isProperAncestor(use.getOwner()) && isa<memref::LoadOp, vector::LoadOp>(use.getOwner()))
        loads.push_back(use.getOwner());
    for (Operation *load : loads) {
      b.setInsertionPoint(load);
      Type t = load->getResult(0).getType();
      Value zero = arith::ConstantOp::create(b, load->getLoc(), cast<TypedAttr>(b.getZeroAttr(t)));
      load->getResult(0).replaceAllUsesWith(zero);
      load->erase();
    }
  }
}

} // namespace dyn::loop_to_gpu

namespace {
/// Right before kernel outlining (after the last canonicalization, which
/// would fold the views below back into the buffers): kernels take bare
/// pointers, which only statically shaped buffers have, so a buffer with `?`
/// dims that a launch uses is passed as its pointer and viewed with its
/// runtime sizes again in the kernel (viewDynamicBuffers). Then upstream's
/// gpu-launch-sink-index-computations without memref.dim: a buffer's runtime
/// size stays in the host function (a kernel operand the launch plan
/// evaluates). For static shapes the same as upstream's (their dims are folded
/// to constants, and no buffer needs a view).
struct PrepareGpuOutliningPass : public PassWrapper<PrepareGpuOutliningPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrepareGpuOutliningPass)
  StringRef getArgument() const final { return "dyn-prepare-gpu-outlining"; }
  void runOnOperation() override {
    OpBuilder b(&getContext());
    auto beneficial = [](Operation *op) {
      return op->hasTrait<mlir::OpTrait::ConstantLike>() || isa<arith::SelectOp, arith::CmpIOp>(op);
    };
    WalkResult r = getOperation().walk([&](gpu::LaunchOp launch) {
      dyn::loop_to_gpu::dropEmptyBufferLoads(b, launch);
      if (failed(dyn::loop_to_gpu::viewDynamicBuffers(b, launch)) || failed(mlir::sinkOperationsIntoLaunchOp(launch, beneficial)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

namespace dyn {
std::unique_ptr<mlir::Pass> createPrepareGpuOutliningPass() { return std::make_unique<PrepareGpuOutliningPass>(); }
} // namespace dyn
