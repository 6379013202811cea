//===- Matmul.cpp - the runtime matmul that loop.matmul calls ------------===//
//
// Cache-blocked, parallel matmuls on contiguous row-major buffers (the tasks
// run on the kernels' OpenMP team: dyn::parallelFor).
// Generated code calls them through raw addresses (see dyn-convert-loop-to-scf).
// dyn_matmul_*: c = a @ b, its inner loop a unit-stride axpy that the compiler
// vectorizes. dyn_matmul_nt_*: c = a @ b^T (b given as [n, k], as a linear
// layer's weight is), its inner loop a unit-stride dot product.
//
//===----------------------------------------------------------------------===//
#include "dyn/Runtime/Runtime.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace {

/// body(task) for task in [0, n), static chunks over the OpenMP team the JIT-compiled kernels use (torch's
/// libgomp when loaded, lib/Runtime/OpenMPShim.cpp; libomp otherwise).
template <typename F>
void parallelFor(int64_t n, F body) {
  dyn::parallelFor(
      n, [](void *ctx, int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t)
          (*static_cast<F *>(ctx))(t);
      },
      &body);
}

template <typename T>
void matmul(const T *a, const T *b, T *c, int64_t batch, int64_t m, int64_t n, int64_t k) {
  // C is cut into blocks of kBlockI rows x kBlockN columns, one task each; a task walks K in panels of
  // kBlockK, so each panel of B (128 KiB for f32) is read once per block of rows and stays in cache
  // while the block's rows use it (few rows and wide B, as in a linear layer on a few tokens, no
  // longer stream all of B once per row).
  constexpr int64_t kBlockI = 64, kBlockK = 128, kBlockN = 256;
  std::memset(c, 0, sizeof(T) * batch * m * n);
  const int64_t ib = (m + kBlockI - 1) / kBlockI, jb = (n + kBlockN - 1) / kBlockN;
  parallelFor(batch * ib * jb, [&](int64_t task) {
        const int64_t bi = task / (ib * jb), ii = task / jb % ib, jj = task % jb;
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
  });
}

/// c[r][s] += sum_p a[r][p] * b[s][p] for an R x S tile over kk contiguous
/// elements: R*S dot products share each load of a and b, and the loop over p
/// is a unit-stride multi-accumulator reduction that the compiler vectorizes
/// (the runtime builds with -ffast-math, which lets it reassociate the sums).
template <typename T, int R, int S>
inline void dotTile(const T *a, int64_t lda, const T *b, int64_t ldb, T *c, int64_t ldc,
                    int64_t kk) {
  T acc[R][S] = {};
  for (int64_t p = 0; p < kk; ++p)
    for (int r = 0; r < R; ++r)
      for (int s = 0; s < S; ++s)
        acc[r][s] += a[r * lda + p] * b[s * ldb + p];
  for (int r = 0; r < R; ++r)
    for (int s = 0; s < S; ++s)
      c[r * ldc + s] += acc[r][s];
}

/// c = a @ b^T with b stored [batch, n, k]: every entry of C is a dot product
/// of a row of A and a row of B, both contiguous. C is cut into blocks of
/// kBlockI rows x kBlockJ columns, one task each; a task walks K in panels of
/// kBlockK and, per panel, computes 4x2 tiles, so a block's rows of B are read
/// from cache by every row of A in the block (a linear layer's weight, read
/// in place, streams once per block of tokens rather than once per token).
template <typename T>
void matmulNT(const T *a, const T *b, T *c, int64_t batch, int64_t m, int64_t n, int64_t k) {
  constexpr int64_t kBlockI = 64, kBlockJ = 64, kBlockK = 512;
  std::memset(c, 0, sizeof(T) * batch * m * n);
  const int64_t ib = (m + kBlockI - 1) / kBlockI, jb = (n + kBlockJ - 1) / kBlockJ;
  parallelFor(batch * jb * ib, [&](int64_t task) {
        const int64_t bi = task / (jb * ib), jj = task / ib % jb, ii = task % ib;
        const int64_t i0 = ii * kBlockI, i1 = std::min(m, i0 + kBlockI);
        const int64_t j0 = jj * kBlockJ, j1 = std::min(n, j0 + kBlockJ);
        const T *amat = a + bi * m * k, *bmat = b + bi * n * k;
        T *cmat = c + bi * m * n;
        for (int64_t p0 = 0; p0 < k; p0 += kBlockK) {
          const int64_t kk = std::min(k, p0 + kBlockK) - p0;
          for (int64_t i = i0; i < i1; i += 4) {
            const bool full = i + 4 <= i1;
            for (int64_t j = j0; j < j1; j += 2) {
              const T *at = amat + i * k + p0, *bt = bmat + j * k + p0;
              T *ct = cmat + i * n + j;
              if (full && j + 2 <= j1) {
                dotTile<T, 4, 2>(at, k, bt, k, ct, n, kk);
              } else if (full) {
                dotTile<T, 4, 1>(at, k, bt, k, ct, n, kk);
              } else {
                for (int64_t r = 0; r < i1 - i; ++r) {
                  if (j + 2 <= j1)
                    dotTile<T, 1, 2>(at + r * k, k, bt, k, ct + r * n, n, kk);
                  else
                    dotTile<T, 1, 1>(at + r * k, k, bt, k, ct + r * n, n, kk);
                }
              }
            }
          }
        }
  });
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
void dyn_matmul_nt_f32(int64_t a, int64_t b, int64_t c, int64_t batch, int64_t m, int64_t n,
                       int64_t k) {
  matmulNT(reinterpret_cast<const float *>(a), reinterpret_cast<const float *>(b),
           reinterpret_cast<float *>(c), batch, m, n, k);
}
void dyn_matmul_nt_f64(int64_t a, int64_t b, int64_t c, int64_t batch, int64_t m, int64_t n,
                       int64_t k) {
  matmulNT(reinterpret_cast<const double *>(a), reinterpret_cast<const double *>(b),
           reinterpret_cast<double *>(c), batch, m, n, k);
}
}
