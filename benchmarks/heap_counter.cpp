// SPDX-License-Identifier: Apache-2.0
#include "heap_counter.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(CLZERO_BENCH_COUNT_MALLOC)
#include <execinfo.h>
#include <unistd.h>
#endif

namespace {

std::atomic<std::uint64_t> g_news{0};
std::atomic<std::uint64_t> g_mallocs{0};
std::atomic<bool> g_tracing{false};
std::atomic<long> g_trace_budget{0};

#if defined(CLZERO_BENCH_COUNT_MALLOC)
thread_local bool t_tracing_now = false;  // an allocation made by the tracer itself

void trace_one() noexcept {
  if (!g_tracing.load(std::memory_order_relaxed) || t_tracing_now) return;
  if (g_trace_budget.fetch_sub(1, std::memory_order_relaxed) <= 0) return;
  t_tracing_now = true;
  void* frames[48];
  const int n = backtrace(frames, 48);
  static const char header[] = "--- heap allocation while inferences were timed:\n";
  if (write(2, header, sizeof header - 1) < 0) {
  }
  backtrace_symbols_fd(frames, n, 2);
  t_tracing_now = false;
}
#else
void trace_one() noexcept {}
#endif

void* counted_new(std::size_t n) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n != 0 ? n : 1)) return p;
  throw std::bad_alloc();
}

void* counted_new_aligned(std::size_t n, std::align_val_t a) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  trace_one();
  void* p = nullptr;
  const std::size_t alignment = std::max(static_cast<std::size_t>(a), sizeof(void*));
  if (posix_memalign(&p, alignment, n != 0 ? n : 1) != 0) throw std::bad_alloc();
  return p;
}

}  // namespace

#if defined(CLZERO_BENCH_COUNT_MALLOC)
// glibc exports its allocator under these names too; forwarding to them keeps
// one allocator behind every pointer, so free() needs no replacement.
extern "C" void* __libc_malloc(std::size_t);
extern "C" void* __libc_calloc(std::size_t, std::size_t);
extern "C" void* __libc_realloc(void*, std::size_t);
extern "C" void* __libc_memalign(std::size_t, std::size_t);

extern "C" void* malloc(std::size_t n) noexcept {
  g_mallocs.fetch_add(1, std::memory_order_relaxed);
  trace_one();
  return __libc_malloc(n);
}
extern "C" void* calloc(std::size_t count, std::size_t size) noexcept {
  g_mallocs.fetch_add(1, std::memory_order_relaxed);
  trace_one();
  return __libc_calloc(count, size);
}
extern "C" void* realloc(void* p, std::size_t n) noexcept {
  g_mallocs.fetch_add(1, std::memory_order_relaxed);
  trace_one();
  return __libc_realloc(p, n);
}
extern "C" void* memalign(std::size_t alignment, std::size_t n) noexcept {
  g_mallocs.fetch_add(1, std::memory_order_relaxed);
  trace_one();
  return __libc_memalign(alignment, n);
}
extern "C" void* aligned_alloc(std::size_t alignment, std::size_t n) noexcept { return memalign(alignment, n); }
extern "C" int posix_memalign(void** p, std::size_t alignment, std::size_t n) noexcept {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* q = memalign(alignment, n);
  if (q == nullptr) return ENOMEM;
  *p = q;
  return 0;
}
#endif

void* operator new(std::size_t n) { return counted_new(n); }
void* operator new[](std::size_t n) { return counted_new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t a) { return counted_new_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_new_aligned(n, a); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return counted_new_aligned(n, a);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return counted_new_aligned(n, a);
  } catch (...) {
    return nullptr;
  }
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace clzero_bench {

HeapCounts heap_counts() noexcept {
  HeapCounts c;
  c.news = g_news.load(std::memory_order_relaxed);
  c.mallocs = g_mallocs.load(std::memory_order_relaxed);
  return c;
}

bool malloc_counted() noexcept {
  // strdup allocates inside the C library: counted only if the library's own
  // calls reach the replacement, as the OpenCL implementation's do.
  const std::uint64_t before = g_mallocs.load(std::memory_order_relaxed);
  char* (*volatile duplicate)(const char*) = &strdup;  // opaque: the pair cannot be elided
  std::free(duplicate("counted?"));
  return g_mallocs.load(std::memory_order_relaxed) != before;
}

void trace_allocations(bool on) noexcept {
#if defined(CLZERO_BENCH_COUNT_MALLOC)
  static const bool wanted = [] {
    const char* v = std::getenv("CLZERO_BENCH_TRACE_ALLOCS");
    const long budget = v != nullptr ? std::atol(v) : 0L;
    g_trace_budget.store(budget, std::memory_order_relaxed);
    if (budget <= 0) return false;
    void* frames[2];
    backtrace(frames, 2);  // loads the unwinder now, not inside a traced allocation
    return true;
  }();
  g_tracing.store(on && wanted, std::memory_order_relaxed);
#else
  (void)on;
#endif
}

}  // namespace clzero_bench
