// ATen's kernels behind dyn's library calls (docs/library_calls.md): the GEMMs, convolutions and
// attention of a compiled graph run exactly what eager PyTorch runs for them (MKL/oneDNN on the CPU,
// cuBLAS/cuDNN/flash attention on CUDA), on dyn's buffers wrapped as tensors without a copy, on
// torch's current stream (the stream dyn's launches use). The only TU of the extension that includes
// torch's headers; dyn's core stays free of torch. Kept as one file past ~800 lines on purpose: every TU
// that includes torch's headers costs over a minute to compile on the project's 2-core machines. The
// library ops' parameter decoding and their single-function calls are generated from the registry
// (AtenCalls.inc); the bodies here are those of the calls that need more than one ATen function.
#include <Python.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "dyn/Compiler/Compiler.h"

#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/ConvUtils.h>
#include <ATen/ops/_fused_sdp_choice.h>
#include <ATen/ops/_safe_softmax.h>
#include <ATen/ops/_scaled_dot_product_efficient_attention.h>
#include <ATen/ops/_scaled_dot_product_efficient_attention_backward.h>
#include <ATen/ops/_scaled_dot_product_flash_attention.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_backward.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu_backward.h>
#include <ATen/ops/_upsample_bicubic2d_aa.h>
#include <ATen/ops/_upsample_bilinear2d_aa.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/alpha_dropout.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bernoulli.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/cudnn_convolution.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/embedding_dense_backward.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/feature_alpha_dropout.h>
#include <ATen/ops/feature_dropout.h>
#include <ATen/ops/fft_hfft.h>
#include <ATen/ops/fft_hfft2.h>
#include <ATen/ops/fft_hfftn.h>
#include <ATen/ops/fft_irfft.h>
#include <ATen/ops/fft_irfft2.h>
#include <ATen/ops/fft_irfftn.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/gru.h>
#include <ATen/ops/lstm.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/max_pool2d_with_indices_backward.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/multinomial.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/rnn_relu.h>
#include <ATen/ops/rnn_tanh.h>
#include <ATen/ops/rrelu.h>
#include <ATen/ops/segment_reduce.h>
#include <ATen/ops/upsample_bicubic2d.h>
#include <ATen/ops/upsample_bilinear2d.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/python_variable.h>
// the headers of the ATen functions the registry's `aten` expressions call
#define GEN_ATEN_INCLUDES
#include "dyn/Dialect/Graph/IR/AtenCalls.inc"
#include <c10/core/CPUAllocator.h>
#include <c10/core/InferenceMode.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <tuple>
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
  case DYN_U8: return at::kByte;
  }
  throw std::runtime_error("unknown dtype code " + std::to_string(dtype));
}

/// The device of a call's buffers: on CUDA read once per call from a buffer's pointer (from_blob
/// would ask the driver for every buffer it wraps).
at::Device deviceOf(const DynLibraryCall *call) {
  if (call->device != DYN_DEVICE_CUDA)
    return at::Device(at::kCPU);
  const DynBuffer &b = call->num_inputs ? call->inputs[0] : call->outputs[0];
  return at::globalContext().getDeviceFromPtr(b.data, at::kCUDA);
}

/// A tensor over a dyn buffer (no copy): contiguous, or with the given strides.
at::Tensor wrapStrided(const DynBuffer &b, const at::Device &device, at::IntArrayRef sizes,
                       at::OptionalIntArrayRef strides) {
  auto options = at::TensorOptions().dtype(scalarType(b.dtype)).device(device);
  return at::for_blob(b.data, sizes).strides(strides).options(options).target_device(device).make_tensor();
}

at::Tensor wrap(const DynBuffer &b, const at::Device &device) {
  at::OptionalIntArrayRef strides;
  if (b.strides)
    strides = at::IntArrayRef(b.strides, b.rank);
  return wrapStrided(b, device, at::IntArrayRef(b.sizes, b.rank), strides);
}

/// A dyn buffer [N, *spatial, C] (contiguous) as the tensor [N, C, *spatial] in channels-last memory
/// format (a view: no copy).
at::Tensor wrapChannelsLast(const DynBuffer &b, const at::Device &device) {
  int64_t rank = b.rank, channels = b.sizes[rank - 1];
  std::vector<int64_t> sizes{b.sizes[0], channels}, strides(rank);
  sizes.insert(sizes.end(), b.sizes + 1, b.sizes + rank - 1);
  int64_t stride = channels;
  strides[1] = 1;
  for (int64_t d = rank - 1; d >= 2; --d) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  strides[0] = stride;
  return wrapStrided(b, device, sizes, strides);
}

/// out <- result. A small CPU result laid out as out (contiguous, or both channels-last) of out's
/// dtype is one memcpy: copy_'s TensorIterator setup costs more than such a copy (9 us for 8 KiB
/// against well under 1 us); larger ones keep copy_ (parallel, and for any layout, dtype or device).
void copyInto(at::Tensor &out, const at::Tensor &result) {
  if (!out.is_cuda() && !result.is_cuda() && result.scalar_type() == out.scalar_type() &&
      result.sizes() == out.sizes() && result.strides() == out.strides() &&
      result.is_non_overlapping_and_dense() && !result.is_conj() && !result.is_neg() &&
      result.nbytes() <= (size_t(64) << 10)) {
    if (result.nbytes())
      std::memmove(out.data_ptr(), result.const_data_ptr(), result.nbytes());
    return;
  }
  out.copy_(result);
}

/// ATen's CPU convolution (oneDNN) and its backward return fresh tensors: no `out=` form writes a given
/// buffer. While an `AdoptCpuResults` is alive, the first CPU allocation on this thread of exactly the size
/// of one of its buffers is that buffer itself (never freed with the tensor), so the kernel writes dyn's
/// buffer and the copy of a fresh result (plus its page faults: a backward's weight gradients, allocated,
/// copied and freed at every call, doubled a ResNet's faults) goes away. Where another allocation took a
/// buffer (a temporary of the same size, dead before the call returns, since no input shares an output's
/// buffer), the result is copied over it as before. Buffers of equal sizes are not both offered: the first
/// result allocated would take the other's. The allocator wraps torch's CPU allocator once, at the first
/// use, and passes every other allocation through; a CPU allocator installed after it replaces it, and
/// results are copied again.
///
/// Inside dyn's library calls and for compiled functions' outputs (a `HostScope`), allocations of 64 KiB and
/// more come from dyn's caching host allocator (lib/Runtime/HostAllocator.cpp) instead: through glibc they
/// are fresh mmap'ed pages each time, and a ResNet-18's training step page-faulted twice as often as eager's
/// on its gradients and oneDNN's buffers (9,300 faults against 4,600). Their memory goes back to that cache
/// whenever the tensor dies, in or out of the scope.
class AdoptingCpuAllocator final : public c10::Allocator {
public:
  static constexpr int kSlots = 2;
  static constexpr size_t kMinCached = size_t(64) << 10; // the host cache's smallest cached block
  enum class Scope { None, Call, Outputs };
  explicit AdoptingCpuAllocator(c10::Allocator *base) : base(base) {}

  c10::DataPtr allocate(size_t n) override {
    Pending &p = pending();
    for (int k = 0; k < kSlots; ++k) {
      if (p.data[k] && n == p.bytes[k]) {
        void *data = p.data[k];
        p.data[k] = nullptr;
        p.taken[k] = data;
        return {data, data, &keep, c10::Device(c10::kCPU)};
      }
    }
    if (scope() != Scope::None && n >= kMinCached) {
      void *data = dyn::hostAllocate(n, /*counted=*/scope() == Scope::Call);
      if (data) {
        Served &s = served();
        std::lock_guard<std::mutex> lock(s.mu);
        s.ptrs.insert(data);
        return {data, data, &freeServed, c10::Device(c10::kCPU)};
      }
    }
    return base->allocate(n);
  }
  static Scope &scope() {
    thread_local Scope s = Scope::None;
    return s;
  }
  // raw_allocate/raw_deallocate pair through raw_deleter: an adopted buffer is never freed.
  c10::DeleterFnPtr raw_deleter() const override { return &rawFree; }
  void copy_data(void *dest, const void *src, size_t count) const override {
    base->copy_data(dest, src, count);
  }

  struct Pending {
    void *data[kSlots] = {}; // the buffers the next allocations of `bytes` get
    size_t bytes[kSlots] = {};
    void *taken[kSlots] = {}; // the buffers last handed out, never to be freed
  };
  static Pending &pending() {
    thread_local Pending p;
    return p;
  }
  static AdoptingCpuAllocator *installed() {
    static AdoptingCpuAllocator *self = [] {
      auto *a = new AdoptingCpuAllocator(c10::GetCPUAllocator()); // lives as long as the process
      baseRawDeleter() = a->base->raw_deleter();
      c10::SetCPUAllocator(a, /*priority=*/0);
      return a;
    }();
    return self;
  }

private:
  c10::Allocator *base;
  static void keep(void *) {}
  static c10::DeleterFnPtr &baseRawDeleter() {
    static c10::DeleterFnPtr d = nullptr;
    return d;
  }
  /// The host cache's blocks handed out: raw_allocate's pointers come back through rawFree, which must
  /// tell them from the base allocator's.
  struct Served {
    std::mutex mu;
    std::unordered_set<void *> ptrs;
  };
  static Served &served() {
    static Served *s = new Served; // never destroyed: tensors may die at exit
    return *s;
  }
  static bool forgetServed(void *ptr) {
    Served &s = served();
    std::lock_guard<std::mutex> lock(s.mu);
    return s.ptrs.erase(ptr) != 0;
  }
  static void freeServed(void *ptr) {
    forgetServed(ptr);
    dyn::hostFree(ptr);
  }
  static void rawFree(void *ptr) {
    for (void *t : pending().taken)
      if (ptr && ptr == t)
        return;
    if (ptr && forgetServed(ptr))
      return dyn::hostFree(ptr);
    if (c10::DeleterFnPtr d = baseRawDeleter())
      d(ptr);
  }
};

/// Large CPU allocations from dyn's host cache while alive (AdoptingCpuAllocator).
class HostScope {
public:
  explicit HostScope(AdoptingCpuAllocator::Scope s) : saved(AdoptingCpuAllocator::scope()) {
    if (AdoptingCpuAllocator::installed() == c10::GetCPUAllocator())
      AdoptingCpuAllocator::scope() = s;
  }
  ~HostScope() { AdoptingCpuAllocator::scope() = saved; }

private:
  AdoptingCpuAllocator::Scope saved;
};

class AdoptCpuResults {
public:
  /// Offers each (non-null) CPU buffer to the allocations of the call that follows.
  explicit AdoptCpuResults(std::initializer_list<at::Tensor *> buffers) {
    auto &p = AdoptingCpuAllocator::pending();
    int k = 0;
    for (at::Tensor *out : buffers) {
      if (!out || out->is_cuda() || out->nbytes() == 0 || k == AdoptingCpuAllocator::kSlots)
        continue;
      if (AdoptingCpuAllocator::installed() != c10::GetCPUAllocator())
        return;
      if (std::find(p.bytes, p.bytes + k, out->nbytes()) != p.bytes + k)
        continue;
      p.data[k] = out->data_ptr();
      p.bytes[k] = out->nbytes();
      outs.push_back(out->data_ptr());
      ++k;
    }
  }
  ~AdoptCpuResults() {
    auto &p = AdoptingCpuAllocator::pending();
    for (int k = 0; k < AdoptingCpuAllocator::kSlots; ++k)
      p.data[k] = nullptr, p.bytes[k] = 0;
  }
  /// Each out <- its result, unless the result is out's buffer. A result in one of the offered buffers
  /// but not its own out's as its out (another layout: a backend that allocates one shape and returns a
  /// view; or the buffer of another result) is cloned before any out is written.
  void store(std::initializer_list<std::pair<at::Tensor *, at::Tensor>> results) {
    std::vector<std::pair<at::Tensor *, at::Tensor>> rs(results);
    for (auto &[out, r] : rs)
      if (r.defined() && !adopted(*out, r) && r.has_storage() && !r.is_cuda() &&
          std::find(outs.begin(), outs.end(), r.storage().data()) != outs.end())
        r = r.clone();
    for (auto &[out, r] : rs)
      if (r.defined() && !adopted(*out, r))
        copyInto(*out, r);
  }

private:
  std::vector<void *> outs;
  static bool adopted(const at::Tensor &out, const at::Tensor &result) {
    return !out.is_cuda() && result.data_ptr() == out.data_ptr() && result.sizes() == out.sizes() &&
           result.strides() == out.strides() && result.scalar_type() == out.scalar_type();
  }
};

/// Runs `body`, turning an exception into dyn's error convention.
template <typename F>
int guarded(char *error, size_t size, F body) {
  try {
    c10::InferenceMode inference;
    HostScope cached(AdoptingCpuAllocator::Scope::Call);
    body();
    return 0;
  } catch (const c10::Error &e) {
    std::snprintf(error, size, "%s", e.what_without_backtrace());
  } catch (const std::exception &e) {
    std::snprintf(error, size, "%s", e.what());
  }
  return 1;
}

std::vector<at::Tensor> inputs(const DynLibraryCall *call, const at::Device &device) {
  std::vector<at::Tensor> ts;
  for (int32_t i = 0; i < call->num_inputs; ++i)
    ts.push_back(wrap(call->inputs[i], device));
  return ts;
}

/// params: [transpose_b, has_addend, transpose_a]. out = op(a) @ op(b), [B,]MxK (KxM) x [B,]KxN (NxK),
/// plus the addend (broadcast) in the GEMM's epilogue when there is one (addmm / baddbmm: one rounding).
int matmul(const DynLibraryCall *call, char *error, size_t size) {
  return guarded(error, size, [&] {
    at::Device device = deviceOf(call);
    std::vector<at::Tensor> in = inputs(call, device);
    at::Tensor out = wrap(call->outputs[0], device);
    at::Tensor b = call->params[0] ? in[1].transpose(-1, -2) : in[1];
    at::Tensor a = call->num_params > 2 && call->params[2] ? in[0].transpose(-1, -2) : in[0];
    bool addend = call->num_params > 1 && call->params[1];
    // A CUDA product whose rows are not a multiple of 16 bytes (an LM head's 50257 logits) makes cuBLAS
    // take its unaligned kernels (GPT-2's logits in bfloat16 on an H200: 0.42 ms, against 0.06 ms with
    // rows padded to 50264); the product goes to padded rows, then into `out` with one copy. A 2-d
    // product does so by chunks of rows whose padded rows lie in `out`'s own rows not written yet (an
    // aligned start after the chunk's rows): about half of the rows left at a time, the last few dozen
    // rows unpadded, and no memory beyond `out` (a padded copy of the whole product doubled the call's
    // peak; chunks of a buffer of their own added 16 MiB to GPT-2's).
    int64_t n = out.size(-1), align = 16 / (int64_t)out.element_size();
    int64_t np = (n + align - 1) / align * align;
    at::Tensor dst = out;
    if (out.is_cuda() && n % align != 0 && out.numel() * (int64_t)out.element_size() >= (1 << 20)) {
      if (out.dim() == 2 && out.is_contiguous() && reinterpret_cast<uintptr_t>(out.data_ptr()) % 16 == 0) {
        constexpr int64_t kMinPaddedRows = 32;
        int64_t m = out.size(0), total = m * n, r0 = 0;
        at::Tensor flat = out.view(-1);
        auto gemm = [&](at::Tensor d, int64_t r0, int64_t r) {
          at::Tensor ar = a.narrow(0, r0, r);
          if (addend) {
            at::Tensor c = in[2].dim() == 2 && in[2].size(0) == m ? in[2].narrow(0, r0, r) : in[2];
            at::addmm_out(d, c, ar, b);
          } else {
            at::mm_out(d, ar, b);
          }
        };
        while (r0 < m) {
          auto start = [&](int64_t r) { return ((r0 + r) * n + align - 1) / align * align; };
          int64_t r = (m - r0) * n / (n + np);
          while (r > 0 && start(r) + r * np > total)
            --r;
          if (r < kMinPaddedRows)
            break;
          at::Tensor d = flat.narrow(0, start(r), r * np).view({r, np}).narrow(1, 0, n);
          gemm(d, r0, r);
          out.narrow(0, r0, r).copy_(d); // the next chunk's GEMM follows it on the stream
          r0 += r;
        }
        if (r0 < m)
          gemm(out.narrow(0, r0, m - r0), r0, m - r0);
        return;
      }
      std::vector<int64_t> padded(out.sizes().begin(), out.sizes().end());
      padded.back() = np;
      dst = at::empty(padded, out.options()).narrow(-1, 0, n);
    }
    if (out.dim() == 2)
      addend ? at::addmm_out(dst, in[2], a, b) : at::mm_out(dst, a, b);
    else
      addend ? at::baddbmm_out(dst, in[2], a, b) : at::bmm_out(dst, a, b);
    if (!dst.is_same(out))
      out.copy_(dst);
  });
}

/// Where eager's convolution runs cuDNN on these (contiguous) buffers, cuDNN writes dyn's output
/// buffer itself, then the bias is added in place, as eager's _convolution does for its Cudnn backend:
/// the same kernels without the copy of a fresh result into `out` (a full read and write of every
/// convolution's output). Returns false where eager would take another backend (depthwise kernels,
/// the CPU's, transposed convolutions, 1-d ones that eager reshapes to 2-d).
bool cudnnIntoOutput(const at::Tensor &input, const at::Tensor &weight,
                     const std::optional<at::Tensor> &bias, at::IntArrayRef stride,
                     at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                     at::IntArrayRef outputPadding, int64_t groups, at::Tensor &out) {
  if (!input.is_cuda() || transposed || (input.dim() != 4 && input.dim() != 5))
    return false;
  std::optional<c10::SymIntArrayRef> biasSizes;
  if (bias)
    biasSizes = bias->sym_sizes();
  auto backend = at::native::select_conv_backend(
      input, weight, bias, c10::fromIntArrayRefSlow(stride), c10::fromIntArrayRefSlow(padding),
      c10::fromIntArrayRefSlow(dilation), transposed, c10::fromIntArrayRefSlow(outputPadding),
      c10::SymInt(groups), biasSizes);
  // cuDNN writes `out` in its own layout (cudnn_convolution_forward_out): the format eager picks
  // must be that one.
  if (backend != at::native::ConvBackend::Cudnn ||
      !out.is_contiguous(at::native::_determine_backend_memory_format(input, weight, backend)))
    return false;
  auto &ctx = at::globalContext();
  at::cudnn_convolution_out(out, input, weight, padding, stride, dilation, groups,
                            ctx.benchmarkCuDNN(),
                            ctx.deterministicCuDNN() || ctx.deterministicAlgorithms(),
                            ctx.allowTF32CuDNN(at::Float32Op::CONV));
  if (bias) {
    std::vector<int64_t> shape(input.dim(), 1);
    shape[1] = -1;
    out.add_(bias->reshape(shape));
  }
  return true;
}

/// params: [nd, stride x nd, padding x nd, dilation x nd, output_padding x nd, groups, transposed,
/// has_bias, channels_last]; inputs: input, weight, the bias if any. channels_last: input and
/// output buffers are [N, *spatial, C], torch's channels-last memory format, which eager's
/// convolution keeps (its oneDNN and cuDNN kernels run on it without reorders).
int convolution(const DynLibraryCall *call, char *error, size_t size) {
  return guarded(error, size, [&] {
    at::Device device = deviceOf(call);
    std::vector<at::Tensor> in = inputs(call, device);
    const int64_t *p = call->params;
    bool channelsLast = call->num_params > 4 + 4 * p[0] && p[4 + 4 * p[0]];
    at::Tensor out = channelsLast ? wrapChannelsLast(call->outputs[0], device)
                                  : wrap(call->outputs[0], device);
    if (channelsLast)
      in[0] = wrapChannelsLast(call->inputs[0], device);
    int64_t nd = p[0];
    at::IntArrayRef stride(p + 1, nd), padding(p + 1 + nd, nd), dilation(p + 1 + 2 * nd, nd),
        outputPadding(p + 1 + 3 * nd, nd);
    int64_t groups = p[1 + 4 * nd];
    bool transposed = p[2 + 4 * nd] != 0;
    std::optional<at::Tensor> bias;
    if (p[3 + 4 * nd])
      bias = in[2];
    if (cudnnIntoOutput(in[0], in[1], bias, stride, padding, dilation, transposed, outputPadding,
                        groups, out))
      return;
    AdoptCpuResults adopt({&out});
    adopt.store({{&out, at::convolution(in[0], in[1], bias, stride, padding, dilation, transposed,
                                        outputPadding, groups)}});
  });
}

/// params: [is_causal, has_mask, scale (the bits of an f64)].
int attention(const DynLibraryCall *call, char *error, size_t size) {
  return guarded(error, size, [&] {
    at::Device device = deviceOf(call);
    std::vector<at::Tensor> in = inputs(call, device);
    at::Tensor out = wrap(call->outputs[0], device);
    double scale;
    std::memcpy(&scale, &call->params[2], sizeof(scale));
    std::optional<at::Tensor> mask;
    if (call->params[1])
      mask = in[3];
    copyInto(out, at::scaled_dot_product_attention(in[0], in[1], in[2], mask, /*dropout_p=*/0.0,
                                                   /*is_causal=*/call->params[0] != 0, scale));
  });
}

//===----------------------------------------------------------------------===//
// Calls by name (loop.library_call): the registry's library ops
// (GraphLibraryOps.td). Each reads its inputs and its parameters (the graph
// op's attributes in declaration order, GraphToPrim/LibraryCalls.cpp) into the
// typed struct dyn-tblgen generates from the op's record (AtenCalls.inc), runs
// the op's `aten` expression, or its body below where it has none, and copies
// each result into its output buffer (ATen's linalg results are often
// column-major).
//===----------------------------------------------------------------------===//

/// A call's inputs and its parameters, read in order.
struct Args {
  const DynLibraryCall *call;
  std::vector<at::Tensor> in;
  int32_t next = 0;
  int64_t i() {
    if (next >= call->num_params)
      throw std::runtime_error("library call '" + std::string(call->name) + "' has too few parameters");
    return call->params[next++];
  }
  bool b() { return i() != 0; }
  double f() {
    int64_t bits = i();
    double d;
    std::memcpy(&d, &bits, sizeof(d));
    return d;
  }
  std::string s() {
    int64_t n = i();
    std::string text;
    for (int64_t k = 0; k < n; ++k)
      text.push_back((char)i());
    return text;
  }
  std::vector<int64_t> ints() {
    int64_t n = i();
    std::vector<int64_t> v;
    for (int64_t k = 0; k < n; ++k)
      v.push_back(i());
    return v;
  }
  /// A parameter past the op's attributes that dyn-propagate-layouts may append (channels-last buffers).
  bool trailingFlag() { return next < call->num_params && b(); }
};

#define GEN_ATEN_PARAMS
#include "dyn/Dialect/Graph/IR/AtenCalls.inc"

void store(const DynLibraryCall *call, int32_t k, const at::Tensor &r) {
  if (k >= call->num_outputs)
    throw std::runtime_error("library call '" + std::string(call->name) + "' has too few outputs");
  at::Tensor out = wrap(call->outputs[k], deviceOf(call));
  if (out.sizes() != r.sizes())
    throw std::runtime_error("library call '" + std::string(call->name) + "': result " + std::to_string(k) +
                             " has shape " + c10::str(r.sizes()) + ", its buffer " + c10::str(out.sizes()));
  copyInto(out, r);
}

template <typename... Ts>
void store(const DynLibraryCall *call, const std::tuple<Ts...> &rs) {
  int32_t k = 0;
  std::apply([&](const auto &...r) { (store(call, k++, r), ...); }, rs);
}
void store(const DynLibraryCall *call, const at::Tensor &r) { store(call, 0, r); }

/// The input gradient of a large stride-1 cuDNN convolution written into dyn's buffer: it is the
/// convolution of the output gradient with the weight flipped in space and its channel dims swapped,
/// at padding dilation * (k - 1) - padding, which cuDNN's forward call writes in place
/// (cudnnIntoOutput), where convolution_backward's fresh result would be copied over. Returns false
/// where that does not apply (strided, grouped or transposed convolutions, paddings past the kernel,
/// small ones, where the weight's flip costs more than the copy it saves, the CPU).
bool inputGradientIntoOutput(Args &a, const std::vector<int64_t> &stride, const std::vector<int64_t> &padding,
                             const std::vector<int64_t> &dilation, int64_t groups, bool transposed,
                             bool channelsLast) {
  const at::Tensor &grad = a.in[0], &input = a.in[1], &weight = a.in[2];
  int64_t nd = weight.dim() - 2;
  if (!grad.is_cuda() || transposed || groups != 1 || (nd != 2 && nd != 3) || input.numel() < (int64_t(1) << 22))
    return false;
  std::vector<int64_t> flipped(nd), pad(nd), ones(nd, 1), zeros(nd, 0);
  for (int64_t d = 0; d < nd; ++d) {
    int64_t reach = dilation[d] * (weight.size(d + 2) - 1);
    if (stride[d] != 1 || padding[d] > reach)
      return false;
    flipped[d] = d + 2;
    pad[d] = reach - padding[d];
  }
  at::MemoryFormat format = channelsLast ? (nd == 2 ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::ChannelsLast3d)
                                         : at::MemoryFormat::Contiguous;
  at::Tensor w = weight.flip(flipped).transpose(0, 1).contiguous(format);
  at::Device device = deviceOf(a.call);
  at::Tensor out = channelsLast ? wrapChannelsLast(a.call->outputs[0], device) : wrap(a.call->outputs[0], device);
  return cudnnIntoOutput(grad, w, std::nullopt, ones, pad, dilation, false, zeros, 1, out);
}

/// Attention's query, key and value gradients by the math formula (eager's math backward, in float32
/// for halves): the fallback of attention_backward where ATen's autograd cannot run.
std::vector<at::Tensor> attentionMathBackward(const at::Tensor &grad, const at::Tensor &query,
                                              const at::Tensor &key, const at::Tensor &value,
                                              const std::optional<at::Tensor> &mask, bool causal, double scale) {
  auto up = [](const at::Tensor &t) { return t.element_size() < 4 ? t.to(at::kFloat) : t; };
  at::Tensor q = up(query), k = up(key), v = up(value), g = up(grad);
  at::Tensor scores = at::matmul(q, k.transpose(-2, -1)).mul(scale);
  if (causal)
    scores = scores.masked_fill(
        at::ones({query.size(-2), key.size(-2)}, scores.options().dtype(at::kBool)).triu(1), -INFINITY);
  if (mask)
    scores = mask->scalar_type() == at::kBool ? scores.masked_fill(mask->logical_not(), -INFINITY)
                                              : scores.add(up(*mask));
  at::Tensor p = at::_safe_softmax(scores, -1);
  at::Tensor dv = at::matmul(p.transpose(-2, -1), g);
  at::Tensor dp = at::matmul(g, v.transpose(-2, -1));
  at::Tensor ds = p.mul(dp.sub(dp.mul(p).sum(-1, true)));
  return {at::matmul(ds, k).mul(scale).to(query.scalar_type()),
          at::matmul(ds.transpose(-2, -1), q).mul(scale).to(key.scalar_type()), dv.to(value.scalar_type())};
}

/// Eager's attention run again and differentiated by ATen's autograd (graph.attention_backward, and
/// graph.attention_lse_backward where no fused kernel ran).
std::vector<at::Tensor> rerunAttentionBackward(const at::Tensor &grad, const at::Tensor &query, const at::Tensor &key,
                                               const at::Tensor &value, const std::optional<at::Tensor> &mask,
                                               bool causal, double scale) {
  // ATen's autograd engine refuses to run under the GIL, which the GPU launch path holds
  struct WithoutGil {
    PyThreadState *saved = PyGILState_Check() ? PyEval_SaveThread() : nullptr;
    ~WithoutGil() {
      if (saved)
        PyEval_RestoreThread(saved);
    }
  } withoutGil;
  // outside the calls' inference mode, on tensors made outside it (inference tensors cannot be
  // differentiated)
  c10::InferenceMode normal(false);
  at::AutoGradMode enable(true);
  // (the caller's tensors may be inference tensors: aliases of their memory made here are not)
  auto alias = [](const at::Tensor &t) { return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options()); };
  try {
    at::Tensor q = alias(query).requires_grad_(), k = alias(key).requires_grad_(), v = alias(value).requires_grad_();
    std::optional<at::Tensor> m;
    if (mask)
      m = alias(*mask);
    at::Tensor out = at::scaled_dot_product_attention(q, k, v, m, 0.0, causal, scale);
    return torch::autograd::grad({out}, {q, k, v}, {alias(grad)});
  } catch (const std::exception &e) {
    TORCH_WARN_ONCE("dyn: attention's backward took the math formula (", e.what(), ")");
    return attentionMathBackward(grad, query, key, value, mask, causal, scale);
  }
}

/// The random state of graph.attention_lse's dropout, for its backward. Flash attention returns it on the
/// device ([seed, offset] as uint64), kept in the op's `rng` result. The memory-efficient kernel returns it on
/// the host and its backward reads it there (outside CUDA-graph capture): the forward also writes it into
/// `rng` and records it here, keyed by that buffer's address, so that the backward does not copy it back
/// (a synchronization per layer). The saved `rng` buffer stays allocated until the backward has run, so no
/// other forward records at its address meanwhile; a miss (the values copied elsewhere) reads the device.
struct AttentionRng {
  std::mutex mutex;
  std::unordered_map<const void *, std::pair<int64_t, int64_t>> byBuffer;
  static AttentionRng &get() {
    static AttentionRng rng;
    return rng;
  }
};

/// The memory-efficient kernel's dropout state (host seed and offset, or device ones under CUDA-graph capture)
/// written into the op's `rng` result and, from the host, recorded for the backward.
void keepEfficientRng(const DynBuffer &buffer, const at::Device &device, const at::Tensor &seed,
                      const at::Tensor &offset) {
  at::Tensor rng = wrap(buffer, device);
  if (seed.is_cuda()) {
    rng.select(0, 0).copy_(seed);
    rng.select(0, 1).copy_(offset);
    return;
  }
  int64_t s = seed.item<int64_t>(), o = offset.item<int64_t>();
  rng.select(0, 0).fill_(s);
  rng.select(0, 1).fill_(o);
  AttentionRng &state = AttentionRng::get();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.byBuffer[buffer.data] = {s, o};
}

/// The host seed and offset the memory-efficient backward kernel reads for the forward's `rng` (zeros without
/// dropout: the kernel reads none).
std::pair<at::Tensor, at::Tensor> efficientRng(const at::Tensor &rng, double p) {
  at::Tensor seed = at::zeros({}, at::kLong), offset = at::zeros({}, at::kLong);
  if (p == 0.0)
    return {seed, offset};
  std::optional<std::pair<int64_t, int64_t>> known;
  {
    AttentionRng &state = AttentionRng::get();
    std::lock_guard<std::mutex> lock(state.mutex);
    auto it = state.byBuffer.find(rng.data_ptr());
    if (it != state.byBuffer.end())
      known = it->second;
  }
  if (!known) {
    at::Tensor host = rng.cpu();
    known = {host[0].item<int64_t>(), host[1].item<int64_t>()};
  }
  seed.fill_(known->first);
  offset.fill_(known->second);
  return {seed, offset};
}

/// A mask as the memory-efficient kernel's additive bias, as SDPA makes it: a boolean mask as 0 / -inf in the
/// query's dtype, its last dim padded to a multiple of 16 (the kernel's alignment), expanded to [B, H, L, S].
at::Tensor attentionBias(const at::Tensor &mask, const at::Tensor &q, const at::Tensor &k) {
  at::Tensor bias = mask.scalar_type() == at::kBool
                        ? at::zeros(mask.sizes(), q.options()).masked_fill_(mask.logical_not(), -INFINITY)
                        : mask.to(q.scalar_type());
  int64_t S = k.size(2), padded = (S + 15) / 16 * 16;
  if (padded != S || bias.stride(-1) != 1) {
    std::vector<int64_t> shape(bias.sizes().begin(), bias.sizes().end());
    shape.back() = padded;
    at::Tensor aligned = at::empty(shape, bias.options());
    aligned.narrow(-1, 0, S).copy_(bias);
    bias = aligned.narrow(-1, 0, S);
  }
  while (bias.dim() < 4)
    bias = bias.unsqueeze(0);
  return bias.expand({q.size(0), q.size(1), q.size(2), S});
}

/// The fused kernel SDPA's dispatch picks for attention without a mask or dropout (at::_fused_sdp_choice,
/// sdp::SDPBackend: 1 flash, 2 memory-efficient), where dyn calls that kernel directly.
enum class FusedAttention { None, CudaFlash, CudaEfficient, CpuFlash };
FusedAttention fusedAttentionKernel(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v, bool causal,
                                    double scale) {
  if (q.dim() != 4)
    return FusedAttention::None;
  int64_t backend = at::_fused_sdp_choice(q, k, v, std::nullopt, 0.0, causal, scale);
  if (q.is_cuda())
    return backend == 1 ? FusedAttention::CudaFlash
                        : backend == 2 ? FusedAttention::CudaEfficient : FusedAttention::None;
  return backend == 1 ? FusedAttention::CpuFlash : FusedAttention::None;
}

/// The kernel of graph.attention_lse (and its backward): fusedAttentionKernel's; with dropout only a CUDA fused
/// kernel (its own draws, its state kept for the backward: AttentionRng), as capture checked.
FusedAttention dropoutAttentionKernel(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v, bool causal,
                                      double scale, double p) {
  FusedAttention kernel = fusedAttentionKernel(q, k, v, causal, scale);
  if (p != 0.0 && kernel != FusedAttention::CudaFlash && kernel != FusedAttention::CudaEfficient)
    throw std::runtime_error("attention_lse: dropout without a fused CUDA kernel");
  return kernel;
}

using Body = std::function<void(Args &)>;

/// name -> body; filled once at import (dynRegisterAtenLibraryCalls), read-only after.
std::map<std::string, Body> &namedCalls() {
  static std::map<std::string, Body> calls;
  return calls;
}

/// Registers library call `name`: its parameters decoded as P (AtenCalls.inc), then `body`. The call must
/// have the op's operand count (-1: the ops sharing the callee differ) and the body read every parameter,
/// so that a call encoded otherwise than its body decodes it fails instead of reading wrong values.
template <typename P>
void defineCall(const char *name, int32_t numInputs, void (*body)(Args &, const P &)) {
  namedCalls()[name] = [name, numInputs, body](Args &a) {
    if (numInputs >= 0 && a.call->num_inputs != numInputs)
      throw std::runtime_error("library call '" + std::string(name) + "' takes " + std::to_string(numInputs) +
                               " operands, not " + std::to_string(a.call->num_inputs));
    P params(a);
    body(a, params);
    if (a.next != a.call->num_params)
      throw std::runtime_error("library call '" + std::string(name) + "': " +
                               std::to_string(a.call->num_params - a.next) + " parameters left unread");
  };
}

int named(const DynLibraryCall *call, char *error, size_t size) {
  return guarded(error, size, [&] {
    auto it = namedCalls().find(call->name);
    if (it == namedCalls().end())
      throw std::runtime_error("no ATen body for library call '" + std::string(call->name) + "'");
    Args a{call, inputs(call, deviceOf(call))};
    it->second(a);
  });
}

/// A value an op's attributes give with a has_ flag (`has_dim`, `has_atol`): None without it.
template <typename T>
std::optional<T> given(bool has, T value) {
  return has ? std::optional<T>(value) : std::nullopt;
}


/// f() with torch's default generator of `device` seeded with `seed`, its state restored after (also when f
/// throws): torch.testing's wrapper_set_seed around one op (GraphLibraryOps.td seeded_random).
template <typename F>
at::Tensor withSeed(at::Device device, int64_t seed, F f) {
  at::Generator gen = at::globalContext().defaultGenerator(device);
  at::Tensor saved;
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    saved = gen.get_state();
    gen.set_current_seed(static_cast<uint64_t>(seed));
  }
  auto restore = [&] {
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(saved);
  };
  at::Tensor r;
  try {
    r = f();
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return r;
}

at::Tensor seededDraw(const std::string &kind, double a, double b, int64_t n, const at::Tensor &x) {
  if (kind == "uniform")
    return at::empty_like(x).uniform_(a, b);
  if (kind == "normal")
    return at::empty_like(x).normal_(a, b);
  if (kind == "exponential")
    return at::empty_like(x).exponential_(a);
  if (kind == "integers")
    return at::empty_like(x).random_(static_cast<int64_t>(a), static_cast<int64_t>(b));
  if (kind == "cauchy")
    return at::empty_like(x).cauchy_(a, b);
  if (kind == "geometric")
    return at::empty_like(x).geometric_(a);
  if (kind == "log_normal")
    return at::empty_like(x).log_normal_(a, b);
  if (kind == "bernoulli")
    return at::bernoulli(x);
  if (kind == "dropout")
    return at::dropout(x, a, true);
  if (kind == "dropout_") {
    at::Tensor r = x.clone();
    return at::dropout_(r, a, true);
  }
  if (kind == "feature_dropout" || kind == "feature_dropout_") {
    at::Tensor in = n == 1 ? x.unsqueeze(0) : x;  // an unbatched (C, ...) input: eager unsqueezes it
    at::Tensor r = in.clone();
    r = kind == "feature_dropout" ? at::feature_dropout(in, a, true) : at::feature_dropout_(r, a, true);
    return n == 1 ? r.squeeze(0) : r;
  }
  if (kind == "alpha_dropout")
    return at::alpha_dropout(x, a, true);
  if (kind == "feature_alpha_dropout")
    return at::feature_alpha_dropout(x, a, true);
  if (kind == "rrelu")
    return at::rrelu(x, a, b, true);
  if (kind == "multinomial")
    return at::multinomial(x, n, b != 0);
  if (kind == "normal_tensor_mean")  // normal(mean tensor, std number)
    return at::normal(x, a);
  if (kind == "normal_tensor_std")  // normal(mean number, std tensor)
    return at::normal(a, x);
  throw std::runtime_error("seeded_random: unknown kind '" + kind + "'");
}

/// While alive, drops the warnings of the calls made (cuDNN's "RNN module weights are not part of single
/// contiguous chunk of memory"), passing any other on to the handler that was installed.
class QuietRnnWarning : public c10::WarningHandler {
public:
  QuietRnnWarning() : previous_(c10::WarningUtils::get_warning_handler()) {
    c10::WarningUtils::set_warning_handler(this);
  }
  ~QuietRnnWarning() override { c10::WarningUtils::set_warning_handler(previous_); }
  void process(const c10::Warning &w) override {
    if (w.msg().find("contiguous chunk of memory") == std::string::npos)
      previous_->process(w);
  }

private:
  c10::WarningHandler *previous_;
};

/// The op `name` of c10d's functional collectives (registered by libtorch with torch.distributed), typed.
template <typename Sig>
c10::TypedOperatorHandle<Sig> functional(const char *name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").template typed<Sig>();
}

/// A functional collective's result once complete: wait_tensor makes the current stream (the compiled
/// code's) wait for the collective's.
at::Tensor waited(const at::Tensor &t) {
  static auto wait = functional<at::Tensor(const at::Tensor &)>("_c10d_functional::wait_tensor");
  return wait.call(t);
}

//===----------------------------------------------------------------------===//
// The bodies of the library ops without an `aten` expression (more than one
// ATen call, a kernel chosen here, results written into dyn's buffers):
// void camelCallee(Args &, const CalleeParams &), as AtenCalls.inc names them.
//===----------------------------------------------------------------------===//

// Collectives: the process group's own, by its name.
void allReduce(Args &a, const AllReduceParams &p) {
  static auto call =
      functional<at::Tensor(const at::Tensor &, std::string, std::string)>("_c10d_functional::all_reduce");
  store(a.call, waited(call.call(a.in[0].contiguous(), p.reduce_op, p.group_name)));
}
void allGatherIntoTensor(Args &a, const AllGatherIntoTensorParams &p) {
  static auto call = functional<at::Tensor(const at::Tensor &, int64_t, std::string)>(
      "_c10d_functional::all_gather_into_tensor");
  store(a.call, waited(call.call(a.in[0].contiguous(), p.group_size, p.group_name)));
}
void reduceScatterTensor(Args &a, const ReduceScatterTensorParams &p) {
  static auto call = functional<at::Tensor(const at::Tensor &, std::string, int64_t, std::string)>(
      "_c10d_functional::reduce_scatter_tensor");
  store(a.call, waited(call.call(a.in[0].contiguous(), p.reduce_op, p.group_size, p.group_name)));
}

// torch.fft transforms with real results: `kind` names the function.
void fftReal(Args &a, const FftRealParams &p) {
  std::optional<c10::string_view> norm;
  if (!p.norm.empty())
    norm = p.norm;
  const at::Tensor &x = a.in[0];
  const std::string &kind = p.kind;
  at::OptionalIntArrayRef sizes = p.has_s ? at::OptionalIntArrayRef(p.s) : std::nullopt;
  if (kind == "irfft" || kind == "hfft") {
    std::optional<int64_t> n = p.has_s ? std::optional<int64_t>(p.s[0]) : std::nullopt;
    int64_t d = p.has_dim ? p.dim[0] : -1;
    return store(a.call, kind == "irfft" ? at::fft_irfft(x, n, d, norm) : at::fft_hfft(x, n, d, norm));
  }
  if (kind == "irfft2" || kind == "hfft2") {
    std::vector<int64_t> dims = p.has_dim ? p.dim : std::vector<int64_t>{-2, -1};
    return store(a.call, kind == "irfft2" ? at::fft_irfft2(x, sizes, dims, norm) : at::fft_hfft2(x, sizes, dims, norm));
  }
  at::OptionalIntArrayRef dims = p.has_dim ? at::OptionalIntArrayRef(p.dim) : std::nullopt;
  if (kind == "irfftn")
    return store(a.call, at::fft_irfftn(x, sizes, dims, norm));
  if (kind == "hfftn")
    return store(a.call, at::fft_hfftn(x, sizes, dims, norm));
  throw std::runtime_error("fft_real: unknown kind '" + kind + "'");
}

// Recurrent layers: one layer, one direction (capture chains layers and flips reverse directions).
// cuDNN warns at every call that the weights are not the module's one flat buffer (it compacts them
// for the call): dyn passes one layer's weights by design, so that warning is dropped here.
void lstm(Args &a, const LstmParams &p) {
  QuietRnnWarning quiet;
  store(a.call, at::lstm(a.in[0], {a.in[1], a.in[2]}, {a.in[3], a.in[4], a.in[5], a.in[6]}, true, 1, 0.0, false,
                         false, p.batch_first));
}
void gru(Args &a, const GruParams &p) {
  QuietRnnWarning quiet;
  store(a.call, at::gru(a.in[0], a.in[1], {a.in[2], a.in[3], a.in[4], a.in[5]}, true, 1, 0.0, false, false,
                        p.batch_first));
}
void rnn(Args &a, const RnnParams &p) {
  QuietRnnWarning quiet;
  std::vector<at::Tensor> params{a.in[2], a.in[3], a.in[4], a.in[5]};
  store(a.call, p.relu ? at::rnn_relu(a.in[0], a.in[1], params, true, 1, 0.0, false, false, p.batch_first)
                       : at::rnn_tanh(a.in[0], a.in[1], params, true, 1, 0.0, false, false, p.batch_first));
}

// Grouped GEMM: transformers' grouped_mm_fallback (the offsets read on the host: one copy from a GPU).
void groupedMm(Args &a, const GroupedMmParams &) {
  const at::Tensor &x = a.in[0], &w = a.in[1];
  at::Tensor out = at::zeros({x.size(0), w.size(2)}, x.options());
  at::Tensor ends = a.in[2].to(at::kCPU, at::kLong).contiguous();
  const int64_t *end = ends.data_ptr<int64_t>(), rows = x.size(0);
  auto row = [rows](int64_t v) { return v < 0 ? std::max<int64_t>(0, v + rows) : std::min(v, rows); };
  int64_t start = 0;
  for (int64_t g = 0; g < ends.numel(); ++g) {
    int64_t lo = row(start), hi = row(end[g]);  // Python's slice [start:end]
    if (start != end[g] && hi > lo) {
      at::Tensor o = out.narrow(0, lo, hi - lo);
      at::mm_out(o, x.narrow(0, lo, hi - lo), w.select(0, g));
    }
    start = end[g];
  }
  store(a.call, out);
}

// Segments (by lengths, or offsets with `use_offsets`) and histograms.
void segmentReduce(Args &a, const SegmentReduceParams &p) {
  std::optional<at::Tensor> lengths, offsets;
  (p.use_offsets ? offsets : lengths) = a.in[1];
  store(a.call, at::segment_reduce(a.in[0], p.reduce, lengths, /*indices=*/std::nullopt, offsets, p.axis, p.unsafe,
                                   p.has_initial ? std::optional<at::Scalar>(p.initial) : std::nullopt));
}
void histogram(Args &a, const HistogramParams &p) {
  std::vector<double> range{p.lo, p.hi};
  store(a.call, at::histogram(a.in[0], p.bins, p.has_range ? std::optional<at::ArrayRef<double>>(range) : std::nullopt,
                              /*weight=*/std::nullopt, p.density));
}

// Written into dyn's buffer (the out= form: its meta function keeps a buffer of the right sizes as it
// is). A trailing 1 (dyn-propagate-layouts): grad_output, input, indices and the gradient are
// [N, H, W, C] buffers, given to ATen as channels-last tensors, so that it runs its NHWC kernel
// (the indices are positions h * W + w within a plane in both layouts).
void maxPool2dBackward(Args &a, const MaxPool2dBackwardParams &p) {
  bool channelsLast = a.trailingFlag();
  at::Device device = deviceOf(a.call);
  at::Tensor out;
  if (channelsLast) {
    for (int k = 0; k < 3; ++k)
      a.in[k] = wrapChannelsLast(a.call->inputs[k], device);
    out = wrapChannelsLast(a.call->outputs[0], device);
  } else {
    out = wrap(a.call->outputs[0], device);
  }
  // ATen's CUDA kernels take the layout of the input (suggest_memory_format) for all four tensors
  // and read the indices and write the gradient by that layout's strides: give them that layout.
  at::MemoryFormat format = a.in[1].suggest_memory_format();
  if (out.is_contiguous(format) && a.in[2].is_contiguous(format)) {
    at::max_pool2d_with_indices_backward_out(out, a.in[0], a.in[1], p.kernel_size, p.stride, p.padding, p.dilation,
                                             p.ceil_mode, a.in[2]);
    return;
  }
  at::Tensor gi = at::max_pool2d_with_indices_backward(a.in[0], a.in[1].contiguous(format), p.kernel_size, p.stride,
                                                       p.padding, p.dilation, p.ceil_mode,
                                                       a.in[2].contiguous(format));
  copyInto(out, gi);
}

// Backward kernels dyn-graph-autodiff calls (the forward's library calls differentiated).
void convolutionBackward(Args &a, const ConvolutionBackwardParams &p) {
  const std::vector<int64_t> &mask = p.output_mask;
  // A trailing 1 (dyn-propagate-layouts): grad_output, input and the input gradient are
  // [N, *spatial, C] buffers, given to ATen as channels-last tensors, whose kernels keep that layout.
  bool channelsLast = a.trailingFlag();
  at::Device device = deviceOf(a.call);
  if (channelsLast) {
    a.in[0] = wrapChannelsLast(a.call->inputs[0], device);
    a.in[1] = wrapChannelsLast(a.call->inputs[1], device);
  }
  bool wantInput = mask.at(0) != 0;
  if (wantInput &&
      inputGradientIntoOutput(a, p.stride, p.padding, p.dilation, p.groups, p.transposed, channelsLast))
    wantInput = false;
  if (!wantInput && mask.at(1) == 0)
    return;
  at::Tensor out = channelsLast ? wrapChannelsLast(a.call->outputs[0], device) : wrap(a.call->outputs[0], device);
  at::Tensor weightOut = wrap(a.call->outputs[1], device);
  // on the CPU oneDNN writes the gradients into dyn's buffers (AdoptCpuResults)
  AdoptCpuResults adopt({wantInput ? &out : nullptr, mask.at(1) ? &weightOut : nullptr});
  auto [gi, gw, gb] = at::convolution_backward(a.in[0], a.in[1], a.in[2], std::nullopt, p.stride, p.padding,
                                               p.dilation, p.transposed, p.output_padding, p.groups,
                                               {wantInput, mask.at(1) != 0, false});
  if (gw.defined() && gw.sizes() != weightOut.sizes())
    throw std::runtime_error("convolution_backward: weight gradient of shape " + c10::str(gw.sizes()) +
                             ", its buffer " + c10::str(weightOut.sizes()));
  adopt.store({{&out, gi}, {&weightOut, gw}});
}

// Eager's attention (SDPA's dispatch: flash, memory-efficient or math) run again and differentiated by
// ATen's autograd, as eager's backward computes it (graph.attention_backward, and with a mask
// graph.masked_attention_backward).
void attentionBackward(Args &a, const AttentionBackwardParams &p) {
  at::Device device = deviceOf(a.call);
  auto arg = [&](int32_t i) { return wrap(a.call->inputs[i], device); };
  std::optional<at::Tensor> mask;
  if (a.call->num_inputs > 4)
    mask = arg(4);
  std::vector<at::Tensor> grads = rerunAttentionBackward(arg(0), arg(1), arg(2), arg(3), mask, p.is_causal, p.scale);
  for (int32_t i = 0; i < 3; ++i)
    store(a.call, i, grads[i]);
}

// graph.attention_lse: eager's fused kernel, keeping its log-sum-exp in the first columns of the
// [B, H, ceil32(L)] buffer (the memory-efficient kernel's own layout; flash's is [B, H, L]). The backward
// picks the same kernel by asking SDPA's dispatch again with the same inputs.
void attentionLse(Args &a, const AttentionLseParams &prm) {
  double p = prm.dropout_p, scale = prm.scale;
  bool causal = prm.is_causal;
  const at::Tensor &q = a.in[0], &k = a.in[1], &v = a.in[2];
  at::Device device = deviceOf(a.call);
  FusedAttention kernel = dropoutAttentionKernel(q, k, v, causal, scale, p);
  at::Tensor out, lse;
  switch (kernel) {
  case FusedAttention::CudaFlash: {
    auto r = at::_scaled_dot_product_flash_attention(q, k, v, p, causal, false, scale);
    out = std::get<0>(r), lse = std::get<1>(r);
    if (p != 0.0)
      wrap(a.call->outputs[2], device).copy_(std::get<6>(r).view(at::kLong));
    break;
  }
  case FusedAttention::CudaEfficient: {
    auto r = at::_scaled_dot_product_efficient_attention(q, k, v, std::nullopt, true, p, causal, scale);
    out = std::get<0>(r), lse = std::get<1>(r);
    if (p != 0.0)
      keepEfficientRng(a.call->outputs[2], device, std::get<2>(r), std::get<3>(r));
    break;
  }
  case FusedAttention::CpuFlash: {
    auto r = at::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, std::nullopt, scale);
    out = std::get<0>(r), lse = std::get<1>(r);
    break;
  }
  case FusedAttention::None:
    out = at::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, causal, scale);
    break;
  }
  store(a.call, 0, out);
  if (lse.defined())
    wrap(a.call->outputs[1], device).narrow(-1, 0, lse.size(-1)).copy_(lse);
}
void attentionLseBackward(Args &a, const AttentionLseBackwardParams &prm) {
  double p = prm.dropout_p, scale = prm.scale;
  bool causal = prm.is_causal;
  const at::Tensor &g = a.in[0], &q = a.in[1], &k = a.in[2], &v = a.in[3], &out = a.in[4], &lse = a.in[5];
  int64_t L = q.size(2), S = k.size(2);
  FusedAttention kernel = dropoutAttentionKernel(q, k, v, causal, scale, p);
  std::tuple<at::Tensor, at::Tensor, at::Tensor> grads;
  switch (kernel) {
  case FusedAttention::CudaFlash: {
    // without dropout the kernel reads no random state: empty seed and offset of flash's dtypes; with it the
    // forward's [seed, offset] on the device
    at::Tensor seed = p != 0.0 ? a.in[6].view(at::kUInt64) : at::zeros({2}, at::kUInt64);
    at::Tensor offset = at::zeros({}, at::kUInt64);
    grads = at::_scaled_dot_product_flash_attention_backward(g, q, k, v, out, lse.narrow(-1, 0, L).contiguous(),
                                                             at::Tensor(), at::Tensor(), L, S, p, causal, seed,
                                                             offset, scale);
    break;
  }
  case FusedAttention::CudaEfficient: {
    auto [seed, offset] = efficientRng(a.in[6], p);
    auto r = at::_scaled_dot_product_efficient_attention_backward(g, q, k, v, at::Tensor(), out, lse, seed, offset,
                                                                  p, {true, true, true, false}, causal, scale);
    grads = {std::get<0>(r), std::get<1>(r), std::get<2>(r)};
    break;
  }
  case FusedAttention::CpuFlash: {
    // the layout ATen's CPU kernel returns its log-sum-exp in: [B, L, H] transposed to [B, H, L]
    at::Tensor rows = at::empty({q.size(0), L, q.size(1)}, lse.options()).transpose(1, 2);
    rows.copy_(lse.narrow(-1, 0, L));
    grads = at::_scaled_dot_product_flash_attention_for_cpu_backward(g, q, k, v, out, rows, 0.0, causal,
                                                                     std::nullopt, scale);
    break;
  }
  case FusedAttention::None: {
    std::vector<at::Tensor> r = rerunAttentionBackward(g, q, k, v, std::nullopt, causal, scale);
    grads = {r[0], r[1], r[2]};
    break;
  }
  }
  store(a.call, grads);
}
// graph.masked_attention_lse: the memory-efficient kernel with the mask as its bias, with dropout
void maskedAttentionLse(Args &a, const MaskedAttentionLseParams &prm) {
  const at::Tensor &q = a.in[0], &k = a.in[1], &v = a.in[2];
  at::Device device = deviceOf(a.call);
  auto r = at::_scaled_dot_product_efficient_attention(q, k, v, attentionBias(a.in[3], q, k), true, prm.dropout_p,
                                                       prm.is_causal, prm.scale);
  store(a.call, 0, std::get<0>(r));
  const at::Tensor &lse = std::get<1>(r);
  wrap(a.call->outputs[1], device).narrow(-1, 0, lse.size(-1)).copy_(lse);
  if (prm.dropout_p != 0.0)
    keepEfficientRng(a.call->outputs[2], device, std::get<2>(r), std::get<3>(r));
}
void maskedAttentionLseBackward(Args &a, const MaskedAttentionLseBackwardParams &prm) {
  const at::Tensor &g = a.in[0], &q = a.in[1], &k = a.in[2], &v = a.in[3], &out = a.in[5], &lse = a.in[6];
  auto [seed, offset] = efficientRng(a.in[7], prm.dropout_p);
  auto r = at::_scaled_dot_product_efficient_attention_backward(g, q, k, v, attentionBias(a.in[4], q, k), out, lse,
                                                                seed, offset, prm.dropout_p,
                                                                {true, true, true, false}, prm.is_causal, prm.scale);
  store(a.call, 0, std::get<0>(r));
  store(a.call, 1, std::get<1>(r));
  store(a.call, 2, std::get<2>(r));
}

// An embedding's weight gradient. ATen's CUDA kernel returns a fresh [V, F] matrix to be copied into dyn's
// buffer: with an LM's vocabulary both are large and held at once, above eager's peak. Float32/64 rows are
// summed into the buffer itself instead (index_add_: atomics, so not in deterministic mode; halves keep ATen's
// float accumulation).
void embeddingBackward(Args &a, const EmbeddingBackwardParams &) {
  const at::Tensor &grad = a.in[0], &indices = a.in[2];
  at::Tensor out = wrap(a.call->outputs[0], deviceOf(a.call));
  if (out.is_cuda() && (out.scalar_type() == at::kFloat || out.scalar_type() == at::kDouble) &&
      grad.scalar_type() == out.scalar_type() && !at::globalContext().deterministicAlgorithms()) {
    out.zero_();
    out.index_add_(0, indices.reshape({-1}), grad.reshape({-1, out.size(1)}));
    return;
  }
  store(a.call, 0, at::embedding_dense_backward(grad, indices, a.in[1].size(0), -1, false));
}

// Bilinear or bicubic resampling, anti-aliased or not: four ATen functions.
void upsample2d(Args &a, const Upsample2dParams &p) {
  std::optional<double> sh = given(p.has_scales, p.scale_h), sw = given(p.has_scales, p.scale_w);
  bool bilinear = p.mode == "bilinear";
  if (p.antialias)
    return store(a.call, bilinear ? at::_upsample_bilinear2d_aa(a.in[0], p.output_size, p.align_corners, sh, sw)
                                  : at::_upsample_bicubic2d_aa(a.in[0], p.output_size, p.align_corners, sh, sw));
  store(a.call, bilinear ? at::upsample_bilinear2d(a.in[0], p.output_size, p.align_corners, sh, sw)
                         : at::upsample_bicubic2d(a.in[0], p.output_size, p.align_corners, sh, sw));
}

/// Every library op's call: generated from the registry (AtenCalls.inc).
void defineNamedCalls() {
#define GEN_ATEN_CALLS
#include "dyn/Dialect/Graph/IR/AtenCalls.inc"
}

} // namespace

/// Called once when dyn._C is imported.
void dynRegisterAtenLibraryCalls() {
  dyn::registerLibraryCall("matmul", &matmul);
  dyn::registerLibraryCall("convolution", &convolution);
  dyn::registerLibraryCall("attention", &attention);
  defineNamedCalls();
  for (const auto &[name, body] : namedCalls())
    dyn::registerLibraryCall(name, &named);
}

/// _C.empty_host(sizes, strides, dtype): a CPU tensor for a compiled function's output, 64 KiB and more
/// from dyn's host cache (AdoptingCpuAllocator), the rest from torch's allocator; what
/// torch._C._dynamo.guards._empty_strided_cpu does otherwise (no Python argument parsing).
extern "C" PyObject *dyn_empty_host(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  auto ints = [](PyObject *t, std::vector<int64_t> &out) {
    if (!PyTuple_Check(t))
      return false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); ++i) {
      long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
      if (v == -1 && PyErr_Occurred())
        return false;
      out.push_back(v);
    }
    return true;
  };
  std::vector<int64_t> sizes, strides;
  if (nargs != 3 || !ints(args[0], sizes) || !ints(args[1], strides) || sizes.size() != strides.size() ||
      Py_TYPE(args[2]) != &THPDtypeType) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_TypeError, "empty_host(sizes: tuple, strides: tuple, dtype)");
    return nullptr;
  }
  try {
    HostScope cached(AdoptingCpuAllocator::Scope::Outputs);
    return THPVariable_Wrap(at::empty_strided(
        sizes, strides, at::TensorOptions().dtype(reinterpret_cast<THPDtype *>(args[2])->scalar_type)));
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}
