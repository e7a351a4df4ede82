// SPDX-License-Identifier: Apache-2.0
// One tensor's life under one injected fault: construction, three
// inferences with every element checked, the tensor's reaction to the
// failure, its release. What happened is returned as an Outcome; what went
// wrong is listed in Outcome::problems.
#pragma once

#include <clzero/clzero.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/fault_layer.hpp"
#include "support/test_env.hpp"

namespace clzero_test {

/// The fault to inject: fail the nth call of `api` (1-based; 0: none).
struct Fault {
  std::string api;
  long nth = 0;
  cl_int code = CL_SUCCESS;
  int mode = CLZERO_FAULT_IMMEDIATE;
};

/// An error clzero raised, thrown or reported to the cleanup handler.
struct Reported {
  clzero::ErrorKind kind;
  std::string api, code_name, what;
  bool cleanup;
};

struct Outcome {
  enum class After {
    unaffected,       ///< no error reached the application
    not_constructed,  ///< construction threw
    usable,           ///< an operation threw; the tensor then worked again
    unusable,         ///< an operation threw; every later call throws ErrorKind::unusable
    cleanup_only,     ///< the failure came during release and went to the cleanup handler
  };
  std::string fired;  ///< the call the fault hit
  After after = After::unaffected;
  std::vector<Reported> errors;
  std::vector<std::string> problems;
  long elements_checked = 0;
};

inline const char* to_string(Outcome::After a) {
  switch (a) {
    case Outcome::After::unaffected: return "no error";
    case Outcome::After::not_constructed: return "construction throws";
    case Outcome::After::usable: return "throws, usable after";
    case Outcome::After::unusable: return "throws, unusable after";
    case Outcome::After::cleanup_only: return "cleanup handler";
  }
  return "?";
}

namespace scenario_detail {

inline std::vector<Reported>& cleanup_reports() {
  static std::vector<Reported> reports;
  return reports;
}

inline void record_cleanup(const clzero::Error& e) noexcept {
  cleanup_reports().push_back({e.kind(), e.api(), e.code_name(), e.what(), true});
}

inline Reported reported(const clzero::Error& e) { return {e.kind(), e.api(), e.code_name(), e.what(), false}; }

constexpr std::size_t kElements = 1000;

// What the kernels of the test program compute (support/test_env.hpp).
struct Kernels {
  Kernels() : fill("fill_u32"), copy("copy_u32"), update("update_u32") {
    cl_int rc = CL_SUCCESS;
    check = clCreateBuffer(Env::get().context, CL_MEM_READ_WRITE, kElements * 4, nullptr, &rc);
    ok(rc, "clCreateBuffer");
  }
  ~Kernels() { clReleaseMemObject(check); }
  Kernels(const Kernels&) = delete;
  Kernels& operator=(const Kernels&) = delete;
  Kernel fill, copy, update;
  cl_mem check = nullptr;
};

}  // namespace scenario_detail

/// The engine's kernel ended in error (it waited on a command that failed).
struct KernelFailed {
  cl_int status;
};

/// Runs one inference: the host writes (input, inout), a kernel runs, the
/// host checks every element (through the view, or for an input through a
/// copy the kernel made). Throws clzero::Error from clzero's calls only.
template <class Tensor>
void inference(Tensor& t, scenario_detail::Kernels& k, std::uint32_t iter, Outcome& out, bool record_events = true) {
  using scenario_detail::kElements;
  const clzero::Intent intent = t.intent();
  std::vector<std::uint32_t> expected(kElements);
  for (std::uint32_t i = 0; i < kElements; ++i) expected[i] = value(i, iter);
  // The engine's own event for its kernel: an input's consumer is the
  // engine, which learns from this event whether its kernel ran.
  clzero::EventHandle kernel_event;
  if (intent != clzero::Intent::output) {
    auto view = t.write_view();
    for (std::uint32_t i = 0; i < kElements; ++i) view[i] = expected[i];
  }
  {
    auto dev = t.device_access();
    Kernel& kernel = intent == clzero::Intent::output ? k.fill : intent == clzero::Intent::input ? k.copy : k.update;
    dev.bind(kernel.k, 0);
    {
      FaultLayer::Paused paused;
      const cl_uint n = kElements;
      if (intent == clzero::Intent::input) {
        kernel.arg(1, k.check);
        kernel.arg(2, n);
      } else {
        kernel.arg(1, n);
        kernel.arg(2, iter);
      }
      cl_event done = nullptr;
      const std::size_t global = kElements;
      ok(clEnqueueNDRangeKernel(t.queue(), kernel.k, 1, nullptr, &global, nullptr, dev.wait_count(),
                                dev.wait_list(), &done),
         "clEnqueueNDRangeKernel");
      kernel_event = clzero::EventHandle::adopt(done);
    }
    // Without recorded events clzero orders the host's side after everything
    // enqueued so far (a marker on an out-of-order queue).
    if (record_events) dev.used_by(kernel_event.get());
    dev.end();
  }
  if (intent == clzero::Intent::inout)
    for (std::uint32_t i = 0; i < kElements; ++i) expected[i] = expected[i] * 3u + iter;
  std::vector<std::uint32_t> seen(kElements);
  if (intent == clzero::Intent::input) {
    FaultLayer::Paused paused;
    const cl_event e = kernel_event.get();
    const cl_int status = clWaitForEvents(1, &e);
    if (status != CL_SUCCESS) throw KernelFailed{status};
    ok(clEnqueueReadBuffer(t.queue(), k.check, CL_TRUE, 0, kElements * 4, seen.data(), 1, &e, nullptr),
       "clEnqueueReadBuffer");
  } else {
    auto view = t.read_view();
    if (view.size() != kElements) out.problems.push_back("a view has " + std::to_string(view.size()) + " elements");
    for (std::uint32_t i = 0; i < kElements && i < view.size(); ++i) seen[i] = view[i];
  }
  std::size_t wrong = 0;
  for (std::uint32_t i = 0; i < kElements; ++i) wrong += seen[i] != expected[i];
  out.elements_checked += static_cast<long>(kElements);
  if (wrong != 0)
    out.problems.push_back("iteration " + std::to_string(iter) + ": " + std::to_string(wrong) + " of " +
                           std::to_string(kElements) + " elements wrong after an inference that reported no error");
}

/// Every call of an unusable tensor must throw ErrorKind::unusable.
template <class Tensor>
void expect_unusable(Tensor& t, Outcome& out) {
  auto must_be_unusable = [&](const char* what, auto&& call) {
    try {
      call();
      out.problems.push_back(std::string(what) + " succeeded on a tensor that says it is unusable");
    } catch (const clzero::Error& e) {
      if (e.kind() != clzero::ErrorKind::unusable)
        out.problems.push_back(std::string(what) + " on an unusable tensor threw another kind: " + e.what());
    }
  };
  must_be_unusable("device_access()", [&] { (void)t.device_access(); });
  if (t.intent() != clzero::Intent::input) must_be_unusable("read_view()", [&] { (void)t.read_view(); });
  if (t.intent() != clzero::Intent::output) must_be_unusable("write_view()", [&] { (void)t.write_view(); });
}

/// One tensor's life under `fault`, on `queue`; all checks of the fault
/// matrix. `record_events`: the engine hands its kernels' events to clzero.
template <class Policy>
Outcome run_scenario(const typename Policy::Options& options, clzero::Intent intent, const Fault& fault,
                     cl_command_queue queue = Env::get().queue, bool record_events = true) {
  using Tensor = clzero::MappedTensor<std::uint32_t, Policy>;
  Env& env = Env::get();
  FaultLayer& layer = FaultLayer::get();
  Outcome out;
  scenario_detail::Kernels kernels;
  {
    FaultLayer::Paused paused;
    ok(clFinish(queue), "clFinish");
  }
  layer.reset();
  scenario_detail::cleanup_reports().clear();
  const clzero::ErrorHandler previous = clzero::set_cleanup_error_handler(&scenario_detail::record_cleanup);
  // Host views poll event status before blocking; the polls follow timing,
  // so they would make the fault points differ from run to run. The poll's
  // own fault handling has its test (test_spin_wait.cpp).
  clzero::set_spin_wait(std::chrono::nanoseconds(0));
  const clzero_fault_counts before = layer.counts();
  if (fault.nth > 0) layer.arm(fault.api.c_str(), fault.nth, fault.code, fault.mode);
  {
    Tensor* tensor = nullptr;
    try {
      tensor = new Tensor(env.context, queue, {scenario_detail::kElements}, intent, options);
    } catch (const clzero::Error& e) {
      out.errors.push_back(scenario_detail::reported(e));
      out.after = Outcome::After::not_constructed;
    }
    if (tensor != nullptr) {
      bool threw = false;
      try {
        for (std::uint32_t iter = 1; iter <= 3; ++iter) inference(*tensor, kernels, iter, out, record_events);
      } catch (const clzero::Error& e) {
        out.errors.push_back(scenario_detail::reported(e));
        threw = true;
      } catch (const KernelFailed& k) {
        out.errors.push_back({clzero::ErrorKind::opencl, "the engine's kernel", clzero::error_name(k.status),
                              std::string("the engine's kernel ended with ") + clzero::error_name(k.status), false});
        threw = true;
      }
      if (threw && tensor->usable()) {
        out.after = Outcome::After::usable;
        try {  // the fault fired once: the tensor must work again
          for (std::uint32_t iter = 10; iter <= 11; ++iter) inference(*tensor, kernels, iter, out, record_events);
        } catch (const clzero::Error& e) {
          out.problems.push_back(std::string("usable() is true but the next inference failed: ") + e.what());
        } catch (const KernelFailed& k) {
          out.problems.push_back(std::string("usable() is true but the next inference's kernel ended with ") +
                                 clzero::error_name(k.status));
        }
      } else if (threw) {
        out.after = Outcome::After::unusable;
        expect_unusable(*tensor, out);
      }
      delete tensor;
    }
  }
  {
    FaultLayer::Paused paused;
    ok(clFinish(queue), "clFinish");
  }
  clzero::set_cleanup_error_handler(previous);
  for (const Reported& r : scenario_detail::cleanup_reports()) out.errors.push_back(r);
  if (out.after == Outcome::After::unaffected && !scenario_detail::cleanup_reports().empty())
    out.after = Outcome::After::cleanup_only;

  const clzero_fault_counts after = layer.counts();
  out.fired = layer.fired() != nullptr ? layer.fired() : "";
  layer.disarm();
  if (after.live_mem != before.live_mem)
    out.problems.push_back("leak: " + std::to_string(after.live_mem - before.live_mem) + " cl_mem still held");
  if (after.live_events != before.live_events)
    out.problems.push_back("leak: " + std::to_string(after.live_events - before.live_events) + " cl_event still held");
  if (after.live_svm != before.live_svm)
    out.problems.push_back("leak: " + std::to_string(after.live_svm - before.live_svm) + " SVM allocations not freed");
  if (after.active_maps != before.active_maps)
    out.problems.push_back("leak: " + std::to_string(after.active_maps - before.active_maps) + " mappings never unmapped");
  for (const std::string& v : layer.violations()) out.problems.push_back("violation: " + v);
  return out;
}

}  // namespace clzero_test
