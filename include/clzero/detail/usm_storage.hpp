// SPDX-License-Identifier: Apache-2.0
// UsmHostStorage: one host allocation of cl_intel_unified_shared_memory
// (clHostMemAllocINTEL): host memory the device reads and writes directly,
// with no map at all.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "clzero/detail/extensions.hpp"
#include "clzero/detail/queue_context.hpp"
#include "clzero/device_caps.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/handle.hpp"

namespace clzero {
namespace detail {

class UsmHostStorage {
 public:
  UsmHostStorage(const QueueContext& q, std::size_t bytes, const char* doing) : context_(q.context), bytes_(bytes) {
    const DeviceCaps caps = DeviceCaps::query(q.device);
    if (!caps.intel_usm_host)
      raise(Error(ErrorKind::unsupported, doing,
                  "device \"" + caps.name + "\" (" + caps.platform_name +
                      ") does not offer host allocations of cl_intel_unified_shared_memory; use policy::Auto"));
    auto alloc = extension_function<HostMemAllocIntelFn>(q.platform, "clHostMemAllocINTEL");
    free_ = extension_function<MemBlockingFreeIntelFn>(q.platform, "clMemBlockingFreeINTEL");
    set_arg_ = extension_function<SetKernelArgMemPointerIntelFn>(q.platform, "clSetKernelArgMemPointerINTEL");
    if (alloc == nullptr || free_ == nullptr || set_arg_ == nullptr)
      raise(Error(ErrorKind::unsupported, doing,
                  "the platform advertises cl_intel_unified_shared_memory but does not return its entry points"));
    cl_int rc = CL_SUCCESS;
    ptr_ = alloc(q.ctx(), nullptr, bytes, 0, &rc);
    check(rc, "clHostMemAllocINTEL", doing);
    if (ptr_ == nullptr) raise(Error(doing, "clHostMemAllocINTEL", CL_OUT_OF_RESOURCES));
  }
  UsmHostStorage(const UsmHostStorage&) = delete;
  UsmHostStorage& operator=(const UsmHostStorage&) = delete;
  /// clMemBlockingFreeINTEL waits for the commands that still use the memory.
  ~UsmHostStorage() {
    if (ptr_ == nullptr) return;
    const cl_int rc = free_(context_.get(), ptr_);
    if (rc != CL_SUCCESS) report_cleanup(Error("freeing a UnifiedHost tensor", "clMemBlockingFreeINTEL", rc));
  }

  void keep_memory() noexcept {}  // clMemBlockingFreeINTEL waits for the commands itself

  cl_mem mem() const noexcept { return nullptr; }
  void* svm_pointer() const noexcept { return ptr_; }
  std::size_t bytes() const noexcept { return bytes_; }

  /// No command uses the memory at construction: the host may zero it.
  void host_zero() noexcept { std::memset(ptr_, 0, bytes_); }

  /// clSetKernelArgMemPointerINTEL: the kernel argument is the host pointer.
  void bind(cl_kernel kernel, cl_uint index, std::size_t offset, const char* who) const {
    check(set_arg_(kernel, index, static_cast<char*>(ptr_) + offset), "clSetKernelArgMemPointerINTEL", who,
          "binding the tensor as a kernel argument");
  }

  static constexpr bool needs_idle_before_free = true;

 private:
  ContextHandle context_;
  MemBlockingFreeIntelFn free_ = nullptr;
  SetKernelArgMemPointerIntelFn set_arg_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

}  // namespace detail
}  // namespace clzero
