//===- GraphDialect.cpp - graph dialect, verifiers and folders -----------===//
#include "dyn/Dialect/Graph/IR/GraphDialect.h"
#include "dyn/Dialect/Common/GatherVerifier.h"
#include "dyn/Dialect/Common/WindowShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace dyn::graph;

#include "dyn/Dialect/Graph/IR/GraphDialect.cpp.inc"
#include "dyn/Dialect/Graph/IR/GraphEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dyn/Dialect/Graph/IR/GraphAttrs.cpp.inc"

void GraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dyn/Dialect/Graph/IR/GraphOps.cpp.inc"
      >();
}

Operation *GraphDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

//===----------------------------------------------------------------------===//
// Shared verifiers
//===----------------------------------------------------------------------===//

static RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

template <typename OpT>
static LogicalResult verifyDimInRange(OpT op, int64_t dim) {
  int64_t rank = tensorType(op->getOperand(0)).getRank();
  if (dim < 0 || dim >= std::max<int64_t>(rank, 1))
    return op.emitOpError() << "dim " << dim << " is out of range for rank " << rank;
  return success();
}

template <typename OpT>
static LogicalResult verifyReduction(OpT op) {
  RankedTensorType in = tensorType(op.getInput());
  RankedTensorType out = tensorType(op.getResult());
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t d : op.getDims()) {
    if (d < 0 || d >= in.getRank())
      return op.emitOpError() << "reduction dim " << d << " is out of range for rank "
                              << in.getRank();
    if (!seen.insert(d).second)
      return op.emitOpError() << "reduction dim " << d << " is repeated";
  }
  SmallVector<int64_t> expected;
  for (int64_t i = 0; i < in.getRank(); ++i) {
    if (!seen.contains(i))
      expected.push_back(in.getDimSize(i));
    else if (op.getKeepdim())
      expected.push_back(1);
  }
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return op.emitOpError() << "result shape does not match the reduction of the input over dims";
  return success();
}

//===----------------------------------------------------------------------===//
// Op verifiers and folders
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult ConvertOp::fold(FoldAdaptor) {
  return getInput().getType() == getType() ? getInput() : OpFoldResult();
}

static std::string dimString(int64_t d) { return ShapedType::isDynamic(d) ? "?" : std::to_string(d); }

/// The operand and result shapes of a (batched) matrix product: [batch..., M,
/// K] times [K, N] or [batch..., K, N] (equal batch dims) is [batch..., M, N]
/// (graph.matmul; graph.addmm takes 2-D or 3-D operands of one rank). Dims
/// that meet (K, batch) are equal: both `?` or one constant, as no runtime
/// check compares them.
static LogicalResult verifyProduct(Operation *op, Value lhs, Value rhs, Value result, bool sameRank) {
  ArrayRef<int64_t> a = tensorType(lhs).getShape(), b = tensorType(rhs).getShape(),
                    c = tensorType(result).getShape();
  if (sameRank ? a.size() != b.size() || (a.size() != 2 && a.size() != 3)
               : a.size() < 2 || (b.size() != 2 && b.size() != a.size()))
    return op->emitOpError(sameRank ? "expects two 2-D or two 3-D operands"
                                    : "expects [batch..., M, K] and [K, N] or [batch..., K, N] operands");
  size_t r = a.size(), rb = b.size();
  if (a[r - 1] != b[rb - 2])
    return op->emitOpError() << "contracting dims differ: " << dimString(a[r - 1]) << " vs "
                             << dimString(b[rb - 2]);
  if (rb == r && a.drop_back(2) != b.drop_back(2))
    return op->emitOpError("batch dims differ");
  SmallVector<int64_t> expected(a.begin(), a.end() - 1);
  expected.push_back(b[rb - 1]);
  if (c != ArrayRef<int64_t>(expected))
    return op->emitOpError("result shape must be [batch..., M, N]");
  return success();
}

LogicalResult MatmulOp::verify() { return verifyProduct(*this, getLhs(), getRhs(), getResult(), false); }

LogicalResult AddmmOp::verify() {
  if (failed(verifyProduct(*this, getLhs(), getRhs(), getResult(), true)))
    return failure();
  ArrayRef<int64_t> c = tensorType(getResult()).getShape(), x = tensorType(getInput()).getShape();
  // input broadcasts to the result (numpy rules, right-aligned; a `?` only to the same `?`)
  if (x.size() > c.size())
    return emitOpError("input has more dims than the result");
  for (size_t i = 0; i < x.size(); ++i)
    if (x[x.size() - 1 - i] != 1 && x[x.size() - 1 - i] != c[c.size() - 1 - i])
      return emitOpError("input does not broadcast to the result");
  return success();
}

/// The windows of im2col/col2im: 2 sizes per attribute, kernel, dilation and stride positive, padding
/// not negative; the number of windows along each dim (0 if none fits).
static FailureOr<SmallVector<int64_t>> windowCounts(Operation *op, ArrayRef<int64_t> in, ArrayRef<int64_t> k,
                                                   ArrayRef<int64_t> d, ArrayRef<int64_t> p,
                                                   ArrayRef<int64_t> s) {
  if (in.size() != 2 || k.size() != 2 || d.size() != 2 || p.size() != 2 || s.size() != 2)
    return op->emitOpError("takes 2 spatial sizes and 2 of each window attribute");
  SmallVector<int64_t> counts;
  for (int i = 0; i < 2; ++i) {
    if (k[i] < 1 || d[i] < 1 || s[i] < 1 || p[i] < 0)
      return op->emitOpError("needs positive kernel, dilation and stride and no negative padding");
    int64_t span = in[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1;
    if (span < 0)
      return op->emitOpError("has a window larger than the padded input");
    counts.push_back(span / s[i] + 1);
  }
  return counts;
}

LogicalResult Im2colOp::verify() {
  RankedTensorType x = tensorType(getInput());
  if (x.getRank() != 4)
    return emitOpError("takes a batched [N, C, H, W] input");
  auto counts = windowCounts(*this, x.getShape().take_back(2), getKernel(), getDilation(), getPadding(),
                             getStride());
  if (failed(counts))
    return failure();
  ArrayRef<int64_t> k = getKernel();
  if (getType().getShape() !=
      ArrayRef<int64_t>{x.getDimSize(0), x.getDimSize(1) * k[0] * k[1], (*counts)[0] * (*counts)[1]})
    return emitOpError("result shape must be [N, C*kh*kw, windows]");
  return success();
}

LogicalResult Col2imOp::verify() {
  RankedTensorType x = tensorType(getInput());
  ArrayRef<int64_t> k = getKernel(), out = getOutputSize();
  if (x.getRank() != 3 || k.size() != 2)
    return emitOpError("takes batched [N, C*kh*kw, windows] columns");
  auto counts = windowCounts(*this, out, k, getDilation(), getPadding(), getStride());
  if (failed(counts))
    return failure();
  if (x.getDimSize(1) % (k[0] * k[1]) || x.getDimSize(2) != (*counts)[0] * (*counts)[1])
    return emitOpError("input must be [N, C*kh*kw, windows]");
  if (getType().getShape() != ArrayRef<int64_t>{x.getDimSize(0), x.getDimSize(1) / (k[0] * k[1]), out[0], out[1]})
    return emitOpError("result shape must be [N, C, *output_size]");
  return success();
}

/// One recurrent layer: input [T, B, I] ([B, T, I] batch_first), hidden states [1, B, H], w_ih
/// [G*H, I], w_hh [G*H, H], biases [G*H] (G gates: 4 LSTM, 3 GRU, 1 RNN); output [.., H] as the input.
static LogicalResult verifyRecurrent(Operation *op, Value input, ValueRange states, Value wIh, Value wHh,
                                     Value bIh, Value bHh, bool batchFirst, int64_t gates, Value output,
                                     ValueRange finals) {
  ArrayRef<int64_t> x = cast<RankedTensorType>(input.getType()).getShape();
  ArrayRef<int64_t> wi = cast<RankedTensorType>(wIh.getType()).getShape();
  if (x.size() != 3 || wi.size() != 2)
    return op->emitOpError("takes a 3-d input and 2-d weights");
  int64_t b = batchFirst ? x[0] : x[1], t = batchFirst ? x[1] : x[0], h = wi[0] / gates;
  if (wi[0] != gates * h || wi[1] != x[2] ||
      cast<RankedTensorType>(wHh.getType()).getShape() != ArrayRef<int64_t>{gates * h, h} ||
      cast<RankedTensorType>(bIh.getType()).getShape() != ArrayRef<int64_t>{gates * h} ||
      cast<RankedTensorType>(bHh.getType()).getShape() != ArrayRef<int64_t>{gates * h})
    return op->emitOpError() << "weights must be [" << gates << "*H, I], [" << gates << "*H, H] and biases ["
                             << gates << "*H]";
  for (Value v : llvm::concat<Value>(states, finals))
    if (cast<RankedTensorType>(v.getType()).getShape() != ArrayRef<int64_t>{1, b, h})
      return op->emitOpError("hidden states must be [1, B, H]");
  SmallVector<int64_t> out{batchFirst ? b : t, batchFirst ? t : b, h};
  if (cast<RankedTensorType>(output.getType()).getShape() != ArrayRef<int64_t>(out))
    return op->emitOpError("output must be the input's [T, B] (or [B, T]) by H");
  return success();
}

LogicalResult LstmOp::verify() {
  return verifyRecurrent(*this, getInput(), {getH0(), getC0()}, getWIh(), getWHh(), getBIh(), getBHh(),
                         getBatchFirst(), 4, getOutput(), {getHN(), getCN()});
}

LogicalResult GruOp::verify() {
  return verifyRecurrent(*this, getInput(), {getH0()}, getWIh(), getWHh(), getBIh(), getBHh(), getBatchFirst(), 3,
                         getOutput(), {getHN()});
}

LogicalResult RnnOp::verify() {
  return verifyRecurrent(*this, getInput(), {getH0()}, getWIh(), getWHh(), getBIh(), getBHh(), getBatchFirst(), 1,
                         getOutput(), {getHN()});
}

LogicalResult GroupedMmOp::verify() {
  RankedTensorType x = tensorType(getInput()), w = tensorType(getWeight()), offs = tensorType(getOffs());
  if (x.getRank() != 2 || w.getRank() != 3 || offs.getRank() != 1)
    return emitOpError("takes a matrix, a stack of matrices and a vector of offsets");
  if (offs.getDimSize(0) != w.getDimSize(0))
    return emitOpError("needs one offset per matrix of weight");
  if (x.getDimSize(1) != w.getDimSize(1))
    return emitOpError("input's columns must be weight's rows");
  if (w.getElementType() != x.getElementType() || getType().getElementType() != x.getElementType())
    return emitOpError("input, weight and result must have one element type");
  if (getType().getShape() != ArrayRef<int64_t>{x.getDimSize(0), w.getDimSize(2)})
    return emitOpError("result shape must be [input rows, weight columns]");
  return success();
}

LogicalResult GluOp::verify() {
  ArrayRef<int64_t> in = tensorType(getInput()).getShape();
  int64_t rank = in.size(), dim = (int64_t)getDim();
  if (dim < -rank || dim >= rank || rank == 0)
    return emitOpError() << "dim " << dim << " is out of range for rank " << rank;
  dim = dim < 0 ? dim + rank : dim;
  if (in[dim] % 2)
    return emitOpError("halves a dim of odd size");
  SmallVector<int64_t> expected(in);
  expected[dim] /= 2;
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape must be the input's with dim halved");
  return success();
}

LogicalResult PreluOp::verify() {
  RankedTensorType in = tensorType(getInput());
  int64_t n = tensorType(getWeight()).getNumElements();
  int64_t channels = in.getRank() == 0 ? 1 : in.getDimSize(in.getRank() >= 2 ? 1 : 0);
  if (tensorType(getWeight()).getRank() > 1 || (n != 1 && n != channels))
    return emitOpError("weight must be one value or one per channel");
  if (getType().getShape() != in.getShape())
    return emitOpError("result shape must be the input's");
  return success();
}

LogicalResult VecdotOp::verify() {
  ArrayRef<int64_t> in = tensorType(getLhs()).getShape();
  int64_t dim = (int64_t)getDim();
  if (dim < 0 || dim >= (int64_t)in.size())
    return emitOpError() << "dim " << dim << " is out of range for rank " << in.size();
  SmallVector<int64_t> expected(in);
  expected.erase(expected.begin() + dim);
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape must be the operands' without dim");
  return success();
}

LogicalResult TraceOp::verify() {
  if (tensorType(getInput()).getRank() != 2 || getType().getRank() != 0)
    return emitOpError("takes a matrix to a 0-d result");
  return success();
}

/// Where each dynamic result dim of a reshape without `sizes` takes its size:
/// the input dim at the same position from the front, else from the back, if
/// dynamic there and not taken by an earlier result dim; -1 for the one left (element count / the other dims).
/// Fails where more than one is left.
FailureOr<SmallVector<int64_t>> dyn::graph::reshapeSizeSources(RankedTensorType in, RankedTensorType out) {
  SmallVector<int64_t> sources;
  llvm::SmallSet<int64_t, 4> used; // each input dim sizes one result dim
  int64_t left = 0;
  for (int64_t d = 0, r = out.getRank(); d < r; ++d) {
    if (!out.isDynamicDim(d))
      continue;
    int64_t back = in.getRank() - (r - d);
    if (d < in.getRank() && in.isDynamicDim(d) && used.insert(d).second)
      sources.push_back(d);
    else if (back >= 0 && in.isDynamicDim(back) && used.insert(back).second)
      sources.push_back(back);
    else if (left++ == 0)
      sources.push_back(-1);
    else
      return failure();
  }
  return sources;
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = tensorType(getInput()), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("reshape cannot change the element type");
  if (in.hasStaticShape() && out.hasStaticShape()) {
    if (in.getNumElements() != out.getNumElements())
      return emitOpError("input and result have different element counts");
    if (!getSizes().empty())
      return emitOpError("takes sizes only for dynamic result dims");
    return success();
  }
  if (out.hasStaticShape())
    return emitOpError("a dynamic input needs a dynamic result dim");
  if (!getSizes().empty()) {
    if ((int64_t)getSizes().size() != out.getNumDynamicDims())
      return emitOpError() << "needs one size per dynamic result dim (" << out.getNumDynamicDims()
                           << "), got " << getSizes().size();
    return success();
  }
  if (failed(reshapeSizeSources(in, out)))
    return emitOpError("cannot derive the dynamic result dims from the input: give their sizes");
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  // explicit sizes may differ from the input's
  return getInput().getType() == getType() && getSizes().empty() ? getInput() : OpFoldResult();
}

namespace {
/// reshape(reshape(x)) -> reshape(x): only the final shape matters.
struct FoldReshapeChain : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<ReshapeOp>();
    // a dynamic dim derived from the intermediate shape may not be derivable from the first
    if (!producer || (!op.getType().hasStaticShape() && op.getSizes().empty()))
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), producer.getInput(), op.getSizes());
    return success();
  }
};
} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<FoldReshapeChain>(context);
}

LogicalResult PermuteOp::verify() {
  ArrayRef<int64_t> in = tensorType(getInput()).getShape();
  ArrayRef<int64_t> out = getType().getShape();
  ArrayRef<int64_t> dims = getDims();
  if (dims.size() != in.size() || out.size() != in.size())
    return emitOpError("dims must name every input dim once");
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t d : dims)
    if (d < 0 || d >= (int64_t)in.size() || !seen.insert(d).second)
      return emitOpError("dims must be a permutation of the input dims");
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (out[i] != in[d])
      return emitOpError() << "result dim " << i << " must have size " << in[d];
  }
  return success();
}

OpFoldResult PermuteOp::fold(FoldAdaptor) {
  for (auto [i, d] : llvm::enumerate(getDims()))
    if ((int64_t)i != d)
      return {};
  return getInput();
}

LogicalResult ExpandOp::verify() {
  ArrayRef<int64_t> in = tensorType(getInput()).getShape();
  ArrayRef<int64_t> out = getType().getShape();
  if (in.size() > out.size())
    return emitOpError("cannot expand to a lower rank");
  size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] != 1 && in[i] != out[offset + i])
      return emitOpError() << "input dim " << i << " of size " << dimString(in[i])
                           << " cannot be expanded to " << dimString(out[offset + i]);
  int64_t dynamic = getType().getNumDynamicDims();
  if (!getSizes().empty() && (int64_t)getSizes().size() != dynamic)
    return emitOpError() << "needs one size per dynamic result dim (" << dynamic << "), got "
                         << getSizes().size();
  if (getSizes().empty())
    for (size_t i = 0; i < out.size(); ++i)
      if (ShapedType::isDynamic(out[i]) && (i < offset || !ShapedType::isDynamic(in[i - offset])))
        return emitOpError() << "result dim " << i << " is dynamic but the input's is not: give the sizes";
  return success();
}

OpFoldResult ExpandOp::fold(FoldAdaptor) {
  return getInput().getType() == getType() && getSizes().empty() ? getInput() : OpFoldResult();
}

LogicalResult GatherOp::verify() { return dyn::verifyGather(*this); }

LogicalResult DimOp::verify() {
  int64_t rank = tensorType(getInput()).getRank();
  if ((int64_t)getDim() < 0 || (int64_t)getDim() >= rank)
    return emitOpError() << "dim " << getDim() << " is out of range for rank " << rank;
  return success();
}

LogicalResult SliceOp::verify() {
  RankedTensorType in = tensorType(getInput());
  int64_t dim = getDim(), start = getStart(), end = getEnd(), step = getStep();
  if (dim < 0 || dim >= in.getRank())
    return emitOpError() << "dim " << dim << " is out of range for rank " << in.getRank();
  if (step < 1)
    return emitOpError("step must be positive");
  // A `?` dim sliced to static bounds (T5's first label, `ids[:, :1]`): the capture guards the runtime
  // size to hold them, and the result's size is static.
  if (in.isDynamicDim(dim)) {
    if (start < 0 || end < start || getType().isDynamicDim(dim))
      return emitOpError() << "slices dynamic dim " << dim << " to bounds that are not static";
  } else if (start < 0 || end < start || end > in.getDimSize(dim))
    return emitOpError() << "slice [" << start << ", " << end << ") is out of bounds for size "
                         << in.getDimSize(dim);
  SmallVector<int64_t> expected(in.getShape());
  expected[dim] = (end - start + step - 1) / step;
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape does not match the slice");
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  return getInput().getType() == getType() && getStart() == 0 && getStep() == 1
             ? getInput()
             : OpFoldResult();
}

/// The result's `dim` is the sum of the inputs' (`?` when any of theirs is);
/// the other dims are the result's.
LogicalResult CatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  RankedTensorType first = tensorType(getInputs().front());
  int64_t dim = getDim(), total = 0;
  if (dim < 0 || dim >= first.getRank())
    return emitOpError() << "dim " << dim << " is out of range for rank " << first.getRank();
  bool dynamic = false;
  for (Value v : getInputs()) {
    RankedTensorType t = tensorType(v);
    if (t.getRank() != first.getRank() || t.getElementType() != getType().getElementType())
      return emitOpError("inputs must have the result's rank and element type");
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (i != dim && t.getDimSize(i) != getType().getDimSize(i))
        return emitOpError() << "input dim " << i << " differs from the result";
    dynamic |= t.isDynamicDim(dim);
    total += t.isDynamicDim(dim) ? 0 : t.getDimSize(dim);
  }
  if (dynamic != getType().isDynamicDim(dim))
    return emitOpError() << "result dim " << dim << " must be dynamic exactly where an input's is";
  if (!dynamic && total != getType().getDimSize(dim))
    return emitOpError("result size along dim must be the sum of the inputs'");
  return success();
}

LogicalResult IotaOp::verify() {
  RankedTensorType t = getType();
  if (t.getRank() != 1)
    return emitOpError("result must be 1-D");
  if ((int64_t)getSizes().size() != t.getNumDynamicDims())
    return emitOpError() << "needs one size per dynamic result dim (" << t.getNumDynamicDims() << "), got "
                         << getSizes().size();
  return success();
}

LogicalResult DynamicSliceOp::verify() {
  RankedTensorType in = tensorType(getInput()), out = getType();
  int64_t dim = getDim();
  if (dim < 0 || dim >= in.getRank())
    return emitOpError() << "dim " << dim << " is out of range for rank " << in.getRank();
  if (out.getRank() != in.getRank())
    return emitOpError("result must have the input's rank");
  // A static result dim is the slice's length whatever its bounds (end - start, as the producer knows).
  if (!out.isDynamicDim(dim) && !in.isDynamicDim(dim) && out.getDimSize(dim) > in.getDimSize(dim))
    return emitOpError() << "result dim " << dim << " (" << out.getDimSize(dim) << ") is longer than the input's ("
                         << in.getDimSize(dim) << ")";
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (i != dim && in.getDimSize(i) != out.getDimSize(i))
      return emitOpError() << "result dim " << i << " (" << dimString(out.getDimSize(i))
                           << ") differs from the input's (" << dimString(in.getDimSize(i)) << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution, pooling, padding, attention
//===----------------------------------------------------------------------===//

static LogicalResult checkShape(Operation *op, const std::optional<SmallVector<int64_t>> &expected,
                                const std::string &error, RankedTensorType result) {
  return dyn::checkResultShape(op, expected, error, result.getShape());
}

LogicalResult ConvolutionOp::verify() {
  if (failed(dyn::checkSameElementType(*this)))
    return failure();
  ConvolutionParams p{getStride(), getPadding(), getDilation(),
                      getOutputPadding().value_or(ArrayRef<int64_t>()), (int64_t)getGroups(),
                      getTransposed()};
  std::string error;
  auto shape = convolutionResultShape(tensorType(getInput()).getShape(),
                                      tensorType(getWeight()).getShape(), p, error);
  if (shape && getBias()) {
    ArrayRef<int64_t> bias = tensorType(getBias()).getShape();
    if (bias.size() != 1 || bias[0] != (*shape)[1])
      return emitOpError("bias must be [C_out]");
  }
  return checkShape(*this, shape, error, getType());
}

LogicalResult MaxPoolOp::verify() {
  if (failed(dyn::checkSameElementType(*this)))
    return failure();
  std::string error;
  auto shape = poolResultShape(tensorType(getInput()).getShape(),
                               {getKernel(), getStride(), getPadding(), getDilation(), getCeilMode()},
                               error);
  return checkShape(*this, shape, error, getType());
}

LogicalResult AvgPoolOp::verify() {
  if (failed(dyn::checkSameElementType(*this)))
    return failure();
  if (getDivisorOverride() && *getDivisorOverride() == 0)
    return emitOpError("divisor_override must be non-zero");
  std::string error;
  auto shape = poolResultShape(tensorType(getInput()).getShape(),
                               {getKernel(), getStride(), getPadding(), {}, getCeilMode()}, error);
  return checkShape(*this, shape, error, getType());
}

template <typename OpT>
static LogicalResult verifyAdaptivePool(OpT op) {
  if (failed(dyn::checkSameElementType(op)))
    return failure();
  ArrayRef<int64_t> in = tensorType(op.getInput()).getShape(), out = op.getOutputSize();
  int64_t nd = out.size();
  if (nd < 1 || nd > 3 || (int64_t)in.size() < nd + 1)
    return op.emitOpError("pools 1 to 3 trailing dims of an input with a channel dim in front");
  SmallVector<int64_t> expected(in.drop_back(nd));
  for (int64_t i = 0; i < nd; ++i) {
    // the windows are computed from the pooled dims' sizes; the dims in front may be dynamic
    if (ShapedType::isDynamic(in[in.size() - nd + i]))
      return op.emitOpError() << "pooled dim " << i << " is dynamic: only the dims in front of the pooled ones may be";
    if (out[i] < 1 || in[in.size() - nd + i] < 1)
      return op.emitOpError("pooled dims and output sizes must be positive");
    expected.push_back(out[i]);
  }
  return checkShape(op, expected, "", op.getType());
}

LogicalResult AdaptiveMaxPoolOp::verify() { return verifyAdaptivePool(*this); }

LogicalResult BilinearOp::verify() {
  ArrayRef<int64_t> a = tensorType(getInput()).getShape(), b = tensorType(getInput2()).getShape(),
                    w = tensorType(getWeight()).getShape();
  if (a.size() != 2 || b.size() != 2 || w.size() != 3 || a[0] != b[0] || w[1] != a[1] || w[2] != b[1])
    return emitOpError("operands must be [B, in1], [B, in2] and [out, in1, in2]");
  Type et = getType().getElementType();
  if (tensorType(getWeight()).getElementType() != et || tensorType(getInput()).getElementType() != et ||
      tensorType(getInput2()).getElementType() != et ||
      (getBias() && tensorType(getBias()).getElementType() != et))
    return emitOpError("operands must have the result's element type");
  if (getBias() && tensorType(getBias()).getShape() != ArrayRef<int64_t>{w[0]})
    return emitOpError("bias must be [out]");
  if (getType().getShape() != ArrayRef<int64_t>{a[0], w[0]})
    return emitOpError("result must be [B, out]");
  return success();
}

LogicalResult UpsampleOp::verify() {
  ArrayRef<int64_t> in = tensorType(getInput()).getShape(), out = getOutputSize();
  int64_t nd = out.size();
  if (getMode() != "linear" && getMode() != "cubic")
    return emitOpError("mode must be linear or cubic");
  if (nd < 1 || nd > 3 || (getMode() == "cubic" && nd != 2))
    return emitOpError("resamples 1 to 3 dims (cubic: 2)");
  if ((int64_t)in.size() != nd + 2)
    return emitOpError("input must be [N, C, *spatial]");
  if (!getScales().empty() && (int64_t)getScales().size() != nd)
    return emitOpError("scales must be empty or one per resampled dim");
  SmallVector<int64_t> expected(in.take_front(2));
  for (int64_t i = 0; i < nd; ++i) {
    if (out[i] < 1 || in[2 + i] < 1)
      return emitOpError("resampled sizes must be positive");
    expected.push_back(out[i]);
  }
  return checkShape(*this, expected, "", getType());
}

/// The pooled values and their indices: one shape, the input's element type
/// for the values, an input batched as [N, C, *pooled].
template <typename OpT>
static LogicalResult verifyPoolWithIndices(OpT op, int64_t nd, const std::optional<SmallVector<int64_t>> &shape,
                                           const std::string &error) {
  RankedTensorType in = tensorType(op.getInput()), values = op.getResult().getType();
  if (values.getElementType() != in.getElementType())
    return op.emitOpError("values must have the input's element type");
  if (in.getRank() != nd + 2)
    return op.emitOpError("input must be [N, C, *pooled]");
  if (op.getIndices().getType().getShape() != values.getShape())
    return op.emitOpError("indices must have the values' shape");
  return checkShape(op, shape, error, values);
}

LogicalResult MaxPoolWithIndicesOp::verify() {
  std::string error;
  auto shape = poolResultShape(tensorType(getInput()).getShape(),
                               {getKernel(), getStride(), getPadding(), getDilation(), getCeilMode()},
                               error);
  return verifyPoolWithIndices(*this, getKernel().size(), shape, error);
}

LogicalResult AdaptiveMaxPoolWithIndicesOp::verify() {
  ArrayRef<int64_t> in = tensorType(getInput()).getShape(), out = getOutputSize();
  int64_t nd = out.size();
  if (nd < 1 || nd > 3 || (int64_t)in.size() != nd + 2)
    return emitOpError("pools 1 to 3 trailing dims of an [N, C, *pooled] input");
  SmallVector<int64_t> expected(in.drop_back(nd));
  for (int64_t i = 0; i < nd; ++i) {
    if (out[i] < 1 || in[in.size() - nd + i] < 1)
      return emitOpError("pooled dims and output sizes must be positive");
    expected.push_back(out[i]);
  }
  return verifyPoolWithIndices(*this, nd, expected, "");
}
LogicalResult AdaptiveAvgPoolOp::verify() { return verifyAdaptivePool(*this); }

LogicalResult PadOp::verify() {
  ArrayRef<int64_t> in = tensorType(getInput()).getShape();
  if (getType().getElementType() != tensorType(getInput()).getElementType())
    return emitOpError("result must have the input's element type");
  if (getLow().size() != in.size() || getHigh().size() != in.size())
    return emitOpError("low and high need one entry per dim");
  SmallVector<int64_t> expected;
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t lo = getLow()[i], hi = getHigh()[i];
    bool indexed = getMode() == PadMode::reflect || getMode() == PadMode::replicate;
    if ((lo < 0 || hi < 0) && !indexed)
      return emitOpError("constant and circular pads must be non-negative");
    if (in[i] + lo + hi < 0 || ((lo < 0 || hi < 0) && in[i] + lo + hi == 0))
      return emitOpError() << "pads leave dim " << i << " empty";
    if ((lo || hi) && getMode() == PadMode::reflect && (lo >= in[i] || hi >= in[i]))
      return emitOpError() << "reflect pads must be smaller than the dim (" << in[i] << ")";
    if ((lo || hi) && getMode() == PadMode::circular && (lo > in[i] || hi > in[i]))
      return emitOpError() << "circular pads must be at most the dim (" << in[i] << ")";
    if ((lo || hi) && getMode() == PadMode::replicate && in[i] == 0)
      return emitOpError("cannot replicate the edge of an empty dim");
    expected.push_back(in[i] + lo + hi);
  }
  if (getMode() != PadMode::constant && getValue().convertToDouble() != 0.0)
    return emitOpError("only constant padding takes a value");
  return checkShape(*this, expected, "", getType());
}

LogicalResult ScaledDotProductAttentionOp::verify() { return dyn::verifyAttention(*this); }

/// Collects the operand references (`k : index`) in a torch_call argument attribute.
static void collectOperandRefs(Attribute attr, SmallVectorImpl<IntegerAttr> &refs) {
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    if (i.getType().isIndex())
      refs.push_back(i);
  } else if (auto a = dyn_cast<ArrayAttr>(attr)) {
    for (Attribute e : a)
      collectOperandRefs(e, refs);
  } else if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    for (NamedAttribute e : d)
      collectOperandRefs(e.getValue(), refs);
  }
}

LogicalResult TorchCallOp::verify() {
  if (getCallee().empty())
    return emitOpError("needs a callee");
  if (getNumResults() == 0)
    return emitOpError("needs at least one result");
  SmallVector<IntegerAttr> refs;
  if (std::optional<ArrayAttr> args = getArgs())
    collectOperandRefs(*args, refs);
  if (std::optional<DictionaryAttr> kwargs = getKwargs())
    collectOperandRefs(*kwargs, refs);
  unsigned n = getNumOperands();
  SmallVector<unsigned> uses(n, 0);
  for (IntegerAttr r : refs) {
    int64_t k = r.getInt();
    if (k < 0 || k >= (int64_t)n)
      return emitOpError() << "argument refers to operand " << k << " but there are " << n
                           << " operands";
    ++uses[k];
  }
  for (unsigned k = 0; k < n; ++k)
    if (uses[k] != 1)
      return emitOpError() << "operand " << k << " must appear exactly once in args/kwargs, appears "
                           << uses[k] << " times";
  if (std::optional<int64_t> k = getInPlace()) {
    if (*k < 0 || *k >= (int64_t)n)
      return emitOpError() << "in_place operand " << *k << " is out of range";
    if (getNumResults() != 1 || getResult(0).getType() != getOperand(*k).getType())
      return emitOpError("in_place: the single result must have the written operand's type");
  }
  return success();
}

void TorchCallOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  if (!getSeeded())
    return;  // pure: the value depends on the operands and attributes only
  // a random op reads and advances PyTorch's generator: kept, and kept in order
  effects.emplace_back(MemoryEffects::Read::get());
  effects.emplace_back(MemoryEffects::Write::get());
}

#define GET_OP_CLASSES
#include "dyn/Dialect/Graph/IR/GraphOps.cpp.inc"
