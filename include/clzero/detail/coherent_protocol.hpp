// SPDX-License-Identifier: Apache-2.0
// Coherent: the protocol for memory that host and device share coherently —
// fine-grained buffer SVM and Intel USM host allocations. No map at all:
// what the device wrote is visible to the host once the commands that wrote
// it have completed, and what the host wrote is visible to commands enqueued
// after it (OpenCL 3.0 section 3.3.6, memory consistency for SVM).
//
//   allocate   the storage, zeroed by the host (no command uses it yet).
//   to device  nothing: the pointer is the kernel argument.
//   to host    remember the events that used the tensor.
//   host view  wait for those events only; they are released at the next
//              device access, not as the wait sees them complete.
//   release    wait for those events, then free.
#pragma once

#include <CL/cl.h>

#include <utility>

#include "clzero/detail/queue_context.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/intent.hpp"

namespace clzero {
namespace detail {

template <class Storage>
class Coherent {
 public:
  template <class... StorageArgs>
  Coherent(const QueueContext& q, const char* who, StorageArgs&&... storage_args)
      : q_(q), storage_(q, std::forward<StorageArgs>(storage_args)...), who_(who) {
    storage_.host_zero();
  }
  Coherent(const Coherent&) = delete;
  Coherent& operator=(const Coherent&) = delete;
  ~Coherent() { wait_for_noexcept(in_flight_, q_.q(), "waiting for the kernels that use a tensor being released"); }

  /// Nothing to unmap; the kernels wait for the previous access's commands
  /// (its kernels, or the marker that stands for them), which on an
  /// out-of-order queue nothing else orders them after.
  void to_device(Access /*access*/, bool /*host_wrote*/, EventList& waits) {
    waits.append(in_flight_);
    seen_.clear();
  }

  void to_host(Access /*access*/, EventList& used_by) {
    in_flight_.clear();
    in_flight_.swap(used_by);
  }

  void* host_pointer(bool /*overwrite_all*/) {
    wait_for(in_flight_, q_.host_wait, who_, seen_);
    return storage_.svm_pointer();
  }

  bool end_host(bool /*host_wrote*/) noexcept { return true; }
  /// The events are the only thing a host view waits on.
  bool needs_events() const noexcept { return true; }
  void keep_memory() noexcept { storage_.keep_memory(); }
  bool host_ready() const { return in_flight_.complete(); }

  void bind(cl_kernel kernel, cl_uint index, std::size_t offset, const char* doing = nullptr) const {
    storage_.bind(kernel, index, offset, doing != nullptr ? doing : who_);
  }
  cl_mem buffer() const noexcept { return nullptr; }
  void* svm_pointer() const noexcept { return storage_.svm_pointer(); }

 private:
  QueueContext q_;
  Storage storage_;
  const char* who_;
  EventList in_flight_;  // the commands of the last device access
  EventList seen_;       // in_flight_ once a view saw them complete, until the next access
};

}  // namespace detail
}  // namespace clzero
