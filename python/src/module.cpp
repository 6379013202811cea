// dyn._C: pybind11 module. Binds the compiler entry point (include/dyn/Compiler/Compiler.h) and adds
// the PEP 523 frame hook functions implemented in eval_frame.c. No MLIR, LLVM or torch header here
// (aten_calls.cpp, the library-call kernels, torch_tensors.cpp and step_runner.cpp include torch's).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#ifdef DYN_HAS_COMPILER
#include "dyn/Compiler/Compiler.h"
#endif

extern "C" PyMethodDef *dyn_eval_frame_methods(void);
#ifdef DYN_HAS_ATEN
void dynRegisterAtenLibraryCalls();                                // aten_calls.cpp
extern "C" int dyn_fast_check_tensor(PyObject *a, PyObject *g);   // torch_tensors.cpp
extern "C" int dyn_ready_tensor_data(PyObject *a, size_t align, void **data);
extern "C" PyObject *dyn_empty_host(PyObject *, PyObject *const *args, Py_ssize_t nargs); // aten_calls.cpp
#ifdef DYN_HAS_COMPILER
extern "C" PyObject *dyn_run_steps_held(dyn::CompiledGpuFunction *fn, PyObject *inputs, PyObject *specs,
                                        PyObject *taken, void *stream, int device); // step_runner.cpp
#endif
#endif
extern "C" void dyn_eval_frame_set_tensor_check(int (*check)(PyObject *, PyObject *));
extern "C" int dyn_eval_frame_init(PyObject *module);

namespace py = pybind11;

namespace {
#ifdef DYN_HAS_COMPILER
struct Compiled {
  std::unique_ptr<dyn::CompiledFunction> fn;
  size_t numBuffers = 0;
};

struct CompiledGpu {
  std::unique_ptr<dyn::CompiledGpuFunction> fn;
  size_t numBuffers = 0;
};

// Reads t.data_ptr() for every tensor of a sequence (inputs then outputs).
void collectPointers(py::handle seq, std::vector<void *> &ptrs, py::handle dataPtrName) {
  PyObject *fast = PySequence_Fast(seq.ptr(), "run() takes a sequence of tensors or ints");
  if (!fast)
    throw py::error_already_set();
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  PyObject **items = PySequence_Fast_ITEMS(fast);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *o = items[i];
    PyObject *v;
    if (PyLong_Check(o)) {
      v = o;
      Py_INCREF(v);
    } else {
      v = PyObject_CallMethodNoArgs(o, dataPtrName.ptr());
      if (!v) {
        Py_DECREF(fast);
        throw py::error_already_set();
      }
    }
    void *p = PyLong_AsVoidPtr(v);
    Py_DECREF(v);
    if (p == nullptr && PyErr_Occurred()) {
      Py_DECREF(fast);
      throw py::error_already_set();
    }
    ptrs.push_back(p);
  }
  Py_DECREF(fast);
}

/// With `align`: the inputs' pointers when every tensor input is a plain contiguous tensor aligned to
/// `align` bytes (read in C++, torch_tensors.cpp), false when one is not (the caller prepares them).
bool readyPointers(py::handle seq, std::vector<void *> &ptrs, size_t align) {
#ifdef DYN_HAS_ATEN
  PyObject *fast = PySequence_Fast(seq.ptr(), "run() takes a sequence of tensors or ints");
  if (!fast)
    throw py::error_already_set();
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  PyObject **items = PySequence_Fast_ITEMS(fast);
  bool ready = true;
  for (Py_ssize_t i = 0; i < n && ready; ++i) {
    void *p = nullptr;
    if (PyLong_Check(items[i]))
      p = PyLong_AsVoidPtr(items[i]);
    else
      ready = dyn_ready_tensor_data(items[i], align, &p) == 1;
    ptrs.push_back(p);
  }
  Py_DECREF(fast);
  if (PyErr_Occurred())
    throw py::error_already_set();
  return ready;
#else
  (void)seq, (void)ptrs, (void)align;
  return false;
#endif
}

/// Every buffer of a call: inputs, then outputs, checked against the count. With inputsAlign > 0,
/// *ready says whether every input was ready as it is (readyPointers; if not, the list is partial).
template <typename C>
std::vector<void *> callPointers(C &self, py::handle inputs, py::handle outputs, py::handle dataPtrName,
                                 size_t inputsAlign = 0, bool *ready = nullptr) {
  std::vector<void *> ptrs;
  ptrs.reserve(self.numBuffers);
  if (inputsAlign) {
    if (!(*ready = readyPointers(inputs, ptrs, inputsAlign)))
      return ptrs;
  } else {
    collectPointers(inputs, ptrs, dataPtrName);
  }
  if (!outputs.is_none())
    collectPointers(outputs, ptrs, dataPtrName);
  if (self.numBuffers && ptrs.size() != self.numBuffers)
    throw py::value_error("run(): expected " + std::to_string(self.numBuffers) + " buffers, got " +
                          std::to_string(ptrs.size()));
  return ptrs;
}

template <typename C>
py::list stageList(C &self) {
  py::list l;
  for (const auto &s : self.fn->stages())
    l.append(py::make_tuple(s.stage, s.ir));
  return l;
}
#endif

#ifndef DYN_HAS_COMPILER
[[noreturn]] void noCompiler() {
  throw std::runtime_error("dyn._C was built without the compiler core (no DynCompiler target)");
}
#endif
} // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "dyn native extension: PEP 523 frame hook and the graph compiler";
  if (PyModule_AddFunctions(m.ptr(), dyn_eval_frame_methods()) < 0 || dyn_eval_frame_init(m.ptr()) < 0)
    throw py::error_already_set();
#ifdef DYN_HAS_COMPILER
  m.attr("HAS_COMPILER") = true;
#ifdef DYN_HAS_ATEN
  dynRegisterAtenLibraryCalls();
  dyn_eval_frame_set_tensor_check(&dyn_fast_check_tensor);
  static PyMethodDef tensorMethods[] = {
      {"empty_host", (PyCFunction)(void (*)(void))dyn_empty_host, METH_FASTCALL,
       "empty_host(sizes, strides, dtype): a CPU tensor for an output, large ones from dyn's host cache"},
      {nullptr, nullptr, 0, nullptr}};
  if (PyModule_AddFunctions(m.ptr(), tensorMethods) < 0)
    throw py::error_already_set();
  m.attr("HAS_LIBRARY_CALLS") = true;
#else
  m.attr("HAS_LIBRARY_CALLS") = false;
#endif
  // Leaked on purpose: a static py::object would be released after the
  // interpreter is finalized, which crashes at exit.
  static py::handle dataPtrName = py::str("data_ptr").release();
  py::class_<Compiled>(m, "Compiled")
      .def(
          "run",
          [](Compiled &self, py::handle inputs, py::handle outputs, bool asIs) {
            bool ready = true;
            std::vector<void *> ptrs = callPointers(self, inputs, outputs, dataPtrName, asIs ? 1 : 0, &ready);
            if (!ready)
              return false;
            std::string error;
            bool ok;
            {
              py::gil_scoped_release release;
              ok = self.fn->run(ptrs.data(), &error);
            }
            if (!ok)
              throw std::runtime_error(error);
            return true;
          },
          py::arg("inputs"), py::arg("outputs") = py::none(), py::arg("inputs_as_is") = false,
          "run(inputs, outputs=None, inputs_as_is=False): tensors (data_ptr() is read) or int addresses; "
          "inputs then outputs. inputs_as_is: run only if every input tensor is a contiguous "
          "torch.Tensor or Parameter (read in C++); returns whether it ran")
      .def_property_readonly("stages", &stageList<Compiled>)
      .def_property_readonly("compile_seconds", [](Compiled &self) { return self.fn->compileSeconds(); })
      .def_property_readonly("in_place", [](Compiled &self) { return self.fn->inPlace(); },
                             "per output, the input it may be written into (the one it updates), else -1")
      .def_property_readonly("channels_last_results", [](Compiled &self) { return self.fn->channelsLastResults(); },
                             "the results written [N, *spatial, C] (dyn.layout_free_results allowed it)")
      .def_property_readonly("buffer_sizes", [](Compiled &self) { return self.fn->bufferSizes(); },
                             "the sizes run() takes after the buffers: (buffer index, dim) pairs, flattened")
      .def_readonly("num_buffers", &Compiled::numBuffers);
  m.def(
      "compile",
      [](const std::string &ir, const std::string &funcName, bool keepStages, int optLevel, size_t numBuffers) {
        dyn::CompileOptions opts;
        opts.keepStageIR = keepStages;
        opts.optLevel = optLevel;
        std::string error;
        std::unique_ptr<dyn::CompiledFunction> fn;
        {
          py::gil_scoped_release release;
          fn = dyn::compileGraph(ir, funcName, opts, &error);
        }
        if (!fn)
          throw std::runtime_error(error.empty() ? std::string("dyn compile failed") : error);
        auto c = std::make_unique<Compiled>();
        c->fn = std::move(fn);
        // run() takes the sizes of dynamic dims after the buffers
        c->numBuffers = numBuffers ? numBuffers + c->fn->bufferSizes().size() / 2 : 0;
        return c;
      },
      py::arg("graph_ir"), py::arg("func_name") = "forward", py::arg("keep_stages") = false,
      py::arg("opt_level") = 3, py::arg("num_buffers") = 0);
  m.def(
      "lower",
      [](const std::string &ir, const std::string &pipeline) {
        std::string result, error;
        bool ok;
        {
          py::gil_scoped_release release;
          ok = dyn::lowerGraph(ir, pipeline, &result, &error);
        }
        if (!ok)
          throw std::runtime_error(error.empty() ? std::string("dyn lower failed") : error);
        return result;
      },
      py::arg("graph_ir"), py::arg("pipeline"));
  // The GPU path: PTX kernels launched on the caller's CUDA stream.
  py::class_<CompiledGpu>(m, "CompiledGpu")
      .def(
          "run",
          [](CompiledGpu &self, py::handle inputs, py::handle outputs, uintptr_t stream,
             uintptr_t workspace, bool uploadConstants, bool asIs) {
            // Kernels move contiguous neighbours with 16-byte accesses: inputs as they are must be
            // 16-byte aligned.
            bool ready = true;
            std::vector<void *> ptrs = callPointers(self, inputs, outputs, dataPtrName, asIs ? 16 : 0, &ready);
            if (!ready)
              return false;
            std::string error;
            void *ws = reinterpret_cast<void *>(workspace), *st = reinterpret_cast<void *>(stream);
            bool ok = uploadConstants ? self.fn->run(ptrs.data(), ws, st, &error)
                                      : self.fn->launch(ptrs.data(), ws, st, &error);
            if (!ok)
              throw std::runtime_error(error);
            return true;
          },
          py::arg("inputs"), py::arg("outputs"), py::arg("stream"), py::arg("workspace") = 0,
          py::arg("upload_constants") = true, py::arg("inputs_as_is") = false,
          "run(inputs, outputs, stream, workspace=0, upload_constants=True): device tensors (or "
          "addresses), a CUstream handle, and the address of workspace_bytes of device memory for "
          "temporaries; upload_constants=False launches only (the constants are already in this "
          "workspace: upload_constants(workspace, stream) did it); inputs_as_is: run only if every input "
          "tensor is a contiguous, 16-byte aligned torch.Tensor or Parameter; returns whether it ran")
#ifdef DYN_HAS_ATEN
      .def(
          "run_held",
          [](CompiledGpu &self, py::list inputs, py::list specs, py::object taken, uintptr_t stream, int device) {
            PyObject *r = dyn_run_steps_held(self.fn.get(), inputs.ptr(), specs.ptr(), taken.ptr(),
                                             reinterpret_cast<void *>(stream), device);
            if (!r)
              throw py::error_already_set();
            return py::reinterpret_steal<py::list>(r);
          },
          py::arg("inputs"), py::arg("specs"), py::arg("taken"), py::arg("stream"), py::arg("device"),
          "runs a static plan step by step on device `device`: each output ((shape, strides, dtype) in specs, "
          "unless taken: {output: tensor}), scratch buffer and the workspace allocated by torch right before "
          "the first step that uses it, each input dropped after the last step that reads it (the list is "
          "emptied: its references are the ones dropped); returns the outputs")
#endif
      .def(
          "run_steps",
          [](CompiledGpu &self, py::handle buffers, uintptr_t stream, uintptr_t workspace, size_t begin,
             size_t end) {
            std::vector<void *> ptrs = callPointers(self, buffers, py::none(), dataPtrName);
            std::string error;
            void *ws = reinterpret_cast<void *>(workspace), *st = reinterpret_cast<void *>(stream);
            bool ok = begin == 0 ? self.fn->uploadConstants(ws, st, &error) : true;
            if (!ok || !self.fn->launchSteps(ptrs.data(), ws, st, begin, end, &error))
              throw std::runtime_error(error);
          },
          py::arg("buffers"), py::arg("stream"), py::arg("workspace"), py::arg("begin"), py::arg("end"),
          "runs steps [begin, end) of the plan (kernel launches and library calls) on `buffers`: every input "
          "then every output (contiguous, 16-byte aligned; device addresses as ints, 0 for one the range does "
          "not use: buffer_steps), then the sizes of buffer_sizes; the workspace is the same at every part of "
          "a call; begin == 0 copies the constants in first")
      .def_property_readonly(
          "buffer_steps", [](CompiledGpu &self) { return self.fn->bufferSteps(); },
          "per buffer (inputs, then outputs), the first and last step that uses it, flattened (-1: none)")
      .def_property_readonly(
          "scratch", [](CompiledGpu &self) { return self.fn->scratch(); },
          "per scratch buffer (compile_gpu's scratch_min_bytes), its bytes, first and last step, flattened")
      .def(
          "upload_constants",
          [](CompiledGpu &self, uintptr_t stream, uintptr_t workspace) {
            std::string error;
            if (!self.fn->uploadConstants(reinterpret_cast<void *>(workspace),
                                          reinterpret_cast<void *>(stream), &error))
              throw std::runtime_error(error);
          },
          py::arg("stream"), py::arg("workspace"),
          "copies the dense constants into their slots of a workspace")
      .def_property_readonly("workspace_bytes",
                             [](CompiledGpu &self) { return self.fn->workspaceBytes(); })
      .def_property_readonly(
          "workspace_steps", [](CompiledGpu &self) { return self.fn->workspaceSteps(); },
          "the first and last step that use the static workspace (first > last: none); run_steps of parts "
          "outside them takes workspace 0")
      .def_property_readonly(
          "memory_plan",
          [](CompiledGpu &self) {
            dyn::CompiledGpuFunction::MemoryPlan m = self.fn->memoryPlan();
            py::dict d;
            d["temporaries"] = m.temporaries;
            d["temporary_bytes"] = m.temporaryBytes;
            d["workspace_bytes"] = m.workspaceBytes;
            d["constant_bytes"] = m.constantBytes;
            d["runtime_sized"] = m.runtimeSized;
            d["scratch_buffers"] = m.scratchBuffers;
            d["live_bytes"] = m.liveBytes;
            d["hosted_bytes"] = m.hostedBytes;
            return d;
          },
          "the temporaries: how many, their static bytes each in a buffer of its own, the workspace holding "
          "them placed by liveness (dense constants included: constant_bytes) and its lower bound, the most "
          "bytes live at one step (live_bytes), how many are placed at each call (runtime_sized) or are "
          "scratch buffers, and the bytes of those placed in output buffers before the outputs' first steps "
          "(hosted_bytes, not in the workspace)")
      .def(
          "workspace_bytes_for",
          [](CompiledGpu &self, const std::vector<int64_t> &sizes) {
            if (sizes.size() * 2 != self.fn->bufferSizes().size())
              throw py::value_error("workspace_bytes_for(): expected " +
                                    std::to_string(self.fn->bufferSizes().size() / 2) + " sizes");
            std::string error;
            uint64_t bytes = self.fn->workspaceBytes(sizes.data(), &error);
            if (bytes == ~uint64_t(0))
              throw std::runtime_error(error);
            return bytes;
          },
          py::arg("sizes"), "the workspace a call with these sizes (buffer_sizes' order) needs")
      .def_property_readonly("buffer_sizes", [](CompiledGpu &self) { return self.fn->bufferSizes(); },
                             "the sizes run() takes after the outputs: (buffer index, dim) pairs, flattened")
      .def_readonly("num_buffers", &CompiledGpu::numBuffers)
      .def_property_readonly("stages", &stageList<CompiledGpu>)
      .def_property_readonly("ptx", [](CompiledGpu &self) { return self.fn->ptx(); })
      .def_property_readonly("num_launches", [](CompiledGpu &self) { return self.fn->numLaunches(); })
      .def_property_readonly("compile_seconds",
                             [](CompiledGpu &self) { return self.fn->compileSeconds(); })
      .def_property_readonly("in_place", [](CompiledGpu &self) { return self.fn->inPlace(); },
                             "per output, the input it may be written into (the one it updates), else -1")
      .def_property_readonly("channels_last_results",
                             [](CompiledGpu &self) { return self.fn->channelsLastResults(); },
                             "the results written [N, *spatial, C] (dyn.layout_free_results allowed it)");
  m.def(
      "compile_gpu",
      [](const std::string &ir, const std::string &funcName, bool keepStages, size_t numBuffers,
         const std::string &target, uint64_t scratchMinBytes) {
        dyn::CompileOptions opts;
        opts.keepStageIR = keepStages;
        opts.gpuTarget = target;
        opts.scratchMinBytes = scratchMinBytes;
        std::string error;
        std::unique_ptr<dyn::CompiledGpuFunction> fn;
        {
          py::gil_scoped_release release;
          fn = dyn::compileGraphForGPU(ir, funcName, opts, &error);
        }
        if (!fn)
          throw std::runtime_error(error.empty() ? std::string("dyn GPU compile failed") : error);
        auto c = std::make_unique<CompiledGpu>();
        c->fn = std::move(fn);
        // run() takes the sizes of dynamic dims after the buffers, then the scratch buffers
        c->numBuffers =
            numBuffers ? numBuffers + c->fn->bufferSizes().size() / 2 + c->fn->scratch().size() / 3 : 0;
        return c;
      },
      py::arg("graph_ir"), py::arg("func_name") = "forward", py::arg("keep_stages") = false,
      py::arg("num_buffers") = 0, py::arg("target") = "", py::arg("scratch_min_bytes") = 0,
      "target: the GPU pipeline's options describing the device (chip=sm_90 sm-count=132 ...); "
      "scratch_min_bytes: temporaries of at least this size become buffers of their own (scratch), "
      "passed to run_steps after the other buffers");
  m.def("host_cache_stats", [] {
    dyn::HostCacheStats s = dyn::hostCacheCounters();
    py::dict d;
    d["hits"] = s.hits;
    d["misses"] = s.misses;
    d["cached_bytes"] = s.cachedBytes;
    d["live_bytes"] = s.liveBytes;
    d["peak_bytes"] = s.peakBytes;
    return d;
  });
  m.def("empty_host_cache", [] { dyn::emptyHostCache(); });
  m.def("reset_host_peak", [] { dyn::resetHostPeak(); },
        "starts a new peak of the bytes compiled CPU functions hold (host_cache_stats()['peak_bytes'])");
#else
  m.attr("HAS_COMPILER") = false;
  m.def("compile", [](py::args, py::kwargs) -> py::object { noCompiler(); });
  m.def("lower", [](py::args, py::kwargs) -> py::object { noCompiler(); });
#endif
}
