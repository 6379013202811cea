//===- Materialize.cpp - buffers for reused values ----------------------===//
#include "Fusion.h"

namespace dyn::prim_to_loop {

/// The kernels that would recompute `v`: the materialized values whose
/// expressions reach it through values without buffers.
SmallVector<Value> kernelsReaching(Value v, const llvm::SetVector<Value> &materialized) {
  SmallVector<Value> work{v}, kernels;
  DenseSet<Value> seen{v};
  while (!work.empty()) {
    Value u = work.pop_back_val();
    for (Operation *user : u.getUsers())
      for (Value r : user->getResults())
        if (seen.insert(r).second) {
          if (materialized.contains(r))
            kernels.push_back(r);
          else if (Value w = writtenReshape(r, [&](Value w) { return materialized.contains(w); })) {
            if (seen.insert(w).second) // later kernels read r from there
              kernels.push_back(w);
          } else
            work.push_back(r);
        }
  }
  return kernels;
}

unsigned kernelsRecomputing(Value v, const llvm::SetVector<Value> &materialized) {
  return kernelsReaching(v, materialized).size();
}

/// A value recomputed by several kernels is recomputed with all the buffers
/// it reads. Where more than kMaxReusedReads of them are large (Inductor's
/// realize_reads_threshold), it gets a buffer instead: a pre-norm
/// transformer's residual stream (x + attn + mlp + ... , read by the next
/// norm's kernel and by every later one through the next residual adds)
/// would otherwise read every earlier layer's outputs in each later layer's
/// kernels. Uses inside one kernel (SiLU's x * sigmoid(x)) cost nothing.
constexpr size_t kMaxReusedReads = 4;

void materializeWideReuse(Block &entry, llvm::SetVector<Value> &materialized) {
  DenseMap<Value, SmallVector<Value, 4>> reads; // value -> the buffers computing it reads
  auto readsOf = [&](Value v) -> SmallVector<Value, 4> {
    if (isa<BlockArgument>(v) || materialized.contains(v))
      return {v};
    return reads.lookup(v);
  };
  for (Operation &op : entry.without_terminator()) {
    if (op.getNumResults() != 1 || !isa<RankedTensorType>(op.getResult(0).getType()))
      continue;
    Value v = op.getResult(0);
    // A value an earlier kernel writes through a reshape is read from there.
    if (writtenReshape(v, [&](Value r) { return materialized.contains(r); })) {
      reads[v] = {v};
      continue;
    }
    if (materialized.contains(v))
      continue;
    SmallVector<Value, 4> r;
    for (Value operand : op.getOperands())
      if (isa<RankedTensorType>(operand.getType()))
        for (Value leaf : readsOf(operand))
          if (!llvm::is_contained(r, leaf))
            r.push_back(leaf);
    // Small operands (a per-channel scale, a bias row) are broadcast and stay
    // in cache: only reads of at least 1/16 of v's size count.
    int64_t size = tensorType(v).getNumElements();
    size_t wide = llvm::count_if(
        r, [&](Value leaf) { return tensorType(leaf).getNumElements() * 16 >= size; });
    // A 16-bit float buffer would round a value fusion computes in f32.
    Type et = tensorType(v).getElementType();
    if (wide > kMaxReusedReads && computeType(et) == et && !isIndexRemap(&op) && !isReduction(&op) &&
        kernelsRecomputing(v, materialized) > 1) {
      materialized.insert(v);
      continue;
    }
    reads[v] = std::move(r);
  }
}

/// Elementwise ops that cost more than a load from cache (a polynomial or a
/// division per element on the CPU's vector units).
bool isTranscendental(Operation *op) {
  return isa<prim::ExpOp, prim::Expm1Op, prim::Exp2Op, prim::LogOp, prim::Log1pOp, prim::Log2Op,
             prim::LogisticOp, prim::TanhOp, prim::ErfOp, prim::ErfcOp, prim::PowOp>(op);
}

/// The values whose inlined expression (through values without buffers)
/// holds an op that `costly` accepts.
DenseSet<Value> valuesHolding(ArrayRef<Operation *> ops, const llvm::SetVector<Value> &materialized,
                              function_ref<bool(Operation *)> costly) {
  DenseSet<Value> holding;
  for (Operation *op : ops) {
    if (op->getNumResults() != 1 || isLibraryCall(op) || isReduction(op))
      continue;
    bool h = costly(op);
    for (Value operand : op->getOperands())
      h |= holding.contains(operand) && !materialized.contains(operand);
    if (h)
      holding.insert(op->getResult(0));
  }
  return holding;
}

/// Gives a buffer to each elementwise value `wanted` accepts that more than
/// one kernel would recompute, last value first, so that of a chain the last
/// is kept (the kernels reading it no longer reach the earlier ones). Half
/// precision values stay computed unless `halves`: a 16-bit buffer rounds
/// what fusion computes in f32 (to the value eager's op gives, which rounds
/// every op's result).
bool materializeRecomputed(ArrayRef<Operation *> ops, llvm::SetVector<Value> &materialized,
                           function_ref<bool(Value)> wanted, bool halves = false) {
  bool added = false;
  for (Operation *op : llvm::reverse(ops)) {
    if (op->getNumResults() != 1 || isIndexRemap(op) || !op->hasTrait<mlir::OpTrait::Elementwise>())
      continue;
    Value v = op->getResult(0);
    Type et = tensorType(v).getElementType();
    if (!materialized.contains(v) && (halves || computeType(et) == et) && wanted(v) &&
        kernelsRecomputing(v, materialized) > 1)
      added |= materialized.insert(v);
  }
  return added;
}

/// A value whose inlined expression loads more than kMaxReusedReads windows
/// of large buffers (a depthwise convolution's taps, a pooling's) and that
/// several kernels would recompute gets a buffer: a squeeze-excitation
/// block's pool and its scaling would each compute the convolution again.
/// A load is a buffer read through one chain of index remaps; loads through
/// the same remap are one. Consumers are decided first, so the last value of
/// a chain (the activation after the convolution) is the one kept.
bool materializeReusedWindows(Block &entry, llvm::SetVector<Value> &materialized) {
  constexpr size_t kMaxTracked = 64; // beyond this, a value counts as reading many windows
  using Load = std::pair<Value, Value>; // (buffer, the outermost remap reading it)
  DenseMap<Value, llvm::SmallDenseSet<Load, 8>> loads;
  SmallVector<Operation *> ops;
  for (Operation &op : entry.without_terminator()) {
    ops.push_back(&op);
    if (op.getNumResults() != 1 || !isa<RankedTensorType>(op.getResult(0).getType()) ||
        isLibraryCall(&op) || isReduction(&op))
      continue;
    Value v = op.getResult(0);
    bool remap = isIndexRemap(&op) || isa<prim::GatherOp>(op);
    int64_t size = tensorType(v).getNumElements();
    llvm::SmallDenseSet<Load, 8> mine;
    for (Value operand : op.getOperands()) {
      if (!isa<RankedTensorType>(operand.getType()))
        continue;
      auto add = [&](Load l) {
        // small operands (a per-channel weight) stay in cache: only wide ones count
        if (mine.size() < kMaxTracked && tensorType(l.first).getNumElements() * 16 >= size)
          mine.insert(remap ? Load{l.first, v} : l);
      };
      if (isa<BlockArgument>(operand) || materialized.contains(operand) ||
          !loads.count(operand))
        add({operand, operand});
      else
        for (Load l : loads[operand])
          add(l);
    }
    loads[v] = std::move(mine);
  }
  // In bfloat16 too: recomputed, the value would read its buffers once per window (a residual stream's
  // adds under davit's 3x3 positional convolution: 6 buffers read 9 times).
  bool added = materializeRecomputed(
      ops, materialized,
      [&](Value v) {
        auto it = loads.find(v);
        return it != loads.end() && it->second.size() > kMaxReusedReads;
      },
      /*halves=*/true);
  // The distinct windows v is read through, counted up to just past `limit`: each path from v through
  // unbuffered values is a chain of remaps (elementwise ops keep the index), and a window is the chain,
  // told by the remaps it passes.
  auto readThroughMore = [&](Value v, size_t limit) {
    llvm::SmallDenseSet<size_t, 8> windows;
    SmallVector<std::pair<Value, size_t>> work{{v, 0}};
    DenseSet<std::pair<Value, size_t>> seen;
    while (!work.empty() && windows.size() <= limit) {
      auto [u, chain] = work.pop_back_val();
      if (!seen.insert({u, chain}).second)
        continue;
      for (Operation *user : u.getUsers()) {
        Value r = user->getNumResults() == 1 ? user->getResult(0) : Value();
        bool passes = r && isa<RankedTensorType>(r.getType()) && !materialized.contains(r) &&
                      !isLibraryCall(user) && !isReduction(user);
        if (passes && (isIndexRemap(user) || isa<prim::GatherOp>(user)))
          work.push_back({r, llvm::hash_combine(chain, r.getAsOpaquePointer())});
        else if (passes && user->hasTrait<mlir::OpTrait::Elementwise>())
          work.push_back({r, chain});
        else
          windows.insert(chain);
      }
    }
    return windows.size() > limit;
  };
  auto elementwiseValues = [&] {
    SmallVector<Value> values; // the last of a chain first, as above
    for (Operation *op : llvm::reverse(ops))
      if (op->getNumResults() == 1 && !isIndexRemap(op) && op->hasTrait<mlir::OpTrait::Elementwise>() &&
          !materialized.contains(op->getResult(0)))
        values.push_back(op->getResult(0));
    return values;
  };
  // The other way round: a value with a transcendental or a division in its
  // expression read through more than kMaxReusedReads windows (the SiLU
  // before an EfficientNet block's depthwise convolution, read by 9 or 25
  // shifted slices; a GroupNorm's output under PoolFormer's separable 3x3
  // pool, 3 slices of 3) would be recomputed once per window:
  // computed once instead, it costs a write and a read, and the consumer's
  // code (which LLVM or the GPU driver compiles at the first call) stays small.
  DenseSet<Value> heavy = valuesHolding(ops, materialized, [](Operation *op) {
    return isTranscendental(op) || isa<prim::DivOp>(op);
  });
  for (Value v : elementwiseValues())
    if (heavy.contains(v) && !materialized.contains(v) && readThroughMore(v, kMaxReusedReads))
      added |= materialized.insert(v);
  if (added)
    return true;
  // Then (the windows counted with the buffers above in place, at the next call otherwise) a value whose
  // own expression reads more than kMaxReusedReads windows, read through more than one window: each
  // window would recompute all of its windows (max pooling's indices, recomputed for max_pool2d's
  // gradient, which gathers them from every window reaching a position: 4 x 9 loads a point).
  for (Value v : elementwiseValues()) {
    auto it = loads.find(v);
    if (it != loads.end() && it->second.size() > kMaxReusedReads && !materialized.contains(v) &&
        readThroughMore(v, 1))
      added |= materialized.insert(v);
  }
  return added;
}

/// A value whose inlined expression holds a transcendental op and that more
/// than one kernel would recompute gets a buffer (the CPU pipeline's choice;
/// Inductor realizes reused exp/sigmoid on the CPU likewise): a squeeze-excitation
/// block's SiLU, read by its global pool and by its scaling, is computed once.
/// Consumers are decided first, so the largest such value is the one kept.
/// Likewise a single-element value holding one that a larger value reads
/// (broadcast): its kernel would compute it again at every element (Adam's
/// bias corrections, pow(beta, step), per element of each parameter).
bool materializeReusedTranscendentals(Block &entry, llvm::SetVector<Value> &materialized) {
  SmallVector<Operation *> ops;
  for (Operation &op : entry.without_terminator())
    ops.push_back(&op);
  DenseSet<Value> heavy = valuesHolding(ops, materialized, isTranscendental);
  bool added = false;
  for (Operation *op : ops) {
    if (op->getNumResults() != 1 || !isa<RankedTensorType>(op->getResult(0).getType()) ||
        tensorType(op->getResult(0)).getNumElements() <= 1)
      continue;
    for (Value operand : op->getOperands()) {
      auto t = dyn_cast<RankedTensorType>(operand.getType());
      if (t && t.getNumElements() == 1 && heavy.contains(operand) && !materialized.contains(operand) &&
          !isa<BlockArgument>(operand) && computeType(t.getElementType()) == t.getElementType())
        added |= materialized.insert(operand);
    }
  }
  if (added)
    return true;
  return materializeRecomputed(ops, materialized, [&](Value v) { return heavy.contains(v); });
}

constexpr int64_t kMinSavedBytes = 4 << 20;

/// A `?` dim counts as this many elements where a choice weighs bytes (a batch of tokens or images): the
/// choices compare values that share their `?` dims, whose ratios hold at any size.
constexpr int64_t kDynamicDimWeight = 256;

/// The elements of `v`, a `?` dim counting as kDynamicDimWeight.
static int64_t weighedElements(Value v) {
  int64_t n = 1;
  for (int64_t d : tensorType(v).getShape())
    n *= ShapedType::isDynamic(d) ? kDynamicDimWeight : d;
  return n;
}

/// Bytes of a buffer of `v` (a bool takes a byte).
int64_t bufferBytes(Value v) {
  return weighedElements(v) * std::max<int64_t>(1, tensorType(v).getElementTypeBitWidth() / 8);
}

/// The result of `op` when it is an elementwise value without a buffer that
/// one could hold as computed (not a 16-bit float: a buffer would round what
/// fusion computes in f32), else null.
static Value unbufferedElementwise(Operation *op, const llvm::SetVector<Value> &materialized) {
  if (op->getNumResults() != 1 || isIndexRemap(op) || !op->hasTrait<mlir::OpTrait::Elementwise>() ||
      !isa<RankedTensorType>(op->getResult(0).getType()))
    return {};
  Value v = op->getResult(0);
  Type et = tensorType(v).getElementType();
  if (materialized.contains(v) || computeType(et) != et)
    return {};
  return v;
}

/// The buffers (materialized values and arguments) the kernel of `root`
/// reads, other than through `except`: its expression up to buffers.
static DenseSet<Value> kernelReads(Value root, Value except, const llvm::SetVector<Value> &materialized) {
  DenseSet<Value> reads, seen;
  SmallVector<Value> work;
  if (Operation *def = root.getDefiningOp())
    work.append(def->operand_begin(), def->operand_end());
  while (!work.empty()) {
    Value u = work.pop_back_val();
    if (u == except || !seen.insert(u).second)
      continue;
    if (isa<BlockArgument>(u) || materialized.contains(u)) {
      reads.insert(u);
      continue;
    }
    Operation *def = u.getDefiningOp();
    work.append(def->operand_begin(), def->operand_end());
  }
  return reads;
}

/// An elementwise value that several kernels recompute gets a buffer where
/// that moves clearly fewer bytes: recomputing it, each of the K kernels
/// reads the large inputs it does not read anyway; a buffer costs one pass
/// over them (bytes B), its write and K reads of it (bytes b). The gradient
/// at a residual block's output (the next block's input gradients added and
/// masked by the ReLU) is read by two batch norms' reductions and input
/// gradients and by the skip path: recomputed, each of them reads the three
/// tensors it comes from. Reductions of one operand shape over the same dims
/// count once (sibling reductions share a kernel). Consumers are decided
/// first, so the last value of a chain is the one kept. A kernel of its own
/// costs a launch: below kMinSavedBytes (about a microsecond of an H200's
/// bandwidth) recomputing stays cheaper, so per-channel values and small
/// models keep their kernels.
bool materializeReusedReads(Block &entry, llvm::SetVector<Value> &materialized) {
  SmallVector<Operation *> ops;
  for (Operation &op : entry.without_terminator())
    ops.push_back(&op);
  auto isMaterialized = [&](Value u) { return materialized.contains(u); };
  bool added = false;
  for (Operation *op : llvm::reverse(ops)) {
    Value v = unbufferedElementwise(op, materialized);
    if (!v)
      continue;
    SmallVector<Value> readers = kernelsReaching(v, materialized);
    if (readers.size() < 2)
      continue;
    std::optional<DenseMap<Value, bool>> reads = pointwiseReads(v, isMaterialized);
    if (!reads)
      continue;
    // The kernels reading v, sibling reductions as one, each with what it reads besides v.
    using Key = std::pair<ArrayRef<int64_t>, ArrayRef<int64_t>>;
    SmallVector<std::pair<Key, size_t>> reductions; // a reduction kernel's key -> its index in `kernels`
    SmallVector<DenseSet<Value>> kernels;
    for (Value r : readers) {
      DenseSet<Value> other = kernelReads(r, v, materialized);
      Operation *def = r.getDefiningOp();
      if (def && isReduction(def)) {
        Key key{tensorType(def->getOperand(0)).getShape(), reductionDims(def)};
        auto *it = llvm::find_if(reductions, [&](auto &e) { return e.first == key; });
        if (it != reductions.end()) {
          kernels[it->second].insert(other.begin(), other.end());
          continue;
        }
        reductions.push_back({key, kernels.size()});
      }
      kernels.push_back(std::move(other));
    }
    int64_t k = kernels.size();
    if (k < 2)
      continue;
    // Recomputed, each kernel reads v's large inputs it does not read anyway
    // (a ReLU's mask recomputed from the activation a batch norm's backward
    // reads in any case costs no bytes).
    int64_t size = weighedElements(v), inputs = 0, recomputed = 0;
    for (auto &[buffer, atPoint] : *reads) {
      if (weighedElements(buffer) * 16 < size) // broadcast operands stay in cache
        continue;
      inputs += bufferBytes(buffer);
      for (const DenseSet<Value> &other : kernels)
        if (!other.contains(buffer))
          recomputed += bufferBytes(buffer);
    }
    // A buffer is a kernel more (a pass of its own, a launch): taken for a clear saving, a quarter of
    // what it costs (a ReLU's mask, recomputed from the saved activation by the two kernels of a batch
    // norm's backward, reads 4 bytes a point twice; buffered, 4 + 1 once and 1 twice: 14% fewer).
    int64_t cost = inputs + (k + 1) * bufferBytes(v), saved = recomputed - cost;
    if (saved > kMinSavedBytes && 4 * saved > cost)
      added |= materialized.insert(v);
  }
  return added;
}

constexpr int64_t kMinBroadcastPoints = 1 << 22;

namespace {
bool smallStatic(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  return tensor && tensor.hasStaticShape() && tensor.getNumElements() <= kSmallTemporary;
}

/// `op` computes small values from small operands that `fromArguments` accepts (each a function argument
/// or such a value itself), with no side effect and no library.
bool smallArgumentOp(Operation *op, function_ref<bool(Value)> fromArguments) {
  return op->getNumResults() > 0 && llvm::all_of(op->getResultTypes(), smallStatic) &&
         isa<prim::PrimDialect>(op->getDialect()) && !isLibraryCall(op) &&
         !isa<prim::DotGeneralOp, prim::PhiloxOp>(op) && llvm::all_of(op->getOperands(), [&](Value v) {
           return smallStatic(v.getType()) && fromArguments(v);
         });
}

/// Whether `v` is a function argument or smallArgumentOp's value (memoized in `known`).
bool isSmallArgumentValue(Value v, DenseMap<Value, bool> &known) {
  if (isa<BlockArgument>(v))
    return true;
  if (auto it = known.find(v); it != known.end())
    return it->second;
  known[v] = false; // (no cycles in a block; guards the recursion's depth from repeats)
  bool r = smallArgumentOp(v.getDefiningOp(), [&](Value u) { return isSmallArgumentValue(u, known); });
  return known[v] = r;
}
} // namespace

void hoistSmallArgumentValues(Block &entry) {
  DenseSet<Operation *> hoisted;
  Operation *after = nullptr; // the last op moved
  for (Operation &op : llvm::make_early_inc_range(entry.without_terminator())) {
    if (!smallArgumentOp(&op, [&](Value v) { return isa<BlockArgument>(v) || hoisted.contains(v.getDefiningOp()); }))
      continue;
    if (after && op.getPrevNode() != after)
      op.moveAfter(after);
    else if (!after && &op != &entry.front())
      op.moveBefore(&entry.front());
    after = &op;
    hoisted.insert(&op);
  }
}

/// A small value whose expression costs more than a few loads (a batch
/// norm's per-channel scale and shift: divisions and a rsqrt of its
/// statistics) and that a much larger kernel reads through a broadcast gets
/// a buffer: inlined, that kernel would compute it again at every point (per
/// element of the activation, not once per channel), and on an H200 the
/// arithmetic holds such a kernel below the memory's bandwidth. Computed from
/// a reduction's results, its kernel runs as that reduction's epilogue; from
/// arguments, it merges with other small kernels of its shape. Only where the
/// larger kernel has at least kMinBroadcastPoints points, so small models keep
/// their kernels. A value whose expression holds a reduction stays inline, and
/// so does one that a reduction reads unless it reads only the function's
/// arguments: such a value is computed at the function's start
/// (hoistSmallArgumentValues), before any reduction, so sibling reductions
/// reading it still share a kernel (a downsampling block's two norm sums),
/// while one computed later would stand between them.
bool materializeBroadcastInvariants(Block &entry, llvm::SetVector<Value> &materialized) {
  SmallVector<Operation *> ops;
  for (Operation &op : entry.without_terminator())
    ops.push_back(&op);
  int64_t largest = 0; // no kernel has more points than the largest value (a value as large is no candidate)
  for (Operation *op : ops)
    for (Value r : op->getResults())
      if (auto t = dyn_cast<RankedTensorType>(r.getType()); t && t.hasStaticShape())
        largest = std::max(largest, t.getNumElements());
  for (Value a : entry.getArguments())
    if (auto t = dyn_cast<RankedTensorType>(a.getType()); t && t.hasStaticShape())
      largest = std::max(largest, t.getNumElements());
  auto kernelPoints = [](Value root) {
    Operation *def = root.getDefiningOp();
    return def && isReduction(def) ? tensorType(def->getOperand(0)).getNumElements()
                                   : tensorType(root).getNumElements();
  };
  bool added = false;
  DenseMap<Value, bool> smallArgumentValues;
  for (Operation *op : llvm::reverse(ops)) { // consumers first: the last of a chain is kept
    Value v = unbufferedElementwise(op, materialized);
    if (!v || 16 * tensorType(v).getNumElements() > largest)
      continue;
    // v's expression up to buffers: its arithmetic, and whether it holds a reduction
    int64_t arithmetic = 0;
    bool costly = false, reduces = false;
    SmallVector<Operation *> work{op};
    DenseSet<Operation *> seen;
    while (!work.empty() && !reduces) {
      Operation *e = work.pop_back_val();
      if (!seen.insert(e).second)
        continue;
      reduces = isReduction(e) || isLibraryCall(e);
      if (!isIndexRemap(e) && !isa<prim::ConstantOp, prim::ConvertElementTypeOp>(e)) {
        ++arithmetic;
        costly |= isTranscendental(e) || isa<prim::DivOp, prim::RsqrtOp, prim::SqrtOp>(e);
      }
      for (Value operand : e->getOperands())
        if (Operation *def = operand.getDefiningOp(); def && !materialized.contains(operand))
          work.push_back(def);
    }
    if (reduces || (!costly && arithmetic < 4))
      continue;
    // A reduction computes such a value once per block in its prologue; its buffer, written before the
    // reduction, could keep it from sharing a kernel with a sibling (a downsampling block's two norms).
    int64_t size = tensorType(v).getNumElements();
    SmallVector<Value> readers = kernelsReaching(v, materialized);
    if ((isSmallArgumentValue(v, smallArgumentValues) ||
         llvm::none_of(readers, [](Value r) { return r.getDefiningOp() && isReduction(r.getDefiningOp()); })) &&
        llvm::any_of(readers, [&](Value r) {
          int64_t points = kernelPoints(r);
          return points >= kMinBroadcastPoints && points >= 16 * size;
        }))
      added |= materialized.insert(v);
  }
  return added;
}

} // namespace dyn::prim_to_loop

