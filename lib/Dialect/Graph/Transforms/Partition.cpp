//===- Partition.cpp - dyn-graph-partition: forward and backward by min-cut ===//
//
// AOTAutograd's min-cut rematerialization on the joint function. Every value
// that does not depend on a cotangent is a node split in two (in -> out, the
// capacity its bytes: the cost of saving it); edges follow uses. The source
// feeds the forward's arguments and the values the forward must compute and
// may not recompute (GEMMs, reductions, library calls, random draws); values
// the backward's ops read drain into the sink. The minimum cut is the set of
// saved values: everything on the sink side the backward computes from them.
// A value the forward's kernels would not write to memory costs twice its
// bytes to save (AOTAutograd's weighting of unmaterialized values); one it
// writes anyway that a GEMM, convolution or library call of the backward reads
// is saved, never recomputed (AOTAutograd's ban on values materialized in the
// backward: recomputed, it would be written again in full). The
// backward recomputes each value right before its first reader, not at its
// start in the forward's order (every recomputed activation would live from
// there to its layer's gradient).
//
//===----------------------------------------------------------------------===//
#include "SymbolicDims.h"
#include "dyn/Dialect/Graph/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <deque>
#include <limits>

namespace dyn::graph {
#define GEN_PASS_DEF_GRAPHPARTITIONPASS
#include "dyn/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace dyn::graph

using namespace mlir;
using namespace dyn::graph;

namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;

/// Dinic's maximum flow; after run(), reachable() is the source side of a minimum cut.
class MaxFlow {
public:
  explicit MaxFlow(int n) : adj(n), level(n), next(n) {}
  void edge(int u, int v, int64_t cap) {
    adj[u].push_back(edges.size());
    edges.push_back({v, cap});
    adj[v].push_back(edges.size());
    edges.push_back({u, 0});
  }
  void run(int s, int t) {
    while (bfs(s, t)) {
      std::fill(next.begin(), next.end(), 0);
      while (dfs(s, t, kInf) > 0) {
      }
    }
  }
  std::vector<bool> reachable(int s) {
    std::vector<bool> seen(adj.size(), false);
    std::deque<int> q{s};
    seen[s] = true;
    while (!q.empty()) {
      int u = q.front();
      q.pop_front();
      for (int e : adj[u])
        if (edges[e].cap > 0 && !seen[edges[e].to]) {
          seen[edges[e].to] = true;
          q.push_back(edges[e].to);
        }
    }
    return seen;
  }

private:
  struct Edge {
    int to;
    int64_t cap;
  };
  std::vector<Edge> edges;
  std::vector<std::vector<int>> adj;
  std::vector<int> level;
  std::vector<size_t> next;

  bool bfs(int s, int t) {
    std::fill(level.begin(), level.end(), -1);
    std::deque<int> q{s};
    level[s] = 0;
    while (!q.empty()) {
      int u = q.front();
      q.pop_front();
      for (int e : adj[u])
        if (edges[e].cap > 0 && level[edges[e].to] < 0) {
          level[edges[e].to] = level[u] + 1;
          q.push_back(edges[e].to);
        }
    }
    return level[t] >= 0;
  }
  int64_t dfs(int u, int t, int64_t f) {
    if (u == t)
      return f;
    for (size_t &i = next[u]; i < adj[u].size(); ++i) {
      Edge &e = edges[adj[u][i]];
      if (e.cap <= 0 || level[e.to] != level[u] + 1)
        continue;
      int64_t pushed = dfs(e.to, t, std::min(f, e.cap));
      if (pushed > 0) {
        e.cap -= pushed;
        edges[adj[u][i] ^ 1].cap += pushed;
        return pushed;
      }
    }
    return 0;
  }
};

/// A function argument's `?` dim weighs as this many elements in the cut (the sizes are known at run time
/// only).
constexpr int64_t kDynamicDimWeight = 128;

int64_t indexWeight(Value index, int depth);

/// The weight of dim `d` of v: its size where static, else that of the value it is traced to
/// (SymbolicDims.h): an argument's `?` dim weighs kDynamicDimWeight, and a size computed from others (a
/// flattened [batch * length] dim) weighs as computed from theirs, so that a [?, 64] view of a [4, ?, 64]
/// tensor weighs as much as the tensor.
int64_t dimWeight(Value v, int64_t d, int depth = 0) {
  auto t = cast<RankedTensorType>(v.getType());
  if (!t.isDynamicDim(d))
    return t.getDimSize(d);
  if (depth > 16)
    return kDynamicDimWeight;
  DimSource s = traceDim(v, d);
  if (s.index)
    return indexWeight(s.index, depth + 1);
  if (s.tensor && s.tensor != v && !isa<BlockArgument>(s.tensor))
    return dimWeight(s.tensor, s.dim, depth + 1);
  return kDynamicDimWeight;
}

/// An `index` value's weight: constants as they are, graph.dim as the dim it reads, arithmetic on them.
int64_t indexWeight(Value index, int depth) {
  if (depth > 16)
    return kDynamicDimWeight;
  Operation *def = index.getDefiningOp();
  if (!def)
    return kDynamicDimWeight;
  if (auto c = dyn_cast<arith::ConstantIndexOp>(def))
    return c.value();
  if (auto d = dyn_cast<DimOp>(def))
    return dimWeight(d.getInput(), d.getDim(), depth + 1);
  auto operand = [&](unsigned i) { return std::max<int64_t>(1, indexWeight(def->getOperand(i), depth + 1)); };
  if (isa<arith::AddIOp>(def))
    return operand(0) + operand(1);
  if (isa<arith::SubIOp>(def))
    return std::max<int64_t>(1, operand(0) - operand(1));
  if (isa<arith::MulIOp>(def))
    return operand(0) * operand(1);
  if (isa<arith::DivUIOp, arith::DivSIOp, arith::CeilDivUIOp, arith::CeilDivSIOp, arith::FloorDivSIOp>(def))
    return std::max<int64_t>(1, operand(0) / operand(1));
  return kDynamicDimWeight;
}

/// The bytes of a tensor value; an `index` value (a size) cannot be saved at all: the backward computes it
/// again from the tensors it reads.
int64_t bytes(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return kInf;
  int64_t bits = t.getElementType().getIntOrFloatBitWidth(), n = 1;
  for (int64_t d = 0; d < t.getRank(); ++d)
    n = std::min<int64_t>(n * std::max<int64_t>(dimWeight(v, d), 0), int64_t(1) << 50);
  return std::max<int64_t>(1, n * std::max<int64_t>(bits, 8) / 8);
}

/// Cheap to compute again in the backward (AOTAutograd's recomputable set):
/// pointwise ops, views and conversions, constants. GEMMs, reductions, library
/// calls, gathers and random draws are computed once, in the forward.
bool recomputable(Operation *op) {
  // sizes (graph.dim, arith on `index`): read again from the backward's own buffers
  if (op->getNumResults() > 0 && llvm::all_of(op->getResultTypes(), [](Type t) { return t.isIndex(); }))
    return true;
  if (isa<ConstantOp, ConvertOp, DetachOp, ReshapeOp, PermuteOp, ExpandOp, SliceOp, CatOp, PadOp>(op))
    return true;
  if (op->getNumOperands() == 0 || op->getNumResults() != 1)
    return false;
  // Registered elementwise families: the result has the broadcast shape of the operands and no attribute
  // changes how many elements one result element reads.
  if (!op->getAttrDictionary().empty() && !isa<GeluOp, LeakyReluOp, EluOp, SoftplusOp, HardtanhOp, ThresholdOp>(op))
    return false;
  auto rt = cast<RankedTensorType>(op->getResult(0).getType());
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.getRank() > rt.getRank())
      return false;
    for (int64_t i = 0; i < t.getRank(); ++i) {
      int64_t d = t.getDimSize(i), r = rt.getDimSize(rt.getRank() - t.getRank() + i);
      if (d != r && d != 1)
        return false;
    }
  }
  return !isa<MatmulOp, AddmmOp, GatherOp, DropoutOp, RandomOp, BernoulliOp, TorchCallOp>(op);
}

/// Never recomputed, whatever the memory budget: random draws (the backward must see the forward's), opaque
/// PyTorch calls and collectives (another rank waits for each one issued).
bool neverRecompute(Operation *op) {
  return isa<RandomOp, BernoulliOp, DropoutOp, SeededRandomOp, SeededNormalOp, SeededAttentionOp, AttentionLseOp,
             MaskedAttentionLseOp, TorchCallOp, AllReduceOp, AllGatherIntoTensorOp, ReduceScatterTensorOp>(op);
}

/// Work superlinear in the bytes it reads: GEMMs, convolutions, attention, recurrent layers, factorizations.
bool heavy(Operation *op) {
  return isa<MatmulOp, AddmmOp, BilinearOp, ConvolutionOp, ScaledDotProductAttentionOp, AttentionLseOp,
             MaskedAttentionLseOp, GroupedMmOp, LstmOp, GruOp, RnnOp>(op) ||
         op->getName().getStringRef().starts_with("graph.linalg_");
}

/// The memory budget's tiers of what the backward may recompute: 0 the default (recomputable()), 1 also
/// reductions, normalizations, gathers and pooling, 2 also the heavy ops.
constexpr int kTiers = 3;
bool mayRecompute(Operation *op, int tier) {
  if (recomputable(op))
    return true;
  if (tier == 0 || neverRecompute(op))
    return false;
  return tier >= 2 || !heavy(op);
}

/// A value that lives in memory in the forward anyway: an argument, a result of an op that is not fused
/// away (a GEMM, a convolution, a reduction's output), or the operand of one that reads a buffer (a
/// library call). Saving another value costs a buffer the forward would not write otherwise, so its bytes
/// count twice (AOTAutograd's is_materialized weighting): batch norm's input is saved, not x - mean.
bool readsFromMemory(Operation *user) {
  return !recomputable(user) && !isa<SumOp, MeanOp, AmaxOp, AminOp, ProdOp, AllOp, AnyOp, LogsumexpOp>(user);
}
bool materialized(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !recomputable(def))
    return true;
  return llvm::any_of(v.getUsers(), readsFromMemory);
}

/// Views cost nothing to recompute: the backward reads the saved value through them.
bool isView(Operation *op) { return isa<ReshapeOp, PermuteOp, ExpandOp, SliceOp, DetachOp>(op); }

/// Whether the backward can compute `z` by recomputable ops from one saved value as large as it (a batch
/// norm's input) and small values (a sixteenth of z's bytes at most: the norm's per-channel statistics and
/// shift, saved besides if they are not): then reading z costs what reading that value does.
bool computableFromOneSaved(Value z, const DenseSet<Value> &saved, const DenseSet<Value> &tangent) {
  int64_t small = bytes(z) / 16;
  SmallVector<Value> work{z};
  DenseSet<Value> seen;
  Value large;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (tangent.contains(v) || seen.size() > 256)
      return false;
    if (v != z && bytes(v) <= small)
      continue;
    if (v != z && saved.contains(v)) {
      if (large && large != v)
        return false;
      large = v;
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!def || !recomputable(def))
      return false;
    work.append(def->getOperands().begin(), def->getOperands().end());
  }
  return bool(large);
}

/// relu(z) > 0 exactly where z > 0 (NaN and -0 included). A ReLU's derivative masks its cotangent by its
/// result; where the backward computes z from one value it saves anyway (a batch norm's output, from the
/// norm's input and statistics), the mask is taken from z: the kernels applying it (the norm's gradient
/// sums and its input gradient) read the norm's input already and no longer the saved ReLU output as
/// well (ResNet-50's backward at batch 256: 80 GB through dyn's kernels instead of 88). Returns whether a
/// mask moved.
bool masksFromReluInputs(Block &body, ArrayRef<Value> saved, const DenseSet<Value> &tangent,
                         const DenseSet<Value> &fwRequired) {
  DenseSet<Value> have(saved.begin(), saved.end());
  bool moved = false;
  for (Operation &op : body.without_terminator()) {
    auto gt = dyn_cast<GtOp>(&op);
    if (!gt || tangent.contains(gt.getResult()) || fwRequired.contains(gt.getResult()))
      continue;
    auto relu = gt.getLhs().getDefiningOp<ReluOp>();
    if (!relu || !matchPattern(gt.getRhs(), m_AnyZeroFloat()) || have.contains(relu.getInput()) ||
        !computableFromOneSaved(relu.getInput(), have, tangent))
      continue;
    gt->setOperand(0, relu.getInput());
    moved = true;
  }
  return moved;
}

struct GraphPartitionPass : dyn::graph::impl::GraphPartitionPassBase<GraphPartitionPass> {
  using GraphPartitionPassBase::GraphPartitionPassBase;

  void runOnOperation() override {
    SmallVector<func::FuncOp> joints;
    for (auto f : getOperation().getOps<func::FuncOp>())
      if (f->hasAttr("dyn.joint"))
        joints.push_back(f);
    for (func::FuncOp f : joints)
      if (failed(split(f)))
        return signalPassFailure();
  }

  LogicalResult split(func::FuncOp joint) {
    auto info = joint->getAttrOfType<DictionaryAttr>("dyn.joint");
    int64_t numOutputs = cast<IntegerAttr>(info.get("outputs")).getInt();
    Block &body = joint.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    SmallVector<BlockArgument> primals, cotangents;
    for (BlockArgument a : body.getArguments())
      (joint.getArgAttr(a.getArgNumber(), "dyn.cotangent") ? cotangents : primals).push_back(a);

    // Values that depend on a cotangent belong to the backward.
    DenseSet<Value> tangent(cotangents.begin(), cotangents.end());
    for (Operation &op : body.without_terminator())
      if (llvm::any_of(op.getOperands(), [&](Value v) { return tangent.contains(v); }))
        for (Value r : op.getResults())
          tangent.insert(r);
    // What the forward's results need.
    DenseSet<Value> fwRequired;
    SmallVector<Value> work(ret.getOperands().take_front(numOutputs));
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!fwRequired.insert(v).second)
        continue;
      if (Operation *def = v.getDefiningOp())
        work.append(def->getOperands().begin(), def->getOperands().end());
    }
    // The values the backward reads from the forward's side (ops no gradient needs, a GEMM a rule
    // replaced by another, read nothing).
    DenseSet<Operation *> live;
    SmallVector<Value> pending(ret.getOperands());
    while (!pending.empty()) {
      Operation *def = pending.pop_back_val().getDefiningOp();
      if (def && live.insert(def).second)
        pending.append(def->getOperands().begin(), def->getOperands().end());
    }
    DenseSet<Value> bwReads;
    for (Operation &op : body.without_terminator())
      if (live.contains(&op) && llvm::any_of(op.getResults(), [&](Value r) { return tangent.contains(r); }))
        for (Value v : op.getOperands())
          if (!tangent.contains(v))
            bwReads.insert(v);
    for (Value v : ret.getOperands().drop_front(numOutputs))
      if (!tangent.contains(v))
        bwReads.insert(v);

    // Values the forward writes to memory anyway (it needs them for its results and a GEMM, a convolution
    // or a library call reads them) that a backward op of that kind reads too: recomputed, the backward would
    // write them again in full, with their own inputs read again (a ResNet block's output, recomputed from
    // the batch norm's input and the previous block's output, for its convolution's weight gradient). Saving
    // them costs the forward nothing but memory; AOTAutograd's partitioner never recomputes a value that is
    // materialized in the backward either (is_materialized_backwards).
    DenseSet<Value> materializedInBoth;
    for (Operation &op : body.without_terminator()) {
      if (!live.contains(&op) || !readsFromMemory(&op) ||
          llvm::none_of(op.getResults(), [&](Value r) { return tangent.contains(r); }))
        continue;
      for (Value v : op.getOperands()) {
        while (v.getDefiningOp() && isView(v.getDefiningOp()))  // the value a view of it reads
          v = v.getDefiningOp()->getOperand(0);
        Operation *def = v.getDefiningOp();
        if (!def || tangent.contains(v) || !fwRequired.contains(v) || !recomputable(def) ||
            isa<ConstantOp>(def) || !isa<RankedTensorType>(v.getType()))
          continue;
        auto forwardReader = [&](Operation *user) {
          return readsFromMemory(user) && llvm::none_of(user->getResults(), [&](Value r) { return tangent.contains(r); });
        };
        if (llvm::any_of(v.getUsers(), forwardReader))
          materializedInBoth.insert(v);
      }
    }

    // The flow network over the forward-side values.
    SmallVector<Value> values(primals.begin(), primals.end());
    for (Operation &op : body.without_terminator())
      for (Value r : op.getResults())
        if (!tangent.contains(r))
          values.push_back(r);
    DenseMap<Value, int> index;
    for (Value v : values)
      index[v] = index.size();
    int n = values.size(), source = 2 * n, sink = 2 * n + 1;
    // The minimum cut when ops up to `tier` may be recomputed in the backward (mayRecompute).
    auto cut = [&](int tier) {
      MaxFlow flow(2 * n + 2);
      for (Value v : values) {
        int i = index[v];
        Operation *def = v.getDefiningOp();
        // under a memory budget (tier > 0) the arguments count as free: the caller holds them anyway
        int64_t cost = tier > 0 && !def ? 1 : bytes(v);
        flow.edge(2 * i, 2 * i + 1, cost >= kInf || materialized(v) ? cost : 2 * cost);
        // An op of a checkpoint region (dyn.recompute) is recomputed in the backward whatever it is: its
        // value drains into the sink, so the cut saves the region's inputs instead (AOTAutograd's
        // must_recompute). The region's outputs carry no mark: kept, as eager keeps them.
        bool mustRecompute = def && def->hasAttr("dyn.recompute");
        if (mustRecompute)
          flow.edge(2 * i, sink, kInf);
        else if (!def || (!mayRecompute(def, tier) &&
                          llvm::any_of(def->getResults(), [&](Value r) { return fwRequired.contains(r); })))
          flow.edge(source, 2 * i, kInf);  // an op the forward runs anyway: each of its results is there
        else if (tier == 0 && materializedInBoth.contains(v))
          flow.edge(source, 2 * i, kInf);  // recomputing it would write it again: saved (AOTAutograd's ban)
        if (def)
          for (Value o : def->getOperands())
            flow.edge(2 * index[o] + 1, 2 * i, kInf);
        if (bwReads.contains(v))
          flow.edge(2 * i + 1, sink, kInf);
      }
      flow.run(source, sink);
      std::vector<bool> side = flow.reachable(source);
      SmallVector<Value> chosen;
      for (Value v : values) {
        int i = index[v];
        if (side[2 * i] && !side[2 * i + 1])
          chosen.push_back(v);
      }
      return chosen;
    };
    // The bytes the forward keeps alive for the backward beyond its arguments.
    auto savedBytes = [](ArrayRef<Value> chosen) {
      int64_t total = 0;
      for (Value v : chosen)
        if (!isa<BlockArgument>(v))
          total = std::min(kInf, total + bytes(v));
      return total;
    };
    SmallVector<Value> saved = cut(0);
    if (masksFromReluInputs(body, saved, tangent, fwRequired))
      saved = cut(0);
    if (memoryBudget < 1.0) {
      // A budget b below 1: the first tier whose saved bytes are at most S_min + b (S_0 - S_min), where S_0
      // is the default cut's and S_min the cut's with everything but random draws and collectives
      // recomputable (b = 0: that cut).
      SmallVector<Value> least = cut(kTiers - 1);
      int64_t s0 = savedBytes(saved), sMin = savedBytes(least);
      double target = sMin + std::max(0.0, (double)memoryBudget) * double(s0 - sMin);
      for (int tier = 1; tier < kTiers && (double)savedBytes(saved) > target; ++tier)
        saved = tier == kTiers - 1 ? least : cut(tier);
    }

    OpBuilder b(joint);
    std::string name = joint.getSymName().str();
    // The forward: its results, then the saved values that are no argument.
    SmallVector<Value> fwResults(ret.getOperands().take_front(numOutputs));
    SmallVector<int64_t> savedCode;
    for (Value v : saved) {
      if (auto a = dyn_cast<BlockArgument>(v)) {
        savedCode.push_back(a.getArgNumber());
        continue;
      }
      // A forward result already (softmax's output): saved from there, not returned twice.
      auto it = llvm::find(fwResults, v);
      savedCode.push_back(-1 - static_cast<int64_t>(it - fwResults.begin()));
      if (it == fwResults.end())
        fwResults.push_back(v);
    }
    SmallVector<Value> primalValues(primals.begin(), primals.end());
    func::FuncOp fw = clone(b, joint, name + "_forward", primalValues, {}, fwResults);
    for (BlockArgument a : primals)
      if (DictionaryAttr d = joint.getArgAttrDict(a.getArgNumber()))
        fw.setArgAttrs(a.getArgNumber(), d);
    fw->setAttr("dyn.forward", b.getDictionaryAttr({b.getNamedAttr("outputs", b.getI64IntegerAttr(numOutputs))}));
    if (llvm::any_of(fwResults, [](Value v) { return !cast<RankedTensorType>(v.getType()).hasStaticShape(); }))
      fw->setAttr("dyn.result_sizes", b.getStringAttr(resultSizes(fwResults)));
    // The backward: saved values and cotangents -> the gradients.
    SmallVector<Value> bwResults(ret.getOperands().drop_front(numOutputs));
    func::FuncOp bw = clone(b, joint, name + "_backward", saved, cotangents, bwResults);
    if (!bw)
      return joint.emitError("dyn-graph-partition: the backward needs a forward value that is not saved");
    bw->setAttr("dyn.saved", b.getDenseI64ArrayAttr(savedCode));
    bw->setAttr("dyn.differentiable", info.get("differentiable"));
    joint.erase();
    return success();
  }

  /// Each result's sizes as Python expressions over the arguments' (`s[k][i]`: dim i of argument k; `?`
  /// where a size is not a function of them): results separated by `|`, dims by `;`. The runtime allocates
  /// the forward's results from it.
  static std::string resultSizes(ArrayRef<Value> results) {
    std::string out;
    for (auto [k, v] : llvm::enumerate(results)) {
      if (k)
        out += "|";
      auto t = cast<RankedTensorType>(v.getType());
      for (int64_t d = 0; d < t.getRank(); ++d) {
        if (d)
          out += ";";
        std::optional<std::string> e = dimExpression(v, d);
        out += e ? *e : "?";
      }
    }
    return out;
  }

  /// A function of `inputs` (then `more`) computing `results` from the joint's ops; null when a needed
  /// value is neither an input nor computable from them.
  func::FuncOp clone(OpBuilder &b, func::FuncOp joint, StringRef name, ArrayRef<Value> inputs,
                     ArrayRef<BlockArgument> more, ArrayRef<Value> results) {
    DenseSet<Value> given(inputs.begin(), inputs.end());
    given.insert(more.begin(), more.end());
    DenseSet<Operation *> needed;
    SmallVector<Value> work(results.begin(), results.end());
    DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (given.contains(v) || !seen.insert(v).second)
        continue;
      Operation *def = v.getDefiningOp();
      if (!def)
        return {};
      if (needed.insert(def).second)
        work.append(def->getOperands().begin(), def->getOperands().end());
    }
    SmallVector<Type> argTypes, resultTypes;
    for (Value v : inputs)
      argTypes.push_back(v.getType());
    for (Value v : more)
      argTypes.push_back(v.getType());
    for (Value v : results)
      resultTypes.push_back(v.getType());
    auto f = b.create<func::FuncOp>(joint.getLoc(), name, b.getFunctionType(argTypes, resultTypes));
    Block *entry = f.addEntryBlock();
    IRMapping map;
    unsigned k = 0;
    for (Value v : inputs)
      map.map(v, entry->getArgument(k++));
    for (Value v : more)
      map.map(v, entry->getArgument(k++));
    OpBuilder body = OpBuilder::atBlockEnd(entry);
    if (more.empty()) {
      for (Operation &op : joint.getBody().front().without_terminator())
        if (needed.contains(&op))
          body.clone(op, map);
    } else {
      // The backward: its own ops (those reading a cotangent) in the joint's order, and each value it
      // recomputes from the saved ones emitted right before the first op that reads it, as AOTAutograd
      // reorders the recomputation to mimic the autograd engine. In the joint's order the recomputed forward
      // ops would all come first, and every recomputed activation (a GELU's output, a transposed weight)
      // would live from the backward's start to its use: the whole model's at once.
      DenseSet<Value> tangent(more.begin(), more.end());
      for (Operation &op : joint.getBody().front().without_terminator())
        if (needed.contains(&op) && llvm::any_of(op.getOperands(), [&](Value v) { return tangent.contains(v); }))
          tangent.insert(op.getResults().begin(), op.getResults().end());
      DenseSet<Operation *> emitted;
      // op after the needed ops that define its operands (iterative post-order: no recursion depth limit)
      auto emit = [&](Operation *root) {
        SmallVector<std::pair<Operation *, unsigned>> stack{{root, 0}};
        while (!stack.empty()) {
          auto &[op, next] = stack.back();
          if (emitted.contains(op)) {
            stack.pop_back();
            continue;
          }
          if (next < op->getNumOperands()) {
            Operation *def = op->getOperand(next++).getDefiningOp();
            if (def && needed.contains(def) && !emitted.contains(def))
              stack.push_back({def, 0});
            continue;
          }
          emitted.insert(op);
          body.clone(*op, map);
          stack.pop_back();
        }
      };
      for (Operation &op : joint.getBody().front().without_terminator())
        if (needed.contains(&op) && llvm::any_of(op.getResults(), [&](Value r) { return tangent.contains(r); }))
          emit(&op);
      for (Operation &op : joint.getBody().front().without_terminator()) // results read no cotangent (zeros)
        if (needed.contains(&op))
          emit(&op);
    }
    SmallVector<Value> mapped;
    for (Value v : results)
      mapped.push_back(map.lookup(v));
    body.create<func::ReturnOp>(joint.getLoc(), mapped);
    return f;
  }
};

} // namespace
