// SPDX-License-Identifier: Apache-2.0
// What an inference runs and what it only may run, told to the compiler.
// A real engine's own work between two inferences (its other kernels'
// enqueues, its host code) evicts clzero's code from the host's caches, so
// each inference pays for every cache line of code and data it touches
// (docs/benchmarks.md, "The host's footprint of one inference"). The calls
// made every inference keep their usual case inline at the call site and
// their rare cases (other queues, events to collect, errors) out of line,
// where they cost nothing until they run. Compilers otherwise decide per
// call site, and GCC at -O3 kept DeviceAccess::wait_count(queue) out of
// line with its rare case inside: one call and several lines more, every
// inference.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
/// The usual case of a call every inference makes: inlined at the call site.
#define CLZERO_DETAIL_HOT inline __attribute__((always_inline))
/// The rare case of such a call: kept out of line.
#define CLZERO_DETAIL_RARE __attribute__((noinline))
#elif defined(_MSC_VER)
#define CLZERO_DETAIL_HOT __forceinline
#define CLZERO_DETAIL_RARE __declspec(noinline)
#else
#define CLZERO_DETAIL_HOT inline
#define CLZERO_DETAIL_RARE
#endif
