// SPDX-License-Identifier: Apache-2.0
// policy::UnifiedHost: Intel's cl_intel_unified_shared_memory host
// allocations (clHostMemAllocINTEL). Host memory the device accesses
// directly: no map, the Coherent protocol (visibility at event completion),
// kernels take the pointer through clSetKernelArgMemPointerINTEL.
// Offered by Intel GPUs and by PoCL 5 and later.
#pragma once

#include <CL/cl.h>

#include <string>

#include "clzero/detail/coherent_protocol.hpp"
#include "clzero/detail/queue_context.hpp"
#include "clzero/detail/usm_storage.hpp"
#include "clzero/intent.hpp"

namespace clzero {
namespace policy {

/// Intel USM host memory (clHostMemAllocINTEL): the device reads and writes it directly,
/// so there is no map; the host sees the data once the kernels' events complete.
class UnifiedHost : public detail::Coherent<detail::UsmHostStorage> {
 public:
  /// No options (policy protocol, docs/api.md).
  struct Options {};
  /// The policy's name in messages (policy protocol, docs/api.md).
  static constexpr const char* name = "UnifiedHost";

  /// The allocate step (policy protocol, docs/api.md): clHostMemAllocINTEL, zeroed by the host.
  UnifiedHost(const detail::QueueContext& q, std::size_t bytes, Intent /*intent*/, const Options&)
      : Coherent(q, name, bytes, "UnifiedHost: allocating USM host memory") {}

  /// A one-line description, for logs (policy protocol, docs/api.md).
  std::string describe() const { return "UnifiedHost (cl_intel_unified_shared_memory host allocation)"; }
};

}  // namespace policy
}  // namespace clzero
