//===- CudaRuntime.cpp - CUDA driver API through dlopen ------------------===//
#include "dyn/Runtime/CudaRuntime.h"

#include <dlfcn.h>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace dyn::cuda {
namespace {

// The few driver types and entry points dyn uses (ABI-stable since CUDA 4).
using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUdeviceptr = unsigned long long;
enum { CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  std::string error; // why the driver is unusable, empty when it is fine
};

template <typename F>
bool load(void *lib, const char *name, F &fn, std::string &error) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn)
    error = std::string("libcuda.so.1 lacks ") + name;
  return fn != nullptr;
}

Driver &driver() {
  static Driver d = [] {
    Driver d{};
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      d.error = "no CUDA driver (libcuda.so.1 could not be opened)";
      return d;
    }
    std::string &e = d.error;
    (void)(load(lib, "cuInit", d.cuInit, e) && load(lib, "cuDeviceGetCount", d.cuDeviceGetCount, e) &&
           load(lib, "cuCtxGetCurrent", d.cuCtxGetCurrent, e) &&
           load(lib, "cuCtxSetCurrent", d.cuCtxSetCurrent, e) &&
           load(lib, "cuDeviceGet", d.cuDeviceGet, e) &&
           load(lib, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, e) &&
           load(lib, "cuModuleLoadDataEx", d.cuModuleLoadDataEx, e) &&
           load(lib, "cuModuleGetFunction", d.cuModuleGetFunction, e) &&
           load(lib, "cuLaunchKernel", d.cuLaunchKernel, e) &&
           load(lib, "cuFuncSetAttribute", d.cuFuncSetAttribute, e) &&
           load(lib, "cuMemcpyHtoDAsync_v2", d.cuMemcpyHtoDAsync, e) &&
           load(lib, "cuGetErrorString", d.cuGetErrorString, e));
    if (e.empty() && d.cuInit(0) != 0)
      e = "cuInit failed";
    int count = 0;
    if (e.empty() && (d.cuDeviceGetCount(&count) != 0 || count == 0))
      e = "no CUDA device";
    return d;
  }();
  return d;
}

bool check(CUresult r, const char *what, std::string *error) {
  if (r == 0)
    return true;
  if (error) {
    const char *msg = nullptr;
    if (driver().cuGetErrorString)
      driver().cuGetErrorString(r, &msg);
    *error = std::string(what) + " failed: " + (msg ? msg : "error " + std::to_string(r));
  }
  return false;
}

/// torch makes the primary context current on its threads; other threads get it here.
bool ensureContext(CUcontext *ctx, std::string *error) {
  Driver &d = driver();
  if (!check(d.cuCtxGetCurrent(ctx), "cuCtxGetCurrent", error))
    return false;
  if (*ctx)
    return true;
  CUdevice dev;
  return check(d.cuDeviceGet(&dev, 0), "cuDeviceGet", error) &&
         check(d.cuDevicePrimaryCtxRetain(ctx, dev), "cuDevicePrimaryCtxRetain", error) &&
         check(d.cuCtxSetCurrent(*ctx), "cuCtxSetCurrent", error);
}

} // namespace

bool available(std::string *why) {
  const std::string &e = driver().error;
  if (!e.empty() && why)
    *why = e;
  return e.empty();
}

namespace {

/// Loaded modules and their functions, per context; a module's PTX is
/// compiled to SASS by the driver when it is loaded.
struct ModuleCache {
  std::mutex mutex;
  std::map<std::pair<CUcontext, std::string>, CUmodule> modules;
  std::map<std::tuple<CUmodule, std::string>, CUfunction> functions;
};

ModuleCache &cache() {
  static ModuleCache c;
  return c;
}

bool loadModule(const std::string &ptx, CUmodule *module, std::string *error) {
  char log[8192] = {0};
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log))};
  if (check(driver().cuModuleLoadDataEx(module, ptx.c_str(), 2, options, values), "cuModuleLoadDataEx",
            error))
    return true;
  if (error && log[0])
    *error += std::string(": ") + log;
  *module = nullptr;
  return false;
}

} // namespace

bool loadModules(const std::vector<const std::string *> &codes, std::string *error) {
  if (!available(error))
    return false;
  CUcontext ctx;
  if (!ensureContext(&ctx, error))
    return false;
  // One at a time: the driver compiles a PTX module single-threaded and,
  // measured on an H200, no faster from several threads (dyn gives it
  // cubins where the toolkit has ptxas, which load in milliseconds).
  ModuleCache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (const std::string *code : codes) {
    CUmodule &module = c.modules[{ctx, *code}];
    if (!module && !loadModule(*code, &module, error))
      return false;
  }
  return true;
}

bool getKernel(const std::string &ptx, const std::string &name, Kernel *kernel,
               std::string *error) {
  if (!available(error))
    return false;
  Driver &d = driver();
  CUcontext ctx;
  if (!ensureContext(&ctx, error))
    return false;
  ModuleCache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  CUmodule &module = c.modules[{ctx, ptx}];
  if (!module && !loadModule(ptx, &module, error))
    return false;
  CUfunction &fn = c.functions[{module, name}];
  if (!fn && !check(d.cuModuleGetFunction(&fn, module, name.c_str()), "cuModuleGetFunction", error))
    return false;
  kernel->function = fn;
  return true;
}

bool launch(const Kernel &kernel, const LaunchGeometry &g, void *stream, void **params,
            std::string *error) {
  Driver &d = driver();
  if (g.sharedBytes > 48 * 1024) {
    const int kMaxDynamicShared = 8; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    if (!check(d.cuFuncSetAttribute(kernel.function, kMaxDynamicShared, g.sharedBytes),
               "cuFuncSetAttribute", error))
      return false;
  }
  return check(d.cuLaunchKernel(kernel.function, g.grid[0], g.grid[1], g.grid[2], g.block[0],
                                g.block[1], g.block[2], g.sharedBytes, stream, params, nullptr),
               "cuLaunchKernel", error);
}

bool copyToDevice(void *device, const void *host, size_t bytes, void *stream, std::string *error) {
  if (!available(error))
    return false;
  CUcontext ctx;
  if (!ensureContext(&ctx, error))
    return false;
  return check(driver().cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(device), host, bytes, stream),
               "cuMemcpyHtoDAsync", error);
}

} // namespace dyn::cuda
