// SPDX-License-Identifier: Apache-2.0
// Heap allocations made while inferences run. The benchmark binary replaces
// the global operator new (every C++ allocation: clzero's, the benchmark's,
// a C++ driver's) and, on glibc, malloc, calloc, realloc and the aligned forms (every allocation,
// including those of the OpenCL implementation and its worker threads) with
// versions that count before forwarding to the C library.
#pragma once

#include <cstdint>

namespace clzero_bench {

struct HeapCounts {
  std::uint64_t news = 0;     ///< operator new / new[] calls, all threads
  std::uint64_t mallocs = 0;  ///< malloc, calloc, realloc, aligned allocations; all threads (incl. those behind new)
};

HeapCounts heap_counts() noexcept;

/// Whether malloc calls are being counted (they are where the binary's own
/// malloc takes precedence over the C library's: glibc, ELF interposition).
bool malloc_counted() noexcept;

/// While on, and while $CLZERO_BENCH_TRACE_ALLOCS=N has budget left, every
/// allocation prints its call stack to stderr (the first N in all): how the
/// place of a steady-state allocation is found.
void trace_allocations(bool on) noexcept;

}  // namespace clzero_bench
