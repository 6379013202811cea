//===- Runtime.h - functions generated code calls ---------------*- C++ -*-===//
#ifndef DYN_RUNTIME_RUNTIME_H
#define DYN_RUNTIME_RUNTIME_H

#include <cstdint>
#include <utility>
#include <vector>

extern "C" {
/// c = a @ b on contiguous row-major buffers given as raw addresses:
/// [batch, m, k] x [batch, k, n] -> [batch, m, n].
void dyn_matmul_f32(int64_t a, int64_t b, int64_t c, int64_t batch, int64_t m, int64_t n,
                    int64_t k);
void dyn_matmul_f64(int64_t a, int64_t b, int64_t c, int64_t batch, int64_t m, int64_t n,
                    int64_t k);
/// c = a @ b^T, b given transposed: [batch, m, k] x [batch, n, k] -> [batch, m, n].
void dyn_matmul_nt_f32(int64_t a, int64_t b, int64_t c, int64_t batch, int64_t m, int64_t n,
                       int64_t k);
void dyn_matmul_nt_f64(int64_t a, int64_t b, int64_t c, int64_t batch, int64_t m, int64_t n,
                       int64_t k);
}

namespace dyn {
/// The GNU OpenMP (libgomp) loaded in this process, or null: none, or
/// DYN_OPENMP=libomp. When there is one, JIT-compiled kernels run their
/// OpenMP loops on its threads (lib/Runtime/OpenMPShim.cpp).
const char *gnuOpenMPPath();
/// libomp's entry points that generated kernels call, implemented on libgomp:
/// (symbol name, address), for the JIT's symbol map.
const std::vector<std::pair<const char *, void *>> &kmpcShimSymbols();
/// body(ctx, begin, end) over balanced static chunks of [0, n), on the
/// OpenMP team the kernels run on (libgomp's when loaded, else libomp's).
void parallelFor(int64_t n, void (*body)(void *, int64_t, int64_t), void *ctx);
} // namespace dyn

#endif // DYN_RUNTIME_RUNTIME_H
