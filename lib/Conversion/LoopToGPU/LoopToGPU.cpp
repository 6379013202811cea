//===- LoopToGPU.cpp - map loop kernels onto GPU launches ----------------===//
//
// The pass dyn-convert-loop-to-gpu: one loop.kernel becomes one gpu.launch
// whose geometry fits the kernel (docs/gpu.md). This file dispatches static
// kernels to their mapping and holds the pointwise ones (a thread per point,
// several points a thread, 16-byte vectors); row kernels and split
// reductions are in Reductions.cpp, tiled transposes in Transpose.cpp,
// kernels with `?` dims in Dynamic.cpp. Library calls (GEMMs, convolutions,
// attention) stay in the host function.
//
//===----------------------------------------------------------------------===//
#include "Mapping.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace dyn {
#define GEN_PASS_DEF_CONVERTLOOPTOGPUPASS
#include "dyn/Conversion/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;
using namespace dyn::loop_to_gpu;

/// The launch's global thread index; builds `if (index < bound)` and moves
/// the builder into it. Returns the index and the guard.
std::pair<Value, scf::IfOp> KernelMapper::guardedThreadIndex(gpu::LaunchOp launch, int64_t threads,
                                               int64_t bound) {
  return guardedThreadIndex(launch, threads, OpFoldResult(b.getIndexAttr(bound)));
}
/// The same with a bound known at run time (a `?` domain's point count).
std::pair<Value, scf::IfOp> KernelMapper::guardedThreadIndex(gpu::LaunchOp launch, int64_t threads,
                                               OpFoldResult bound) {
  Location loc = launch.getLoc();
  Value index = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, cIndex(b, loc, threads)),
      launch.getThreadIds().x);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index, sizeValue(b, loc, bound));
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  return {index, guard};
}

LogicalResult KernelMapper::map(loop::KernelOp kernel) {
  hoistLoads(kernel);
  if (!hasStaticDomains(kernel))
    return mapDynamic(kernel);
  Location loc = kernel.getLoc();
  ArrayRef<int64_t> domain = kernel.getDomain();
  int64_t points = product(domain);
  b.setInsertionPoint(kernel);
  if (points == 0) {
    kernel.erase();
    return success();
  }
  bool hasInner = llvm::any_of(kernel.getBodyBlock(), [](Operation &op) {
    return isa<loop::ForOp, loop::ReduceOp>(op);
  });
  bool byRow = hasInner && rowsAreContiguous(kernel);
  if (hasInner)
    if (SmallVector<loop::ReduceOp> reduces = splittableReduces(kernel, byRow); !reduces.empty())
      return splitReduce(kernel, reduces, byRow);
  int64_t innerPoints = 1;
  for (Operation &op : kernel.getBodyBlock())
    if (isa<loop::ForOp, loop::ReduceOp>(op))
      innerPoints = std::max(innerPoints, product(innerDomain(&op)));
  // Strided rows with a write pass (a norm or softmax over the channels of
  // an NCHW tensor: convnext's LayerNorm after a permute) over too few
  // points to fill the GPU with a thread each: a block per row all the
  // same. Its reads are strided, but the neighbouring rows' blocks read the
  // rest of each sector while it is in L2, and the write pass stores
  // contiguous rows; a thread per point would run each row serially on a
  // few hundred threads (convnext_tiny's last stage: 392 rows of 768, 0.24
  // ms a kernel on an H100). Plain reductions over a leading dim keep a
  // thread per point (coalesced) or the split above.
  bool hasFor = llvm::any_of(kernel.getBodyBlock(), [](Operation &op) { return isa<loop::ForOp>(op); });
  if (hasFor && !byRow && points < fillThreads / 4 && innerPoints >= kMinRow)
    byRow = true;
  int64_t threads = byRow ? rowThreads(kernel, innerPoints) : threadsPerBlock;
  // Pointwise kernels that tile evenly give each thread several points, a
  // block apart, with all their loads issued before any store: more bytes
  // in flight per thread, which is what a memory-bound kernel needs.
  // Trigonometry (libdevice's sinf/cosf with their slow range-reduction
  // path) keeps one point a thread where it cannot take vectors: measured
  // on an H100, cos(x)+sin(y) ran at 73% of copy bandwidth with one point a
  // thread and 64% with four a block apart (each point's loads waited on
  // the previous point's math then).
  bool hasTrig = false;
  kernel.walk([&](Operation *op) { hasTrig |= isa<math::SinOp, math::CosOp, math::TanOp>(op); });
  // A kernel that reads back a buffer it writes (a merged kernel's later value reading an earlier one's)
  // keeps each point's loads after that point's stores: one point a thread, in program order. An update
  // in place (dyn-reuse-buffers: a batch norm backward's input gradient written over the gradient it
  // reads) loads the buffer only before storing it, at the very point it stores: each thread reads its
  // own points before writing them, so it takes vectors and several points like any kernel (one point a
  // thread held such kernels at 2.9 TB/s on an H200).
  DenseMap<Value, loop::StoreOp> storeOf; // memref -> its store (a memref stored twice: nullptr)
  kernel.walk([&](loop::StoreOp st) {
    auto [it, fresh] = storeOf.try_emplace(st.getMemref(), st);
    if (!fresh)
      it->second = nullptr;
  });
  bool readsBack = false;
  kernel.walk([&](loop::LoadOp ld) {
    auto it = storeOf.find(ld.getMemref());
    if (it == storeOf.end())
      return;
    loop::StoreOp st = it->second;
    bool inPlace = st && ld->getBlock() == st->getBlock() && ld->isBeforeInBlock(st) &&
                   llvm::equal(ld.getIndices(), st.getIndices());
    readsBack |= !inPlace;
  });
  int64_t perThread =
      (!hasInner && !hasTrig && !readsBack && points % (threads * kPointsPerThread) == 0) ? kPointsPerThread : 1;
  if (!hasInner && !readsBack)
    if (std::optional<TransposePlan> plan = transposePlan(kernel))
      return tiledTranspose(kernel, *plan);
  if (!hasInner && !readsBack)
    if (int64_t width = vectorWidth(kernel); width > 1)
      return vectorize(kernel, width);
  int64_t blocks = byRow ? points : (points + threads * perThread - 1) / (threads * perThread);
  if (blocks > 0x7fffffff)
    return kernel.emitOpError("needs more than 2^31 blocks");
  Value one = cIndex(b, loc, 1);
  auto launch = gpu::LaunchOp::create(b, loc, cIndex(b, loc, blocks), one, one,
                                      cIndex(b, loc, threads), one, one);
  launch->setAttr("dyn.kernel", kernel.getNameAttr());
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  Value block = launch.getBlockIds().x, thread = launch.getThreadIds().x;
  IRMapping map;
  if (byRow) {
    SmallVector<OpFoldResult> sizes;
    for (int64_t d : domain)
      sizes.push_back(b.getIndexAttr(d));
    rowBody(kernel, launch, sizes, threads, /*allowResident=*/true);
  } else if (perThread > 1) {
    Value base = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, block, cIndex(b, loc, threads * perThread)),
        thread);
    SmallVector<IRMapping> maps(perThread);
    SmallVector<Operation *> stores;
    for (int64_t k = 0; k < perThread; ++k) {
      Value linear = arith::AddIOp::create(b, loc, base, cIndex(b, loc, k * threads));
      SmallVector<Value> idx = delinearize(b, loc, linear, domain);
      for (auto [arg, v] : llvm::zip(kernel.getBodyBlock().getArguments(), idx))
        maps[k].map(arg, v);
      for (Operation &op : kernel.getBodyBlock().without_terminator()) {
        if (!isa<loop::StoreOp>(op))
          b.clone(op, maps[k]);
        else if (k == 0)
          stores.push_back(&op);
      }
    }
    for (int64_t k = 0; k < perThread; ++k)
      for (Operation *store : stores)
        b.clone(*store, maps[k]);
  } else {
    auto [linear, guard] = guardedThreadIndex(launch, threads, points);
    SmallVector<Value> idx = delinearize(b, loc, linear, domain);
    cloneBody(b, kernel.getBodyBlock(), idx, map);
    b.setInsertionPointAfter(guard);
  }
  gpu::TerminatorOp::create(b, loc);
  kernel.erase();
  return success();
}


/// A pointwise kernel moving `width` consecutive points a thread with one
/// 16-byte load per moving input and one 16-byte store per output; the
/// scalar work is cloned per point. Buffers must be 16-byte aligned (the
/// runtime guarantees it).
/// With `points` (the kernel's point count, a value of the host: a `?`
/// domain), the groups and the grid are computed at run time.
LogicalResult KernelMapper::vectorize(loop::KernelOp kernel, int64_t width, Value points) {
  Location loc = kernel.getLoc();
  ArrayRef<int64_t> domain = kernel.getDomain();
  Block &body = kernel.getBodyBlock();
  BlockArgument inner = body.getArguments().back();
  int64_t threads = threadsPerBlock;
  int64_t groups = points ? 0 : product(domain) / width;
  Value one = cIndex(b, loc, 1);
  Value groupCount, grid;
  if (points) { // the innermost dim is a constant multiple of the width
    groupCount = arith::DivUIOp::create(b, loc, points, cIndex(b, loc, width));
    grid = arith::CeilDivUIOp::create(b, loc, groupCount, cIndex(b, loc, threads));
  } else {
    grid = cIndex(b, loc, (groups + threads - 1) / threads);
  }
  auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, cIndex(b, loc, threads), one, one);
  launch->setAttr("dyn.kernel", kernel.getNameAttr());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  auto [group, ifOp] = points ? guardedThreadIndex(launch, threads, OpFoldResult(groupCount))
                              : guardedThreadIndex(launch, threads, groups);
  Value first = arith::MulIOp::create(b, loc, group, cIndex(b, loc, width));
  SmallVector<Value> idx = points ? delinearize(b, loc, first, kernel.getMixedDomain())
                                  : delinearize(b, loc, first, domain);
  DenseMap<Operation *, Value> vectors;                      // moving load -> its vector
  DenseMap<Operation *, SmallVector<Value>> storedValues;     // store -> value per point
  DenseMap<Operation *, SmallVector<Value>> storeIndices;     // store -> point-0 indices
  SmallVector<Operation *> stores;
  for (int64_t k = 0; k < width; ++k) {
    IRMapping map;
    for (auto [arg, v] : llvm::zip(body.getArguments(), idx))
      map.map(arg, v);
    if (k > 0)
      map.map(inner, arith::AddIOp::create(b, loc, idx.back(), cIndex(b, loc, k)));
    for (Operation &op : body.without_terminator()) {
      if (auto load = dyn_cast<loop::LoadOp>(op);
          load && !load.getIndices().empty() && load.getIndices().back() == inner) {
        if (k == 0) {
          SmallVector<Value> at;
          for (Value i : load.getIndices())
            at.push_back(map.lookupOrDefault(i));
          auto type = VectorType::get({width}, load.getType());
          vectors[&op] = vector::LoadOp::create(b, loc, type, load.getMemref(), at, false,
                                                llvm::MaybeAlign(16));
        }
        map.map(load.getResult(), vector::ExtractOp::create(b, loc, vectors[&op], k));
      } else if (auto store = dyn_cast<loop::StoreOp>(op)) {
        if (k == 0) {
          stores.push_back(&op);
          for (Value i : store.getIndices())
            storeIndices[&op].push_back(map.lookupOrDefault(i));
        }
        storedValues[&op].push_back(map.lookupOrDefault(store.getValue()));
      } else {
        b.clone(op, map);
      }
    }
  }
  for (Operation *op : stores) {
    auto store = cast<loop::StoreOp>(op);
    auto type = VectorType::get({width}, store.getValue().getType());
    Value vec = vector::FromElementsOp::create(b, loc, type, storedValues[op]);
    vector::StoreOp::create(b, loc, vec, store.getMemref(), storeIndices[op], false,
                            llvm::MaybeAlign(16));
  }
  b.setInsertionPointAfter(ifOp);
  gpu::TerminatorOp::create(b, loc);
  kernel.erase();
  return success();
}

namespace {

struct ConvertLoopToGPUPass : dyn::impl::ConvertLoopToGPUPassBase<ConvertLoopToGPUPass> {
  using ConvertLoopToGPUPassBase::ConvertLoopToGPUPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Library calls stay where they are: the launch plan runs them between the launches.
    // NVPTX has no f80, f128 or tf32 arithmetic (LLVM aborts selecting it).
    bool failedAny = false;
    module.walk([&](loop::KernelOp k) {
      k.walk([&](Operation *op) {
        for (Type t : op->getResultTypes())
          if (!t.isIndex() && !isa<VectorType>(t) && !isGpuScalar(t)) {
            op->emitOpError() << "computes in " << t << ", which the GPU lowering does not support";
            failedAny = true;
            return WalkResult::interrupt();
          }
        return WalkResult::advance();
      });
    });
    if (failedAny)
      return signalPassFailure();
    SmallVector<loop::KernelOp> kernels;
    module.walk([&](loop::KernelOp k) { kernels.push_back(k); });
    if (kernels.empty())
      return;
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(&getContext()));
    OpBuilder b(&getContext());
    KernelMapper mapper{b, threadsPerBlock, smCount * threadsPerSm, smCount * (threadsPerSm / 256)};
    for (loop::KernelOp k : kernels)
      if (failed(mapper.map(k)))
        return signalPassFailure();
    // f32 square roots correctly rounded, as eager's CUDA kernels (nvcc's
    // default -prec-sqrt) compute them: libdevice's __nv_sqrtf, which the NVVM
    // lowering would call, is sqrt.approx unless __CUDA_PREC_SQRT is reflected
    // as 1, which LLVM sets only from a command-line option. The NVVM
    // intrinsic is sqrt.rn.f32 (llvm.intr.sqrt is illegal in that lowering).
    module.walk([&](gpu::LaunchOp launch) {
      launch.walk([&](math::SqrtOp sqrt) {
        if (!sqrt.getType().isF32())
          return;
        b.setInsertionPoint(sqrt);
        sqrt.replaceAllUsesWith(LLVM::CallIntrinsicOp::create(
                                    b, sqrt.getLoc(), sqrt.getType(),
                                    b.getStringAttr("llvm.nvvm.sqrt.rn.f"), sqrt.getOperand())
                                    .getResult(0));
        sqrt.erase();
      });
    });
    // Outlined kernels are named after their loop kernels ("dyn_add_5"), so
    // that profiles say which kernel is which (outlining uniquifies modules).
    module.walk([&](gpu::LaunchOp launch) {
      auto name = launch->getAttrOfType<StringAttr>("dyn.kernel");
      if (!name)
        return;
      std::string symbol = ("dyn_" + name.getValue()).str();
      for (char &c : symbol) // a PTX identifier
        if (!llvm::isAlnum(c) && c != '_')
          c = '_';
      launch.setFunctionAttr(FlatSymbolRefAttr::get(&getContext(), symbol));
      // One kernel module per host function: the NVPTX backend and libdevice
      // run once for all its kernels, not once per kernel.
      auto host = launch->getParentOfType<func::FuncOp>();
      launch.setModuleAttr(
          FlatSymbolRefAttr::get(&getContext(), ("dyn_" + host.getSymName() + "_kernels").str()));
    });
  }
};

} // namespace
