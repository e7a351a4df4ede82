// SPDX-License-Identifier: Apache-2.0
// policy::MapPerInference: unmapped at rest. A host view maps and its end
// unmaps. What engines such as MNN (2019) and TNN do today: simple,
// correct everywhere, and the baseline the other policies are measured against.
//
// The protocol:
//   allocate   one cl_mem (an Allocation kind), zeroed; not mapped.
//   to device  nothing to unmap; the kernel waits on the last unmap's event.
//   to host    remember the events that used the tensor.
//   host view  map after those events (blocking, or submitted and then polled
//              or waited for: the device's measured host wait); the last
//              view's end unmaps.
//   release    wait for the last unmap, then free.
//
// The map joins the engine's in-order queue when the view opens, so it also
// waits for everything enqueued before it, not just the producer: the cost
// engines pay today, which Persistent in a TensorRing avoids by enqueueing
// its map right after the producer.
#pragma once

#include <CL/cl.h>

#include <string>

#include "clzero/allocation.hpp"
#include "clzero/detail/buffer_storage.hpp"
#include "clzero/detail/host_side.hpp"
#include "clzero/detail/queue_context.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/intent.hpp"
#include "clzero/policy/persistent.hpp"

namespace clzero {
namespace policy {

/// Unmapped at rest: each host view maps (clEnqueueMapBuffer) and its end
/// unmaps. Correct everywhere, the baseline the other policies are measured against.
class MapPerInference {
 public:
  /// MapPerInference's options, given to the tensor's constructor (policy protocol, docs/api.md).
  struct Options {
    /// Which cl_mem stands behind the tensor.
    Allocation allocation = Allocation::alloc_host_ptr();
  };
  /// The policy's name in messages (policy protocol, docs/api.md).
  static constexpr const char* name = "MapPerInference";

  /// The allocate step (policy protocol, docs/api.md): one cl_mem, zeroed where the host reads; not mapped.
  MapPerInference(const detail::QueueContext& q, std::size_t bytes, Intent intent, const Options& options)
      : q_(q),
        storage_(q, bytes, options.allocation, "MapPerInference: allocating the tensor"),
        intent_(intent),
        allocation_(options.allocation) {
    if (host_reads(intent)) {
      cl_event fill = nullptr;
      storage_.fill_zero(q_.q(), &fill, name);
      pending_.adopt(fill);
    }
  }
  /// Not copyable: the policy owns its cl_mem and mapping.
  MapPerInference(const MapPerInference&) = delete;
  /// Not copyable, as above.
  MapPerInference& operator=(const MapPerInference&) = delete;

  /// The release step (policy protocol, docs/api.md): unmaps a live view's mapping, waits for the last unmap.
  ~MapPerInference() {
    if (ptr_ != nullptr) end_host(false);
    if (unmap_unrecorded_)
      detail::wait_for_queue_noexcept(q_, "MapPerInference: waiting for the last unmap of a tensor being released");
    else
      detail::wait_quietly(unmapped_, q_, "MapPerInference: waiting for the last unmap of a tensor being released");
  }

  /// To device (policy protocol, docs/api.md): nothing to unmap; kernels wait on the last unmap.
  void to_device(Access /*access*/, bool /*host_wrote*/, EventList& waits) {
    waits.append(pending_);
    pending_.clear();
    unrecorded_ = unmapped_since_access_;
    unmapped_since_access_ = false;
  }

  /// Whether a view's unmap since the last access has no event in the waits (policy protocol,
  /// docs/api.md): on an in-order queue the kernels follow it by the queue's order.
  bool device_side_unrecorded() const noexcept { return unrecorded_; }

  /// To host (policy protocol, docs/api.md): keeps the events the view's map must follow.
  void to_host(Access /*access*/, EventList& used_by) {
    pending_.clear();
    pending_.swap(used_by);
    producers_unrecorded_ = pending_.empty();
  }

  /// For host_ready(), which must not report a view that would block as
  /// ready: with no events recorded (the kernels ran on the tensor's own
  /// in-order queue without handing theirs back), a marker stands for them
  /// (policy protocol, docs/api.md).
  void start_host() {
    if (!producers_unrecorded_) return;
    cl_event marker = nullptr;
    detail::check(clEnqueueMarkerWithWaitList(q_.q(), 0, nullptr, &marker), "clEnqueueMarkerWithWaitList", name,
                  "standing for the kernels the host waits for");
    pending_.adopt(marker);
    producers_unrecorded_ = false;
  }

  /// Host view (policy protocol, docs/api.md): maps the whole tensor after its producers, then waits
  /// the device's way. The whole tensor is mapped, so that views of several parts (a TensorArena)
  /// opened together share one map; an input's map invalidates only for a view of all of it
  /// (`overwrite_all`), else it keeps the contents the view does not cover: the unmap writes back all
  /// it mapped.
  void* host_pointer(bool overwrite_all) {
    // On the engine's in-order queue the map follows the producers by the
    // queue's order and gets no wait list: PoCL 3.1 never returns from a
    // blocking map whose wait list holds an event that ended in error.
    // Anything else the host waits for first (detail/host_side.hpp).
    constexpr const char* step = "waiting for the commands that produced the tensor";
    const bool ordered = detail::complete_or_ordered(pending_, q_, name, step);
    const cl_map_flags flags = detail::host_map_flags(intent_, overwrite_all);
    // One blocking call where the device's measured wait says so
    // (detail/wait_method.hpp), and on NVIDIA's host-located memory, whose
    // non-blocking map completes before the producer's writes land
    // (policy::Persistent): a view that polled the map alone read stale
    // elements on the H200 (docs/drivers.md).
    // The same for a map for writing only on NVIDIA's driver, which
    // completes it before the kernels that still read the input
    // (QueueContext::write_maps_block).
    if (q_.map_at_view || detail::map_completes_early(allocation_) ||
        (q_.write_maps_block && detail::writes_only(flags))) {
      ptr_ = storage_.map(q_.q(), flags, CL_TRUE, EventList{}, nullptr, name);
    } else {  // submitted, then polled or waited for
      EventList& mapped = mapping_;  // a member, so that its storage is reused every inference
      mapped.clear();
      cl_event e = nullptr;
      void* p = storage_.map(q_.q(), flags, CL_FALSE, EventList{}, &e, name);
      mapped.adopt(e);
      const char* api = "clFlush";
      const char* doing = "submitting the map that makes the tensor visible to the host";
      cl_int rc = clFlush(q_.q());
      if (rc == CL_SUCCESS) {
        api = "clWaitForEvents";
        doing = "waiting for the map of a host view";
        rc = detail::await(mapped, q_.host_wait);
      }
      if (rc != CL_SUCCESS) {
        // The view fails. A map still running is waited for; one that
        // completed is unmapped again (no view holds it), and so is one
        // that ended in error (detail::unmap_failed_map).
        if (!detail::all_finished(mapped))
          detail::wait_quietly(mapped, q_, "MapPerInference: waiting for the map of a view that failed");
        cl_int status = CL_COMPLETE;
        if (detail::event_status(e, status) && status == CL_COMPLETE) {
          ptr_ = p;
          end_host(false);
        } else if (status < 0) {
          detail::unmap_failed_map(storage_, q_, p, name);
        }
        detail::check(rc, api, name, doing);
      }
      ptr_ = p;
      mapped.clear();
    }
    unmapped_.clear();
    const cl_int failed = ordered ? detail::take_failure(pending_) : CL_SUCCESS;
    if (failed != CL_SUCCESS) {
      end_host(false);  // no view is made: unmap what was mapped for it
      detail::check(failed, "clWaitForEvents", name, step);
    }
    return ptr_;
  }

  /// Nothing is enqueued for the host until a view opens (policy protocol, docs/api.md).
  bool host_side_deferred() const noexcept { return true; }

  /// View ended (policy protocol, docs/api.md): clEnqueueUnmapMemObject; false if it failed.
  bool end_host(bool /*host_wrote*/) noexcept {
    // On an in-order queue later commands follow the unmap by the queue's
    // order: it gets no event, and a marker stands for it where one is
    // needed (kernels on another queue, the release).
    cl_event unmapped = nullptr;
    const cl_int rc = storage_.unmap(q_.q(), ptr_, EventList{}, q_.out_of_order ? &unmapped : nullptr);
    if (rc != CL_SUCCESS) {
      detail::report_cleanup(
          Error("MapPerInference: unmapping the tensor after a host view", "clEnqueueUnmapMemObject", rc));
      return false;
    }
    ptr_ = nullptr;
    if (unmapped == nullptr) {
      unmapped_.clear();
      unmap_unrecorded_ = unmapped_since_access_ = true;
      return true;
    }
    unmap_unrecorded_ = false;
    // The release must wait for this unmap: keep it first, with no OpenCL
    // call that could fail; then order the next command after it.
    if (!detail::call_noexcept([&] { unmapped_.adopt(unmapped); }, "MapPerInference: keeping an unmap's event"))
      return false;
    return detail::call_noexcept([&] { pending_.retain(unmapped); }, "MapPerInference: ordering after an unmap");
  }

  /// Whether a view would open without blocking (policy protocol, docs/api.md).
  bool host_ready() const { return pending_.complete(); }
  /// Query (policy protocol, docs/api.md): the host side needs no events of the access.
  bool needs_events() const noexcept { return false; }  // the blocking map follows the queue's order
  /// Nothing to keep (policy protocol, docs/api.md): a cl_mem outlives the commands that use it.
  void keep_memory() noexcept {}  // buffers outlive their commands

  /// Sets the cl_mem as a kernel argument, clSetKernelArg (policy protocol, docs/api.md).
  void bind(cl_kernel kernel, cl_uint index, std::size_t offset, const char* doing = nullptr) const {
    storage_.bind(kernel, index, offset, doing != nullptr ? doing : name);
  }
  /// The tensor's cl_mem (policy protocol, docs/api.md).
  cl_mem buffer() const noexcept { return storage_.mem(); }
  /// Null: the tensor is a buffer (policy protocol, docs/api.md).
  void* svm_pointer() const noexcept { return nullptr; }
  /// The allocation in use.
  const Allocation& allocation() const noexcept { return allocation_; }
  /// "MapPerInference (kind)", for logs (policy protocol, docs/api.md).
  std::string describe() const { return std::string(name) + " (" + allocation_.name() + ")"; }

 private:
  detail::QueueContext q_;
  detail::BufferStorage storage_;
  Intent intent_;
  Allocation allocation_;
  void* ptr_ = nullptr;
  EventList pending_;   // what the next command on the tensor waits for
  EventList unmapped_;  // our last unmap, waited for before release
  EventList mapping_;   // the map of the view being opened (polled or waited for), while it opens
  bool unmap_unrecorded_ = false;       // the last unmap has no event (in-order queue)
  bool unmapped_since_access_ = false;  // a view's unmap without an event since the last to_device
  bool unrecorded_ = false;             // the last to_device's waits lack that unmap
  bool producers_unrecorded_ = false;   // the last access handed back no events
};

}  // namespace policy
}  // namespace clzero
