//===- Reductions.cpp - row kernels and split reductions on the GPU -------===//
//
// Row kernels (a block per row: block-strided partials and gpu.all_reduce,
// rows resident in registers), reductions split across blocks (few long
// rows; sums over leading dims, whose column partials are vectorized along
// the contiguous kept dim with unrolled accumulators) and the launches that
// combine their partials.
//
//===----------------------------------------------------------------------===//
#include "Mapping.h"

#include <functional>
#include <map>

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace dyn;

namespace dyn::loop_to_gpu {


/// A thread-per-point kernel whose top-level reductions (one, or siblings
/// that one sweep folds together: a batch norm backward's sum(dy) and
/// sum(dy * xhat)) are long and whose points are too few to fill the GPU (a
/// sum over a leading dim): worth splitting across blocks.
SmallVector<loop::ReduceOp> KernelMapper::splittableReduces(loop::KernelOp kernel, bool byRow) {
  SmallVector<loop::ReduceOp> found = siblingReduces(kernel);
  if (found.empty())
    return {};
  int64_t length = product(found[0].getDomain()), points = product(kernel.getDomain());
  if (byRow) // few long rows: fewer blocks than the GPU runs at once
    return (points < fillBlocks && length >= 2 * kRowChunk) ? found : SmallVector<loop::ReduceOp>();
  if (length < 4 * kMinChunk || points >= fillThreads)
    return {};
  return found;
}

namespace {
/// `a * c`, folded where `a` is a constant.
Value mulC(OpBuilder &b, Location loc, Value a, int64_t c) {
  if (auto v = getConstantIntValue(a))
    return cIndex(b, loc, *v * c);
  return c == 1 ? a : arith::MulIOp::create(b, loc, a, cIndex(b, loc, c)).getResult();
}
/// `ceil(a / c)`, folded where `a` is a constant.
Value ceilDivC(OpBuilder &b, Location loc, Value a, int64_t c) {
  if (auto v = getConstantIntValue(a))
    return cIndex(b, loc, (*v + c - 1) / c);
  return arith::CeilDivUIOp::create(b, loc, a, cIndex(b, loc, c));
}
} // namespace

/// Two launches: the first folds chunks of the reductions for every point
/// into temporary [chunks x points] buffers (one per reduction: sibling
/// reductions share the sweep); the second combines each point's partials
/// and runs the rest of the kernel body. A row reduction takes a block per
/// (chunk, row); a reduction over leading dims a thread per (chunk, group of
/// `width` neighbouring points), see splitColumns.
LogicalResult KernelMapper::splitReduce(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces, bool byRow) {
  Location loc = kernel.getLoc();
  ArrayRef<int64_t> domain = kernel.getDomain();
  int64_t points = product(domain), length = product(loop::ReduceOp(reduces[0]).getDomain());
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : domain)
    sizes.push_back(b.getIndexAttr(d));
  b.setInsertionPoint(kernel);
  if (!byRow) {
    int64_t width = columnWidth(kernel, reduces), groups = points / width;
    // ViT-B's norm-weight gradient (768 columns over 1576 tokens) at 32 rows a chunk runs 37 blocks on
    // 132 SMs: shorter chunks until a quarter of the GPU's threads have work.
    int64_t minChunk = kMinChunk;
    while (minChunk > kMinColumnChunk && groups * (length / minChunk) < fillThreads / 4)
      minChunk /= 2;
    int64_t chunks = std::min<int64_t>((fillThreads + groups - 1) / groups, length / minChunk);
    int64_t chunkLength = (length + chunks - 1) / chunks;
    bool blockCombine = chunks >= kBlockCombine || (chunks >= kFewPointsBlockCombine && points < fillThreads / 16);
    // Enough points for a block per 32 of them on every SM: warps fold the partials' rows, a block per point
    // would be thousands of blocks reducing a few hundred values each (a sum over dim 0 of [8192, 8192]).
    bool columnCombine = blockCombine && points % 32 == 0 && points / 32 >= fillBlocks / 8;
    return splitColumns(kernel, reduces, sizes, cIndex(b, loc, points), cIndex(b, loc, length),
                        cIndex(b, loc, chunks), cIndex(b, loc, chunkLength), width,
                        columnCombine ? kColumnCombine : blockCombine ? threadsPerBlock : 0);
  }
  int64_t chunks = std::min<int64_t>((fillBlocks + points - 1) / points, length / kRowChunk);
  int64_t chunkLength = (length + chunks - 1) / chunks;
  return splitRows(kernel, reduces, sizes, cIndex(b, loc, chunks), chunks, cIndex(b, loc, chunkLength),
                   cIndex(b, loc, length), /*combineThreads=*/0);
}

/// Few long rows split into `chunks` runs each (at most `maxChunks`, the
/// partial buffers' static size; constant or computed at run time): launch 1
/// takes a block per (chunk, row) sweeping its run of the row (every sibling
/// reduction in one sweep) into temporary [maxChunks x rows] partials;
/// launch 2 combines each row's partials (combinePartials: a thread per row,
/// or with `combineThreads` a block per row) and runs the rest of the body.
LogicalResult KernelMapper::splitRows(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces,
                                      ArrayRef<OpFoldResult> domain, Value chunks, int64_t maxChunks,
                                      Value chunkLength, Value length, int64_t combineThreads) {
  Location loc = kernel.getLoc();
  int64_t points = product(kernel.getDomain());
  b.setInsertionPoint(kernel);
  SmallVector<Value> partials;
  for (loop::ReduceOp reduce : reduces)
    partials.push_back(memref::AllocOp::create(b, loc, MemRefType::get({maxChunks, points}, reduce.getType())));
  Value one = cIndex(b, loc, 1);
  auto first = gpu::LaunchOp::create(b, loc, mulC(b, loc, chunks, points), one, one,
                                     cIndex(b, loc, threadsPerBlock), one, one);
  first->setAttr("dyn.kernel", b.getStringAttr(kernel.getName() + "_partial"));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&first.getBody().front());
    splitRowPartial(kernel, reduces, first, partials, points, chunkLength, length, threadsPerBlock);
    b.setInsertionPointToEnd(&first.getBody().front());
    gpu::TerminatorOp::create(b, loc);
  }
  combinePartials(kernel, reduces, partials, domain, cIndex(b, loc, points), chunks, combineThreads);
  b.setInsertionPoint(kernel);
  for (Value p : partials)
    memref::DeallocOp::create(b, loc, p);
  kernel.erase();
  return success();
}

/// Per lane k of `width` neighbouring points from `point`: the kernel's indices at point + k (the
/// innermost moved by k) and the ops a sweep reads before it starts (cloneSweepInputs).
SmallVector<IRMapping> KernelMapper::laneMaps(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces, Value point,
                                              ArrayRef<OpFoldResult> domain, int64_t width) {
  Location loc = kernel.getLoc();
  Block &body = kernel.getBodyBlock();
  SmallVector<Value> base = delinearize(b, loc, point, domain);
  SmallVector<IRMapping> maps(width);
  for (int64_t k = 0; k < width; ++k) {
    for (auto [arg, v] : llvm::zip(body.getArguments(), base))
      maps[k].map(arg, v);
    if (k > 0)
      maps[k].map(body.getArguments().back(), arith::AddIOp::create(b, loc, base.back(), cIndex(b, loc, k)));
    cloneSweepInputs(kernel, reduces, maps[k]);
  }
  return maps;
}

/// Clones, in body order, the top-level ops of `kernel` whose results the
/// reductions' bodies use (directly or through other such ops): what a sweep
/// needs before it starts. Sibling reductions use no reduction's result.
void KernelMapper::cloneSweepInputs(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces, IRMapping &map) {
  Block &body = kernel.getBodyBlock();
  llvm::SetVector<Value> used;
  for (loop::ReduceOp reduce : reduces)
    getUsedValuesDefinedAbove(reduce.getRegion(), used);
  llvm::DenseSet<Operation *> needed;
  SmallVector<Value> work(used.begin(), used.end());
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != &body || !needed.insert(def).second)
      continue;
    work.append(def->operand_begin(), def->operand_end());
  }
  for (Operation &op : body)
    if (needed.contains(&op))
      b.clone(op, map);
}

/// Reductions over leading dims (a column sum: kernel [C], reduce [N, H, W]
/// over an NHWC tensor) split into `chunks` runs of rows: launch 1 takes a
/// thread per (chunk, group of `width` neighbouring points), neighbouring
/// threads on neighbouring groups (coalesced); each thread sweeps its rows
/// kUnroll at a time into kUnroll x width accumulators per reduction (sibling
/// reductions fold in the same sweep, each buffer row read once), reading
/// `width` points of a row with one 16-byte vector load, and stores its
/// partials into a temporary [chunks x points] per reduction. Launch 2
/// combines them: a block per point (`combineThreads` threads folding strided
/// partials, then gpu.all_reduce: a tree) where there are many, else a thread
/// per point. Where a block's threads cover whole chunks of all the groups
/// (static sizes, fewer groups than threads), they first fold their chunks in
/// shared memory: the buffers get a row per block, not per chunk (a batch
/// norm's 64 channel sums over 256 x 56 x 56 rows: 1,056 partials a channel,
/// not 16,896, which the combining launch's 64 blocks would wait on).
/// Deterministic: no atomics. Sizes are host values (constants for static
/// kernels).
LogicalResult KernelMapper::splitColumns(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces,
                                         ArrayRef<OpFoldResult> domain, Value points, Value length,
                                         Value chunks, Value chunkLength, int64_t width,
                                         int64_t combineThreads) {
  Location loc = kernel.getLoc();
  auto cChunks = getConstantIntValue(chunks), cPoints = getConstantIntValue(points);
  SmallVector<Value> dynSizes;
  if (!cChunks)
    dynSizes.push_back(chunks);
  if (!cPoints)
    dynSizes.push_back(points);
  int64_t threads = threadsPerBlock;
  // chunks a block folds in shared memory: its threads cover `fold` whole chunks of every group
  int64_t fold = 1, sharedBytes = 0;
  if (cChunks && cPoints && *cPoints / width < threads && threads % (*cPoints / width) == 0) {
    for (loop::ReduceOp reduce : reduces)
      sharedBytes += threads * width * std::max<int64_t>(1, reduce.getType().getIntOrFloatBitWidth() / 8);
    if (sharedBytes <= kMaxFoldSharedBytes)
      fold = std::min(threads / (*cPoints / width), *cChunks);
  }
  int64_t rows = cChunks ? (*cChunks + fold - 1) / fold : ShapedType::kDynamic;
  SmallVector<Value> partials;
  for (loop::ReduceOp reduce : reduces)
    partials.push_back(memref::AllocOp::create(
        b, loc, MemRefType::get({rows, cPoints ? *cPoints : ShapedType::kDynamic}, reduce.getType()), dynSizes));
  Value one = cIndex(b, loc, 1);
  Value groups = width == 1 ? points
                 : cPoints  ? cIndex(b, loc, *cPoints / width)
                            : arith::DivUIOp::create(b, loc, points, cIndex(b, loc, width)).getResult();
  Value pairs = getConstantIntValue(groups) && cChunks
                    ? cIndex(b, loc, *getConstantIntValue(groups) * *cChunks)
                    : arith::MulIOp::create(b, loc, chunks, groups).getResult();
  SmallVector<Type> sharedTypes;
  if (fold > 1)
    for (loop::ReduceOp reduce : reduces)
      sharedTypes.push_back(MemRefType::get({threads * width}, reduce.getType(), MemRefLayoutAttrInterface(),
                                            gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup)));
  auto first = gpu::LaunchOp::create(b, loc, ceilDivC(b, loc, pairs, threads), one, one,
                                     cIndex(b, loc, threads), one, one, /*dynamicSharedMemorySize=*/nullptr,
                                     /*asyncTokenType=*/nullptr, /*asyncDependencies=*/ValueRange(), sharedTypes);
  first->setAttr("dyn.kernel", b.getStringAttr(kernel.getName() + "_partial"));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&first.getBody().front());
    Value thread = first.getThreadIds().x;
    // a thread past the last chunk folds the identity
    auto sharedAt = [&](Value t, int64_t k) {
      return arith::AddIOp::create(b, loc, mulC(b, loc, t, width), cIndex(b, loc, k)).getResult();
    };
    if (fold > 1)
      for (auto [r, reduce] : llvm::enumerate(reduces)) {
        loop::ReduceOp red = reduce;
        Value identity = arith::ConstantOp::create(b, loc, loop::reduceIdentity(b, red.getKind(), red.getType()));
        for (int64_t k = 0; k < width; ++k)
          memref::StoreOp::create(b, loc, identity, first.getWorkgroupAttributions()[r],
                                  ValueRange{sharedAt(thread, k)});
      }
    auto [linear, ifOp] = guardedThreadIndex(first, threads, OpFoldResult(pairs));
    Value chunk = arith::DivUIOp::create(b, loc, linear, groups);
    Value group = arith::RemUIOp::create(b, loc, linear, groups);
    Value point = mulC(b, loc, group, width);
    Block &body = kernel.getBodyBlock();
    SmallVector<IRMapping> maps = laneMaps(kernel, reduces, point, domain, width);
    Value begin = arith::MulIOp::create(b, loc, chunk, chunkLength);
    Value end = arith::MinUIOp::create(b, loc, arith::AddIOp::create(b, loc, begin, chunkLength), length);
    SmallVector<Value> parts =
        foldRangeLanes(reduces, begin, end, one, maps, body.getNumArguments() ? body.getArguments().back() : Value(),
                       kUnroll);
    for (int64_t k = 0; k < width; ++k) {
      if (fold > 1) {
        for (size_t r = 0; r < partials.size(); ++r)
          memref::StoreOp::create(b, loc, parts[r * width + k], first.getWorkgroupAttributions()[r],
                                  ValueRange{sharedAt(thread, k)});
        continue;
      }
      SmallVector<Value> at{chunk, k ? arith::AddIOp::create(b, loc, point, cIndex(b, loc, k)).getResult() : point};
      for (auto [r, partial] : llvm::enumerate(partials))
        loop::StoreOp::create(b, loc, parts[r * width + k], partial, at);
    }
    b.setInsertionPointAfter(ifOp);
    if (fold > 1) {
      // thread t < groups folds the block's chunks of group t, in chunk order (deterministic)
      int64_t g = *cPoints / width;
      gpu::BarrierOp::create(b, loc);
      auto folder = scf::IfOp::create(
          b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, thread, cIndex(b, loc, g)), false);
      b.setInsertionPointToStart(&folder.getThenRegion().front());
      Value point = mulC(b, loc, thread, width);
      for (auto [r, reduce] : llvm::enumerate(reduces)) {
        loop::ReduceOp red = reduce;
        Value shared = first.getWorkgroupAttributions()[r];
        for (int64_t k = 0; k < width; ++k) {
          Value acc = memref::LoadOp::create(b, loc, shared, ValueRange{sharedAt(thread, k)});
          for (int64_t j = 1; j < fold; ++j) {
            Value t = arith::AddIOp::create(b, loc, thread, cIndex(b, loc, j * g));
            acc = loop::reduceCombine(b, loc, red.getKind(), acc,
                                      memref::LoadOp::create(b, loc, shared, ValueRange{sharedAt(t, k)}));
          }
          SmallVector<Value> at{first.getBlockIds().x,
                                k ? arith::AddIOp::create(b, loc, point, cIndex(b, loc, k)).getResult() : point};
          loop::StoreOp::create(b, loc, acc, partials[r], at);
        }
      }
      b.setInsertionPointAfter(folder);
    }
    gpu::TerminatorOp::create(b, loc);
  }
  Value rowCount = fold > 1 ? cIndex(b, loc, rows) : chunks;
  combinePartials(kernel, reduces, partials, domain, points, rowCount, combineThreads);
  b.setInsertionPoint(kernel);
  for (Value p : partials)
    memref::DeallocOp::create(b, loc, p);
  kernel.erase();
  return success();
}

/// The launch combining a split reduction's partials (one [chunks x points]
/// buffer per reduction) and running the rest of the kernel body: with
/// `combineThreads`, a block per point whose threads fold strided partials
/// (kUnroll accumulators) and gpu.all_reduce them, thread 0 running the rest;
/// else a thread per point folding its partials in order.
void KernelMapper::combinePartials(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces,
                                   ArrayRef<Value> partials, ArrayRef<OpFoldResult> domain, Value points,
                                   Value chunks, int64_t combineThreads) {
  if (combineThreads == kColumnCombine)
    return combineColumns(kernel, reduces, partials, domain, points, chunks);
  Location loc = kernel.getLoc();
  Value one = cIndex(b, loc, 1);
  int64_t threads = combineThreads ? combineThreads : threadsPerBlock;
  b.setInsertionPoint(kernel);
  Value grid = combineThreads ? points : ceilDivC(b, loc, points, threads);
  auto second = gpu::LaunchOp::create(b, loc, grid, one, one, cIndex(b, loc, threads), one, one);
  second->setAttr("dyn.kernel", kernel.getNameAttr());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&second.getBody().front());
  Value point;
  scf::IfOp ifOp;
  if (combineThreads)
    point = second.getBlockIds().x;
  else
    std::tie(point, ifOp) = guardedThreadIndex(second, threads, OpFoldResult(points));
  IRMapping map;
  for (auto [arg, v] : llvm::zip(kernel.getBodyBlock().getArguments(), delinearize(b, loc, point, domain)))
    map.map(arg, v);
  // Every thread of the block takes part in each reduction's gpu.all_reduce.
  for (auto [r, buffer] : llvm::zip(reduces, partials)) {
    loop::ReduceOp reduce = r;
    Value partials = buffer;
    Type type = reduce.getType();
    if (combineThreads) {
      Value thread = second.getThreadIds().x;
      Value partial = foldLanes(reduce.getKind(), type, thread, chunks, cIndex(b, loc, threads), kUnroll, 1,
                                [&](Value c) -> SmallVector<Value> {
                                  SmallVector<Value> at{c, point};
                                  return {loop::LoadOp::create(b, loc, partials, at)};
                                })[0];
      map.map(reduce.getResult(), allReduce(reduce, partial));
      continue;
    }
    Value init = arith::ConstantOp::create(b, loc, loop::reduceIdentity(b, reduce.getKind(), type));
    auto combineAll = scf::ForOp::create(b, loc, cIndex(b, loc, 0), chunks, one, ValueRange{init});
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(combineAll.getBody());
    SmallVector<Value> at{combineAll.getInductionVar(), point};
    Value part = loop::LoadOp::create(b, loc, partials, at);
    scf::YieldOp::create(b, loc, loop::reduceCombine(b, loc, reduce.getKind(),
                                                     combineAll.getRegionIterArgs()[0], part));
    b.setInsertionPointAfter(combineAll);
    map.map(reduce.getResult(), combineAll.getResult(0));
  }
  if (combineThreads) {
    Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, second.getThreadIds().x,
                                          cIndex(b, loc, 0));
    ifOp = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  }
  for (Operation &op : kernel.getBodyBlock().without_terminator())
    if (!isa<loop::ReduceOp>(op))
      b.clone(op, map);
  b.setInsertionPointAfter(ifOp);
  gpu::TerminatorOp::create(b, loc);
}

/// combinePartials for many points (a multiple of 32): a block of 256 threads per 32 neighbouring points,
/// lane l on point l (coalesced rows), warp w folding the partials' rows w, w + 8, ... (kUnroll loads in
/// flight); the 8 warps' values meet in shared memory and the first warp folds them in warp order
/// (deterministic) and runs the rest of the kernel body.
void KernelMapper::combineColumns(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces, ArrayRef<Value> partials,
                                  ArrayRef<OpFoldResult> domain, Value points, Value chunks) {
  Location loc = kernel.getLoc();
  constexpr int64_t kLanes = 32, kWarps = 8;
  Value one = cIndex(b, loc, 1);
  b.setInsertionPoint(kernel);
  SmallVector<Type> sharedTypes;
  for (loop::ReduceOp reduce : reduces)
    sharedTypes.push_back(MemRefType::get({kWarps * kLanes}, reduce.getType(), MemRefLayoutAttrInterface(),
                                          gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup)));
  auto launch = gpu::LaunchOp::create(b, loc, ceilDivC(b, loc, points, kLanes), one, one,
                                      cIndex(b, loc, kWarps * kLanes), one, one, /*dynamicSharedMemorySize=*/nullptr,
                                      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/ValueRange(), sharedTypes);
  launch->setAttr("dyn.kernel", kernel.getNameAttr());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value thread = launch.getThreadIds().x;
  Value lane = arith::RemUIOp::create(b, loc, thread, cIndex(b, loc, kLanes));
  Value warp = arith::DivUIOp::create(b, loc, thread, cIndex(b, loc, kLanes));
  Value point = arith::AddIOp::create(b, loc, mulC(b, loc, launch.getBlockIds().x, kLanes), lane);
  for (auto [r, reduce] : llvm::enumerate(reduces)) {
    loop::ReduceOp red = reduce;
    Value buffer = partials[r];
    Value part = foldLanes(red.getKind(), red.getType(), warp, chunks, cIndex(b, loc, kWarps), kUnroll, 1,
                           [&](Value c) -> SmallVector<Value> {
                             return {loop::LoadOp::create(b, loc, buffer, ValueRange{c, point})};
                           })[0];
    memref::StoreOp::create(b, loc, part, launch.getWorkgroupAttributions()[r], ValueRange{thread});
  }
  gpu::BarrierOp::create(b, loc);
  auto first = scf::IfOp::create(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, thread,
                                                               cIndex(b, loc, kLanes)),
                                 /*withElseRegion=*/false);
  b.setInsertionPointToStart(&first.getThenRegion().front());
  IRMapping map;
  for (auto [arg, v] : llvm::zip(kernel.getBodyBlock().getArguments(), delinearize(b, loc, point, domain)))
    map.map(arg, v);
  for (auto [r, reduce] : llvm::enumerate(reduces)) {
    loop::ReduceOp red = reduce;
    Value shared = launch.getWorkgroupAttributions()[r];
    Value acc = memref::LoadOp::create(b, loc, shared, ValueRange{lane});
    for (int64_t w = 1; w < kWarps; ++w)
      acc = loop::reduceCombine(
          b, loc, red.getKind(), acc,
          memref::LoadOp::create(b, loc, shared, ValueRange{arith::AddIOp::create(b, loc, lane, cIndex(b, loc, w * kLanes))}));
    map.map(red.getResult(), acc);
  }
  for (Operation &op : kernel.getBodyBlock().without_terminator())
    if (!isa<loop::ReduceOp>(op))
      b.clone(op, map);
  b.setInsertionPointAfter(first);
  gpu::TerminatorOp::create(b, loc);
}

/// The number of neighbouring points a thread of a column split reads with
/// one 16-byte load: every load in the reductions (or before them) that moves
/// with the kernel's innermost index must index its buffer's last dim with
/// exactly that index, no other index moving with it, the buffers' last dims
/// and the innermost domain dim multiples of the width, and the element
/// widths agree, but for masks (i1), which the thread reads a byte per point
/// (a batch norm backward's ReLU mask beside its float inputs). 1 when not
/// possible.
int64_t KernelMapper::columnWidth(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces) {
  ArrayRef<int64_t> domain = kernel.getDomain();
  Block &body = kernel.getBodyBlock();
  if (domain.empty() || ShapedType::isDynamic(domain.back()))
    return 1;
  Value inner = body.getArguments().back();
  // Whether `v` moves with the innermost index (through any op of the kernel).
  std::function<bool(Value)> moves = [&](Value v) -> bool {
    if (v == inner)
      return true;
    Operation *def = v.getDefiningOp();
    if (!def || !kernel->isAncestor(def))
      return false;
    return llvm::any_of(def->getOperands(), moves);
  };
  auto inReduce = [&](Operation *op) {
    return llvm::any_of(reduces, [&](loop::ReduceOp r) { return r->isAncestor(op); });
  };
  unsigned bits = 0;
  bool ok = true, anyVector = false;
  SmallVector<MemRefType> accessed;
  kernel.walk([&](Operation *op) {
    if (isa<loop::StoreOp>(op) && op->getParentOp() != kernel.getOperation())
      ok = false;
    if (!llvm::any_of(reduces, [&](loop::ReduceOp r) { return r.getOperation() == op; }) &&
        op != kernel.getOperation() && isa<loop::ReduceOp, loop::ForOp>(op))
      ok = false;
    auto load = dyn_cast<loop::LoadOp>(op);
    if (!load || load.getIndices().empty() || !inReduce(load))
      return;
    if (load.getIndices().back() != inner) {
      if (llvm::any_of(load.getIndices(), moves))
        ok = false;
      return;
    }
    for (Value i : load.getIndices().drop_back())
      if (moves(i))
        ok = false;
    auto t = cast<MemRefType>(load.getMemref().getType());
    accessed.push_back(t);
    unsigned w = t.getElementTypeBitWidth();
    if (w < 8) // a mask (i1, a byte each): read lane by lane, next to the others' vectors
      return;
    if (bits && w != bits)
      ok = false;
    bits = w;
    anyVector = true;
  });
  if (!ok || !anyVector)
    return 1;
  int64_t width = 128 / bits;
  for (MemRefType t : accessed)
    if (ShapedType::isDynamic(t.getShape().back()) || t.getShape().back() % width != 0)
      return 1;
  return domain.back() % width == 0 ? width : 1;
}

/// foldRanges for the `maps.size()` points of a column split's thread: the
/// bodies are cloned once per point, loads indexing their last dim with the
/// kernel's innermost index `inner` read once as a vector and split (a
/// buffer that several sibling reductions read at the same index, once for
/// all of them). Returns the folded values reduction-major: reduction r's
/// point k at r * maps.size() + k.
SmallVector<Value> KernelMapper::foldRangeLanes(ArrayRef<loop::ReduceOp> reduces, Value begin, Value end,
                                                Value step, SmallVector<IRMapping> &maps, Value inner,
                                                int64_t unroll) {
  Location loc = loop::ReduceOp(reduces[0]).getLoc();
  int64_t width = maps.size();
  SmallVector<loop::ReduceKind> kinds;
  SmallVector<Type> types;
  for (loop::ReduceOp reduce : reduces)
    for (int64_t k = 0; k < width; ++k) {
      kinds.push_back(reduce.getKind());
      types.push_back(reduce.getType());
    }
  return foldLanes(kinds, types, begin, end, step, unroll, [&](Value at) -> SmallVector<Value> {
    SmallVector<Value> idx = delinearize(b, loc, at, innerSizes(reduces[0], maps[0]));
    std::map<SmallVector<const void *>, Value> loaded; // (buffer, indices at point 0) -> its vector
    SmallVector<Value> out;
    for (loop::ReduceOp reduce : reduces) {
      Block &body = reduce.getBodyBlock();
      DenseMap<Operation *, Value> vectors;
      for (int64_t k = 0; k < width; ++k) {
        IRMapping &map = maps[k];
        for (auto [arg, i] : llvm::zip(body.getArguments(), idx))
          map.map(arg, i);
        for (Operation &op : body.without_terminator()) {
          auto load = dyn_cast<loop::LoadOp>(op);
          if (width > 1 && load && !load.getIndices().empty() && load.getIndices().back() == inner &&
              load.getType().getIntOrFloatBitWidth() >= 8) {
            if (k == 0) {
              Value mem = map.lookupOrDefault(load.getMemref());
              SmallVector<Value> ix;
              SmallVector<const void *> key{mem.getAsOpaquePointer()};
              for (Value i : load.getIndices()) {
                ix.push_back(map.lookupOrDefault(i));
                key.push_back(ix.back().getAsOpaquePointer());
              }
              auto [it, fresh] = loaded.try_emplace(key, Value());
              if (fresh)
                it->second = vector::LoadOp::create(b, loc, VectorType::get({width}, load.getType()), mem, ix,
                                                    false, llvm::MaybeAlign(16));
              vectors[&op] = it->second;
            }
            map.map(load.getResult(), vector::ExtractOp::create(b, loc, vectors[&op], k));
            continue;
          }
          b.clone(op, map);
        }
        out.push_back(map.lookupOrDefault(body.getTerminator()->getOperand(0)));
      }
    }
    return out;
  });
}

/// Block (chunk, point) of a split row reduction: its threads stride over
/// the chunk (folding every sibling reduction in the one sweep),
/// gpu.all_reduce combines them, thread 0 stores the partials.
void KernelMapper::splitRowPartial(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces, gpu::LaunchOp launch,
                                   ArrayRef<Value> partials, int64_t points, Value chunkLength, Value length,
                                   int64_t threads) {
  Location loc = kernel.getLoc();
  Value block = launch.getBlockIds().x, thread = launch.getThreadIds().x;
  Value chunk = arith::DivUIOp::create(b, loc, block, cIndex(b, loc, points));
  Value point = arith::RemUIOp::create(b, loc, block, cIndex(b, loc, points));
  IRMapping map;
  for (auto [arg, v] : llvm::zip(kernel.getBodyBlock().getArguments(),
                                 delinearize(b, loc, point, kernel.getDomain())))
    map.map(arg, v);
  cloneSweepInputs(kernel, reduces, map);
  Value begin = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, chunk, chunkLength), thread);
  Value end = arith::MinUIOp::create(
      b, loc, arith::MulIOp::create(b, loc, arith::AddIOp::create(b, loc, chunk, cIndex(b, loc, 1)), chunkLength),
      length);
  SmallVector<Value> folded = foldRanges(reduces, begin, end, cIndex(b, loc, threads), map, kUnroll);
  SmallVector<Value> totals;
  for (auto [reduce, partial] : llvm::zip(reduces, folded))
    totals.push_back(allReduce(loop::ReduceOp(reduce), partial));
  Value isFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, cIndex(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, isFirst, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  SmallVector<Value> at{chunk, point};
  for (auto [total, partial] : llvm::zip(totals, partials))
    loop::StoreOp::create(b, loc, total, partial, at);
}

/// Folds the reductions' bodies over the flattened indices [begin, end) by
/// `step` in one sweep (siblings: one domain), each from its kind's identity;
/// returns the folded value of each.
SmallVector<Value> KernelMapper::foldRanges(ArrayRef<loop::ReduceOp> reduces, Value begin, Value end, Value step,
                                            IRMapping &map, int64_t unroll) {
  Location loc = loop::ReduceOp(reduces[0]).getLoc();
  SmallVector<loop::ReduceKind> kinds;
  SmallVector<Type> types;
  for (loop::ReduceOp reduce : reduces) {
    kinds.push_back(reduce.getKind());
    types.push_back(reduce.getType());
  }
  return foldLanes(kinds, types, begin, end, step, unroll, [&](Value at) -> SmallVector<Value> {
    SmallVector<Value> idx = delinearize(b, loc, at, innerSizes(reduces[0], map));
    SmallVector<Value> out;
    for (loop::ReduceOp reduce : reduces)
      out.push_back(cloneBody(b, reduce.getBodyBlock(), idx, map)[0]);
    return out;
  });
}

/// Folds `reduce`'s body over the flattened indices [begin, end) by `step`,
/// starting from the kind's identity; returns the folded value.
Value KernelMapper::foldRange(loop::ReduceOp reduce, Value begin, Value end, Value step, IRMapping &map,
                              int64_t unroll) {
  return foldRanges({reduce}, begin, end, step, map, unroll)[0];
}

SmallVector<Value> KernelMapper::foldLanes(loop::ReduceKind kind, Type type, Value begin, Value end, Value step,
                                           int64_t unroll, int64_t lanes,
                                           function_ref<SmallVector<Value>(Value)> at) {
  return foldLanes(SmallVector<loop::ReduceKind>(lanes, kind), SmallVector<Type>(lanes, type), begin, end, step,
                   unroll, at);
}

/// Folds one value a lane over [begin, end) by `step` (`at` builds a point's
/// values, one per lane; lane l combined with kinds[l], from its identity).
/// With `unroll`, a main loop takes `unroll` points a step into as many
/// accumulators a lane, so that each thread has that many loads in flight (a
/// memory-bound sweep needs them), and a second loop takes the rest one at a
/// time; the accumulators are combined at the end.
SmallVector<Value> KernelMapper::foldLanes(ArrayRef<loop::ReduceKind> kinds, TypeRange types, Value begin,
                                           Value end, Value step, int64_t unroll,
                                           function_ref<SmallVector<Value>(Value)> at) {
  Location loc = begin.getLoc();
  int64_t lanes = kinds.size();
  SmallVector<Value> inits;
  for (auto [kind, type] : llvm::zip(kinds, types))
    inits.push_back(arith::ConstantOp::create(b, loc, loop::reduceIdentity(b, kind, type)));
  Value mainEnd = begin;
  SmallVector<Value> accs(inits);
  if (unroll > 1) {
    Value span = arith::MulIOp::create(b, loc, step, cIndex(b, loc, unroll));
    Value len = arith::MaxSIOp::create(b, loc, arith::SubIOp::create(b, loc, end, begin), cIndex(b, loc, 0));
    mainEnd = arith::AddIOp::create(
        b, loc, begin, arith::MulIOp::create(b, loc, arith::DivSIOp::create(b, loc, len, span), span));
    SmallVector<Value> mainInits;
    for (int64_t k = 0; k < unroll; ++k)
      mainInits.append(inits);
    auto main = scf::ForOp::create(b, loc, begin, mainEnd, span, mainInits);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(main.getBody());
      SmallVector<Value> folded;
      for (int64_t k = 0; k < unroll; ++k) {
        Value i = arith::AddIOp::create(b, loc, main.getInductionVar(),
                                        arith::MulIOp::create(b, loc, step, cIndex(b, loc, k)));
        SmallVector<Value> vals = at(i);
        for (int64_t l = 0; l < lanes; ++l)
          folded.push_back(loop::reduceCombine(b, loc, kinds[l], main.getRegionIterArgs()[k * lanes + l], vals[l]));
      }
      scf::YieldOp::create(b, loc, folded);
    }
    accs.assign(main.getResults().begin(), main.getResults().end());
  }
  auto fold = scf::ForOp::create(b, loc, mainEnd, end, step, ValueRange(accs).take_front(lanes));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(fold.getBody());
    SmallVector<Value> vals = at(fold.getInductionVar()), folded;
    for (int64_t l = 0; l < lanes; ++l)
      folded.push_back(loop::reduceCombine(b, loc, kinds[l], fold.getRegionIterArgs()[l], vals[l]));
    scf::YieldOp::create(b, loc, folded);
  }
  SmallVector<Value> totals;
  for (int64_t l = 0; l < lanes; ++l) {
    Value total = fold.getResult(l);
    for (size_t k = 1; k * lanes < accs.size(); ++k)
      total = loop::reduceCombine(b, loc, kinds[l], total, accs[k * lanes + l]);
    totals.push_back(total);
  }
  return totals;
}

/// gpu.all_reduce of `partial` across the block (every thread gets it).
/// Warp shuffles move 32-bit words, so narrower values are reduced wider:
/// integers as i32 (sign extension keeps max and min, and the low bits of
/// a 32-bit sum or product are the narrow one's), f16 and bf16 as f32 (max
/// and min exact; sums rounded once at the end).
Value KernelMapper::allReduce(loop::ReduceOp reduce, Value partial) {
  Location loc = reduce.getLoc();
  Type type = reduce.getType(), wide = type;
  if (type.getIntOrFloatBitWidth() < 32) {
    wide = isa<FloatType>(type) ? (Type)b.getF32Type() : (Type)b.getI32Type();
    partial = isa<FloatType>(type) ? (Value)arith::ExtFOp::create(b, loc, wide, partial)
                                   : (Value)arith::ExtSIOp::create(b, loc, wide, partial);
  }
  Value total = gpu::AllReduceOp::create(
      b, loc, wide, partial,
      gpu::AllReduceOperationAttr::get(b.getContext(), allReduceKind(reduce.getKind(), wide)),
      b.getUnitAttr());
  if (wide == type)
    return total;
  return isa<FloatType>(type) ? (Value)arith::TruncFOp::create(b, loc, type, total)
                              : (Value)arith::TruncIOp::create(b, loc, type, total);
}

/// Each thread folds a strided slice of the domain; gpu.all_reduce
/// combines the partials across the block and gives every thread the total.
Value KernelMapper::blockReduce(loop::ReduceOp reduce, Value thread, int64_t threads, IRMapping &map) {
  Location loc = reduce.getLoc();
  Value partial = foldRange(reduce, thread, productValue(b, loc, innerSizes(reduce, map)),
                            cIndex(b, loc, threads), map);
  return allReduce(reduce, partial);
}

/// A row in registers (ResidentRow): each thread's points, unrolled; the row's loads read once,
/// a vector at a time where the row's width allows (its stores too).
struct Resident {
  KernelMapper &m;
  ResidentRow row;
  SmallVector<SmallVector<Value>> points; // per point of the thread, its inner indices
  SmallVector<Value> valid;               // per point, whether it is in the row (null: always)
  llvm::DenseSet<Value> written;          // buffers the kernel stores to: read afresh each time
  llvm::DenseSet<Value> readBack;         // ... and loads: their stores keep program order
  std::map<SmallVector<const void *>, Value> loaded;
  DenseMap<Operation *, SmallVector<Value>> pending; // a vector store's values, lane by lane

  Resident(KernelMapper &m, loop::KernelOp kernel, const ResidentRow &row, Value thread,
           int64_t threads)
      : m(m), row(row) {
    OpBuilder &b = m.b;
    Location loc = kernel.getLoc();
    int64_t groups = product(row.domain) / row.width;
    kernel.walk([&](loop::StoreOp s) { written.insert(s.getMemref()); });
    kernel.walk([&](loop::LoadOp l) {
      if (written.contains(l.getMemref()))
        readBack.insert(l.getMemref());
    });
    for (int64_t s = 0; s < row.slots; ++s) {
      Value group = arith::AddIOp::create(b, loc, thread, cIndex(b, loc, s * threads));
      Value in; // null where every thread's group is in the row
      if ((s + 1) * threads > groups) {
        in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, group, cIndex(b, loc, groups));
        group = arith::SelectOp::create(b, loc, in, group, cIndex(b, loc, 0));
      }
      Value first = row.width > 1 ? arith::MulIOp::create(b, loc, group, cIndex(b, loc, row.width)) : group;
      SmallVector<Value> lane0 = delinearize(b, loc, first, row.domain);
      for (int64_t j = 0; j < row.width; ++j) {
        SmallVector<Value> idx = lane0;
        if (j > 0)
          idx.back() = arith::AddIOp::create(b, loc, lane0.back(), cIndex(b, loc, j));
        valid.push_back(in);
        points.push_back(idx);
      }
    }
  }

  /// `access`'s indices at the first lane of point k's vector.
  SmallVector<Value> vectorIndices(OperandRange indices, int64_t k, IRMapping &map) {
    SmallVector<Value> at;
    for (Value i : indices.drop_back())
      at.push_back(map.lookupOrDefault(i));
    at.push_back(points[k - k % row.width].back());
    return at;
  }

  /// The body at point k; loads of buffers the kernel does not write come from the first read.
  SmallVector<Value> clonePoint(Block &body, int64_t k, IRMapping &map) {
    OpBuilder &b = m.b;
    int64_t lane = k % row.width;
    for (auto [arg, idx] : llvm::zip(body.getArguments(), points[k]))
      map.map(arg, idx);
    for (Operation &op : body.without_terminator()) {
      bool vector = row.width > 1 && isRowVectorAccess(&op, body, row.width);
      if (auto store = dyn_cast<loop::StoreOp>(op); store && readBack.contains(store.getMemref()))
        vector = false;
      if (auto load = dyn_cast<loop::LoadOp>(op)) {
        Value mem = map.lookupOrDefault(load.getMemref());
        if (!written.contains(mem)) {
          SmallVector<Value> at = vector ? vectorIndices(load.getIndices(), k, map) : SmallVector<Value>();
          SmallVector<const void *> key{mem.getAsOpaquePointer(), vector ? &row : nullptr};
          for (Value i : vector ? ValueRange(at) : ValueRange(load.getIndices()))
            key.push_back(map.lookupOrDefault(i).getAsOpaquePointer());
          auto [it, fresh] = loaded.try_emplace(key, Value());
          if (fresh)
            it->second = vector ? Value(vector::LoadOp::create(b, op.getLoc(),
                                                               VectorType::get({row.width}, load.getType()),
                                                               mem, at, false, llvm::MaybeAlign(16)))
                                : b.clone(op, map)->getResult(0);
          map.map(load.getResult(),
                  vector ? vector::ExtractOp::create(b, op.getLoc(), it->second, lane).getResult() : it->second);
          continue;
        }
      }
      if (auto store = dyn_cast<loop::StoreOp>(op)) {
        if (vector && lane + 1 < row.width) { // the lanes' values go out together at the last lane
          pending[&op].push_back(map.lookupOrDefault(store.getValue()));
          continue;
        }
        OpBuilder::InsertionGuard g(b);
        if (valid[k]) {
          auto guard = scf::IfOp::create(b, op.getLoc(), valid[k], /*withElseRegion=*/false);
          b.setInsertionPointToStart(&guard.getThenRegion().front());
        }
        if (vector) {
          SmallVector<Value> lanes = std::move(pending[&op]);
          pending.erase(&op);
          lanes.push_back(map.lookupOrDefault(store.getValue()));
          Value vec = vector::FromElementsOp::create(
              b, op.getLoc(), VectorType::get({row.width}, store.getValue().getType()), lanes);
          vector::StoreOp::create(b, op.getLoc(), vec, map.lookupOrDefault(store.getMemref()),
                                  vectorIndices(store.getIndices(), k, map), false, llvm::MaybeAlign(16));
        } else {
          b.clone(op, map);
        }
        continue;
      }
      b.clone(op, map);
    }
    SmallVector<Value> yielded;
    for (Value v : body.getTerminator()->getOperands())
      yielded.push_back(map.lookupOrDefault(v));
    return yielded;
  }

  /// The thread's points folded in order (as the strided loop does), then across the block.
  Value reduce(loop::ReduceOp reduce, IRMapping &map) {
    OpBuilder &b = m.b;
    Location loc = reduce.getLoc();
    Value partial =
        arith::ConstantOp::create(b, loc, loop::reduceIdentity(b, reduce.getKind(), reduce.getType()));
    for (int64_t k = 0; k < row.perThread; ++k) {
      Value v = clonePoint(reduce.getBodyBlock(), k, map)[0];
      Value next = loop::reduceCombine(b, loc, reduce.getKind(), partial, v);
      partial = valid[k] ? arith::SelectOp::create(b, loc, valid[k], next, partial) : next;
    }
    return m.allReduce(reduce, partial);
  }

  void sweep(loop::ForOp forLoop, IRMapping &map) {
    for (int64_t k = 0; k < row.perThread; ++k)
      clonePoint(forLoop.getBodyBlock(), k, map);
  }
};

/// A block-strided loop over the domain.
void KernelMapper::blockFor(loop::ForOp forLoop, Value thread, int64_t threads, IRMapping &map) {
  Location loc = forLoop.getLoc();
  auto forOp = scf::ForOp::create(b, loc, thread, productValue(b, loc, innerSizes(forLoop, map)),
                                  cIndex(b, loc, threads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forOp.getBody());
  SmallVector<Value> idx = delinearize(b, loc, forOp.getInductionVar(), innerSizes(forLoop, map));
  cloneBody(b, forLoop.getBodyBlock(), idx, map);
}
/// The body of a row kernel in `launch`: a block per row (the block index
/// delinearized over `domain`), each loop.reduce a block reduction (or the
/// row in registers), each loop.for a block-strided loop.
void KernelMapper::rowBody(loop::KernelOp kernel, gpu::LaunchOp launch, ArrayRef<OpFoldResult> domain,
                           int64_t threads, bool allowResident) {
  Location loc = kernel.getLoc();
  Value block = launch.getBlockIds().x, thread = launch.getThreadIds().x;
  IRMapping map;
  SmallVector<Value> idx = delinearize(b, loc, block, domain);
  for (auto [arg, v] : llvm::zip(kernel.getBodyBlock().getArguments(), idx))
    map.map(arg, v);
  std::optional<Resident> resident;
  if (allowResident)
    if (std::optional<ResidentRow> row = residentRow(kernel, threads))
      resident.emplace(*this, kernel, *row, thread, threads);
  for (Operation &op : kernel.getBodyBlock().without_terminator()) {
    if (auto reduce = dyn_cast<loop::ReduceOp>(op))
      map.map(reduce.getResult(), resident ? resident->reduce(reduce, map)
                                           : blockReduce(reduce, thread, threads, map));
    else if (auto forOp = dyn_cast<loop::ForOp>(op))
      resident ? resident->sweep(forOp, map) : blockFor(forOp, thread, threads, map);
    else
      b.clone(op, map);
  }
}

} // namespace dyn::loop_to_gpu
