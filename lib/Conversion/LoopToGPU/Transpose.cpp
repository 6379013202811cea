//===- Transpose.cpp - tiled transposes on the GPU -------------------------===//
//
// Pointwise kernels that permute their input (NCHW <-> NHWC): a block moves a
// tile of a batched 2-D transpose through shared memory, reading rows of the
// input and writing rows of the output, both coalesced.
//
//===----------------------------------------------------------------------===//
#include "Mapping.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace dyn;

namespace dyn::loop_to_gpu {

namespace {
// Transposes with fewer points keep the pointwise mapping.
constexpr int64_t kMinTransposePoints = 1 << 16;
constexpr int64_t kTile = 32;
} // namespace

/// A static pointwise kernel whose one store writes the domain in order and
/// whose loads all read it permuted as [batch..., A..., B...] where the domain
/// is [batch..., B..., A...] (NCHW -> NHWC: B = H x W, A = C): a batched 2-D
/// transpose of [A, B] into [B, A].
std::optional<TransposePlan> KernelMapper::transposePlan(loop::KernelOp kernel) {
  ArrayRef<int64_t> domain = kernel.getDomain();
  Block &body = kernel.getBodyBlock();
  int64_t r = domain.size();
  if (r < 2 || product(domain) < kMinTransposePoints)
    return std::nullopt;
  SmallVector<int64_t> perm;
  int stores = 0;
  for (Operation &op : body.without_terminator()) {
    if (auto store = dyn_cast<loop::StoreOp>(op)) {
      ++stores;
      if (store.getIndices().size() != (size_t)r)
        return std::nullopt;
      for (int64_t d = 0; d < r; ++d)
        if (store.getIndices()[d] != body.getArgument(d))
          return std::nullopt;
      continue;
    }
    if (auto load = dyn_cast<loop::LoadOp>(op)) {
      if (load.getIndices().size() != (size_t)r)
        return std::nullopt;
      SmallVector<int64_t> p;
      for (Value i : load.getIndices()) {
        auto arg = dyn_cast<BlockArgument>(i);
        if (!arg || arg.getOwner() != &body)
          return std::nullopt;
        p.push_back(arg.getArgNumber());
      }
      if (!perm.empty() && p != perm)
        return std::nullopt;
      perm = p;
      continue;
    }
    if (op.getNumRegions() || !isPure(&op))
      return std::nullopt;
  }
  if (stores != 1 || perm.empty())
    return std::nullopt;
  // The load's innermost run of domain dims [s..m].
  int64_t m = perm[r - 1], p = r - 1;
  while (p > 0 && perm[p - 1] == perm[p] - 1)
    --p;
  int64_t s = perm[p];
  if (m == r - 1)
    return std::nullopt;
  // Positions before the run: the batch dims 0..s-1 in order, then A = m+1..r-1.
  if (p != s + (r - 1 - m))
    return std::nullopt;
  for (int64_t q = 0; q < s; ++q)
    if (perm[q] != q)
      return std::nullopt;
  for (int64_t q = s; q < p; ++q)
    if (perm[q] != m + 1 + (q - s))
      return std::nullopt;
  TransposePlan plan;
  plan.batchDims = s;
  plan.bDims = m - s + 1;
  plan.batch = product(domain.take_front(s));
  plan.bSize = product(domain.slice(s, m - s + 1));
  plan.a = product(domain.drop_front(m + 1));
  if (plan.a < 2 || plan.bSize < 2)
    return std::nullopt;
  return plan;
}

/// A block per tile of TA x TB (32 x 32; or all of a dim under 32 by a
/// multiple of 32 of the other, ~1024 points), 256 threads: each thread loads
/// its points of the tile (consecutive threads along B, the input's
/// contiguous dim) into shared memory [TA][TB | 1] (an odd row: no bank
/// conflicts either way), a barrier, then stores them along A (the output's
/// contiguous dim). Points outside a ragged last tile are skipped.
LogicalResult KernelMapper::tiledTranspose(loop::KernelOp kernel, const TransposePlan &plan) {
  Location loc = kernel.getLoc();
  ArrayRef<int64_t> domain = kernel.getDomain();
  Block &body = kernel.getBodyBlock();
  auto store = *body.getOps<loop::StoreOp>().begin();
  Type elem = store.getValue().getType();
  int64_t ta = kTile, tb = kTile;
  if (plan.a < kTile) {
    ta = plan.a;
    tb = kTile * ((kTile + plan.a - 1) / plan.a);
  } else if (plan.bSize < kTile) {
    tb = plan.bSize;
    ta = kTile * ((kTile + plan.bSize - 1) / plan.bSize);
  }
  int64_t stride = tb | 1, threads = 256, tile = ta * tb;
  int64_t perThread = (tile + threads - 1) / threads;
  int64_t tilesA = (plan.a + ta - 1) / ta, tilesB = (plan.bSize + tb - 1) / tb;
  int64_t blocks = plan.batch * tilesA * tilesB;
  if (blocks > 0x7fffffff)
    return kernel.emitOpError("needs more than 2^31 blocks");
  bool ragged = plan.a % ta || plan.bSize % tb;
  ArrayRef<int64_t> batchSizes = domain.take_front(plan.batchDims);
  ArrayRef<int64_t> bSizes = domain.slice(plan.batchDims, plan.bDims);
  ArrayRef<int64_t> aSizes = domain.drop_front(plan.batchDims + plan.bDims);

  b.setInsertionPoint(kernel);
  auto shared = MemRefType::get({ta, stride}, elem, MemRefLayoutAttrInterface(),
                                gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
  Value one = cIndex(b, loc, 1);
  auto launch = gpu::LaunchOp::create(b, loc, cIndex(b, loc, blocks), one, one, cIndex(b, loc, threads), one,
                                      one, /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
                                      /*asyncDependencies=*/ValueRange(), TypeRange{shared});
  launch->setAttr("dyn.kernel", kernel.getNameAttr());
  b.setInsertionPointToStart(&launch.getBody().front());
  Value tileMem = launch.getWorkgroupAttributions()[0];
  Value block = launch.getBlockIds().x, thread = launch.getThreadIds().x;
  Value tileA = arith::RemUIOp::create(b, loc, block, cIndex(b, loc, tilesA));
  Value rest = arith::DivUIOp::create(b, loc, block, cIndex(b, loc, tilesA));
  Value tileB = arith::RemUIOp::create(b, loc, rest, cIndex(b, loc, tilesB));
  Value batch = arith::DivUIOp::create(b, loc, rest, cIndex(b, loc, tilesB));
  SmallVector<Value> batchIdx = plan.batchDims ? delinearize(b, loc, batch, batchSizes) : SmallVector<Value>();
  Value a0 = arith::MulIOp::create(b, loc, tileA, cIndex(b, loc, ta));
  Value b0 = arith::MulIOp::create(b, loc, tileB, cIndex(b, loc, tb));

  // The point (ai, bi) of the tile: its domain indices and whether it is in range.
  auto at = [&](Value ai, Value bi) -> std::pair<SmallVector<Value>, Value> {
    Value ga = arith::AddIOp::create(b, loc, a0, ai), gb = arith::AddIOp::create(b, loc, b0, bi);
    SmallVector<Value> idx(batchIdx);
    llvm::append_range(idx, delinearize(b, loc, gb, bSizes));
    llvm::append_range(idx, delinearize(b, loc, ga, aSizes));
    Value in;
    if (ragged)
      in = arith::AndIOp::create(
          b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ga, cIndex(b, loc, plan.a)),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, gb, cIndex(b, loc, plan.bSize)));
    return {idx, in};
  };
  // Each of the thread's points of the tile: e = thread + k x threads.
  auto forPoints = [&](bool alongB) {
    for (int64_t k = 0; k < perThread; ++k) {
      OpBuilder::InsertionGuard guard(b);
      Value e = arith::AddIOp::create(b, loc, thread, cIndex(b, loc, k * threads));
      if ((k + 1) * threads > tile) {
        auto inTile = scf::IfOp::create(
            b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, e, cIndex(b, loc, tile)), false);
        b.setInsertionPointToStart(&inTile.getThenRegion().front());
      }
      Value ai, bi;
      if (alongB) {
        ai = arith::DivUIOp::create(b, loc, e, cIndex(b, loc, tb));
        bi = arith::RemUIOp::create(b, loc, e, cIndex(b, loc, tb));
      } else {
        bi = arith::DivUIOp::create(b, loc, e, cIndex(b, loc, ta));
        ai = arith::RemUIOp::create(b, loc, e, cIndex(b, loc, ta));
      }
      auto [idx, in] = at(ai, bi);
      if (in) {
        auto guard2 = scf::IfOp::create(b, loc, in, false);
        b.setInsertionPointToStart(&guard2.getThenRegion().front());
      }
      IRMapping map;
      for (auto [arg, v] : llvm::zip(body.getArguments(), idx))
        map.map(arg, v);
      if (alongB) {
        for (Operation &op : body.without_terminator())
          if (!isa<loop::StoreOp>(op))
            b.clone(op, map);
        memref::StoreOp::create(b, loc, map.lookupOrDefault(store.getValue()), tileMem, ValueRange{ai, bi});
      } else {
        Value v = memref::LoadOp::create(b, loc, tileMem, ValueRange{ai, bi});
        SmallVector<Value> sidx;
        for (Value i : store.getIndices())
          sidx.push_back(map.lookupOrDefault(i));
        loop::StoreOp::create(b, loc, v, store.getMemref(), sidx);
      }
    }
  };
  forPoints(/*alongB=*/true);
  gpu::BarrierOp::create(b, loc);
  forPoints(/*alongB=*/false);
  gpu::TerminatorOp::create(b, loc);
  kernel.erase();
  return success();
}

} // namespace dyn::loop_to_gpu
