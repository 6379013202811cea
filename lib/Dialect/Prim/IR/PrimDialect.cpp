//===- PrimDialect.cpp - prim dialect, verifiers and folders -------------===//
#include "dyn/Dialect/Prim/IR/PrimDialect.h"
#include "dyn/Dialect/Common/GatherVerifier.h"
#include "dyn/Dialect/Common/WindowShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dyn::prim;

#include "dyn/Dialect/Prim/IR/PrimDialect.cpp.inc"
#include "dyn/Dialect/Prim/IR/PrimEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dyn/Dialect/Prim/IR/PrimAttrs.cpp.inc"

void PrimDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dyn/Dialect/Prim/IR/PrimOps.cpp.inc"
      >();
}

Operation *PrimDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                            Location loc) {
  if (auto size = dyn_cast<IntegerAttr>(value); size && type.isIndex()) // a folded prim.dim
    return arith::ConstantIndexOp::create(builder, loc, size.getInt());
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

static RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

template <typename OpT>
static LogicalResult verifyReduce(OpT op) {
  RankedTensorType in = tensorType(op.getInput());
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t d : op.getDims())
    if (d < 0 || d >= in.getRank() || !seen.insert(d).second)
      return op.emitOpError() << "dims must be distinct dims of the input (got " << d << ")";
  SmallVector<int64_t> expected;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (!seen.contains(i))
      expected.push_back(in.getDimSize(i));
  RankedTensorType out = tensorType(op.getResult());
  if (out.getShape() != ArrayRef<int64_t>(expected) ||
      out.getElementType() != in.getElementType())
    return op.emitOpError("result must be the input with the reduced dims removed");
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult ConvertElementTypeOp::fold(FoldAdaptor) {
  return getInput().getType() == getType() ? getInput() : OpFoldResult();
}

LogicalResult IotaOp::verify() {
  if (getDim() < 0 || getDim() >= getType().getRank())
    return emitOpError() << "dim " << getDim() << " is out of range";
  if ((int64_t)getSizes().size() != getType().getNumDynamicDims())
    return emitOpError("needs one size per dynamic result dim");
  return success();
}

LogicalResult DynamicSliceOp::verify() {
  RankedTensorType in = tensorType(getInput()), out = getType();
  int64_t dim = getDim();
  if (dim < 0 || dim >= in.getRank() || out.getRank() != in.getRank())
    return emitOpError("dim must be in range and the result of the input's rank");
  if (!out.isDynamicDim(dim) && !in.isDynamicDim(dim) && out.getDimSize(dim) > in.getDimSize(dim))
    return emitOpError("result dim `dim` is longer than the input's");
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (i != dim && in.getDimSize(i) != out.getDimSize(i))
      return emitOpError() << "result dim " << i << " differs from the input's";
  return success();
}

LogicalResult PhiloxOp::verify() {
  if ((int64_t)getWord() < 0 || (int64_t)getWord() > 3)
    return emitOpError() << "word " << (int64_t)getWord() << " is not one of the four Philox words (0-3)";
  if ((int64_t)getOffset() < 0)
    return emitOpError() << "offset " << (int64_t)getOffset() << " is negative";
  if ((int64_t)getSizes().size() != getType().getNumDynamicDims())
    return emitOpError("needs one size per dynamic result dim");
  return success();
}

LogicalResult BroadcastInDimOp::verify() {
  ArrayRef<int64_t> in = tensorType(getInput()).getShape();
  ArrayRef<int64_t> out = getType().getShape();
  ArrayRef<int64_t> dims = getDims();
  if (dims.size() != in.size())
    return emitOpError("dims must have one entry per operand dim");
  if (tensorType(getInput()).getElementType() != getType().getElementType())
    return emitOpError("broadcast cannot change the element type");
  size_t dynamicDims = llvm::count_if(out, ShapedType::isDynamic);
  if (getSizes().size() != dynamicDims)
    return emitOpError() << "needs one size per dynamic result dim (" << dynamicDims << "), got "
                         << getSizes().size();
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= (int64_t)out.size())
      return emitOpError() << "dim " << d << " is out of range for the result";
    if (i > 0 && d <= dims[i - 1])
      return emitOpError("dims must be strictly increasing");
    if (ShapedType::isDynamic(in[i]) && !ShapedType::isDynamic(out[d]))
      return emitOpError() << "operand dim " << i << " is dynamic but result dim " << d << " is not";
    if (in[i] != 1 && in[i] != out[d])
      return emitOpError() << "operand dim " << i << " of size " << in[i]
                           << " cannot broadcast to size " << out[d];
  }
  return success();
}

OpFoldResult BroadcastInDimOp::fold(FoldAdaptor) {
  return getInput().getType() == getType() ? getInput() : OpFoldResult();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = tensorType(getInput());
  if (in.getElementType() != getType().getElementType() ||
      (in.hasStaticShape() && getType().hasStaticShape() && in.getNumElements() != getType().getNumElements()))
    return emitOpError("reshape must keep the element count and type");
  if ((int64_t)getSizes().size() != getType().getNumDynamicDims())
    return emitOpError("needs one size per dynamic result dim");
  if (!in.hasStaticShape() && getType().hasStaticShape())
    return emitOpError("a dynamic input needs a dynamic result dim");
  return success();
}

/// Whether the dynamic dims of `op`'s result are its input's at the same positions.
static bool sameDynamicSizes(ReshapeOp op) {
  unsigned k = 0;
  for (int64_t d = 0, r = op.getType().getRank(); d < r; ++d) {
    if (!op.getType().isDynamicDim(d))
      continue;
    auto dim = op.getSizes()[k++].getDefiningOp<DimOp>();
    if (!dim || dim.getInput() != op.getInput() || (int64_t)dim.getDim() != d)
      return false;
  }
  return true;
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType() && sameDynamicSizes(*this))
    return getInput();
  // reshape(reshape(x)) == reshape(x).
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  return {};
}

LogicalResult DimOp::verify() {
  if (getDim() < 0 || getDim() >= tensorType(getInput()).getRank())
    return emitOpError() << "dim " << getDim() << " is out of range for rank "
                         << tensorType(getInput()).getRank();
  return success();
}

OpFoldResult DimOp::fold(FoldAdaptor) {
  RankedTensorType t = tensorType(getInput());
  if (getDim() < 0 || getDim() >= t.getRank() || t.isDynamicDim(getDim()))
    return {};
  return IntegerAttr::get(IndexType::get(getContext()), t.getDimSize(getDim()));
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> in = tensorType(getInput()).getShape();
  ArrayRef<int64_t> out = getType().getShape();
  ArrayRef<int64_t> perm = getPermutation();
  llvm::SmallSet<int64_t, 4> seen;
  if (perm.size() != in.size() || out.size() != in.size())
    return emitOpError("permutation must name every dim once");
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= (int64_t)in.size() || !seen.insert(p).second)
      return emitOpError("permutation must name every dim once");
    if (out[i] != in[p])
      return emitOpError() << "result dim " << i << " must have size " << in[p];
  }
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPermutation()))
    if ((int64_t)i != p)
      return {};
  return getInput();
}

LogicalResult GatherOp::verify() { return dyn::verifyGather(*this); }

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> in = tensorType(getInput()).getShape();
  ArrayRef<int64_t> out = getType().getShape();
  if (getStart().size() != in.size() || getStride().size() != in.size() ||
      out.size() != in.size())
    return emitOpError("start and stride need one entry per dim");
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t start = getStart()[i], stride = getStride()[i];
    if (stride < 1 || start < 0)
      return emitOpError("start must be non-negative and stride positive");
    if (ShapedType::isDynamic(out[i])) {
      if (in[i] != out[i] || start != 0 || stride != 1)
        return emitOpError() << "takes dynamic dim " << i << " whole";
      continue;
    }
    if (ShapedType::isDynamic(in[i])) // static elements of a `?` dim, the runtime size guarded to hold them
      continue;
    if (out[i] > 0 && start + (out[i] - 1) * stride >= in[i])
      return emitOpError() << "slice reads past the end of dim " << i;
  }
  return success();
}

LogicalResult ConcatenateOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  int64_t dim = getDim(), total = 0;
  if (dim < 0 || dim >= getType().getRank())
    return emitOpError("dim is out of range");
  bool dynamic = false; // along dim: the sum of the inputs' at run time
  for (Value v : getInputs()) {
    RankedTensorType t = tensorType(v);
    if (t.getRank() != getType().getRank() || t.getElementType() != getType().getElementType())
      return emitOpError("inputs must have the result's rank and element type");
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (i != dim && t.getDimSize(i) != getType().getDimSize(i))
        return emitOpError() << "input dim " << i << " differs from the result";
    dynamic |= t.isDynamicDim(dim);
    total += t.isDynamicDim(dim) ? 0 : t.getDimSize(dim);
  }
  if (dynamic != getType().isDynamicDim(dim))
    return emitOpError("result dim must be dynamic exactly where an input's is");
  if (!dynamic && total != getType().getDimSize(dim))
    return emitOpError("result size along dim must be the sum of the inputs'");
  return success();
}

LogicalResult DotGeneralOp::verify() {
  RankedTensorType lhs = tensorType(getLhs()), rhs = tensorType(getRhs());
  if (getLhsBatch().size() != getRhsBatch().size() ||
      getLhsContract().size() != getRhsContract().size())
    return emitOpError("batch and contracting dim lists must pair up");
  if (lhs.getElementType() != rhs.getElementType() ||
      lhs.getElementType() != getType().getElementType())
    return emitOpError("operands and result must share one element type");
  SmallVector<int64_t> expected;
  llvm::SmallSet<int64_t, 4> lhsUsed, rhsUsed;
  auto check = [&](ArrayRef<int64_t> l, ArrayRef<int64_t> r, bool keep) -> LogicalResult {
    for (auto [a, b] : llvm::zip(l, r)) {
      if (a < 0 || a >= lhs.getRank() || b < 0 || b >= rhs.getRank() ||
          !lhsUsed.insert(a).second || !rhsUsed.insert(b).second)
        return emitOpError("batch/contracting dims must be distinct and in range");
      if (lhs.getDimSize(a) != rhs.getDimSize(b))
        return emitOpError() << "paired dims differ in size: " << lhs.getDimSize(a) << " vs "
                             << rhs.getDimSize(b);
      if (keep)
        expected.push_back(lhs.getDimSize(a));
    }
    return success();
  };
  if (failed(check(getLhsBatch(), getRhsBatch(), true)) ||
      failed(check(getLhsContract(), getRhsContract(), false)))
    return failure();
  for (int64_t i = 0; i < lhs.getRank(); ++i)
    if (!lhsUsed.contains(i))
      expected.push_back(lhs.getDimSize(i));
  for (int64_t i = 0; i < rhs.getRank(); ++i)
    if (!rhsUsed.contains(i))
      expected.push_back(rhs.getDimSize(i));
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape must be batch, lhs free, rhs free dims");
  return success();
}

LogicalResult PadOp::verify() {
  ArrayRef<int64_t> in = tensorType(getInput()).getShape();
  if (getType().getElementType() != tensorType(getInput()).getElementType())
    return emitOpError("result must have the input's element type");
  if (getLow().size() != in.size() || getHigh().size() != in.size())
    return emitOpError("low and high need one entry per dim");
  SmallVector<int64_t> expected;
  for (size_t i = 0; i < in.size(); ++i) {
    if (getLow()[i] < 0 || getHigh()[i] < 0)
      return emitOpError("pads must be non-negative");
    if (ShapedType::isDynamic(in[i]) && (getLow()[i] || getHigh()[i]))
      return emitOpError() << "dim " << i << " is dynamic: it cannot be padded";
    expected.push_back(in[i] + getLow()[i] + getHigh()[i]);
  }
  double v = getValue().convertToDouble();
  if (!isa<FloatType>(getType().getElementType()) && v != std::trunc(v))
    return emitOpError("an integer tensor needs an integer padding value");
  return dyn::checkResultShape(*this, expected, "", getType().getShape());
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  return getInput().getType() == getType() ? getInput() : OpFoldResult();
}

LogicalResult ConvolutionOp::verify() {
  if (failed(dyn::checkSameElementType(*this)))
    return failure();
  dyn::ConvolutionParams p{getStride(), getPadding(), getDilation(),
                           getOutputPadding().value_or(ArrayRef<int64_t>()), (int64_t)getGroups(),
                           getTransposed(), getChannelsLast()};
  std::string error;
  auto shape = dyn::convolutionResultShape(tensorType(getInput()).getShape(),
                                           tensorType(getWeight()).getShape(), p, error);
  if (shape && getBias() &&
      tensorType(getBias()).getShape() != ArrayRef<int64_t>{dyn::resultChannels(*shape, p)})
    return emitOpError("bias must be [C_out]");
  return dyn::checkResultShape(*this, shape, error, getType().getShape());
}

LogicalResult AttentionOp::verify() { return dyn::verifyAttention(*this); }

namespace {
/// Backward calls whose result k is the gradient of operand k + 1, with its sizes.
bool sizedLikeOperands(StringRef callee) {
  return callee == "attention_backward" || callee == "convolution_backward" ||
         callee == "adaptive_avg_pool2d_backward" || callee == "max_pool2d_backward" ||
         callee == "attention_lse_backward" || callee == "masked_attention_lse_backward";
}
} // namespace

bool dyn::prim::takesDynamicShapes(StringRef callee) {
  // (embedding_backward: `?` tokens in, a statically shaped weight gradient out)
  return sizedLikeOperands(callee) || callee == "attention_lse" || callee == "masked_attention_lse" ||
         callee == "embedding_backward";
}

std::optional<dyn::prim::LibraryResultDim> dyn::prim::libraryResultDim(StringRef callee, unsigned result,
                                                                       int64_t dim, int64_t resultRank) {
  if (sizedLikeOperands(callee))
    return LibraryResultDim{result + 1, dim};
  if (callee != "attention_lse" && callee != "masked_attention_lse")
    return std::nullopt;
  // operands query [.., L, E], key, value [.., S, Ev]; results [.., L, Ev], lse [B, H, ceil32(L)], rng [2]
  if (result == 0)
    return LibraryResultDim{dim + 1 < resultRank ? 0u : 2u, dim};
  if (result == 1)
    return dim < 2 ? LibraryResultDim{0, dim} : LibraryResultDim{0, 2, 32};
  return std::nullopt;
}

LogicalResult LibraryCallOp::verify() {
  if (getCallee().empty())
    return emitOpError("needs a callee name");
  if (getResults().empty())
    return emitOpError("computes at least one result");
  for (Value v : llvm::concat<Value>(getInputs(), getResults())) {
    auto t = cast<RankedTensorType>(v.getType());
    Type et = t.getElementType();
    // dynamic dims: the calls whose results libraryResultDim sizes (PrimToLoop sizes them)
    if (!t.hasStaticShape() && !takesDynamicShapes(getCallee()))
      return emitOpError("needs statically shaped tensors");
    if (!(et.isF16() || et.isBF16() || et.isF32() || et.isF64() || et.isInteger(1) ||
          et.isInteger(8) || et.isInteger(16) || et.isInteger(32) || et.isInteger(64)))
      return emitOpError("has a tensor of an element type the library-call ABI has no code for: ")
             << et;
  }
  return success();
}

#define GET_OP_CLASSES
#include "dyn/Dialect/Prim/IR/PrimOps.cpp.inc"
