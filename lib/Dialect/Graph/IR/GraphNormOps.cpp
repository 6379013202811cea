//===- GraphNormOps.cpp - verifiers of the normalization ops ------------===//
//
// Shapes and types as eager's kernels check them: the parameters and
// running statistics are `[C]` (or the normalized shape), their element type
// is the input's or f32 for an f16/bf16 input, and the result has the
// input's type; running statistics come back updated exactly when the op
// computes batch statistics with them.
//
//===----------------------------------------------------------------------===//
#include "dyn/Dialect/Graph/IR/GraphDialect.h"

using namespace mlir;
using namespace dyn::graph;

namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// A weight, bias or statistic: `shape`, and the input's element type or f32
/// beside an f16/bf16 input (anyFloat: every float type, rms_norm's weight).
LogicalResult checkParam(Operation *op, Value v, StringRef name, RankedTensorType input,
                         ArrayRef<int64_t> shape, bool anyFloat = false) {
  if (!v)
    return success();
  RankedTensorType t = tensorType(v);
  if (t.getShape() != shape) {
    InFlightDiagnostic d = op->emitOpError() << name << " must have shape [";
    llvm::interleaveComma(shape, d);
    return d << "]";
  }
  Type in = input.getElementType(), et = t.getElementType();
  if (!anyFloat && et != in && !((in.isF16() || in.isBF16()) && et.isF32()))
    return op->emitOpError() << name << " must have the input's element type (or f32 beside an "
                                        "f16/bf16 input)";
  return success();
}

LogicalResult checkResult(Operation *op, RankedTensorType input) {
  if (op->getResult(0).getType() != input)
    return op->emitOpError("result must have the input's type");
  return success();
}

/// The trailing-dims norms: 1 <= normalized_rank <= rank.
LogicalResult checkNormalizedRank(Operation *op, RankedTensorType input, int64_t k,
                                  SmallVectorImpl<int64_t> &normalized) {
  if (k < 1 || k > input.getRank())
    return op->emitOpError() << "normalized_rank " << k << " must be in [1, " << input.getRank()
                             << "]";
  normalized.assign(input.getShape().end() - k, input.getShape().end());
  return success();
}

/// batch_norm / instance_norm: `[N, C, *]` input, `[C]` parameters and
/// statistics (both or neither), and the updated statistics as results
/// exactly when `updates` (they take the running statistics' types).
template <typename OpT>
LogicalResult checkChannelNorm(OpT op, bool updates) {
  RankedTensorType in = tensorType(op.getInput());
  if (in.getRank() < 2)
    return op.emitOpError("input must be [N, C, *] (rank 2 or more)");
  SmallVector<int64_t> c{in.getDimSize(1)};
  Operation *o = op.getOperation();
  if (failed(checkParam(o, op.getWeight(), "weight", in, c)) ||
      failed(checkParam(o, op.getBias(), "bias", in, c)) ||
      failed(checkParam(o, op.getRunningMean(), "running_mean", in, c)) ||
      failed(checkParam(o, op.getRunningVar(), "running_var", in, c)) || failed(checkResult(o, in)))
    return failure();
  if (!op.getRunningMean() != !op.getRunningVar())
    return op.emitOpError("takes both running_mean and running_var or neither");
  size_t expected = updates ? 2 : 0;
  if (op.getRunningStats().size() != expected)
    return op.emitOpError() << "must return " << expected
                            << " updated running statistics here, returns "
                            << op.getRunningStats().size();
  if (updates && (op.getRunningStats()[0].getType() != op.getRunningMean().getType() ||
                  op.getRunningStats()[1].getType() != op.getRunningVar().getType()))
    return op.emitOpError("updated running statistics must have the running statistics' types");
  return success();
}

} // namespace

LogicalResult LayerNormOp::verify() {
  RankedTensorType in = tensorType(getInput());
  SmallVector<int64_t> normalized;
  if (failed(checkNormalizedRank(*this, in, getNormalizedRank(), normalized)))
    return failure();
  // the leading dims may be dynamic; the normalized ones are the parameters' shape
  if (llvm::any_of(normalized, ShapedType::isDynamic))
    return emitOpError("normalized dims must be static");
  for (Value v : {getWeight(), getBias()})
    if (v && !tensorType(v).hasStaticShape())
      return emitOpError("weight and bias must have static shapes");
  if (
      failed(checkParam(*this, getWeight(), "weight", in, normalized)) ||
      failed(checkParam(*this, getBias(), "bias", in, normalized)))
    return failure();
  return checkResult(*this, in);
}

LogicalResult RmsNormOp::verify() {
  RankedTensorType in = tensorType(getInput());
  SmallVector<int64_t> normalized;
  if (failed(checkNormalizedRank(*this, in, getNormalizedRank(), normalized)) ||
      failed(checkParam(*this, getWeight(), "weight", in, normalized, /*anyFloat=*/true)))
    return failure();
  return checkResult(*this, in);
}

LogicalResult BatchNormOp::verify() {
  bool stats = static_cast<bool>(getRunningMean());
  if (!getTraining() && !stats)
    return emitOpError("without training normalizes with running statistics: they are required");
  bool updates = getTraining() && stats;
  // Every channel is normalized on its own (by its running statistics, or by batch statistics over the
  // other dims, whose count is then known at run time): only the channel dim must be static.
  RankedTensorType in = tensorType(getInput());
  if (!in.hasStaticShape() && in.getRank() >= 2 && in.isDynamicDim(1))
    return emitOpError("channel dim 1 must be static");
  if (failed(checkChannelNorm(*this, updates)))
    return failure();
  if (!updates && (getMomentum() || getNumBatchesTracked()))
    return emitOpError("momentum and num_batches_tracked only update running statistics in training");
  if (updates && static_cast<bool>(getMomentum()) == static_cast<bool>(getNumBatchesTracked()))
    return emitOpError("updating running statistics takes a momentum or num_batches_tracked "
                       "(the cumulative average), exactly one");
  return success();
}

LogicalResult InstanceNormOp::verify() {
  bool stats = static_cast<bool>(getRunningMean());
  if (!getUseInputStats() && !stats)
    return emitOpError("without use_input_stats normalizes with running statistics: they are "
                       "required");
  return checkChannelNorm(*this, getUseInputStats() && stats);
}

LogicalResult GroupNormOp::verify() {
  RankedTensorType in = tensorType(getInput());
  if (in.getRank() < 2)
    return emitOpError("input must be [N, C, *] (rank 2 or more)");
  int64_t c = in.getDimSize(1), g = getGroups();
  if (g < 1 || c % g != 0)
    return emitOpError() << "groups " << g << " must be positive and divide the " << c
                         << " channels";
  SmallVector<int64_t> shape{c};
  if (failed(checkParam(*this, getWeight(), "weight", in, shape)) ||
      failed(checkParam(*this, getBias(), "bias", in, shape)))
    return failure();
  return checkResult(*this, in);
}

LogicalResult NormStatsOp::verify() {
  RankedTensorType in = cast<RankedTensorType>(getInput().getType());
  Type acc = in.getElementType();
  if (acc.isF16() || acc.isBF16())
    acc = Float32Type::get(getContext());
  if (getMean().getType().getElementType() != acc)
    return emitOpError("statistics must be in the input's accumulate type");
  SmallVector<int64_t> kept;
  int64_t previous = -1;
  for (int64_t d : getDims()) {
    if (d <= previous || d >= in.getRank())
      return emitOpError("dims must be increasing dims of the input");
    previous = d;
  }
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (!llvm::is_contained(getDims(), i))
      kept.push_back(in.getDimSize(i));
  if (getMean().getType().getShape() != ArrayRef<int64_t>(kept))
    return emitOpError("statistics must have the input's shape without dims");
  return success();
}
