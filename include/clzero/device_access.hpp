// SPDX-License-Identifier: Apache-2.0
// DeviceAccess: one scoped hand-over of a tensor to the device. Making it has
// the policy make the tensor legal for kernels (unmap, upload, or nothing);
// ending it has the policy start making the result visible to the host.
#pragma once

#include <CL/cl.h>

#include <memory>
#include <utility>

#include "clzero/detail/tensor_state.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/intent.hpp"

namespace clzero {

/// While a DeviceAccess is open, kernels may use the tensor and no host view
/// can be made. Typical use, on the engine's own queue:
///
///     auto dev = tensor.device_access();
///     dev.bind(kernel, 0);
///     clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &n, nullptr,
///                            dev.wait_count(queue), dev.wait_list(queue), dev.event_slot(queue));
///     dev.end();  // or let it go out of scope
///
/// On the tensor's own in-order queue the events are optional (the queue
/// orders the kernels; wait_list(queue) is then empty, and event_slot(queue)
/// null unless the policy waits on the kernels' events); on an out-of-order
/// queue (or when the kernels run on another queue) they are what orders the
/// kernels after the unmap and the host's map after the kernels.
class DeviceAccess {
 public:
  /// An ended access, holding no tensor (open() is false): for a member or
  /// a container slot that a real access is moved into later.
  DeviceAccess() noexcept = default;
  /// Not copyable: one access hands the tensor over once, and ends once.
  DeviceAccess(const DeviceAccess&) = delete;
  /// Not copyable, as above.
  DeviceAccess& operator=(const DeviceAccess&) = delete;
  /// Moves the open access; `other` is left ended (open() is false).
  DeviceAccess(DeviceAccess&& other) noexcept
      : state_(std::move(other.state_)),
        access_(other.access_),
        slot_(std::exchange(other.slot_, nullptr)),
        own_queue_(other.own_queue_),
        own_queue_orders_(other.own_queue_orders_),
        own_queue_needs_event_(other.own_queue_needs_event_) {}
  /// Ends this access first if it is open (as the destructor does: a failure
  /// goes to the cleanup handler and leaves that tensor unusable, never a
  /// throw), then takes over `other`, which is left ended. Lets engines keep
  /// accesses in members and containers.
  DeviceAccess& operator=(DeviceAccess&& other) noexcept {
    if (this != &other) {
      if (state_) detail::call_noexcept([&] { end(); }, "DeviceAccess::operator=: ending the replaced access");
      state_ = std::move(other.state_);
      access_ = other.access_;
      slot_ = std::exchange(other.slot_, nullptr);
      own_queue_ = other.own_queue_;
      own_queue_orders_ = other.own_queue_orders_;
      own_queue_needs_event_ = other.own_queue_needs_event_;
    }
    return *this;
  }

  /// Ends the access if end() was not called; a failure goes to the cleanup
  /// handler (destructors never throw). A failed step of the hand-over leaves
  /// the tensor unusable; a failed flush after it does not (the view submits).
  ~DeviceAccess() {
    if (state_) detail::call_noexcept([&] { end(); }, "DeviceAccess::~DeviceAccess: ending the access");
  }

  /// Sets the tensor as argument `index` of `kernel`: clSetKernelArg with the
  /// cl_mem, clSetKernelArgSVMPointer for SVM, clSetKernelArgMemPointerINTEL
  /// for USM. Works for every policy. A non-zero `byte_offset` binds a part
  /// of a pointer-backed (SVM, USM) tensor; buffers bind whole.
  void bind(cl_kernel kernel, cl_uint index, std::size_t byte_offset = 0) const {
    state("DeviceAccess::bind")->bind(kernel, index, byte_offset, "DeviceAccess::bind");
  }

  /// The cl_mem to pass to kernels (buffer-backed policies), or null for SVM
  /// and USM policies, whose kernels take a pointer: use bind() for those.
  cl_mem buffer() const { return state("DeviceAccess::buffer")->buffer(); }

  /// The SVM / USM pointer to pass to kernels, or null for buffer policies.
  void* svm_pointer() const { return state("DeviceAccess::svm_pointer")->svm_pointer(); }

  /// The events the kernels must wait on before touching the tensor (the
  /// unmap or upload clzero enqueued). Pass them as the enqueue's wait list.
  /// Handing them out submits the tensor's queue (clFlush, once per access),
  /// since the kernels may run on another queue (OpenCL 3.0 section 5.13).
  /// On an in-order queue clzero's unmap is enqueued without an event; a
  /// marker, enqueued on the tensor's queue the first time the list is
  /// handed out, stands for it (it completes after the unmap).
  cl_uint wait_count() const { return submitted("DeviceAccess::wait_count")->waits.count(); }
  /// The wait list for wait_count(); null when there is nothing to wait for, as the
  /// clEnqueue* calls require (CL_INVALID_EVENT_WAIT_LIST otherwise).
  const cl_event* wait_list() const { return submitted("DeviceAccess::wait_list")->waits.data(); }
  /// The same events as an EventList, e.g. to merge into the engine's own list.
  const EventList& waits() const { return submitted("DeviceAccess::waits")->waits; }

  /// wait_count() for kernels enqueued on `queue`: 0 when `queue` is the
  /// tensor's own in-order queue, which runs them after clzero's commands by
  /// itself (no events, no flush: the fastest legal sequence); otherwise
  /// wait_count().
  CLZERO_DETAIL_HOT cl_uint wait_count(cl_command_queue queue) const {
    return on_own_queue(queue) ? 0 : wait_count_asked(queue);
  }
  /// The wait list for wait_count(queue): null for the tensor's own in-order queue.
  CLZERO_DETAIL_HOT const cl_event* wait_list(cl_command_queue queue) const {
    return on_own_queue(queue) ? nullptr : wait_list_asked(queue);
  }

  /// For libraries whose calls take no wait list (CLBlast, clBLAS): enqueues
  /// on `queue` a barrier that waits for this access's events, so what is
  /// enqueued after it on that queue starts only once the tensor is legal for
  /// kernels (clEnqueueBarrierWithWaitList, OpenCL 1.2). Nothing to do when
  /// there are no events to wait for, or `queue` is the tensor's own
  /// in-order queue.
  void enqueue_barrier(cl_command_queue queue) const {
    detail::TensorState* s = state("DeviceAccess::enqueue_barrier");
    if (s->orders(queue)) return;
    s->submit_waits();
    const EventList& w = s->waits;
    if (w.empty()) return;
    detail::check(clEnqueueBarrierWithWaitList(queue, w.count(), w.data(), nullptr), "clEnqueueBarrierWithWaitList",
                  "DeviceAccess::enqueue_barrier");
  }

  /// Records a command that used the tensor in this access: the host's view
  /// waits for it. clzero retains its own reference; the caller keeps theirs.
  /// The event must belong to the tensor's context (clGetEventInfo,
  /// CL_EVENT_CONTEXT): the commands clzero enqueues after it wait on it, and
  /// a wait list of another context's events fails them (CL_INVALID_CONTEXT),
  /// so one is refused here, where it is handed in, not when the access ends.
  void used_by(cl_event event) {
    constexpr const char* doing = "DeviceAccess::used_by";
    if (event == nullptr)
      detail::raise_invalid(doing, "the event is null; pass the event of the kernel that used the tensor");
    detail::TensorState* s = state(doing);
    cl_context context = nullptr;
    detail::check(clGetEventInfo(event, CL_EVENT_CONTEXT, sizeof context, &context, nullptr), "clGetEventInfo", doing,
                  "finding the event's context");
    if (context != s->context())
      detail::raise_invalid(doing,
                            "the event belongs to another context than the tensor's; pass the event of a command "
                            "enqueued on a queue of the tensor's context");
    s->used_by.retain(event, doing);
    s->used_by_elsewhere = true;
  }

  /// An event slot to pass as the `event` argument of an enqueue call: clzero
  /// takes over the event written there and waits for it like used_by().
  /// Each call gives a fresh slot; the previous one is collected first.
  cl_event* event_slot() {
    detail::TensorState* s = state("DeviceAccess::event_slot");
    collect_slot(s);
    s->used_by_elsewhere = true;  // any queue may fill it
    return &slot_;
  }

  /// event_slot() for a command enqueued on `queue`, or null where clzero
  /// needs no event from it: `queue` is the tensor's own in-order queue,
  /// which orders the host's side after the command by itself, and the
  /// policy does not wait on events (every one but fine-grained Svm,
  /// UnifiedHost, and Persistent over NVIDIA's host-located memory in a
  /// TensorRing). A null event argument is legal in every clEnqueue* call,
  /// and an event never made costs the driver nothing (the README's form).
  CLZERO_DETAIL_HOT cl_event* event_slot(cl_command_queue queue) {
    return on_own_queue(queue) && !own_queue_needs_event_ ? nullptr : event_slot_asked(queue);
  }

  /// Gives the tensor back to the host: the policy enqueues what makes the
  /// data host-visible after the recorded events (with none recorded, after
  /// everything enqueued so far on the tensor's queue). Idempotent.
  void end() {
    if (!state_) return;
    detail::TensorState* s = state_.get();
    collect_slot(s);
    auto keep = std::move(state_);
    s->end_device_access(access_);
  }

  /// What the kernels of this access were declared to do.
  Access access() const noexcept { return access_; }
  /// Whether the access is still open: not ended and not moved from.
  bool open() const noexcept { return static_cast<bool>(state_); }

  /// The form that knows nothing of the tensor's queue: every call asks the
  /// tensor (and every event handed in counts as from elsewhere). Kept for
  /// code that made accesses this way; MappedTensor uses the one below.
  DeviceAccess(std::shared_ptr<detail::TensorState> state, Access access) noexcept
      : state_(std::move(state)), access_(access) {}
  /// Made by MappedTensor only: as above, told once what the tensor would
  /// answer for its own queue, so that the calls an inference makes for
  /// that queue (wait_count, wait_list, event_slot) answer inline. `own`
  /// is the tensor's queue, `orders` whether it is in order, `needs_event`
  /// whether the policy waits on the events of this access's kernels.
  DeviceAccess(std::shared_ptr<detail::TensorState> state, Access access, cl_command_queue own, bool orders,
               bool needs_event) noexcept
      : state_(std::move(state)),
        access_(access),
        own_queue_(own),
        own_queue_orders_(orders),
        own_queue_needs_event_(needs_event) {}

 private:
  detail::TensorState* state(const char* what) const {
    if (!state_)
      detail::raise_misuse(what, "this DeviceAccess has ended; start a new one with MappedTensor::device_access()");
    return state_.get();
  }
  detail::TensorState* submitted(const char* what) const {
    detail::TensorState* s = state(what);
    s->submit_waits();
    return s;
  }

  void collect_slot(detail::TensorState* s) {
    if (slot_ != nullptr) s->used_by.adopt(std::exchange(slot_, nullptr));
  }

  // The answers of wait_count(queue), wait_list(queue) and event_slot(queue)
  // from the tensor itself, for any queue: out of line, apart from the
  // inline test for the tensor's own queue.
  CLZERO_DETAIL_RARE cl_uint wait_count_asked(cl_command_queue queue) const {
    detail::TensorState* s = state("DeviceAccess::wait_count");
    return s->orders(queue) ? 0 : submitted("DeviceAccess::wait_count")->waits.count();
  }
  CLZERO_DETAIL_RARE const cl_event* wait_list_asked(cl_command_queue queue) const {
    detail::TensorState* s = state("DeviceAccess::wait_list");
    return s->orders(queue) ? nullptr : submitted("DeviceAccess::wait_list")->waits.data();
  }
  CLZERO_DETAIL_RARE cl_event* event_slot_asked(cl_command_queue queue) {
    detail::TensorState* s = state("DeviceAccess::event_slot");
    if (!s->needs_event(queue)) return nullptr;
    collect_slot(s);
    if (!on_own_queue(queue)) s->used_by_elsewhere = true;
    return &slot_;
  }

  // Whether `queue` is the tensor's own in-order queue, from what the tensor
  // said when the access began: the one test the usual inference needs,
  // made here without a call. False for an ended access, whose calls then
  // report the misuse.
  bool on_own_queue(cl_command_queue queue) const noexcept {
    return own_queue_orders_ && queue == own_queue_ && state_;
  }

  std::shared_ptr<detail::TensorState> state_;
  Access access_ = Access::read_write;
  cl_event slot_ = nullptr;
  cl_command_queue own_queue_ = nullptr;
  bool own_queue_orders_ = false;  // false: every call asks the tensor
  bool own_queue_needs_event_ = true;
};

}  // namespace clzero
