// SPDX-License-Identifier: Apache-2.0
// clzero_bench: the time of one inference (a kernel writes N bytes, the output
// becomes visible on the host, the host reads every element) with every clzero
// policy the device offers, with the ways engines do it in raw OpenCL, and the
// floors; and each policy against its own call sequence in raw OpenCL.
//
//   CLZERO_BENCH_PLATFORM="NVIDIA CUDA" clzero_bench [Google Benchmark flags]
//
// Benchmarks are named group/strategy/bytes: infer/clzero.Auto/4096,
// overhead/clzero.Persistent.alloc_host_ptr/4096, infer/floor.host_read/4.
// tools/bench_report.py turns the JSON output into docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <clzero/clzero.hpp>

#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "bench_env.hpp"
#include "cpu_model.hpp"
#include "heap_counter.hpp"
#include "peak_rss.hpp"
#include "pipeline.hpp"
#include "strategies.hpp"
#include "timed_loop.hpp"

namespace {

using clzero_bench::InferenceFactory;

// 4 B, 4 KiB, 256 KiB, 4 MiB, 64 MiB.
constexpr std::size_t kSizes[] = {4, 4096, 256 * 1024, 4 * 1024 * 1024, 64 * 1024 * 1024};

// Defaults, each given as a flag (not per benchmark, so that names stay
// group/strategy/bytes and the command line still wins):
//  - each repetition runs at least 0.1 s: with 5 repetitions the NVIDIA and
//    PoCL runs on the GPU machine take a few minutes together;
//  - repetitions of different benchmarks run in random order, so that a slow
//    spell of the machine (another process, a clock change) is spread over
//    every strategy instead of landing on the few that ran during it.
constexpr const char* kDefaultMinTime = "--benchmark_min_time=0.1";
constexpr const char* kDefaultInterleaving = "--benchmark_enable_random_interleaving=true";

bool has_flag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], flag, std::strlen(flag)) == 0) return true;
  return false;
}

void add(const std::string& name, std::function<void(benchmark::State&)> body) {
  benchmark::RegisterBenchmark(name.c_str(), std::move(body))->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  if (!has_flag(argc, argv, "--benchmark_min_time")) args.push_back(const_cast<char*>(kDefaultMinTime));
  if (!has_flag(argc, argv, "--benchmark_enable_random_interleaving"))
    args.push_back(const_cast<char*>(kDefaultInterleaving));
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;

  try {
    const clzero_bench::Rig& rig = clzero_bench::Rig::get();
    const clzero::DeviceCaps& caps = rig.caps;
    std::fprintf(stderr, "clzero_bench on: %s (%s) | %s | %s | driver %s\n", caps.platform_name.c_str(),
                 caps.platform_version.c_str(), caps.name.c_str(), caps.device_version.c_str(),
                 caps.driver_version.c_str());

    const clzero_bench::Catalogue catalogue = clzero_bench::make_catalogue();
    std::string names, skipped;
    for (const auto& s : catalogue.strategies) names += (names.empty() ? "" : " ") + s.name;
    for (const auto& s : catalogue.skipped) {
      std::fprintf(stderr, "  skipped %s\n", s.c_str());
      skipped += (skipped.empty() ? "" : "; ") + s;
    }

    benchmark::AddCustomContext("clzero.version", CLZERO_VERSION_STRING);
    benchmark::AddCustomContext("clzero.platform", caps.platform_name);
    benchmark::AddCustomContext("clzero.platform_version", caps.platform_version);
    benchmark::AddCustomContext("clzero.device", caps.name);
    benchmark::AddCustomContext("clzero.device_version", caps.device_version);
    benchmark::AddCustomContext("clzero.driver_version", caps.driver_version);
    benchmark::AddCustomContext("clzero.host_unified_memory", caps.host_unified_memory ? "yes" : "no");
    benchmark::AddCustomContext("clzero.cpu", clzero_bench::cpu_model());
    benchmark::AddCustomContext("clzero.strategies", names);
    benchmark::AddCustomContext("clzero.skipped", skipped.empty() ? "none" : skipped);
    benchmark::AddCustomContext("clzero.malloc_counted", clzero_bench::malloc_counted() ? "yes" : "no");
    benchmark::AddCustomContext("clzero.peak_rss_reset", clzero_bench::PeakRss().valid() ? "yes" : "no");

    for (const std::size_t bytes : kSizes) {
      const std::string size = "/" + std::to_string(bytes);
      if (bytes > caps.max_mem_alloc_size) {
        std::fprintf(stderr, "  skipped every strategy at %zu bytes: above CL_DEVICE_MAX_MEM_ALLOC_SIZE\n", bytes);
        continue;
      }
      const clzero_bench::AutoPick pick = clzero_bench::auto_pick(bytes);
      std::fprintf(stderr, "  Auto at %zu bytes: %s (%s)\n", bytes, pick.label.c_str(), pick.reason.c_str());
      benchmark::AddCustomContext("clzero.auto" + size, pick.label + ": " + pick.reason);

      for (const auto& s : catalogue.strategies) {
        const InferenceFactory make = s.make;
        add("infer/" + s.name + size,
            [make, bytes](benchmark::State& state) { clzero_bench::run_inferences(state, make, bytes); });
      }
      for (const auto& s : catalogue.strategies) {
        const InferenceFactory make = s.make;
        const InferenceFactory raw = s.name == "clzero.Auto" ? pick.raw_sequence : s.raw_sequence;
        if (!raw) continue;
        add("overhead/" + s.name + size,
            [make, raw, bytes](benchmark::State& state) { clzero_bench::run_overhead_pair(state, make, raw, bytes); });
      }
    }
    clzero_bench::register_pipeline_benchmarks([&](const std::string& name, InferenceFactory make, std::size_t bytes) {
      if (bytes <= caps.max_mem_alloc_size)
        add(name, [make, bytes](benchmark::State& state) { clzero_bench::run_inferences(state, make, bytes); });
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "clzero_bench: %s\n", e.what());
    return 1;
  }

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return clzero_bench::any_failed() ? 1 : 0;
}
