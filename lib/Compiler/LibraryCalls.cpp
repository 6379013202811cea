//===- LibraryCalls.cpp - the registry of library-call implementations ---===//
//
// Library-call ops (loop.matmul, loop.convolution, loop.attention) run
// whatever implementation an embedder registered under their name: the
// Python extension registers ATen's (python/src/aten_calls.cpp). The JIT-
// compiled CPU code calls dyn_library_call, which decodes the descriptor
// that dyn-convert-loop-to-scf wrote; the GPU launch plan calls
// callLibrary directly. Errors of calls made by JIT code are kept per thread
// until the compiled function's run() collects them.
//
//===----------------------------------------------------------------------===//
#include "dyn/Compiler/Compiler.h"
#include "dyn/Compiler/LibraryCalls.h"

#include <map>
#include <mutex>
#include <vector>

namespace dyn {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, DynLibraryCallFn> fns;
};

Registry &registry() {
  static Registry *r = new Registry(); // leaked: calls may come during exit
  return *r;
}

thread_local std::string pendingError;

} // namespace

void registerLibraryCall(const std::string &name, DynLibraryCallFn fn) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (fn)
    r.fns[name] = fn;
  else
    r.fns.erase(name);
}

DynLibraryCallFn findLibraryCall(const std::string &name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.fns.find(name);
  return it == r.fns.end() ? nullptr : it->second;
}

std::string missingLibraryCallMessage(const std::string &name) {
  return "library call '" + name +
         "' has no implementation: it needs the torch runtime (importing dyn registers ATen's "
         "kernels) or one registered with dyn::registerLibraryCall";
}

bool callLibrary(const DynLibraryCall &call, std::string *error) {
  DynLibraryCallFn fn = findLibraryCall(call.name);
  if (!fn) {
    if (error)
      *error = missingLibraryCallMessage(call.name);
    return false;
  }
  char message[1024] = {0};
  if (fn(&call, message, sizeof(message)) == 0)
    return true;
  if (error)
    *error = std::string("library call '") + call.name + "' failed: " +
             (message[0] ? message : "no message");
  return false;
}

std::string takeLibraryCallError() {
  std::string e;
  e.swap(pendingError);
  return e;
}

} // namespace dyn

extern "C" void dyn_library_call(int64_t name, int64_t descriptor, int64_t buffers) {
  // A call after a failed one would read what the failed one did not write.
  if (!dyn::pendingError.empty())
    return;
  const int64_t *d = reinterpret_cast<const int64_t *>(descriptor);
  void *const *ptrs = reinterpret_cast<void *const *>(buffers);
  int64_t numInputs = *d++;
  int64_t numOutputs = *d++;
  std::vector<DynBuffer> bufs(numInputs + numOutputs);
  for (int64_t i = 0; i < numInputs + numOutputs; ++i) {
    bufs[i].dtype = (int32_t)*d++;
    bufs[i].rank = (int32_t)*d++;
    bufs[i].sizes = d;
    d += bufs[i].rank;
    bufs[i].strides = d;
    d += bufs[i].rank;
    // ptrs[i] is the buffer's base; a view starts this many bytes in.
    bufs[i].data = static_cast<char *>(ptrs[i]) + *d++;
  }
  DynLibraryCall call{};
  call.name = reinterpret_cast<const char *>(name);
  call.device = DYN_DEVICE_CPU;
  call.num_inputs = (int32_t)numInputs;
  call.inputs = bufs.data();
  call.num_outputs = (int32_t)numOutputs;
  call.outputs = &bufs[numInputs];
  call.num_params = (int32_t)*d++;
  call.params = d;
  std::string error;
  if (!dyn::callLibrary(call, &error))
    dyn::pendingError = error;
}
