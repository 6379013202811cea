/* dyn._C guards: whether a cache entry of a dyn-compiled frame matches the call's arguments, checked in C
 * (the frame hook, eval_frame.c, calls dyn_guard_lookup on every intercepted call).
 *
 * Entry: tuple (guards, fn[, extra[, globals[, paths]]]); guards has one item per bound argument:
 *   None                                                     no check
 *   (0, type, dtype, device, sizes, strides, requires_grad)  tensor: exact type, dtype identity,
 *                                                            device ==, size() ==, stride() ==
 *   (1, obj)                                                 identity
 *   (2, type, value)                                         exact type and strict_eq
 * fn None means "run the frame normally". extra, when present and not None, is extra(args) -> bool
 * for guards not on the arguments themselves (module attributes, grad mode). globals, when present and
 * not None, is a tuple of (dict or cell, key, value, kind): the global or closure variable still holds
 * value (kind 1: identity; kind 2: same type and ==); where is a callable instead of a dict or cell
 * for global state (torch.is_grad_enabled, torch.get_default_dtype): it is called with no arguments.
 * paths, when present and not None, guards objects reached from the arguments (check_paths). Order:
 * arguments, globals, paths, then extra.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "guards.h"

static PyObject *s_dtype, *s_device, *s_size, *s_stride, *s_requires_grad, *s_forward;
static PyObject *s_hooks[4]; /* a module's hook dicts (module guards: all empty) */

/* Equality for guarded constants: same types all the way down (2 is not 2.0, (2,) is not (2.0,)) and
 * floats by their bits (0.0 is not -0.0; a NaN matches itself). 1 equal, 0 not, -1 error. */
static int strict_eq(PyObject *a, PyObject *b) {
  if (a == b)
    return 1;
  if (Py_TYPE(a) != Py_TYPE(b))
    return 0;
  if (PyFloat_CheckExact(a)) {
    double x = PyFloat_AS_DOUBLE(a), y = PyFloat_AS_DOUBLE(b);
    return memcmp(&x, &y, sizeof x) == 0;
  }
  if (PyTuple_CheckExact(a) || PyList_CheckExact(a)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(a);
    if (n != PySequence_Fast_GET_SIZE(b))
      return 0;
    for (Py_ssize_t i = 0; i < n; ++i) {
      int r = strict_eq(PySequence_Fast_GET_ITEM(a, i), PySequence_Fast_GET_ITEM(b, i));
      if (r != 1)
        return r;
    }
    return 1;
  }
  if (PyDict_CheckExact(a)) {
    if (PyDict_GET_SIZE(a) != PyDict_GET_SIZE(b))
      return 0;
    Py_ssize_t i = 0, j = 0;
    PyObject *ka, *va, *kb, *vb;
    while (PyDict_Next(a, &i, &ka, &va)) {
      if (!PyDict_Next(b, &j, &kb, &vb))
        return 0;
      int r = strict_eq(ka, kb);
      if (r == 1)
        r = strict_eq(va, vb);
      if (r != 1)
        return r;
    }
    return 1;
  }
  return PyObject_RichCompareBool(a, b, Py_EQ);
}

/* The tensor check read from the C++ tensor (torch_tensors.cpp, where the extension is built with
 * torch): 1 pass, 0 fail, 2 not decided there. */
static int (*g_fast_tensor_check)(PyObject *, PyObject *);

void dyn_eval_frame_set_tensor_check(int (*check)(PyObject *, PyObject *)) { g_fast_tensor_check = check; }

/* 1 pass, 0 fail, -1 error (exception set). */
static int check_tensor(PyObject *a, PyObject *g) {
  if (PyTuple_GET_SIZE(g) != 7)
    return 0;
  if ((PyObject *)Py_TYPE(a) != PyTuple_GET_ITEM(g, 1))
    return 0;
  if (g_fast_tensor_check) {
    int r = g_fast_tensor_check(a, g);
    if (r != 2)
      return r;
  }
  PyObject *v = PyObject_GetAttr(a, s_dtype);
  if (!v)
    return -1;
  int ok = v == PyTuple_GET_ITEM(g, 2);
  Py_DECREF(v);
  if (!ok)
    return 0;
  v = PyObject_CallMethodNoArgs(a, s_size);
  if (!v)
    return -1;
  ok = PyObject_RichCompareBool(v, PyTuple_GET_ITEM(g, 4), Py_EQ);
  Py_DECREF(v);
  if (ok != 1)
    return ok;
  v = PyObject_CallMethodNoArgs(a, s_stride);
  if (!v)
    return -1;
  ok = PyObject_RichCompareBool(v, PyTuple_GET_ITEM(g, 5), Py_EQ);
  Py_DECREF(v);
  if (ok != 1)
    return ok;
  v = PyObject_GetAttr(a, s_requires_grad);
  if (!v)
    return -1;
  ok = v == PyTuple_GET_ITEM(g, 6);
  Py_DECREF(v);
  if (!ok)
    return 0;
  v = PyObject_GetAttr(a, s_device);
  if (!v)
    return -1;
  ok = PyObject_RichCompareBool(v, PyTuple_GET_ITEM(g, 3), Py_EQ);
  Py_DECREF(v);
  return ok;
}

/* torch.nn.ModuleList and torch.nn.Sequential (exact types), looked up once. */
static PyTypeObject *g_module_list, *g_sequential;
static PyObject *s_modules;

static void load_module_containers(void) {
  static int loaded;
  if (loaded)
    return;
  loaded = 1;
  PyObject *m = PyImport_ImportModule("torch.nn.modules.container");
  if (!m) {
    PyErr_Clear();
    return;
  }
  PyObject *l = PyObject_GetAttrString(m, "ModuleList"), *q = PyObject_GetAttrString(m, "Sequential");
  PyErr_Clear();
  if (l && PyType_Check(l))
    g_module_list = (PyTypeObject *)l; /* kept: classes live as long as torch */
  else
    Py_XDECREF(l);
  if (q && PyType_Check(q))
    g_sequential = (PyTypeObject *)q;
  else
    Py_XDECREF(q);
  Py_DECREF(m);
}

/* v[i] for a ModuleList or Sequential, read from its _modules dict as their __getitem__ does (key
 * str(i), or the i-th module in order; negative i from the end) without running that Python method:
 * guards on a model's layers index them on every call. New reference; NULL with IndexError set when
 * out of range; NULL with no exception when v is not one of them (the caller indexes it normally). */
static PyObject *module_item(PyObject *v, PyObject *step) {
  load_module_containers();
  if ((Py_TYPE(v) != g_module_list && Py_TYPE(v) != g_sequential) || !PyLong_CheckExact(step))
    return NULL;
  PyObject *d = PyObject_GenericGetAttr(v, s_modules);
  if (!d) {
    PyErr_Clear();
    return NULL;
  }
  PyObject *r = NULL;
  Py_ssize_t i = PyLong_AsSsize_t(step), n = PyDict_Check(d) ? PyDict_GET_SIZE(d) : -1;
  if (i == -1 && PyErr_Occurred())
    PyErr_Clear();
  else if (n >= 0) {
    if (i < 0)
      i += n;
    if (i < 0 || i >= n) {
      PyErr_SetString(PyExc_IndexError, "index out of range");
    } else if (Py_TYPE(v) == g_module_list) { /* ModuleList: _modules[str(i)] */
      PyObject *key = PyUnicode_FromFormat("%zd", i);
      r = key ? PyDict_GetItemWithError(d, key) : NULL;
      Py_XDECREF(key);
      if (r)
        Py_INCREF(r);
      else if (!PyErr_Occurred())
        PyErr_SetString(PyExc_KeyError, "ModuleList item");
    } else { /* Sequential: the i-th module in order */
      Py_ssize_t pos = 0, k = 0;
      PyObject *key, *value;
      while (PyDict_Next(d, &pos, &key, &value))
        if (k++ == i) {
          r = Py_NewRef(value);
          break;
        }
    }
  }
  Py_DECREF(d);
  return r;
}

/* v.step: an attribute name (str), an index (int) or ("item", key). New reference, or NULL with an
 * exception set. */
static PyObject *resolve_step(PyObject *v, PyObject *step) {
  PyObject *next;
  if (PyUnicode_Check(step))
    return PyObject_GetAttr(v, step);
  if (PyTuple_Check(step) && PyTuple_GET_SIZE(step) == 2)
    return PyObject_GetItem(v, PyTuple_GET_ITEM(step, 1));
  if (!(next = module_item(v, step)) && !PyErr_Occurred())
    next = PyObject_GetItem(v, step);
  return next;
}

/* The object at a path: (0, arg index, step...) or (1, object, step...); a step is an attribute name
 * (str), an index (int) or ("item", key). New reference, or NULL with an exception set. */
static PyObject *resolve_path(PyObject *path, PyObject *const *args, Py_ssize_t nargs) {
  Py_ssize_t n = PyTuple_GET_SIZE(path);
  if (n < 2) {
    PyErr_SetString(PyExc_RuntimeError, "dyn: malformed guard path");
    return NULL;
  }
  PyObject *v;
  if (PyTuple_GET_ITEM(path, 0) == Py_False) {
    Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(path, 1));
    if (i < 0 || i >= nargs) {
      if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "dyn: guard path argument out of range");
      return NULL;
    }
    v = args[i];
  } else {
    v = PyTuple_GET_ITEM(path, 1);
  }
  Py_INCREF(v);
  for (Py_ssize_t k = 2; k < n && v; ++k) {
    PyObject *next = resolve_step(v, PyTuple_GET_ITEM(path, k));
    Py_DECREF(v);
    v = next;
  }
  return v;
}

/* Structure guard: (type, keys, items). keys: a tuple of dict keys in order, the length of a list or
 * tuple, or None for a set (then items is a copy compared with ==); items: per item (0 not checked,
 * 1 identity, 2 strict_eq; value). 1 pass, 0 fail, -1 error. */
static int check_structure(PyObject *v, PyObject *g) {
  if (!PyTuple_Check(g) || PyTuple_GET_SIZE(g) != 3)
    return 0;
  if ((PyObject *)Py_TYPE(v) != PyTuple_GET_ITEM(g, 0))
    return 0;
  PyObject *keys = PyTuple_GET_ITEM(g, 1), *items = PyTuple_GET_ITEM(g, 2);
  if (keys == Py_None)
    return PyObject_RichCompareBool(v, items, Py_EQ);
  Py_ssize_t n = PyTuple_GET_SIZE(items), pos = 0;
  PyObject *key, *x;
  if (PyDict_Check(v)) {
    if (!PyTuple_Check(keys) || PyDict_GET_SIZE(v) != n)
      return 0;
  } else if (PyList_Check(v) || PyTuple_Check(v)) {
    if (PySequence_Fast_GET_SIZE(v) != PyLong_AsSsize_t(keys))
      return 0;
  } else {
    return 0;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (PyDict_Check(v)) {
      if (!PyDict_Next(v, &pos, &key, &x))
        return 0;
      int r = strict_eq(key, PyTuple_GET_ITEM(keys, i));
      if (r != 1)
        return r;
    } else {
      x = PySequence_Fast_GET_ITEM(v, i);
    }
    PyObject *item = PyTuple_GET_ITEM(items, i);
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(item, 0));
    PyObject *want = PyTuple_GET_ITEM(item, 1);
    if (kind == 1 && x != want)
      return 0;
    if (kind == 2) {
      int r = strict_eq(x, want);
      if (r != 1)
        return r;
    }
  }
  return 1;
}

/* object.__getattribute__, and whether a type reads attributes with it (then, __getattr__ or not, an
 * attribute in the instance __dict__ that no data descriptor of the type shadows is what getattr
 * returns). */
static PyObject *s_getattribute, *g_object_getattribute;

static int generic_lookup(PyTypeObject *t) {
  return g_object_getattribute && _PyType_Lookup(t, s_getattribute) == g_object_getattribute;
}

/* v.name read from v's __dict__ (borrowed), or NULL: not there (no exception), shadowed by a data
 * descriptor of the type (no exception), or an error. */
static PyObject *dict_attr(PyObject *v, PyObject *dict, PyObject *name) {
  PyObject *descr = _PyType_Lookup(Py_TYPE(v), name);
  if (descr && Py_TYPE(descr)->tp_descr_set)
    return NULL;
  return PyDict_GetItemWithError(dict, name);
}

/* The module guard read from the instance __dict__ and the type, as getattr would find them, without
 * making a bound method a call (263 module guards in a ViT-B): 1 pass, 0 fail, 2 not decided here. */
static int check_module_fast(PyObject *m, PyObject *want) {
  PyTypeObject *t = Py_TYPE(m);
  if (!generic_lookup(t))
    return 2;
  PyObject *dict = PyObject_GenericGetDict(m, NULL);
  if (!dict) {
    PyErr_Clear();
    return 2;
  }
  int r = 2;
  for (int i = 0; i < 4; ++i) {
    PyObject *d = dict_attr(m, dict, s_hooks[i]);
    if (!d)
      goto done;
    if (!PyDict_Check(d) || PyDict_GET_SIZE(d) != 0) {
      r = 0;
      goto done;
    }
  }
  PyObject *fwd = dict_attr(m, dict, s_forward);
  if (fwd) {
    r = PyMethod_Check(fwd) ? (PyMethod_GET_FUNCTION(fwd) == want && PyMethod_GET_SELF(fwd) == m)
                            : fwd == want;
  } else if (!PyErr_Occurred()) {
    PyObject *cls = _PyType_Lookup(t, s_forward);
    if (cls && PyFunction_Check(cls)) /* getattr binds the class's function to m */
      r = cls == want;
  }
done:
  if (PyErr_Occurred())
    PyErr_Clear(); /* decided by getattr below */
  Py_DECREF(dict);
  return r;
}

/* Module guard: an inlined module still has no hooks and the same forward (want: the function its
 * forward resolves to: the class's, bound to it, or what was set on the instance). 1 pass, 0 fail. */
static int check_module(PyObject *m, PyObject *want) {
  int fast = check_module_fast(m, want);
  if (fast != 2)
    return fast;
  for (int i = 0; i < 4; ++i) {
    PyObject *d = PyObject_GetAttr(m, s_hooks[i]);
    if (!d) {
      PyErr_Clear(); /* a torch without this kind of hook */
      continue;
    }
    int empty = PyDict_Check(d) && PyDict_GET_SIZE(d) == 0;
    Py_DECREF(d);
    if (!empty)
      return 0;
  }
  PyObject *fwd = PyObject_GetAttr(m, s_forward);
  if (!fwd) {
    PyErr_Clear();
    return 0;
  }
  int ok = PyMethod_Check(fwd) ? (PyMethod_GET_FUNCTION(fwd) == want && PyMethod_GET_SELF(fwd) == m)
                               : fwd == want;
  Py_DECREF(fwd);
  return ok;
}

/* One guard on the value v: kind 0 tensor, 1 identity, 2 strict_eq, 3 structure, 4 want(v) -> bool,
 * 5 module (no hooks, same forward). 1 pass, 0 fail, -1 error. */
static int check_value(PyObject *v, long kind, PyObject *want) {
  switch (kind) {
  case 0:
    return check_tensor(v, want);
  case 1:
    return v == want;
  case 2:
    return strict_eq(v, want);
  case 3:
    return check_structure(v, want);
  case 5:
    return check_module(v, want);
  case 4: {
    PyObject *r = PyObject_CallOneArg(want, v);
    int ok = r ? PyObject_IsTrue(r) : -1;
    Py_XDECREF(r);
    return ok;
  }
  }
  return 0;
}

/* A path that cannot be followed any more (an attribute or item gone) fails the guard: 0, or -1 for
 * another error. */
static int unresolved(void) {
  if (PyErr_ExceptionMatches(PyExc_AttributeError) || PyErr_ExceptionMatches(PyExc_KeyError) ||
      PyErr_ExceptionMatches(PyExc_IndexError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    return 0;
  }
  return -1;
}

/* Guards on objects reached from the arguments or held by the graph: ((path, kind, value), ...). */
static int check_paths(PyObject *paths, PyObject *const *args, Py_ssize_t nargs) {
  if (!PyTuple_Check(paths))
    return 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(paths); ++i) {
    PyObject *g = PyTuple_GET_ITEM(paths, i);
    if (!PyTuple_Check(g) || PyTuple_GET_SIZE(g) != 3)
      return 0;
    PyObject *v = resolve_path(PyTuple_GET_ITEM(g, 0), args, nargs);
    if (!v)
      return unresolved();
    int ok = check_value(v, PyLong_AsLong(PyTuple_GET_ITEM(g, 1)), PyTuple_GET_ITEM(g, 2));
    Py_DECREF(v);
    if (ok != 1)
      return ok;
  }
  return 1;
}

/* The same guards as a tree (paths.py _guard_tree): a node's checks ((kind, value), ...) on v, then
 * its children (step, checks, children), each read once from v. */
static int check_node(PyObject *v, PyObject *checks, PyObject *children) {
  if (!PyTuple_Check(checks) || !PyTuple_Check(children))
    return 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(checks); ++i) {
    PyObject *c = PyTuple_GET_ITEM(checks, i);
    if (!PyTuple_Check(c) || PyTuple_GET_SIZE(c) != 2)
      return 0;
    int ok = check_value(v, PyLong_AsLong(PyTuple_GET_ITEM(c, 0)), PyTuple_GET_ITEM(c, 1));
    if (ok != 1)
      return ok;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(children); ++i) {
    PyObject *child = PyTuple_GET_ITEM(children, i);
    if (!PyTuple_Check(child) || PyTuple_GET_SIZE(child) != 3)
      return 0;
    PyObject *next = resolve_step(v, PyTuple_GET_ITEM(child, 0));
    if (!next)
      return unresolved();
    int ok = check_node(next, PyTuple_GET_ITEM(child, 1), PyTuple_GET_ITEM(child, 2));
    Py_DECREF(next);
    if (ok != 1)
      return ok;
  }
  return 1;
}

/* roots: ((flag, arg index or object, checks, children), ...); flag False: an argument. */
static int check_tree(PyObject *roots, PyObject *const *args, Py_ssize_t nargs) {
  if (!PyTuple_Check(roots))
    return 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(roots); ++i) {
    PyObject *r = PyTuple_GET_ITEM(roots, i), *v;
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 4)
      return 0;
    if (PyTuple_GET_ITEM(r, 0) == Py_False) {
      Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 1));
      if (k < 0 || k >= nargs) {
        if (!PyErr_Occurred())
          PyErr_SetString(PyExc_RuntimeError, "dyn: guard path argument out of range");
        return -1;
      }
      v = args[k];
    } else {
      v = PyTuple_GET_ITEM(r, 1);
    }
    int ok = check_node(v, PyTuple_GET_ITEM(r, 2), PyTuple_GET_ITEM(r, 3));
    if (ok != 1)
      return ok;
  }
  return 1;
}

static int check_entry(PyObject *entry, PyObject *const *args, Py_ssize_t nargs, PyObject *argtuple) {
  if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) < 2)
    return 0;
  PyObject *guards = PyTuple_GET_ITEM(entry, 0);
  if (!PyTuple_Check(guards) || PyTuple_GET_SIZE(guards) != nargs)
    return 0;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    PyObject *g = PyTuple_GET_ITEM(guards, i);
    if (g == Py_None)
      continue;
    if (!PyTuple_Check(g) || PyTuple_GET_SIZE(g) < 2)
      return 0;
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(g, 0));
    PyObject *a = args[i];
    int ok;
    if (kind == 0) {
      ok = check_tensor(a, g);
    } else if (kind == 1) {
      ok = a == PyTuple_GET_ITEM(g, 1);
    } else if (kind == 2 && PyTuple_GET_SIZE(g) == 3) {
      ok = (PyObject *)Py_TYPE(a) == PyTuple_GET_ITEM(g, 1) ? strict_eq(a, PyTuple_GET_ITEM(g, 2)) : 0;
    } else {
      ok = -1;
      if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "dyn: malformed guard");
    }
    if (ok != 1)
      return ok;
  }
  if (PyTuple_GET_SIZE(entry) >= 4 && PyTuple_GET_ITEM(entry, 3) != Py_None) {
    /* global/closure/state guards: ((dict_or_cell_or_getter, key, value, kind), ...); kind 1 identity,
     * 2 strict_eq */
    PyObject *gs = PyTuple_GET_ITEM(entry, 3);
    if (!PyTuple_Check(gs))
      return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(gs); ++i) {
      PyObject *g = PyTuple_GET_ITEM(gs, i);
      if (!PyTuple_Check(g) || PyTuple_GET_SIZE(g) != 4)
        return 0;
      PyObject *where = PyTuple_GET_ITEM(g, 0), *v, *owned = NULL;
      if (PyDict_Check(where)) {
        v = PyDict_GetItemWithError(where, PyTuple_GET_ITEM(g, 1)); /* borrowed */
        if (!v)
          return PyErr_Occurred() ? -1 : 0;
      } else if (PyCell_Check(where)) {
        v = PyCell_GET(where);
        if (!v)
          return 0;
      } else if (PyCallable_Check(where)) {
        /* global state (grad mode, default dtype): a getter called with no arguments */
        v = owned = PyObject_CallNoArgs(where);
        if (!v)
          return -1;
      } else {
        return 0;
      }
      PyObject *want = PyTuple_GET_ITEM(g, 2);
      int eq = v == want;
      if (!eq && PyLong_AsLong(PyTuple_GET_ITEM(g, 3)) == 2)
        eq = strict_eq(v, want);
      Py_XDECREF(owned);
      if (eq != 1)
        return eq;
    }
  }
  if (PyTuple_GET_SIZE(entry) >= 6 && PyTuple_GET_ITEM(entry, 5) != Py_None) {
    int ok = check_tree(PyTuple_GET_ITEM(entry, 5), args, nargs);
    if (ok != 1)
      return ok;
  } else if (PyTuple_GET_SIZE(entry) >= 5 && PyTuple_GET_ITEM(entry, 4) != Py_None) {
    int ok = check_paths(PyTuple_GET_ITEM(entry, 4), args, nargs);
    if (ok != 1)
      return ok;
  }
  if (PyTuple_GET_SIZE(entry) >= 3 && PyTuple_GET_ITEM(entry, 2) != Py_None) {
    PyObject *r = PyObject_CallOneArg(PyTuple_GET_ITEM(entry, 2), argtuple);
    if (!r)
      return -1;
    int ok = PyObject_IsTrue(r);
    Py_DECREF(r);
    return ok;
  }
  return 1;
}

/* Returns a new reference to the matching entry, NULL with no exception on a miss, NULL with an
 * exception on error. */
PyObject *dyn_guard_lookup(PyObject *entries, PyObject *argtuple) {
  if (!entries || !PyList_Check(entries))
    return NULL;
  PyObject *const *args = &PyTuple_GET_ITEM(argtuple, 0);
  Py_ssize_t nargs = PyTuple_GET_SIZE(argtuple);
  /* the size is re-read: a Python guard may change the list */
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(entries); ++i) {
    PyObject *e = PyList_GET_ITEM(entries, i);
    Py_INCREF(e);
    int ok = check_entry(e, args, nargs, argtuple);
    if (ok == 1)
      return e;
    Py_DECREF(e);
    if (ok < 0)
      return NULL;
  }
  return NULL;
}

int dyn_guards_init(void) {
  s_dtype = PyUnicode_InternFromString("dtype");
  s_device = PyUnicode_InternFromString("device");
  s_size = PyUnicode_InternFromString("size");
  s_stride = PyUnicode_InternFromString("stride");
  s_requires_grad = PyUnicode_InternFromString("requires_grad");
  s_forward = PyUnicode_InternFromString("forward");
  s_modules = PyUnicode_InternFromString("_modules");
  s_getattribute = PyUnicode_InternFromString("__getattribute__");
  if (!s_getattribute)
    return -1;
  g_object_getattribute = _PyType_Lookup(&PyBaseObject_Type, s_getattribute); /* lives as long as object */
  const char *hooks[4] = {"_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks"};
  for (int i = 0; i < 4; ++i)
    if (!(s_hooks[i] = PyUnicode_InternFromString(hooks[i])))
      return -1;
  if (!s_dtype || !s_device || !s_size || !s_stride || !s_requires_grad || !s_forward)
    return -1;
  return 0;
}
