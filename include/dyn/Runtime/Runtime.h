//===- Runtime.h - functions generated code calls ---------------*- C++ -*-===//
#ifndef DYN_RUNTIME_RUNTIME_H
#define DYN_RUNTIME_RUNTIME_H

#include <cstdint>

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

#endif // DYN_RUNTIME_RUNTIME_H
