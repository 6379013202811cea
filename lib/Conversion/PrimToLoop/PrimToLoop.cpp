//===- PrimToLoop.cpp - fuse prim ops into loop kernels ------------------===//
//
// Fusion by recomputation, in the spirit of Inductor's pointwise fusion:
//
// 1. Plan: decide which tensor values live in buffers ("materialized"):
//    function results, operands and results of library calls (matmul,
//    convolution, attention), concatenations, dense constants, and
//    reductions that cannot be computed where they are used.
// 2. Emit: one loop.kernel per materialized value. The kernel computes the
//    value at an index by recursively emitting its producers at the mapped
//    index (broadcast, transpose, slice and reshape only remap indices), so
//    elementwise chains are inlined and never touch memory.
//
// A reduction is computed inside the kernel that uses it, as a loop.reduce
// placed at the outermost loop level where its indices are available. When
// a value depends on reductions over its trailing dims, its kernel runs in
// parallel over the leading dims and a loop.for walks the trailing dims, so
// softmax or rmsnorm reads its row once per reduction and writes it once, in
// one kernel. A reduction that would be recomputed for points it does not
// depend on is materialized by its own kernel instead.
//
//===----------------------------------------------------------------------===//
#include "dyn/Conversion/Passes.h"
#include "InPlace.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include <map>
#include <set>

namespace dyn {
#define GEN_PASS_DEF_FUSEPRIMTOLOOPPASS
#include "dyn/Conversion/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;

namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

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

/// Maps an index into shape `out` to the index of the same element (row-major
/// order) in shape `in`.
template <typename Idx, typename Ix>
SmallVector<Idx> reshapeIndex(ArrayRef<Idx> idx, ArrayRef<int64_t> out, ArrayRef<int64_t> in,
                              Ix &ix) {
  SmallVector<Idx> result;
  if (auto map = unitReshapeMap(in, out)) {
    for (int64_t o : *map)
      result.push_back(o < 0 ? ix.zero() : idx[o]);
    return result;
  }
  // Trailing dims both shapes share keep their index (an embedding's
  // [B*T, D] -> [B, T, D] still walks D with the innermost index); only
  // the leading dims are linearized.
  size_t k = 0;
  while (k < in.size() && k < out.size() && in[in.size() - 1 - k] == out[out.size() - 1 - k])
    ++k;
  result = ix.reshape(idx.drop_back(k), out.drop_back(k), in.drop_back(k));
  result.append(idx.end() - k, idx.end());
  return result;
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

/// Maps an index of an index-remapping op's result to the index of its
/// operand. `Ix` supplies the index arithmetic: IR values when emitting,
/// dependence bit sets when planning.
template <typename Idx, typename Ix>
SmallVector<Idx> remapIndex(Operation *op, ArrayRef<Idx> idx, Ix &ix) {
  ArrayRef<int64_t> in = tensorType(op->getOperand(0)).getShape();
  ArrayRef<int64_t> out = tensorType(op->getResult(0)).getShape();
  SmallVector<Idx> result;
  if (auto b = dyn_cast<prim::BroadcastInDimOp>(op)) {
    for (auto [i, d] : llvm::enumerate(b.getDims()))
      result.push_back(in[i] == 1 && out[d] != 1 ? ix.zero() : idx[d]);
  } else if (auto t = dyn_cast<prim::TransposeOp>(op)) {
    result.resize(in.size());
    for (auto [i, p] : llvm::enumerate(t.getPermutation()))
      result[p] = idx[i];
  } else if (auto s = dyn_cast<prim::SliceOp>(op)) {
    for (size_t i = 0; i < in.size(); ++i)
      result.push_back(ix.affine(idx[i], s.getStride()[i], s.getStart()[i]));
  } else if (auto p = dyn_cast<prim::PadOp>(op)) {
    // Planning only: emission clamps the index and selects (emitPad).
    for (size_t i = 0; i < in.size(); ++i)
      result.push_back(ix.affine(idx[i], 1, -p.getLow()[i]));
  } else if (isa<prim::ReshapeOp>(op)) {
    result = reshapeIndex<Idx>(idx, out, in, ix);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

using DepSet = uint64_t; // bits 0-31: result dims; bits 32-63: dims reduced inside
constexpr DepSet kInnerBits = ~DepSet(0) << 32;

struct DepArith {
  DepSet zero() { return 0; }
  DepSet affine(DepSet d, int64_t, int64_t) { return d; }
  SmallVector<DepSet> reshape(ArrayRef<DepSet> idx, ArrayRef<int64_t>, ArrayRef<int64_t> in) {
    DepSet all = 0;
    for (DepSet d : idx)
      all |= d;
    return SmallVector<DepSet>(in.size(), all);
  }
};

struct KernelPlan {
  unsigned parallelDims = 0;           // leading dims run by the kernel in parallel
  SmallVector<Value> mustMaterialize;  // reductions to move into kernels of their own
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
  // With dynamic dims the counts are unknown: a reduction whose shape is the
  // kernel's leading dims has one value per point; any other gets a buffer.
  for (Value u : direct) {
    if (!dynamicPoints && tensorType(u).hasStaticShape()) {
      if (points > tensorType(u).getNumElements())
        plan.mustMaterialize.push_back(u);
    } else if (tensorType(u).getShape() != type.getShape().take_front(k)) {
      plan.mustMaterialize.push_back(u);
    }
  }
  if (!plan.mustMaterialize.empty())
    return plan;
  plan.parallelDims = k;
  return plan;
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

/// 16-bit floats are stored as such but computed in f32 (as eager PyTorch
/// does per op); a fused kernel rounds once, when it stores. uint8 (ui8) is
/// stored as i8 and computed in i32, each op's result masked back into
/// [0, 255]: there, signed compares, divisions and conversions are exact.
Type computeType(Type t) {
  if (t.isF16() || t.isBF16())
    return Float32Type::get(t.getContext());
  if (t.isUnsignedInteger())
    return IntegerType::get(t.getContext(), 32);
  return t;
}

/// The element type a buffer holds: arith and memref take signless integers.
Type storedType(Type t) {
  if (t.isUnsignedInteger())
    return IntegerType::get(t.getContext(), t.getIntOrFloatBitWidth());
  return t;
}

/// Wraps a ui8 result computed in i32 as eager's uint8 arithmetic does.
Value wrapUnsigned(OpBuilder &b, Location loc, Value v, Type elementType) {
  if (!elementType.isUnsignedInteger())
    return v;
  uint64_t mask = (uint64_t(1) << elementType.getIntOrFloatBitWidth()) - 1;
  return arith::AndIOp::create(b, loc, v,
                               arith::ConstantOp::create(b, loc, IntegerAttr::get(v.getType(), mask)));
}

Value castForStore(OpBuilder &b, Location loc, Value scalar, Value buffer) {
  Type stored = cast<MemRefType>(buffer.getType()).getElementType();
  if (scalar.getType() == stored)
    return scalar;
  if (isa<IntegerType>(stored))
    return arith::TruncIOp::create(b, loc, stored, scalar);
  return arith::TruncFOp::create(b, loc, stored, scalar);
}

struct Scope {
  Block *body;
  Operation *opener; // the loop op whose body this is; null for the kernel body
  std::map<std::vector<void *>, Value> memo;
};

/// The size of dim `d` of a prim tensor as an index value of the buffer
/// function, created at the builder's position (before the kernel that needs it).
using DimFn = std::function<Value(OpBuilder &, Value, int64_t)>;

class KernelEmitter {
public:
  KernelEmitter(OpBuilder &b, Location loc, const DenseMap<Value, Value> &buffers,
                const DenseSet<Value> &written, DimFn dimOf)
      : b(b), loc(loc), buffers(buffers), written(written), dimOf(std::move(dimOf)) {}

  /// The sizes of the dynamic dims of `dims` of `value`, created before the kernel.
  SmallVector<Value> dynamicSizes(Value value, ArrayRef<int64_t> dims) {
    SmallVector<Value> sizes;
    RankedTensorType t = tensorType(value);
    for (int64_t d : dims)
      if (t.isDynamicDim(d)) {
        OpBuilder fb(kernelOp);
        sizes.push_back(dimOf(fb, value, d));
      }
    return sizes;
  }

  /// Emits the kernel that computes `value` into `buffer`.
  void emitKernel(Value value, Value buffer, unsigned parallelDims, StringRef name) {
    target = buffer;
    ArrayRef<int64_t> shape = tensorType(value).getShape();
    auto kernel = loop::KernelOp::create(b, loc, b.getStringAttr(name),
                                         b.getDenseI64ArrayAttr(shape.take_front(parallelDims)));
    kernelOp = kernel;
    kernel.getDynamicSizesMutable().assign(
        dynamicSizes(value, llvm::to_vector(llvm::seq<int64_t>(0, parallelDims))));
    OpBuilder::InsertionGuard guard(b);
    Block *body = newBody(kernel.getBody(), parallelDims);
    scopes.clear();
    levels.clear();
    scopes.push_back(Scope{body, nullptr, {}});
    SmallVector<Value> idx(body->getArguments());
    for (Value v : idx)
      levels[v] = 0;
    if (parallelDims == shape.size()) {
      store(value, buffer, idx);
    } else {
      setInsertion(0);
      auto inner = loop::ForOp::create(
          b, loc, b.getDenseI64ArrayAttr(shape.drop_front(parallelDims)),
          dynamicSizes(value, llvm::to_vector(llvm::seq<int64_t>(parallelDims, shape.size()))));
      Block *innerBody = newBody(inner.getBody(), shape.size() - parallelDims);
      scopes.push_back(Scope{innerBody, inner, {}});
      for (Value v : innerBody->getArguments()) {
        levels[v] = 1;
        idx.push_back(v);
      }
      store(value, buffer, idx);
      closeScope();
    }
    closeScope();
  }

  /// Copies `value` (computed from its producers) into `buffer` at `offset`
  /// along `dim`: one piece of a concatenation.
  void emitCopyKernel(Value value, Value buffer, int64_t dim, int64_t offset, StringRef name) {
    target = buffer;
    ArrayRef<int64_t> shape = tensorType(value).getShape();
    auto kernel = loop::KernelOp::create(b, loc, b.getStringAttr(name), b.getDenseI64ArrayAttr(shape));
    kernelOp = kernel;
    OpBuilder::InsertionGuard guard(b);
    Block *body = newBody(kernel.getBody(), shape.size());
    scopes.clear();
    levels.clear();
    scopes.push_back(Scope{body, nullptr, {}});
    SmallVector<Value> idx(body->getArguments());
    for (Value v : idx)
      levels[v] = 0;
    Value scalar = emit(value, idx);
    setInsertion(0);
    SmallVector<Value> outIdx(idx);
    outIdx[dim] = affine(idx[dim], 1, offset);
    loop::StoreOp::create(b, loc, castForStore(b, loc, scalar, buffer), buffer, outIdx);
    closeScope();
  }

  // Index arithmetic for remapIndex.
  Value zero() { return constantIndex(0); }
  Value affine(Value i, int64_t mul, int64_t add) {
    if (mul == 1 && add == 0)
      return i;
    setInsertion(levelOf(i));
    Value r = i;
    if (mul != 1)
      r = arith::MulIOp::create(b, loc, r, constantIndexHere(mul));
    if (add != 0)
      r = arith::AddIOp::create(b, loc, r, constantIndexHere(add));
    levels[r] = levelOf(i);
    return r;
  }
  SmallVector<Value> reshape(ArrayRef<Value> idx, ArrayRef<int64_t> out, ArrayRef<int64_t> in) {
    unsigned level = levelOf(idx);
    setInsertion(level);
    Value linear = constantIndexHere(0);
    for (auto [i, size] : llvm::enumerate(out)) {
      linear = arith::MulIOp::create(b, loc, linear, constantIndexHere(size));
      linear = arith::AddIOp::create(b, loc, linear, idx[i]);
    }
    SmallVector<Value> result(in.size());
    for (int64_t i = in.size() - 1; i >= 0; --i) {
      Value size = constantIndexHere(in[i]);
      result[i] = arith::RemUIOp::create(b, loc, linear, size);
      linear = arith::DivUIOp::create(b, loc, linear, size);
      levels[result[i]] = level;
    }
    return result;
  }

private:
  OpBuilder &b;
  Location loc;
  const DenseMap<Value, Value> &buffers;
  const DenseSet<Value> &written; // materialized values whose kernels are emitted
  SmallVector<Scope> scopes;
  DenseMap<Value, unsigned> levels;
  Value target; // the buffer the current kernel writes
  DimFn dimOf;
  Operation *kernelOp = nullptr; // the kernel being emitted

public:
  Operation *unsupported = nullptr; // first op emission could not handle

private:

  Block *newBody(Region &region, unsigned numIndices) {
    SmallVector<Type> types(numIndices, b.getIndexType());
    SmallVector<Location> locs(numIndices, loc);
    return b.createBlock(&region, {}, types, locs);
  }

  void closeScope() {
    b.setInsertionPointToEnd(scopes.back().body);
    loop::YieldOp::create(b, loc);
    scopes.pop_back();
  }

  unsigned levelOf(Value v) {
    auto it = levels.find(v);
    return it == levels.end() ? 0 : it->second;
  }
  unsigned levelOf(ArrayRef<Value> idx) {
    unsigned level = 0;
    for (Value v : idx)
      level = std::max(level, levelOf(v));
    return level;
  }

  /// Ops for loop level `t` go at the end of its body, or, when deeper levels
  /// are open, just before the loop that opened level t+1.
  void setInsertion(unsigned t) {
    if (t + 1 == scopes.size())
      b.setInsertionPointToEnd(scopes[t].body);
    else
      b.setInsertionPoint(scopes[t + 1].opener);
  }

  Value constantIndexHere(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value constantIndex(int64_t v) {
    OpBuilder::InsertionGuard guard(b);
    setInsertion(0);
    return constantIndexHere(v);
  }

  void store(Value value, Value buffer, ArrayRef<Value> idx) {
    Value scalar = emit(value, idx);
    setInsertion(scopes.size() - 1);
    loop::StoreOp::create(b, loc, castForStore(b, loc, scalar, buffer), buffer, idx);
  }

  std::vector<void *> key(Value v, ArrayRef<Value> idx) {
    std::vector<void *> k{v.getAsOpaquePointer()};
    for (Value i : idx)
      k.push_back(i.getAsOpaquePointer());
    return k;
  }

  /// The scalar value of tensor `value` at `idx`.
  Value emit(Value value, ArrayRef<Value> idx) {
    std::vector<void *> k = key(value, idx);
    for (Scope &scope : scopes)
      if (auto it = scope.memo.find(k); it != scope.memo.end())
        return it->second;
    unsigned level = levelOf(idx);
    Value result = emitUncached(value, idx, level);
    // A value lives at the level where it was created: an index remap
    // (a broadcast) returns its operand's value unchanged, and must not move a
    // reduction computed outside a loop into it (that level can close before
    // the value's next use).
    unsigned at = levels.try_emplace(result, level).first->second;
    scopes[std::min<unsigned>(at, scopes.size() - 1)].memo[k] = result;
    return result;
  }

  Value emitUncached(Value value, ArrayRef<Value> idx, unsigned level) {
    // The value's own buffer is what the kernel writes, not a source.
    if (auto it = buffers.find(value); it != buffers.end() && it->second != target) {
      OpBuilder::InsertionGuard guard(b);
      setInsertion(level);
      Value loaded = loop::LoadOp::create(b, loc, it->second, idx);
      Type compute = computeType(tensorType(value).getElementType());
      if (compute != loaded.getType())
        loaded = isa<FloatType>(compute) ? (Value)arith::ExtFOp::create(b, loc, compute, loaded)
                                         : (Value)arith::ExtUIOp::create(b, loc, compute, loaded);
      return loaded;
    }
    Operation *op = value.getDefiningOp();
    if (Value r = writtenReshape(
            value, [&](Value r) { return written.contains(r) && buffers.lookup(r) != target; }))
      return emit(r, reshapeIndex<Value>(idx, tensorType(value).getShape(), tensorType(r).getShape(),
                                         *this));
    if (isReduction(op))
      return emitReduction(op, idx, level);
    if (auto pad = dyn_cast<prim::PadOp>(op))
      return emitPad(pad, idx, level);
    if (isIndexRemap(op))
      return emit(op->getOperand(0), remapIndex<Value>(op, idx, *this));
    if (auto g = dyn_cast<prim::GatherOp>(op))
      return emitGather(g, idx, level);
    if (auto philox = dyn_cast<prim::PhiloxOp>(op))
      return emitPhilox(philox, idx, level);
    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(emit(operand, idx));
    unsigned opLevel = level;
    for (Value v : operands)
      opLevel = std::max(opLevel, levelOf(v));
    OpBuilder::InsertionGuard guard(b);
    setInsertion(opLevel);
    Value r = emitScalar(op, operands, idx);
    r = wrapUnsigned(b, loc, r, tensorType(value).getElementType());
    levels[r] = opLevel;
    return r;
  }

  Value emitReduction(Operation *op, ArrayRef<Value> idx, unsigned level) {
    OpBuilder::InsertionGuard guard(b);
    Value input = op->getOperand(0);
    ArrayRef<int64_t> inShape = tensorType(input).getShape();
    ArrayRef<int64_t> dims = reductionDims(op);
    SmallVector<int64_t> domain;
    for (int64_t d : dims)
      domain.push_back(inShape[d]);
    Type elementType = computeType(tensorType(op->getResult(0)).getElementType());
    SmallVector<Value> sizes = dynamicSizes(input, dims);
    setInsertion(level);
    auto reduce = loop::ReduceOp::create(b, loc, elementType, reductionKind(op), domain, sizes);
    Block *body = newBody(reduce.getBody(), domain.size());
    // The body is a new level directly under `level`; deeper levels of the
    // current path are set aside while it is built.
    SmallVector<Scope> setAside(std::make_move_iterator(scopes.begin() + level + 1),
                                std::make_move_iterator(scopes.end()));
    scopes.truncate(level + 1);
    scopes.push_back(Scope{body, reduce, {}});
    SmallVector<Value> inIdx;
    unsigned kept = 0, reduced = 0;
    for (int64_t i = 0, e = inShape.size(); i < e; ++i) {
      if (llvm::is_contained(dims, i)) {
        Value arg = body->getArgument(reduced++);
        levels[arg] = level + 1;
        inIdx.push_back(arg);
      } else {
        inIdx.push_back(idx[kept++]);
      }
    }
    Value element = emit(input, inIdx);
    b.setInsertionPointToEnd(body);
    loop::YieldOp::create(b, loc, element);
    scopes.pop_back();
    for (Scope &s : setAside)
      scopes.push_back(std::move(s));
    b.setInsertionPointAfter(reduce);
    Value r = wrapUnsigned(b, loc, reduce.getResult(), tensorType(op->getResult(0)).getElementType());
    levels[r] = level;
    return r;
  }

  /// Philox-4x32-10 (Random123's philox4x32_10) at the element's row-major
  /// linear index: key (seed lo, seed hi), counter (index lo, index hi,
  /// offset lo, offset hi); 32-bit products through i64 so that every
  /// target computes the same bits.
  Value emitPhilox(prim::PhiloxOp op, ArrayRef<Value> idx, unsigned level) {
    Value seed = emit(op.getSeed(), {});
    unsigned at = std::max(level, levelOf(seed));
    OpBuilder::InsertionGuard guard(b);
    setInsertion(at);
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    auto c32 = [&](uint32_t v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr((int32_t)v));
    };
    auto c64 = [&](uint64_t v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr((int64_t)v));
    };
    auto low = [&](Value v) -> Value { return arith::TruncIOp::create(b, loc, i32, v); };
    auto high = [&](Value v) -> Value {
      return arith::TruncIOp::create(b, loc, i32, arith::ShRUIOp::create(b, loc, v, c64(32)));
    };
    ArrayRef<int64_t> shape = tensorType(op.getResult()).getShape();
    Value linear = c64(0);
    int64_t stride = 1;
    for (int64_t i = shape.size() - 1; i >= 0; --i) {
      if (shape[i] != 1) {
        Value term = arith::IndexCastOp::create(b, loc, i64, idx[i]);
        if (stride != 1)
          term = arith::MulIOp::create(b, loc, term, c64(stride));
        linear = arith::AddIOp::create(b, loc, linear, term);
      }
      stride *= shape[i];
    }
    uint64_t offset = op.getOffset();
    Value ctr[4] = {low(linear), high(linear), c32((uint32_t)offset), c32((uint32_t)(offset >> 32))};
    Value key[2] = {low(seed), high(seed)};
    auto mulhilo = [&](uint32_t m, Value x, Value &hi, Value &lo) {
      Value p = arith::MulIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, x), c64(m));
      lo = low(p);
      hi = high(p);
    };
    for (int round = 0; round < 10; ++round) {
      if (round) {
        key[0] = arith::AddIOp::create(b, loc, key[0], c32(0x9E3779B9u));
        key[1] = arith::AddIOp::create(b, loc, key[1], c32(0xBB67AE85u));
      }
      Value hi0, lo0, hi1, lo1;
      mulhilo(0xD2511F53u, ctr[0], hi0, lo0);
      mulhilo(0xCD9E8D57u, ctr[2], hi1, lo1);
      Value x0 = arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, hi1, ctr[1]), key[0]);
      Value x2 = arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, hi0, ctr[3]), key[1]);
      ctr[0] = x0;
      ctr[1] = lo1;
      ctr[2] = x2;
      ctr[3] = lo0;
    }
    Value r = ctr[op.getWord()];
    levels[r] = at;
    return r;
  }

  /// Loads the index, wraps a negative one (Python's x[-1]) and clamps it
  /// into [0, size): a gather never reads out of bounds. Then the input at
  /// that index.
  Value emitGather(prim::GatherOp g, ArrayRef<Value> idx, unsigned level) {
    Value raw = emit(g.getIndex(), idx);
    int64_t dim = g.getDim();
    int64_t size = tensorType(g.getInput()).getDimSize(dim);
    unsigned at = std::max(level, levelOf(raw));
    Value i;
    {
      OpBuilder::InsertionGuard guard(b);
      setInsertion(at);
      i = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
      Value zero = constantIndexHere(0);
      Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
      Value wrapped = arith::AddIOp::create(b, loc, i, constantIndexHere(size));
      i = arith::SelectOp::create(b, loc, negative, wrapped, i);
      i = arith::MaxSIOp::create(b, loc, i, zero);
      i = arith::MinSIOp::create(b, loc, i, constantIndexHere(size - 1));
    }
    levels[i] = at;
    SmallVector<Value> inIdx(idx);
    inIdx[dim] = i;
    return emit(g.getInput(), inIdx);
  }

  /// The input at idx - low, where that is inside it, else the padding
  /// value. The input is read at the index clamped into range, so the load
  /// never leaves its buffer and the select needs no branch.
  Value emitPad(prim::PadOp pad, ArrayRef<Value> idx, unsigned level) {
    ArrayRef<int64_t> in = tensorType(pad.getInput()).getShape();
    unsigned at = std::max(level, levelOf(idx));
    SmallVector<Value> inIdx(idx);
    Value inside;
    {
      OpBuilder::InsertionGuard guard(b);
      setInsertion(at);
      for (size_t i = 0; i < in.size(); ++i) {
        int64_t lo = pad.getLow()[i], hi = pad.getHigh()[i];
        if (!lo && !hi)
          continue;
        Value j = arith::SubIOp::create(b, loc, idx[i], constantIndexHere(lo));
        Value zero = constantIndexHere(0), last = constantIndexHere(in[i] - 1);
        Value ok = arith::AndIOp::create(
            b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, j, zero),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, j, last));
        inside = inside ? (Value)arith::AndIOp::create(b, loc, inside, ok) : ok;
        inIdx[i] = arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, j, last), zero);
        levels[inIdx[i]] = at;
      }
    }
    Value value = emit(pad.getInput(), inIdx);
    if (!inside)
      return value;
    OpBuilder::InsertionGuard guard(b);
    unsigned selectLevel = std::max(at, levelOf(value));
    setInsertion(selectLevel);
    Type et = value.getType();
    Value fill = arith::ConstantOp::create(
        b, loc, isa<FloatType>(et) ? (TypedAttr)FloatAttr::get(et, pad.getValue().convertToDouble())
                                   : (TypedAttr)IntegerAttr::get(et, (int64_t)pad.getValue().convertToDouble()));
    Value r = arith::SelectOp::create(b, loc, inside, value, fill);
    levels[r] = selectLevel;
    return r;
  }

  Value emitScalar(Operation *op, ArrayRef<Value> x, ArrayRef<Value> idx);
};

TypedAttr scalarAttr(Type type, double value) {
  if (auto ft = dyn_cast<FloatType>(type))
    return FloatAttr::get(ft, value);
  return IntegerAttr::get(type, (int64_t)value);
}

/// Converts a scalar between element types with PyTorch's rules.
Value convertScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto ff = dyn_cast<FloatType>(from), ft = dyn_cast<FloatType>(to);
  if (ff && ft)
    return ff.getWidth() < ft.getWidth() ? (Value)arith::ExtFOp::create(b, loc, to, v)
                                         : (Value)arith::TruncFOp::create(b, loc, to, v);
  if (to.isInteger(1)) {
    if (ff)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                   arith::ConstantOp::create(b, loc, scalarAttr(from, 0)));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                 arith::ConstantOp::create(b, loc, scalarAttr(from, 0)));
  }
  if (ft)
    return from.isInteger(1) ? (Value)arith::UIToFPOp::create(b, loc, to, v)
                             : (Value)arith::SIToFPOp::create(b, loc, to, v);
  if (ff)
    return arith::FPToSIOp::create(b, loc, to, v);
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return from.isInteger(1) ? (Value)arith::ExtUIOp::create(b, loc, to, v)
                             : (Value)arith::ExtSIOp::create(b, loc, to, v);
  return arith::TruncIOp::create(b, loc, to, v);
}

Value KernelEmitter::emitScalar(Operation *op, ArrayRef<Value> x, ArrayRef<Value> idx) {
  Type et = computeType(tensorType(op->getResult(0)).getElementType());
  bool isFloat = isa<FloatType>(et);
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, scalarAttr(et, v));
  };
  return TypeSwitch<Operation *, Value>(op)
      .Case<prim::ConstantOp>([&](prim::ConstantOp c) -> Value {
        auto dense = cast<DenseElementsAttr>(c.getValue());
        Attribute value = dense.getSplatValue<Attribute>();
        if (auto f = dyn_cast<FloatAttr>(value))
          value = FloatAttr::get(et, f.getValueAsDouble());
        else if (auto i = dyn_cast<IntegerAttr>(value); i && i.getType() != et)
          value = IntegerAttr::get(et, i.getValue().zext(et.getIntOrFloatBitWidth()));
        return arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
      })
      .Case<prim::IotaOp>([&](prim::IotaOp iota) -> Value {
        Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), idx[iota.getDim()]);
        return convertScalar(b, loc, i, et);
      })
      .Case<prim::ConvertElementTypeOp>([&](auto) -> Value {
        // An explicit conversion to a 16-bit float rounds, as eager does; so
        // does one from a 16-bit value that a fused kernel holds in f32 (the
        // value eager converts is rounded to its type).
        Value v = x[0];
        Type source = tensorType(op->getOperand(0)).getElementType();
        if ((source.isF16() || source.isBF16()) && isa<FloatType>(v.getType()) && v.getType() != source)
          v = arith::ExtFOp::create(b, loc, v.getType(), (Value)arith::TruncFOp::create(b, loc, source, v));
        Type stored = tensorType(op->getResult(0)).getElementType();
        if (stored == et || isa<IntegerType>(et))
          return convertScalar(b, loc, v, et);
        return arith::ExtFOp::create(b, loc, et, convertScalar(b, loc, v, stored));
      })
      .Case<prim::AddOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::AddFOp::create(b, loc, x[0], x[1])
                       : (Value)arith::AddIOp::create(b, loc, x[0], x[1]);
      })
      .Case<prim::SubOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::SubFOp::create(b, loc, x[0], x[1])
                       : (Value)arith::SubIOp::create(b, loc, x[0], x[1]);
      })
      .Case<prim::MulOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::MulFOp::create(b, loc, x[0], x[1])
                       : (Value)arith::MulIOp::create(b, loc, x[0], x[1]);
      })
      .Case<prim::DivOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::DivFOp::create(b, loc, x[0], x[1])
                       : (Value)arith::DivSIOp::create(b, loc, x[0], x[1]);
      })
      .Case<prim::RemOp>([&](auto) -> Value {
        // Python's %: the result takes the sign of the divisor.
        Value r = isFloat ? (Value)arith::RemFOp::create(b, loc, x[0], x[1])
                          : (Value)arith::RemSIOp::create(b, loc, x[0], x[1]);
        Value zero = constant(0);
        Value rNeg, bNeg, rNonZero;
        if (isFloat) {
          rNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, r, zero);
          bNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x[1], zero);
          rNonZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, r, zero);
        } else {
          rNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, zero);
          bNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x[1], zero);
          rNonZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero);
        }
        Value fix = arith::AndIOp::create(b, loc, rNonZero,
                                          arith::XOrIOp::create(b, loc, rNeg, bNeg));
        Value adjusted = isFloat ? (Value)arith::AddFOp::create(b, loc, r, x[1])
                                 : (Value)arith::AddIOp::create(b, loc, r, x[1]);
        return arith::SelectOp::create(b, loc, fix, adjusted, r);
      })
      .Case<prim::MaxOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::MaximumFOp::create(b, loc, x[0], x[1])
                       : (Value)arith::MaxSIOp::create(b, loc, x[0], x[1]);
      })
      .Case<prim::MinOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::MinimumFOp::create(b, loc, x[0], x[1])
                       : (Value)arith::MinSIOp::create(b, loc, x[0], x[1]);
      })
      .Case<prim::AndOp>([&](auto) { return arith::AndIOp::create(b, loc, x[0], x[1]); })
      .Case<prim::OrOp>([&](auto) { return arith::OrIOp::create(b, loc, x[0], x[1]); })
      .Case<prim::XorOp>([&](auto) { return arith::XOrIOp::create(b, loc, x[0], x[1]); })
      .Case<prim::ShlOp, prim::ShrOp>([&](Operation *shift) -> Value {
        // arith's shifts are poison from the compute width on; eager's give 0 (left) or the
        // sign fill (right) from the tensor type's width on, and for negative amounts
        // (unsigned >= catches both).
        unsigned width = tensorType(op->getResult(0)).getElementType().getIntOrFloatBitWidth();
        Value out = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, x[1],
                                          arith::ConstantOp::create(b, loc, scalarAttr(et, width)));
        if (isa<prim::ShlOp>(shift))
          return arith::SelectOp::create(b, loc, out, constant(0),
                                         arith::ShLIOp::create(b, loc, x[0], x[1]));
        Value fill = constant(et.getIntOrFloatBitWidth() - 1);
        Value amount = arith::SelectOp::create(b, loc, out, fill, x[1]);
        return arith::ShRSIOp::create(b, loc, x[0], amount);
      })
      .Case<prim::NegOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::NegFOp::create(b, loc, x[0])
                       : (Value)arith::SubIOp::create(b, loc, constant(0), x[0]);
      })
      .Case<prim::AbsOp>([&](auto) -> Value {
        return isFloat ? (Value)math::AbsFOp::create(b, loc, x[0])
                       : (Value)math::AbsIOp::create(b, loc, x[0]);
      })
      .Case<prim::NotOp>([&](auto) -> Value {
        return arith::XOrIOp::create(
            b, loc, x[0], arith::ConstantOp::create(b, loc, IntegerAttr::get(et, -1)));
      })
      // The prim ops with one scalar op of their own (PrimOps.td `mathOp`, dyn-tblgen).
#define PRIM_MATH(PrimOp, ScalarOp)                                                            \
  .Case<prim::PrimOp>([&](auto) -> Value {                                                     \
    return ScalarOp::create(b, loc, TypeRange{x[0].getType()}, ValueRange(x))->getResult(0); \
  })
#include "dyn/Dialect/Prim/IR/PrimMath.inc"
      .Case<prim::LogisticOp>([&](auto) -> Value {
        Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x[0]));
        Value one = constant(1);
        return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, e));
      })
      .Case<prim::SelectOp>(
          [&](auto) { return arith::SelectOp::create(b, loc, x[0], x[1], x[2]); })
      .Case<prim::EqOp, prim::NeOp, prim::LtOp, prim::LeOp, prim::GtOp, prim::GeOp>(
          [&](Operation *cmp) -> Value {
            Type operandType = x[0].getType();
            if (isa<FloatType>(operandType)) {
              auto pred = TypeSwitch<Operation *, arith::CmpFPredicate>(cmp)
                              .Case<prim::EqOp>([](auto) { return arith::CmpFPredicate::OEQ; })
                              .Case<prim::NeOp>([](auto) { return arith::CmpFPredicate::UNE; })
                              .Case<prim::LtOp>([](auto) { return arith::CmpFPredicate::OLT; })
                              .Case<prim::LeOp>([](auto) { return arith::CmpFPredicate::OLE; })
                              .Case<prim::GtOp>([](auto) { return arith::CmpFPredicate::OGT; })
                              .Default([](auto) { return arith::CmpFPredicate::OGE; });
              return arith::CmpFOp::create(b, loc, pred, x[0], x[1]);
            }
            bool u = operandType.isInteger(1); // booleans compare unsigned
            auto pred =
                TypeSwitch<Operation *, arith::CmpIPredicate>(cmp)
                    .Case<prim::EqOp>([](auto) { return arith::CmpIPredicate::eq; })
                    .Case<prim::NeOp>([](auto) { return arith::CmpIPredicate::ne; })
                    .Case<prim::LtOp>([&](auto) { return u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt; })
                    .Case<prim::LeOp>([&](auto) { return u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle; })
                    .Case<prim::GtOp>([&](auto) { return u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt; })
                    .Default([&](auto) { return u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge; });
            return arith::CmpIOp::create(b, loc, pred, x[0], x[1]);
          })
      .Default([&](Operation *other) -> Value {
        // Reported by the pass after emission; a placeholder keeps the IR valid.
        if (!unsupported)
          unsupported = other;
        return arith::ConstantOp::create(b, loc, scalarAttr(et, 0));
      });
}

//===----------------------------------------------------------------------===//
// The pass: tensor function -> buffer function
//===----------------------------------------------------------------------===//

bool isMatmulShaped(prim::DotGeneralOp dot) {
  int64_t r = tensorType(dot.getLhs()).getRank();
  if (r != tensorType(dot.getRhs()).getRank() || (r != 2 && r != 3))
    return false;
  SmallVector<int64_t> batch = r == 3 ? SmallVector<int64_t>{0} : SmallVector<int64_t>{};
  return dot.getLhsBatch() == ArrayRef<int64_t>(batch) &&
         dot.getRhsBatch() == ArrayRef<int64_t>(batch) &&
         dot.getLhsContract() == ArrayRef<int64_t>{r - 1} &&
         dot.getRhsContract() == ArrayRef<int64_t>{r - 2};
}

/// The value whose buffer a matmul reads transposed in place for `dot`'s rhs:
/// the operand of a prim.transpose that swaps the last two dims (leaving a
/// batch dim alone), or null where the rhs is used as it is.
Value transposedSource(Value operand) {
  auto t = operand.getDefiningOp<prim::TransposeOp>();
  if (!t)
    return {};
  int64_t r = tensorType(operand).getRank();
  SmallVector<int64_t> swap = r == 3 ? SmallVector<int64_t>{0, 2, 1} : SmallVector<int64_t>{1, 0};
  if (t.getPermutation() != ArrayRef<int64_t>(swap))
    return {};
  // A splat constant has no buffer of its own to read.
  if (auto c = t.getOperand().getDefiningOp<prim::ConstantOp>())
    if (cast<DenseElementsAttr>(c.getValue()).isSplat())
      return {};
  return t.getOperand();
}

/// The [B,]NxK source of a GEMM's rhs that is its transpose (loop.matmul transpose_b), or null.
Value transposedRhsSource(prim::DotGeneralOp dot) { return transposedSource(dot.getRhs()); }
/// The [B,]KxM source of a GEMM's lhs that is its transpose (loop.matmul transpose_a: a weight
/// gradient's x^T @ grad), or null.
/// Not where dyn's runtime matmul runs every f32/f64 GEMM (`dyn.cpu_gemm` = "runtime": no library,
/// as in a C API program): it has no transposed-A form.
Value transposedLhsSource(prim::DotGeneralOp dot) {
  if (auto module = dot->getParentOfType<ModuleOp>())
    if (auto choice = module->getAttrOfType<StringAttr>("dyn.cpu_gemm"); choice && choice.getValue() == "runtime")
      return {};
  // a transpose of a transpose is a row-major view of its source already (no copy)
  Value src = transposedSource(dot.getLhs());
  return src && src.getDefiningOp<prim::TransposeOp>() ? Value() : src;
}

/// A half-precision GEMM (any float one with `anyFloat`: the CPU's library
/// calls) whose one use is an add: the library adds the other operand
/// in its epilogue (loop.matmul addend), so the sum is rounded once, as
/// eager's addmm rounds it. `addend` is the operand itself, or the source
/// of a broadcast that only prepends and stretches dims (the GEMM library
/// broadcasts right-aligned).
struct GemmAddend {
  prim::AddOp add;
  Value addend;
};

std::optional<GemmAddend> gemmAddend(prim::DotGeneralOp dot, ArrayRef<Value> returned,
                                     bool anyFloat) {
  Type et = tensorType(dot.getResult()).getElementType();
  // dyn's own runtime matmul (`dyn.cpu_gemm` = "runtime": chosen, or no
  // torch to call) has no epilogue.
  if (auto module = dot->getParentOfType<ModuleOp>())
    if (auto choice = module->getAttrOfType<StringAttr>("dyn.cpu_gemm"); choice && choice.getValue() == "runtime")
      anyFloat = false;
  bool fused = et.isF16() || et.isBF16() || (anyFloat && isa<FloatType>(et));
  if (!fused || !dot->hasOneUse() || llvm::is_contained(returned, dot.getResult()))
    return std::nullopt;
  auto add = dyn_cast<prim::AddOp>(*dot->getUsers().begin());
  if (!add || add.getLhs() == add.getRhs())
    return std::nullopt;
  // A float32/float64 addend only where eager's op adds in its GEMM too
  // (graph.addmm: F.linear, torch.addmm); `x @ w + b` eager rounds twice.
  if (!et.isF16() && !et.isBF16() && !add->hasAttr("dyn.addmm"))
    return std::nullopt;
  Value other = add.getLhs() == dot.getResult() ? add.getRhs() : add.getLhs();
  if (auto b = other.getDefiningOp<prim::BroadcastInDimOp>()) {
    int64_t in = tensorType(b.getInput()).getRank(), out = tensorType(b.getResult()).getRank();
    bool rightAligned = true;
    for (auto [i, d] : llvm::enumerate(b.getDims()))
      rightAligned &= d == out - in + (int64_t)i;
    if (rightAligned)
      other = b.getInput();
  }
  return GemmAddend{add, other};
}

MemRefType bufferType(Value tensor) {
  RankedTensorType t = tensorType(tensor);
  return MemRefType::get(t.getShape(), storedType(t.getElementType()));
}

//===----------------------------------------------------------------------===//
// Library-call operands read in place (views of other buffers)
//===----------------------------------------------------------------------===//

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = (int64_t)shape.size() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * std::max<int64_t>(shape[d + 1], 1);
  return strides;
}

/// The strides that view `oldShape` (with `oldStrides`) as `newShape` without
/// a copy, or nothing where no view can (torch's computeStride).
std::optional<SmallVector<int64_t>> reshapedStrides(ArrayRef<int64_t> oldShape,
                                                    ArrayRef<int64_t> oldStrides,
                                                    ArrayRef<int64_t> newShape) {
  SmallVector<int64_t> strides(newShape.size(), 1);
  if (oldShape.empty())
    return strides;
  if (llvm::is_contained(oldShape, 0))
    return std::nullopt;
  int64_t viewD = (int64_t)newShape.size() - 1;
  int64_t chunkBaseStride = oldStrides.back(), tensorNumel = 1, viewNumel = 1;
  for (int64_t d = (int64_t)oldShape.size() - 1; d >= 0; --d) {
    tensorNumel *= oldShape[d];
    if (d == 0 || (oldShape[d - 1] != 1 && oldStrides[d - 1] != tensorNumel * chunkBaseStride)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
        strides[viewD] = viewNumel * chunkBaseStride;
        viewNumel *= newShape[viewD];
        --viewD;
      }
      if (viewNumel != tensorNumel)
        return std::nullopt;
      if (d > 0) {
        chunkBaseStride = oldStrides[d - 1];
        tensorNumel = viewNumel = 1;
      }
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return strides;
}

/// A value read in place from the buffer of `base`, a value it is a view of
/// (through transposes, slices, reshapes and broadcasts): its element at
/// index i is base's buffer at offset + sum(i * strides), in elements.
struct BufferView {
  Value base;
  SmallVector<int64_t> strides;
  int64_t offset = 0;

  bool isContiguous(ArrayRef<int64_t> shape) const {
    return offset == 0 && strides == rowMajorStrides(shape);
  }
};

/// Ops whose result is a view of their operand's elements (no pad).
bool isViewOp(Operation *op) {
  return isa_and_nonnull<prim::TransposeOp, prim::SliceOp, prim::ReshapeOp, prim::BroadcastInDimOp>(op);
}

/// `v` as a view of the first value down its chain of view ops that
/// `hasBuffer` accepts, or nothing.
std::optional<BufferView> bufferView(Value v, function_ref<bool(Value)> hasBuffer) {
  ArrayRef<int64_t> shape = tensorType(v).getShape();
  if (!tensorType(v).hasStaticShape()) // views are planned from static strides
    return std::nullopt;
  if (tensorType(v).getNumElements() == 0) // no element to read; strides are moot
    return std::nullopt;
  if (hasBuffer(v))
    return BufferView{v, rowMajorStrides(shape), 0};
  Operation *def = v.getDefiningOp();
  if (!isViewOp(def))
    return std::nullopt;
  std::optional<BufferView> in = bufferView(def->getOperand(0), hasBuffer);
  if (!in)
    return std::nullopt;
  ArrayRef<int64_t> inShape = tensorType(def->getOperand(0)).getShape();
  BufferView out{in->base, SmallVector<int64_t>(shape.size(), 0), in->offset};
  if (auto t = dyn_cast<prim::TransposeOp>(def)) {
    for (auto [i, p] : llvm::enumerate(t.getPermutation()))
      out.strides[i] = in->strides[p];
  } else if (auto sl = dyn_cast<prim::SliceOp>(def)) {
    for (size_t i = 0; i < shape.size(); ++i) {
      if (sl.getStride()[i] < 0)
        return std::nullopt;
      out.offset += sl.getStart()[i] * in->strides[i];
      out.strides[i] = in->strides[i] * sl.getStride()[i];
    }
  } else if (isa<prim::ReshapeOp>(def)) {
    auto strides = reshapedStrides(inShape, in->strides, shape);
    if (!strides)
      return std::nullopt;
    out.strides = *strides;
  } else {
    auto b = cast<prim::BroadcastInDimOp>(def);
    for (auto [i, d] : llvm::enumerate(b.getDims()))
      out.strides[d] = inShape[i] == 1 && shape[d] != 1 ? 0 : in->strides[i];
  }
  // A size-1 dim's stride is never used: the row-major one keeps views of
  // contiguous data recognizably contiguous.
  SmallVector<int64_t> rowMajor = rowMajorStrides(shape);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1)
      out.strides[i] = rowMajor[i];
  return out;
}

/// The buffer type of a view of `v` (identity layout where it is contiguous).
MemRefType viewType(Value v, const BufferView &view) {
  RankedTensorType t = tensorType(v);
  Type stored = storedType(t.getElementType());
  if (view.isContiguous(t.getShape()))
    return MemRefType::get(t.getShape(), stored);
  return MemRefType::get(t.getShape(), stored,
                         StridedLayoutAttr::get(v.getContext(), view.offset, view.strides));
}

/// The kernels that would recompute `v`: the materialized values whose
/// expressions reach it through values without buffers.
unsigned kernelsRecomputing(Value v, const llvm::SetVector<Value> &materialized) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen{v};
  unsigned kernels = 0;
  while (!work.empty()) {
    Value u = work.pop_back_val();
    for (Operation *user : u.getUsers())
      for (Value r : user->getResults())
        if (seen.insert(r).second) {
          if (materialized.contains(r))
            ++kernels;
          else if (Value w = writtenReshape(r, [&](Value w) { return materialized.contains(w); }))
            kernels += seen.insert(w).second; // later kernels read r from there
          else
            work.push_back(r);
        }
  }
  return kernels;
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
/// precision values stay computed: a 16-bit buffer would round them.
bool materializeRecomputed(ArrayRef<Operation *> ops, llvm::SetVector<Value> &materialized,
                           function_ref<bool(Value)> wanted) {
  bool added = false;
  for (Operation *op : llvm::reverse(ops)) {
    if (op->getNumResults() != 1 || isIndexRemap(op) || !op->hasTrait<mlir::OpTrait::Elementwise>())
      continue;
    Value v = op->getResult(0);
    Type et = tensorType(v).getElementType();
    if (!materialized.contains(v) && computeType(et) == et && wanted(v) &&
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
  bool added = materializeRecomputed(ops, materialized, [&](Value v) {
    auto it = loads.find(v);
    return it != loads.end() && it->second.size() > kMaxReusedReads;
  });
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
  for (Operation *op : llvm::reverse(ops)) { // the last of a chain first, as above
    if (op->getNumResults() != 1 || isIndexRemap(op) || !op->hasTrait<mlir::OpTrait::Elementwise>())
      continue;
    Value v = op->getResult(0);
    Type et = tensorType(v).getElementType();
    if (!heavy.contains(v) || materialized.contains(v) || computeType(et) != et)
      continue;
    // The distinct windows v is read through: each path from v through
    // unbuffered values is a chain of remaps (elementwise ops keep the index),
    // and a window is the chain, told by the remaps it passes.
    llvm::SmallDenseSet<size_t, 8> windows;
    SmallVector<std::pair<Value, size_t>> work{{v, 0}};
    DenseSet<std::pair<Value, size_t>> seen;
    while (!work.empty() && windows.size() <= kMaxReusedReads) {
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
    if (windows.size() > kMaxReusedReads)
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

struct FusionOptions {
  bool reuseTranscendentals = false; // materialize-reused-transcendentals
  bool f32GemmAddend = false;        // f32-gemm-addend
};

LogicalResult lowerFunction(func::FuncOp func, SymbolTable &symbols, const FusionOptions &options) {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("dyn fusion expects a single-block function");
  Block &entry = func.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  auto isSizeOp = [](Operation &op) {
    return isa<prim::DimOp>(op) ||
           (isa<arith::ArithDialect>(op.getDialect()) && op.getNumResults() == 1 &&
            op.getResult(0).getType().isIndex());
  };
  for (Operation &op : entry.without_terminator()) {
    if (isSizeOp(op))
      continue; // sizes of dynamic dims, computed in the buffer function
    if (!isa<prim::PrimDialect>(op.getDialect()))
      return op.emitOpError("is not a prim op; run dyn-convert-graph-to-prim first");
    if (auto dot = dyn_cast<prim::DotGeneralOp>(op); dot && !isMatmulShaped(dot))
      return op.emitOpError("only matmul-shaped dot_general is supported");
    if (auto dense = dyn_cast<prim::ConstantOp>(op))
      if (!isa<DenseElementsAttr>(dense.getValue()))
        return op.emitOpError("needs a dense constant");
  }
  for (Type t : llvm::concat<const Type>(func.getArgumentTypes(), func.getResultTypes()))
    if (!isa<RankedTensorType>(t))
      return func.emitOpError("arguments and results must be ranked tensors");
  // With dynamic dims the heuristics that weigh sizes (views, recomputation,
  // GEMM epilogues) stand aside: every such value gets a buffer.
  bool dynamic = llvm::any_of(entry.getOperations(), [](Operation &op) {
    auto isDynamic = [](Type t) {
      auto tensor = dyn_cast<RankedTensorType>(t);
      return tensor && !tensor.hasStaticShape();
    };
    return llvm::any_of(op.getOperandTypes(), isDynamic) || llvm::any_of(op.getResultTypes(), isDynamic);
  }) || llvm::any_of(func.getArgumentTypes(), [](Type t) { return !cast<RankedTensorType>(t).hasStaticShape(); });
  FusionOptions fusion = options;
  if (dynamic) {
    fusion.f32GemmAddend = false;
    fusion.reuseTranscendentals = false;
  }

  // 1. Values that must live in buffers, in program order.
  llvm::SetVector<Value> materialized;
  auto isSplat = [](Operation *op) {
    auto c = dyn_cast<prim::ConstantOp>(op);
    return c && cast<DenseElementsAttr>(c.getValue()).isSplat();
  };
  SmallVector<Value> returned(ret.getOperands());
  DenseMap<Value, prim::DotGeneralOp> gemmOfAdd; // add result -> the GEMM computing it with its addend
  DenseMap<Value, Value> addendOf;               // add result -> the addend's buffer value
  // Library-call operands read in place from a buffer that exists anyway (a
  // GEMM's output sliced into q, k and v, viewed as heads): no copy kernel.
  DenseMap<Value, BufferView> views;
  // A transpose of an attention result that the attention writes itself,
  // through a strided view of the transpose's buffer: the heads' outputs
  // land in [B, S, H, D] order, ready for the output projection.
  DenseMap<Value, prim::AttentionOp> attentionInto;
  auto hasBuffer = [&](Value u) { return isa<BlockArgument>(u) || materialized.contains(u); };
  auto viewRoot = [](Value v) {
    while (isViewOp(v.getDefiningOp()))
      v = v.getDefiningOp()->getOperand(0);
    return v;
  };
  // How many elements attention operands read through views of each value:
  // a value that many attention operands view (a QKV projection sliced into
  // q, k and v; a mask [B,1,1,S] broadcast to [B,H,S,S]) gets one buffer they
  // all read in place, where it is no larger than what they read.
  DenseMap<Value, int64_t> viewedElements;
  for (auto att : entry.getOps<prim::AttentionOp>())
    for (Value v : att->getOperands())
      if (Value root = viewRoot(v); root != v)
        viewedElements[root] += tensorType(v).getNumElements();
  // Whether library-call operand `v` is read as a view (`strided`: any
  // strides with a unit innermost one, else only contiguous views).
  auto readInPlace = [&](Value v, bool strided) {
    if (hasBuffer(v) || dynamic)
      return false;
    ArrayRef<int64_t> shape = tensorType(v).getShape();
    auto accepted = [&](const BufferView &view) {
      if (!strided)
        return view.isContiguous(shape);
      return shape.empty() || shape.back() == 1 || view.strides.back() == 1;
    };
    std::optional<BufferView> view = bufferView(v, hasBuffer);
    if (!view && strided) {
      Value root = viewRoot(v);
      Operation *rootDef = root.getDefiningOp();
      if (rootDef && !isSplat(rootDef) &&
          tensorType(root).getNumElements() <= viewedElements.lookup(root)) {
        view = bufferView(v, [&](Value u) { return u == root || hasBuffer(u); });
        if (view && accepted(*view))
          materialized.insert(root);
      }
    }
    if (!view || !accepted(*view))
      return false;
    views[v] = *view;
    return true;
  };
  for (Operation &op : entry.without_terminator()) {
    if (auto dot = dyn_cast<prim::DotGeneralOp>(op)) {
      // A transposed rhs is read in place (loop.matmul transpose_b): its
      // source gets the buffer, and the transpose is not materialized unless
      // something else needs it.
      Value lhs = dot.getLhs(), rhs = dot.getRhs();
      if (Value src = transposedRhsSource(dot); src && !dynamic)
        rhs = src;
      if (Value src = transposedLhsSource(dot); src && !dynamic)
        lhs = src;
      SmallVector<Value> reads{lhs, rhs};
      Value result = dot.getResult();
      std::optional<GemmAddend> fused = gemmAddend(dot, returned, fusion.f32GemmAddend);
      if (fused) {
        result = fused->add.getResult();
        gemmOfAdd[result] = dot;
        addendOf[result] = fused->addend;
      }
      for (Value v : reads)
        if (!isa<BlockArgument>(v) && !readInPlace(v, /*strided=*/false))
          materialized.insert(v);
      if (fused && !isa<BlockArgument>(fused->addend))
        materialized.insert(fused->addend);
      materialized.insert(result);
    } else if (isLibraryCall(&op)) {
      bool strided = isa<prim::AttentionOp>(op);
      for (Value v : op.getOperands())
        if (!isa<BlockArgument>(v) && !readInPlace(v, strided))
          materialized.insert(v);
      if (auto att = dyn_cast<prim::AttentionOp>(op); att && att->hasOneUse() &&
                                                      !llvm::is_contained(returned, att.getResult())) {
        if (auto t = dyn_cast<prim::TransposeOp>(*att->getUsers().begin())) {
          attentionInto[t.getResult()] = att;
          materialized.insert(t.getResult());
          continue;
        }
      }
      for (Value r : op.getResults()) // a sort writes values and indices
        materialized.insert(r);
    } else if (isa<prim::ConcatenateOp>(op) || (isa<prim::ConstantOp>(op) && !isSplat(&op))) {
      materialized.insert(op.getResult(0));
    }
  }
  for (Value v : ret.getOperands())
    if (!isa<BlockArgument>(v))
      materialized.insert(v);
  if (!dynamic)
    materializeWideReuse(entry, materialized);

  // Kernels run in program order.
  DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(entry.without_terminator()))
    position[&op] = i;

  // Reductions that cannot be fused where they are used get kernels of their
  // own; iterate until every kernel is well-shaped. A kernel reads, besides
  // materialized values, values whose reshape an earlier kernel wrote.
  DenseMap<Value, unsigned> parallelDims;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < materialized.size(); ++i) {
      Value v = materialized[i];
      Operation *def = v.getDefiningOp();
      if (isLibraryCall(def) || gemmOfAdd.count(v) || attentionInto.count(v) ||
          isa<prim::ConcatenateOp, prim::ConstantOp>(def))
        continue;
      auto writtenBefore = [&](Value r) {
        return materialized.contains(r) && position[r.getDefiningOp()] < position[def];
      };
      auto inBuffer = [&](Value u) {
        return materialized.contains(u) || writtenReshape(u, writtenBefore);
      };
      KernelPlan plan = planKernel(v, inBuffer);
      for (Value r : plan.mustMaterialize)
        changed |= materialized.insert(r);
      parallelDims[v] = plan.parallelDims;
    }
    // Once the kernels are known, which of them would recompute a window or an exp.
    if (!changed && !dynamic)
      changed = materializeReusedWindows(entry, materialized);
    if (!changed && fusion.reuseTranscendentals)
      changed = materializeReusedTranscendentals(entry, materialized);
  }
  SmallVector<Value> order(materialized.begin(), materialized.end());
  llvm::stable_sort(order, [&](Value a, Value b) {
    return position[a.getDefiningOp()] < position[b.getDefiningOp()];
  });

  // 2. The buffer function: inputs, then one output buffer per result.
  OpBuilder b(func);
  Location loc = func.getLoc();
  SmallVector<Type> argTypes;
  for (Value arg : entry.getArguments())
    argTypes.push_back(bufferType(arg));
  for (Value v : ret.getOperands())
    argTypes.push_back(bufferType(v));
  auto lowered = func::FuncOp::create(b, loc, func.getName(), b.getFunctionType(argTypes, {}));
  lowered->setAttrs(func->getDiscardableAttrDictionary());
  lowered->setAttr("dyn.num_inputs", b.getI64IntegerAttr(entry.getNumArguments()));
  Block *body = lowered.addEntryBlock();
  b.setInsertionPointToEnd(body);

  DenseMap<Value, Value> buffers;
  for (auto [arg, buf] : llvm::zip(entry.getArguments(), body->getArguments()))
    buffers[arg] = buf;
  // Sizes of dynamic dims in the buffer function: from the inputs' buffers,
  // through the ops that carry a dim from an operand to their result.
  Operation *unsizable = nullptr;
  DenseMap<Value, Value> sizeValues; // index values of the prim function -> buffer function
  std::function<Value(OpBuilder &, Value)> sizeValue;
  std::function<Value(OpBuilder &, Value, int64_t)> dimOf = [&](OpBuilder &fb, Value v, int64_t d) -> Value {
    RankedTensorType t = tensorType(v);
    if (!t.isDynamicDim(d))
      return arith::ConstantIndexOp::create(fb, loc, t.getDimSize(d));
    if (auto arg = dyn_cast<BlockArgument>(v))
      return memref::DimOp::create(fb, loc, buffers[arg], d);
    Operation *op = v.getDefiningOp();
    if (auto bc = dyn_cast<prim::BroadcastInDimOp>(op)) {
      for (auto [i, to] : llvm::enumerate(bc.getDims()))
        if (to == d && tensorType(bc.getInput()).isDynamicDim(i))
          return dimOf(fb, bc.getInput(), i);
      int64_t k = llvm::count_if(t.getShape().take_front(d), ShapedType::isDynamic);
      return sizeValue(fb, bc.getSizes()[k]);
    }
    if (auto tr = dyn_cast<prim::TransposeOp>(op))
      return dimOf(fb, tr.getInput(), tr.getPermutation()[d]);
    if (isReduction(op)) {
      ArrayRef<int64_t> dims = reductionDims(op);
      int64_t kept = -1;
      for (int64_t i = 0, e = tensorType(op->getOperand(0)).getRank(); i < e; ++i)
        if (!llvm::is_contained(dims, i) && ++kept == d)
          return dimOf(fb, op->getOperand(0), i);
    }
    if (auto dot = dyn_cast<prim::DotGeneralOp>(op)) {
      // batch dims, then lhs's free dims, then rhs's free dims
      auto lb = dot.getLhsBatch(), lc = dot.getLhsContract(), rb = dot.getRhsBatch(), rc = dot.getRhsContract();
      int64_t at = d;
      if (at < (int64_t)lb.size())
        return dimOf(fb, dot.getLhs(), lb[at]);
      at -= lb.size();
      for (int64_t i = 0, e = tensorType(dot.getLhs()).getRank(); i < e; ++i)
        if (!llvm::is_contained(lb, i) && !llvm::is_contained(lc, i) && at-- == 0)
          return dimOf(fb, dot.getLhs(), i);
      for (int64_t i = 0, e = tensorType(dot.getRhs()).getRank(); i < e; ++i)
        if (!llvm::is_contained(rb, i) && !llvm::is_contained(rc, i) && at-- == 0)
          return dimOf(fb, dot.getRhs(), i);
    }
    if (op->hasTrait<mlir::OpTrait::Elementwise>())
      for (Value operand : op->getOperands())
        if (auto ot = dyn_cast<RankedTensorType>(operand.getType());
            ot && ot.getRank() == t.getRank() && ot.isDynamicDim(d))
          return dimOf(fb, operand, d);
    if (!unsizable)
      unsizable = op;
    return arith::ConstantIndexOp::create(fb, loc, 0);
  };
  sizeValue = [&](OpBuilder &fb, Value v) -> Value {
    if (auto it = sizeValues.find(v); it != sizeValues.end())
      return it->second;
    Operation *op = v.getDefiningOp();
    Value r;
    if (auto dim = dyn_cast_or_null<prim::DimOp>(op))
      return dimOf(fb, dim.getInput(), dim.getDim());
    if (!op || !isa<arith::ArithDialect>(op->getDialect())) {
      if (!unsizable)
        unsizable = op ? op : func.getOperation();
      return arith::ConstantIndexOp::create(fb, loc, 0);
    }
    IRMapping map;
    for (Value operand : op->getOperands())
      map.map(operand, sizeValue(fb, operand));
    r = fb.clone(*op, map)->getResult(0);
    sizeValues[v] = r;
    return r;
  };
  SmallVector<std::pair<Value, Value>> copies; // (value, output buffer)
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value out = body->getArgument(entry.getNumArguments() + i);
    bool denseConstant = v.getDefiningOp() && isa<prim::ConstantOp>(v.getDefiningOp()) &&
                         !isSplat(v.getDefiningOp());
    if (isa<BlockArgument>(v) || buffers.count(v) || denseConstant)
      copies.push_back({v, out});
    else
      buffers[v] = out;
  }
  SmallVector<Value> temporaries;
  unsigned constants = 0;
  for (Value v : order) {
    if (buffers.count(v))
      continue;
    if (auto c = v.getDefiningOp<prim::ConstantOp>()) {
      // Dense constants live in read-only globals.
      OpBuilder mb(func->getParentOp()->getContext());
      mb.setInsertionPoint(func);
      // A ui8 constant's bits are stored as i8, as its buffer's type says.
      Attribute init = c.getValue();
      if (auto dense = dyn_cast<DenseElementsAttr>(init);
          dense && tensorType(v).getElementType().isUnsignedInteger())
        init = dense.bitcast(storedType(tensorType(v).getElementType()));
      auto global = memref::GlobalOp::create(
          mb, loc, ("__dyn_constant_" + func.getName() + "_" + Twine(constants++)).str(),
          b.getStringAttr("private"), bufferType(v), init, /*constant=*/true,
          /*alignment=*/nullptr);
      symbols.insert(global);
      buffers[v] = memref::GetGlobalOp::create(b, loc, bufferType(v), global.getSymName());
      continue;
    }
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < tensorType(v).getRank(); ++d)
      if (tensorType(v).isDynamicDim(d))
        sizes.push_back(dimOf(b, v, d));
    Value buf = memref::AllocOp::create(b, loc, bufferType(v), sizes, b.getI64IntegerAttr(64));
    buffers[v] = buf;
    temporaries.push_back(buf);
  }

  // 3. One kernel per materialized value.
  DenseSet<Value> written; // values whose kernel (or library call) is emitted
  KernelEmitter emitter(b, loc, buffers, written, dimOf);
  // A library call takes fewer element types than the prim op it computes:
  // the call's verifier's reason becomes this pass's diagnostic, on the op.
  auto checkLibraryCall = [&](Operation *call, Operation *from) -> LogicalResult {
    // Buffers do not tell a ui8 tensor from an i8 one: the call lists its
    // uint8 buffers. A GEMM's or a convolution's buffers share one element
    // type; a call by name has one buffer per prim operand and result, in
    // order. Attention takes floats only.
    auto isUnsigned = [](Type t) {
      return cast<RankedTensorType>(t).getElementType().isUnsignedInteger();
    };
    SmallVector<int64_t> unsignedBuffers;
    if (isa<loop::MatmulOp, loop::ConvolutionOp>(call) && isUnsigned(from->getResultTypes()[0])) {
      int64_t n = cast<loop::LibraryCallOpInterface>(call).getLibraryCallInputs().size() + 1;
      unsignedBuffers = llvm::to_vector(llvm::seq<int64_t>(0, n));
    } else if (isa<loop::LibraryCallOp>(call)) {
      for (auto [i, t] : llvm::enumerate(llvm::concat<const Type>(from->getOperandTypes(),
                                                                  from->getResultTypes())))
        if (isUnsigned(t))
          unsignedBuffers.push_back(i);
    }
    if (!unsignedBuffers.empty())
      call->setAttr("unsigned_buffers", DenseI64ArrayAttr::get(call->getContext(), unsignedBuffers));
    std::string reason;
    LogicalResult verified = [&] {
      ScopedDiagnosticHandler capture(call->getContext(), [&](Diagnostic &d) {
        reason = d.str();
        return success();
      });
      return mlir::verify(call);
    }();
    if (succeeded(verified))
      return success();
    // The call lives in `lowered`: its name is read before the function goes.
    std::string callName = call->getName().getStringRef().str();
    lowered.erase();
    return from->emitOpError() << "has no " << callName << " lowering: " << reason;
  };
  // A library call's operand: its own buffer, or its view of another's.
  auto operandBuffer = [&](Value x) -> Value {
    if (auto it = buffers.find(x); it != buffers.end())
      return it->second;
    const BufferView &view = views.at(x);
    Value base = buffers[view.base];
    MemRefType type = viewType(x, view);
    if (type == base.getType())
      return base;
    return memref::ReinterpretCastOp::create(b, loc, type, base, view.offset,
                                             tensorType(x).getShape(), view.strides);
  };
  auto emitAttention = [&](prim::AttentionOp att, Value out) {
    SmallVector<Value> operands{operandBuffer(att.getQuery()), operandBuffer(att.getKey()),
                                operandBuffer(att.getValue()), out};
    if (att.getMask())
      operands.push_back(operandBuffer(att.getMask()));
    auto call = loop::AttentionOp::create(b, loc, TypeRange{}, operands, att->getAttrs());
    return checkLibraryCall(call, att);
  };
  unsigned kernelCount = 0;
  auto kernelName = [&](Operation *op) {
    return (op->getName().stripDialect() + "_" + Twine(kernelCount++)).str();
  };
  for (Value v : order) {
    Operation *def = v.getDefiningOp();
    b.setInsertionPointToEnd(body);
    // Marked before its kernel is emitted: the kernel only reads reshapes of
    // values that come earlier in program order.
    written.insert(v);
    if (isa<prim::ConstantOp>(def) && !isSplat(def))
      continue;
    if (auto it = gemmOfAdd.find(v); it != gemmOfAdd.end() || isa<prim::DotGeneralOp>(def)) {
      auto dot = it != gemmOfAdd.end() ? it->second : cast<prim::DotGeneralOp>(def);
      Value src = dynamic ? Value() : transposedRhsSource(dot);
      Value lsrc = dynamic ? Value() : transposedLhsSource(dot);
      Value addend = it != gemmOfAdd.end() ? buffers[addendOf[v]] : Value();
      auto matmul =
          loop::MatmulOp::create(b, loc, operandBuffer(lsrc ? lsrc : dot.getLhs()),
                                 operandBuffer(src ? src : dot.getRhs()), buffers[v], addend,
                                 /*transpose_b=*/src != nullptr, /*unsigned_buffers=*/nullptr,
                                 /*transpose_a=*/lsrc != nullptr);
      if (failed(checkLibraryCall(matmul, dot)))
        return failure();
      continue;
    }
    if (auto conv = dyn_cast<prim::ConvolutionOp>(def)) {
      // The attributes carry over by name.
      SmallVector<Value> operands{operandBuffer(conv.getInput()), operandBuffer(conv.getWeight()), buffers[v]};
      if (conv.getBias())
        operands.push_back(operandBuffer(conv.getBias()));
      auto call = loop::ConvolutionOp::create(b, loc, TypeRange{}, operands, conv->getAttrs());
      if (failed(checkLibraryCall(call, conv)))
        return failure();
      continue;
    }
    if (auto att = dyn_cast<prim::AttentionOp>(def)) {
      if (failed(emitAttention(att, buffers[v])))
        return failure();
      continue;
    }
    if (auto it = attentionInto.find(v); it != attentionInto.end()) {
      // v = transpose(attention): the attention's result is v's buffer read
      // through the inverse permutation.
      prim::AttentionOp att = it->second;
      auto perm = cast<prim::TransposeOp>(def).getPermutation();
      SmallVector<int64_t> tStrides = rowMajorStrides(tensorType(v).getShape());
      BufferView out{v, SmallVector<int64_t>(perm.size()), 0};
      for (auto [i, p] : llvm::enumerate(perm))
        out.strides[p] = tStrides[i];
      Value r = att.getResult();
      Value view = memref::ReinterpretCastOp::create(b, loc, viewType(r, out), buffers[v], 0,
                                                     tensorType(r).getShape(), out.strides);
      if (failed(emitAttention(att, view)))
        return failure();
      continue;
    }
    if (auto lib = dyn_cast<prim::LibraryCallOp>(def)) {
      // One call writes every result; it is emitted at the first one.
      if (v != lib->getResult(0))
        continue;
      SmallVector<Value> ins, outs;
      for (Value in : lib.getInputs())
        ins.push_back(operandBuffer(in));
      for (Value r : lib.getResults())
        outs.push_back(buffers[r]);
      auto call = loop::LibraryCallOp::create(b, loc, lib.getCalleeAttr(), ins, outs,
                                              lib.getParamsAttr(), /*unsigned_buffers=*/nullptr);
      if (failed(checkLibraryCall(call, lib)))
        return failure();
      continue;
    }
    if (auto cat = dyn_cast<prim::ConcatenateOp>(def)) {
      int64_t offset = 0;
      for (Value input : cat.getInputs()) {
        emitter.emitCopyKernel(input, buffers[v], cat.getDim(), offset, kernelName(def));
        b.setInsertionPointToEnd(body);
        offset += tensorType(input).getDimSize(cat.getDim());
      }
      continue;
    }
    emitter.emitKernel(v, buffers[v], parallelDims[v], kernelName(def));
  }
  if (emitter.unsupported) {
    lowered.erase();
    return emitter.unsupported->emitOpError("cannot be fused into a loop kernel");
  }
  for (auto [v, out] : copies) {
    b.setInsertionPointToEnd(body);
    emitter.emitKernel(v, out, tensorType(v).getRank(), "copy_" + std::to_string(kernelCount++));
  }
  b.setInsertionPointToEnd(body);
  for (Value t : temporaries)
    memref::DeallocOp::create(b, loc, t);
  func::ReturnOp::create(b, loc);
  // Results that update an input (`dyn.updates_arg`, set by the frontend) written into it where safe.
  SmallVector<int64_t> requested;
  for (unsigned k = 0; k < func.getNumResults(); ++k) {
    auto j = func.getResultAttrOfType<IntegerAttr>(k, "dyn.updates_arg");
    requested.push_back(j ? j.getInt() : -1);
  }
  if (unsizable) {
    lowered.erase();
    return unsizable->emitOpError("has a dynamic dim whose size the loop lowering cannot derive");
  }
  if (llvm::any_of(requested, [](int64_t j) { return j >= 0; }))
    markInPlaceUpdates(lowered, entry.getNumArguments(), requested);
  func.erase();
  return success();
}

struct FusePrimToLoopPass : dyn::impl::FusePrimToLoopPassBase<FusePrimToLoopPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp f : funcs) {
      if (f.isExternal() || llvm::none_of(f.getArgumentTypes(), [](Type t) {
            return isa<RankedTensorType>(t);
          }) && llvm::none_of(f.getResultTypes(), [](Type t) { return isa<RankedTensorType>(t); }))
        continue;
      if (failed(lowerFunction(f, symbols, {materializeReusedTranscendentals, f32GemmAddend})))
        return signalPassFailure();
    }
  }
};

} // namespace
