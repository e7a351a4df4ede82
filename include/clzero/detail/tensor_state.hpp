// SPDX-License-Identifier: Apache-2.0
// TensorState: what a HostView and a DeviceAccess need from the tensor they
// came from, without knowing its element type or policy. Views and accesses
// hold it by shared_ptr, so they stay valid even if the MappedTensor is moved
// or destroyed first (the last owner releases the allocation).
#pragma once

#include <CL/cl.h>

#include <cstddef>

#include "clzero/events.hpp"
#include "clzero/intent.hpp"

namespace clzero {
namespace detail {

class TensorState {
 public:
  /// A host view ended; `wrote` if it was a write view.
  virtual void end_view(bool wrote) noexcept = 0;
  /// The device access ended: hand the tensor back to the host, after `used_by`.
  virtual void end_device_access(Access access) = 0;
  /// Sets the tensor as a kernel argument; `doing` names the public call in errors.
  virtual void bind(cl_kernel kernel, cl_uint index, std::size_t byte_offset, const char* doing) = 0;
  virtual cl_mem buffer() const noexcept = 0;
  virtual void* svm_pointer() const noexcept = 0;
  virtual const char* policy_name() const noexcept = 0;
  /// The context the tensor's memory and queue belong to.
  virtual cl_context context() const noexcept = 0;
  /// Submits the tensor's queue (once per access) before the access's events
  /// are handed out: a kernel on another queue that waits on a command no
  /// flush submitted may wait for ever (OpenCL 3.0 section 5.13).
  virtual void submit_waits() = 0;
  /// Whether commands enqueued on `queue` now run after the access's waits
  /// with no wait list: `queue` is the tensor's own in-order queue.
  virtual bool orders(cl_command_queue queue) const noexcept = 0;
  /// Whether the host's side needs the event of a command enqueued on
  /// `queue` in this access: always for another queue or an out-of-order one
  /// (nothing else orders the host after it), and on the tensor's own
  /// in-order queue only for policies that wait on the events themselves.
  virtual bool needs_event(cl_command_queue queue) const noexcept = 0;

  /// Reused every inference so that the steady state allocates nothing.
  EventList waits;    // what the kernel of the open device access waits on
  EventList used_by;  // the commands that used the tensor in that access
  /// Whether used_by may hold an event of another queue than the tensor's
  /// own (handed in through used_by(), event_slot(), or event_slot(queue)
  /// for any queue but the tensor's own in-order one). On an in-order queue,
  /// only then does ending the access ask each event for its queue, to
  /// submit that queue; on an out-of-order queue it always asks.
  bool used_by_elsewhere = false;

 protected:
  TensorState() = default;
  ~TensorState() = default;
};

}  // namespace detail
}  // namespace clzero
