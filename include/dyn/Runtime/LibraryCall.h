/*===- LibraryCall.h - the library calls generated code makes ---*- C -*-===//
 *
 * Heavy ops (GEMMs, convolutions, attention) are `loop` ops that implement
 * LibraryCallOpInterface; the compiled code calls them by name through the
 * registry in lib/Compiler/LibraryCalls.cpp, from the JIT-compiled host code
 * on the CPU and as steps of the launch plan on the GPU. dyn's core links no
 * library for them: an embedder registers implementations (the Python
 * extension registers ATen's, python/src/aten_calls.cpp). Compiling a graph
 * that needs a name nobody registered fails with a clear error.
 *
 * Plain C so that any embedder can provide implementations. A buffer is its
 * first element's address, sizes and strides (in elements): row-major and
 * contiguous unless the op says otherwise (attention reads q, k, v and its
 * mask in place from views of other buffers, and may write its output into
 * one). On the GPU they are device pointers and the call must be ordered on
 * `stream` (the stream the compiled function runs on).
 * A call reads its inputs and writes every one of its outputs (a sort writes
 * its values and its indices; GEMMs, convolutions and attention write one).
 * docs/library_calls.md lists the names and their parameters.
 *
 *===----------------------------------------------------------------------===*/
#ifndef DYN_RUNTIME_LIBRARYCALL_H
#define DYN_RUNTIME_LIBRARYCALL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types of buffers. */
enum DynDType {
  DYN_F32 = 0,
  DYN_F64 = 1,
  DYN_F16 = 2,
  DYN_BF16 = 3,
  DYN_I64 = 4,
  DYN_I32 = 5,
  DYN_I16 = 6,
  DYN_I8 = 7,
  DYN_BOOL = 8, /* one byte per element */
  DYN_U8 = 9,
};

enum DynDevice { DYN_DEVICE_CPU = 0, DYN_DEVICE_CUDA = 1 };

typedef struct DynBuffer {
  void *data;    /* the first element */
  int32_t dtype; /* a DynDType */
  int32_t rank;
  const int64_t *sizes;
  const int64_t *strides; /* in elements; null: contiguous row-major */
} DynBuffer;

typedef struct DynLibraryCall {
  const char *name;
  int32_t device; /* a DynDevice; a CUDA call finds its device from the pointers */
  void *stream;   /* the CUstream on DYN_DEVICE_CUDA, else null */
  int32_t num_inputs;
  const DynBuffer *inputs;
  int32_t num_outputs; /* at least 1 */
  const DynBuffer *outputs;
  int32_t num_params;
  const int64_t *params;
} DynLibraryCall;

/* Returns 0 on success; otherwise writes a NUL-terminated message of at most
 * error_size bytes into error and returns non-zero. */
typedef int (*DynLibraryCallFn)(const DynLibraryCall *call, char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* DYN_RUNTIME_LIBRARYCALL_H */
