//===- Utils.cpp - helpers shared by the loop-to-GPU mappings -------------===//
//
// Index arithmetic (delinearizing, runtime sizes), the analyses that choose a
// kernel's mapping (contiguous rows, 16-byte vector widths, rows resident in
// registers) and cloning a loop body into a launch.
//
//===----------------------------------------------------------------------===//
#include "Mapping.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace dyn::loop_to_gpu {

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

/// The kernel's top-level reductions where they are siblings: no loop.for
/// beside them, one domain (the same `?` sizes), and none reads another's
/// result (through the top-level ops its body uses), so that one sweep can
/// fold them all. Empty otherwise.
SmallVector<loop::ReduceOp> siblingReduces(loop::KernelOp kernel) {
  SmallVector<loop::ReduceOp> found;
  DenseSet<Value> tainted; // top-level values computed from a reduction's result
  for (Operation &op : kernel.getBodyBlock()) {
    if (isa<loop::ForOp>(op))
      return {};
    auto r = dyn_cast<loop::ReduceOp>(op);
    if (r) {
      if (!found.empty() && (r.getDomain() != found[0].getDomain() ||
                             !llvm::equal(r.getDynamicSizes(), found[0].getDynamicSizes())))
        return {};
      llvm::SetVector<Value> used;
      getUsedValuesDefinedAbove(r.getRegion(), used);
      if (llvm::any_of(used, [&](Value v) { return tainted.contains(v); }))
        return {};
      found.push_back(r);
    }
    if (r || llvm::any_of(op.getOperands(), [&](Value v) { return tainted.contains(v); }))
      tainted.insert(op.getResults().begin(), op.getResults().end());
  }
  return found;
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
  if (passes < 2)
    return std::nullopt;
  int64_t n = product(row.domain);
  int64_t maxPoints = rowPointsPerThread(kernel);
  // The vector width: 16 bytes of the narrowest element any pass moves along the row.
  unsigned minBits = 0;
  forEachRowAccess(kernel, [&](Operation *access, Block &body) {
    if (isRowVectorAccess(access, body, 1)) {
      unsigned bits = cast<MemRefType>(accessedMemref(access).getType()).getElementTypeBitWidth();
      minBits = minBits ? std::min(minBits, bits) : bits;
    }
  });
  if (minBits && !row.domain.empty() && row.domain.back() % (128 / minBits) == 0) {
    int64_t width = 128 / minBits;
    bool any = false;
    forEachRowAccess(kernel, [&](Operation *access, Block &body) { any |= isRowVectorAccess(access, body, width); });
    if (any)
      row.width = width;
  }
  int64_t groups = n / row.width;
  row.slots = (groups + threads - 1) / threads;
  row.perThread = row.slots * row.width;
  row.ragged = groups % threads != 0;
  if (row.perThread > std::max(maxPoints, row.width))
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

Value accessedMemref(Operation *op) {
  if (auto load = dyn_cast<loop::LoadOp>(op))
    return load.getMemref();
  if (auto store = dyn_cast<loop::StoreOp>(op))
    return store.getMemref();
  return {};
}

void forEachRowAccess(loop::KernelOp kernel, function_ref<void(Operation *, Block &)> fn) {
  for (Operation &op : kernel.getBodyBlock())
    if (isa<loop::ForOp, loop::ReduceOp>(op))
      for (Operation &access : op.getRegion(0).front())
        if (accessedMemref(&access))
          fn(&access, op.getRegion(0).front());
}

bool isRowVectorAccess(Operation *access, Block &body, int64_t width) {
  Value mem = accessedMemref(access);
  if (!mem)
    return false;
  OperandRange indices = isa<loop::LoadOp>(access) ? cast<loop::LoadOp>(access).getIndices()
                                                    : cast<loop::StoreOp>(access).getIndices();
  auto type = dyn_cast<MemRefType>(mem.getType());
  if (!type || !type.getLayout().isIdentity() || type.getElementTypeBitWidth() < 8 || indices.empty() ||
      body.getNumArguments() == 0 || indices.back() != body.getArguments().back())
    return false;
  int64_t last = type.getShape().back();
  if (ShapedType::isDynamic(last) || last % width != 0)
    return false;
  BlockArgument inner = body.getArguments().back();
  return llvm::none_of(indices.drop_back(), [&](Value i) { return dependsOn(i, inner, body); });
}

void hoistLoads(loop::KernelOp kernel) {
  Block &body = kernel.getBodyBlock();
  llvm::DenseSet<Value> stored;
  kernel.walk([&](loop::StoreOp st) { stored.insert(st.getMemref()); });
  for (Operation &op : llvm::make_early_inc_range(body)) {
    auto load = dyn_cast<loop::LoadOp>(op);
    if (!load || stored.contains(load.getMemref()))
      continue;
    // Up past pure ops only: a store or a call before it may write what it reads through a view.
    Operation *after = nullptr;
    for (Operation *prev = op.getPrevNode(); prev; prev = prev->getPrevNode()) {
      bool defines = llvm::any_of(op.getOperands(), [&](Value v) { return v.getDefiningOp() == prev; });
      if (defines || !isPure(prev) || prev->getNumRegions() != 0) {
        after = prev;
        break;
      }
    }
    if (after)
      op.moveAfter(after);
    else
      op.moveBefore(&body.front());
  }
}

int64_t rowPointsPerThread(loop::KernelOp kernel) {
  unsigned maxBits = 0;
  forEachRowAccess(kernel, [&](Operation *access, Block &body) {
    if (isRowVectorAccess(access, body, 1))
      maxBits = std::max(maxBits, cast<MemRefType>(accessedMemref(access).getType()).getElementTypeBitWidth());
  });
  return maxBits ? std::max<int64_t>(kMaxResident, kResidentBytes * 8 / maxBits) : kMaxResident;
}

int64_t rowThreads(loop::KernelOp kernel, int64_t n) {
  int64_t points = rowPointsPerThread(kernel);
  int64_t t = 32;
  while (t < 1024 && t * points < n)
    t *= 2;
  return t;
}

} // namespace dyn::loop_to_gpu
