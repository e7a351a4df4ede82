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

class UnifiedHost : public detail::Coherent<detail::UsmHostStorage> {
 public:
  struct Options {};
  static constexpr const char* name = "UnifiedHost";

  UnifiedHost(const detail::QueueContext& q, std::size_t bytes, Intent /*intent*/, const Options&)
      : Coherent(q, name, bytes, "UnifiedHost: allocating USM host memory") {}

  std::string describe() const { return "UnifiedHost (cl_intel_unified_shared_memory host allocation)"; }
};

}  // namespace policy
}  // namespace clzero
