// SPDX-License-Identifier: Apache-2.0
// The two timed loops every benchmark runs. Each inference is timed on its own
// (steady_clock, Google Benchmark's manual time) so that the median per
// inference can be reported next to the mean; every inference's output is
// checked (its sum against fresh_sum); heap allocations and the peak resident
// set are counted over the timed inferences only, after a warm-up.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>

#include "inference.hpp"

namespace clzero_bench {

/// One strategy, one size: counters median_us, p10_us, p90_us,
/// new_per_inference, malloc_per_inference, faults_per_inference,
/// rss_peak_MiB, rss_peak_per_byte,
/// stale (inferences whose output was wrong; a failure), bytes_per_second.
void run_inferences(benchmark::State& state, const InferenceFactory& make, std::size_t bytes);

/// A clzero policy and its raw call sequence, alternated inference by
/// inference (so drift in clocks, caches or the driver hits both alike):
/// counters clzero_us, raw_us (medians), diff_us (the median of the paired
/// differences clzero - raw), ratio ((raw_us + diff_us) / raw_us).
void run_overhead_pair(benchmark::State& state, const InferenceFactory& clzero, const InferenceFactory& raw,
                       std::size_t bytes);

/// Whether any benchmark failed (stale output, an OpenCL error): main's exit status.
bool any_failed() noexcept;

}  // namespace clzero_bench
