// SPDX-License-Identifier: Apache-2.0
// policy::Choice and the rules that make it: which policy (and allocation)
// suits a device and an intent, and which policies a device can run at all.
//
// The rules, first match wins (docs/policies.md gives the measurements):
//  1. Host-unified memory (CPUs, integrated GPUs: PoCL, Intel iGPU, Mali,
//     Adreno): fine-grained buffer SVM where offered, else Intel USM host
//     memory, else Persistent over CL_MEM_ALLOC_HOST_PTR. Nothing is copied on
//     any of them; the first two also need no map/unmap commands.
//  2. Discrete GPU and an input: CopyToPinned. Kernels may read an input many
//     times; over the bus every read would cross it again.
//  3. Discrete GPU, cl_nv_create_buffer (NVIDIA): Persistent over
//     host-located pinned memory: kernels write straight into host memory, as
//     with cudaHostAllocMapped.
//  4. Discrete GPU with fine-grained buffer SVM: Svm.
//  5. Discrete GPU with Intel USM host allocations: UnifiedHost.
//  6. Otherwise: CopyToPinned (a map of ALLOC_HOST_PTR would be a copy anyway).
// policy::Auto refines rules 3 to 6 by measurement (measure.hpp).
#pragma once

#include <CL/cl.h>

#include <string>
#include <vector>

#include "clzero/allocation.hpp"
#include "clzero/detail/abi.hpp"
#include "clzero/device_caps.hpp"
#include "clzero/intent.hpp"

namespace clzero {
namespace policy {

/// The policy Auto runs, and why.
struct Choice {
  /// Which policy class a Choice stands for.
  enum class Kind {
    persistent,         ///< policy::Persistent, over `allocation`
    map_per_inference,  ///< policy::MapPerInference, over `allocation`
    copy_to_pinned,     ///< policy::CopyToPinned
    svm,                ///< policy::Svm, fine- or coarse-grained as `svm_fine` says
    unified_host        ///< policy::UnifiedHost
  };
  /// Which policy.
  Kind kind = Kind::persistent;
  Allocation allocation;  ///< for persistent and map_per_inference
  bool svm_fine = true;   ///< for svm: fine-grained (true) or coarse-grained buffers
  std::string reason;     ///< a sentence a person can read

  /// The policy class's name ("Persistent"), without its variant.
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

  /// The policy with its variant: "Persistent (nv_host_pinned)", "Svm (fine)".
  std::string label() const {
    switch (kind) {
      case Kind::persistent:
      case Kind::map_per_inference: return std::string(name()) + " (" + allocation.name() + ")";
      case Kind::svm: return svm_fine ? "Svm (fine)" : "Svm (coarse)";
      default: return name();
    }
  }

  /// Whether the policy's kernels take a cl_mem (Persistent, MapPerInference,
  /// CopyToPinned), as libraries that accept only buffers need.
  bool buffer_backed() const noexcept {
    return kind == Kind::persistent || kind == Kind::map_per_inference || kind == Kind::copy_to_pinned;
  }

  /// Same policy, allocation kind and (for svm) grain; `reason` is not compared.
  friend bool operator==(const Choice& a, const Choice& b) noexcept {
    return a.kind == b.kind && a.allocation.kind() == b.allocation.kind() &&
           (a.kind != Kind::svm || a.svm_fine == b.svm_fine);
  }
};

// What the rules may pick depends on whether the headers declare OpenCL 2.0
// (Svm): the functions below are compiled once per configuration
// (detail/abi.hpp).
CLZERO_DETAIL_CL_BEGIN

/// Applies the rules above to a device and an intent. Pure: no allocation,
/// no measurement. clzero-info prints what it returns for every device.
/// With `buffers_only`, for engines whose kernels take only a cl_mem (CLBlast,
/// image-based kernels), the rules skip the pointer paths (Svm, UnifiedHost):
/// Persistent on unified memory, CopyToPinned or NVIDIA's host-pinned
/// Persistent on a discrete GPU.
inline Choice choose(const DeviceCaps& caps, Intent intent, bool buffers_only = false) {
  Choice c;
  // Fine-grained buffer SVM, else Intel USM host memory: the paths that need
  // no map at all (the kernel's event is the only synchronisation). Fills `c`
  // and says whether the device has one; `where` starts the reason. Used by
  // rule 1 and rules 4-5; local, so that it is no part of the API.
  auto map_free = [&caps, &c, buffers_only](const char* where) -> bool {
    if (buffers_only) return false;
#if defined(CL_VERSION_2_0)
    if (caps.svm_fine_grain_buffer) {
      c.kind = Choice::Kind::svm;
      c.svm_fine = true;
      c.reason = std::string(where) +
                 " and has fine-grained buffer SVM: no map and no copy, the kernel's event is "
                 "the only synchronisation";
      return true;
    }
#endif
    if (caps.intel_usm_host) {
      c.kind = Choice::Kind::unified_host;
      c.reason = std::string(where) +
                 " and offers Intel USM host allocations (cl_intel_unified_shared_memory): no "
                 "map and no copy, the kernel's event is the only synchronisation";
      return true;
    }
    return false;
  };
  const bool discrete = !caps.host_unified_memory;
  if (!discrete) {
    // No copy either way; what differs is the commands per inference. Fine
    // SVM and USM need none (the kernel's event is the only sync point);
    // Persistent needs an unmap and a map, each a trip through the driver
    // (docs/benchmarks.md, PoCL rows).
    if (map_free("the device shares memory with the host")) return c;
    c.kind = Choice::Kind::persistent;
    c.allocation = Allocation::alloc_host_ptr();
    c.reason =
        "the device shares memory with the host (CL_DEVICE_HOST_UNIFIED_MEMORY), so a map hands back a "
        "pointer without copying; Persistent keeps it mapped at rest";
    return c;
  }
  if (intent == Intent::input) {
    c.kind = Choice::Kind::copy_to_pinned;
    c.reason =
        "discrete GPU and an input tensor: kernels may read it many times, so it belongs in device memory; "
        "CopyToPinned uploads it once per inference from pinned staging, without blocking";
    return c;
  }
  if (caps.nv_create_buffer) {
    c.kind = Choice::Kind::persistent;
    c.allocation = Allocation::nv_host_pinned();
    c.reason =
        "discrete GPU with cl_nv_create_buffer: kernels write straight into pinned host memory (the OpenCL "
        "counterpart of cudaHostAllocMapped), so no copy follows the kernel";
    return c;
  }
  if (map_free("discrete GPU")) return c;
  c.kind = Choice::Kind::copy_to_pinned;
  c.reason =
      "discrete GPU without a zero-copy host path: a map of CL_MEM_ALLOC_HOST_PTR would be a DMA copy "
      "anyway, and an asynchronous copy into pinned staging is the cheapest correct way";
  return c;
}

/// Every policy and allocation the device can run, the rule's choice first.
/// Vendor allocations whose extension is absent are left out; so are the
/// ones no device here can exercise without engine-provided memory (Qualcomm).
/// With `buffers_only`, only the buffer-backed ones (Choice::buffer_backed()).
inline std::vector<Choice> available(const DeviceCaps& caps, Intent intent, bool buffers_only = false) {
  std::vector<Choice> all;
  auto add = [&](Choice::Kind kind, Allocation allocation, bool svm_fine, const char* why) {
    Choice c;
    c.kind = kind;
    c.allocation = allocation;
    c.svm_fine = svm_fine;
    c.reason = why;
    if (buffers_only && !c.buffer_backed()) return;
    for (const Choice& have : all)
      if (have == c) return;
    all.push_back(c);
  };
  all.push_back(choose(caps, intent, buffers_only));
  add(Choice::Kind::persistent, Allocation::alloc_host_ptr(), true, "offered by every device");
  add(Choice::Kind::persistent, Allocation::use_host_ptr(), true, "offered by every device");
  if (caps.nv_create_buffer)
    add(Choice::Kind::persistent, Allocation::nv_host_pinned(), true, "the device offers cl_nv_create_buffer");
  if (caps.arm_import_memory)
    add(Choice::Kind::persistent, Allocation::arm_import_host(), true, "the device offers cl_arm_import_memory");
  add(Choice::Kind::map_per_inference, Allocation::alloc_host_ptr(), true, "offered by every device");
  add(Choice::Kind::copy_to_pinned, Allocation::alloc_host_ptr(), true, "offered by every device");
#if defined(CL_VERSION_2_0)
  if (caps.svm_fine_grain_buffer) add(Choice::Kind::svm, Allocation(), true, "the device has fine-grained buffer SVM");
  if (caps.svm_coarse_grain_buffer)
    add(Choice::Kind::svm, Allocation(), false, "the device has coarse-grained buffer SVM");
#endif
  if (caps.intel_usm_host)
    add(Choice::Kind::unified_host, Allocation(), true, "the device offers Intel USM host allocations");
  return all;
}

CLZERO_DETAIL_CL_END
}  // namespace policy
}  // namespace clzero
