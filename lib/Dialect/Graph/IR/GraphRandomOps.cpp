//===- GraphRandomOps.cpp - verifiers of the random ops ------------------===//
//
// The parameters each distribution admits (as eager's kernels check them),
// so that GraphToPrim/Random.cpp lowers everything the verifiers accept.
//
//===----------------------------------------------------------------------===//
#include "dyn/Dialect/Graph/IR/GraphDialect.h"

#include <cmath>

using namespace mlir;
using namespace dyn::graph;

LogicalResult RandomOp::verify() {
  double a = getA().convertToDouble(), b = getB().convertToDouble();
  if (!std::isfinite(a) || !std::isfinite(b))
    return emitOpError() << "parameters must be finite";
  if ((int64_t)getOffset() < 0)
    return emitOpError() << "offset " << (int64_t)getOffset() << " is negative";
  if (getSizes().size() != static_cast<size_t>(getType().getNumDynamicDims()))
    return emitOpError() << "needs one size per dynamic result dim (" << getType().getNumDynamicDims()
                         << "), got " << getSizes().size();
  bool isFloat = isa<FloatType>(getType().getElementType());
  switch (getDistribution()) {
  case RandomDistribution::uniform:
    if (!isFloat)
      return emitOpError() << "uniform draws floats";
    if (a > b)
      return emitOpError() << "uniform needs a <= b";
    break;
  case RandomDistribution::normal:
    if (!isFloat)
      return emitOpError() << "normal draws floats";
    if (b < 0)
      return emitOpError() << "normal needs a standard deviation b >= 0";
    break;
  case RandomDistribution::exponential:
    if (!isFloat)
      return emitOpError() << "exponential draws floats";
    if (a <= 0)
      return emitOpError() << "exponential needs a rate a > 0";
    break;
  case RandomDistribution::cauchy:
  case RandomDistribution::log_normal:
    if (!isFloat)
      return emitOpError() << "cauchy and log_normal draw floats";
    if (b <= 0)
      return emitOpError() << "cauchy and log_normal need a scale b > 0";
    break;
  case RandomDistribution::geometric:
    if (!isFloat)
      return emitOpError() << "geometric draws floats";
    if (!(a > 0 && a < 1))
      return emitOpError() << "geometric needs a probability 0 < a < 1";
    break;
  case RandomDistribution::integers:
    if (a != std::floor(a) || b != std::floor(b) || !(b > a) || std::fabs(a) > 0x1p62 ||
        std::fabs(b) > 0x1p62)
      return emitOpError() << "integers needs integral bounds a < b (below 2^62 in magnitude)";
    break;
  }
  return success();
}

LogicalResult DropoutOp::verify() {
  double p = getP().convertToDouble();
  if (!(p >= 0 && p <= 1))
    return emitOpError() << "p must be in [0, 1]";
  if ((int64_t)getOffset() < 0)
    return emitOpError() << "offset " << (int64_t)getOffset() << " is negative";
  int64_t k = getFeatureDims(), rank = getType().getRank();
  if (k < -1 || k > rank)
    return emitOpError() << "feature_dims " << k << " is out of range for rank " << rank;
  return success();
}
