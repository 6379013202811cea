//===- HostAllocator.cpp - the temporaries of JIT-compiled CPU functions --===//
//
// A compiled CPU function allocates its intermediate buffers (memref.alloc)
// on entry and frees them on return. Through glibc, buffers of more than
// ~128 KiB are fresh mmap'ed pages on every call: each call page-faults and
// zero-fills them again (a 2-layer transformer: 2,800 faults, ~2.5 ms a call,
// against eager's 1,000; docs/performance.md). The lowering calls MLIR's
// generic allocation functions instead (use-generic-functions), implemented
// here: buffers of 64 KiB and more are kept, by size class, when freed, and
// handed out again, so a steady-state call touches only resident pages, as
// torch's CUDA caching allocator does for device memory. Smaller ones go to
// malloc, whose bins keep them resident already.
//
// The extension also serves large CPU tensors from it: compiled functions'
// outputs (dyn_host_alloc_untracked: not counted as live temporaries) and
// what ATen allocates inside dyn's library calls (python/src/aten_calls.cpp).
//
// The cache holds at most DYN_HOST_CACHE_MB (default 1024) MiB of free
// buffers; beyond that a freed buffer goes back to the system.
// dyn::hostCacheEmpty() (from Python: dyn.reset()) releases them all.
//
//===----------------------------------------------------------------------===//
#include "dyn/Runtime/Runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

/// Every block starts with a header of this size: it keeps the 64-byte
/// alignment of the pointer handed out and records the block's size class
/// and header size (for over-aligned requests) just before that pointer.
constexpr size_t kHeader = 64;
constexpr size_t kMinCached = size_t(64) << 10;

struct Tag {
  uint64_t sizeClass; // 0: not cached
  uint64_t header;
  uint64_t bytes; // as requested: the live and peak counts
};

// Bytes handed out and not freed yet, and their peak: counted for every
// block (small ones bypass the cache's lock).
std::atomic<uint64_t> liveBytes{0}, peakBytes{0};

void countAllocated(uint64_t bytes) {
  uint64_t now = liveBytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  uint64_t peak = peakBytes.load(std::memory_order_relaxed);
  while (now > peak && !peakBytes.compare_exchange_weak(peak, now, std::memory_order_relaxed))
    ;
}

/// Sizes rounded up to one of four steps per power of two: at most 25% unused.
size_t sizeClass(size_t bytes) {
  size_t p = 1;
  while (p * 2 <= bytes)
    p *= 2;
  size_t step = std::max<size_t>(p / 4, 4096);
  return (bytes + step - 1) / step * step;
}

struct Cache {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void *>> free; // size class -> blocks (base pointers)
  dyn::HostCacheStats stats;
  size_t limit = [] {
    const char *v = std::getenv("DYN_HOST_CACHE_MB");
    return (v && *v ? size_t(std::strtoull(v, nullptr, 10)) : size_t(1024)) << 20;
  }();
};

Cache &cache() {
  static Cache *c = new Cache; // never destroyed: compiled code may free at exit
  return *c;
}

Tag *tagOf(void *ptr) { return reinterpret_cast<Tag *>(static_cast<char *>(ptr) - sizeof(Tag)); }

/// `bytes` counted in the live bytes: 0 for an untracked block.
void *withTag(void *base, size_t header, size_t sizeClass, size_t bytes) {
  void *ptr = static_cast<char *>(base) + header;
  *tagOf(ptr) = {sizeClass, header, bytes};
  countAllocated(bytes);
  return ptr;
}

void *allocate(size_t alignment, size_t bytes, bool counted = true) {
  size_t counts = counted ? bytes : 0;
  size_t header = kHeader;
  while (header < alignment)
    header *= 2;
  if (bytes < kMinCached || header != kHeader) {
    void *base = std::aligned_alloc(header, (header + bytes + header - 1) / header * header);
    return base ? withTag(base, header, 0, counts) : nullptr;
  }
  size_t cls = sizeClass(bytes);
  Cache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.free.find(cls);
    if (it != c.free.end() && !it->second.empty()) {
      void *base = it->second.back();
      it->second.pop_back();
      c.stats.hits++;
      c.stats.cachedBytes -= cls + kHeader;
      return withTag(base, kHeader, cls, counts);
    }
    c.stats.misses++;
  }
  void *base = std::aligned_alloc(kHeader, cls + kHeader);
  return base ? withTag(base, kHeader, cls, counts) : nullptr;
}

void release(void *ptr) {
  if (!ptr)
    return;
  Tag tag = *tagOf(ptr);
  liveBytes.fetch_sub(tag.bytes, std::memory_order_relaxed);
  void *base = static_cast<char *>(ptr) - tag.header;
  if (tag.sizeClass) {
    Cache &c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.stats.cachedBytes + tag.sizeClass + kHeader <= c.limit) {
      c.free[tag.sizeClass].push_back(base);
      c.stats.cachedBytes += tag.sizeClass + kHeader;
      return;
    }
  }
  std::free(base);
}

} // namespace

extern "C" {
void *dyn_host_alloc(uint64_t bytes) { return allocate(kHeader, bytes); }
void *dyn_host_alloc_untracked(uint64_t bytes) { return allocate(kHeader, bytes, /*counted=*/false); }
void *dyn_host_aligned_alloc(uint64_t alignment, uint64_t bytes) { return allocate(alignment, bytes); }
void dyn_host_free(void *ptr) { release(ptr); }
}

namespace dyn {
HostCacheStats hostCacheStats() {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  HostCacheStats s = c.stats;
  s.liveBytes = liveBytes.load(std::memory_order_relaxed);
  s.peakBytes = peakBytes.load(std::memory_order_relaxed);
  return s;
}

void hostCacheResetPeak() { peakBytes.store(liveBytes.load(std::memory_order_relaxed), std::memory_order_relaxed); }

void hostCacheEmpty() {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto &[cls, blocks] : c.free)
    for (void *base : blocks)
      std::free(base);
  c.free.clear();
  c.stats.cachedBytes = 0;
}
} // namespace dyn
