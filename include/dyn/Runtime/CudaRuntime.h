//===- CudaRuntime.h - the CUDA driver API, opened at run time -*- C++ -*-===//
//
// dyn links nothing from CUDA: libcuda.so.1 is dlopen'ed on first use, so the
// same build runs (CPU only) where no GPU or driver exists. Every driver call
// is checked; failures come back as messages, never as aborts. Kernels are
// launched on the caller's stream (torch's current stream) and nothing here
// synchronizes.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_RUNTIME_CUDARUNTIME_H
#define DYN_RUNTIME_CUDARUNTIME_H

#include <cstdint>
#include <string>
#include <vector>

namespace dyn::cuda {

/// Whether the driver could be opened and has a device; `why` says why not.
bool available(std::string *why);

/// A loaded PTX module. Loading is cached by PTX text, per context.
struct Kernel {
  void *function = nullptr; // CUfunction
};

/// Loads (or finds in the cache) `ptx` in the current context (the primary
/// context of the current device, as torch uses) and looks up `name`.
bool getKernel(const std::string &ptx, const std::string &name, Kernel *kernel,
               std::string *error);

/// Loads the modules (cubins or PTX) not loaded yet in the current context,
/// so that getKernel finds them. False with the first error if one fails.
bool loadModules(const std::vector<const std::string *> &ptxs, std::string *error);

struct LaunchGeometry {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t sharedBytes = 0;
};

/// Launches on `stream` (a CUstream; null is the legacy default stream).
/// `params[i]` points to the i-th kernel argument's value.
bool launch(const Kernel &kernel, const LaunchGeometry &geometry, void *stream, void **params,
            std::string *error);

/// Copies `bytes` from host memory to device memory on `stream` (ordered
/// before the kernels launched on it after); `host` may be pageable.
bool copyToDevice(void *device, const void *host, size_t bytes, void *stream, std::string *error);

} // namespace dyn::cuda

#endif // DYN_RUNTIME_CUDARUNTIME_H
