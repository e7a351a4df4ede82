// SPDX-License-Identifier: Apache-2.0
// policy::Auto: picks, at run time, the cheapest policy that is correct on the
// tensor's device, from the device's capabilities and the tensor's intent.
// The choice is inspectable: choice().policy and choice().reason.
//
// The rules, first match wins (docs/policies.md gives the measurements):
//  1. Host-unified memory (CPUs, integrated GPUs: PoCL, Intel iGPU, Mali,
//     Adreno): Persistent over CL_MEM_ALLOC_HOST_PTR. A map is a pointer
//     hand-back there, so Persistent costs two enqueues and no copy.
//  2. Discrete GPU, output or inout, cl_nv_create_buffer (NVIDIA):
//     Persistent over host-located pinned memory: kernels write straight into
//     host memory, as with cudaHostAllocMapped.
//  3. Discrete GPU, output or inout, fine-grained buffer SVM: Svm.
//  4. Discrete GPU, output or inout, Intel USM host allocations: UnifiedHost.
//  5. Otherwise (discrete GPU without a host path, or an input that kernels
//     may read many times and so belongs in device memory): CopyToPinned.
#pragma once

#include <CL/cl.h>

#include <string>
#include <variant>

#include "clzero/allocation.hpp"
#include "clzero/detail/queue_context.hpp"
#include "clzero/device_caps.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/intent.hpp"
#include "clzero/policy/copy_to_pinned.hpp"
#include "clzero/policy/map_per_inference.hpp"
#include "clzero/policy/persistent.hpp"
#include "clzero/policy/svm.hpp"
#include "clzero/policy/unified_host.hpp"

namespace clzero {
namespace policy {

/// The policy Auto runs, and why.
struct Choice {
  enum class Kind { persistent, map_per_inference, copy_to_pinned, svm, unified_host };
  Kind kind = Kind::persistent;
  Allocation allocation;  ///< for persistent and map_per_inference
  std::string reason;     ///< a sentence a person can read

  const char* name() const noexcept {
    switch (kind) {
      case Kind::persistent: return "Persistent";
      case Kind::map_per_inference: return "MapPerInference";
      case Kind::copy_to_pinned: return "CopyToPinned";
      case Kind::svm: return "Svm";
      case Kind::unified_host: return "UnifiedHost";
    }
    return "unknown";
  }
};

/// Applies the rules above to a device and an intent. Pure: no allocation,
/// no measurement. clzero-info prints what it returns for every device.
inline Choice choose(const DeviceCaps& caps, Intent intent) {
  Choice c;
  const bool discrete = !caps.host_unified_memory;
  if (!discrete) {
    c.kind = Choice::Kind::persistent;
    c.allocation = Allocation::alloc_host_ptr();
    c.reason = "the device shares memory with the host (CL_DEVICE_HOST_UNIFIED_MEMORY), so a map hands back a "
               "pointer without copying; Persistent keeps it mapped at rest";
    return c;
  }
  if (intent == Intent::input) {
    c.kind = Choice::Kind::copy_to_pinned;
    c.reason = "discrete GPU and an input tensor: kernels may read it many times, so it belongs in device memory; "
               "CopyToPinned uploads it once per inference from pinned staging, without blocking";
    return c;
  }
  if (caps.nv_create_buffer) {
    c.kind = Choice::Kind::persistent;
    c.allocation = Allocation::nv_host_pinned();
    c.reason = "discrete GPU with cl_nv_create_buffer: kernels write straight into pinned host memory (the OpenCL "
               "counterpart of cudaHostAllocMapped), so no copy follows the kernel";
    return c;
  }
#if defined(CL_VERSION_2_0)
  if (caps.svm_fine_grain_buffer) {
    c.kind = Choice::Kind::svm;
    c.reason = "discrete GPU with fine-grained buffer SVM: host and device share the memory, no map is needed";
    return c;
  }
#endif
  if (caps.intel_usm_host) {
    c.kind = Choice::Kind::unified_host;
    c.reason = "discrete GPU with cl_intel_unified_shared_memory host allocations: the device writes host memory "
               "directly, no map is needed";
    return c;
  }
  c.kind = Choice::Kind::copy_to_pinned;
  c.reason = "discrete GPU without a zero-copy host path: a map of CL_MEM_ALLOC_HOST_PTR would be a DMA copy "
             "anyway, and an asynchronous copy into pinned staging is the cheapest correct way";
  return c;
}

class Auto {
 public:
  struct Options {
    /// Take this choice instead of the rules' (e.g. from a measurement the
    /// engine made); its reason is shown as given.
    bool override_choice = false;
    Choice choice;
  };
  static constexpr const char* name = "Auto";

  Auto(const detail::QueueContext& q, std::size_t bytes, Intent intent, const Options& options)
      : choice_(options.override_choice ? options.choice : choose(DeviceCaps::query(q.device), intent)) {
    switch (choice_.kind) {
      case Choice::Kind::persistent:
        impl_.template emplace<Persistent>(q, bytes, intent, Persistent::Options{choice_.allocation});
        break;
      case Choice::Kind::map_per_inference:
        impl_.template emplace<MapPerInference>(q, bytes, intent, MapPerInference::Options{choice_.allocation});
        break;
      case Choice::Kind::copy_to_pinned: impl_.template emplace<CopyToPinned>(q, bytes, intent, CopyToPinned::Options{}); break;
      case Choice::Kind::unified_host: impl_.template emplace<UnifiedHost>(q, bytes, intent, UnifiedHost::Options{}); break;
      case Choice::Kind::svm:
#if defined(CL_VERSION_2_0)
        impl_.template emplace<Svm>(q, bytes, intent, Svm::Options{});
        break;
#else
        detail::raise(Error(ErrorKind::unsupported, "Auto: building the chosen policy",
                            "Svm needs CL_TARGET_OPENCL_VERSION 200 or later"));
#endif
    }
  }

  // std::visit without its exception path: the variant is never valueless
  // once constructed (alternatives are built in place, never reassigned).
  template <class F>
  decltype(auto) visit(F&& f) {
    switch (impl_.index()) {
      case 1: return f(*std::get_if<1>(&impl_));
      case 2: return f(*std::get_if<2>(&impl_));
      case 3: return f(*std::get_if<3>(&impl_));
      case 4: return f(*std::get_if<4>(&impl_));
#if defined(CL_VERSION_2_0)
      case 5: return f(*std::get_if<5>(&impl_));
#endif
      default: return f(*std::get_if<1>(&impl_));
    }
  }
  template <class F>
  decltype(auto) visit(F&& f) const {
    return const_cast<Auto*>(this)->visit([&](auto& p) -> decltype(auto) { return f(std::as_const(p)); });
  }

 public:
  /// What Auto picked and why.
  const Choice& choice() const noexcept { return choice_; }

  void to_device(Access a, bool wrote, EventList& waits) {
    visit([&](auto& p) { p.to_device(a, wrote, waits); });
  }
  void to_host(Access a, EventList& used_by) {
    visit([&](auto& p) { p.to_host(a, used_by); });
  }
  void* host_pointer() {
    return visit([&](auto& p) { return p.host_pointer(); });
  }
  bool end_host(bool wrote) noexcept {
    return visit([&](auto& p) noexcept { return p.end_host(wrote); });
  }
  bool host_ready() const {
    return visit([&](const auto& p) { return p.host_ready(); });
  }
  void bind(cl_kernel kernel, cl_uint index) const {
    visit([&](const auto& p) { p.bind(kernel, index); });
  }
  cl_mem buffer() const noexcept {
    return visit([&](const auto& p) noexcept { return p.buffer(); });
  }
  void* svm_pointer() const noexcept {
    return visit([&](const auto& p) noexcept { return p.svm_pointer(); });
  }
  std::string describe() const {
    return "Auto -> " + visit([&](const auto& p) { return p.describe(); });
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

}  // namespace policy
}  // namespace clzero
