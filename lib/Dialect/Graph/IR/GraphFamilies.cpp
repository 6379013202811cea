//===- GraphFamilies.cpp - verifiers of the reduction, scan, data movement and loss ops -===//
//
// The ops of GraphFamilyOps.td: each verifier checks the result type against
// the op's type rule, so that the lowering (CompositeReductions.cpp, Scans.cpp,
// Rearrange.cpp, Losses.cpp) handles everything it accepts.
//
//===----------------------------------------------------------------------===//
#include "dyn/Dialect/Graph/IR/GraphDialect.h"

#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace dyn::graph;

static RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// The dims of an op that names each at most once, each in range.
static LogicalResult checkDims(Operation *op, ArrayRef<int64_t> dims, int64_t rank,
                               StringRef what = "dim") {
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return op->emitOpError() << what << " " << d << " is out of range for rank " << rank;
    if (!seen.insert(d).second)
      return op->emitOpError() << what << " " << d << " is repeated";
  }
  return success();
}

/// The shape of `in` reduced over `dims` (kept as size 1 with keepdim).
static SmallVector<int64_t> reducedShape(ArrayRef<int64_t> in, ArrayRef<int64_t> dims,
                                         bool keepdim) {
  SmallVector<int64_t> shape;
  for (int64_t i = 0, e = in.size(); i < e; ++i) {
    if (!llvm::is_contained(dims, i))
      shape.push_back(in[i]);
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

template <typename OpT>
static LogicalResult verifyArgReduction(OpT op) {
  RankedTensorType in = tensorType(op.getInput());
  int64_t dim = op.getDim();
  if (failed(checkDims(op, {dim}, in.getRank())))
    return failure();
  if (in.getDimSize(dim) == 0)
    return op.emitOpError("cannot take the index of an extremum over an empty dim");
  if (op.getType().getShape() != ArrayRef<int64_t>(reducedShape(in.getShape(), {dim},
                                                                 op.getKeepdim())))
    return op.emitOpError("result shape does not match the reduction of the input over dim");
  return success();
}

LogicalResult ArgmaxOp::verify() { return verifyArgReduction(*this); }
LogicalResult ArgminOp::verify() { return verifyArgReduction(*this); }

/// An infinite-order norm over no elements is not defined (eager raises).
static LogicalResult checkNormOrder(Operation *op, double p, int64_t count) {
  if (std::isinf(p) && count == 0)
    return op->emitOpError("an infinite-order norm over no elements is not defined");
  if (std::isnan(p) || p < 0)
    return op->emitOpError("p must be a non-negative number");
  return success();
}

LogicalResult DistOp::verify() {
  RankedTensorType a = tensorType(getInput()), b = tensorType(getOther());
  if (a != b || getType().getRank() != 0 || getType().getElementType() != a.getElementType())
    return emitOpError("takes two operands of one type and returns a 0-d tensor of it");
  return checkNormOrder(*this, getP().convertToDouble(), a.getRank() ? a.getNumElements() : 1);
}

LogicalResult CdistOp::verify() {
  ArrayRef<int64_t> a = tensorType(getInput()).getShape(), b = tensorType(getOther()).getShape();
  if (a.size() < 2 || a.size() != b.size() || a.drop_back(2) != b.drop_back(2) || a.back() != b.back())
    return emitOpError("operands must be [*, P, M] and [*, R, M] with one batch shape");
  SmallVector<int64_t> expected(a.drop_back(1));
  expected.push_back(b[b.size() - 2]);
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result must be [*, P, R]");
  return checkNormOrder(*this, getP().convertToDouble(), a.back());
}

LogicalResult PdistOp::verify() {
  ArrayRef<int64_t> a = tensorType(getInput()).getShape();
  if (a.size() != 2)
    return emitOpError("input must be [N, M]");
  if (getType().getShape() != ArrayRef<int64_t>{a[0] * (a[0] - 1) / 2})
    return emitOpError("result must be [N (N - 1) / 2]");
  return checkNormOrder(*this, getP().convertToDouble(), a[1]);
}

LogicalResult IsinOp::verify() {
  if (tensorType(getTestElements()).getRank() != 1)
    return emitOpError("test_elements must be 1-d");
  if (getType().getShape() != tensorType(getElements()).getShape())
    return emitOpError("result must have the elements' shape");
  return success();
}

LogicalResult BucketizeOp::verify() {
  if (tensorType(getBoundaries()).getRank() != 1)
    return emitOpError("boundaries must be 1-d");
  if (getType().getShape() != tensorType(getInput()).getShape())
    return emitOpError("result must have the input's shape");
  if (getType().getElementType().isInteger(32) != getOutInt32())
    return emitOpError("result must be i32 with out_int32, i64 without");
  return success();
}

LogicalResult MultiMarginLossOp::verify() {
  RankedTensorType x = tensorType(getInput());
  if (x.getRank() != 2 || tensorType(getTarget()).getShape() != ArrayRef<int64_t>{x.getDimSize(0)})
    return emitOpError("input must be [N, C] and target [N]");
  if (getWeight() && tensorType(getWeight()) != RankedTensorType::get({x.getDimSize(1)}, x.getElementType()))
    return emitOpError("weight must be [C] of the input's type");
  if (getP() != 1 && getP() != 2)
    return emitOpError("p must be 1 or 2");
  StringRef r = getReduction();
  if (r != "none" && r != "mean" && r != "sum")
    return emitOpError("reduction must be none, mean or sum");
  if (getType().getElementType() != x.getElementType() ||
      getType().getShape() != (r == "none" ? ArrayRef<int64_t>{x.getDimSize(0)} : ArrayRef<int64_t>{}))
    return emitOpError("result must be [N] of the input's type (none), else 0-d");
  return success();
}

LogicalResult MultilabelMarginLossOp::verify() {
  RankedTensorType x = tensorType(getInput());
  if (x.getRank() != 2 || tensorType(getTarget()).getShape() != x.getShape())
    return emitOpError("input and target must be [N, C]");
  StringRef r = getReduction();
  if (r != "none" && r != "mean" && r != "sum")
    return emitOpError("reduction must be none, mean or sum");
  if (getType().getShape() != (r == "none" ? ArrayRef<int64_t>{x.getDimSize(0)} : ArrayRef<int64_t>{}))
    return emitOpError("result must be [N] (none), else 0-d");
  return success();
}

LogicalResult GridSamplerOp::verify() {
  RankedTensorType in = tensorType(getInput()), grid = tensorType(getGrid());
  int64_t nd = in.getRank() - 2;
  if ((nd != 2 && nd != 3) || grid.getRank() != in.getRank() || grid.getDimSize(0) != in.getDimSize(0) ||
      grid.getShape().back() != nd)
    return emitOpError("input must be [N, C, *in] (2 or 3 spatial dims) and grid [N, *out, dims]");
  int64_t mode = getMode(), padding = getPadding();
  if (mode < 0 || mode > 2 || padding < 0 || padding > 2 || (mode == 2 && nd != 2))
    return emitOpError("mode must be 0-2 (bicubic for 2 spatial dims only) and padding 0-2");
  SmallVector<int64_t> shape{in.getDimSize(0), in.getDimSize(1)};
  llvm::append_range(shape, grid.getShape().drop_front().drop_back());
  if (getType().getShape() != ArrayRef<int64_t>(shape))
    return emitOpError("result must be [N, C, *out]");
  return success();
}

LogicalResult VectorNormOp::verify() {
  RankedTensorType in = tensorType(getInput());
  if (failed(checkDims(*this, getDims(), in.getRank(), "reduction dim")))
    return failure();
  if (getType().getShape() !=
      ArrayRef<int64_t>(reducedShape(in.getShape(), getDims(), getKeepdim())))
    return emitOpError("result shape does not match the reduction of the input over dims");
  if (std::isinf(getOrd().convertToDouble())) {
    int64_t count = 1;
    for (int64_t d : getDims())
      count *= in.getDimSize(d);
    if (in.getRank() && count == 0)
      return emitOpError("an infinite-order norm over no elements is not defined");
  }
  return success();
}

/// A scan's kind against the element type it runs on.
static LogicalResult checkScanType(Operation *op, ScanKind kind, Type et) {
  if (et.isInteger(1) && (kind == ScanKind::sum || kind == ScanKind::prod))
    return op->emitOpError("a cumulative sum or product of booleans is computed in i64 "
                           "(convert first)");
  if (kind == ScanKind::logsumexp && !isa<FloatType>(et))
    return op->emitOpError("logsumexp scans need a floating-point input");
  return success();
}

LogicalResult CumulativeOp::verify() {
  RankedTensorType in = tensorType(getInput());
  if (failed(checkDims(*this, {(int64_t)getDim()}, in.getRank())))
    return failure();
  return checkScanType(*this, getKind(), in.getElementType());
}

LogicalResult CumulativeIndexOp::verify() {
  RankedTensorType in = tensorType(getInput());
  if (getKind() != ScanKind::max && getKind() != ScanKind::min)
    return emitOpError("indices exist for max and min scans only");
  if (failed(checkDims(*this, {(int64_t)getDim()}, in.getRank())))
    return failure();
  if (getType().getShape() != in.getShape())
    return emitOpError("result must have the input's shape");
  return success();
}

LogicalResult FlipOp::verify() {
  return checkDims(*this, getDims(), tensorType(getInput()).getRank());
}

LogicalResult RollOp::verify() {
  if (getShifts().size() != getDims().size())
    return emitOpError("needs one shift per dim");
  return checkDims(*this, getDims(), tensorType(getInput()).getRank());
}

LogicalResult RepeatOp::verify() {
  ArrayRef<int64_t> in = tensorType(getInput()).getShape(), reps = getRepeats();
  if (reps.size() < in.size())
    return emitOpError("needs a repeat count for every input dim");
  size_t offset = reps.size() - in.size();
  SmallVector<int64_t> expected;
  for (size_t i = 0; i < reps.size(); ++i) {
    if (reps[i] < 0)
      return emitOpError("repeat counts must be non-negative");
    expected.push_back(reps[i] * (i < offset ? 1 : in[i - offset]));
  }
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape must be the repeated input's");
  return success();
}

template <typename OpT>
static LogicalResult verifyPointwiseLoss(OpT op) {
  ArrayRef<int64_t> in = tensorType(op.getInput()).getShape();
  ArrayRef<int64_t> out = op.getType().getShape();
  if (op.getReduction() == LossReduction::none ? out != in : !out.empty())
    return op.emitOpError("result must have the input's shape without reduction, else be 0-d");
  return success();
}

LogicalResult MseLossOp::verify() { return verifyPointwiseLoss(*this); }
LogicalResult L1LossOp::verify() { return verifyPointwiseLoss(*this); }
LogicalResult SmoothL1LossOp::verify() {
  if (getBeta().convertToDouble() < 0)
    return emitOpError("beta must be non-negative");
  return verifyPointwiseLoss(*this);
}
LogicalResult HuberLossOp::verify() {
  if (!(getDelta().convertToDouble() > 0))
    return emitOpError("delta must be positive");
  return verifyPointwiseLoss(*this);
}
LogicalResult KlDivOp::verify() { return verifyPointwiseLoss(*this); }
LogicalResult BinaryCrossEntropyOp::verify() { return verifyPointwiseLoss(*this); }
LogicalResult BinaryCrossEntropyWithLogitsOp::verify() { return verifyPointwiseLoss(*this); }
LogicalResult SoftMarginLossOp::verify() { return verifyPointwiseLoss(*this); }

LogicalResult NllLossOp::verify() {
  RankedTensorType in = tensorType(getInput()), target = tensorType(getTarget());
  if (in.getRank() < 1)
    return emitOpError("needs an input with a class dim");
  int64_t cdim = in.getRank() >= 2 ? 1 : 0;
  SmallVector<int64_t> expected;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (i != cdim)
      expected.push_back(in.getDimSize(i));
  if (target.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("target shape must be the input's without its class dim");
  if (tensorType(getWeight()).getShape() != ArrayRef<int64_t>{in.getDimSize(cdim)})
    return emitOpError("weight must hold one value per class");
  ArrayRef<int64_t> result = getType().getShape();
  bool reduced = getReduction() != LossReduction::none;
  if (reduced ? !result.empty() : result != ArrayRef<int64_t>(expected))
    return emitOpError("result shape must be the target's (reduction none) or 0-d");
  return success();
}
