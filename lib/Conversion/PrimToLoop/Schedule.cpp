//===- Schedule.cpp - where each kernel runs, and what shares one ---------===//
//
// Once the plan has fixed which values live in buffers and how each kernel
// is shaped, the schedule decides what runs together and where: sibling
// reductions in one sweep, pointwise epilogues at the end of the reduction
// kernel whose results they read, small kernels of one shape merged, and
// pointwise kernels that only one later kernel reads computed in it. The
// emitter (PrimToLoop.cpp) then writes one kernel per place.
//
//===----------------------------------------------------------------------===//
#include "Fusion.h"

#include <map>

namespace dyn::prim_to_loop {

namespace {
bool isSplat(Operation *op) {
  auto c = dyn_cast<prim::ConstantOp>(op);
  return c && cast<DenseElementsAttr>(c.getValue()).isSplat();
}
bool staticShape(Value v) { return cast<RankedTensorType>(v.getType()).hasStaticShape(); }
} // namespace

KernelSchedule scheduleKernels(func::FuncOp func, ArrayRef<Value> order, const llvm::SetVector<Value> &materialized,
                               const DenseMap<Value, unsigned> &parallelDims,
                               function_ref<bool(Value)> computedApart, bool dynamic) {
  Block &entry = func.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  SmallVector<Value> returned(ret.getOperands());
  auto materializedFn = [&](Value u) { return materialized.contains(u); };
  KernelSchedule schedule;
  auto &siblingsAt = schedule.siblingsAt;
  auto &siblingElsewhere = schedule.siblingElsewhere;
  auto &epiloguesAt = schedule.epiloguesAt;
  auto &movedAway = schedule.movedAway;
  auto &mergedAt = schedule.mergedAt;
  // Sibling reductions (a batch norm backward's channel sums) share one kernel, at the first or the last one's place.
  for (auto &[group, first] : siblingReductions(order, materializedFn)) {
    if (llvm::any_of(group, [&](Value m) { return parallelDims.lookup(m) != tensorType(m).getRank(); }))
      continue;
    Value place = first ? group.front() : group.back();
    for (Value m : group)
      if (m != place)
        siblingElsewhere.insert(m);
    siblingsAt[place] = std::move(group);
  }
  // Which kernel (its index in `order`: the value whose place it takes) writes each materialized value.
  DenseMap<Value, size_t> writerOf;
  for (auto [i, v] : llvm::enumerate(order))
    if (Operation *def = v.getDefiningOp(); !isa<prim::ConstantOp>(def) || isSplat(def))
      writerOf[v] = i; // (dense constants are globals, there before any kernel)
  for (auto &[place, group] : siblingsAt)
    for (Value m : group)
      writerOf[m] = writerOf[place];
  // Kernels that compute one value point by point from its producers (no reduction, no library call); in
  // a function with `?` dims only the statically shaped ones (a batch norm's running statistics), which
  // then merge and run as epilogues as in a static function.
  auto plainPointwise = [&](Value v) -> std::optional<DenseMap<Value, bool>> {
    Operation *def = v.getDefiningOp();
    if ((dynamic && !staticShape(v)) || !def || isLibraryCall(def) || computedApart(v) ||
        isa<prim::ConcatenateOp, prim::ReshapeOp>(def) || (isa<prim::ConstantOp>(def) && !isSplat(def)) ||
        isReduction(def) || siblingsAt.count(v) || siblingElsewhere.contains(v) ||
        parallelDims.lookup(v) != tensorType(v).getRank())
      return std::nullopt;
    return pointwiseReads(v, materializedFn);
  };
  // Whether a kernel may run earlier than its place without costing an in-place update (docs/pipeline.md,
  // "Calling convention"): a result that updates an input is written into it only where nothing after
  // its kernel reads the input, so such a kernel moves only where it is the input's one reader.
  auto expressionOps = [&](Value v) { // v's kernel's ops, up to buffers
    DenseSet<Operation *> ops;
    SmallVector<Value> work{v};
    while (!work.empty()) {
      Value u = work.pop_back_val();
      Operation *def = u.getDefiningOp();
      if (!def || (u != v && materialized.contains(u)) || !ops.insert(def).second)
        continue;
      work.append(def->operand_begin(), def->operand_end());
    }
    return ops;
  };
  auto movable = [&](Value v) {
    for (auto [k, r] : llvm::enumerate(ret.getOperands())) {
      auto arg = func.getResultAttrOfType<IntegerAttr>(k, "dyn.updates_arg");
      if (r != v || !arg || arg.getInt() < 0 || arg.getInt() >= (int64_t)entry.getNumArguments())
        continue;
      DenseSet<Operation *> ops = expressionOps(v);
      if (llvm::any_of(entry.getArgument(arg.getInt()).getUsers(), [&](Operation *user) { return !ops.contains(user); }))
        return false;
    }
    return true;
  };
  // Reduction epilogues: a pointwise kernel over a reduction kernel's domain whose last-written read is that
  // kernel's results, each at its own point (a batch norm's running-statistics update after its channel
  // sums), runs at the end of that kernel: nothing it reads is written in between, and what it reads of
  // the kernel's results is the scalar just computed. On the GPU it runs in the combining launch of a
  // split reduction, or in the thread that stores the result.
  auto reductionKernelShape = [&](Value place) -> std::optional<ArrayRef<int64_t>> {
    Operation *def = place.getDefiningOp();
    if (!siblingsAt.count(place) &&
        (siblingElsewhere.contains(place) || !isReduction(def) || !staticShape(place) ||
         parallelDims.lookup(place) != tensorType(place).getRank()))
      return std::nullopt;
    return tensorType(place).getShape();
  };
  SmallVector<std::pair<Value, std::optional<DenseMap<Value, bool>>>> pointwise;
  for (auto [j, e] : llvm::enumerate(order)) {
    std::optional<DenseMap<Value, bool>> reads = plainPointwise(e);
    pointwise.push_back({e, reads});
    if (!reads)
      continue;
    std::optional<size_t> last;
    for (auto &[u, atPoint] : *reads)
      if (auto it = writerOf.find(u); it != writerOf.end())
        last = std::max(last.value_or(0), it->second);
    if (!last || *last >= j || !movable(e))
      continue;
    Value place = order[*last];
    std::optional<ArrayRef<int64_t>> shape = reductionKernelShape(place);
    if (!shape || *shape != tensorType(e).getShape() ||
        llvm::any_of(*reads, [&](auto &read) {
          auto it = writerOf.find(read.first);
          return it != writerOf.end() && it->second == *last && !read.second;
        }))
      continue;
    epiloguesAt[place].push_back(e);
    movedAway.insert(e);
    writerOf[e] = *last;
  }
  // Small kernels of one shape (a batch norm's num_batches_tracked + 1, a launch of one thread on the GPU)
  // that read only buffers written before the first of them, or a temporary an earlier member writes, at
  // their own point (the fused kernel takes its scalar), run as one kernel in its place. Temporaries up to
  // kSmallTemporary points merge too (a batch norm backward's per-channel coefficients, computed from the
  // saved statistics, one from another): their buffers, alive from the first member's place on, are small.
  // A member reading a returned member stays apart: an optimizer step's per-parameter chains (new moments,
  // then the parameter) merged would make kernels unique to each group, which the GPU's deduplication
  // cannot share.
  constexpr int64_t kSmallKernel = 256; // points
  {
    std::map<SmallVector<int64_t>, Value> open; // shape -> the first member of the latest group
    for (auto &[e, reads] : pointwise) {
      int64_t points = tensorType(e).getNumElements();
      if (!reads || movedAway.contains(e) || points > kSmallTemporary ||
          (points > kSmallKernel && llvm::is_contained(returned, e)))
        continue;
      SmallVector<int64_t> shape(tensorType(e).getShape());
      auto it = open.find(shape);
      if (it != open.end() && movable(e)) {
        size_t at = writerOf[it->second];
        if (llvm::all_of(*reads, [&](auto &read) {
              auto w = writerOf.find(read.first);
              return w == writerOf.end() || w->second < at ||
                     (w->second == at && read.second && !llvm::is_contained(returned, read.first) &&
                      llvm::is_contained(mergedAt[it->second], read.first));
            })) {
          mergedAt[it->second].push_back(e);
          movedAway.insert(e);
          writerOf[e] = at;
          continue;
        }
      }
      open[shape] = e;
      mergedAt[e] = {e};
    }
  }
  // A pointwise kernel that reads, at its own point, larger kernels of its shape that nothing else reads (an
  // optimizer's new moments, read by the parameter's update): they run in its kernel, at its place, which
  // takes their scalars rather than loading them back: one pass over the tensors instead of three. Each
  // parameter's kernel stays the same function for one shape (the GPU's deduplication keeps one copy).
  {
    DenseMap<Value, size_t> index; // order position of each value
    for (auto [j, v] : llvm::enumerate(order))
      index[v] = j;
    // inputs each kernel writes in place (dyn.updates_arg)
    DenseMap<Value, int64_t> updates;
    for (auto [k, r] : llvm::enumerate(ret.getOperands()))
      if (auto arg = func.getResultAttrOfType<IntegerAttr>(k, "dyn.updates_arg"); arg && arg.getInt() >= 0)
        updates[r] = arg.getInt();
    for (auto [j, pw] : llvm::enumerate(pointwise)) {
      auto &[e, reads] = pw;
      if (!reads || movedAway.contains(e) || mergedAt.count(e) || tensorType(e).getNumElements() <= kSmallKernel)
        continue;
      DenseSet<Operation *> eOps = expressionOps(e);
      SmallVector<Value> delayed;
      for (auto &[u, atPoint] : *reads) {
        auto at = index.find(u);
        if (!atPoint || at == index.end() || at->second >= j || tensorType(u) != tensorType(e) ||
            movedAway.contains(u) || mergedAt.count(u) || !pointwise[at->second].second)
          continue;
        // nothing but e's kernel (and the results) reads u, directly or through ops it shares with another
        // kernel (a layer norm's input, which its statistics' reduction also reads)
        bool onlyE = true;
        SmallVector<Value> cone{u};
        DenseSet<Operation *> seen;
        while (onlyE && !cone.empty()) {
          Value c = cone.pop_back_val();
          for (Operation *user : c.getUsers()) {
            if (isa<func::ReturnOp>(user) || !seen.insert(user).second)
              continue;
            if (!eOps.contains(user)) {
              onlyE = false;
              break;
            }
            for (Value r : user->getResults())
              if (r != e)
                cone.push_back(r);
          }
        }
        if (!onlyE)
          continue;
        // no kernel between writes in place what u reads, and u reads what e writes in place only at its
        // point (before e's store there: SGD's momentum reading the parameter for its weight decay)
        bool clobbered = false;
        const DenseMap<Value, bool> &uReads = *pointwise[at->second].second;
        for (auto &[w, arg] : updates) {
          auto wi = index.find(w);
          auto read = uReads.find(entry.getArgument(arg));
          if (read == uReads.end())
            continue;
          bool between = wi != index.end() && wi->second > at->second && wi->second < j;
          clobbered |= between || (w == e && !read->second);
        }
        if (!clobbered)
          delayed.push_back(u);
      }
      if (delayed.empty())
        continue;
      llvm::sort(delayed, [&](Value x, Value y) { return index[x] < index[y]; });
      for (Value u : delayed)
        movedAway.insert(u);
      delayed.push_back(e);
      mergedAt[e] = std::move(delayed);
    }
  }

  return schedule;
}

} // namespace dyn::prim_to_loop
