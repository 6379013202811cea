//===- DerivativeBuilder.cpp - graph IR that derivative rules build -------===//
//
// The builders GraphDerivatives.td names. Every value they make is graph IR,
// which decomposes, fuses and lowers like a forward graph on both targets.
//
//===----------------------------------------------------------------------===//
#include "DerivativeBuilder.h"
#include "SymbolicDims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <numeric>

using namespace mlir;

namespace dyn::graph {

static RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

void DerivativeBuilder::notDifferentiable(Operation *op, unsigned operand) {
  op->emitError() << "dyn-graph-autodiff: no derivative of " << op->getName() << " with respect to operand "
                  << operand << " yet";
  failed = true;
}

/// PyTorch's promotion of tensor element types: bool < integers < floats,
/// then width; float16 with bfloat16 gives float32.
static Type promote(Type a, Type c) {
  auto rank = [](Type t) { return t.isInteger(1) ? 0 : isa<FloatType>(t) ? 2 : 1; };
  if (rank(a) != rank(c))
    return rank(a) > rank(c) ? a : c;
  if (a == c)
    return a;
  unsigned wa = a.getIntOrFloatBitWidth(), wc = c.getIntOrFloatBitWidth();
  if (wa == wc && isa<FloatType>(a))
    return Float32Type::get(a.getContext());
  return wa >= wc ? a : c;
}

Type DerivativeBuilder::inferType(StringRef opName, StringRef shapeRule, StringRef typeRule, Values operands) {
  SmallVector<int64_t> shape;
  if (shapeRule == "elementwise") {
    shape.assign(tensorType(operands[0]).getShape().begin(), tensorType(operands[0]).getShape().end());
  } else if (shapeRule == "broadcast") {
    for (Value v : operands) {
      ArrayRef<int64_t> s = tensorType(v).getShape();
      if (s.size() > shape.size())
        shape.insert(shape.begin(), s.size() - shape.size(), 1);
      for (size_t i = 0; i < s.size(); ++i) {
        int64_t &d = shape[shape.size() - s.size() + i];
        if (d == 1)
          d = s[i];
      }
    }
  } else {
    emitError(loc) << "dyn-graph-autodiff: " << opName << " (shape rule " << shapeRule
                   << ") cannot be built by a derivative DAG";
    failed = true;
    return {};
  }
  Type et = tensorType(operands[0]).getElementType();
  for (Value v : operands.drop_front())
    et = promote(et, tensorType(v).getElementType());
  if (typeRule == "bool" || (typeRule == "free" && et.isInteger(1))) {
    et = b.getI1Type();
  } else if (typeRule == "float") {
    if (!isa<FloatType>(et))
      et = b.getF32Type();
  } else if (typeRule.starts_with("keeps")) {
    et = tensorType(operands[0]).getElementType();
  } else if (typeRule != "promote" && typeRule != "promote_numeric") {
    emitError(loc) << "dyn-graph-autodiff: " << opName << " (type rule " << typeRule
                   << ") cannot be built by a derivative DAG";
    failed = true;
    return {};
  }
  return RankedTensorType::get(shape, et);
}

//===----------------------------------------------------------------------===//
// Leaves, shapes and arithmetic
//===----------------------------------------------------------------------===//

Value DerivativeBuilder::constant(Value like, double value) {
  Type et = tensorType(like).getElementType();
  if (!isa<FloatType>(et))
    et = b.getF32Type();
  auto t = RankedTensorType::get({}, et);
  return b.create<ConstantOp>(loc, t, DenseElementsAttr::get(t, b.getFloatAttr(et, value))).getResult();
}

Value DerivativeBuilder::zeros(RankedTensorType type, Value like) {
  Attribute zero = isa<FloatType>(type.getElementType()) ? Attribute(b.getFloatAttr(type.getElementType(), 0.0))
                                                         : Attribute(b.getIntegerAttr(type.getElementType(), 0));
  if (type.hasStaticShape())
    return b.create<ConstantOp>(loc, type, DenseElementsAttr::get(type, zero)).getResult();
  auto scalar = RankedTensorType::get({}, type.getElementType());
  Value z = b.create<ConstantOp>(loc, scalar, DenseElementsAttr::get(scalar, zero)).getResult();
  return expand(z, type.getShape(), sizesLike(like, type.getShape()));
}

Value DerivativeBuilder::dimOf(Value v, int64_t dim) { return materializeDim(b, v, dim); }

SmallVector<Value> DerivativeBuilder::sizesLike(Value like, ArrayRef<int64_t> shape) {
  SmallVector<Value> sizes;
  for (size_t i = 0; i < shape.size(); ++i)
    if (ShapedType::isDynamic(shape[i]))
      sizes.push_back(dimOf(like, i));
  return sizes;
}

Value DerivativeBuilder::reshapeLike(Value v, Value like) {
  ArrayRef<int64_t> shape = tensorType(like).getShape();
  return reshape(v, shape, sizesLike(like, shape));
}

Value DerivativeBuilder::expandLike(Value v, Value like) {
  ArrayRef<int64_t> shape = tensorType(like).getShape();
  return expand(v, shape, sizesLike(like, shape));
}

Value DerivativeBuilder::count(Value x, ArrayRef<int64_t> dims, Value like) {
  RankedTensorType t = tensorType(x);
  int64_t known = 1;
  SmallVector<int64_t> dynamic;
  for (int64_t d : dims)
    if (t.isDynamicDim(d))
      dynamic.push_back(d);
    else
      known *= t.getDimSize(d);
  if (dynamic.empty())
    return constant(like, static_cast<double>(known));
  // the sum of ones over the runtime sizes (an `index` has no conversion to a tensor element)
  Value one = constant(like, 1.0);
  SmallVector<int64_t> shape(dynamic.size(), ShapedType::kDynamic), all;
  SmallVector<Value> sizes;
  for (int64_t d : dynamic) {
    all.push_back(all.size());
    sizes.push_back(dimOf(x, d));
  }
  Value n = sum(expand(one, shape, sizes), all, false);
  return mulScalar(n, static_cast<double>(known));
}

void DerivativeBuilder::dynamicUnsupported(Operation *op, StringRef what) {
  op->emitError() << "dyn-graph-autodiff: no derivative of " << op->getName() << " with dynamic (`?`) dims "
                  << what << " yet";
  failed = true;
}

Value DerivativeBuilder::convert(Value v, Type elementType) {
  RankedTensorType t = tensorType(v);
  if (t.getElementType() == elementType)
    return v;
  return b.create<ConvertOp>(loc, t.clone(elementType), v).getResult();
}

Value DerivativeBuilder::up(Value v) {
  Type et = tensorType(v).getElementType();
  return et.isF16() || et.isBF16() ? convert(v, b.getF32Type()) : v;
}

/// Whether a reshape or expand of a `t` to `shape` is `t` itself: the same shape with at most one `?` dim
/// (two `?` dims of the same element count may still be two other sizes).
static bool sameShape(RankedTensorType t, ArrayRef<int64_t> shape) {
  return t.getShape() == shape && t.getNumDynamicDims() <= 1;
}

Value DerivativeBuilder::reshape(Value v, ArrayRef<int64_t> shape, ValueRange sizes) {
  RankedTensorType t = tensorType(v);
  if (sameShape(t, shape))
    return v;
  return b.create<ReshapeOp>(loc, RankedTensorType::get(shape, t.getElementType()), v, sizes).getResult();
}

Value DerivativeBuilder::expand(Value v, ArrayRef<int64_t> shape, ValueRange sizes) {
  RankedTensorType t = tensorType(v);
  if (t.getShape() == shape)  // a `?` input dim is never broadcast: the same sizes
    return v;
  return b.create<ExpandOp>(loc, RankedTensorType::get(shape, t.getElementType()), v, sizes).getResult();
}

Value DerivativeBuilder::permute(Value v, ArrayRef<int64_t> dims) {
  RankedTensorType t = tensorType(v);
  SmallVector<int64_t> shape;
  for (int64_t d : dims)
    shape.push_back(t.getDimSize(d));
  return b.create<PermuteOp>(loc, RankedTensorType::get(shape, t.getElementType()), v,
                             b.getDenseI64ArrayAttr(dims))
      .getResult();
}

Value DerivativeBuilder::transposeLast2(Value v) {
  int64_t r = tensorType(v).getRank();
  SmallVector<int64_t> dims(r);
  std::iota(dims.begin(), dims.end(), 0);
  std::swap(dims[r - 1], dims[r - 2]);
  // the transpose of a transpose is the value itself: a linear layer's input gradient g @ (w^T)^T reads the
  // weight as it is (a GEMM flag) instead of a transposed copy of every weight the backward makes
  if (auto p = v.getDefiningOp<PermuteOp>(); p && p.getDims() == ArrayRef<int64_t>(dims))
    return p.getInput();
  return permute(v, dims);
}

Value DerivativeBuilder::slice(Value v, int64_t dim, int64_t start, int64_t end, int64_t step) {
  RankedTensorType t = tensorType(v);
  if (start == 0 && end == t.getDimSize(dim) && step == 1)
    return v;
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] = end <= start ? 0 : (end - start + step - 1) / step;
  return b.create<SliceOp>(loc, RankedTensorType::get(shape, t.getElementType()), v, b.getI64IntegerAttr(dim),
                           b.getI64IntegerAttr(start), b.getI64IntegerAttr(end), b.getI64IntegerAttr(step))
      .getResult();
}

Value DerivativeBuilder::padZeros(Value v, ArrayRef<int64_t> low, ArrayRef<int64_t> high) {
  RankedTensorType t = tensorType(v);
  if (llvm::all_of(low, [](int64_t x) { return x == 0; }) && llvm::all_of(high, [](int64_t x) { return x == 0; }))
    return v;
  SmallVector<int64_t> shape(t.getShape());
  for (size_t i = 0; i < shape.size(); ++i)
    shape[i] += low[i] + high[i];
  return b.create<PadOp>(loc, RankedTensorType::get(shape, t.getElementType()), v,
                         PadModeAttr::get(b.getContext(), PadMode::constant), b.getDenseI64ArrayAttr(low),
                         b.getDenseI64ArrayAttr(high), b.getF64FloatAttr(0.0))
      .getResult();
}

Value DerivativeBuilder::sum(Value v, ArrayRef<int64_t> dims, bool keepdim) {
  if (dims.empty())
    return v;
  RankedTensorType t = tensorType(v);
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (!llvm::is_contained(dims, i))
      shape.push_back(t.getDimSize(i));
    else if (keepdim)
      shape.push_back(1);
  return b.create<SumOp>(loc, RankedTensorType::get(shape, t.getElementType()), v, b.getDenseI64ArrayAttr(dims),
                         keepdim ? b.getUnitAttr() : UnitAttr())
      .getResult();
}

Value DerivativeBuilder::matmul(Value lhs, Value rhs) {
  RankedTensorType l = tensorType(lhs), r = tensorType(rhs);
  SmallVector<int64_t> shape(l.getShape().drop_back());
  shape.push_back(r.getShape().back());
  return b.create<MatmulOp>(loc, RankedTensorType::get(shape, l.getElementType()), lhs, rhs).getResult();
}

Value DerivativeBuilder::add(Value a, Value c) { return build<AddOp>("broadcast", "promote", {a, c}); }
Value DerivativeBuilder::sub(Value a, Value c) { return build<SubOp>("broadcast", "promote", {a, c}); }
Value DerivativeBuilder::mul(Value a, Value c) { return build<MulOp>("broadcast", "promote", {a, c}); }
Value DerivativeBuilder::div(Value a, Value c) { return build<DivOp>("broadcast", "promote", {a, c}); }
Value DerivativeBuilder::where(Value cond, Value a, Value c) {
  return build<WhereOp>("broadcast", "promote", {cond, a, c});
}

Value DerivativeBuilder::compare(StringRef predicate, Value a, Value c) {
  if (predicate == "gt")
    return build<GtOp>("broadcast", "bool", {a, c});
  if (predicate == "ge")
    return build<GeOp>("broadcast", "bool", {a, c});
  if (predicate == "lt")
    return build<LtOp>("broadcast", "bool", {a, c});
  if (predicate == "le")
    return build<LeOp>("broadcast", "bool", {a, c});
  if (predicate == "eq")
    return build<EqOp>("broadcast", "bool", {a, c});
  if (predicate == "ne")
    return build<NeOp>("broadcast", "bool", {a, c});
  llvm_unreachable("unknown comparison");
}

Value DerivativeBuilder::unary(StringRef name, Value v) {
  if (name == "exp")
    return build<ExpOp>("elementwise", "float", {v});
  if (name == "erf")
    return build<ErfOp>("elementwise", "float", {v});
  if (name == "tanh")
    return build<TanhOp>("elementwise", "float", {v});
  if (name == "rsqrt")
    return build<RsqrtOp>("elementwise", "float", {v});
  if (name == "sigmoid")
    return build<SigmoidOp>("elementwise", "float", {v});
  if (name == "neg")
    return build<NegOp>("elementwise", "promote_numeric", {v});
  llvm_unreachable("unknown unary op");
}

//===----------------------------------------------------------------------===//
// Broadcasting and conversion (the shape ops' rules: ShapeDerivatives.cpp)
//===----------------------------------------------------------------------===//

Value DerivativeBuilder::sumTo(Operation *, Value, Values args) {
  Value target = args[0], v = args[1];
  RankedTensorType t = tensorType(target), s = tensorType(v);
  int64_t lead = s.getRank() - t.getRank();
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < s.getRank(); ++i)
    if (i < lead || (t.getDimSize(i - lead) == 1 && s.getDimSize(i) != 1))
      dims.push_back(i);
  // nothing summed: the same shape, at run time too (a `?` dim is never broadcast)
  Value r = dims.empty() && s.getShape() == t.getShape() ? v : reshapeLike(sum(v, dims, false), target);
  return convert(r, t.getElementType());
}

Value DerivativeBuilder::zeroGrad(Operation *, Value, Values args) { return zeros(tensorType(args[0]), args[0]); }

Value DerivativeBuilder::convertTo(Operation *, Value, Values args) {
  return convert(args[1], tensorType(args[0]).getElementType());
}

Value DerivativeBuilder::reshapeAs(Operation *, Value, Values args) {
  return reshapeLike(args[1], args[0]);
}

//===----------------------------------------------------------------------===//
// Reductions and softmax
//===----------------------------------------------------------------------===//

Value DerivativeBuilder::unreduce(Value grad, Value input, ArrayRef<int64_t> dims, bool keepdim) {
  SmallVector<int64_t> kept(tensorType(input).getShape());
  for (int64_t d : dims)
    kept[d] = 1;
  // Empty dims reduce nothing.
  Value v = reshape(grad, kept, sizesLike(input, kept));
  return expandLike(v, input);
}

Value DerivativeBuilder::reducedBack(Operation *op, Value grad, Values) {
  auto s = cast<SumOp>(op);
  RankedTensorType in = tensorType(s.getInput());
  return convert(unreduce(grad, s.getInput(), s.getDims(), s.getKeepdim()), in.getElementType());
}

Value DerivativeBuilder::meanBack(Operation *op, Value grad, Values) {
  auto m = cast<MeanOp>(op);
  RankedTensorType in = tensorType(m.getInput());
  Value v = div(grad, count(m.getInput(), m.getDims(), grad));
  return convert(unreduce(v, m.getInput(), m.getDims(), m.getKeepdim()), in.getElementType());
}

Value DerivativeBuilder::extremumBack(Operation *op, Value grad, Values) {
  Value input = op->getOperand(0);
  RankedTensorType in = tensorType(input);
  ArrayRef<int64_t> dims = isa<AmaxOp>(op) ? cast<AmaxOp>(op).getDims() : cast<AminOp>(op).getDims();
  bool keepdim = isa<AmaxOp>(op) ? cast<AmaxOp>(op).getKeepdim() : cast<AminOp>(op).getKeepdim();
  // The cotangent is shared evenly among the elements equal to the extremum (eager's amax backward).
  Value hit = compare("eq", input, unreduce(op->getResult(0), input, dims, keepdim));
  Value hits = sum(convert(hit, in.getElementType()), dims, true);
  Value share = div(unreduce(grad, input, dims, keepdim), expandLike(hits, input));
  return where(hit, share, constant(grad, 0.0));
}

Value DerivativeBuilder::softmaxBack(Operation *op, Value grad, Values) {
  int64_t dim = isa<SoftmaxOp>(op) ? cast<SoftmaxOp>(op).getDim() : cast<SafeSoftmaxOp>(op).getDim();
  Value y = op->getResult(0);
  return b.create<SoftmaxBackwardOp>(loc, y.getType(), grad, y, b.getI64IntegerAttr(dim)).getResult();
}

Value DerivativeBuilder::logSoftmaxBack(Operation *op, Value grad, Values) {
  int64_t dim = cast<LogSoftmaxOp>(op).getDim();
  Value y = op->getResult(0);
  Type et = tensorType(y).getElementType();
  // grad - exp(y) * sum(grad, dim): in float32 for halves, rounded once.
  Value g = up(grad), e = unary("exp", up(y));
  Value s = expandLike(sum(g, {dim}, true), g);
  return convert(sub(g, mul(e, s)), et);
}

//===----------------------------------------------------------------------===//
// Activations with attributes (computed in float32 for halves)
//===----------------------------------------------------------------------===//

Value DerivativeBuilder::geluBack(Operation *op, Value grad, Values) {
  auto gelu = cast<GeluOp>(op);
  Type et = tensorType(grad).getElementType();
  Value x = up(gelu.getInput()), g = up(grad);
  Value d;
  if (gelu.getApproximate() == "tanh") {
    const double beta = M_SQRT2 * M_2_SQRTPI * 0.5, kappa = 0.044715;
    Value x2 = mul(x, x);
    Value inner = mulScalar(add(x, mulScalar(mul(x2, x), kappa)), beta);
    Value t = unary("tanh", inner);
    Value left = mulScalar(x, 0.5);
    Value right = add(t, constant(x, 1.0));
    Value dleft = mulScalar(right, 0.5);
    Value dright = mul(mul(left, sub(constant(x, 1.0), mul(t, t))),
                       mulScalar(add(constant(x, 1.0), mulScalar(x2, 3 * kappa)), beta));
    d = add(dleft, dright);
  } else {
    Value cdf = mulScalar(add(unary("erf", mulScalar(x, M_SQRT1_2)), constant(x, 1.0)), 0.5);
    Value pdf = mulScalar(unary("exp", mulScalar(mul(x, x), -0.5)), M_2_SQRTPI * M_SQRT1_2 * 0.5);
    d = add(cdf, mul(x, pdf));
  }
  return convert(mul(g, d), et);
}

Value DerivativeBuilder::leakyReluBack(Operation *op, Value grad, Values) {
  auto l = cast<LeakyReluOp>(op);
  return where(compare("gt", l.getInput(), constant(grad, 0.0)), grad,
               mulScalar(grad, l.getNegativeSlope().convertToDouble()));
}

Value DerivativeBuilder::eluBack(Operation *op, Value grad, Values) {
  auto e = cast<EluOp>(op);
  double alpha = e.getAlpha().convertToDouble();
  // alpha * exp(x) = result + alpha where x <= 0
  return where(compare("gt", e.getInput(), constant(grad, 0.0)), grad,
               mul(grad, add(op->getResult(0), constant(grad, alpha))));
}

Value DerivativeBuilder::softplusBack(Operation *op, Value grad, Values) {
  auto s = cast<SoftplusOp>(op);
  Type et = tensorType(grad).getElementType();
  Value bx = mulScalar(up(s.getInput()), s.getBeta().convertToDouble());
  Value z = unary("exp", bx);
  Value d = div(z, add(z, constant(z, 1.0)));
  Value g = up(grad);
  return convert(where(compare("gt", bx, constant(bx, s.getThreshold().convertToDouble())), g, mul(g, d)), et);
}

Value DerivativeBuilder::hardtanhBack(Operation *op, Value grad, Values) {
  auto h = cast<HardtanhOp>(op);
  Value x = h.getInput();
  Value lo = compare("le", x, constant(grad, h.getMinVal().convertToDouble()));
  Value hi = compare("ge", x, constant(grad, h.getMaxVal().convertToDouble()));
  Value out = build<LogicalOrOp>("broadcast", "free", {lo, hi});
  return where(out, constant(grad, 0.0), grad);
}

Value DerivativeBuilder::thresholdBack(Operation *op, Value grad, Values) {
  auto t = cast<ThresholdOp>(op);
  return where(compare("le", t.getInput(), constant(grad, t.getThreshold().convertToDouble())),
               constant(grad, 0.0), grad);
}

//===----------------------------------------------------------------------===//
// GEMMs: the backward is two GEMMs (library calls as the forward's)
//===----------------------------------------------------------------------===//

Value DerivativeBuilder::matmulLhsBack(Operation *op, Value grad, Values) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Type et = tensorType(grad).getElementType();
  return convert(matmul(grad, convert(transposeLast2(rhs), et)), tensorType(lhs).getElementType());
}

Value DerivativeBuilder::matmulRhsBack(Operation *op, Value grad, Values) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Type et = tensorType(grad).getElementType();
  return convert(matmul(convert(transposeLast2(lhs), et), grad), tensorType(rhs).getElementType());
}

Value DerivativeBuilder::addmmInputBack(Operation *op, Value grad, Values) {
  auto a = cast<AddmmOp>(op);
  Value input = a.getInput();
  return sumTo(op, grad, {input, mulScalar(grad, a.getBeta().convertToDouble())});
}

Value DerivativeBuilder::addmmLhsBack(Operation *op, Value grad, Values) {
  auto a = cast<AddmmOp>(op);
  return mulScalar(matmul(grad, transposeLast2(a.getRhs())), a.getAlpha().convertToDouble());
}

Value DerivativeBuilder::addmmRhsBack(Operation *op, Value grad, Values) {
  auto a = cast<AddmmOp>(op);
  return mulScalar(matmul(transposeLast2(a.getLhs()), grad), a.getAlpha().convertToDouble());
}

//===----------------------------------------------------------------------===//
// Indexing, random, losses
//===----------------------------------------------------------------------===//

/// An embedding's gather (dim 0, whole rows: the index a column [N, 1, ...] expanded): its backward as
/// one GEMM, onehot[V, N] @ grad[N, F], rather than a scatter (whose lowering compares every position
/// with every index); where that one-hot matrix would be large (an LM's vocabulary times its tokens),
/// ATen's embedding backward (graph.embedding_backward), whose work is that of the gradient's rows.
constexpr int64_t kOneHotMaxElements = int64_t(1) << 22;
constexpr int64_t kOneHotDynamicRows = 256;
static bool isRowGather(GatherOp g) {
  auto ex = g.getIndex().getDefiningOp<ExpandOp>();
  if (!ex || g.getDim() != 0)
    return false;
  RankedTensorType in = tensorType(g.getInput()), it = tensorType(g.getIndex()), col = tensorType(ex.getInput());
  if (col.getRank() != it.getRank() || in.getRank() != it.getRank())
    return false;
  for (int64_t d = 1; d < it.getRank(); ++d)
    if (col.getDimSize(d) != 1 || it.getDimSize(d) != in.getDimSize(d))
      return false;
  return true;
}

Value DerivativeBuilder::gatherBack(Operation *op, Value grad, Values) {
  auto g = cast<GatherOp>(op);
  RankedTensorType in = tensorType(g.getInput());
  Type et = tensorType(grad).getElementType();
  if (isRowGather(g)) {
    Value idx = g.getIndex().getDefiningOp<ExpandOp>().getInput();
    RankedTensorType it = tensorType(idx);
    int64_t n = it.getDimSize(0), v = in.getDimSize(0), f = in.getNumElements() / std::max<int64_t>(v, 1);
    Type ie = it.getElementType();
    unsigned bits = ie.getIntOrFloatBitWidth();
    SmallVector<Value> nSize;
    if (ShapedType::isDynamic(n))
      nSize.push_back(dimOf(idx, 0));
    Value row = reshape(idx, {1, n}, nSize);
    // negative indices count from the end, as the gather reads them
    auto scalar = RankedTensorType::get({}, ie);
    Value zero = b.create<ConstantOp>(loc, scalar, DenseElementsAttr::get(scalar, APInt(bits, 0))).getResult();
    Value size = b.create<ConstantOp>(loc, scalar, DenseElementsAttr::get(scalar, APInt(bits, v))).getResult();
    row = where(compare("lt", row, zero), build<AddOp>("broadcast", "promote", {row, size}), row);
    // (a `?` token count weighs kOneHotDynamicRows: a vocabulary of 16K rows or more takes the library)
    int64_t rowsWeight = ShapedType::isDynamic(n) ? kOneHotDynamicRows : n;
    if (!ShapedType::isDynamic(f) && v * rowsWeight > kOneHotMaxElements && in.hasStaticShape()) {
      auto matrix = RankedTensorType::get({v, f}, in.getElementType());
      Value rows = convert(reshape(grad, {n, f}, nSize), in.getElementType());
      Value r = b.create<EmbeddingBackwardOp>(loc, matrix, rows, reshape(g.getInput(), {v, f}),
                                              reshape(row, {n}, nSize))
                    .getResult();
      return reshape(r, in.getShape());
    }
    auto iotaType = RankedTensorType::get({v, 1}, ie);
    SmallVector<APInt> ids;
    for (int64_t k = 0; k < v; ++k)
      ids.push_back(APInt(bits, k));
    Value iota = b.create<ConstantOp>(loc, iotaType, DenseElementsAttr::get(iotaType, ids)).getResult();
    Value onehot = convert(compare("eq", iota, row), et);  // [V, N]
    Value r = matmul(onehot, reshape(grad, {n, f}, nSize));
    return convert(reshape(r, in.getShape()), in.getElementType());
  }
  Value base = zeros(in.clone(et), g.getInput());
  Value r = b.create<ScatterOp>(loc, base.getType(), base, g.getIndex(), grad,
                                ScatterReduceAttr::get(b.getContext(), ScatterReduce::sum),
                                b.getI64IntegerAttr(g.getDim()), b.getUnitAttr(), b.getUnitAttr())
                .getResult();
  return convert(r, in.getElementType());
}

Value DerivativeBuilder::dropoutBack(Operation *op, Value grad, Values) {
  // The mask is a function of (seed, offset): the same draws scale the cotangent.
  Operation *replay = b.clone(*op);
  replay->setOperand(0, grad);
  return replay->getResult(0);
}

Value DerivativeBuilder::nllLossBack(Operation *op, Value grad, Values) {
  auto n = cast<NllLossOp>(op);
  RankedTensorType in = tensorType(n.getInput()), tt = tensorType(n.getTarget());
  int64_t classDim = in.getRank() == 1 ? 0 : 1, classes = in.getDimSize(classDim);
  // One-hot of the targets along the class dim: [N, C, d...] (or [C]).
  SmallVector<int64_t> tshape(tt.getShape());
  tshape.insert(tshape.begin() + classDim, 1);
  SmallVector<Value> tsizes;
  for (int64_t d = 0; d < tt.getRank(); ++d)
    if (tt.isDynamicDim(d))
      tsizes.push_back(dimOf(n.getTarget(), d));
  Value target = reshape(n.getTarget(), tshape, tsizes);
  SmallVector<int64_t> cshape(in.getRank(), 1);
  cshape[classDim] = classes;
  // (an iota, not a constant: an LM's 50,257 class ids would be a literal of that length)
  Value iota = b.create<IotaOp>(loc, RankedTensorType::get({classes}, tt.getElementType()), ValueRange{}).getResult();
  Value classIds = reshape(iota, cshape);
  Value hit = compare("eq", target, classIds);
  auto ignoreType = RankedTensorType::get({}, tt.getElementType());
  Value ignore = b.create<ConstantOp>(loc, ignoreType,
                                      DenseElementsAttr::get(ignoreType, APInt(tt.getElementType().getIntOrFloatBitWidth(),
                                                                               n.getIgnoreIndex(), true)))
                     .getResult();
  Value kept = compare("ne", target, ignore);
  Value sel = build<LogicalAndOp>("broadcast", "free", {hit, kept});
  Value w = reshape(n.getWeight(), cshape);
  Value weighted = where(sel, expandLike(w, n.getInput()), constant(n.getInput(), 0.0));
  Value g = grad;
  if (n.getReduction() == LossReduction::none)
    g = reshape(grad, tshape, tsizes);
  Value d = mul(weighted, g);
  if (n.getReduction() == LossReduction::mean) {
    // the summed weights of the kept targets (the forward's denominator): w gathered at each target (an
    // ignored one reads class 0 and counts 0), summed over the targets, not the one-hot over every class
    Value keptFlat = compare("ne", n.getTarget(), ignore);
    Value flat = where(keptFlat, n.getTarget(), zeros(RankedTensorType::get({}, tt.getElementType()), n.getTarget()));
    if (tt.getRank() != 1) {
      int64_t known = 1;
      Value count;
      for (int64_t d = 0; d < tt.getRank(); ++d) {
        if (!tt.isDynamicDim(d)) {
          known *= tt.getDimSize(d);
          continue;
        }
        Value size = dimOf(n.getTarget(), d);
        count = count ? b.create<arith::MulIOp>(loc, count, size).getResult() : size;
      }
      if (count && known != 1)
        count = b.create<arith::MulIOp>(loc, count, b.create<arith::ConstantIndexOp>(loc, known)).getResult();
      SmallVector<int64_t> shape{count ? ShapedType::kDynamic : known};
      SmallVector<Value> sizes;
      if (count)
        sizes.push_back(count);
      flat = reshape(flat, shape, sizes);
      keptFlat = reshape(keptFlat, shape, sizes);
    }
    RankedTensorType ft = tensorType(flat);
    Value wt = b.create<GatherOp>(loc, ft.clone(tensorType(n.getWeight()).getElementType()), n.getWeight(),
                                  b.getI64IntegerAttr(0), flat)
                   .getResult();
    Value total = sum(where(keptFlat, wt, constant(wt, 0.0)), {0}, false);
    d = div(d, total);
  }
  return unary("neg", d);
}

/// d loss / d input and d loss / d target per element of the pointwise losses (eager's backward formulas);
/// null where dyn has no rule for the target's gradient.
void DerivativeBuilder::pointwiseLossBack(Operation *op, Value grad, SmallVectorImpl<Value> &grads) {
  Value x = op->getOperand(0), t = op->getOperand(1);
  RankedTensorType xt = tensorType(x);
  Value d = sub(x, t), dx, dt;
  Value zero = constant(x, 0.0);
  auto sign = [&](Value v) { return build<SignOp>("elementwise", "keeps_element", {v}); };
  if (isa<MseLossOp>(op)) {
    dx = mulScalar(d, 2.0);
  } else if (isa<L1LossOp>(op)) {
    dx = sign(d);
  } else if (auto s = dyn_cast<SmoothL1LossOp>(op)) {
    double beta = s.getBeta().convertToDouble();
    dx = beta == 0.0 ? sign(d)
                     : where(compare("lt", build<AbsOp>("elementwise", "promote_numeric", {d}), constant(x, beta)),
                             mulScalar(d, 1.0 / beta), sign(d));
  } else if (auto h = dyn_cast<HuberLossOp>(op)) {
    double delta = h.getDelta().convertToDouble();
    dx = where(compare("lt", build<AbsOp>("elementwise", "promote_numeric", {d}), constant(x, delta)), d,
               mulScalar(sign(d), delta));
  } else if (isa<BinaryCrossEntropyWithLogitsOp>(op)) {
    dx = sub(unary("sigmoid", x), t);
    dt = unary("neg", x);
  } else if (isa<BinaryCrossEntropyOp>(op)) {
    Value denom = build<MaximumOp>("broadcast", "promote", {mul(sub(constant(x, 1.0), x), x), constant(x, 1e-12)});
    dx = div(d, denom);
  } else if (auto k = dyn_cast<KlDivOp>(op)) {
    if (k.getLogTarget()) {
      Value et = unary("exp", t);
      dx = unary("neg", et);
      dt = mul(et, add(sub(t, x), constant(x, 1.0)));
    } else {
      dx = unary("neg", t);
      Value logt = build<LogOp>("elementwise", "float", {t});
      dt = where(compare("gt", t, zero), add(sub(logt, x), constant(x, 1.0)), zero);
    }
  } else if (isa<SoftMarginLossOp>(op)) {
    Value s = unary("sigmoid", unary("neg", mul(t, x)));
    dx = unary("neg", mul(t, s));
    dt = unary("neg", mul(x, s));
  } else {
    if (wants(op, 0))
      notDifferentiable(op, 0);
    return;
  }
  if (!isa<MseLossOp, L1LossOp, SmoothL1LossOp, HuberLossOp>(op) && !dt && wants(op, 1)) {
    notDifferentiable(op, 1);
    return;
  }
  if (!dt)
    dt = unary("neg", dx);
  // The cotangent per element: as is (none), or the 0-d one broadcast (sum), divided by the count (mean).
  auto reduction = cast<LossReductionAttr>(op->getAttr("reduction")).getValue();
  Value g = grad;
  if (reduction == LossReduction::mean && xt.hasStaticShape()) {
    g = mulScalar(grad, 1.0 / static_cast<double>(std::max<int64_t>(1, xt.getNumElements())));
  } else if (reduction == LossReduction::mean) {
    SmallVector<int64_t> all(xt.getRank());
    std::iota(all.begin(), all.end(), 0);
    g = div(grad, count(x, all, grad));
  }
  if (wants(op, 0))
    grads[0] = mul(g, dx);
  if (wants(op, 1))
    grads[1] = mul(g, dt);
}

} // namespace dyn::graph
