//===- Matmul.cpp - the runtime matmul that loop.matmul calls ------------===//
//
// A cache-blocked, OpenMP-parallel matmul on contiguous row-major buffers.
// Generated code calls it through raw addresses (see dyn-convert-loop-to-scf);
// its inner loop is a unit-stride axpy that the compiler vectorizes.
//
//===----------------------------------------------------------------------===//
#include "dyn/Runtime/Runtime.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace {

template <typename T>
void matmul(const T *a, const T *b, T *c, int64_t batch, int64_t m, int64_t n, int64_t k) {
  // C is cut into blocks of kBlockI rows x kBlockN columns, one task each; a task walks K in panels of
  // kBlockK, so each panel of B (128 KiB for f32) is read once per block of rows and stays in cache
  // while the block's rows use it (few rows and wide B, as in a linear layer on a few tokens, no
  // longer stream all of B once per row).
  constexpr int64_t kBlockI = 64, kBlockK = 128, kBlockN = 256;
  std::memset(c, 0, sizeof(T) * batch * m * n);
  const int64_t ib = (m + kBlockI - 1) / kBlockI, jb = (n + kBlockN - 1) / kBlockN;
#pragma omp parallel for collapse(3) schedule(static)
  for (int64_t bi = 0; bi < batch; ++bi) {
    for (int64_t ii = 0; ii < ib; ++ii) {
      for (int64_t jj = 0; jj < jb; ++jj) {
        const int64_t i0 = ii * kBlockI, i1 = std::min(m, i0 + kBlockI);
        const int64_t j0 = jj * kBlockN, j1 = std::min(n, j0 + kBlockN);
        const T *bmat = b + bi * k * n;
        for (int64_t p0 = 0; p0 < k; p0 += kBlockK) {
          const int64_t p1 = std::min(k, p0 + kBlockK);
          for (int64_t i = i0; i < i1; ++i) {
            const T *arow = a + (bi * m + i) * k;
            T *crow = c + (bi * m + i) * n;
            for (int64_t p = p0; p < p1; ++p) {
              const T av = arow[p];
              const T *brow = bmat + p * n;
              for (int64_t j = j0; j < j1; ++j)
                crow[j] += av * brow[j];
            }
          }
        }
      }
    }
  }
}

} // namespace

extern "C" {
void dyn_matmul_f32(int64_t a, int64_t b, int64_t c, int64_t batch, int64_t m, int64_t n,
                    int64_t k) {
  matmul(reinterpret_cast<const float *>(a), reinterpret_cast<const float *>(b),
         reinterpret_cast<float *>(c), batch, m, n, k);
}
void dyn_matmul_f64(int64_t a, int64_t b, int64_t c, int64_t batch, int64_t m, int64_t n,
                    int64_t k) {
  matmul(reinterpret_cast<const double *>(a), reinterpret_cast<const double *>(b),
         reinterpret_cast<double *>(c), batch, m, n, k);
}
}
