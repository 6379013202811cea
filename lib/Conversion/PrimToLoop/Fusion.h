//===- Fusion.h - the pieces of dyn-fuse-prim-to-loop -----------*- C++ -*-===//
//
// The fusion pass (PrimToLoop.cpp) in rooms: Plan.cpp decides each kernel's
// shape, Emit.cpp writes kernels (KernelEmitter), LibraryViews.cpp lets
// library calls read operands in place, Materialize.cpp chooses which reused
// values get buffers of their own.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_CONVERSION_PRIMTOLOOP_FUSION_H
#define DYN_CONVERSION_PRIMTOLOOP_FUSION_H

#include "dyn/Dialect/Loop/IR/LoopDialect.h"
#include "dyn/Dialect/Prim/IR/PrimDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace dyn::prim_to_loop {
using namespace mlir;

inline RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

//===----------------------------------------------------------------------===//
// Ops and indices (Plan.cpp)
//===----------------------------------------------------------------------===//

bool isReduction(Operation *op);
ArrayRef<int64_t> reductionDims(Operation *op);
loop::ReduceKind reductionKind(Operation *op);
/// Ops that only remap indices of their single operand (and a pad).
bool isIndexRemap(Operation *op);
/// Ops computed by a library call into a buffer of their own.
bool isLibraryCall(Operation *op);
/// When a reshape only inserts or removes size-1 dims: each input dim's output dim (or -1).
std::optional<SmallVector<int64_t>> unitReshapeMap(ArrayRef<int64_t> in, ArrayRef<int64_t> out);
/// A reshape of `v` whose buffer is already written (`written` says which are), or null.
Value writtenReshape(Value v, function_ref<bool(Value)> written);

/// Where the size of `v`'s `?` dim `d` comes from (a function argument's dim, or an index value: a
/// reshape's or broadcast's size operand); equal keys are equal sizes. Plan.cpp.
using DimKey = std::pair<Value, int64_t>;
std::optional<DimKey> dimKey(Value v, int64_t d);

/// Maps an index into `outV`'s shape to the index of the same element
/// (row-major order) in `inV`'s. Dynamic dims take the general path (two `?`
/// need not be one size), their sizes read by `ix`.
template <typename Idx, typename Ix>
SmallVector<Idx> reshapeIndex(ArrayRef<Idx> idx, Value outV, Value inV, Ix &ix) {
  ArrayRef<int64_t> out = tensorType(outV).getShape(), in = tensorType(inV).getShape();
  bool dynamic = !tensorType(outV).hasStaticShape() || !tensorType(inV).hasStaticShape();
  SmallVector<Idx> result;
  if (auto map = dynamic ? std::nullopt : unitReshapeMap(in, out)) {
    for (int64_t o : *map)
      result.push_back(o < 0 ? ix.zero() : idx[o]);
    return result;
  }
  // Trailing dims both shapes share keep their index (an embedding's
  // [B*T, D] -> [B, T, D] still walks D with the innermost index), and so do
  // leading ones (a `[B, ?, 64]` viewed as `[B, ?, 4, 16]` splits only the 64):
  // equal static sizes, or `?` sizes that come from one place. Only the dims
  // between are linearized (with no division by a runtime size where the `?`
  // dims are shared).
  auto same = [&](size_t i, size_t o) {
    if (in[i] != out[o])
      return false;
    if (!ShapedType::isDynamic(in[i]))
      return true;
    std::optional<DimKey> a = dimKey(inV, i), b = dimKey(outV, o);
    return a && b && *a == *b;
  };
  size_t k = 0;
  while (k < in.size() && k < out.size() && same(in.size() - 1 - k, out.size() - 1 - k))
    ++k;
  // (planning keeps the leading dims merged: its kernel shapes, a reduction's own kernel where a
  // reshape merges dims (GroupNorm's mean read through MobileViT's patches), stay as measured)
  size_t lead = 0;
  while (Ix::kSharedLeadingDims && lead + k < in.size() && lead + k < out.size() && same(lead, lead))
    ++lead;
  result.assign(idx.begin(), idx.begin() + lead);
  SmallVector<Idx> mid = ix.reshape(idx.slice(lead, out.size() - lead - k), out.slice(lead, out.size() - lead - k),
                                    in.slice(lead, in.size() - lead - k), outV, inV, lead);
  result.append(mid.begin(), mid.end());
  result.append(idx.end() - k, idx.end());
  return result;
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
    result = reshapeIndex<Idx>(idx, op->getResult(0), op->getOperand(0), ix);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Planning (Plan.cpp)
//===----------------------------------------------------------------------===//

struct KernelPlan {
  unsigned parallelDims = 0;           // leading dims run by the kernel in parallel
  SmallVector<Value> mustMaterialize;  // reductions to move into kernels of their own
};

/// Decides how the kernel for `root` is shaped, or which reductions must get
/// buffers first. `inBuffer` says which values other than root the kernel
/// reads from memory.
KernelPlan planKernel(Value root, function_ref<bool(Value)> inBuffer);

/// Sibling reductions among the materialized values (`order`: program order)
/// that one kernel computes together, each group in program order, with
/// whether the kernel takes the first member's place (else the last's).
SmallVector<std::pair<SmallVector<Value>, bool>> siblingReductions(ArrayRef<Value> order,
                                                                   function_ref<bool(Value)> materialized);

/// The buffers (materialized values and arguments) the pointwise kernel of
/// `v` reads, each with whether it is read only at the kernel's own point;
/// nothing where v's expression holds a reduction or a value read through a
/// reshape another kernel writes.
std::optional<DenseMap<Value, bool>> pointwiseReads(Value v, function_ref<bool(Value)> materialized);

//===----------------------------------------------------------------------===//
// Schedule (Schedule.cpp)
//===----------------------------------------------------------------------===//

/// What runs together and where, over the materialized values in program
/// order: each map is keyed by the value whose place (kernel) it takes.
struct KernelSchedule {
  DenseMap<Value, SmallVector<Value>> siblingsAt; // sibling reductions sharing one sweep, by the member whose place
  DenseSet<Value> siblingElsewhere;               // the other members of those groups
  DenseMap<Value, SmallVector<Value>> epiloguesAt; // a reduction kernel -> pointwise epilogues run at its end
  DenseMap<Value, SmallVector<Value>> mergedAt;    // the first member -> values computed in its kernel, in order
  DenseSet<Value> movedAway;                       // values emitted at another kernel's place
};

/// The schedule of `func`'s kernels (`order`: the materialized values in program order; `parallelDims`
/// from planKernel; `computedApart`: values a library call or an attention writes, which no kernel
/// computes). With `dynamic` (`?` dims), only statically shaped pointwise kernels merge.
KernelSchedule scheduleKernels(func::FuncOp func, ArrayRef<Value> order, const llvm::SetVector<Value> &materialized,
                               const DenseMap<Value, unsigned> &parallelDims,
                               function_ref<bool(Value)> computedApart, bool dynamic);

//===----------------------------------------------------------------------===//
// Emission (Emit.cpp)
//===----------------------------------------------------------------------===//

/// The type kernels compute an element type in (f32 for 16-bit floats, i32 for ui8).
Type computeType(Type t);
/// The element type a buffer holds (signless integers).
Type storedType(Type t);
Value castForStore(OpBuilder &b, Location loc, Value scalar, Value buffer);

struct Scope {
  Block *body;
  Operation *opener; // the loop op whose body this is; null for the kernel body
  std::map<std::vector<void *>, Value> memo;
};

/// The size of dim `d` of a prim tensor as an index value of the buffer
/// function, created at the builder's position (before the kernel that needs it).
using DimFn = std::function<Value(OpBuilder &, Value, int64_t)>;
/// An `index` value of the prim function (a size, an offset) in the buffer function.
using IndexFn = std::function<Value(OpBuilder &, Value)>;

class KernelEmitter {
public:
  KernelEmitter(OpBuilder &b, Location loc, const DenseMap<Value, Value> &buffers,
                const DenseSet<Value> &written, DimFn dimOf, IndexFn indexOf)
      : b(b), loc(loc), buffers(buffers), written(written), dimOf(std::move(dimOf)),
        indexOf(std::move(indexOf)) {}

  /// The sizes of the dynamic dims of `dims` of `value`, created before the kernel.
  SmallVector<Value> dynamicSizes(Value value, ArrayRef<int64_t> dims);

  /// Emits the kernel that computes `value` into `buffer`.
  void emitKernel(Value value, Value buffer, unsigned parallelDims, StringRef name);

  /// Emits one kernel over the shape of sibling reductions `values` (one
  /// shape) computing each into its buffer: one loop.reduce each, then the
  /// stores.
  void emitSiblingKernel(ArrayRef<Value> values, ArrayRef<Value> targets, StringRef name);
  /// Emits one kernel over the shape of `values` computing each into its
  /// target: the first `reductions` of them (sibling reductions, or one) as
  /// emitSiblingKernel does, then the others in order, each stored where it
  /// is computed. A later value reads an earlier one at the kernel's point
  /// from the computed scalar (rounded to its stored type, as a load would
  /// give it), not from memory: a reduction's epilogue.
  void emitFusedKernel(ArrayRef<Value> values, ArrayRef<Value> targets, unsigned reductions, StringRef name);
  /// A loop.kernel over `shaped`'s points (its `?` dims sized) made the current kernel, with a fresh
  /// scope; its point indices. The caller holds an InsertionGuard.
  SmallVector<Value> openPointKernel(Value shaped, StringRef name);

  /// Copies `value` (computed from its producers) into `buffer` at `offset`
  /// (plus `dynamicOffset`, a buffer-function index, where set) along `dim`:
  /// one piece of a concatenation.
  void emitCopyKernel(Value value, Value buffer, int64_t dim, int64_t offset, Value dynamicOffset,
                      StringRef name);

  // Index arithmetic for remapIndex.
  static constexpr bool kSharedLeadingDims = true; // reshapes keep the index of leading dims they share
  Value zero() { return constantIndex(0); }
  Value affine(Value i, int64_t mul, int64_t add);
  /// `out` and `in`: dims `first`, `first` + 1, ... of `outV`'s and `inV`'s shapes, whose dynamic sizes
  /// are read.
  SmallVector<Value> reshape(ArrayRef<Value> idx, ArrayRef<int64_t> out, ArrayRef<int64_t> in, Value outV,
                             Value inV, int64_t first);

private:
  OpBuilder &b;
  Location loc;
  const DenseMap<Value, Value> &buffers;
  const DenseSet<Value> &written; // materialized values whose kernels are emitted
  SmallVector<Scope> scopes;
  DenseMap<Value, unsigned> levels;
  Value target; // the buffer the current kernel writes
  DimFn dimOf;
  IndexFn indexOf;
  Operation *kernelOp = nullptr; // the kernel being emitted

  /// A buffer-function value, created before the kernel: a dim's size, an index value.
  Value sizeBeforeKernel(Value v, int64_t d);
  Value indexBeforeKernel(Value v);

public:
  Operation *unsupported = nullptr; // first op emission could not handle

private:

  Block *newBody(Region &region, unsigned numIndices);

  void closeScope();

  unsigned levelOf(Value v);
  unsigned levelOf(ArrayRef<Value> idx);

  /// Ops for loop level `t` go at the end of its body, or, when deeper levels
  /// are open, just before the loop that opened level t+1.
  void setInsertion(unsigned t);

  Value constantIndexHere(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value constantIndex(int64_t v);

  void store(Value value, Value buffer, ArrayRef<Value> idx);

  std::vector<void *> key(Value v, ArrayRef<Value> idx);

  /// The scalar value of tensor `value` at `idx`.
  Value emit(Value value, ArrayRef<Value> idx);

  Value emitUncached(Value value, ArrayRef<Value> idx, unsigned level);

  Value emitReduction(Operation *op, ArrayRef<Value> idx, unsigned level);

  /// Philox-4x32-10 (Random123's philox4x32_10) at the element's row-major
  /// linear index: key (seed lo, seed hi), counter (index lo, index hi,
  /// offset lo, offset hi); 32-bit products through i64 so that every
  /// target computes the same bits.
  Value emitPhilox(prim::PhiloxOp op, ArrayRef<Value> idx, unsigned level);

  /// Loads the index, wraps a negative one (Python's x[-1]) and clamps it
  /// into [0, size): a gather never reads out of bounds. Then the input at
  /// that index.
  Value emitGather(prim::GatherOp g, ArrayRef<Value> idx, unsigned level);

  /// The input at idx with idx[dim] shifted by the runtime start.
  Value emitDynamicSlice(prim::DynamicSliceOp s, ArrayRef<Value> idx, unsigned level);

  /// The input at idx - low, where that is inside it, else the padding
  /// value. The input is read at the index clamped into range, so the load
  /// never leaves its buffer and the select needs no branch.
  Value emitPad(prim::PadOp pad, ArrayRef<Value> idx, unsigned level);
  Value emitConcatenate(prim::ConcatenateOp cat, ArrayRef<Value> idx, unsigned level);

  Value emitScalar(Operation *op, ArrayRef<Value> x, ArrayRef<Value> idx);
};

//===----------------------------------------------------------------------===//
// GEMMs and library-call operands read in place (LibraryViews.cpp)
//===----------------------------------------------------------------------===//

bool isMatmulShaped(prim::DotGeneralOp dot);
/// The source of a GEMM's rhs (lhs) that is its transpose, read in place, or null.
Value transposedRhsSource(prim::DotGeneralOp dot);
Value transposedLhsSource(prim::DotGeneralOp dot);
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
std::optional<GemmAddend> gemmAddend(prim::DotGeneralOp dot, ArrayRef<Value> returned, bool anyFloat);
MemRefType bufferType(Value tensor);
SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape);
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
bool isViewOp(Operation *op);
/// `v` as a view of the first value down its chain of view ops that `hasBuffer` accepts, or nothing.
std::optional<BufferView> bufferView(Value v, function_ref<bool(Value)> hasBuffer);
MemRefType viewType(Value v, const BufferView &view);


/// A stride in elements of a view with `?` dims: `constant` times the runtime sizes of `dims` (each a
/// value's dim, which the buffer function computes).
struct SymStride {
  int64_t constant = 1;
  SmallVector<std::pair<Value, int64_t>> dims;
};
/// BufferView with `?` dims: strides that are products of runtime sizes; the offset stays a constant
/// (the launch plan places a view at a constant offset of its buffer).
struct DynamicBufferView {
  Value base;
  SmallVector<SymStride> strides;
  int64_t offset = 0;
  bool isContiguous(Value v) const;
};
/// The row-major strides of `v`'s shape, `?` dims included.
SmallVector<SymStride> rowMajorSymStrides(Value v);
/// `v` (with `?` dims) as a view of the first value down its chain of view ops that `hasBuffer`
/// accepts, or nothing where its strides are not products of sizes or its offset is not constant.
std::optional<DynamicBufferView> dynamicBufferView(Value v, function_ref<bool(Value)> hasBuffer);

//===----------------------------------------------------------------------===//
// Buffers for reused values (Materialize.cpp)
//===----------------------------------------------------------------------===//

void materializeWideReuse(Block &entry, llvm::SetVector<Value> &materialized);
bool materializeReusedWindows(Block &entry, llvm::SetVector<Value> &materialized);
bool materializeReusedTranscendentals(Block &entry, llvm::SetVector<Value> &materialized);
bool materializeReusedReads(Block &entry, llvm::SetVector<Value> &materialized);
bool materializeBroadcastInvariants(Block &entry, llvm::SetVector<Value> &materialized);
/// Moves the small values computed from the function's arguments alone (a batch norm backward's
/// per-channel coefficients from the saved statistics) to the function's start, in their order: their
/// kernels run before any other, merge by shape, and stand between no two kernels that could share one.
void hoistSmallArgumentValues(Block &entry);
/// Points of a small temporary: small kernels of one shape computing such values merge (Schedule.cpp), and
/// hoistSmallArgumentValues moves those computed from the arguments alone.
constexpr int64_t kSmallTemporary = 4096;

} // namespace dyn::prim_to_loop

#endif // DYN_CONVERSION_PRIMTOLOOP_FUSION_H
