// SPDX-License-Identifier: Apache-2.0
// SvmStorage: one buffer-SVM allocation (clSVMAlloc), coarse- or fine-grained,
// and the SVM forms of the protocol steps. OpenCL 2.0 and later only.
#pragma once

#include <CL/cl.h>

#if defined(CL_VERSION_2_0)

#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

#include "clzero/detail/queue_context.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/handle.hpp"

namespace clzero {
namespace detail {

class SvmStorage {
 public:
  SvmStorage(const QueueContext& q, std::size_t bytes, bool fine_grain, const char* doing)
      : context_(q.context), bytes_(bytes) {
    const cl_svm_mem_flags flags = CL_MEM_READ_WRITE | (fine_grain ? CL_MEM_SVM_FINE_GRAIN_BUFFER : 0);
    ptr_ = clSVMAlloc(q.ctx(), flags, bytes, 0);
    // clSVMAlloc reports failure only by returning NULL (OpenCL 3.0 section 5.6.1).
    if (ptr_ == nullptr)
      raise(Error(std::string(doing) + " (" + std::to_string(bytes) + " bytes of " + (fine_grain ? "fine" : "coarse") +
                      "-grained buffer SVM; clSVMAlloc returned NULL)",
                  "clSVMAlloc", CL_MEM_OBJECT_ALLOCATION_FAILURE));
  }
  SvmStorage(const SvmStorage&) = delete;
  SvmStorage& operator=(const SvmStorage&) = delete;
  /// The owner makes sure no command still uses the memory (needs_idle_before_free).
  ~SvmStorage() {
    if (ptr_ != nullptr) clSVMFree(context_.get(), ptr_);
  }

  /// Never frees the memory: for a release that cannot know whether commands
  /// still use it (clSVMFree does not wait for them).
  void keep_memory() noexcept { ptr_ = nullptr; }

  /// Whether host views map, blocking, as they open: measured for
  /// coarse-grained SVM on its own (detail/wait_method.hpp).
  static bool maps_at_view(const QueueContext& q) noexcept { return q.svm_map_at_view; }

  cl_mem mem() const noexcept { return nullptr; }
  void* svm_pointer() const noexcept { return ptr_; }
  std::size_t bytes() const noexcept { return bytes_; }

  /// clEnqueueSVMMap: coarse-grained SVM follows the buffer map rules.
  void* map(cl_command_queue q, cl_map_flags flags, cl_bool blocking, const EventList& waits, cl_event* event,
            const char* who) {
    check(clEnqueueSVMMap(q, blocking, flags, ptr_, bytes_, waits.count(), waits.data(), event), "clEnqueueSVMMap", who,
          "mapping the tensor for the host");
    return ptr_;
  }

  cl_int unmap(cl_command_queue q, void* p, const EventList& waits, cl_event* event) noexcept {
    return clEnqueueSVMUnmap(q, p, waits.count(), waits.data(), event);
  }
  static constexpr const char* unmap_api() noexcept { return "clEnqueueSVMUnmap"; }

  void fill_zero(cl_command_queue q, cl_event* event, const char* who) {
    const cl_uchar zero = 0;
    check(clEnqueueSVMMemFill(q, ptr_, &zero, 1, bytes_, 0, nullptr, event), "clEnqueueSVMMemFill", who,
          "zeroing the new tensor");
  }

  /// Fine-grained memory may be written by the host while no command uses it.
  void host_zero() noexcept { std::memset(ptr_, 0, bytes_); }

  /// clSetKernelArgSVMPointer: the kernel argument is the SVM pointer itself.
  /// Any address inside the allocation may be passed (OpenCL 3.0 section 5.9.2).
  void bind(cl_kernel kernel, cl_uint index, std::size_t offset, const char* who) const {
    check(clSetKernelArgSVMPointer(kernel, index, static_cast<char*>(ptr_) + offset), "clSetKernelArgSVMPointer", who,
          "binding the tensor as a kernel argument");
  }

  /// clSVMFree does not wait for commands that use the memory (OpenCL 3.0
  /// section 5.6.1): the owner waits for them first.
  static constexpr bool needs_idle_before_free = true;

 private:
  ContextHandle context_;
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

}  // namespace detail
}  // namespace clzero

#endif  // CL_VERSION_2_0
