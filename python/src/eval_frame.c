/* dyn._C frame hook (PEP 523), CPython 3.11 and 3.12.
 *
 * While a dyn-compiled callable runs, its wrapper installs `dyn_eval_frame` together with a callback
 * (set_eval_frame). The hook intercepts only frames whose code object carries a dyn cache (a dict
 * {callback: [entry, ...]} attached with _PyCode_SetExtra), reads the bound arguments straight from
 * frame->localsplus (before MAKE_CELL runs they hold the raw arguments), checks each entry's guards
 * in C and on a hit calls the entry's callable instead of running the frame. On a miss it calls
 * callback(code, args), which returns an entry or None (run the frame normally). The hook is
 * uninstalled while the callback, the compiled callable or a normally-run frame executes, so Python
 * code not under a dyn wrapper keeps the interpreter's fast paths.
 *
 * The guards an entry carries and how they are checked: guards.c.
 *
 * Never crash: an internal error (allocation, unexpected frame) runs the frame normally. Exceptions
 * raised by the callback itself (dyn.Unsupported under fullgraph=True) propagate to the caller.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "guards.h"

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
#define DYN_HOOK_SUPPORTED 1
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#else
#define DYN_HOOK_SUPPORTED 0
#endif

#if PY_VERSION_HEX >= 0x030C0000
#define DYN_CODE_GET_EXTRA PyUnstable_Code_GetExtra
#define DYN_CODE_SET_EXTRA PyUnstable_Code_SetExtra
#define DYN_REQUEST_EXTRA_INDEX PyUnstable_Eval_RequestCodeExtraIndex
#else
#define DYN_CODE_GET_EXTRA _PyCode_GetExtra
#define DYN_CODE_SET_EXTRA _PyCode_SetExtra
#define DYN_REQUEST_EXTRA_INDEX _PyEval_RequestCodeExtraIndex
#endif

static PyObject *g_callback = NULL; /* strong reference while set */
static Py_ssize_t g_extra_index = -1;
static unsigned long long g_hits, g_misses, g_intercepted;

static void free_extra(void *p) { Py_XDECREF((PyObject *)p); }

#if DYN_HOOK_SUPPORTED
static _PyFrameEvalFunction g_prev_eval = NULL;
static int g_installed = 0;
static PyObject *dyn_eval_frame(PyThreadState *ts, _PyInterpreterFrame *frame, int throwflag);

static void install(int on) {
  PyInterpreterState *interp = PyThreadState_GET()->interp;
  if (on && !g_installed) {
    g_prev_eval = _PyInterpreterState_GetEvalFrameFunc(interp);
    _PyInterpreterState_SetEvalFrameFunc(interp, dyn_eval_frame);
    g_installed = 1;
  } else if (!on && g_installed) {
    _PyInterpreterState_SetEvalFrameFunc(interp, g_prev_eval ? g_prev_eval : _PyEval_EvalFrameDefault);
    g_installed = 0;
  }
}

/* Sets the callback (steals nothing; takes a new reference) and installs or removes the hook.
 * Returns the previous callback (new reference, or NULL). */
static PyObject *swap_callback(PyObject *cb) {
  PyObject *prev = g_callback;
  Py_XINCREF(cb);
  g_callback = cb;
  install(cb != NULL);
  return prev;
}

#if PY_VERSION_HEX >= 0x030C0000
/* 3.12: the evaluation function owns the frame's clean-up (the eval loop clears and pops entry frames
 * when they return), so a frame we do not run is cleared and popped here. Same steps as CPython's
 * clear_thread_frame / _PyFrame_ClearExceptCode / _PyThreadState_PopFrame for a frame without a frame
 * object (we never intercept frames that have one). */
static void clear_and_pop(PyThreadState *tstate, _PyInterpreterFrame *frame) {
  for (int i = 0; i < frame->stacktop; i++)
    Py_XDECREF(frame->localsplus[i]);
  frame->stacktop = 0;
  Py_XDECREF(frame->f_locals);
  frame->f_locals = NULL;
  Py_DECREF(frame->f_funcobj);
  Py_DECREF(frame->f_code);
  PyObject **base = (PyObject **)frame;
  _PyStackChunk *chunk = tstate->datastack_chunk;
  if (base == &chunk->data[0]) {
    _PyStackChunk *previous = chunk->previous;
    tstate->datastack_top = &previous->data[previous->top];
    tstate->datastack_chunk = previous;
    tstate->datastack_limit = (PyObject **)(((char *)previous) + previous->size);
    PyObjectArenaAllocator arena;
    PyObject_GetArenaAllocator(&arena);
    arena.free(arena.ctx, chunk, chunk->size);
  } else {
    tstate->datastack_top = base;
  }
}
#define DYN_FRAME_DONE(ts, f) clear_and_pop(ts, f)
#else
/* 3.11: _PyEval_Vector clears and pops the frame after the evaluation function returns. */
#define DYN_FRAME_DONE(ts, f) ((void)0)
#endif

static PyObject *run_default(PyThreadState *ts, _PyInterpreterFrame *frame, int throwflag) {
  return _PyEval_EvalFrameDefault(ts, frame, throwflag);
}

static PyObject *dyn_eval_frame(PyThreadState *ts, _PyInterpreterFrame *frame, int throwflag) {
  PyObject *cb = g_callback;
  if (cb == NULL || throwflag || frame->frame_obj != NULL)
    return run_default(ts, frame, throwflag);
#if PY_VERSION_HEX >= 0x030C0000
  if (frame->owner != FRAME_OWNED_BY_THREAD)
    return run_default(ts, frame, throwflag);
#endif
  PyCodeObject *code = frame->f_code;
  int flags = code->co_flags;
  if (flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR) || g_extra_index < 0)
    return run_default(ts, frame, throwflag);
  void *extra = NULL;
  if (DYN_CODE_GET_EXTRA((PyObject *)code, g_extra_index, &extra) < 0) {
    PyErr_Clear();
    return run_default(ts, frame, throwflag);
  }
  if (extra == NULL || !PyDict_Check((PyObject *)extra))
    return run_default(ts, frame, throwflag);
  Py_ssize_t nargs = code->co_argcount + code->co_kwonlyargcount + ((flags & CO_VARARGS) ? 1 : 0) +
                     ((flags & CO_VARKEYWORDS) ? 1 : 0);
  if (nargs > frame->stacktop)
    return run_default(ts, frame, throwflag);
  PyObject *args = PyTuple_New(nargs);
  if (!args) {
    PyErr_Clear();
    return run_default(ts, frame, throwflag);
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    PyObject *a = frame->localsplus[i];
    if (a == NULL) {
      Py_DECREF(args);
      return run_default(ts, frame, throwflag);
    }
    Py_INCREF(a);
    PyTuple_SET_ITEM(args, i, a);
  }
  ++g_intercepted;
  /* Python code below (guards, callback, compiled callable) runs without the hook. */
  Py_INCREF(cb);
  PyObject *saved = swap_callback(NULL); /* == cb */
  Py_XDECREF(saved);
  PyObject *entries = PyDict_GetItemWithError((PyObject *)extra, cb); /* borrowed */
  Py_XINCREF(entries);
  PyObject *entry = entries ? dyn_guard_lookup(entries, args) : NULL;
  Py_XDECREF(entries);
  PyObject *result = NULL;
  int run_frame = 0;
  int propagate = 0;
  if (entry == NULL && PyErr_Occurred()) {
    if (PyErr_ExceptionMatches(PyExc_Exception)) {
      /* A guard raised: do not guess, run the original code. */
      PyErr_Clear();
      run_frame = 1;
    } else {
      propagate = 1; /* KeyboardInterrupt or SystemExit arrived while the guards ran: the user's */
    }
  } else if (entry == NULL) {
    ++g_misses;
    entry = PyObject_CallFunctionObjArgs(cb, (PyObject *)code, args, NULL);
    propagate = entry == NULL; /* the callback raised on purpose (e.g. fullgraph=True) */
  } else {
    ++g_hits;
  }
  if (propagate) {
    Py_DECREF(args);
    PyObject *tmp = swap_callback(cb);
    Py_XDECREF(tmp);
    Py_DECREF(cb);
    DYN_FRAME_DONE(ts, frame);
    return NULL;
  }
  if (!run_frame) {
    PyObject *fn = (entry && PyTuple_Check(entry) && PyTuple_GET_SIZE(entry) >= 2) ? PyTuple_GET_ITEM(entry, 1)
                                                                                  : Py_None;
    if (fn == Py_None) {
      run_frame = 1;
    } else {
      result = PyObject_Call(fn, args, NULL);
    }
  }
  Py_XDECREF(entry);
  Py_DECREF(args);
  if (run_frame)
    result = run_default(ts, frame, throwflag); /* cleans up after itself */
  PyObject *tmp = swap_callback(cb);
  Py_XDECREF(tmp);
  Py_DECREF(cb);
  if (!run_frame)
    DYN_FRAME_DONE(ts, frame);
  return result;
}
#else
static PyObject *swap_callback(PyObject *cb) {
  PyObject *prev = g_callback;
  Py_XINCREF(cb);
  g_callback = cb;
  return prev;
}
#endif

static PyObject *py_set_eval_frame(PyObject *self, PyObject *cb) {
#if !DYN_HOOK_SUPPORTED
  if (cb != Py_None) {
    PyErr_SetString(PyExc_RuntimeError, "dyn: the frame hook needs CPython 3.11 or 3.12");
    return NULL;
  }
#endif
  PyObject *prev = swap_callback(cb == Py_None ? NULL : cb);
  if (prev == NULL)
    Py_RETURN_NONE;
  return prev;
}

static PyObject *py_code_cache(PyObject *self, PyObject *code) {
  if (!PyCode_Check(code)) {
    PyErr_SetString(PyExc_TypeError, "code_cache() takes a code object");
    return NULL;
  }
  void *extra = NULL;
  if (DYN_CODE_GET_EXTRA(code, g_extra_index, &extra) < 0)
    return NULL;
  if (extra == NULL) {
    PyObject *d = PyDict_New();
    if (!d)
      return NULL;
    if (DYN_CODE_SET_EXTRA(code, g_extra_index, d) < 0) {
      Py_DECREF(d);
      return NULL;
    }
    extra = d; /* the code object owns this reference */
  }
  Py_INCREF((PyObject *)extra);
  return (PyObject *)extra;
}

static PyObject *py_clear_code_cache(PyObject *self, PyObject *code) {
  if (!PyCode_Check(code)) {
    PyErr_SetString(PyExc_TypeError, "clear_code_cache() takes a code object");
    return NULL;
  }
  void *extra = NULL;
  if (DYN_CODE_GET_EXTRA(code, g_extra_index, &extra) < 0)
    return NULL;
  if (extra != NULL) {
    if (DYN_CODE_SET_EXTRA(code, g_extra_index, NULL) < 0)
      return NULL;
    Py_DECREF((PyObject *)extra);
  }
  Py_RETURN_NONE;
}

static PyObject *py_lookup(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  if (n != 2 || !PyTuple_Check(a[1])) {
    PyErr_SetString(PyExc_TypeError, "lookup(entries: list, args: tuple)");
    return NULL;
  }
  PyObject *e = dyn_guard_lookup(a[0], a[1]);
  if (e == NULL && !PyErr_Occurred())
    Py_RETURN_NONE;
  return e;
}

static PyObject *py_hook_stats(PyObject *self, PyObject *unused) {
  return Py_BuildValue("{sKsKsK}", "intercepted", g_intercepted, "hits", g_hits, "misses", g_misses);
}

static PyMethodDef methods[] = {
    {"set_eval_frame", py_set_eval_frame, METH_O,
     "set_eval_frame(callback or None) -> previous callback; installs/removes the frame hook"},
    {"code_cache", py_code_cache, METH_O, "code_cache(code) -> dict {callback: [entries]} attached to code"},
    {"clear_code_cache", py_clear_code_cache, METH_O, "clear_code_cache(code)"},
    {"lookup", (PyCFunction)(void (*)(void))py_lookup, METH_FASTCALL,
     "lookup(entries, args) -> first entry whose guards pass, or None"},
    {"hook_stats", py_hook_stats, METH_NOARGS, "counters of the frame hook"},
    {NULL, NULL, 0, NULL}};

PyMethodDef *dyn_eval_frame_methods(void) { return methods; }

int dyn_eval_frame_init(PyObject *module) {
  if (dyn_guards_init() < 0)
    return -1;
  g_extra_index = DYN_REQUEST_EXTRA_INDEX(free_extra);
  if (g_extra_index < 0)
    return -1;
  return PyModule_AddIntConstant(module, "HOOK_SUPPORTED", DYN_HOOK_SUPPORTED);
}
