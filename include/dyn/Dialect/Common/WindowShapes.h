//===- WindowShapes.h - shape rules of convolution, pooling, attention ----===//
//
// graph.convolution, prim.convolution and loop.convolution (and the pooling
// and attention ops of each dialect) follow PyTorch's shape rules; one
// definition here keeps their verifiers and diagnostics identical. Each
// function returns the result shape, or an empty optional after writing why
// not into `error`.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_DIALECT_COMMON_WINDOWSHAPES_H
#define DYN_DIALECT_COMMON_WINDOWSHAPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <optional>
#include <string>

namespace dyn {

struct ConvolutionParams {
  llvm::ArrayRef<int64_t> stride, padding, dilation;
  llvm::ArrayRef<int64_t> outputPadding; // empty: zeros
  int64_t groups = 1;
  bool transposed = false;
  bool channelsLast = false; // input and result are [N, *spatial, C]
};

/// [N, *spatial, C] <-> [N, C, *spatial]: a channels-last tensor's dims in torch's order, and back.
inline llvm::SmallVector<int64_t> channelsFirstShape(llvm::ArrayRef<int64_t> s) {
  llvm::SmallVector<int64_t> r(s.begin(), s.end());
  if (r.size() >= 3)
    std::rotate(r.begin() + 1, r.end() - 1, r.end());
  return r;
}
inline llvm::SmallVector<int64_t> channelsLastShape(llvm::ArrayRef<int64_t> s) {
  llvm::SmallVector<int64_t> r(s.begin(), s.end());
  if (r.size() >= 3)
    std::rotate(r.begin() + 1, r.begin() + 2, r.end());
  return r;
}

/// The channel count of a convolution result of this shape (its bias must have as many).
inline int64_t resultChannels(llvm::ArrayRef<int64_t> shape, const ConvolutionParams &p) {
  return shape[p.channelsLast ? shape.size() - 1 : 1];
}

/// torch.convolution: input [N, C_in, *spatial] and weight [C_out, C_in/groups, *kernel]
/// ([C_in, C_out/groups, *kernel] when transposed), 1-3 spatial dims; N may be dynamic. With
/// p.channelsLast, input and result are [N, *spatial, C] (the weight keeps torch's order).
inline std::optional<llvm::SmallVector<int64_t>>
convolutionResultShape(llvm::ArrayRef<int64_t> inputDims, llvm::ArrayRef<int64_t> weight,
                       const ConvolutionParams &p, std::string &error) {
  if (p.channelsLast) {
    ConvolutionParams first = p;
    first.channelsLast = false;
    auto shape = convolutionResultShape(channelsFirstShape(inputDims), weight, first, error);
    if (shape)
      return channelsLastShape(*shape);
    return shape;
  }
  llvm::ArrayRef<int64_t> input = inputDims;
  auto fail = [&](const llvm::Twine &why) {
    error = why.str();
    return std::nullopt;
  };
  int64_t rank = input.size(), nd = rank - 2;
  if (nd < 1 || nd > 3)
    return fail("input must be [N, C, *spatial] with 1 to 3 spatial dims");
  if ((int64_t)weight.size() != rank)
    return fail("weight must have the input's rank");
  if ((int64_t)p.stride.size() != nd || (int64_t)p.padding.size() != nd ||
      (int64_t)p.dilation.size() != nd ||
      (!p.outputPadding.empty() && (int64_t)p.outputPadding.size() != nd))
    return fail("stride, padding, dilation and output_padding need one entry per spatial dim");
  if (p.groups < 1)
    return fail("groups must be positive");
  // A dynamic batch dim carries over to the result (the library reads it from the buffers); the
  // output sizes are computed from the others, so they are static.
  for (int64_t d = 1; d < rank; ++d)
    if (mlir::ShapedType::isDynamic(input[d]))
      return fail("input dim " + llvm::Twine(d) + " is dynamic: only the batch dim may be");
  if (llvm::any_of(weight, mlir::ShapedType::isDynamic))
    return fail("weight must have a static shape");
  for (int64_t i = 0; i < nd; ++i) {
    if (p.stride[i] < 1 || p.dilation[i] < 1 || p.padding[i] < 0)
      return fail("stride and dilation must be positive and padding non-negative");
    if (!p.outputPadding.empty()) {
      if (!p.transposed && p.outputPadding[i] != 0)
        return fail("output_padding needs a transposed convolution");
      if (p.outputPadding[i] < 0 ||
          (p.outputPadding[i] >= p.stride[i] && p.outputPadding[i] >= p.dilation[i]))
        return fail("output_padding must be smaller than either stride or dilation");
    }
  }
  int64_t cin = input[1];
  if (cin % p.groups != 0)
    return fail("input channels " + llvm::Twine(cin) + " are not divisible by groups " +
                llvm::Twine(p.groups));
  int64_t cout;
  if (p.transposed) {
    if (weight[0] != cin)
      return fail("a transposed convolution's weight must be [C_in, C_out/groups, *kernel]");
    cout = weight[1] * p.groups;
  } else {
    cout = weight[0];
    if (cout % p.groups != 0 || weight[1] * p.groups != cin)
      return fail("weight must be [C_out, C_in/groups, *kernel] with C_out divisible by groups");
  }
  llvm::SmallVector<int64_t> shape{input[0], cout};
  for (int64_t i = 0; i < nd; ++i) {
    int64_t in = input[2 + i], k = weight[2 + i], s = p.stride[i], d = p.dilation[i],
            pad = p.padding[i], extent = d * (k - 1) + 1;
    int64_t out;
    if (p.transposed) {
      int64_t op = p.outputPadding.empty() ? 0 : p.outputPadding[i];
      out = (in - 1) * s - 2 * pad + extent + op;
    } else {
      if (in + 2 * pad < extent)
        return fail("kernel extent " + llvm::Twine(extent) + " exceeds the padded input size " +
                    llvm::Twine(in + 2 * pad) + " in spatial dim " + llvm::Twine(i));
      out = (in + 2 * pad - extent) / s + 1;
    }
    if (out < 1 || k < 1)
      return fail("spatial dim " + llvm::Twine(i) + " would be empty");
    shape.push_back(out);
  }
  return shape;
}

/// One pooled dim of max/avg pooling (PyTorch's pooling_output_shape): with
/// ceil_mode the last window may hang over the end, but must start inside
/// the input or its left padding.
inline int64_t poolOutputSize(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t d,
                              bool ceilMode) {
  int64_t span = in + 2 * pad - d * (k - 1) - 1;
  if (span < 0)
    return 0;
  int64_t out = (span + (ceilMode ? s - 1 : 0)) / s + 1;
  if (ceilMode && (out - 1) * s >= in + pad)
    --out;
  return out;
}

struct PoolParams {
  llvm::ArrayRef<int64_t> kernel, stride, padding, dilation; // dilation empty: ones
  bool ceilMode = false;
};

/// max_pool / avg_pool over the trailing kernel.size() dims (1-3) of an
/// input with at least one more (batch or channel) dim in front; the dims in
/// front may be dynamic, the pooled ones not.
inline std::optional<llvm::SmallVector<int64_t>>
poolResultShape(llvm::ArrayRef<int64_t> input, const PoolParams &p, std::string &error) {
  auto fail = [&](const llvm::Twine &why) {
    error = why.str();
    return std::nullopt;
  };
  int64_t nd = p.kernel.size(), rank = input.size();
  if (nd < 1 || nd > 3)
    return fail("pooling takes 1 to 3 kernel dims");
  if (rank < nd + 1)
    return fail("input needs a channel dim in front of the pooled dims");
  if ((int64_t)p.stride.size() != nd || (int64_t)p.padding.size() != nd ||
      (!p.dilation.empty() && (int64_t)p.dilation.size() != nd))
    return fail("kernel, stride, padding and dilation need one entry per pooled dim");
  llvm::SmallVector<int64_t> shape(input.take_front(rank - nd));
  for (int64_t i = 0; i < nd; ++i) {
    int64_t k = p.kernel[i], s = p.stride[i], pad = p.padding[i],
            d = p.dilation.empty() ? 1 : p.dilation[i];
    if (k < 1 || s < 1 || d < 1 || pad < 0)
      return fail("kernel, stride and dilation must be positive and padding non-negative");
    if (2 * pad > d * (k - 1) + 1)
      return fail("padding must be at most half of the kernel extent");
    if (mlir::ShapedType::isDynamic(input[rank - nd + i]))
      return fail("pooled dim " + llvm::Twine(i) + " is dynamic: only the dims in front of the pooled ones may be");
    int64_t out = poolOutputSize(input[rank - nd + i], k, s, pad, d, p.ceilMode);
    if (out < 1)
      return fail("pooled dim " + llvm::Twine(i) + " would be empty");
    shape.push_back(out);
  }
  return shape;
}

/// scaled_dot_product_attention: query [..., L, E], key [..., S, E], value
/// [..., S, Ev] with one batch shape; the result is [..., L, Ev]. A mask
/// broadcasts to [..., L, S].
inline std::optional<llvm::SmallVector<int64_t>>
attentionResultShape(llvm::ArrayRef<int64_t> q, llvm::ArrayRef<int64_t> k,
                     llvm::ArrayRef<int64_t> v, std::optional<llvm::ArrayRef<int64_t>> mask,
                     std::string &error) {
  auto fail = [&](const llvm::Twine &why) {
    error = why.str();
    return std::nullopt;
  };
  int64_t rank = q.size();
  if (rank < 3 || (int64_t)k.size() != rank || (int64_t)v.size() != rank)
    return fail("query, key and value must have one rank, 3 or more ([..., L, E])");
  if (q.drop_back(2) != k.drop_back(2) || q.drop_back(2) != v.drop_back(2))
    return fail("query, key and value must have the same batch dims");
  if (q.back() != k.back())
    return fail("query and key must have the same embedding size");
  if (k[rank - 2] != v[rank - 2])
    return fail("key and value must have the same sequence length");
  llvm::SmallVector<int64_t> scores(q.drop_back(1));
  scores.push_back(k[rank - 2]);
  if (mask) {
    if ((int64_t)mask->size() > rank)
      return fail("mask rank exceeds the query's");
    int64_t offset = rank - mask->size();
    for (auto [i, size] : llvm::enumerate(*mask))
      if (size != 1 && size != scores[offset + i])
        return fail("mask does not broadcast to [..., L, S]");
  }
  llvm::SmallVector<int64_t> shape(q.drop_back(1));
  shape.push_back(v.back());
  return shape;
}

/// Fails on `op` unless every operand has the result's element type (the
/// window ops of graph and prim: convolution, pooling, attention).
inline mlir::LogicalResult checkSameElementType(mlir::Operation *op) {
  mlir::Type et = llvm::cast<mlir::ShapedType>(op->getResult(0).getType()).getElementType();
  for (mlir::Value v : op->getOperands())
    if (llvm::cast<mlir::ShapedType>(v.getType()).getElementType() != et)
      return op->emitOpError("operands and result must share one element type");
  return mlir::success();
}

/// Fails on `op` with `error` when no shape exists, or when `result` is not
/// `expected`.
inline mlir::LogicalResult checkResultShape(mlir::Operation *op,
                                            const std::optional<llvm::SmallVector<int64_t>> &expected,
                                            const std::string &error,
                                            llvm::ArrayRef<int64_t> result) {
  if (!expected)
    return op->emitOpError() << error;
  if (result != llvm::ArrayRef<int64_t>(*expected)) {
    mlir::InFlightDiagnostic diag = op->emitOpError() << "result shape must be [";
    llvm::interleaveComma(*expected, diag, [&](int64_t d) {
      if (mlir::ShapedType::isDynamic(d))
        diag << "?";
      else
        diag << d;
    });
    return diag << "]";
  }
  return mlir::success();
}

/// The verifier shared by graph.scaled_dot_product_attention and prim.attention: one element type
/// for query, key, value and result; a boolean or same-typed mask, never with is_causal; the result
/// shape of attentionResultShape.
template <typename AttentionOp> mlir::LogicalResult verifyAttention(AttentionOp op) {
  auto shapeOf = [](mlir::Value v) { return mlir::cast<mlir::RankedTensorType>(v.getType()); };
  mlir::Type et = op.getType().getElementType();
  for (mlir::Value v : {op.getQuery(), op.getKey(), op.getValue()})
    if (shapeOf(v).getElementType() != et)
      return op.emitOpError("query, key, value and result must share one element type");
  std::optional<llvm::ArrayRef<int64_t>> mask;
  if (op.getMask()) {
    mlir::Type mt = shapeOf(op.getMask()).getElementType();
    if (!mt.isInteger(1) && mt != et)
      return op.emitOpError("mask must be boolean or of the query's element type");
    if (op.getIsCausal())
      return op.emitOpError("takes a mask or is_causal, not both");
    mask = shapeOf(op.getMask()).getShape();
  }
  std::string error;
  auto shape = attentionResultShape(shapeOf(op.getQuery()).getShape(), shapeOf(op.getKey()).getShape(),
                                    shapeOf(op.getValue()).getShape(), mask, error);
  return checkResultShape(op, shape, error, op.getType().getShape());
}

} // namespace dyn

#endif // DYN_DIALECT_COMMON_WINDOWSHAPES_H
