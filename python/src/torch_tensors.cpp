// What the extension reads from torch tensors in C++, on every call of a compiled model: the tensor
// guards (the frame hook checks each parameter: 152 tensors in a ViT-B) and the buffers of a compiled
// call. Reading dtype, size(), stride(), requires_grad and device through Python attributes builds a
// torch.Size, a tuple and a torch.device each time (1.6 us a tensor, 0.24 ms a ViT-B call); here it is
// one unpack and a few compares. Only torch.Tensor and nn.Parameter take these paths (their Python
// attributes are the C++ tensor's); any other subclass may answer size() or dtype its own way and is
// read through Python.
#include <torch/csrc/Device.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>

#include <ATen/core/Tensor.h>

namespace {

PyObject *parameterClass() {
  static PyObject *cls = [] {
    PyObject *m = PyImport_ImportModule("torch.nn.parameter");
    PyObject *c = m ? PyObject_GetAttrString(m, "Parameter") : nullptr; // lives as long as torch
    Py_XDECREF(m);
    if (!c)
      PyErr_Clear();
    return c;
  }();
  return cls;
}

/// The C++ tensor of a torch.Tensor or nn.Parameter, strided and with concrete sizes; else null.
const at::Tensor *plainTensor(PyObject *a) {
  PyObject *type = (PyObject *)Py_TYPE(a);
  if (type != (PyObject *)THPVariableClass && type != parameterClass())
    return nullptr;
  const at::Tensor &t = THPVariable_Unpack(a);
  if (!t.defined() || t.layout() != at::kStrided || t.is_nested() ||
      t.unsafeGetTensorImpl()->has_symbolic_sizes_strides())
    return nullptr;
  return &t;
}

/// 1 when the ints of `want` (a tuple) are `have`, 0 when not, -1 when `want` is no tuple of ints.
int sameInts(PyObject *want, c10::IntArrayRef have) {
  if (!PyTuple_Check(want))
    return -1;
  if (PyTuple_GET_SIZE(want) != (Py_ssize_t)have.size())
    return 0;
  for (size_t i = 0; i < have.size(); ++i) {
    PyObject *w = PyTuple_GET_ITEM(want, i);
    if (!PyLong_CheckExact(w))
      return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(w, &overflow);
    if (overflow || v != have[i])
      return 0;
  }
  return 1;
}

} // namespace

/// g: (0, type, dtype, device, sizes, strides, requires_grad), the type already matched. 1 pass,
/// 0 fail, 2 not decided here (the caller checks through Python).
extern "C" int dyn_fast_check_tensor(PyObject *a, PyObject *g) {
  PyObject *dtype = PyTuple_GET_ITEM(g, 2), *device = PyTuple_GET_ITEM(g, 3);
  if (Py_TYPE(dtype) != &THPDtypeType || Py_TYPE(device) != &THPDeviceType)
    return 2;
  const at::Tensor *p = plainTensor(a);
  if (!p)
    return 2;
  const at::Tensor &t = *p;
  if (t.scalar_type() != reinterpret_cast<THPDtype *>(dtype)->scalar_type)
    return 0;
  int r = sameInts(PyTuple_GET_ITEM(g, 4), t.sizes());
  if (r != 1)
    return r < 0 ? 2 : 0;
  r = sameInts(PyTuple_GET_ITEM(g, 5), t.strides());
  if (r != 1)
    return r < 0 ? 2 : 0;
  if ((PyTuple_GET_ITEM(g, 6) == Py_True) != t.requires_grad())
    return 0;
  return t.device() == reinterpret_cast<THPDevice *>(device)->device ? 1 : 0;
}

/// A compiled call's input as it is: its data pointer when it is a plain tensor, contiguous and
/// `align`-byte aligned (1); else 0, and the caller prepares its inputs in Python (a contiguous copy,
/// an aligned one) as before.
extern "C" int dyn_ready_tensor_data(PyObject *a, size_t align, void **data) {
  const at::Tensor *t = plainTensor(a);
  if (!t || !t->is_contiguous() || !t->has_storage())
    return 0;
  try {
    *data = t->data_ptr();
  } catch (const std::exception &) {
    return 0;
  }
  return align <= 1 || reinterpret_cast<uintptr_t>(*data) % align == 0;
}
