// SPDX-License-Identifier: Apache-2.0
// What the policies share for a host side made when the view opens (a
// blocking map at the view, detail/wait_method.hpp), and how TensorCore asks
// a policy whether its host side is waiting for the view.
#pragma once

#include <CL/cl.h>

#include <string>

#include "clzero/detail/queue_context.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"

namespace clzero {
namespace detail {

/// Whether `events` are all commands of the tensor's queue and that queue is
/// in order: then a command enqueued there now runs after them with no wait
/// list. One clGetEventInfo per event.
inline bool ordered_by_queue(const EventList& events, const QueueContext& q, const char* who) {
  if (q.out_of_order) return false;
  for (cl_event e : events) {
    cl_command_queue owner = nullptr;
    check(clGetEventInfo(e, CL_EVENT_COMMAND_QUEUE, sizeof owner, &owner, nullptr), "clGetEventInfo", who,
          "finding the queue of a command that used the tensor");
    if (owner != q.q()) return false;
  }
  return true;
}

/// After a command that the queue ordered behind `events` has completed
/// (so have they): what a wait list holding them would have reported
/// (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if one ended in error, else
/// CL_SUCCESS); empties the list. Status queries only.
inline CLZERO_DETAIL_RARE cl_int take_failure_of_some(EventList& events) noexcept {
  cl_int failed = CL_SUCCESS;
  for (cl_event e : events) {
    cl_int status = CL_COMPLETE;
    if (event_status(e, status) && status < 0) failed = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  }
  events.clear();
  return failed;
}
/// take_failure_of_some() for any list; an empty one (the steady state) answers inline.
CLZERO_DETAIL_HOT cl_int take_failure(EventList& events) noexcept {
  return events.empty() ? CL_SUCCESS : take_failure_of_some(events);
}

/// Makes `events` complete before a command with no wait list is enqueued on
/// the tensor's queue, unless the queue's order does it: the host waits for
/// them (after a marker standing for everything enqueued so far, on an
/// out-of-order queue with nothing recorded). Returns whether the queue
/// orders them, in which case they are left to take_failure.
inline CLZERO_DETAIL_RARE bool complete_or_ordered_asked(EventList& events, const QueueContext& q, const char* who,
                                                         const char* step) {
  if (ordered_by_queue(events, q, who)) return true;
  if (events.empty() && q.out_of_order) {
    cl_event marker = nullptr;
    check(clEnqueueMarkerWithWaitList(q.q(), 0, nullptr, &marker), "clEnqueueMarkerWithWaitList", who,
          "ordering the host's side after the tensor's last commands");
    events.adopt(marker);
  }
  check(clFlush(q.q()), "clFlush", who, "submitting the commands the host waits for");
  // As wait_for, and the statuses read once the wait succeeded: these are
  // events of other queues, user events among them, and NVIDIA's driver 580
  // answers clWaitForEvents with CL_SUCCESS for a user event set to an
  // error (tests/from_docs). Off the usual path: one query per event.
  cl_int rc = await(events, q.host_wait);
  if (rc == CL_SUCCESS)
    rc = take_failure(events);
  else if (all_finished(events))
    events.clear();
  check(rc, "clWaitForEvents", who, step);
  return false;
}
/// complete_or_ordered_asked(); nothing recorded on an in-order queue (the
/// steady state) is ordered by the queue, answered inline.
CLZERO_DETAIL_HOT bool complete_or_ordered(EventList& events, const QueueContext& q, const char* who,
                                           const char* step) {
  return (!q.out_of_order && events.empty()) || complete_or_ordered_asked(events, q, who, step);
}

/// For release paths, never throws: waits for everything enqueued so far on
/// the tensor's queue (a marker, else a barrier, then its event), which on
/// an in-order queue includes an unmap clzero enqueued without an event.
/// Returns whether it could. Every failure goes to the cleanup handler, the
/// marker's too when a barrier stands in for it.
inline bool wait_for_queue_noexcept(const QueueContext& q, const char* doing) noexcept {
  cl_event marker = nullptr;
  cl_int rc = clEnqueueMarkerWithWaitList(q.q(), 0, nullptr, &marker);
  if (rc != CL_SUCCESS) {
    report_cleanup(
        Error(std::string(doing) + " (a barrier stands in for the marker)", "clEnqueueMarkerWithWaitList", rc));
    rc = clEnqueueBarrierWithWaitList(q.q(), 0, nullptr, &marker);
    if (rc != CL_SUCCESS) {
      report_cleanup(Error(doing, "clEnqueueBarrierWithWaitList", rc));
      return false;
    }
  }
  EventList m;
  return call_noexcept([&] { m.adopt(marker); }, doing) && wait_for_noexcept(m, q.q(), doing);
}

/// Policy query, optional: whether nothing makes the data visible yet, the
/// next view making it (a map, blocking or submitted by the view itself).
/// TensorCore then flushes neither at the end of the access nor at the view.
template <class P>
auto host_side_deferred(const P& policy, int) -> decltype(policy.host_side_deferred()) {
  return policy.host_side_deferred();
}
template <class P>
bool host_side_deferred(const P& /*policy*/, long) {
  return false;
}

/// Policy query, optional: whether the last to_device enqueued a command on
/// the tensor's in-order queue without putting its event in the waits (the
/// queue orders the kernels after it). TensorCore enqueues a marker in its
/// place if the waits are handed out for another queue.
template <class P>
auto device_side_unrecorded(const P& policy, int) -> decltype(policy.device_side_unrecorded()) {
  return policy.device_side_unrecorded();
}
template <class P>
bool device_side_unrecorded(const P& /*policy*/, long) {
  return false;
}

/// Policy step, optional: start the deferred host side without blocking
/// (for host_ready(), which only polls).
template <class P>
auto start_host(P& policy, int) -> decltype(policy.start_host()) {
  policy.start_host();
}
template <class P>
void start_host(P& /*policy*/, long) {}

}  // namespace detail
}  // namespace clzero
