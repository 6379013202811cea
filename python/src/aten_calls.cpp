// ATen's kernels behind dyn's library calls (docs/library_calls.md): the GEMMs, convolutions and
// attention of a compiled graph run exactly what eager PyTorch runs for them (MKL/oneDNN on the CPU,
// cuBLAS/cuDNN/flash attention on CUDA), on dyn's buffers wrapped as tensors without a copy, on
// torch's current stream (the stream dyn's launches use). The only TU of the extension that includes
// torch's headers; dyn's core stays free of torch.
#include "dyn/Compiler/Compiler.h"

#include <ATen/core/Tensor.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <c10/core/InferenceMode.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

at::ScalarType scalarType(int32_t dtype) {
  switch (dtype) {
  case DYN_F32: return at::kFloat;
  case DYN_F64: return at::kDouble;
  case DYN_F16: return at::kHalf;
  case DYN_BF16: return at::kBFloat16;
  case DYN_I64: return at::kLong;
  case DYN_I32: return at::kInt;
  case DYN_I16: return at::kShort;
  case DYN_I8: return at::kChar;
  case DYN_BOOL: return at::kBool;
  }
  throw std::runtime_error("unknown dtype code " + std::to_string(dtype));
}

/// A contiguous tensor over a dyn buffer (no copy; on CUDA the device is read from the pointer).
at::Tensor wrap(const DynBuffer &b, int32_t device) {
  at::IntArrayRef sizes(b.sizes, b.rank);
  auto options = at::TensorOptions()
                     .dtype(scalarType(b.dtype))
                     .device(device == DYN_DEVICE_CUDA ? at::kCUDA : at::kCPU);
  return at::from_blob(b.data, sizes, options);
}

/// Runs `body`, turning an exception into dyn's error convention.
template <typename F>
int guarded(char *error, size_t size, F body) {
  try {
    c10::InferenceMode inference;
    body();
    return 0;
  } catch (const c10::Error &e) {
    std::snprintf(error, size, "%s", e.what_without_backtrace());
  } catch (const std::exception &e) {
    std::snprintf(error, size, "%s", e.what());
  }
  return 1;
}

std::vector<at::Tensor> inputs(const DynLibraryCall *call) {
  std::vector<at::Tensor> ts;
  for (int32_t i = 0; i < call->num_inputs; ++i)
    ts.push_back(wrap(call->inputs[i], call->device));
  return ts;
}

/// params: [transpose_b, has_addend]. out = a @ b (or a @ b^T), [B,]MxK x [B,]KxN (NxK), plus the
/// addend (broadcast) in the GEMM's epilogue when there is one (addmm / baddbmm: one rounding).
int matmul(const DynLibraryCall *call, char *error, size_t size) {
  return guarded(error, size, [&] {
    std::vector<at::Tensor> in = inputs(call);
    at::Tensor out = wrap(*call->output, call->device);
    at::Tensor b = call->params[0] ? in[1].transpose(-1, -2) : in[1];
    bool addend = call->num_params > 1 && call->params[1];
    if (out.dim() == 2)
      addend ? at::addmm_out(out, in[2], in[0], b) : at::mm_out(out, in[0], b);
    else
      addend ? at::baddbmm_out(out, in[2], in[0], b) : at::bmm_out(out, in[0], b);
  });
}

/// params: [nd, stride x nd, padding x nd, dilation x nd, output_padding x nd, groups, transposed,
/// has_bias]; inputs: input, weight, the bias if any.
int convolution(const DynLibraryCall *call, char *error, size_t size) {
  return guarded(error, size, [&] {
    std::vector<at::Tensor> in = inputs(call);
    at::Tensor out = wrap(*call->output, call->device);
    const int64_t *p = call->params;
    int64_t nd = p[0];
    at::IntArrayRef stride(p + 1, nd), padding(p + 1 + nd, nd), dilation(p + 1 + 2 * nd, nd),
        outputPadding(p + 1 + 3 * nd, nd);
    int64_t groups = p[1 + 4 * nd];
    bool transposed = p[2 + 4 * nd] != 0;
    std::optional<at::Tensor> bias;
    if (p[3 + 4 * nd])
      bias = in[2];
    out.copy_(at::convolution(in[0], in[1], bias, stride, padding, dilation, transposed,
                              outputPadding, groups));
  });
}

/// params: [is_causal, has_mask, scale (the bits of an f64)].
int attention(const DynLibraryCall *call, char *error, size_t size) {
  return guarded(error, size, [&] {
    std::vector<at::Tensor> in = inputs(call);
    at::Tensor out = wrap(*call->output, call->device);
    double scale;
    std::memcpy(&scale, &call->params[2], sizeof(scale));
    std::optional<at::Tensor> mask;
    if (call->params[1])
      mask = in[3];
    out.copy_(at::scaled_dot_product_attention(in[0], in[1], in[2], mask, /*dropout_p=*/0.0,
                                               /*is_causal=*/call->params[0] != 0, scale));
  });
}

} // namespace

/// Called once when dyn._C is imported.
void dynRegisterAtenLibraryCalls() {
  dyn::registerLibraryCall("matmul", &matmul);
  dyn::registerLibraryCall("convolution", &convolution);
  dyn::registerLibraryCall("attention", &attention);
}
