// SPDX-License-Identifier: Apache-2.0
// policy::Auto: picks, at run time, the cheapest policy that is correct on the
// tensor's device, from the device's capabilities and the tensor's intent
// (policy/choice.hpp gives the rules), refined on discrete GPUs by a short
// measurement made once per device, intent and size class and cached
// (measure.hpp). The choice is inspectable: choice().label() and .reason.
#pragma once

#include <CL/cl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "clzero/allocation.hpp"
#include "clzero/detail/host_side.hpp"
#include "clzero/detail/queue_context.hpp"
#include "clzero/device_caps.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/intent.hpp"
#include "clzero/measure.hpp"
#include "clzero/policy/choice.hpp"
#include "clzero/policy/copy_to_pinned.hpp"
#include "clzero/policy/map_per_inference.hpp"
#include "clzero/policy/persistent.hpp"
#include "clzero/policy/svm.hpp"
#include "clzero/policy/unified_host.hpp"

namespace clzero {
namespace policy {
// Auto's variant holds Svm only where the headers declare OpenCL 2.0: one
// Auto per configuration (detail/abi.hpp), so that a tensor built in one
// cannot be used by code built for the other.
CLZERO_DETAIL_CL_BEGIN

/// Decides once, in the constructor, which policy suits the tensor's device and
/// intent (choose(), refined by measure() on discrete GPUs; choice() says what and
/// why), then runs that policy: every protocol member forwards to it.
class Auto {
 public:
  /// Auto's options, given to the tensor's constructor (policy protocol, docs/api.md).
  struct Options {
    /// On a discrete GPU, time the candidate policies once per device, intent
    /// and size class (a few milliseconds, on a private queue) and take the
    /// fastest that returned fresh data. Off: the rules alone decide. The
    /// environment variable CLZERO_AUTO_MEASURE=0 switches it off everywhere;
    /// CLZERO_AUTO_MEASURE=1 measures on every device and for every intent.
    bool measure = true;
    /// Take `choice` instead of deciding (e.g. a choice the engine stored).
    bool override_choice = false;
    /// The choice to run when override_choice is set, e.g. one stored from measure().
    Choice choice;
    /// For engines whose kernels take only a cl_mem (CLBlast, clDNN-style
    /// and image-based kernels): choose among the buffer-backed policies only
    /// (Persistent, MapPerInference, CopyToPinned; Choice::buffer_backed()),
    /// by the same rules and measurement, so that DeviceAccess::buffer() is
    /// never null.
    bool buffers_only = false;
  };
  /// The policy's name in messages (policy protocol, docs/api.md).
  static constexpr const char* name = "Auto";

  /// The allocate step (policy protocol, docs/api.md): decides, then allocates the chosen policy.
  Auto(const detail::QueueContext& q, std::size_t bytes, Intent intent, const Options& options)
      : choice_(decide(q, bytes, intent, options)) {
    switch (choice_.kind) {
      case Choice::Kind::persistent:
        impl_.template emplace<Persistent>(q, bytes, intent, Persistent::Options{choice_.allocation});
        break;
      case Choice::Kind::map_per_inference:
        impl_.template emplace<MapPerInference>(q, bytes, intent, MapPerInference::Options{choice_.allocation});
        break;
      case Choice::Kind::copy_to_pinned:
        impl_.template emplace<CopyToPinned>(q, bytes, intent, CopyToPinned::Options{});
        break;
      case Choice::Kind::unified_host:
        impl_.template emplace<UnifiedHost>(q, bytes, intent, UnifiedHost::Options{});
        break;
      case Choice::Kind::svm:
#if defined(CL_VERSION_2_0)
        impl_.template emplace<Svm>(q, bytes, intent,
                                    Svm::Options{choice_.svm_fine ? Svm::Grain::fine : Svm::Grain::coarse});
        break;
#else
        detail::raise(Error(ErrorKind::unsupported, "Auto: building the chosen policy",
                            "Svm needs CL_TARGET_OPENCL_VERSION 200 or later; define it as 200 or higher, or "
                            "override with a choice that is not Svm"));
#endif
    }
  }

 private:
  // std::visit without its exception path: the variant is never valueless
  // once constructed (alternatives are built in place, never reassigned).
  template <class F>
  decltype(auto) visit(F&& f) {
    // Tests in a row, not a switch: a switch over the alternatives becomes a
    // jump table, one more cache line of data for every step of every
    // inference to fetch (docs/benchmarks.md, the host's footprint).
    const std::size_t i = impl_.index();
    if (i == 1) return f(*std::get_if<1>(&impl_));
    if (i == 2) return f(*std::get_if<2>(&impl_));
    if (i == 3) return f(*std::get_if<3>(&impl_));
    if (i == 4) return f(*std::get_if<4>(&impl_));
#if defined(CL_VERSION_2_0)
    if (i == 5) return f(*std::get_if<5>(&impl_));
#endif
    std::abort();  // unreachable: the constructor either fills the variant or throws
  }
  template <class F>
  decltype(auto) visit(F&& f) const {
    return const_cast<Auto*>(this)->visit([&](auto& p) -> decltype(auto) { return f(std::as_const(p)); });
  }

 public:
  /// What Auto picked and why.
  const Choice& choice() const noexcept { return choice_; }

  /// The "to device" step of the chosen policy (policy protocol, docs/api.md).
  void to_device(Access a, bool wrote, EventList& waits) {
    visit([&](auto& p) { p.to_device(a, wrote, waits); });
  }
  /// The "to host" step of the chosen policy (policy protocol, docs/api.md).
  void to_host(Access a, EventList& used_by) {
    visit([&](auto& p) { p.to_host(a, used_by); });
  }
  /// The "host view" step of the chosen policy (policy protocol, docs/api.md).
  void* host_pointer(bool overwrite_all) {
    return visit([&](auto& p) { return p.host_pointer(overwrite_all); });
  }
  /// The "view ended" step of the chosen policy (policy protocol, docs/api.md).
  bool end_host(bool wrote) noexcept {
    return visit([&](auto& p) noexcept { return p.end_host(wrote); });
  }
  /// The chosen policy's keep_memory() (policy protocol, docs/api.md).
  void keep_memory() noexcept {
    visit([&](auto& p) noexcept { p.keep_memory(); });
  }
  /// The chosen policy's needs_events() query (policy protocol, docs/api.md).
  bool needs_events() const noexcept {
    return visit([&](const auto& p) noexcept { return p.needs_events(); });
  }
  /// The chosen policy's host_ready() query (policy protocol, docs/api.md).
  bool host_ready() const {
    return visit([&](const auto& p) { return p.host_ready(); });
  }
  /// The chosen policy's host_side_deferred() query, false where it has none (policy protocol, docs/api.md).
  bool host_side_deferred() const noexcept {
    return visit([&](const auto& p) noexcept { return detail::host_side_deferred(p, 0); });
  }
  /// The chosen policy's device_side_unrecorded() query, false where it has none (policy protocol, docs/api.md).
  bool device_side_unrecorded() const noexcept {
    return visit([&](const auto& p) noexcept { return detail::device_side_unrecorded(p, 0); });
  }
  /// The chosen policy's start_host() step, where it has one (policy protocol, docs/api.md).
  void start_host() {
    visit([&](auto& p) { detail::start_host(p, 0); });
  }
  /// The chosen policy's bind() (policy protocol, docs/api.md).
  void bind(cl_kernel kernel, cl_uint index, std::size_t offset, const char* doing = nullptr) const {
    visit([&](const auto& p) { p.bind(kernel, index, offset, doing); });
  }
  /// The chosen policy's buffer() (policy protocol, docs/api.md).
  cl_mem buffer() const noexcept {
    return visit([&](const auto& p) noexcept { return p.buffer(); });
  }
  /// The chosen policy's svm_pointer() (policy protocol, docs/api.md).
  void* svm_pointer() const noexcept {
    return visit([&](const auto& p) noexcept { return p.svm_pointer(); });
  }
  /// "Auto -> " and the chosen policy's describe() (policy protocol, docs/api.md).
  std::string describe() const {
    return "Auto -> " + visit([&](const auto& p) { return p.describe(); });
  }

  /// The measurement candidates for a discrete GPU: the rule's choice and
  /// every other host path the device offers, plus CopyToPinned; with
  /// `buffers_only`, the buffer-backed ones among them.
  static std::vector<Choice> measurement_candidates(const DeviceCaps& caps, Intent intent, bool buffers_only = false) {
    std::vector<Choice> all = available(caps, intent, buffers_only), picked;
    for (const Choice& c : all) {
      const bool host_path =
          c.kind == Choice::Kind::copy_to_pinned || c.kind == Choice::Kind::unified_host ||
          (c.kind == Choice::Kind::svm && c.svm_fine) ||
          (c.kind == Choice::Kind::persistent && c.allocation.kind() == Allocation::Kind::nv_host_pinned);
      if (picked.empty() || host_path) picked.push_back(c);  // available() puts the rule's choice first
    }
    return picked;
  }

 private:
  static Choice decide(const detail::QueueContext& q, std::size_t bytes, Intent intent, const Options& options) {
    if (options.override_choice) {
      if (options.buffers_only && !options.choice.buffer_backed())
        detail::raise_invalid("Auto: constructing",
                              "the overriding choice " + options.choice.label() +
                                  " gives kernels a pointer, but buffers_only asks for a cl_mem; pass a "
                                  "buffer-backed choice (Choice::buffer_backed()) or clear buffers_only");
      return options.choice;
    }
    const DeviceCaps caps = DeviceCaps::query(q.device);
    Choice rule = choose(caps, intent, options.buffers_only);
    // A TensorRing's slot overlaps its host side with the next inference, so
    // what matters is how the copy overlaps, not one serialized inference:
    // on the H200 (NVIDIA's driver 580) rings of 2 over a device buffer and a
    // non-blocking clEnqueueReadBuffer into pinned memory were the fastest
    // hand-written rings at 256 KiB and 4 MiB in every run, ahead of kernels
    // writing host-located memory (docs/benchmarks.md, pipelined tables).
    if (q.in_ring && rule.kind == Choice::Kind::persistent &&
        rule.allocation.kind() == Allocation::Kind::nv_host_pinned) {
      Choice ring;
      ring.kind = Choice::Kind::copy_to_pinned;
      ring.reason =
          "a TensorRing's slot on a discrete GPU: the kernels write device memory and a non-blocking copy into "
          "pinned host memory overlaps the next inference (the fastest hand-written ring there)";
      return ring;
    }
    // Measure only where the rules leave a real question: a discrete GPU and
    // data the device writes. Unified memory makes every path zero copy; an
    // input on a discrete GPU belongs in device memory.
    if (!options.measure || detail::measurement_disabled_by_environment()) return rule;
    if (!detail::measurement_forced_by_environment() && (caps.host_unified_memory || intent == Intent::input))
      return rule;
    const auto key =
        std::make_tuple(q.device, static_cast<int>(intent), detail::size_class(bytes), options.buffers_only);
    std::lock_guard<std::mutex> lock(detail::measure_cache_mutex());
    auto& cache = detail::measure_cache();
    const auto found = cache.find(key);
    if (found != cache.end()) return found->second;
    // Large tensors are measured at 16 MiB: the ranking is settled by then
    // (host reads and bus copies scale alike) and the measurement stays short.
    const std::size_t measured = std::min<std::size_t>(bytes, std::size_t{16} << 20);
    // The measurement only refines the rule: if its queue or kernel cannot
    // be made (no online compiler: CL_COMPILER_NOT_AVAILABLE), the rule
    // decides and the reason says so. Not cached: a later tensor tries again.
    detail::MeasureRig rig;
    if (!rig.prepare(q.ctx(), q.device, caps.opencl_major)) {
      rule.reason += "; the measurement that would refine this choice could not be set up (" +
                     std::string(rig.error().what()) + "), so the rule alone decided";
      return rule;
    }
    const std::vector<Measurement> results = detail::measure_on(
        rig, q.ctx(), measured, intent, measurement_candidates(caps, intent, options.buffers_only), 15);
    Choice chosen = decide_measured(rule, results, measured);
    cache.emplace(key, chosen);
    return chosen;
  }

 public:
  /// The rule applied to measurements (pure: no device involved): the fastest
  /// candidate that returned fresh data without error, the rule's choice
  /// when it is within 5 % of that; a candidate seen stale or failing is
  /// never chosen, and when none is fresh the result is MapPerInference with
  /// a reason that says so. `measured_bytes` is the size measured, for the reason.
  static Choice decide_measured(const Choice& rule, const std::vector<Measurement>& results,
                                std::size_t measured_bytes) {
    const std::size_t measured = measured_bytes;
    const Measurement* best = nullptr;
    std::string table;
    for (const Measurement& m : results) {
      if (!table.empty()) table += ", ";
      table += m.choice.label() + " ";
      if (!m.error.empty())
        table += "failed";
      else if (!m.fresh)
        table += "STALE";
      else {
        char us[32];
        std::snprintf(us, sizeof us, "%.1f us", m.us_per_inference);
        table += us;
      }
      if (m.error.empty() && m.fresh && (best == nullptr || m.us_per_inference < best->us_per_inference)) best = &m;
    }
    // The rule's choice stays unless another is clearly faster (5 %): a
    // short measurement should not flip a choice on noise.
    for (const Measurement& m : results)
      if (best != nullptr && m.choice == rule && m.error.empty() && m.fresh &&
          m.us_per_inference <= best->us_per_inference * 1.05)
        best = &m;
    const std::string figures = " (measured at " + std::to_string(measured) + " bytes per inference: " + table + ")";
    if (best == nullptr) {
      // No candidate is known to work here, the rule's choice included: a
      // stale result is wrong data, never a speed. MapPerInference is the
      // spec's plain path (a blocking map after the kernels, an unmap
      // before them), the one every conformant implementation must get right.
      Choice fallback;
      fallback.kind = Choice::Kind::map_per_inference;
      fallback.allocation = Allocation::alloc_host_ptr();
      fallback.reason =
          "no candidate returned fresh data without error when measured, so none is trusted; MapPerInference, "
          "the specification's plain map and unmap, is used instead" +
          figures;
      return fallback;
    }
    Choice chosen = best->choice;
    chosen.reason =
        (best->choice == rule ? rule.reason + "; confirmed by measurement" : "fastest fresh policy when measured") +
        figures;
    return chosen;
  }

 private:
  Choice choice_;
  std::variant<std::monostate, Persistent, MapPerInference, CopyToPinned, UnifiedHost
#if defined(CL_VERSION_2_0)
               ,
               Svm
#endif
               >
      impl_;
};

CLZERO_DETAIL_CL_END
}  // namespace policy
}  // namespace clzero
