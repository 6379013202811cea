//===- LibraryViews.cpp - GEMM operands and views -----------------------===//
#include "Fusion.h"

namespace dyn::prim_to_loop {

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


std::optional<GemmAddend> gemmAddend(prim::DotGeneralOp dot, ArrayRef<Value> returned,
                                     bool anyFloat) {
  Type et = tensorType(dot.getResult()).getElementType();
  // dyn's own runtime matmul (`dyn.cpu_gemm` = "runtime": chosen, or no
  // torch to call) has no epilogue.
  if (auto module = dot->getParentOfType<ModuleOp>())
    if (auto choice = module->getAttrOfType<StringAttr>("dyn.cpu_gemm"); choice && choice.getValue() == "runtime")
      anyFloat = false;
  bool fused = et.isF16() || et.isBF16() || (anyFloat && isa<FloatType>(et));
  // (a prim.dim of the product is no reader: its size is traced to the operands')
  SmallVector<Operation *> readers;
  for (Operation *user : dot->getUsers())
    if (!isa<prim::DimOp>(user))
      readers.push_back(user);
  if (!fused || readers.size() != 1 || llvm::is_contained(returned, dot.getResult()))
    return std::nullopt;
  auto add = dyn_cast<prim::AddOp>(readers.front());
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

//===----------------------------------------------------------------------===//
// Views with `?` dims: strides as products of runtime sizes
//===----------------------------------------------------------------------===//

namespace {
using Factor = std::pair<Value, int64_t>;

/// A factor's key: where its size comes from (dimKey), or the factor itself where the trace stops.
DimKey keyOf(const Factor &f) { return dimKey(f.first, f.second).value_or(DimKey{f.first, f.second}); }

SmallVector<DimKey> sortedKeys(const SymStride &s) {
  SmallVector<DimKey> keys;
  for (const Factor &f : s.dims)
    keys.push_back(keyOf(f));
  llvm::sort(keys, [](const DimKey &a, const DimKey &b) {
    return std::make_pair(a.first.getAsOpaquePointer(), a.second) <
           std::make_pair(b.first.getAsOpaquePointer(), b.second);
  });
  return keys;
}

bool equal(const SymStride &a, const SymStride &b) {
  return a.constant == b.constant && sortedKeys(a) == sortedKeys(b);
}

/// Whether a is a proper divisor of b at every size: its constant divides b's, its sizes are among
/// b's, and it is not b.
bool properDivisor(const SymStride &a, const SymStride &b) {
  if (equal(a, b) || a.constant == 0 || b.constant % a.constant)
    return false;
  SmallVector<DimKey> ka = sortedKeys(a), kb = sortedKeys(b);
  if (ka.empty() && kb.empty())
    return a.constant < b.constant;
  // multiset inclusion
  SmallVector<DimKey> rest(kb);
  for (const DimKey &k : ka) {
    auto it = llvm::find(rest, k);
    if (it == rest.end())
      return false;
    rest.erase(it);
  }
  return true;
}

/// s times dim `d` of `v` (a constant where it is static).
SymStride times(SymStride s, Value v, int64_t d) {
  RankedTensorType t = tensorType(v);
  if (t.isDynamicDim(d))
    s.dims.push_back({v, d});
  else
    s.constant *= t.getDimSize(d);
  return s;
}

/// torch's computeStride with sizes that may be `?`: chunks of the old dims that are contiguous among
/// themselves are split into the new dims. A chunk's element counts are compared as products of sizes
/// (equal where their sizes come from one place); the outermost chunk takes every remaining new dim,
/// whose product equals its own by the reshape's element count.
std::optional<SmallVector<SymStride>> reshapedStrides(Value in, ArrayRef<SymStride> oldStrides, Value out) {
  ArrayRef<int64_t> oldShape = tensorType(in).getShape(), newShape = tensorType(out).getShape();
  SmallVector<SymStride> strides(newShape.size());
  if (oldShape.empty() || llvm::is_contained(oldShape, 0) || llvm::is_contained(newShape, 0))
    return std::nullopt;
  int64_t viewD = (int64_t)newShape.size() - 1;
  SymStride chunkBase = oldStrides.back(), tensorNumel, viewNumel;
  auto timesStride = [](SymStride a, const SymStride &b) {
    a.constant *= b.constant;
    a.dims.append(b.dims.begin(), b.dims.end());
    return a;
  };
  for (int64_t d = (int64_t)oldShape.size() - 1; d >= 0; --d) {
    tensorNumel = times(tensorNumel, in, d);
    bool boundary = d == 0 || (oldShape[d - 1] != 1 && !equal(oldStrides[d - 1], timesStride(tensorNumel, chunkBase)));
    if (!boundary)
      continue;
    while (viewD >= 0 && (d == 0 || properDivisor(viewNumel, tensorNumel) || newShape[viewD] == 1)) {
      strides[viewD] = timesStride(viewNumel, chunkBase);
      viewNumel = times(viewNumel, out, viewD);
      --viewD;
    }
    if (d > 0 && !equal(viewNumel, tensorNumel))
      return std::nullopt;
    if (d > 0) {
      chunkBase = oldStrides[d - 1];
      tensorNumel = viewNumel = SymStride();
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return strides;
}
} // namespace

SmallVector<SymStride> rowMajorSymStrides(Value v) {
  int64_t rank = tensorType(v).getRank();
  SmallVector<SymStride> strides(rank);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = times(strides[d + 1], v, d + 1);
  return strides;
}

bool DynamicBufferView::isContiguous(Value v) const {
  SmallVector<SymStride> want = rowMajorSymStrides(v);
  return offset == 0 && llvm::all_of(llvm::zip(strides, want), [](auto p) {
           return equal(std::get<0>(p), std::get<1>(p));
         });
}

std::optional<DynamicBufferView> dynamicBufferView(Value v, function_ref<bool(Value)> hasBuffer) {
  RankedTensorType t = tensorType(v);
  if (llvm::is_contained(t.getShape(), 0))
    return std::nullopt;
  if (hasBuffer(v))
    return DynamicBufferView{v, rowMajorSymStrides(v), 0};
  Operation *def = v.getDefiningOp();
  if (!isViewOp(def))
    return std::nullopt;
  std::optional<DynamicBufferView> in = dynamicBufferView(def->getOperand(0), hasBuffer);
  if (!in)
    return std::nullopt;
  Value input = def->getOperand(0);
  DynamicBufferView out{in->base, SmallVector<SymStride>(t.getRank()), in->offset};
  if (auto tr = dyn_cast<prim::TransposeOp>(def)) {
    for (auto [i, p] : llvm::enumerate(tr.getPermutation()))
      out.strides[i] = in->strides[p];
  } else if (auto sl = dyn_cast<prim::SliceOp>(def)) {
    for (int64_t i = 0; i < t.getRank(); ++i) {
      int64_t start = sl.getStart()[i], step = sl.getStride()[i];
      if (step < 0 || (start && !in->strides[i].dims.empty())) // a runtime offset
        return std::nullopt;
      out.offset += start * in->strides[i].constant;
      out.strides[i] = in->strides[i];
      out.strides[i].constant *= step;
    }
  } else if (isa<prim::ReshapeOp>(def)) {
    auto strides = reshapedStrides(input, in->strides, v);
    if (!strides)
      return std::nullopt;
    out.strides = *strides;
  } else {
    auto b = cast<prim::BroadcastInDimOp>(def);
    RankedTensorType it = tensorType(input);
    for (auto [i, d] : llvm::enumerate(b.getDims()))
      out.strides[d] = it.getDimSize(i) == 1 && t.getDimSize(d) != 1 ? SymStride{0, {}} : in->strides[i];
    for (int64_t d = 0; d < t.getRank(); ++d) // new dims
      if (!llvm::is_contained(b.getDims(), d))
        out.strides[d] = SymStride{0, {}};
  }
  return out;
}

} // namespace dyn::prim_to_loop
