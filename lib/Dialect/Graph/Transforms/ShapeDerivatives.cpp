//===- ShapeDerivatives.cpp - derivatives of shape ops, gradient sums ------===//
//
// The DerivativeBuilder members for the ops that move data (permute, slice,
// pad, reshape, expand, cat, dynamic_slice), and the sum of two gradient
// contributions: where both are a concatenation of zeros and values along one
// dim (the gradients of slices of one tensor with `?` dims beside the sliced
// one: q, k and v split from one projection), their pieces are added piecewise
// into one concatenation instead of adding padded copies.
//
//===----------------------------------------------------------------------===//
#include "DerivativeBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace dyn::graph {

static RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

Value DerivativeBuilder::permuteBack(Operation *op, Value grad, Values) {
  ArrayRef<int64_t> dims = cast<PermuteOp>(op).getDims();
  SmallVector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i)
    inverse[dims[i]] = i;
  // A linear layer's weight (x @ w^T): the gradient of w^T is the GEMM x^T @ g; transposed back it is
  // computed as g^T @ x, eager's formula, so the GEMM writes the weight's layout itself instead of a
  // temporary that a transpose kernel copies (the LM head's [vocab, hidden] gradient: 250 MiB in TinyLlama).
  // The operands' transposes are the GEMM's transpose flags; the first GEMM is left unused.
  auto mm = grad.getDefiningOp<MatmulOp>();
  if (mm && dims.size() == 2 && dims[0] == 1 && dims[1] == 0 && tensorType(mm.getLhs()).getRank() == 2 &&
      tensorType(mm.getRhs()).getRank() == 2 && grad.use_empty() && tensorType(grad).hasStaticShape()) {
    return matmul(transposeLast2(mm.getRhs()), transposeLast2(mm.getLhs()));
  }
  return permute(grad, inverse);
}

Value DerivativeBuilder::sliceBack(Operation *op, Value grad, Values) {
  auto s = cast<SliceOp>(op);
  RankedTensorType in = tensorType(s.getInput()), g = tensorType(grad);
  int64_t dim = s.getDim(), start = s.getStart(), step = s.getStep(), n = g.getDimSize(dim);
  int64_t size = in.getDimSize(dim);
  if (ShapedType::isDynamic(size)) {
    // static bounds on a `?` dim (x[:1] of a runtime batch): the cotangent between zeros of length start and
    // zeros of the runtime rest
    if (step != 1) {
      dynamicUnsupported(op, "along a strided slice of a dynamic dim");
      return {};
    }
    SmallVector<Value> pieces;
    SmallVector<int64_t> shape(g.getShape());
    if (start > 0) {
      shape[dim] = start;
      pieces.push_back(zeros(g.clone(shape), grad));
    }
    pieces.push_back(grad);
    shape[dim] = ShapedType::kDynamic;
    SmallVector<Value> sizes;
    for (int64_t i = 0; i < g.getRank(); ++i)
      if (i == dim)
        sizes.push_back(b.create<arith::SubIOp>(loc, dimOf(s.getInput(), dim),
                                                b.create<arith::ConstantIndexOp>(loc, start + n).getResult())
                            .getResult());
      else if (g.isDynamicDim(i))
        sizes.push_back(dimOf(grad, i));
    pieces.push_back(expand(zeros(RankedTensorType::get({}, g.getElementType()), grad), shape, sizes));
    return b.create<CatOp>(loc, in.clone(g.getElementType()), pieces, b.getI64IntegerAttr(dim)).getResult();
  }
  if (!g.hasStaticShape()) {
    // `?` dims beside the sliced one (a pad takes static shapes): zeros, the cotangent, zeros, concatenated
    Value v = grad;
    if (step > 1 && n > 0) {
      // every selected element followed by step - 1 zeros: [.., n, 1, ..] and zeros [.., n, step - 1, ..]
      // concatenated along the new dim, merged to [.., n * step, ..] and cut to the input's extent (x[..., ::2]
      // of a rotary embedding at a symbolic length)
      SmallVector<Value> sizes;
      for (int64_t i = 0; i < g.getRank(); ++i)
        if (g.isDynamicDim(i))
          sizes.push_back(dimOf(grad, i));
      SmallVector<int64_t> split(g.getShape());
      split.insert(split.begin() + dim + 1, 1);
      Value one = reshape(grad, split, sizes);
      SmallVector<int64_t> gap(split), both(split), merged(g.getShape());
      gap[dim + 1] = step - 1;
      both[dim + 1] = step;
      merged[dim] = n * step;
      Value interleaved = b.create<CatOp>(loc, g.clone(both), ValueRange{one, zeros(g.clone(gap), one)},
                                          b.getI64IntegerAttr(dim + 1))
                              .getResult();
      v = reshape(interleaved, merged, sizes);
      n = std::min(n * step, size - start);
      if (n < tensorType(v).getDimSize(dim))
        v = slice(v, dim, 0, n);
    } else if (step != 1) {
      dynamicUnsupported(op, "along a strided slice");
      return {};
    }
    SmallVector<Value> pieces;
    for (auto [from, to] : {std::pair{int64_t(0), start}, std::pair{start, start + n}, std::pair{start + n, size}}) {
      if (from == start && to == start + n) {
        pieces.push_back(v);
        continue;
      }
      if (to <= from)
        continue;
      SmallVector<int64_t> shape(g.getShape());
      shape[dim] = to - from;
      pieces.push_back(zeros(g.clone(shape), grad));
    }
    if (pieces.size() == 1)
      return v;
    return b.create<CatOp>(loc, in.clone(g.getElementType()), pieces, b.getI64IntegerAttr(dim)).getResult();
  }
  Value v = grad;
  int64_t covered = n;
  if (step > 1 && n > 0) {
    // Every selected element followed by step - 1 zeros: [.., n, 1, ..] padded to [.., n, step, ..].
    SmallVector<int64_t> split(g.getShape());
    split.insert(split.begin() + dim + 1, 1);
    SmallVector<int64_t> low(split.size(), 0), high(split.size(), 0);
    high[dim + 1] = step - 1;
    v = padZeros(reshape(v, split), low, high);
    SmallVector<int64_t> merged(g.getShape());
    merged[dim] = n * step;
    v = reshape(v, merged);
    covered = n * step;
  }
  if (start + covered > size) {
    v = slice(v, dim, 0, size - start);
    covered = size - start;
  }
  SmallVector<int64_t> low(g.getRank(), 0), high(g.getRank(), 0);
  low[dim] = start;
  high[dim] = size - start - covered;
  return padZeros(v, low, high);
}

Value DerivativeBuilder::padBack(Operation *op, Value grad, Values) {
  auto p = cast<PadOp>(op);
  if (p.getMode() != PadMode::constant) {
    notDifferentiable(op, 0);
    return {};
  }
  RankedTensorType in = tensorType(p.getInput());
  Value v = grad;
  for (int64_t d = 0; d < in.getRank(); ++d)
    v = slice(v, d, p.getLow()[d], p.getLow()[d] + in.getDimSize(d));
  return v;
}

void DerivativeBuilder::reshapeBack(Operation *op, Value grad, SmallVectorImpl<Value> &grads) {
  if (wants(op, 0))
    grads[0] = reshapeAs(op, grad, {op->getOperand(0), grad});
}

void DerivativeBuilder::expandBack(Operation *op, Value grad, SmallVectorImpl<Value> &grads) {
  if (wants(op, 0))
    grads[0] = sumTo(op, grad, {op->getOperand(0), grad});
}

void DerivativeBuilder::catBack(Operation *op, Value grad, SmallVectorImpl<Value> &grads) {
  auto c = cast<CatOp>(op);
  int64_t dim = c.getDim(), offset = 0;
  if (tensorType(grad).isDynamicDim(dim)) {
    // `?` lengths: each input's part of the cotangent between runtime offsets (their lengths summed)
    Value start = b.create<arith::ConstantIndexOp>(loc, 0).getResult();
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      RankedTensorType in = tensorType(op->getOperand(i));
      Value n = in.isDynamicDim(dim) ? dimOf(op->getOperand(i), dim)
                                     : b.create<arith::ConstantIndexOp>(loc, in.getDimSize(dim)).getResult();
      Value end = b.create<arith::AddIOp>(loc, start, n).getResult();
      if (wants(op, i)) {
        SmallVector<int64_t> shape(tensorType(grad).getShape());
        shape[dim] = in.getDimSize(dim);
        Value part = b.create<DynamicSliceOp>(loc, tensorType(grad).clone(shape), grad, start, end,
                                              b.getI64IntegerAttr(dim)).getResult();
        grads[i] = convert(part, in.getElementType());
      }
      start = end;
    }
    return;
  }
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    int64_t n = tensorType(op->getOperand(i)).getDimSize(dim);
    if (wants(op, i))
      grads[i] = convert(slice(grad, dim, offset, offset + n), tensorType(op->getOperand(i)).getElementType());
    offset += n;
  }
}

void DerivativeBuilder::dynamicSliceBack(Operation *op, Value grad, SmallVectorImpl<Value> &grads) {
  auto s = cast<DynamicSliceOp>(op);
  if (!wants(op, 0))
    return;
  // zeros of length start, the cotangent, zeros of length size - end: a concatenation of `?` length, then
  // read back at the input's length where that is static (a learned position table sliced to a length)
  int64_t dim = s.getDim();
  RankedTensorType in = tensorType(s.getInput()), g = tensorType(grad);
  Value size = in.isDynamicDim(dim) ? dimOf(s.getInput(), dim)
                                    : b.create<arith::ConstantIndexOp>(loc, in.getDimSize(dim)).getResult();
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0).getResult();
  Value tail = b.create<arith::SubIOp>(loc, size, s.getEnd()).getResult();
  SmallVector<int64_t> shape(g.getShape());
  shape[dim] = ShapedType::kDynamic;
  RankedTensorType piece = g.clone(shape);
  auto zerosOf = [&](Value length) {
    SmallVector<Value> sizes;
    for (int64_t i = 0; i < g.getRank(); ++i)
      if (i == dim)
        sizes.push_back(length);
      else if (g.isDynamicDim(i))
        sizes.push_back(dimOf(grad, i));
    auto scalar = RankedTensorType::get({}, g.getElementType());
    Value z = zeros(scalar, grad);
    return expand(z, shape, sizes);
  };
  SmallVector<Value> pieces;
  if (getConstantIntValue(s.getStart()) != 0) // (a slice from 0 has no zeros before it)
    pieces.push_back(zerosOf(s.getStart()));
  pieces.push_back(grad);
  pieces.push_back(zerosOf(tail));
  Value whole = b.create<CatOp>(loc, piece, pieces, b.getI64IntegerAttr(dim)).getResult();
  if (!in.isDynamicDim(dim))
    whole = b.create<DynamicSliceOp>(loc, g.clone(in.getShape()), whole, zero, size, b.getI64IntegerAttr(dim))
                .getResult();
  grads[0] = convert(whole, in.getElementType());
}

//===----------------------------------------------------------------------===//
// Gradient sums
//===----------------------------------------------------------------------===//

/// Whether v is zeros: a zero constant, or one expanded (the zeros a rule pads with).
static bool isZeros(Value v) {
  if (auto e = v.getDefiningOp<ExpandOp>())
    v = e.getInput();
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!dense || !dense.isSplat())
    return false;
  if (isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().isPosZero();
  return isa<IntegerType>(dense.getElementType()) && dense.getSplatValue<APInt>().isZero();
}

namespace {
/// A concatenation's pieces along its dim: [start, end) and the value (null: zeros).
struct Piece {
  int64_t start, end;
  Value value;
};
} // namespace

/// The pieces of v, a concatenation along `dim` of pieces of static lengths; empty otherwise.
static SmallVector<Piece> piecesOf(Value v, int64_t dim) {
  auto cat = v.getDefiningOp<CatOp>();
  if (!cat || static_cast<int64_t>(cat.getDim()) != dim)
    return {};
  SmallVector<Piece> pieces;
  int64_t at = 0;
  for (Value in : cat.getInputs()) {
    int64_t n = tensorType(in).getDimSize(dim);
    if (ShapedType::isDynamic(n))
      return {};
    pieces.push_back({at, at + n, isZeros(in) ? Value() : in});
    at += n;
  }
  return pieces;
}

Value DerivativeBuilder::accumulate(Value a, Value g) {
  auto plainAdd = [&] { return b.create<AddOp>(loc, a.getType(), a, g).getResult(); };
  auto cat = a.getDefiningOp<CatOp>();
  if (!cat || a.getType() != g.getType())
    return plainAdd();
  int64_t dim = cat.getDim();
  SmallVector<Piece> pa = piecesOf(a, dim), pg = piecesOf(g, dim);
  if (pa.empty() || pg.empty())
    return plainAdd();
  // the union of both cuts; a cut may fall inside zeros (split freely), never inside a value
  SmallVector<int64_t> cuts;
  for (const Piece &p : pa)
    cuts.push_back(p.end);
  for (const Piece &p : pg)
    cuts.push_back(p.end);
  llvm::sort(cuts);
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  auto covering = [](ArrayRef<Piece> ps, int64_t start, int64_t end) -> std::optional<Value> {
    for (const Piece &p : ps)
      if (p.start <= start && end <= p.end)
        return (p.value && (p.start != start || p.end != end)) ? std::optional<Value>() : p.value;
    return std::optional<Value>();
  };
  RankedTensorType t = tensorType(a);
  SmallVector<Value> merged;
  int64_t start = 0;
  for (int64_t end : cuts) {
    std::optional<Value> x = covering(pa, start, end), y = covering(pg, start, end);
    if (!x || !y)
      return plainAdd();
    SmallVector<int64_t> shape(t.getShape());
    shape[dim] = end - start;
    if (*x && *y)
      merged.push_back(b.create<AddOp>(loc, t.clone(shape), *x, *y).getResult());
    else if (*x || *y)
      merged.push_back(*x ? *x : *y);
    else
      merged.push_back(zeros(t.clone(shape), a));
    start = end;
  }
  return merged.size() == 1 ? merged.front()
                            : b.create<CatOp>(loc, t, merged, b.getI64IntegerAttr(dim)).getResult();
}

} // namespace dyn::graph
