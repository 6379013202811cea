//===- LibraryCalls.h - library-call registry internals ----------*- C++ -*-===//
//
// What the compiler and the generated code use of the registry; embedders
// register implementations through Compiler.h (registerLibraryCall).
//
//===----------------------------------------------------------------------===//
#ifndef DYN_COMPILER_LIBRARYCALLS_H
#define DYN_COMPILER_LIBRARYCALLS_H

#include "dyn/Runtime/LibraryCall.h"

#include <string>

namespace dyn {

/// The registered implementation of `name`, or null.
DynLibraryCallFn findLibraryCall(const std::string &name);
/// Why a graph needing `name` cannot be compiled here.
std::string missingLibraryCallMessage(const std::string &name);
/// Runs `call` with its registered implementation; false with `error` set
/// when there is none or it fails.
bool callLibrary(const DynLibraryCall &call, std::string *error);
/// The first failure of a library call made by JIT-compiled code on this
/// thread since the last take (empty when none); clears it.
std::string takeLibraryCallError();

} // namespace dyn

extern "C" {
/// Called by JIT-compiled CPU code (see dyn-convert-loop-to-scf): `name` is
/// a C string, `descriptor` the call's i64 descriptor, `buffers` an array of
/// buffer addresses (inputs, then the output).
void dyn_library_call(int64_t name, int64_t descriptor, int64_t buffers);
}

#endif // DYN_COMPILER_LIBRARYCALLS_H
