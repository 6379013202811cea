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
/// The temporaries of compiled CPU functions (MLIR's generic allocation
/// functions): 64-byte aligned, large ones cached by size class when freed.
void *dyn_host_alloc(uint64_t bytes);
void *dyn_host_aligned_alloc(uint64_t alignment, uint64_t bytes);
void dyn_host_free(void *ptr);
/// The same, not counted in the live and peak bytes (a compiled call's outputs).
void *dyn_host_alloc_untracked(uint64_t bytes);
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

/// What the host allocator's cache did (lib/Runtime/HostAllocator.cpp).
struct HostCacheStats {
  uint64_t hits = 0;        // allocations served from the cache
  uint64_t misses = 0;      // cacheable allocations that were not
  uint64_t cachedBytes = 0; // free bytes it holds now
  uint64_t liveBytes = 0;   // bytes compiled functions hold now (their temporaries)
  uint64_t peakBytes = 0;   // the most they held at once since hostCacheResetPeak()
};
HostCacheStats hostCacheStats();
/// Starts a new peak of live bytes (explain measures a call's temporaries).
void hostCacheResetPeak();
/// Returns every cached buffer to the system.
void hostCacheEmpty();
} // namespace dyn

#endif // DYN_RUNTIME_RUNTIME_H
