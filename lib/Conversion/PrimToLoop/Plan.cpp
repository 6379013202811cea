//===- Plan.cpp - which values kernels compute where --------------------===//
#include "Fusion.h"

#include "llvm/ADT/TypeSwitch.h"

#include <set>

namespace dyn::prim_to_loop {

bool isReduction(Operation *op) {
  return isa<prim::ReduceSumOp, prim::ReduceProdOp, prim::ReduceMaxOp, prim::ReduceMinOp>(op);
}

ArrayRef<int64_t> reductionDims(Operation *op) {
  return TypeSwitch<Operation *, ArrayRef<int64_t>>(op)
      .Case<prim::ReduceSumOp, prim::ReduceProdOp, prim::ReduceMaxOp, prim::ReduceMinOp>(
          [](auto r) { return r.getDims(); });
}

loop::ReduceKind reductionKind(Operation *op) {
  if (isa<prim::ReduceSumOp>(op))
    return loop::ReduceKind::add;
  if (isa<prim::ReduceProdOp>(op))
    return loop::ReduceKind::mul;
  if (isa<prim::ReduceMaxOp>(op))
    return loop::ReduceKind::max;
  return loop::ReduceKind::min;
}

/// Ops that only remap indices of their single operand (a pad also selects
/// its padding value outside the operand).
bool isIndexRemap(Operation *op) {
  return isa<prim::BroadcastInDimOp, prim::TransposeOp, prim::SliceOp, prim::ReshapeOp,
             prim::PadOp>(op);
}

/// Ops computed by a library call into a buffer of their own.
bool isLibraryCall(Operation *op) {
  return isa<prim::DotGeneralOp, prim::ConvolutionOp, prim::AttentionOp, prim::LibraryCallOp>(op);
}

/// When a reshape only inserts or removes size-1 dims, each input dim maps to
/// one output dim (or to index 0); returns that map, else nothing.
std::optional<SmallVector<int64_t>> unitReshapeMap(ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
  SmallVector<int64_t> map;
  size_t o = 0;
  for (int64_t size : in) {
    if (size == 1) {
      map.push_back(-1);
      continue;
    }
    while (o < out.size() && out[o] == 1)
      ++o;
    if (o == out.size() || out[o] != size)
      return std::nullopt;
    map.push_back(o++);
  }
  while (o < out.size() && out[o] == 1)
    ++o;
  if (o != out.size())
    return std::nullopt;
  return map;
}

/// A reshape of `v` whose buffer is already written (`written` says which
/// are): it holds v's elements in the same row-major order, so v is read
/// from it rather than recomputed. (A post-norm transformer's residual stream
/// is a layer norm's output that the next matmul also reads through a
/// reshape: recomputing it would nest every earlier layer norm in each
/// later one.)
Value writtenReshape(Value v, function_ref<bool(Value)> written) {
  for (Operation *user : v.getUsers())
    if (isa<prim::ReshapeOp>(user) && written(user->getResult(0)))
      return user->getResult(0);
  return {};
}


//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

namespace {
/// The element count of a value's leading dims as a constant times runtime sizes, each keyed by where
/// it comes from (dimKey), a size that is a product (a reshape's merged dims) as its factors.
struct SymCount {
  int64_t constant = 1;
  SmallVector<DimKey> keys;
};
void multiplyDim(SymCount &c, Value v, int64_t d, int depth);
void multiplyIndex(SymCount &c, Value size, int depth) {
  if (std::optional<int64_t> k = getConstantIntValue(size)) {
    c.constant *= *k;
  } else if (auto mul = size.getDefiningOp<arith::MulIOp>(); mul && depth < 64) {
    multiplyIndex(c, mul.getLhs(), depth + 1);
    multiplyIndex(c, mul.getRhs(), depth + 1);
  } else if (auto dim = size.getDefiningOp<prim::DimOp>(); dim && depth < 64) {
    multiplyDim(c, dim.getInput(), dim.getDim(), depth + 1);
  } else {
    c.keys.push_back({size, -1});
  }
}
void multiplyDim(SymCount &c, Value v, int64_t d, int depth) {
  RankedTensorType t = tensorType(v);
  if (!t.isDynamicDim(d)) {
    c.constant *= t.getDimSize(d);
    return;
  }
  std::optional<DimKey> key = dimKey(v, d);
  if (key && key->second == -1)
    return multiplyIndex(c, key->first, depth);
  c.keys.push_back(key.value_or(DimKey{v, d}));
}
SymCount symbolicCount(Value v, int64_t leading) {
  SymCount c;
  for (int64_t d = 0; d < leading; ++d)
    multiplyDim(c, v, d, 0);
  return c;
}
/// Whether a's count divides b's at every size: a's constant divides b's and a's sizes are among b's.
bool dividesAtEverySize(const SymCount &a, const SymCount &b) {
  if (a.constant == 0 || b.constant % a.constant)
    return false;
  SmallVector<DimKey> rest(b.keys);
  for (const DimKey &k : a.keys) {
    auto it = llvm::find(rest, k);
    if (it == rest.end())
      return false;
    rest.erase(it);
  }
  return true;
}
} // namespace

using DepSet = uint64_t; // bits 0-31: result dims; bits 32-63: dims reduced inside
constexpr DepSet kInnerBits = ~DepSet(0) << 32;

struct DepArith {
  static constexpr bool kSharedLeadingDims = false;
  DepSet zero() { return 0; }
  DepSet affine(DepSet d, int64_t, int64_t) { return d; }
  SmallVector<DepSet> reshape(ArrayRef<DepSet> idx, ArrayRef<int64_t>, ArrayRef<int64_t> in, Value, Value,
                              int64_t) {
    DepSet all = 0;
    for (DepSet d : idx)
      all |= d;
    return SmallVector<DepSet>(in.size(), all);
  }
};


/// Decides how the kernel for `root` is shaped, or which reductions must get
/// buffers first. `inBuffer` says which values other than root the kernel
/// reads from memory.
KernelPlan planKernel(Value root, function_ref<bool(Value)> inBuffer) {
  KernelPlan plan;
  RankedTensorType type = tensorType(root);
  unsigned rank = type.getRank();
  bool rootIsReduction = root.getDefiningOp() && isReduction(root.getDefiningOp());
  DepSet used = 0;
  bool anyReduction = false;
  SmallVector<Value> direct;
  unsigned nextInner = 32;
  std::set<std::pair<void *, std::vector<DepSet>>> visited;
  DepArith ix;

  std::function<void(Value, SmallVector<DepSet>)> visit = [&](Value u, SmallVector<DepSet> deps) {
    if (u != root && inBuffer(u))
      return;
    Operation *op = u.getDefiningOp();
    if (!op || !visited.insert({u.getAsOpaquePointer(), {deps.begin(), deps.end()}}).second)
      return;
    if (isReduction(op)) {
      DepSet all = 0;
      for (DepSet d : deps)
        all |= d;
      if (u != root) {
        if (all & kInnerBits) { // would be recomputed per inner iteration
          plan.mustMaterialize.push_back(u);
          return;
        }
        used |= all;
        anyReduction = true;
        direct.push_back(u);
      }
      ArrayRef<int64_t> dims = reductionDims(op);
      SmallVector<DepSet> inDeps;
      unsigned kept = 0;
      for (int64_t i = 0, e = tensorType(op->getOperand(0)).getRank(); i < e; ++i) {
        if (llvm::is_contained(dims, i))
          inDeps.push_back(DepSet(1) << std::min(nextInner++, 63u));
        else
          inDeps.push_back(deps[kept++]);
      }
      visit(op->getOperand(0), inDeps);
      return;
    }
    if (isIndexRemap(op)) {
      visit(op->getOperand(0), remapIndex<DepSet>(op, deps, ix));
      return;
    }
    if (isa<prim::PhiloxOp>(op)) // reads its 0-d seed, at no index
      return visit(op->getOperand(0), {});
    if (auto g = dyn_cast<prim::GatherOp>(op)) {
      // The input's index along `dim` is the index tensor's value there.
      visit(g.getIndex(), deps);
      SmallVector<DepSet> inDeps(deps);
      inDeps[g.getDim()] = 0;
      for (DepSet d : deps)
        inDeps[g.getDim()] |= d;
      visit(g.getInput(), inDeps);
      return;
    }
    for (Value operand : op->getOperands())
      if (isa<RankedTensorType>(operand.getType()))
        visit(operand, deps);
  };

  SmallVector<DepSet> rootDeps;
  for (unsigned i = 0; i < rank; ++i)
    rootDeps.push_back(DepSet(1) << i);
  visit(root, rootDeps);
  if (!plan.mustMaterialize.empty())
    return plan;
  if (!anyReduction) {
    plan.parallelDims = rank;
    return plan;
  }
  unsigned k = rootIsReduction ? rank : (used ? 64 - llvm::countl_zero(used) : 0);
  bool recomputed = (k == 0);
  for (unsigned d = 0; d < k; ++d)
    if (!(used & (DepSet(1) << d)) && type.getDimSize(d) != 1)
      recomputed = true;
  if (recomputed) {
    plan.mustMaterialize = direct;
    return plan;
  }
  // A reduction placed at the parallel level runs once per point of the leading k dims: more points
  // than it has values means it is recomputed for points it does not depend on. The dependence sets
  // above are exact through transposes and slices but not through a reshape that merges dims (every
  // merged dim seems to feed every index): GroupNorm(1, C)'s per-sample mean read through MobileViT's
  // unfolded patches would otherwise be summed over C*H*W again for every output element.
  int64_t points = 1;
  bool dynamicPoints = false;
  for (unsigned d = 0; d < k; ++d) {
    dynamicPoints |= type.isDynamicDim(d);
    points *= type.isDynamicDim(d) ? 1 : type.getDimSize(d);
  }
  // With dynamic dims the counts are products of runtime sizes: a reduction whose shape is the
  // kernel's leading dims, or whose element count the points' divides at every size (a layer norm's
  // [?, ?] statistics read by the [? * ?, 64] reshape of its result), has a value per point or more;
  // any other gets a buffer.
  for (Value u : direct) {
    if (!dynamicPoints && tensorType(u).hasStaticShape()) {
      if (points > tensorType(u).getNumElements())
        plan.mustMaterialize.push_back(u);
    } else if (tensorType(u).getShape() != type.getShape().take_front(k) &&
               !dividesAtEverySize(symbolicCount(root, k), symbolicCount(u, tensorType(u).getRank()))) {
      plan.mustMaterialize.push_back(u);
    }
  }
  if (!plan.mustMaterialize.empty())
    return plan;
  plan.parallelDims = k;
  return plan;
}

} // namespace dyn::prim_to_loop

namespace dyn::prim_to_loop {

//===----------------------------------------------------------------------===//
// Sibling reductions
//===----------------------------------------------------------------------===//

namespace {
/// What the kernel computing `v` reads from buffers (materialized values and
/// arguments: the traversal stops there), and whether it computes a
/// reduction besides `v` itself. Through a reshape an earlier kernel wrote
/// it goes on to what the reshape's value is computed from (a superset).
struct Reads {
  DenseSet<Value> buffers;
  bool innerReduction = false;
};

Reads readsOf(Value v, function_ref<bool(Value)> materialized) {
  Reads reads;
  DenseSet<Value> seen;
  SmallVector<Value> work;
  if (Operation *def = v.getDefiningOp())
    work.append(def->operand_begin(), def->operand_end());
  while (!work.empty()) {
    Value u = work.pop_back_val();
    if (!isa<RankedTensorType>(u.getType()) || !seen.insert(u).second)
      continue;
    if (isa<BlockArgument>(u) || materialized(u)) {
      reads.buffers.insert(u);
      continue;
    }
    Operation *def = u.getDefiningOp();
    if (isReduction(def))
      reads.innerReduction = true;
    work.append(def->operand_begin(), def->operand_end());
  }
  return reads;
}
} // namespace

/// Where the size of `v`'s `?` dim `d` comes from: a function argument's dim,
/// or an index value (a reshape's or broadcast's size operand); equal keys
/// are equal sizes. Traced through the ops that carry a dim from an operand
/// unchanged; nullopt where the trace stops.
std::optional<DimKey> dimKey(Value v, int64_t d) {
  for (int steps = 0; steps < 1024; ++steps) {
    RankedTensorType t = tensorType(v);
    if (isa<BlockArgument>(v))
      return DimKey{v, d};
    Operation *op = v.getDefiningOp();
    auto sizeOperand = [&](Value size) -> std::optional<DimKey> {
      if (auto dim = size.getDefiningOp<prim::DimOp>())
        return dimKey(dim.getInput(), dim.getDim());
      return DimKey{size, -1};
    };
    int64_t k = llvm::count_if(t.getShape().take_front(d), ShapedType::isDynamic);
    if (auto bc = dyn_cast<prim::BroadcastInDimOp>(op)) {
      auto it = llvm::find(bc.getDims(), d);
      if (it != bc.getDims().end() && tensorType(bc.getInput()).isDynamicDim(it - bc.getDims().begin())) {
        d = it - bc.getDims().begin();
        v = bc.getInput();
        continue;
      }
      return sizeOperand(bc.getSizes()[k]);
    }
    if (auto rs = dyn_cast<prim::ReshapeOp>(op))
      return sizeOperand(rs.getSizes()[k]);
    if (auto tr = dyn_cast<prim::TransposeOp>(op)) {
      d = tr.getPermutation()[d];
      v = tr.getInput();
      continue;
    }
    // ops whose `?` dim is an operand's (as the lowering's dimOf sizes them)
    Value same;
    if (isa<prim::SliceOp, prim::PadOp>(op) ||
        (isa<prim::ConcatenateOp>(op) && (int64_t)cast<prim::ConcatenateOp>(op).getDim() != d))
      same = op->getOperand(0);
    else if (auto conv = dyn_cast<prim::ConvolutionOp>(op); conv && d == 0)
      same = conv.getInput();
    else if (auto g = dyn_cast<prim::GatherOp>(op))
      same = g.getIndex();
    else if (auto ds = dyn_cast<prim::DynamicSliceOp>(op); ds && (int64_t)ds.getDim() != d)
      same = ds.getInput();
    else if (auto call = dyn_cast<prim::LibraryCallOp>(op)) {
      std::optional<prim::LibraryResultDim> rule =
          prim::libraryResultDim(call.getCallee(), cast<OpResult>(v).getResultNumber(), d, t.getRank());
      if (rule && rule->multiple != 1) // a size of its own (a rounded log-sum-exp length)
        return DimKey{v, d};
      if (rule) {
        d = rule->dim;
        same = call.getInputs()[rule->operand];
      }
    }
    else if (auto att = dyn_cast<prim::AttentionOp>(op))
      same = d + 1 < t.getRank() ? att.getQuery() : att.getValue();
    if (same) {
      v = same;
      continue;
    }
    if (isReduction(op)) {
      ArrayRef<int64_t> dims = reductionDims(op);
      int64_t kept = -1, from = -1;
      for (int64_t i = 0, e = tensorType(op->getOperand(0)).getRank(); i < e && from < 0; ++i)
        if (!llvm::is_contained(dims, i) && ++kept == d)
          from = i;
      if (from < 0)
        return std::nullopt;
      d = from;
      v = op->getOperand(0);
      continue;
    }
    if (op->hasTrait<mlir::OpTrait::Elementwise>()) {
      Value next;
      for (Value operand : op->getOperands())
        if (auto ot = dyn_cast<RankedTensorType>(operand.getType());
            ot && ot.getRank() == t.getRank() && ot.isDynamicDim(d)) {
          next = operand;
          break;
        }
      if (!next)
        return std::nullopt;
      v = next;
      continue;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

namespace {
/// Whether the operands of reductions `a` and `b` have one shape: equal
/// static dims, and `?` dims whose sizes come from one place.
bool sameOperandShape(Operation *a, Operation *b) {
  Value x = a->getOperand(0), y = b->getOperand(0);
  RankedTensorType tx = tensorType(x), ty = tensorType(y);
  if (tx.getShape() != ty.getShape())
    return false;
  for (int64_t d = 0; d < tx.getRank(); ++d)
    if (tx.isDynamicDim(d)) {
      std::optional<DimKey> kx = dimKey(x, d), ky = dimKey(y, d);
      if (!kx || kx != ky)
        return false;
    }
  return true;
}
} // namespace

/// Groups of sibling reductions among the materialized values (`order`: the
/// kernels in program order): reductions of one operand shape over the same
/// dims whose kernels read a buffer in common, none reading another, each
/// computing no other reduction; statically shaped results, operands whose
/// `?` dims come from one place (two `?` need not be one size). A group is
/// computed by one kernel that writes every member: a batch norm backward's
/// sum(dy) and sum(dy * xhat) over N, H, W sweep dy once. The kernel takes the first member's place where every member reads
/// only buffers written before it (a downsampling block's two batch norms
/// share sum(dy), which the first one's input gradient reads before the
/// second's sums come); else the last member's, where no kernel between the
/// first and the last member may read an earlier member. Returned as
/// (group, whether it takes the first member's place).
SmallVector<std::pair<SmallVector<Value>, bool>> siblingReductions(ArrayRef<Value> order,
                                                                   function_ref<bool(Value)> materialized) {
  constexpr size_t kWindow = 16; // kernels looked ahead for a sibling
  DenseMap<Value, Reads> cache;
  auto readsOfCached = [&](Value v) -> const Reads & {
    auto it = cache.find(v);
    if (it == cache.end())
      it = cache.try_emplace(v, readsOf(v, materialized)).first;
    return it->second;
  };
  DenseMap<Value, size_t> at;
  for (auto [i, v] : llvm::enumerate(order))
    at[v] = i;
  auto eligible = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && isReduction(def) && tensorType(v).hasStaticShape() && !readsOfCached(v).innerReduction;
  };
  auto siblings = [](Value a, Value b) {
    Operation *da = a.getDefiningOp(), *db = b.getDefiningOp();
    return reductionDims(da) == reductionDims(db) && sameOperandShape(da, db);
  };
  SmallVector<std::pair<SmallVector<Value>, bool>> groups;
  DenseSet<Value> grouped;
  for (size_t i = 0; i < order.size(); ++i) {
    Value first = order[i];
    if (grouped.contains(first) || !eligible(first))
      continue;
    // whether `v`'s kernel could run in `first`'s place: it reads only buffers written before
    auto hoistable = [&](Value v) {
      return llvm::all_of(readsOfCached(v).buffers, [&](Value r) { return !at.count(r) || at[r] < i; });
    };
    SmallVector<Value> group{first};
    DenseSet<Value> members{first}, shared(readsOfCached(first).buffers.begin(), readsOfCached(first).buffers.end());
    bool hoist = true;        // every member so far could run in first's place
    bool readBetween = false; // a kernel between the members reads one: the group cannot sink past it
    for (size_t j = i + 1; j < order.size() && j <= i + kWindow; ++j) {
      Value u = order[j];
      const Reads &reads = readsOfCached(u);
      bool readsMember = llvm::any_of(members, [&](Value m) { return reads.buffers.contains(m); });
      if (!grouped.contains(u) && !readsMember && eligible(u) && siblings(first, u) &&
          llvm::any_of(reads.buffers, [&](Value r) { return shared.contains(r); })) {
        bool up = hoist && hoistable(u);
        if (up || !readBetween) {
          hoist = up;
          group.push_back(u);
          members.insert(u);
          continue;
        }
      }
      readBetween |= readsMember;
      if (readBetween && !hoist)
        break;
    }
    if (group.size() < 2)
      continue;
    grouped.insert(group.begin(), group.end());
    groups.push_back({std::move(group), hoist});
  }
  return groups;
}

} // namespace dyn::prim_to_loop

namespace dyn::prim_to_loop {

//===----------------------------------------------------------------------===//
// Reads of a pointwise kernel
//===----------------------------------------------------------------------===//

/// What the pointwise kernel computing `v` reads from buffers (materialized
/// values and arguments: the traversal stops there), each with whether every
/// read of it is at the kernel's own point: reached through ops that keep the
/// index (elementwise ops on operands of the result's shape), never through
/// an index remap, a gather or a dynamic slice. Nothing where `v`'s
/// expression holds a reduction, or a value the emitter could read through a
/// reshape that another kernel writes (which one depends on where the
/// kernel runs).
std::optional<DenseMap<Value, bool>> pointwiseReads(Value v, function_ref<bool(Value)> materialized) {
  DenseMap<Value, bool> reads;
  std::set<std::pair<void *, bool>> seen;
  auto reshapedElsewhere = [&](Value u) {
    return llvm::any_of(u.getUsers(), [&](Operation *user) {
      return isa<prim::ReshapeOp>(user) && materialized(user->getResult(0));
    });
  };
  if (reshapedElsewhere(v))
    return std::nullopt;
  SmallVector<std::pair<Value, bool>> work;
  auto pushOperands = [&](Operation *op, bool atPoint) {
    bool keeps = atPoint && !isIndexRemap(op) &&
                 !isa<prim::GatherOp, prim::DynamicSliceOp, prim::PhiloxOp, prim::IotaOp>(op);
    for (Value operand : op->getOperands())
      if (isa<RankedTensorType>(operand.getType()))
        work.push_back({operand, keeps && tensorType(operand).getShape() == tensorType(op->getResult(0)).getShape()});
  };
  Operation *def = v.getDefiningOp();
  if (!def || isReduction(def))
    return std::nullopt;
  pushOperands(def, true);
  while (!work.empty()) {
    auto [u, atPoint] = work.pop_back_val();
    if (!seen.insert({u.getAsOpaquePointer(), atPoint}).second)
      continue;
    if (isa<BlockArgument>(u) || materialized(u)) {
      auto [it, fresh] = reads.try_emplace(u, atPoint);
      it->second = it->second && atPoint;
      continue;
    }
    Operation *op = u.getDefiningOp();
    if (isReduction(op) || reshapedElsewhere(u))
      return std::nullopt;
    pushOperands(op, atPoint);
  }
  return reads;
}

} // namespace dyn::prim_to_loop
