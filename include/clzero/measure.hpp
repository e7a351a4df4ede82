// SPDX-License-Identifier: Apache-2.0
// Measuring policies on a device: one inference (a kernel writes the tensor,
// the host reads every element) timed with each candidate policy, on a
// private queue of the engine's context. policy::Auto uses it where the
// device's capabilities alone do not settle the choice; clzero-info prints it.
// Every measured inference is also checked element by element: a candidate
// that ever shows a stale element is rejected, whatever its speed.
#pragma once

#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "clzero/device_caps.hpp"
#include "clzero/error.hpp"
#include "clzero/handle.hpp"
#include "clzero/intent.hpp"
#include "clzero/mapped_tensor.hpp"
#include "clzero/policy/choice.hpp"
#include "clzero/policy/copy_to_pinned.hpp"
#include "clzero/policy/map_per_inference.hpp"
#include "clzero/policy/persistent.hpp"
#include "clzero/policy/svm.hpp"
#include "clzero/policy/unified_host.hpp"

namespace clzero {

/// One candidate's result.
struct Measurement {
  policy::Choice choice;
  double us_per_inference = 0;  ///< median over the timed inferences
  bool fresh = false;           ///< every element of every inference was right
  std::string error;            ///< why it could not be measured, if it could not
};

namespace detail {

constexpr const char* kMeasureKernel = R"CLC(
__kernel void clzero_measure_fill(__global uint* out, uint n, uint iter) {
  uint i = get_global_id(0);
  if (i < n) out[i] = (i * 2654435761u) ^ (iter * 40503u + 0x9E3779B9u);
}
)CLC";

inline std::uint32_t measure_value(std::uint32_t i, std::uint32_t iter) {
  return (i * 2654435761u) ^ (iter * 40503u + 0x9E3779B9u);
}

/// A private in-order queue and the measurement kernel in the engine's
/// context: measuring never enqueues on the engine's queue.
struct MeasureRig {
  QueueHandle queue;
  ProgramHandle program;
  KernelHandle kernel;

  MeasureRig(cl_context context, cl_device_id device, unsigned opencl_major) {
    constexpr const char* doing = "measuring policies: preparing a private queue and kernel";
    cl_int rc = CL_SUCCESS;
#if defined(CL_VERSION_2_0)
    if (opencl_major >= 2) {
      queue = QueueHandle::adopt(clCreateCommandQueueWithProperties(context, device, nullptr, &rc));
    } else
#endif
    {
      (void)opencl_major;
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
      queue = QueueHandle::adopt(clCreateCommandQueue(context, device, 0, &rc));
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
    }
    check(rc, "clCreateCommandQueue", doing);
    const char* src = kMeasureKernel;
    program = ProgramHandle::adopt(clCreateProgramWithSource(context, 1, &src, nullptr, &rc));
    check(rc, "clCreateProgramWithSource", doing);
    check(clBuildProgram(program.get(), 1, &device, "", nullptr, nullptr), "clBuildProgram", doing);
    kernel = KernelHandle::adopt(clCreateKernel(program.get(), "clzero_measure_fill", &rc));
    check(rc, "clCreateKernel", doing);
  }
};

template <class Policy>
Measurement time_policy(MeasureRig& rig, cl_context context, std::size_t bytes, Intent intent,
                        const typename Policy::Options& options, const policy::Choice& choice, int iterations) {
  Measurement m;
  m.choice = choice;
  const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(std::uint32_t));
  const cl_uint count = static_cast<cl_uint>(n);
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(iterations));
  bool fresh = true;
  MappedTensor<std::uint32_t, Policy> t(context, rig.queue.get(), {n}, intent == Intent::input ? Intent::inout : intent,
                                        options);
  cl_kernel k = rig.kernel.get();
  check(clSetKernelArg(k, 1, sizeof count, &count), "clSetKernelArg", "measuring policies");
  const int warmup = 2;
  for (int it = 1; it <= warmup + iterations; ++it) {
    const cl_uint iter = static_cast<cl_uint>(it);
    const auto t0 = std::chrono::steady_clock::now();
    {
      auto dev = t.device_access(Access::write);
      dev.bind(k, 0);
      check(clSetKernelArg(k, 2, sizeof iter, &iter), "clSetKernelArg", "measuring policies");
      std::size_t global = n;
      check(clEnqueueNDRangeKernel(rig.queue.get(), k, 1, nullptr, &global, nullptr, dev.wait_count(),
                                   dev.wait_list(), dev.event_slot()),
            "clEnqueueNDRangeKernel", "measuring policies");
    }
    auto view = t.read_view();
    std::uint32_t wrong = 0;
    for (std::size_t i = 0; i < view.size(); ++i)
      wrong |= view[i] ^ measure_value(static_cast<std::uint32_t>(i), iter);
    const auto t1 = std::chrono::steady_clock::now();
    fresh = fresh && wrong == 0;
    if (it > warmup) times.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(times.begin(), times.end());
  m.us_per_inference = times[times.size() / 2];
  m.fresh = fresh;
  return m;
}

}  // namespace detail

/// Times one inference of `bytes` bytes with each candidate on `device` (a
/// private queue of `context`), `iterations` times after two warm-ups, and
/// checks every element of every inference. Candidates that fail to build
/// (or run) come back with `error` set. Blocks for the measurement's length.
inline std::vector<Measurement> measure(cl_context context, cl_device_id device, std::size_t bytes, Intent intent,
                                        const std::vector<policy::Choice>& candidates, int iterations = 9) {
  const DeviceCaps caps = DeviceCaps::query(device);
  detail::MeasureRig rig(context, device, caps.opencl_major);
  std::vector<Measurement> results;
  for (const policy::Choice& c : candidates) {
    Measurement m;
    m.choice = c;
    auto run = [&] {
          switch (c.kind) {
            case policy::Choice::Kind::persistent:
              m = detail::time_policy<policy::Persistent>(rig, context, bytes, intent, {c.allocation}, c, iterations);
              break;
            case policy::Choice::Kind::map_per_inference:
              m = detail::time_policy<policy::MapPerInference>(rig, context, bytes, intent, {c.allocation}, c,
                                                               iterations);
              break;
            case policy::Choice::Kind::copy_to_pinned:
              m = detail::time_policy<policy::CopyToPinned>(rig, context, bytes, intent, {}, c, iterations);
              break;
            case policy::Choice::Kind::unified_host:
              m = detail::time_policy<policy::UnifiedHost>(rig, context, bytes, intent, {}, c, iterations);
              break;
            case policy::Choice::Kind::svm:
#if defined(CL_VERSION_2_0)
              m = detail::time_policy<policy::Svm>(rig, context, bytes, intent, {c.svm_fine ? policy::Svm::Grain::fine : policy::Svm::Grain::coarse}, c, iterations);
#endif
              break;
          }
    };
#if CLZERO_DETAIL_HAS_EXCEPTIONS
    try {
      run();
    } catch (const Error& e) {
      m.error = e.what();
    }
#else
    run();
#endif
    results.push_back(m);
  }
  return results;
}

namespace detail {

/// Auto's measurements, once per (device, intent, size class): the size class
/// is the power of four the byte count falls in, so 3 KiB and 5 KiB share one.
inline std::mutex& measure_cache_mutex() {
  static std::mutex m;
  return m;
}
inline std::map<std::tuple<cl_device_id, int, int>, policy::Choice>& measure_cache() {
  static std::map<std::tuple<cl_device_id, int, int>, policy::Choice> cache;
  return cache;
}
inline int size_class(std::size_t bytes) noexcept {
  int c = 0;
  while (bytes >= 4) {
    bytes /= 4;
    ++c;
  }
  return c;
}

/// Whether measurement is switched off for the whole process
/// (CLZERO_AUTO_MEASURE=0).
inline bool measurement_disabled_by_environment() noexcept {
  const char* v = std::getenv("CLZERO_AUTO_MEASURE");
  return v != nullptr && v[0] == '0';
}

}  // namespace detail
}  // namespace clzero
