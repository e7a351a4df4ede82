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
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "clzero/detail/abi.hpp"
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
  /// The candidate measured.
  policy::Choice choice;
  double us_per_inference = 0;  ///< median over the timed inferences
  bool fresh = false;           ///< every element of every inference was right
  std::string error;            ///< why it could not be measured, if it could not
};

namespace detail {
// Compiled once per OpenCL configuration (detail/abi.hpp): make_timed and
// the rig differ with CL_VERSION_2_0, and the cache holds choices that may
// name Svm.
CLZERO_DETAIL_CL_BEGIN

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
  const char* failed_call = nullptr;  ///< the OpenCL call that failed in prepare()
  cl_int failed_code = CL_SUCCESS;    ///< and its error code

  static constexpr const char* doing = "measure: preparing a private queue and kernel";

  /// Makes the queue and builds the kernel. Raises nothing: a failure (e.g.
  /// CL_COMPILER_NOT_AVAILABLE from clBuildProgram on a device without an
  /// online compiler) is recorded for error(), so that Auto can keep its rule.
  bool prepare(cl_context context, cl_device_id device, unsigned opencl_major) noexcept {
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
    if (rc != CL_SUCCESS) return fail("clCreateCommandQueue", rc);
    const char* src = kMeasureKernel;
    program = ProgramHandle::adopt(clCreateProgramWithSource(context, 1, &src, nullptr, &rc));
    if (rc != CL_SUCCESS) return fail("clCreateProgramWithSource", rc);
    rc = clBuildProgram(program.get(), 1, &device, "", nullptr, nullptr);
    if (rc != CL_SUCCESS) return fail("clBuildProgram", rc);
    return true;
  }

  /// What prepare() failed at, as an Error.
  Error error() const { return Error(doing, failed_call, failed_code); }

 private:
  bool fail(const char* call, cl_int code) noexcept {
    failed_call = call;
    failed_code = code;
    return false;
  }
};

/// One candidate, ready to time: its own tensor on the rig's queue.
class Timed {
 public:
  virtual ~Timed() = default;
  /// One inference (iteration `iter`); true if every element was fresh.
  virtual bool run(std::uint32_t iter) = 0;
};

template <class Policy>
class TimedPolicy final : public Timed {
 public:
  TimedPolicy(MeasureRig& rig, cl_context context, std::size_t n, Intent intent,
              const typename Policy::Options& options)
      : rig_(rig),
        n_(n),
        tensor_(context, rig.queue.get(), {n}, intent == Intent::input ? Intent::inout : intent, options) {
    // A kernel object per candidate. NVIDIA's driver 580 refuses to enqueue a
    // kernel whose argument was once an SVM pointer and is now a cl_mem
    // (CL_INVALID_KERNEL_ARGS; docs/drivers.md, "A kernel argument once set to
    // an SVM pointer cannot take a cl_mem again"), so candidates never share one.
    cl_int rc = CL_SUCCESS;
    kernel_ = KernelHandle::adopt(clCreateKernel(rig.program.get(), "clzero_measure_fill", &rc));
    check(rc, "clCreateKernel", "measure: making a candidate's kernel");
    tensor_.bind(kernel_.get(), 0);  // once, as the README's engine does
  }

  bool run(std::uint32_t iter) override {
    cl_kernel k = kernel_.get();
    const cl_uint count = static_cast<cl_uint>(n_);
    {
      auto dev = tensor_.device_access(Access::write);
      check(clSetKernelArg(k, 1, sizeof count, &count), "clSetKernelArg", "measure: running a candidate");
      check(clSetKernelArg(k, 2, sizeof iter, &iter), "clSetKernelArg", "measure: running a candidate");
      std::size_t global = n_;
      // As the README's inference does: the tensor's own in-order queue needs
      // no wait list, and handing one out would add a flush every inference
      // that an engine on that queue never pays (it once made Auto prefer
      // CopyToPinned at 4 KiB on the H200, docs/logs/h200/8-7907993); nor an
      // event, unless the candidate waits on the kernel's.
      const cl_command_queue q = rig_.queue.get();
      check(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, dev.wait_count(q), dev.wait_list(q),
                                   dev.event_slot(q)),
            "clEnqueueNDRangeKernel", "measure: running a candidate");
    }
    auto view = tensor_.read_view();
    std::uint32_t wrong = 0;
    for (std::size_t i = 0; i < view.size(); ++i) wrong |= view[i] ^ measure_value(static_cast<std::uint32_t>(i), iter);
    return wrong == 0;
  }

 private:
  MeasureRig& rig_;
  std::size_t n_;
  MappedTensor<std::uint32_t, Policy> tensor_;
  KernelHandle kernel_;
};

inline std::unique_ptr<Timed> make_timed(MeasureRig& rig, cl_context context, std::size_t n, Intent intent,
                                         const policy::Choice& c) {
  switch (c.kind) {
    case policy::Choice::Kind::persistent:
      return std::unique_ptr<Timed>(new TimedPolicy<policy::Persistent>(rig, context, n, intent, {c.allocation}));
    case policy::Choice::Kind::map_per_inference:
      return std::unique_ptr<Timed>(new TimedPolicy<policy::MapPerInference>(rig, context, n, intent, {c.allocation}));
    case policy::Choice::Kind::copy_to_pinned:
      return std::unique_ptr<Timed>(new TimedPolicy<policy::CopyToPinned>(rig, context, n, intent, {}));
    case policy::Choice::Kind::unified_host:
      return std::unique_ptr<Timed>(new TimedPolicy<policy::UnifiedHost>(rig, context, n, intent, {}));
    case policy::Choice::Kind::svm:
#if defined(CL_VERSION_2_0)
      return std::unique_ptr<Timed>(new TimedPolicy<policy::Svm>(
          rig, context, n, intent, {c.svm_fine ? policy::Svm::Grain::fine : policy::Svm::Grain::coarse}));
#else
      break;
#endif
  }
  raise(Error(ErrorKind::unsupported, "measure: making a candidate",
              "Svm needs CL_TARGET_OPENCL_VERSION 200 or later; define it as 200 or higher, or leave Svm out of the "
              "candidates"));
}

/// measure() on a prepared rig.
inline std::vector<Measurement> measure_on(MeasureRig& rig, cl_context context, std::size_t bytes, Intent intent,
                                           const std::vector<policy::Choice>& candidates, int min_rounds) {
  const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(std::uint32_t));
  const std::size_t count = candidates.size();
  std::vector<Measurement> results(count);
  std::vector<std::unique_ptr<Timed>> runners(count);
  std::vector<std::vector<double>> times(count);
  auto guarded = [&](std::size_t i, auto&& step) {
#if CLZERO_DETAIL_HAS_EXCEPTIONS
    try {
      step();
    } catch (const Error& e) {
      results[i].error = e.what();
      runners[i].reset();
    }
#else
    (void)i;
    step();
#endif
  };
  for (std::size_t i = 0; i < count; ++i) {
    results[i].choice = candidates[i];
    results[i].fresh = true;
    guarded(i, [&] { runners[i] = make_timed(rig, context, n, intent, candidates[i]); });
  }
  const auto start = std::chrono::steady_clock::now();
  const int warmup = 2;
  for (int round = 1; round <= 200 + warmup; ++round) {
    for (std::size_t i = 0; i < count; ++i) {
      if (!runners[i]) continue;
      guarded(i, [&] {
        const auto t0 = std::chrono::steady_clock::now();
        const bool fresh = runners[i]->run(static_cast<std::uint32_t>(round));
        const auto t1 = std::chrono::steady_clock::now();
        results[i].fresh = results[i].fresh && fresh;
        if (round > warmup) times[i].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      });
    }
    if (round >= min_rounds + warmup && std::chrono::steady_clock::now() - start > std::chrono::milliseconds(5)) break;
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (times[i].empty()) {
      results[i].fresh = false;
      continue;
    }
    std::sort(times[i].begin(), times[i].end());
    results[i].us_per_inference = times[i][times[i].size() / 2];
  }
  return results;
}

CLZERO_DETAIL_CL_END
}  // namespace detail

CLZERO_DETAIL_CL_BEGIN
/// Times one inference of `bytes` bytes with each candidate on `device` (a
/// private queue of `context`) and checks every element of every inference.
/// The candidates take turns, one inference each per round, so that a slow
/// spell of the machine hits all of them alike; after two warm-up rounds it
/// runs at least `min_rounds` rounds and until 5 ms have passed (at most 200).
/// A candidate that cannot be built or run comes back with `error` set;
/// throws clzero::Error when the private queue or kernel cannot be made.
inline std::vector<Measurement> measure(cl_context context, cl_device_id device, std::size_t bytes, Intent intent,
                                        const std::vector<policy::Choice>& candidates, int min_rounds = 15) {
  const DeviceCaps caps = DeviceCaps::query(device);
  detail::MeasureRig rig;
  if (!rig.prepare(context, device, caps.opencl_major)) detail::raise(rig.error());
  return detail::measure_on(rig, context, bytes, intent, candidates, min_rounds);
}
CLZERO_DETAIL_CL_END

namespace detail {
CLZERO_DETAIL_CL_BEGIN

/// Auto's measurements, once per (device, intent, size class, buffers only):
/// the size class is the power of four the byte count falls in, so 3 KiB and
/// 5 KiB share one.
inline std::mutex& measure_cache_mutex() {
  static std::mutex m;
  return m;
}
inline std::map<std::tuple<cl_device_id, int, int, bool>, policy::Choice>& measure_cache() {
  static std::map<std::tuple<cl_device_id, int, int, bool>, policy::Choice> cache;
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

/// Whether Auto measures on every device and for every intent, not only for
/// what a discrete GPU writes (CLZERO_AUTO_MEASURE=1): to see the ranking on
/// unified-memory devices, and to exercise the measurement where no discrete
/// GPU is at hand.
inline bool measurement_forced_by_environment() noexcept {
  const char* v = std::getenv("CLZERO_AUTO_MEASURE");
  return v != nullptr && v[0] == '1';
}

CLZERO_DETAIL_CL_END
}  // namespace detail
}  // namespace clzero
