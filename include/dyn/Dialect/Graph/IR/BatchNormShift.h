//===- BatchNormShift.h - batch norm's one-pass moments -------*- C++ -*-===//
//
// Training batch norm's statistics take one pass over the input (the lowering
// of graph.batch_norm and dyn-graph-autodiff's written-out forward): the sums
// of d = x - k and d * d, k being each channel's mean over the input's first
// samples. With k that close to the mean, sum(d^2) - sum(d)^2 / n cancels no
// more than the two-pass form (the shifted-data algorithm); a single value as
// k loses up to 40x more in float32.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_DIALECT_GRAPH_IR_BATCHNORMSHIFT_H
#define DYN_DIALECT_GRAPH_IR_BATCHNORMSHIFT_H

#include <algorithm>
#include <cstdint>
#include <optional>

namespace dyn::graph {

/// The values of each channel the shift averages, at least.
constexpr int64_t kBatchNormShiftValues = 64;

/// How many leading samples (along dim 0, of `batch`) the shift averages, each holding `perSample` values of
/// a channel: as few as give kBatchNormShiftValues, at most all.
inline int64_t batchNormShiftSamples(int64_t batch, int64_t perSample) {
  perSample = std::max<int64_t>(perSample, 1);
  return std::min<int64_t>(batch, (kBatchNormShiftValues + perSample - 1) / perSample);
}

/// The leading samples the one-pass moments' shift averages, for a batch of `batch` (`?`: ShapedType's
/// kDynamic, a negative value) holding `perSample` values of a channel each (0 where a reduced dim
/// other than the batch is `?`): nullopt where the two-pass moments are used instead. A runtime batch
/// has at least one sample, so one sample is the shift where it alone holds kBatchNormShiftValues.
inline std::optional<int64_t> batchNormShiftRows(int64_t batch, int64_t perSample) {
  if (perSample <= 0)
    return std::nullopt;
  if (batch < 0)
    return perSample >= kBatchNormShiftValues ? std::optional<int64_t>(1) : std::nullopt;
  if (batch * perSample <= 1)
    return std::nullopt;
  return batchNormShiftSamples(batch, perSample);
}

} // namespace dyn::graph

#endif // DYN_DIALECT_GRAPH_IR_BATCHNORMSHIFT_H
