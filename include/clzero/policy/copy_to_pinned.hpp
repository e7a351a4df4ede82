// SPDX-License-Identifier: Apache-2.0
// policy::CopyToPinned: the tensor lives in device memory; the host sees a
// pinned staging copy. Non-blocking clEnqueueReadBuffer / clEnqueueWriteBuffer
// move the data between them. What MNN does today, done as well as it can be:
// the staging buffer is mapped once for the tensor's life (pinned memory,
// fastest DMA), copies never block the engine's queue, and an input upload
// lets the host write the next input while the kernel still runs.
//
//   allocate   a device buffer and a staging buffer of pinned host memory
//              (NVIDIA's host-located memory where offered, else
//              CL_MEM_ALLOC_HOST_PTR), mapped once; both zeroed.
//   to device  if the host wrote: upload staging -> device (non-blocking).
//   to host    if kernels wrote: download device -> staging (non-blocking),
//              after the events that used the tensor.
//   host view  wait for the download (or the upload, before rewriting).
//   release    wait for the copies, unmap the staging buffer, free both.
//
// The staging buffer is mapped for its whole life and no command ever names
// it: copies target its mapped host pointer, which stays valid until unmap
// (OpenCL 3.0 section 5.5.4), so no map rule is at stake.
#pragma once

#include <CL/cl.h>

#include <cstring>
#include <string>

#include "clzero/allocation.hpp"
#include "clzero/detail/buffer_storage.hpp"
#include "clzero/detail/queue_context.hpp"
#include "clzero/device_caps.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/intent.hpp"
#include "clzero/policy/persistent.hpp"

namespace clzero {
namespace policy {

/// The tensor in device memory, seen by the host through a pinned staging buffer mapped
/// once; non-blocking copies move the data. For discrete GPUs without a zero-copy path.
class CopyToPinned {
 public:
  /// No options (policy protocol, docs/api.md).
  struct Options {};
  /// The policy's name in messages (policy protocol, docs/api.md).
  static constexpr const char* name = "CopyToPinned";

  /// The allocate step (policy protocol, docs/api.md): device and staging buffers, zeroed; staging mapped.
  CopyToPinned(const detail::QueueContext& q, std::size_t bytes, Intent intent, const Options&)
      : q_(q),
        device_(q, bytes, CL_MEM_READ_WRITE, "CopyToPinned: allocating the device buffer"),
        staging_(q, bytes, staging_allocation(q), "CopyToPinned: allocating the staging buffer"),
        intent_(intent) {
    host_ = staging_.map(q_.q(), CL_MAP_READ | CL_MAP_WRITE, CL_TRUE, EventList{}, nullptr, name);
    std::memset(host_, 0, bytes);
    if (host_reads(intent)) {
      cl_event fill = nullptr;
      // Kernels may leave elements unwritten; the host must then see zeros,
      // not whatever the device buffer held.
      const cl_int rc = [&] {
        const cl_uchar zero = 0;
        return clEnqueueFillBuffer(q_.q(), device_.mem(), &zero, 1, 0, bytes, 0, nullptr, &fill);
      }();
      EventList filled;
      if (rc == CL_SUCCESS) filled.adopt(fill);
      // Waited for here, once: a fill that fails is reported by the
      // constructor, and no later command inherits its failure.
      const char* api = "clEnqueueFillBuffer";
      cl_int done = rc;
      if (done == CL_SUCCESS && (done = clFlush(q_.q())) != CL_SUCCESS) api = "clFlush";
      if (done == CL_SUCCESS && (done = detail::await(filled, detail::HostWait{})) != CL_SUCCESS) api = "clWaitForEvents";
      if (done != CL_SUCCESS) {
        detail::wait_for_noexcept(filled, q_.q(), "CopyToPinned: waiting for a failed fill");
        unmap_staging();
        detail::check(done, api, name, "zeroing the device buffer");
      }
    }
  }
  /// Not copyable: the policy owns its buffers and the staging mapping.
  CopyToPinned(const CopyToPinned&) = delete;
  /// Not copyable, as above.
  CopyToPinned& operator=(const CopyToPinned&) = delete;

  /// The release step (policy protocol, docs/api.md): waits for the copies, unmaps the staging buffer.
  ~CopyToPinned() {
    EventList copies;
    detail::call_noexcept(
        [&] {
          copies.append(downloaded_);
          copies.append(uploaded_);
        },
        "CopyToPinned: collecting the copies of a tensor being released");
    detail::wait_quietly(copies, q_, "waiting for the copies of a tensor being released");
    unmap_staging();
  }

  /// To device (policy protocol, docs/api.md): clEnqueueWriteBuffer (non-blocking) if the host wrote.
  void to_device(Access /*access*/, bool host_wrote, EventList& waits) {
    // Finished commands order nothing; one that failed (the engine's kernel)
    // reached the engine through its own event and must not fail the next.
    device_busy_.drop_finished();
    // Kernels must not overtake the last download (it reads the device
    // buffer) nor the zero fill of a new tensor: on an out-of-order queue only
    // these events order them.
    waits.append(downloaded_);
    if (host_writes(intent_) && host_wrote) {
      cl_event up = nullptr;
      detail::check(clEnqueueWriteBuffer(q_.q(), device_.mem(), CL_FALSE, 0, device_.bytes(), host_,
                                         device_busy_.count(), device_busy_.data(), &up),
                    "clEnqueueWriteBuffer", name, "uploading the host's data to the device");
      uploaded_.clear();
      uploaded_.adopt(up);
      waits.retain(up);
    } else {
      waits.append(device_busy_);
    }
  }

  /// To host (policy protocol, docs/api.md): clEnqueueReadBuffer (non-blocking) after `used_by` if kernels wrote.
  void to_host(Access access, EventList& used_by) {
    downloaded_after_ = false;
    if (device_writes(access) && host_reads(intent_)) {
      cl_event down = nullptr;
      detail::check(clEnqueueReadBuffer(q_.q(), device_.mem(), CL_FALSE, 0, device_.bytes(), host_, used_by.count(),
                                        used_by.data(), &down),
                    "clEnqueueReadBuffer", name, "downloading the device's data to the host");
      downloaded_.clear();
      downloaded_.adopt(down);
      downloaded_after_ = !used_by.empty();
    }
    device_busy_.clear();
    device_busy_.swap(used_by);
  }

  /// Host view (policy protocol, docs/api.md): waits for the download (and the upload); the staging pointer.
  void* host_pointer(bool /*overwrite_all*/) {
    // The host may rewrite the staging copy once the last upload has stopped
    // reading it. An upload that ended in error has stopped too; its failure
    // reached the engine through the kernels that waited on it.
    if (!uploaded_.empty()) {
      const cl_int rc = detail::await(uploaded_, q_.host_wait);
      if (rc == CL_SUCCESS || detail::all_finished(uploaded_)) uploaded_.clear();
      if (rc != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        detail::check(rc, "clWaitForEvents", name, "waiting for the upload to finish reading the host copy");
    }
    // A producer that ended in error fails the view, whatever the
    // download's own status says: NVIDIA's driver 580 completes a command
    // whose wait list holds a failed event with CL_COMPLETE, without its
    // data (tests/from_docs, contract.cpp). The finished events are dropped
    // here instead of at the next device access: no extra call. Reported
    // once, and not after a download that failed itself.
    const bool check_producers = downloaded_after_;
    downloaded_after_ = false;
    detail::wait_for(downloaded_, q_.host_wait, name, "waiting for the download to the host");
    if (check_producers) {
      if (device_busy_.drop_finished() < 0)
        detail::check(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "clWaitForEvents", name,
                      "waiting for the commands that produced the tensor");
    }
    return host_;
  }

  /// View ended (policy protocol, docs/api.md): nothing to do, the staging buffer stays mapped.
  bool end_host(bool /*host_wrote*/) noexcept { return true; }
  /// Query (policy protocol, docs/api.md): false.
  bool needs_events() const noexcept { return false; }  // the copies follow the queue's order
  /// Nothing to keep (policy protocol, docs/api.md): a cl_mem outlives the commands that use it.
  void keep_memory() noexcept {}  // buffers outlive their commands
  /// Whether a view would open without blocking: the copies are done (policy protocol, docs/api.md).
  bool host_ready() const { return downloaded_.complete() && uploaded_.complete(); }

  /// Sets the device buffer as a kernel argument, clSetKernelArg (policy protocol, docs/api.md).
  void bind(cl_kernel kernel, cl_uint index, std::size_t offset, const char* doing = nullptr) const {
    device_.bind(kernel, index, offset, doing != nullptr ? doing : name);
  }
  /// The device buffer, not the staging one (policy protocol, docs/api.md).
  cl_mem buffer() const noexcept { return device_.mem(); }
  /// Null: the tensor is a buffer (policy protocol, docs/api.md).
  void* svm_pointer() const noexcept { return nullptr; }
  /// A one-line description, for logs (policy protocol, docs/api.md).
  std::string describe() const { return "CopyToPinned (device buffer + pinned staging)"; }

 private:
  // Pinned host memory the device reads and writes directly: NVIDIA's
  // host-located buffers where offered (clEnqueueReadBuffer into them was
  // the fastest copy on the H200, docs/benchmarks.md), else ALLOC_HOST_PTR.
  static Allocation staging_allocation(const detail::QueueContext& q) {
    return DeviceCaps::query(q.device).nv_create_buffer ? Allocation::nv_host_pinned() : Allocation::alloc_host_ptr();
  }

  void unmap_staging() noexcept {
    if (host_ == nullptr) return;
    cl_event unmapped = nullptr;
    const cl_int rc = staging_.unmap(q_.q(), host_, EventList{}, &unmapped);
    host_ = nullptr;
    if (rc != CL_SUCCESS) {
      detail::report_cleanup(Error("CopyToPinned: unmapping the staging buffer", "clEnqueueUnmapMemObject", rc));
      return;
    }
    EventList done;
    detail::call_noexcept([&] { done.adopt(unmapped); }, "CopyToPinned: keeping the staging buffer's unmap");
    detail::wait_for_noexcept(done, q_.q(), "CopyToPinned: waiting for the staging buffer's unmap");
  }

  detail::QueueContext q_;
  detail::BufferStorage device_;
  detail::BufferStorage staging_;
  Intent intent_;
  void* host_ = nullptr;
  EventList downloaded_;   // the last download, until the host waited for it
  EventList uploaded_;     // the last upload, until the host may write again
  EventList device_busy_;  // the commands that last used the device buffer
  bool downloaded_after_ = false;  // the last download waited on device_busy_, whose failures the view reports
};

}  // namespace policy
}  // namespace clzero
