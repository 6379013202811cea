// A static compiled GPU function run step by step, its buffers held only while its steps use them: each
// output, scratch buffer and the workspace allocated from torch's caching allocator right before the first
// step that uses it, each input dropped right after the last step that reads it. A backward then holds what
// eager's holds at each point (the saved values still to be read, the gradients written so far) rather
// than a part's worth more; the launches between two such points run as one range (launchSteps).
// Stream-ordered reuse: everything runs on one stream, the one torch's allocator orders its blocks by.
#include "dyn/Compiler/Compiler.h"

#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>

#include <string>
#include <vector>

namespace {

std::vector<int64_t> ints(PyObject *tuple) {
  std::vector<int64_t> v;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); ++i)
    v.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(tuple, i)));
  return v;
}

struct Events {
  std::vector<std::vector<int64_t>> outputs, scratchAlloc, inputsFree, scratchFree;
  explicit Events(size_t steps) : outputs(steps), scratchAlloc(steps), inputsFree(steps), scratchFree(steps) {}
};

} // namespace

/// The outputs of `fn` (a static CUDA function) on `inputs`, a list this call empties (its tensors'
/// references are dropped as their last readers run). specs: (shape, strides, dtype) per output; taken:
/// {output index: the tensor it is written into} or None. Returns a new list of the outputs, or null with
/// a Python error set.
extern "C" PyObject *dyn_run_steps_held(dyn::CompiledGpuFunction *fn, PyObject *inputs, PyObject *specs,
                                        PyObject *taken, void *stream, int device) {
  try {
    const size_t nIn = (size_t)PyList_GET_SIZE(inputs), nOut = (size_t)PyList_GET_SIZE(specs);
    const std::vector<int64_t> &bs = fn->bufferSteps();
    const std::vector<int64_t> &sc = fn->scratch();
    const size_t steps = fn->numLaunches(), nScratch = sc.size() / 3;
    if (bs.size() != 2 * (nIn + nOut)) {
      PyErr_SetString(PyExc_ValueError, "run_held(): the buffers do not match the function's");
      return nullptr;
    }
    std::vector<at::Tensor> ins(nIn), outs(nOut), scratch(nScratch);
    for (size_t j = 0; j < nIn; ++j) {
      PyObject *o = PyList_GET_ITEM(inputs, j);
      if (!THPVariable_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "run_held(): inputs must be tensors");
        return nullptr;
      }
      ins[j] = THPVariable_Unpack(o);
    }
    for (size_t j = 0; j < nIn; ++j) // the caller's references go: ours are the last
      PyList_SetItem(inputs, (Py_ssize_t)j, Py_NewRef(Py_None));
    std::vector<void *> ptrs(nIn + nOut + nScratch, nullptr);
    for (size_t j = 0; j < nIn; ++j)
      ptrs[j] = ins[j].data_ptr();
    if (taken && taken != Py_None) {
      PyObject *key, *value;
      Py_ssize_t pos = 0;
      while (PyDict_Next(taken, &pos, &key, &value)) {
        size_t k = (size_t)PyLong_AsSize_t(key);
        if (k < nOut && THPVariable_Check(value)) {
          outs[k] = THPVariable_Unpack(value);
          ptrs[nIn + k] = outs[k].data_ptr();
        }
      }
    }
    if (steps == 0) {
      PyErr_SetString(PyExc_ValueError, "run_held(): the function has no steps");
      return nullptr;
    }
    Events at(steps);
    auto clamp = [&](int64_t s) { return (size_t)std::min<int64_t>(std::max<int64_t>(s, 0), (int64_t)steps - 1); };
    for (size_t k = 0; k < nOut; ++k)
      if (!outs[k].defined())
        at.outputs[clamp(bs[2 * (nIn + k)])].push_back((int64_t)k); // an output no step writes: at the start
    std::vector<int64_t> unread;
    for (size_t j = 0; j < nIn; ++j) {
      int64_t last = bs[2 * j + 1];
      if (last < 0)
        unread.push_back((int64_t)j);
      else
        at.inputsFree[clamp(last)].push_back((int64_t)j);
    }
    for (size_t i = 0; i < nScratch; ++i) {
      at.scratchAlloc[clamp(sc[3 * i + 1])].push_back((int64_t)i);
      at.scratchFree[clamp(sc[3 * i + 2])].push_back((int64_t)i);
    }
    auto [wsFirst, wsLast] = fn->workspaceSteps();
    const uint64_t wsBytes = fn->workspaceBytes();
    const bool wsUsed = wsBytes && wsFirst <= wsLast;
    const size_t wsAlloc = wsUsed ? clamp(wsFirst) : steps, wsFree = wsUsed ? clamp(wsLast) : steps;
    at::Tensor workspace;
    const auto device_ = at::Device(at::kCUDA, (c10::DeviceIndex)device);
    const auto bytes = at::TensorOptions().dtype(at::kByte).device(device_);

    for (int64_t j : unread)
      ins[(size_t)j].reset(), ptrs[(size_t)j] = nullptr;
    std::string error;
    size_t begin = 0;
    bool uploaded = false;
    auto runTo = [&](size_t end) {
      if (end <= begin)
        return true;
      void *ws = workspace.defined() ? workspace.data_ptr() : nullptr;
      if (!uploaded) { // the dense constants into their slots, before the first launch
        uploaded = true;
        if (!fn->uploadConstants(ws, stream, &error))
          return false;
      }
      bool ok = fn->launchSteps(ptrs.data(), ws, stream, begin, end, &error);
      begin = end;
      return ok;
    };
    for (size_t s = 0; s < steps; ++s) {
      if (!at.outputs[s].empty() || !at.scratchAlloc[s].empty() || s == wsAlloc) {
        if (!runTo(s))
          break;
        for (int64_t k : at.outputs[s]) {
          PyObject *spec = PyList_GET_ITEM(specs, k);
          PyObject *dtype = PyTuple_GET_ITEM(spec, 2);
          if (Py_TYPE(dtype) != &THPDtypeType) {
            PyErr_SetString(PyExc_TypeError, "run_held(): a spec's dtype is not a torch.dtype");
            return nullptr;
          }
          outs[(size_t)k] = at::empty_strided(ints(PyTuple_GET_ITEM(spec, 0)), ints(PyTuple_GET_ITEM(spec, 1)),
                                              at::TensorOptions()
                                                  .dtype(reinterpret_cast<THPDtype *>(dtype)->scalar_type)
                                                  .device(device_));
          ptrs[nIn + (size_t)k] = outs[(size_t)k].data_ptr();
        }
        for (int64_t i : at.scratchAlloc[s]) {
          scratch[(size_t)i] = at::empty({sc[3 * i]}, bytes);
          ptrs[nIn + nOut + (size_t)i] = scratch[(size_t)i].data_ptr();
        }
        if (s == wsAlloc)
          workspace = at::empty({(int64_t)wsBytes}, bytes);
      }
      if (!at.inputsFree[s].empty() || !at.scratchFree[s].empty() || s == wsFree) {
        if (!runTo(s + 1))
          break;
        for (int64_t j : at.inputsFree[s])
          ins[(size_t)j].reset(), ptrs[(size_t)j] = nullptr;
        for (int64_t i : at.scratchFree[s])
          scratch[(size_t)i].reset(), ptrs[nIn + nOut + (size_t)i] = nullptr;
        if (s == wsFree)
          workspace.reset();
      }
    }
    if (error.empty())
      runTo(steps);
    if (!error.empty()) {
      PyErr_SetString(PyExc_RuntimeError, error.c_str());
      return nullptr;
    }
    PyObject *list = PyList_New((Py_ssize_t)nOut);
    for (size_t k = 0; k < nOut; ++k)
      PyList_SET_ITEM(list, (Py_ssize_t)k, THPVariable_Wrap(outs[k]));
    return list;
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}
