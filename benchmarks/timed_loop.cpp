// SPDX-License-Identifier: Apache-2.0
#include "timed_loop.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "bench_env.hpp"
#include "heap_counter.hpp"
#include "peak_rss.hpp"

namespace clzero_bench {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<bool> g_failed{false};

void fail(benchmark::State& state, const std::string& why) {
  g_failed.store(true);
  state.SkipWithError(why.c_str());
}

// Inference numbers 1, 2, ... restart below 2^30, so that iter + i never
// wraps for the largest tensor (2^24 elements) and fresh_sum stays exact.
std::uint32_t next_iter(std::uint32_t iter) { return iter >= (1u << 30) ? 1u : iter + 1u; }

/// Per-inference times, stored in memory allocated and touched before the
/// timed loop (so that neither the allocation nor its page faults are timed
/// or counted). Beyond its capacity only the first samples are kept.
class Samples {
 public:
  explicit Samples(benchmark::IterationCount expected)
      : values_(static_cast<std::size_t>(std::min<benchmark::IterationCount>(expected, 1 << 20))) {}
  void add(double seconds) {
    if (count_ < values_.size()) values_[count_] = seconds;
    ++count_;
  }
  /// The q-quantile in microseconds (nearest rank), 0 when empty. Reorders
  /// the samples: call after the loop, and after paired_shift_us.
  double quantile_us(double q) {
    const std::size_t n = stored();
    if (n == 0) return 0;
    const std::size_t k = std::min(n - 1, static_cast<std::size_t>(q * static_cast<double>(n)));
    std::nth_element(values_.begin(), values_.begin() + static_cast<std::ptrdiff_t>(k),
                     values_.begin() + static_cast<std::ptrdiff_t>(n));
    return values_[k] * 1e6;
  }

  /// The median of the differences this[i] - other[i] of samples taken side
  /// by side, in microseconds: the shift between two interleaved strategies,
  /// insensitive to the slow outliers that hit one of a pair at random.
  double paired_shift_us(const Samples& other) const {
    const std::size_t n = std::min(stored(), other.stored());
    if (n == 0) return 0;
    std::vector<double> d(n);
    for (std::size_t i = 0; i < n; ++i) d[i] = values_[i] - other.values_[i];
    std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(n / 2), d.end());
    return d[n / 2] * 1e6;
  }

 private:
  std::size_t stored() const { return std::min(count_, values_.size()); }

  std::vector<double> values_;
  std::size_t count_ = 0;
};

/// One strategy's inference with its running count and verdict.
struct Runner {
  std::unique_ptr<Inference> inference;
  std::size_t n;
  std::uint32_t iter = 1;
  std::uint64_t runs = 0;   // inferences, warm-up included
  std::uint64_t wrong = 0;  // of which had a wrong sum
  bool check = true;

  Runner(std::unique_ptr<Inference> made, std::size_t elements)
      : inference(std::move(made)), n(elements), check(inference->checks_output()) {}

  /// One timed inference; returns its duration in seconds.
  double timed() {
    const auto t0 = Clock::now();
    std::uint64_t sum = inference->run(iter);
    const auto t1 = Clock::now();
    benchmark::DoNotOptimize(sum);
    wrong += static_cast<std::uint64_t>(check && sum != fresh_sum(n, iter));
    ++runs;
    iter = next_iter(iter);
    return std::chrono::duration<double>(t1 - t0).count();
  }
};

// The first inferences grow clzero's event lists to their steady size, fault
// in pages and wake the driver: at least 3 and 2 ms' worth, at most 200.
void warm_up(Runner& a, Runner* b) {
  const auto start = Clock::now();
  for (int i = 0; i < 200; ++i) {
    if (i >= 3 && Clock::now() - start > std::chrono::milliseconds(2)) break;
    a.timed();
    if (b != nullptr) b->timed();
  }
}

std::string stale_message(const Runner& r, const char* who) {
  return std::string(who) + "stale or missing output elements in " + std::to_string(r.wrong) + " of " +
         std::to_string(r.runs) + " inferences (their sums differed from a fresh tensor's)";
}

}  // namespace

void run_inferences(benchmark::State& state, const InferenceFactory& make, std::size_t bytes) {
  const std::size_t n = bytes / sizeof(std::uint32_t);
  Samples samples(state.max_iterations);
  const PeakRss rss;
  try {
    Runner r(make(n), n);
    warm_up(r, nullptr);
    const HeapCounts before = heap_counts();
    const double faults_before = PeakRss::page_faults();
    trace_allocations(true);
    for (auto _ : state) {
      const double s = r.timed();
      state.SetIterationTime(s);
      samples.add(s);
    }
    trace_allocations(false);
    const HeapCounts after = heap_counts();
    const double faults = PeakRss::page_faults() - faults_before;
    const double inferences = static_cast<double>(state.iterations());
    state.counters["median_us"] = samples.quantile_us(0.5);
    state.counters["p10_us"] = samples.quantile_us(0.1);
    state.counters["p90_us"] = samples.quantile_us(0.9);
    state.counters["new_per_inference"] = static_cast<double>(after.news - before.news) / inferences;
    if (malloc_counted())
      state.counters["malloc_per_inference"] = static_cast<double>(after.mallocs - before.mallocs) / inferences;
    state.counters["faults_per_inference"] = faults / inferences;
    if (rss.valid()) {
      const double growth = rss.growth_bytes();
      state.counters["rss_peak_MiB"] = growth / (1024.0 * 1024.0);
      state.counters["rss_peak_per_byte"] = growth / static_cast<double>(bytes);
    }
    state.counters["stale"] = static_cast<double>(r.wrong);
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
    if (r.wrong > 0) fail(state, stale_message(r, ""));
  } catch (const std::exception& e) {
    trace_allocations(false);
    fail(state, e.what());
  }
}

void run_overhead_pair(benchmark::State& state, const InferenceFactory& clzero, const InferenceFactory& raw,
                       std::size_t bytes) {
  const std::size_t n = bytes / sizeof(std::uint32_t);
  Samples clzero_samples(state.max_iterations), raw_samples(state.max_iterations);
  try {
    Runner a(clzero(n), n), b(raw(n), n);
    warm_up(a, &b);
    bool clzero_first = true;
    for (auto _ : state) {
      double ta = 0, tb = 0;
      if (clzero_first) {
        ta = a.timed();
        tb = b.timed();
      } else {
        tb = b.timed();
        ta = a.timed();
      }
      clzero_first = !clzero_first;
      state.SetIterationTime(ta + tb);
      clzero_samples.add(ta);
      raw_samples.add(tb);
    }
    const double shift_us = clzero_samples.paired_shift_us(raw_samples);
    const double clzero_us = clzero_samples.quantile_us(0.5), raw_us = raw_samples.quantile_us(0.5);
    state.counters["clzero_us"] = clzero_us;
    state.counters["raw_us"] = raw_us;
    state.counters["diff_us"] = shift_us;
    state.counters["ratio"] = raw_us > 0 ? (raw_us + shift_us) / raw_us : 0;
    state.SetBytesProcessed(2 * static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
    if (a.wrong > 0)
      fail(state, stale_message(a, "clzero: "));
    else if (b.wrong > 0)
      fail(state, stale_message(b, "raw: "));
  } catch (const std::exception& e) {
    fail(state, e.what());
  }
}

bool any_failed() noexcept { return g_failed.load(); }

}  // namespace clzero_bench
