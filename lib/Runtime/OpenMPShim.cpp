//===- OpenMPShim.cpp - libomp's entry points on GNU OpenMP's threads -----===//
//
// JIT-compiled CPU kernels are OpenMP loops (scf.parallel -> omp.parallel +
// omp.wsloop), which LLVM lowers to libomp's ABI: __kmpc_fork_call with an
// outlined body, __kmpc_for_static_init_* for each thread's share of the
// iterations, __kmpc_barrier. PyTorch's wheels run ATen's intra-op
// parallelism on GNU OpenMP (libgomp). With both runtimes in one process each
// keeps its own pool of threads, and the threads of one spin while the other
// works: on a machine with few cores, dyn's kernels and ATen's library calls
// take turns evicting each other (docs/performance.md, CPU section).
//
// When a libgomp is loaded in the process (torch imported), these functions
// implement that part of libomp's ABI on libgomp's team instead, so dyn's
// kernels and ATen's ops share one pool: fork = GOMP_parallel (the team size
// is the nthreads ICV, which torch.set_num_threads sets), the thread number
// = omp_get_thread_num, static schedules as libomp computes them (balanced
// chunks), barrier = GOMP_barrier. Only what dyn's kernels use is provided:
// no reductions, no dynamic schedules, no nested teams; the compiler checks
// the generated module's calls (see Compiler.cpp) before linking it here.
// The runtime matmul's tasks take the same team (dyn::parallelFor).
//
//===----------------------------------------------------------------------===//
#include "dyn/Runtime/Runtime.h"

#include <omp.h>

#include <cstdarg>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <algorithm>
#include <string>

namespace {

struct Gomp {
  void (*parallel)(void (*)(void *), void *, unsigned, unsigned) = nullptr;
  void (*barrier)() = nullptr;
  int (*threadNum)() = nullptr;
  int (*numThreads)() = nullptr;
  std::string path;
  bool ok() const { return parallel && barrier && threadNum && numThreads; }
};

int findLibgomp(struct dl_phdr_info *info, size_t, void *data) {
  const char *name = info->dlpi_name;
  if (name && std::strstr(name, "libgomp"))
    *static_cast<std::string *>(data) = name;
  return 0;
}

/// The loaded libgomp's entry points, looked up once (the process keeps the
/// library loaded: RTLD_NOLOAD only finds it).
const Gomp &gomp() {
  static const Gomp g = [] {
    Gomp r;
    const char *mode = std::getenv("DYN_OPENMP");
    if (mode && std::strcmp(mode, "libomp") == 0)
      return r;
    dl_iterate_phdr(findLibgomp, &r.path);
    if (r.path.empty())
      return r;
    void *h = dlopen(r.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!h)
      return r;
    r.parallel = reinterpret_cast<decltype(r.parallel)>(dlsym(h, "GOMP_parallel"));
    r.barrier = reinterpret_cast<decltype(r.barrier)>(dlsym(h, "GOMP_barrier"));
    r.threadNum = reinterpret_cast<decltype(r.threadNum)>(dlsym(h, "omp_get_thread_num"));
    r.numThreads = reinterpret_cast<decltype(r.numThreads)>(dlsym(h, "omp_get_num_threads"));
    return r;
  }();
  return g;
}

using Microtask = void (*)(int32_t *, int32_t *, ...);
constexpr int kMaxArgs = 8;

struct Fork {
  Microtask fn;
  int32_t argc;
  void *args[kMaxArgs];
};

void runMicrotask(void *p) {
  const Fork &f = *static_cast<const Fork *>(p);
  int32_t gtid = gomp().threadNum(), btid = gtid;
  void *const *a = f.args;
  switch (f.argc) {
  case 0: f.fn(&gtid, &btid); break;
  case 1: f.fn(&gtid, &btid, a[0]); break;
  case 2: f.fn(&gtid, &btid, a[0], a[1]); break;
  case 3: f.fn(&gtid, &btid, a[0], a[1], a[2]); break;
  case 4: f.fn(&gtid, &btid, a[0], a[1], a[2], a[3]); break;
  case 5: f.fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4]); break;
  case 6: f.fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5]); break;
  case 7: f.fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6]); break;
  default: f.fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); break;
  }
}

/// libomp's kmp_sch_static (balanced) share of [*lower, *upper] (inclusive,
/// step incr) for thread tid of nth; an empty share has *lower > *upper.
template <typename T, typename ST>
void staticInit(int32_t tid, int32_t *lastIter, T *lower, T *upper, ST *stride, ST incr) {
  using UT = std::make_unsigned_t<T>;
  int32_t nth = gomp().numThreads();
  UT trip;
  if (incr == 1)
    trip = static_cast<UT>(*upper) - static_cast<UT>(*lower) + 1;
  else if (incr == -1)
    trip = static_cast<UT>(*lower) - static_cast<UT>(*upper) + 1;
  else if (incr > 0)
    trip = (static_cast<UT>(*upper) - static_cast<UT>(*lower)) / static_cast<UT>(incr) + 1;
  else
    trip = (static_cast<UT>(*lower) - static_cast<UT>(*upper)) / static_cast<UT>(-incr) + 1;
  if (nth <= 1) {
    if (lastIter)
      *lastIter = 1;
    *stride = static_cast<ST>(trip) * incr;
    return;
  }
  if (trip < static_cast<UT>(nth)) {
    if (static_cast<UT>(tid) < trip) {
      *lower = *lower + static_cast<T>(tid * incr);
      *upper = *lower;
    } else {
      *lower = *upper + static_cast<T>(incr);
    }
    if (lastIter)
      *lastIter = static_cast<UT>(tid) == trip - 1;
  } else {
    UT small = trip / nth, extras = trip % nth;
    UT t = static_cast<UT>(tid);
    *lower = *lower + static_cast<T>(incr * static_cast<ST>(t * small + (t < extras ? t : extras)));
    *upper = *lower + static_cast<T>(static_cast<ST>(small) * incr - (t < extras ? 0 : incr));
    if (lastIter)
      *lastIter = tid == nth - 1;
  }
  *stride = static_cast<ST>(trip) * incr;
}

} // namespace

extern "C" {

int32_t dyn_kmpc_global_thread_num(void *) { return gomp().threadNum(); }

void dyn_kmpc_fork_call(void *, int32_t argc, Microtask fn, ...) {
  Fork f{fn, argc, {}};
  va_list ap;
  va_start(ap, fn);
  for (int32_t i = 0; i < argc && i < kMaxArgs; ++i)
    f.args[i] = va_arg(ap, void *);
  va_end(ap);
  gomp().parallel(runMicrotask, &f, /*num_threads=*/0, /*flags=*/0);
}

void dyn_kmpc_for_static_init_4(void *, int32_t tid, int32_t, int32_t *last, int32_t *lo, int32_t *hi,
                                int32_t *stride, int32_t incr, int32_t) {
  staticInit<int32_t, int32_t>(tid, last, lo, hi, stride, incr);
}
void dyn_kmpc_for_static_init_4u(void *, int32_t tid, int32_t, int32_t *last, uint32_t *lo, uint32_t *hi,
                                 int32_t *stride, int32_t incr, int32_t) {
  staticInit<uint32_t, int32_t>(tid, last, lo, hi, stride, incr);
}
void dyn_kmpc_for_static_init_8(void *, int32_t tid, int32_t, int32_t *last, int64_t *lo, int64_t *hi,
                                int64_t *stride, int64_t incr, int64_t) {
  staticInit<int64_t, int64_t>(tid, last, lo, hi, stride, incr);
}
void dyn_kmpc_for_static_init_8u(void *, int32_t tid, int32_t, int32_t *last, uint64_t *lo, uint64_t *hi,
                                 int64_t *stride, int64_t incr, int64_t) {
  staticInit<uint64_t, int64_t>(tid, last, lo, hi, stride, incr);
}
void dyn_kmpc_for_static_fini(void *, int32_t) {}
void dyn_kmpc_barrier(void *, int32_t) { gomp().barrier(); }

} // extern "C"

namespace {

struct Range {
  void (*body)(void *, int64_t, int64_t);
  void *ctx;
  int64_t n;
};

/// Thread tid's balanced share of [0, n) among nth.
void share(const Range &r, int64_t tid, int64_t nth) {
  int64_t small = r.n / nth, extras = r.n % nth;
  int64_t begin = tid * small + std::min(tid, extras);
  int64_t end = begin + small + (tid < extras ? 1 : 0);
  if (begin < end)
    r.body(r.ctx, begin, end);
}

void runRange(void *p) { share(*static_cast<Range *>(p), gomp().threadNum(), gomp().numThreads()); }

} // namespace

namespace dyn {

void parallelFor(int64_t n, void (*body)(void *, int64_t, int64_t), void *ctx) {
  Range r{body, ctx, n};
  if (n <= 0)
    return;
  if (gomp().ok()) {
    gomp().parallel(runRange, &r, /*num_threads=*/0, /*flags=*/0);
    return;
  }
#pragma omp parallel
  share(r, omp_get_thread_num(), omp_get_num_threads());
}

const char *gnuOpenMPPath() { return gomp().ok() ? gomp().path.c_str() : nullptr; }

const std::vector<std::pair<const char *, void *>> &kmpcShimSymbols() {
  static const std::vector<std::pair<const char *, void *>> symbols = {
      {"__kmpc_global_thread_num", reinterpret_cast<void *>(&dyn_kmpc_global_thread_num)},
      {"__kmpc_fork_call", reinterpret_cast<void *>(&dyn_kmpc_fork_call)},
      {"__kmpc_for_static_init_4", reinterpret_cast<void *>(&dyn_kmpc_for_static_init_4)},
      {"__kmpc_for_static_init_4u", reinterpret_cast<void *>(&dyn_kmpc_for_static_init_4u)},
      {"__kmpc_for_static_init_8", reinterpret_cast<void *>(&dyn_kmpc_for_static_init_8)},
      {"__kmpc_for_static_init_8u", reinterpret_cast<void *>(&dyn_kmpc_for_static_init_8u)},
      {"__kmpc_for_static_fini", reinterpret_cast<void *>(&dyn_kmpc_for_static_fini)},
      {"__kmpc_barrier", reinterpret_cast<void *>(&dyn_kmpc_barrier)},
  };
  return symbols;
}

} // namespace dyn
