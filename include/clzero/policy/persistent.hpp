// SPDX-License-Identifier: Apache-2.0
// policy::Persistent: mapped at rest. The host reads and writes the tensor
// whenever it owns it, as if the buffer had been mapped once; clzero unmaps
// just before device access and re-maps right after, ordered by events.
//
// The protocol, in the order it runs:
//   allocate   one cl_mem (an Allocation kind), zeroed, mapped (non-blocking).
//   to device  unmap (non-blocking); the kernel waits on the unmap's event.
//              A read mapping may stay while kernels only read (spec allows).
//   to host    map again (non-blocking), waiting on the events that used the
//              tensor; the map's pointer replaces the old one.
//   host view  wait for the map's event only (never the whole queue).
//   release    unmap, wait for the unmap, then free.
//
// Where the device's measured host wait is a map at the view
// (detail/wait_method.hpp), and always for memory whose non-blocking map
// completes early (NVIDIA's host-located buffers, below), "to host" enqueues
// nothing and the view maps with a blocking clEnqueueMapBuffer: one call,
// fresh there, where the non-blocking map must be followed by waits on both
// the producer's events and the map's (the fastest legal sequence at 4 B to
// 256 KiB on the H200, docs/benchmarks.md). host_ready() (which must not
// block) enqueues the non-blocking map instead, as does every slot of a
// TensorRing.
//
// Inputs (Intent::input) are the exception: they are mapped only when the
// host opens a write view, not at rest. An input the engine hands to the
// device again without writing it keeps its contents (engines reuse constant
// inputs), which a map at rest could not promise: its map would either copy
// the contents in for nothing on every inference (CL_MAP_WRITE) or leave them
// undefined (CL_MAP_WRITE_INVALIDATE_REGION), and the unmap writes back what
// the mapping holds. A view of the whole input invalidates (the host
// overwrites every element); a view of a region (a TensorArena part) maps
// with CL_MAP_WRITE, which keeps the other parts.
//
// Spec rules kept (OpenCL 3.0 section 5.5.4, clEnqueueMapBuffer): a region
// mapped for writing is unmapped before any command that reads or writes the
// object starts; mapped for reading, before any command that writes it. The
// pointer of a map is used only after the map's event completes and only
// until the unmap. A new map may return a new pointer (only USE_HOST_PTR is
// stable), so the pointer of the current mapping is the one used and unmapped.
#pragma once

#include <CL/cl.h>

#include <string>
#include <utility>

#include "clzero/allocation.hpp"
#include "clzero/detail/buffer_storage.hpp"
#include "clzero/detail/host_side.hpp"
#include "clzero/detail/queue_context.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/intent.hpp"

namespace clzero {
namespace detail {

/// Driver workaround. NVIDIA H200, NVIDIA OpenCL 3.0 driver 580.159.04: on a
/// host-located buffer (cl_nv_create_buffer, with or without
/// CL_MEM_PINNED_NV) a non-blocking clEnqueueMapBuffer whose wait list holds
/// the producing kernel's event reports CL_COMPLETE before the kernel's
/// writes are in host memory: 60 of 60 iterations showed stale or zero
/// elements, 0 of 60 once the host also waited for the kernel's event, 0 of
/// 60 with a blocking map (tools/device/nv_quirks.cpp, docs/drivers.md).
/// ALLOC_HOST_PTR and USE_HOST_PTR buffers on the same driver are not
/// affected. Every policy that maps such memory maps it blocking at the view,
/// or waits for the producers too.
inline bool map_completes_early(const Allocation& a) noexcept { return a.kind() == Allocation::Kind::nv_host_pinned; }

/// The host's map flags for an intent. For inputs,
/// CL_MAP_WRITE_INVALIDATE_REGION only when the host overwrites the whole
/// tensor (`overwrite_all`: a write view of all of it), so the driver need
/// not copy the old contents in (OpenCL 1.2+); otherwise CL_MAP_WRITE, which
/// keeps what the view does not cover (the other parts of a TensorArena),
/// because the unmap writes back the whole mapped region.
constexpr cl_map_flags host_map_flags(Intent intent, bool overwrite_all = true) noexcept {
  return intent == Intent::output  ? CL_MAP_READ
         : intent == Intent::input ? (overwrite_all ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_WRITE)
                                   : (CL_MAP_READ | CL_MAP_WRITE);
}

/// Waits for events in a destructor or a failure path, so that memory is never
/// freed under a command that still uses it.
inline void wait_quietly(const EventList& events, const QueueContext& q, const char* doing) noexcept {
  wait_for_noexcept(events, q.q(), doing);
}

/// Unmaps the pointer of a map whose command ended in error, once that
/// command is over. The spec's unmap takes any pointer a map call returned
/// (OpenCL 3.0, clEnqueueUnmapMemObject's mapped_ptr), and PoCL 3.1 counts
/// such a map in CL_MEM_MAP_COUNT and keeps the buffer, and through it the
/// queue, alive until it is unmapped. No wait list: the unmap must not wait
/// on the failed map, since a command that waits on a failed event fails
/// too (PoCL 3.1). An implementation that mapped nothing may refuse the
/// pointer; nothing is left to undo then, and no error is reported.
template <class Storage>
void unmap_failed_map(Storage& storage, const QueueContext& q, void* ptr, const char* who) noexcept {
  cl_event unmapped = nullptr;
  if (ptr == nullptr || storage.unmap(q.q(), ptr, EventList{}, &unmapped) != CL_SUCCESS) return;
  EventList done;
  if (call_noexcept([&] { done.adopt(unmapped); }, who))
    wait_quietly(done, q, "waiting for the unmap of a map that ended in error");
}

/// The mapped-at-rest protocol over any storage with map/unmap steps
/// (BufferStorage for Persistent, SvmStorage for coarse-grained Svm).
template <class Storage>
class MappedAtRest {
 public:
  /// `wait_for_producers`: a host view also waits for the events that used
  /// the tensor, not only for the map ordered after them. The spec makes the
  /// map's completion enough; some drivers complete the map early (see
  /// policy::Persistent's NVIDIA workaround).
  template <class... StorageArgs>
  MappedAtRest(const QueueContext& q, Intent intent, const char* who, bool wait_for_producers,
               StorageArgs&&... storage_args)
      : q_(q),
        storage_(q, std::forward<StorageArgs>(storage_args)...),
        flags_(host_map_flags(intent)),
        who_(who),
        wait_for_producers_(wait_for_producers),
        on_write_view_(intent == Intent::input),
        map_at_view_(!q.in_ring && (Storage::maps_at_view(q) || wait_for_producers)) {
    EventList filled;
    if (host_reads(intent)) {
      cl_event fill = nullptr;
      storage_.fill_zero(q_.q(), &fill, who_);
      filled.adopt(fill);
    }
    struct WaitIfFailed {  // never free storage under the running fill
      const EventList& events;
      const QueueContext& q;
      bool armed = true;
      ~WaitIfFailed() {
        if (armed) wait_quietly(events, q, "waiting for the fill of a tensor whose construction failed");
      }
    } guard{filled, q_};
    // The zero fill is a producer like any kernel. It is over, and its zeros
    // are in host memory, before the tensor is handed out: the host waits for
    // it and maps, blocking, once, at construction. Ordered only by a
    // non-blocking map's event, the zeros arrived after the first writes that
    // followed on NVIDIA's driver 580 (H200): the host's (host-located
    // memory: the first inout iteration read 0 * 3 + 1) and those of a
    // kernel on another queue (under a loaded GPU, the first inference's
    // output read zeros from index 120952 of 262161 over host-located
    // memory, and from index 0 over coarse-grained SVM; tests/from_docs).
    if (!on_write_view_) {
      if (!filled.empty()) check(clFlush(q_.q()), "clFlush", who_, "submitting the zero fill of a new tensor");
      wait_for(filled, q_.host_wait, who_, "waiting for the zero fill of a new tensor");
      ptr_ = storage_.map(q_.q(), flags_, CL_TRUE, EventList{}, nullptr, who_);
      mapped_ = true;
    }
    guard.armed = false;
  }

  MappedAtRest(const MappedAtRest&) = delete;
  MappedAtRest& operator=(const MappedAtRest&) = delete;

  ~MappedAtRest() { release(); }

  /// To device: unmap unless the mapping is for reading and kernels only read.
  void to_device(Access access, bool /*host_wrote*/, EventList& waits) {
    unrecorded_ = false;
    if (!mapped_) {
      // Nothing mapped: an input the host has not written since the last
      // access (its contents stay), or the last map failed. The kernels
      // wait for the last access's commands, which on an out-of-order queue
      // nothing else orders them after.
      in_flight_.drop_finished();
      waits.append(in_flight_);
      return;
    }
    if (flags_ == CL_MAP_READ && access == Access::read) {
      waits.append(ready_);  // readers may overlap a read mapping, not precede it
      return;
    }
    // The kernels of earlier Access::read accesses read through the mapping
    // kept for them (in_flight_). This access's kernels may write, and they
    // wait only on the unmap: so the unmap waits for those readers too, or a
    // writer on an out-of-order queue (or readers on another queue) runs
    // before them and they read its data. Finished ones order nothing, and
    // one that ended in error must not fail the unmap: they are dropped.
    in_flight_.drop_finished();
    before_unmap_.clear();
    before_unmap_.append(ready_);
    before_unmap_.append(in_flight_);
    // On an in-order queue the kernels follow the unmap by the queue's
    // order, so an unmap that waits for nothing (the steady state: the view
    // waited for the map) gets no event, one fewer for the driver to make
    // and release every inference; the tensor stands a marker in for it if
    // the waits are handed out for another queue (device_side_unrecorded).
    // One that waits for commands gets its event, which ends in error if
    // one of them did: the view then reports it (TensorCore::check_handed).
    const bool record = q_.out_of_order || !before_unmap_.empty();
    cl_event unmapped = nullptr;
    check(storage_.unmap(q_.q(), ptr_, before_unmap_, record ? &unmapped : nullptr), Storage::unmap_api(), who_,
          "unmapping the tensor before device access");
    before_unmap_.clear();
    mapped_ = false;
    ptr_ = nullptr;
    ready_.clear();
    producers_.clear();  // the view was not opened: their data is overwritten now
    unrecorded_ = unmapped == nullptr;
    waits.adopt(unmapped);
  }

  /// Whether the last to_device's unmap has no event in the waits (policy protocol, docs/api.md).
  bool device_side_unrecorded() const noexcept { return unrecorded_; }

  /// To host: map again once the commands in `used_by` have completed.
  void to_host(Access /*access*/, EventList& used_by) {
    if (mapped_) {  // kept mapped through a read-only access: data unchanged
      // Readers pile up here until a write access or the release; the ones
      // that have finished order nothing any more, so an engine that only
      // reads holds as many events as it has readers running, not one per
      // access it ever made.
      in_flight_.drop_finished();
      in_flight_.append(used_by);
      return;
    }
    in_flight_.clear();
    if (on_write_view_ || map_at_view_) {  // mapped when the host opens a view, after these
      in_flight_.swap(used_by);
      return;
    }
    if (wait_for_producers_) in_flight_.append(used_by);
    map_async(used_by, flags_);
    keep_producers(used_by);
  }

  /// Nothing makes the data visible yet: the next view maps, blocking, and
  /// that one call submits the queue (TensorCore then flushes nothing).
  bool host_side_deferred() const noexcept { return !mapped_ && map_at_view_; }

  /// Starts making the data visible without blocking, for host_ready(): the
  /// non-blocking map a deferred view would have made (and, where the map
  /// completes early, a marker standing for the producers if none was
  /// recorded), submitted.
  void start_host() {
    if (mapped_ || !map_at_view_ || on_write_view_) return;
    EventList used;
    used.swap(in_flight_);
    if (wait_for_producers_) {
      if (used.empty()) {
        cl_event marker = nullptr;
        check(clEnqueueMarkerWithWaitList(q_.q(), 0, nullptr, &marker), "clEnqueueMarkerWithWaitList", who_,
              "ordering the map after the tensor's producers");
        used.adopt(marker);
      }
      in_flight_.append(used);
    }
    map_async(used, flags_);
    keep_producers(used);
    check(clFlush(q_.q()), "clFlush", who_, "submitting the map that makes the tensor visible to the host");
  }

  /// Blocks until the current mapping is usable; returns its pointer.
  /// `overwrite_all`: the view is a write view of the whole tensor.
  void* host_pointer(bool overwrite_all) {
    // An input's write view maps blocking where a non-blocking map for
    // writing completes before the kernels that still read the input
    // (QueueContext::write_maps_block, NVIDIA): the host's next input reached
    // the running kernel on the H200. map_blocking orders it after them.
    if (!mapped_ && (map_at_view_ || (on_write_view_ && q_.write_maps_block))) return map_blocking(overwrite_all);
    if (!mapped_) {
      // An input the host now writes (mapped after the commands of the last
      // access), or the last map ended in error, so nothing is mapped: map
      // now. The view then shows what the device last wrote. With no events
      // recorded on an out-of-order queue, a marker orders the map after
      // everything enqueued so far.
      // Finished commands order nothing; one that ended in error (the
      // engine's kernel, which learns it from its own event) must not fail
      // every later map of the tensor.
      in_flight_.drop_finished();
      EventList after;
      after.append(in_flight_);
      if (after.empty() && q_.out_of_order) {
        cl_event marker = nullptr;
        check(clEnqueueMarkerWithWaitList(q_.q(), 0, nullptr, &marker), "clEnqueueMarkerWithWaitList", who_,
              "ordering the map after the tensor's last commands");
        after.adopt(marker);
      }
      map_async(after, on_write_view_ ? host_map_flags(Intent::input, overwrite_all) : flags_);
      check(clFlush(q_.q()), "clFlush", who_, "submitting the map that makes the tensor visible to the host");
    }
    if (!ready_.empty()) {
      // The view submitted the queue (clFlush) already.
      constexpr const char* step = "waiting for the map that makes the tensor visible to the host";
      const cl_int rc = await(ready_, q_.host_wait);
      if (rc != CL_SUCCESS) {
        // Keep the map's event while it may still run; once it has finished,
        // the state follows what the map did, whatever the wait reported.
        if (!all_finished(ready_)) check(rc, "clWaitForEvents", who_, step);
        producers_.clear();  // the failure this wait reports is theirs or the map's: reported once
        cl_int status = CL_COMPLETE;
        check(clGetEventInfo(ready_[0], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr),
              "clGetEventInfo", who_, step);
        if (status != CL_COMPLETE) {  // the map ended in error: its pointer is unmapped, nothing stays mapped
          // Its event is kept until the tensor is released: PoCL 3.1 aborted
          // (pocl_lock_events_inorder, POclReleaseEvent) when the last
          // reference to it went while the queue's later commands or PoCL's
          // own threads still looked at it.
          unmap_failed_map(storage_, q_, ptr_, who_);
          failed_map_.swap(ready_);
          ready_.clear();
          mapped_ = false;
          ptr_ = nullptr;
          check(rc, "clWaitForEvents", who_, step);  // what the wait returned, not the map's status
        }
        ready_.clear();
        check(rc, "clWaitForEvents", who_, step);  // mapped after all: the next view opens
      }
      ready_.clear();
    }
    // The map completed, and the tensor stays mapped, at rest. A producer
    // that ended in error fails the view, as map_blocking's does, whatever
    // the map's own status says: NVIDIA's driver 580 completes a map whose
    // wait list holds a failed event with CL_COMPLETE, its data not the
    // producer's (tests/from_docs, contract.cpp; docs/drivers.md).
    check(take_failure(producers_), "clWaitForEvents", who_, "waiting for the commands that produced the tensor");
    if (wait_for_producers_)
      wait_for(in_flight_, q_.host_wait, who_, "waiting for the commands that produced the tensor");
    return ptr_;
  }

  /// View ended (policy protocol, docs/api.md): nothing to do, the tensor stays mapped.
  bool end_host(bool /*host_wrote*/) noexcept { return true; }

  /// Whether the host's side waits on the events of the device access
  /// itself, so that they must exist even on an in-order queue.
  /// A map at the view is fresh without them.
  bool needs_events() const noexcept { return wait_for_producers_ && !map_at_view_; }
  /// The release leaves memory that commands may still use allocated.
  void keep_memory() noexcept { storage_.keep_memory(); }

  /// Whether a host view would open without blocking.
  bool host_ready() const {
    if (!mapped_) return in_flight_.complete();  // the view's map waits for these only (start_host ran)
    return ready_.complete() && (!wait_for_producers_ || in_flight_.complete());
  }

  /// Sets the storage as a kernel argument (policy protocol, docs/api.md).
  void bind(cl_kernel kernel, cl_uint index, std::size_t offset, const char* doing = nullptr) const {
    storage_.bind(kernel, index, offset, doing != nullptr ? doing : who_);
  }
  /// The cl_mem, or null for SVM storage (policy protocol, docs/api.md).
  cl_mem buffer() const noexcept { return storage_.mem(); }
  /// The SVM pointer, or null for buffer storage (policy protocol, docs/api.md).
  void* svm_pointer() const noexcept { return storage_.svm_pointer(); }
  const Storage& storage() const noexcept { return storage_; }

 private:
  // The view's blocking map. The commands of this in-order queue come before
  // it by the queue's own order, so the map gets no wait list, and none is
  // better: PoCL 3.1 never returns from a blocking map whose wait list holds
  // an event that ended in error. Anything else (another queue's commands, an
  // out-of-order queue) the host waits for first. A producer that ended in
  // error fails the view, as the map waiting on it would have.
  void* map_blocking(bool overwrite_all) {
    constexpr const char* step = "waiting for the commands that produced the tensor";
    const bool ordered = complete_or_ordered(in_flight_, q_, who_, step);
    const cl_map_flags flags = on_write_view_ ? host_map_flags(Intent::input, overwrite_all) : flags_;
    ptr_ = storage_.map(q_.q(), flags, CL_TRUE, EventList{}, nullptr, who_);
    mapped_ = true;
    ready_.clear();
    if (ordered) check(take_failure(in_flight_), "clWaitForEvents", who_, step);  // stays mapped, at rest
    return ptr_;
  }

  // The events a non-blocking map for the host's view waits on, kept (no
  // OpenCL call: the list is taken over) so that the view reads their
  // statuses once the map has completed. Where the view also waits for the
  // producers (wait_for_producers_), in_flight_ holds them already.
  void keep_producers(EventList& used) noexcept {
    producers_.clear();
    if (!wait_for_producers_) producers_.swap(used);
  }

  void map_async(const EventList& after, cl_map_flags flags) {
    cl_event mapped = nullptr;
    void* p = storage_.map(q_.q(), flags, CL_FALSE, after, &mapped, who_);
    ptr_ = p;
    mapped_ = true;
    ready_.adopt(mapped);
  }

  void release() noexcept {
    if (mapped_) {
      // Let the last map finish (a failed wait still polls until it has),
      // then unmap it: a buffer must not be released while mapped (OpenCL
      // 3.0 section 5.5.4). A map that ended in error is unmapped without
      // waiting on it (unmap_failed_map).
      wait_quietly(ready_, q_, "waiting for the tensor's last map before releasing it");
      cl_int status = CL_COMPLETE;
      if (!ready_.empty() &&
          clGetEventInfo(ready_[0], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) != CL_SUCCESS)
        status = CL_COMPLETE;  // unknown: unmapping a live mapping is the safe side
      if (status == CL_COMPLETE) {
        cl_event unmapped = nullptr;
        const cl_int rc = storage_.unmap(q_.q(), ptr_, ready_, &unmapped);
        if (rc != CL_SUCCESS) {
          report_cleanup(
              Error(std::string(who_) + ": unmapping the tensor before releasing it", Storage::unmap_api(), rc));
        } else {
          EventList done;
          if (call_noexcept([&] { done.adopt(unmapped); }, "keeping the unmap of a tensor being released"))
            wait_quietly(done, q_, "waiting for the unmap of a tensor being released");
        }
      } else if (status < 0) {
        unmap_failed_map(storage_, q_, ptr_, who_);
      }
      mapped_ = false;
    } else if (unrecorded_) {
      // The last unmap was enqueued without an event (an in-order queue):
      // memory is not released before it has completed.
      wait_for_queue_noexcept(q_, "waiting for the unmap of a tensor being released");
    }
    if (Storage::needs_idle_before_free)
      wait_quietly(in_flight_, q_, "waiting for the kernels that use a tensor being released");
    ready_.clear();
    in_flight_.clear();
    producers_.clear();
    failed_map_.clear();
  }

  QueueContext q_;
  Storage storage_;
  cl_map_flags flags_;
  const char* who_;
  bool wait_for_producers_;
  bool on_write_view_;  // an input: mapped by the host's write view, not at rest (see the top of this file)
  bool map_at_view_;    // the view maps, blocking (measured wait, or a map that completes early); not in a ring
  void* ptr_ = nullptr;
  bool mapped_ = false;
  bool unrecorded_ = false;  // the last to_device unmapped without an event (in-order queue)
  EventList ready_;         // the current map's event, until it has been waited for
  EventList in_flight_;     // commands of the last access not yet waited for (see wait_for_producers),
                            // and the readers of a mapping kept through Access::read accesses
  EventList before_unmap_;  // what the next unmap waits for; kept to reuse its storage
  EventList failed_map_;    // the last map that ended in error, kept to the release (see host_pointer)
  EventList producers_;     // what the current non-blocking map waits on, until the view reads their statuses
};

}  // namespace detail

namespace policy {

/// Mapped at rest; unmapped only while the device has the tensor. The right
/// default wherever a map is cheap (CPUs, integrated GPUs) and, with
/// Allocation::nv_host_pinned, on NVIDIA discrete GPUs.
class Persistent : public detail::MappedAtRest<detail::BufferStorage> {
 public:
  /// Persistent's options, given to the tensor's constructor (policy protocol, docs/api.md).
  struct Options {
    /// Which cl_mem stands behind the tensor.
    Allocation allocation = Allocation::alloc_host_ptr();
  };
  /// The policy's name in messages (policy protocol, docs/api.md).
  static constexpr const char* name = "Persistent";

  /// The allocate step (policy protocol, docs/api.md): one cl_mem of the allocation's kind,
  /// zeroed where the host reads, mapped with a non-blocking clEnqueueMapBuffer.
  Persistent(const detail::QueueContext& q, std::size_t bytes, Intent intent, const Options& options)
      : MappedAtRest(q, intent, name, detail::map_completes_early(options.allocation), bytes, options.allocation,
                     "Persistent: allocating the tensor"),
        allocation_(options.allocation) {}

  /// The allocation in use.
  const Allocation& allocation() const noexcept { return allocation_; }
  /// "Persistent (kind)", for logs (policy protocol, docs/api.md).
  std::string describe() const { return std::string(name) + " (" + allocation_.name() + ")"; }

 private:
  Allocation allocation_;
};

}  // namespace policy
}  // namespace clzero
