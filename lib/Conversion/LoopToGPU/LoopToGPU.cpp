//===- LoopToGPU.cpp - map loop kernels onto GPU launches ----------------===//
//
// One loop.kernel becomes one gpu.launch whose geometry fits the kernel:
// pointwise kernels get a thread per point; row kernels reading contiguous
// rows get a block per row with block-wide reductions; other kernels with
// inner loops get a thread per point that runs them serially. Library
// calls (GEMMs, convolutions, attention) stay in the host function.
//
//===----------------------------------------------------------------------===//
#include "dyn/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"

#include <map>

namespace dyn {
#define GEN_PASS_DEF_CONVERTLOOPTOGPUPASS
#include "dyn/Conversion/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;

namespace {

constexpr int64_t kPointsPerThread = 4;
// Splitting a reduction across blocks: aim for the threads the GPU holds at
// once (the target's SMs x resident threads per SM: 132 x 2048 on an H100),
// with chunks of at least kMinChunk elements.
constexpr int64_t kMinChunk = 32;
// Splitting few long rows: aim for a full SM's threads in blocks of 256 on
// every SM (8 blocks per SM), each sweeping at least kRowChunk elements.
// Loads in flight per thread in a split row reduction's sweep (unrolled accumulators).
constexpr int64_t kUnroll = 4;
constexpr int64_t kRowChunk = 8192;
// Kernels with strided rows: below a quarter of the threads the GPU holds,
// a thread each leaves it mostly idle, so a block takes each row of at least
// kMinRow elements.
constexpr int64_t kMinRow = 32;
// A block's row kept in registers: at most this many points a thread.
constexpr int64_t kMaxResident = 8;

int64_t product(ArrayRef<int64_t> sizes) {
  int64_t p = 1;
  for (int64_t s : sizes)
    p *= s;
  return p;
}

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Row-major multi-index of a linear index.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear, ArrayRef<int64_t> sizes) {
  SmallVector<Value> idx(sizes.size());
  for (int64_t i = sizes.size() - 1; i >= 0; --i) {
    if (i == 0) {
      idx[i] = linear;
      break;
    }
    Value size = cIndex(b, loc, sizes[i]);
    idx[i] = arith::RemUIOp::create(b, loc, linear, size);
    linear = arith::DivUIOp::create(b, loc, linear, size);
  }
  return idx;
}

/// Each size as an `index` value: a constant, or the given value.
Value sizeValue(OpBuilder &b, Location loc, OpFoldResult s) {
  if (auto v = dyn_cast<Value>(s))
    return v;
  return cIndex(b, loc, cast<IntegerAttr>(cast<Attribute>(s)).getInt());
}

/// Row-major multi-index of a linear index over sizes known at run time (the
/// constant ones as before).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear, ArrayRef<OpFoldResult> sizes) {
  SmallVector<Value> idx(sizes.size());
  for (int64_t i = sizes.size() - 1; i >= 0; --i) {
    if (i == 0) {
      idx[i] = linear;
      break;
    }
    Value size = sizeValue(b, loc, sizes[i]);
    idx[i] = arith::RemUIOp::create(b, loc, linear, size);
    linear = arith::DivUIOp::create(b, loc, linear, size);
  }
  return idx;
}

/// The number of points of sizes known at run time: a constant where all are.
Value productValue(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes) {
  int64_t constant = 1;
  Value dynamic;
  for (OpFoldResult s : sizes) {
    if (auto v = dyn_cast<Value>(s))
      dynamic = dynamic ? arith::MulIOp::create(b, loc, dynamic, v).getResult() : v;
    else
      constant *= cast<IntegerAttr>(cast<Attribute>(s)).getInt();
  }
  if (!dynamic)
    return cIndex(b, loc, constant);
  return constant == 1 ? dynamic : arith::MulIOp::create(b, loc, dynamic, cIndex(b, loc, constant)).getResult();
}

/// An inner loop's domain with its `?` sizes as seen through `map` (values of
/// the kernel body cloned into the launch).
SmallVector<OpFoldResult> innerSizes(Operation *op, IRMapping &map) {
  SmallVector<OpFoldResult> sizes =
      isa<loop::ForOp>(op) ? cast<loop::ForOp>(op).getMixedDomain() : cast<loop::ReduceOp>(op).getMixedDomain();
  for (OpFoldResult &s : sizes)
    if (auto v = dyn_cast<Value>(s))
      s = map.lookupOrDefault(v);
  return sizes;
}

/// Whether a kernel and every loop in it have constant domains.
bool hasStaticDomains(loop::KernelOp kernel) {
  bool isStatic = true;
  kernel.walk([&](Operation *op) {
    if (isa<loop::KernelOp, loop::ForOp, loop::ReduceOp>(op) && op->getNumOperands())
      isStatic = false;
  });
  return isStatic;
}

ArrayRef<int64_t> innerDomain(Operation *op) {
  if (auto f = dyn_cast<loop::ForOp>(op))
    return f.getDomain();
  return cast<loop::ReduceOp>(op).getDomain();
}

/// True when every top-level inner loop's loads walk memory contiguously in
/// the loop's innermost index, so a block can sweep a row with coalesced
/// accesses.
bool rowsAreContiguous(loop::KernelOp kernel) {
  bool any = false, all = true;
  for (Operation &op : kernel.getBodyBlock()) {
    if (!isa<loop::ForOp, loop::ReduceOp>(op))
      continue;
    any = true;
    Block &body = op.getRegion(0).front();
    if (body.getNumArguments() == 0)
      continue;
    Value innermost = body.getArguments().back();
    bool contiguous = false, loads = false;
    op.walk([&](loop::LoadOp load) {
      loads = true;
      if (!load.getIndices().empty() && load.getIndices().back() == innermost)
        contiguous = true;
    });
    if (loads && !contiguous)
      all = false;
  }
  return any && all;
}

/// Whether `v` (computed in `body`) depends on the block argument `arg`.
bool dependsOn(Value v, BlockArgument arg, Block &body) {
  if (v == arg)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &body)
    return false;
  return llvm::any_of(def->getOperands(), [&](Value o) { return dependsOn(o, arg, body); });
}

/// For a pointwise kernel, the number of consecutive points a thread can move
/// with one 16-byte access per buffer: every store and every load that moves
/// with the innermost index must index its buffer's last dim with exactly
/// that index (other loads stay scalar: they are the same for all the points)
/// and agree on the element width. 1 when not possible.
int64_t vectorWidth(loop::KernelOp kernel) {
  ArrayRef<int64_t> domain = kernel.getDomain();
  Block &body = kernel.getBodyBlock();
  if (domain.empty())
    return 1;
  BlockArgument inner = body.getArguments().back();
  unsigned bits = 0;
  SmallVector<MemRefType> accessed;
  auto vectorAccess = [&](Value memref, OperandRange indices) -> bool {
    if (indices.empty() || indices.back() != inner)
      return false;
    accessed.push_back(cast<MemRefType>(memref.getType()));
    for (Value i : indices.drop_back())
      if (dependsOn(i, inner, body))
        return false;
    unsigned b = cast<MemRefType>(memref.getType()).getElementTypeBitWidth();
    if (b < 8 || (bits && b != bits))
      return false;
    bits = b;
    return true;
  };
  for (Operation &op : body) {
    if (auto store = dyn_cast<loop::StoreOp>(op)) {
      if (!vectorAccess(store.getMemref(), store.getIndices()))
        return 1;
    } else if (auto load = dyn_cast<loop::LoadOp>(op)) {
      bool moves = llvm::any_of(load.getIndices(), [&](Value i) { return dependsOn(i, inner, body); });
      if (moves && !vectorAccess(load.getMemref(), load.getIndices()))
        return 1;
    }
  }
  if (!bits)
    return 1;
  int64_t width = 128 / bits;
  // A row of another length (a gather's input, whose last dim may be longer
  // than the index's) must keep every vector 16-byte aligned too.
  for (MemRefType t : accessed)
    if (ShapedType::isDynamic(t.getShape().back()) || t.getShape().back() % width != 0)
      return 1;
  if (ShapedType::isDynamic(domain.back()))
    return 1;
  return domain.back() % width == 0 ? width : 1;
}

/// The scalar types kernels may compute in on the GPU: dyn's element types.
bool isGpuScalar(Type t) {
  return t.isF16() || t.isBF16() || t.isF32() || t.isF64() || t.isInteger(1) || t.isInteger(8) ||
         t.isInteger(16) || t.isInteger(32) || t.isInteger(64);
}

gpu::AllReduceOperation allReduceKind(loop::ReduceKind kind, Type type) {
  bool isFloat = isa<FloatType>(type);
  switch (kind) {
  case loop::ReduceKind::add:
    return gpu::AllReduceOperation::ADD;
  case loop::ReduceKind::mul:
    return gpu::AllReduceOperation::MUL;
  case loop::ReduceKind::max:
    return isFloat ? gpu::AllReduceOperation::MAXIMUMF : gpu::AllReduceOperation::MAXSI;
  case loop::ReduceKind::min:
    return isFloat ? gpu::AllReduceOperation::MINIMUMF : gpu::AllReduceOperation::MINSI;
  }
  llvm_unreachable("unknown reduce kind");
}

/// Clones the ops of `body` (not its terminator) with its arguments mapped
/// to `indices`; returns the terminator's operands, mapped.
SmallVector<Value> cloneBody(OpBuilder &b, Block &body, ValueRange indices, IRMapping &map) {
  for (auto [arg, idx] : llvm::zip(body.getArguments(), indices))
    map.map(arg, idx);
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  SmallVector<Value> yielded;
  for (Value v : body.getTerminator()->getOperands())
    yielded.push_back(map.lookupOrDefault(v));
  return yielded;
}

/// A row kernel whose passes over the row (a norm's mean, variance and write; a softmax's max, sum
/// and write) read the same points: each thread reads its few points of the row once, into
/// registers, and every pass reuses them, as inductor's persistent reductions do. Without it each
/// pass reads the row again and recomputes what feeds it (a residual add and a GEMM's bias before a
/// LayerNorm: three reads of both inputs). Applies where every pass sweeps the same domain, with at
/// most kMaxResident points a thread; a ragged last point (the row not a whole number of sweeps)
/// is read at a clamped index and left out by a select, so its ops must be safe to speculate.
struct ResidentRow {
  ArrayRef<int64_t> domain; // every pass's
  int64_t perThread = 0;
  bool ragged = false;
};

std::optional<ResidentRow> residentRow(loop::KernelOp kernel, int64_t threads) {
  ResidentRow row;
  int passes = 0;
  for (Operation &op : kernel.getBodyBlock()) {
    if (!isa<loop::ForOp, loop::ReduceOp>(op))
      continue;
    ArrayRef<int64_t> d = innerDomain(&op);
    if (passes++ && d != row.domain)
      return std::nullopt;
    row.domain = d;
    bool nested = false;
    op.walk([&](Operation *inner) {
      if (inner != &op && isa<loop::ForOp, loop::ReduceOp>(inner))
        nested = true;
    });
    if (nested)
      return std::nullopt;
  }
  int64_t n = product(row.domain);
  row.perThread = (n + threads - 1) / threads;
  row.ragged = n % threads != 0;
  if (passes < 2 || row.perThread > kMaxResident)
    return std::nullopt;
  if (row.ragged) {
    bool speculatable = true;
    kernel.walk([&](Operation *op) {
      if (op != kernel.getOperation() && !isa<loop::ForOp, loop::ReduceOp, loop::LoadOp, loop::StoreOp>(op) &&
          !op->hasTrait<mlir::OpTrait::IsTerminator>() && op->getParentOp() != kernel.getOperation() &&
          !(isPure(op) && isSpeculatable(op)))
        speculatable = false;
    });
    if (!speculatable)
      return std::nullopt;
  }
  return row;
}

/// Threads for a block sweeping rows of `n` points: about eight points each.
int64_t rowThreads(int64_t n) {
  int64_t t = 32;
  while (t < 1024 && t * 8 < n)
    t *= 2;
  return t;
}

struct KernelMapper {
  OpBuilder &b;
  int64_t threadsPerBlock;
  int64_t fillThreads; // threads resident on the whole GPU (the target's SMs x threads per SM)
  int64_t fillBlocks;  // blocks of 256 that fill every SM

  /// The launch's global thread index; builds `if (index < bound)` and moves
  /// the builder into it. Returns the index and the guard.
  std::pair<Value, scf::IfOp> guardedThreadIndex(gpu::LaunchOp launch, int64_t threads,
                                                 int64_t bound) {
    return guardedThreadIndex(launch, threads, OpFoldResult(b.getIndexAttr(bound)));
  }
  /// The same with a bound known at run time (a `?` domain's point count).
  std::pair<Value, scf::IfOp> guardedThreadIndex(gpu::LaunchOp launch, int64_t threads,
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

  LogicalResult map(loop::KernelOp kernel) {
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
      if (loop::ReduceOp reduce = splittableReduce(kernel, byRow))
        return splitReduce(kernel, reduce, byRow);
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
    int64_t threads = byRow ? rowThreads(innerPoints) : threadsPerBlock;
    // Pointwise kernels that tile evenly give each thread several points, a
    // block apart, with all their loads issued before any store: more bytes
    // in flight per thread, which is what a memory-bound kernel needs.
    // Trigonometry (libdevice's sinf/cosf with their slow range-reduction
    // path) needs the registers more than the extra loads: measured on an
    // H100, cos(x)+sin(y) ran at 73% of copy bandwidth with one point a
    // thread and 64% with four.
    bool hasTrig = false;
    kernel.walk([&](Operation *op) { hasTrig |= isa<math::SinOp, math::CosOp, math::TanOp>(op); });
    int64_t perThread =
        (!hasInner && !hasTrig && points % (threads * kPointsPerThread) == 0) ? kPointsPerThread : 1;
    if (!hasInner && !hasTrig)
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
      SmallVector<Value> idx = delinearize(b, loc, block, domain);
      for (auto [arg, v] : llvm::zip(kernel.getBodyBlock().getArguments(), idx))
        map.map(arg, v);
      std::optional<Resident> resident;
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

  /// A kernel whose domain, or an inner loop's, has `?` dims: the geometry is
  /// computed in the host function from the runtime sizes (the launch plan
  /// evaluates it at each call). Conservative fixed plans where the static
  /// lowering weighs sizes: pointwise kernels take a thread per point (16-byte
  /// vectors where the innermost dim is a constant multiple of the width),
  /// row kernels over contiguous rows a block per row (the static row's
  /// threads and registers where the rows have a constant length, else 256
  /// threads sweeping it), other kernels with inner loops a thread per point
  /// running them serially; reductions are never split across blocks.
  LogicalResult mapDynamic(loop::KernelOp kernel) {
    Location loc = kernel.getLoc();
    b.setInsertionPoint(kernel);
    SmallVector<OpFoldResult> domain = kernel.getMixedDomain();
    Value points = productValue(b, loc, domain);
    bool hasInner = llvm::any_of(kernel.getBodyBlock(), [](Operation &op) {
      return isa<loop::ForOp, loop::ReduceOp>(op);
    });
    bool byRow = hasInner && rowsAreContiguous(kernel);
    bool hasTrig = false;
    kernel.walk([&](Operation *op) { hasTrig |= isa<math::SinOp, math::CosOp, math::TanOp>(op); });
    if (!hasInner && !hasTrig && !kernel.getDomain().empty())
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
    int64_t threads = !byRow ? threadsPerBlock : staticRows ? rowThreads(innerPoints) : 256;
    Value grid = byRow ? points : arith::CeilDivUIOp::create(b, loc, points, cIndex(b, loc, threads)).getResult();
    Value one = cIndex(b, loc, 1);
    auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, cIndex(b, loc, threads), one, one);
    launch->setAttr("dyn.kernel", kernel.getNameAttr());
    Block &body = launch.getBody().front();
    b.setInsertionPointToStart(&body);
    Value block = launch.getBlockIds().x, thread = launch.getThreadIds().x;
    IRMapping map;
    if (byRow) {
      SmallVector<Value> idx = delinearize(b, loc, block, domain);
      for (auto [arg, v] : llvm::zip(kernel.getBodyBlock().getArguments(), idx))
        map.map(arg, v);
      std::optional<Resident> resident;
      if (staticRows)
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

  /// A pointwise kernel moving `width` consecutive points a thread with one
  /// 16-byte load per moving input and one 16-byte store per output; the
  /// scalar work is cloned per point. Buffers must be 16-byte aligned (the
  /// runtime guarantees it).
  /// With `points` (the kernel's point count, a value of the host: a `?`
  /// domain), the groups and the grid are computed at run time.
  LogicalResult vectorize(loop::KernelOp kernel, int64_t width, Value points = {}) {
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

  /// A thread-per-point kernel whose single top-level reduction is long and
  /// whose points are too few to fill the GPU (a sum over a leading dim):
  /// worth splitting the reduction across blocks.
  loop::ReduceOp splittableReduce(loop::KernelOp kernel, bool byRow) {
    loop::ReduceOp found;
    int count = 0;
    for (Operation &op : kernel.getBodyBlock()) {
      if (isa<loop::ForOp>(op))
        return {};
      if (auto r = dyn_cast<loop::ReduceOp>(op)) {
        found = r;
        ++count;
      }
    }
    if (count != 1)
      return {};
    int64_t length = product(found.getDomain()), points = product(kernel.getDomain());
    if (byRow) // few long rows: fewer blocks than the GPU runs at once
      return (points < fillBlocks && length >= 2 * kRowChunk) ? found : loop::ReduceOp();
    if (length < 4 * kMinChunk || points >= fillThreads)
      return {};
    return found;
  }

  /// Two launches: the first folds chunks of the reduction for every point
  /// into a temporary [chunks x points] buffer (neighbouring threads take
  /// neighbouring points, so reads stay coalesced); the second combines each
  /// point's partials and runs the rest of the kernel body.
  LogicalResult splitReduce(loop::KernelOp kernel, loop::ReduceOp reduce, bool byRow) {
    Location loc = kernel.getLoc();
    ArrayRef<int64_t> domain = kernel.getDomain();
    int64_t points = product(domain), length = product(reduce.getDomain());
    int64_t chunks =
        byRow ? std::min<int64_t>((fillBlocks + points - 1) / points, length / kRowChunk)
              : std::min<int64_t>((fillThreads + points - 1) / points, length / kMinChunk);
    int64_t chunkLength = (length + chunks - 1) / chunks;
    Type type = reduce.getType();
    auto partialType = MemRefType::get({chunks, points}, type);
    b.setInsertionPoint(kernel);
    Value partials = memref::AllocOp::create(b, loc, partialType);
    Value one = cIndex(b, loc, 1);
    int64_t threads = threadsPerBlock;

    // Launch 1: (chunk, point) pairs, a thread each (a leading-dim reduction:
    // neighbouring threads on neighbouring points) or a block each (a row
    // reduction: the block sweeps its chunk of the row and reduces it).
    int64_t pairs = chunks * points;
    int64_t firstBlocks = byRow ? pairs : (pairs + threads - 1) / threads;
    auto first = gpu::LaunchOp::create(b, loc, cIndex(b, loc, firstBlocks), one, one,
                                       cIndex(b, loc, threads), one, one);
    first->setAttr("dyn.kernel", b.getStringAttr(kernel.getName() + "_partial"));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&first.getBody().front());
      if (byRow) {
        splitRowPartial(kernel, reduce, first, partials, points, chunkLength, length, threads);
        b.setInsertionPointToEnd(&first.getBody().front());
        gpu::TerminatorOp::create(b, loc);
        goto combine;
      }
      auto [linear, ifOp] = guardedThreadIndex(first, threads, pairs);
      Value chunk = arith::DivUIOp::create(b, loc, linear, cIndex(b, loc, points));
      Value point = arith::RemUIOp::create(b, loc, linear, cIndex(b, loc, points));
      IRMapping map;
      for (auto [arg, v] : llvm::zip(kernel.getBodyBlock().getArguments(),
                                     delinearize(b, loc, point, domain)))
        map.map(arg, v);
      for (Operation &op : kernel.getBodyBlock()) {
        if (&op == reduce.getOperation())
          break;
        b.clone(op, map);
      }
      Value begin = arith::MulIOp::create(b, loc, chunk, cIndex(b, loc, chunkLength));
      Value end = arith::MinUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, begin, cIndex(b, loc, chunkLength)),
          cIndex(b, loc, length));
      Value partial = foldRange(reduce, begin, end, one, map);
      SmallVector<Value> at{chunk, point};
      loop::StoreOp::create(b, loc, partial, partials, at);
      b.setInsertionPointAfter(ifOp);
      gpu::TerminatorOp::create(b, loc);
    }

  combine:
    // Launch 2: a thread per point combines its partials, then the rest.
    b.setInsertionPoint(kernel);
    auto second = gpu::LaunchOp::create(b, loc, cIndex(b, loc, (points + threads - 1) / threads),
                                        one, one, cIndex(b, loc, threads), one, one);
    second->setAttr("dyn.kernel", kernel.getNameAttr());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&second.getBody().front());
      auto [point, ifOp] = guardedThreadIndex(second, threads, points);
      IRMapping map;
      for (auto [arg, v] : llvm::zip(kernel.getBodyBlock().getArguments(),
                                     delinearize(b, loc, point, domain)))
        map.map(arg, v);
      for (Operation &op : kernel.getBodyBlock().without_terminator()) {
        if (&op != reduce.getOperation()) {
          b.clone(op, map);
          continue;
        }
        Value init =
            arith::ConstantOp::create(b, loc, loop::reduceIdentity(b, reduce.getKind(), type));
        auto combineAll = scf::ForOp::create(b, loc, cIndex(b, loc, 0), cIndex(b, loc, chunks),
                                             one, ValueRange{init});
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(combineAll.getBody());
        SmallVector<Value> at{combineAll.getInductionVar(), point};
        Value part = loop::LoadOp::create(b, loc, partials, at);
        scf::YieldOp::create(b, loc, loop::reduceCombine(b, loc, reduce.getKind(),
                                                         combineAll.getRegionIterArgs()[0], part));
        b.setInsertionPointAfter(combineAll);
        map.map(reduce.getResult(), combineAll.getResult(0));
      }
      b.setInsertionPointAfter(ifOp);
      gpu::TerminatorOp::create(b, loc);
    }
    b.setInsertionPoint(kernel);
    memref::DeallocOp::create(b, loc, partials);
    kernel.erase();
    return success();
  }

  /// Block (chunk, point) of a split row reduction: its threads stride over
  /// the chunk, gpu.all_reduce combines them, thread 0 stores the partial.
  void splitRowPartial(loop::KernelOp kernel, loop::ReduceOp reduce, gpu::LaunchOp launch,
                       Value partials, int64_t points, int64_t chunkLength, int64_t length,
                       int64_t threads) {
    Location loc = kernel.getLoc();
    Value block = launch.getBlockIds().x, thread = launch.getThreadIds().x;
    Value chunk = arith::DivUIOp::create(b, loc, block, cIndex(b, loc, points));
    Value point = arith::RemUIOp::create(b, loc, block, cIndex(b, loc, points));
    IRMapping map;
    for (auto [arg, v] : llvm::zip(kernel.getBodyBlock().getArguments(),
                                   delinearize(b, loc, point, kernel.getDomain())))
      map.map(arg, v);
    for (Operation &op : kernel.getBodyBlock()) {
      if (&op == reduce.getOperation())
        break;
      b.clone(op, map);
    }
    Value begin = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, chunk, cIndex(b, loc, chunkLength)), thread);
    Value end = arith::MinUIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, arith::AddIOp::create(b, loc, chunk, cIndex(b, loc, 1)),
                              cIndex(b, loc, chunkLength)),
        cIndex(b, loc, length));
    Value total = allReduce(reduce, foldRange(reduce, begin, end, cIndex(b, loc, threads), map, kUnroll));
    Value isFirst =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, cIndex(b, loc, 0));
    auto ifOp = scf::IfOp::create(b, loc, isFirst, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    SmallVector<Value> at{chunk, point};
    loop::StoreOp::create(b, loc, total, partials, at);
  }

  /// Folds `reduce`'s body over the flattened indices [begin, end) by `step`,
  /// starting from the kind's identity; returns the folded value.
  Value foldRange(loop::ReduceOp reduce, Value begin, Value end, Value step, IRMapping &map,
                  int64_t unroll = 1) {
    Location loc = reduce.getLoc();
    Value init = arith::ConstantOp::create(
        b, loc, loop::reduceIdentity(b, reduce.getKind(), reduce.getType()));
    // With `unroll`, a main loop takes `unroll` points a step into as many accumulators, so that
    // each thread has that many loads in flight (a memory-bound sweep needs them), and a second
    // loop takes the rest one at a time.
    Value mainEnd = begin;
    SmallVector<Value> accs{init};
    if (unroll > 1) {
      Value span = arith::MulIOp::create(b, loc, step, cIndex(b, loc, unroll));
      Value len = arith::MaxSIOp::create(b, loc, arith::SubIOp::create(b, loc, end, begin), cIndex(b, loc, 0));
      mainEnd = arith::AddIOp::create(
          b, loc, begin,
          arith::MulIOp::create(b, loc, arith::DivSIOp::create(b, loc, len, span), span));
      auto main = scf::ForOp::create(b, loc, begin, mainEnd, span, SmallVector<Value>(unroll, init));
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(main.getBody());
        SmallVector<Value> folded;
        for (int64_t k = 0; k < unroll; ++k) {
          Value at = arith::AddIOp::create(b, loc, main.getInductionVar(),
                                           arith::MulIOp::create(b, loc, step, cIndex(b, loc, k)));
          SmallVector<Value> idx = delinearize(b, loc, at, innerSizes(reduce, map));
          SmallVector<Value> yielded = cloneBody(b, reduce.getBodyBlock(), idx, map);
          folded.push_back(loop::reduceCombine(b, loc, reduce.getKind(), main.getRegionIterArgs()[k], yielded[0]));
        }
        scf::YieldOp::create(b, loc, folded);
      }
      accs.assign(main.getResults().begin(), main.getResults().end());
    }
    auto fold = scf::ForOp::create(b, loc, mainEnd, end, step, ValueRange{accs[0]});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(fold.getBody());
      SmallVector<Value> idx = delinearize(b, loc, fold.getInductionVar(), innerSizes(reduce, map));
      SmallVector<Value> yielded = cloneBody(b, reduce.getBodyBlock(), idx, map);
      scf::YieldOp::create(b, loc, loop::reduceCombine(b, loc, reduce.getKind(),
                                                       fold.getRegionIterArgs()[0], yielded[0]));
    }
    Value total = fold.getResult(0);
    for (size_t k = 1; k < accs.size(); ++k)
      total = loop::reduceCombine(b, loc, reduce.getKind(), total, accs[k]);
    return total;
  }

  /// gpu.all_reduce of `partial` across the block (every thread gets it).
  /// Warp shuffles move 32-bit words, so narrower values are reduced wider:
  /// integers as i32 (sign extension keeps max and min, and the low bits of
  /// a 32-bit sum or product are the narrow one's), f16 and bf16 as f32 (max
  /// and min exact; sums rounded once at the end).
  Value allReduce(loop::ReduceOp reduce, Value partial) {
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
  Value blockReduce(loop::ReduceOp reduce, Value thread, int64_t threads, IRMapping &map) {
    Location loc = reduce.getLoc();
    Value partial = foldRange(reduce, thread, productValue(b, loc, innerSizes(reduce, map)),
                              cIndex(b, loc, threads), map);
    return allReduce(reduce, partial);
  }

  /// A row in registers (ResidentRow): each thread's points, unrolled; the row's loads read once.
  struct Resident {
    KernelMapper &m;
    ResidentRow row;
    SmallVector<SmallVector<Value>> points; // per point of the thread, its inner indices
    SmallVector<Value> valid;               // per point, whether it is in the row (null: always)
    llvm::DenseSet<Value> written;          // buffers the kernel stores to: read afresh each time
    std::map<SmallVector<const void *>, Value> loaded;

    Resident(KernelMapper &m, loop::KernelOp kernel, const ResidentRow &row, Value thread,
             int64_t threads)
        : m(m), row(row) {
      OpBuilder &b = m.b;
      Location loc = kernel.getLoc();
      int64_t n = product(row.domain);
      kernel.walk([&](loop::StoreOp s) { written.insert(s.getMemref()); });
      for (int64_t k = 0; k < row.perThread; ++k) {
        Value linear = arith::AddIOp::create(b, loc, thread, cIndex(b, loc, k * threads));
        Value in; // null where every thread's point is in the row
        if ((k + 1) * threads > n) {
          in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear, cIndex(b, loc, n));
          linear = arith::SelectOp::create(b, loc, in, linear, cIndex(b, loc, 0));
        }
        valid.push_back(in);
        points.push_back(delinearize(b, loc, linear, row.domain));
      }
    }

    /// The body at point k; loads of buffers the kernel does not write come from the first read.
    SmallVector<Value> clonePoint(Block &body, int64_t k, IRMapping &map) {
      OpBuilder &b = m.b;
      for (auto [arg, idx] : llvm::zip(body.getArguments(), points[k]))
        map.map(arg, idx);
      for (Operation &op : body.without_terminator()) {
        if (auto load = dyn_cast<loop::LoadOp>(op)) {
          Value mem = map.lookupOrDefault(load.getMemref());
          if (!written.contains(mem)) {
            SmallVector<const void *> key{mem.getAsOpaquePointer()};
            for (Value i : load.getIndices())
              key.push_back(map.lookupOrDefault(i).getAsOpaquePointer());
            auto [it, fresh] = loaded.try_emplace(key, Value());
            if (fresh)
              it->second = b.clone(op, map)->getResult(0);
            map.map(load.getResult(), it->second);
            continue;
          }
        }
        if (isa<loop::StoreOp>(op) && valid[k]) {
          auto guard = scf::IfOp::create(b, op.getLoc(), valid[k], /*withElseRegion=*/false);
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(&guard.getThenRegion().front());
          b.clone(op, map);
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
  void blockFor(loop::ForOp forLoop, Value thread, int64_t threads, IRMapping &map) {
    Location loc = forLoop.getLoc();
    auto forOp = scf::ForOp::create(b, loc, thread, productValue(b, loc, innerSizes(forLoop, map)),
                                    cIndex(b, loc, threads));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    SmallVector<Value> idx = delinearize(b, loc, forOp.getInductionVar(), innerSizes(forLoop, map));
    cloneBody(b, forLoop.getBodyBlock(), idx, map);
  }
};

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
      if (failed(viewDynamicBuffers(b, launch)) || failed(mlir::sinkOperationsIntoLaunchOp(launch, beneficial)))
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
