/* dyn._C guards (guards.c): the cache-entry check the frame hook (eval_frame.c) runs on each call. */
#ifndef DYN_PYTHON_GUARDS_H
#define DYN_PYTHON_GUARDS_H

#include <Python.h>

/* The first entry of `entries` (a list) whose guards pass for the arguments `argtuple`: a new reference;
 * NULL with no exception when none does, NULL with an exception on error. */
PyObject *dyn_guard_lookup(PyObject *entries, PyObject *argtuple);
/* Interns the names the guards read; -1 with an exception on failure. */
int dyn_guards_init(void);

#endif /* DYN_PYTHON_GUARDS_H */
