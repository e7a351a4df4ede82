// SPDX-License-Identifier: Apache-2.0
// MappedTensor<T, Policy>: one allocation made at construction, owned by the
// host or by the device, moved between the two only through the policy.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "clzero/detail/abi.hpp"
#include "clzero/detail/host_side.hpp"
#include "clzero/detail/queue_context.hpp"
#include "clzero/detail/tensor_state.hpp"
#include "clzero/device_access.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/host_view.hpp"
#include "clzero/intent.hpp"
#include "clzero/shape.hpp"

namespace clzero {
namespace policy {
CLZERO_DETAIL_CL_BEGIN
class Auto;  // the default policy: include clzero/policy/auto.hpp (or clzero/clzero.hpp)
CLZERO_DETAIL_CL_END
}  // namespace policy

namespace detail {

/// The policy's host view step: host_pointer(bool overwrite_all), or the
/// older host_pointer() of a policy written before that argument existed.
template <class P>
auto host_pointer_of(P& policy, bool overwrite_all, int) -> decltype(policy.host_pointer(overwrite_all)) {
  return policy.host_pointer(overwrite_all);
}
template <class P>
void* host_pointer_of(P& policy, bool /*overwrite_all*/, long) {
  return policy.host_pointer();
}

/// The policy's bind step, told the user's call to name in its errors
/// (clzero's policies), or without it (a policy written before that
/// argument existed).
template <class P>
auto bind_of(const P& policy, cl_kernel kernel, cl_uint index, std::size_t offset, const char* doing, int)
    -> decltype(policy.bind(kernel, index, offset, doing)) {
  policy.bind(kernel, index, offset, doing);
}
template <class P>
void bind_of(const P& policy, cl_kernel kernel, cl_uint index, std::size_t offset, const char* /*doing*/, long) {
  policy.bind(kernel, index, offset);
}

/// The state machine every policy runs under. It checks ownership (host views
/// and device access exclude each other), orders the policy's steps with
/// events, and marks itself unusable when a step fails half-way.
template <class Policy>
class TensorCore final : public TensorState {
 public:
  TensorCore(QueueContext q, const Shape& shape, std::size_t bytes, Intent intent,
             const typename Policy::Options& options)
      : q_(std::move(q)), shape_(shape), bytes_(bytes), intent_(intent), policy_(q_, bytes, intent, options) {}

  // The policy unmaps, waits for its own events and frees. Events still held
  // here belong to a device access whose end failed: wait for them first,
  // so no command is left using memory that is about to go.
  ~TensorCore() {
    wait_for_noexcept(used_by, q_.q(), "waiting for the commands of a device access whose end failed");
    wait_for_noexcept(handed_, q_.q(), "waiting for the commands clzero enqueued before the last kernels");
    if (unordered_) wait_for_unknown_kernels();
  }

  // `doing`: the call the user made, which every error names.
  DeviceAccess begin_device_access(std::shared_ptr<TensorState> self, Access access, const char* doing) {
    usable(doing);
    if (device_open_)
      raise_misuse(doing, "a device access is already open; end it (DeviceAccess::end or its scope) first");
    if (views_ > 0)
      raise_misuse(doing, std::to_string(views_) +
                              " host view(s) still alive; a kernel must not touch a mapped tensor (OpenCL 3.0 "
                              "section 5.5.4): end every HostView before handing the tensor to the device");
    waits.clear();
    used_by.clear();
    used_by_elsewhere = false;
    policy_.to_device(access, host_wrote_, waits);  // nothing below can fail: the tensor is the device's now
    // Kernels of the last access that handed back no event ran on this
    // in-order queue, and nothing in `waits` stands for them: a kernel on
    // another queue is ordered after them only by a marker here, as after an
    // unmap without an event (submit_waits).
    unrecorded_ = device_side_unrecorded(policy_, 0) || kernels_unrecorded_;
    // This in-order queue orders the kernels after `waits` by itself only
    // if every event in them is its own: an event of another queue (the
    // last access's kernels ran there) must be in the kernels' wait list.
    own_queue_orders_ = !q_.out_of_order && !(foreign_events_seen_ && holds_foreign_event(waits));
    host_wrote_ = false;
    device_open_ = true;
    // The kernels may run on another queue and wait on what clzero just
    // enqueued here (an unmap, an upload): a wait on an event of a queue that
    // was never flushed may never end (OpenCL 3.0 section 5.13). So the
    // queue is flushed as soon as the events are handed out for anything but
    // this in-order queue (submit_waits), not here: kernels on this queue
    // need no flush, which would cost a submission every inference, and the
    // end of the access or the view submits them.
    waits_submitted_ = waits.empty() && !unrecorded_;
    own_needs_event_ = policy_.needs_events();
    return DeviceAccess(std::move(self), access, q_.q(), own_queue_orders_, own_needs_event_);
  }

  // A command the policy enqueued without an event (an unmap on this
  // in-order queue), or the last access's kernels run here without handing
  // theirs back, get a marker in their place, which completes after them by
  // the queue's order: made only when the list is handed out, so kernels on
  // this queue never pay for an event.
  void submit_waits() override {
    if (waits_submitted_) return;
    constexpr const char* doing = "DeviceAccess: handing out the events the kernels wait on";
    if (unrecorded_) {
      cl_event marker = nullptr;
      check(clEnqueueMarkerWithWaitList(q_.q(), 0, nullptr, &marker), "clEnqueueMarkerWithWaitList", doing,
            "standing for the commands enqueued on the tensor's queue without an event");
      waits.adopt(marker);
      unrecorded_ = false;
    }
    check(clFlush(q_.q()), "clFlush", doing, "submitting the commands they name");
    waits_submitted_ = true;
  }

  bool orders(cl_command_queue queue) const noexcept override { return queue == q_.q() && own_queue_orders_; }
  bool needs_event(cl_command_queue queue) const noexcept override { return !orders(queue) || policy_.needs_events(); }

  void end_device_access(Access access) override {
    device_open_ = false;
    handed_.clear();
    handed_.swap(waits);  // kept (no retain needed) until the next view checks them
    // The view checks clzero's commands itself (check_handed), even with
    // events handed back: an event proves only that its own command waited.
    // Kernels on this in-order queue get an empty list, and a kernel ordered
    // after a failed one by a queue or a barrier still runs and completes.
    unordered_ = used_by.empty();  // until the host's side is ordered after the kernels
    bool enqueued = false;
    try_or_break([&] {
      enqueued = order_after_used_by();
      kernels_unrecorded_ = used_by.empty();
      policy_.to_host(access, used_by);
    });
    unordered_ = false;
    used_by.clear();
    // Submit the map, copy or marker just enqueued: host_ready() only polls,
    // and an implementation may hold unflushed commands for ever (Oclgrind
    // does). The state above is complete, so a failure here leaves the
    // tensor usable; the view flushes then. A policy whose view makes the
    // data visible itself enqueued nothing: the kernels are submitted by the
    // view's blocking map, or by host_ready() before it polls.
    unflushed_ = true;
    if (enqueued || !host_side_deferred(policy_, 0)) {
      check(clFlush(q_.q()), "clFlush", "DeviceAccess::end", "submitting what makes the data visible to the host");
      unflushed_ = false;
    }
  }

  template <class U>
  HostView<U> begin_view(std::shared_ptr<TensorState> self, bool write, const char* doing, std::size_t byte_offset = 0,
                         const Shape* region = nullptr) {
    usable(doing);
    const Shape& shape = region != nullptr ? *region : shape_;
    if (region != nullptr && (byte_offset % alignof(U) != 0 || byte_offset > bytes_ ||
                              shape.elements() > (bytes_ - byte_offset) / sizeof(U)))
      raise_invalid(doing, "the region of shape " + shape.to_string() + " at byte offset " +
                               std::to_string(byte_offset) + " is misaligned or exceeds the tensor's " +
                               std::to_string(bytes_) +
                               " bytes; choose an offset aligned to the element type and a region inside the tensor");
    if (write && !host_writes(intent_))
      raise_misuse(doing,
                   "the tensor was made with Intent::output (the device writes, the host reads); use "
                   "read_view(), or make the tensor with Intent::inout");
    if (!write && !host_reads(intent_))
      raise_misuse(doing,
                   "the tensor was made with Intent::input, whose host contents are undefined until "
                   "written (CL_MAP_WRITE_INVALIDATE_REGION); use write_view(), or Intent::inout");
    if (device_open_)
      raise_misuse(doing,
                   "a device access is open; end it (DeviceAccess::end or its scope) before the host "
                   "reads or writes the tensor");
    if (views_ == 0) {
      // What the view waits for was submitted when the access ended, unless
      // that flush failed; a policy that makes the data visible as the view
      // opens submits the queue itself (a blocking map does). One more
      // clFlush here would cost every inference a call and order nothing.
      if (unflushed_ && !host_side_deferred(policy_, 0)) check(clFlush(q_.q()), "clFlush", doing);
      unflushed_ = false;
      // A write view of the whole tensor overwrites every element, which
      // lets an input's map skip copying the old contents in.
      // A view that fails to open has reported the inference as failed
      // (its map or download waited on the failed commands): the commands
      // checked below are then settled with it, not reported again later.
      struct SettledOnError {
        EventList& handed;
        bool opened;
        ~SettledOnError() {
          if (!opened) handed.clear();
        }
      } settled{handed_, false};
      host_ = host_pointer_of(policy_, write && region == nullptr, 0);
      settled.opened = true;
      // An input's host never reads it: nothing the failed commands left is
      // read here. An inout tensor's write view may read what it writes (it
      // maps for reading too), and a region leaves the rest for later views.
      if (write && !host_reads(intent_))
        handed_.clear();
      else
        check_handed(doing);
    }
    ++views_;
    return HostView<U>(std::move(self), reinterpret_cast<U*>(static_cast<unsigned char*>(host_) + byte_offset), shape);
  }

  void end_view(bool wrote) noexcept override {
    host_wrote_ = host_wrote_ || wrote;
    if (--views_ > 0) return;
    host_ = nullptr;
    if (!policy_.end_host(host_wrote_)) broken_ = "a host view could not be ended (see the cleanup handler)";
  }

  void bind(cl_kernel kernel, cl_uint index, std::size_t byte_offset, const char* doing) override {
    usable(doing);
    if (kernel == nullptr) raise_invalid(doing, "the cl_kernel is null; pass a kernel from clCreateKernel");
    if (byte_offset >= bytes_)
      raise_invalid(doing, "byte offset " + std::to_string(byte_offset) + " is past the tensor's " +
                               std::to_string(bytes_) + " bytes; pass an offset inside the tensor");
    if (byte_offset != 0 && policy_.buffer() != nullptr)
      raise_invalid(doing,
                    "a cl_mem buffer is bound whole; bind a part of it through a sub-buffer (TensorArena makes them)");
    bind_of(policy_, kernel, index, byte_offset, doing, 0);
  }
  cl_mem buffer() const noexcept override { return policy_.buffer(); }
  void* svm_pointer() const noexcept override { return policy_.svm_pointer(); }
  const char* policy_name() const noexcept override { return Policy::name; }
  cl_context context() const noexcept override { return q_.ctx(); }

  /// Never blocks; a host side left for the view is started (and the queue
  /// submitted) so that polling this can see it complete.
  bool host_ready() {
    if (device_open_) return false;
    start_host(policy_, 0);
    if (unflushed_) {
      check(clFlush(q_.q()), "clFlush", "MappedTensor::host_ready", "submitting the kernels the host waits for");
      unflushed_ = false;
    }
    return policy_.host_ready();
  }
  const Policy& policy() const noexcept { return policy_; }
  const Shape& shape() const noexcept { return shape_; }
  std::size_t bytes() const noexcept { return bytes_; }
  Intent intent() const noexcept { return intent_; }
  const QueueContext& queue_context() const noexcept { return q_; }
  bool is_usable() const noexcept { return broken_.empty(); }

 private:
  void usable(const char* doing) const {
    if (!broken_.empty())
      raise(Error(ErrorKind::unusable, doing,
                  "the tensor is unusable after an earlier failure (" + broken_ + "); destroy it and make a new one"));
  }

  // A device access ended with no events handed in and failed before clzero
  // could order anything after its kernels: they may still run, on memory
  // about to be freed. A marker (else a barrier) stands for them. If neither
  // can be enqueued, memory the runtime would not keep alive for them (SVM)
  // is left allocated rather than freed under them: clzero never drains the
  // engine's queue with clFinish.
  void wait_for_unknown_kernels() noexcept {
    constexpr const char* doing = "waiting for the kernels of a device access whose end failed";
    if (wait_for_queue_noexcept(q_, doing)) return;
    report_cleanup(Error(ErrorKind::opencl, doing,
                         "no marker or barrier could be enqueued after the kernels; the tensor's " +
                             std::to_string(bytes_) +
                             " bytes stay allocated if they are SVM, so that no kernel "
                             "writes freed memory"));
    policy_.keep_memory();
  }

  // The commands clzero enqueued before the last kernels (unmap, upload) are
  // over once the host's side has completed. If one ended in error, the
  // kernels that waited on it never ran, and a read view would show data they
  // never wrote: without events handed in (allowed on an in-order queue, or
  // ordered by a marker) nothing else would tell.
  // The engine's own commands among the events (the last access's kernels,
  // a user event, kept so that the next kernels wait on them) reached the
  // engine through their events when they failed: only clzero's count.
  void check_handed(const char* doing) {
    cl_int failed = CL_SUCCESS;
    cl_command_type type = 0;
    for (cl_event e : handed_) {
      cl_int status = CL_COMPLETE;
      if (failed != CL_SUCCESS ||
          clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) != CL_SUCCESS ||
          status >= 0)
        continue;
      cl_command_type t = 0;
      clGetEventInfo(e, CL_EVENT_COMMAND_TYPE, sizeof t, &t, nullptr);
      if (engines_command(t)) continue;
      failed = status;
      type = t;
    }
    handed_.clear();
    if (failed == CL_SUCCESS) return;
    policy_.end_host(false);  // no view is made: undo what opening it did
    host_ = nullptr;
    raise(Error(std::string(doing) + ": a command clzero enqueued before the kernels ended in error, so they did "
                                     "not run and the data is not theirs; run the inference again",
                command_name(type), failed));
  }

  static bool engines_command(cl_command_type type) noexcept {
    return type == CL_COMMAND_NDRANGE_KERNEL || type == CL_COMMAND_TASK || type == CL_COMMAND_NATIVE_KERNEL ||
           type == CL_COMMAND_USER;
  }

  static const char* command_name(cl_command_type type) noexcept {
    switch (type) {
      case CL_COMMAND_UNMAP_MEM_OBJECT: return "clEnqueueUnmapMemObject";
      case CL_COMMAND_WRITE_BUFFER: return "clEnqueueWriteBuffer";
      case CL_COMMAND_READ_BUFFER: return "clEnqueueReadBuffer";
      case CL_COMMAND_MAP_BUFFER: return "clEnqueueMapBuffer";
      case CL_COMMAND_FILL_BUFFER: return "clEnqueueFillBuffer";
      case CL_COMMAND_MARKER: return "clEnqueueMarkerWithWaitList";
      // The OpenCL 2.0 command types by value (cl.h declares them only from
      // 2.0 on): this body must not differ between configurations.
      case 0x120D: return "clEnqueueSVMUnmap";    // CL_COMMAND_SVM_UNMAP
      case 0x120C: return "clEnqueueSVMMap";      // CL_COMMAND_SVM_MAP
      case 0x120B: return "clEnqueueSVMMemFill";  // CL_COMMAND_SVM_MEMFILL
      default: return "an OpenCL command";
    }
  }

  // With no recorded events, the host's side is ordered after everything
  // enqueued so far: implicit on an in-order queue for policies whose host
  // side is itself a command; a marker (clEnqueueMarkerWithWaitList, OpenCL
  // 1.2) on an out-of-order queue and for policies that wait on the events
  // themselves (fine SVM, USM, NVIDIA host-located buffers). Events of other
  // queues need those queues flushed, or the wait may never end (OpenCL 3.0
  // section 5.13).
  // Returns whether it enqueued a marker.
  // On an in-order queue, with only events of that queue recorded
  // (event_slot(queue) for it), or none and a policy that waits on none,
  // there is nothing to do: answered inline, no clGetEventInfo per event.
  CLZERO_DETAIL_HOT bool order_after_used_by() {
    if (!q_.out_of_order && !used_by_elsewhere && (!used_by.empty() || !own_needs_event_)) return false;
    return order_after_used_by_asked();
  }
  CLZERO_DETAIL_RARE bool order_after_used_by_asked() {
    if (used_by.empty()) {
      if (q_.out_of_order || own_needs_event_) {
        cl_event marker = nullptr;
        check(clEnqueueMarkerWithWaitList(q_.q(), 0, nullptr, &marker), "clEnqueueMarkerWithWaitList",
              "DeviceAccess::end: ordering the host's side after the kernels");
        used_by.adopt(marker);
        return true;
      }
      return false;
    }
    for (cl_event e : used_by) {
      cl_command_queue owner = nullptr;
      check(clGetEventInfo(e, CL_EVENT_COMMAND_QUEUE, sizeof owner, &owner, nullptr), "clGetEventInfo",
            "DeviceAccess::end: finding the queue of a recorded event");
      if (owner != q_.q()) foreign_events_seen_ = true;  // another queue's, or a user event
      if (owner != nullptr && owner != q_.q())
        check(clFlush(owner), "clFlush", "DeviceAccess::end: submitting the producer's queue");
    }
    return false;
  }

  // Whether `events` holds one that is not a command of this tensor's queue
  // (another queue's, or a user event). An event that cannot be asked counts
  // as one: the kernels then wait on the list, which is never wrong.
  CLZERO_DETAIL_RARE bool holds_foreign_event(const EventList& events) const noexcept {
    for (cl_event e : events) {
      cl_command_queue owner = nullptr;
      if (clGetEventInfo(e, CL_EVENT_COMMAND_QUEUE, sizeof owner, &owner, nullptr) != CL_SUCCESS || owner != q_.q())
        return true;
    }
    return false;
  }

  template <class F>
  void try_or_break(F&& step) {
#if CLZERO_DETAIL_HAS_EXCEPTIONS
    try {
      step();
    } catch (const Error& e) {
      broken_ = e.what();
      throw;
    }
#else
    step();
#endif
  }

  QueueContext q_;
  Shape shape_;
  std::size_t bytes_;
  Intent intent_;
  Policy policy_;
  void* host_ = nullptr;
  EventList handed_;        // what the last device access's kernels waited on
  bool unordered_ = false;  // a failed end left kernels clzero knows nothing of
  std::size_t views_ = 0;
  bool device_open_ = false;
  bool host_wrote_ = false;
  bool own_needs_event_ = false;  // the policy waits on the events of the open access's kernels
  bool waits_submitted_ = true;   // the open access's waits were flushed (or there are none)
  bool unrecorded_ = false;       // the open access's unmap has no event yet (submit_waits makes a marker)
  bool kernels_unrecorded_ = false;  // the last access's kernels handed back no event (and no marker stands for them)
  bool foreign_events_seen_ = false;  // an access once handed in an event of another queue, or a user event
  bool own_queue_orders_ = true;      // the tensor's queue orders the open access's kernels after `waits` by itself
  bool unflushed_ = false;  // the last access's end did not submit the queue (host side deferred, or a failed flush)
  std::string broken_;
};

}  // namespace detail

/// A tag naming an element type, for views spelled without a template
/// argument list: `tensor.read_view_as(offset, region, clzero::as<float>)`
/// in generic code needs no `.template` keyword.
template <class T>
struct As {
  /// The element type named.
  using type = T;
};
/// The tag value for element type T.
template <class T>
constexpr As<T> as{};

/// A tensor of T in one OpenCL allocation that the host reads (or writes)
/// after every inference without copies or visible map calls, the way the
/// chosen Policy makes correct and cheapest for the device.
///
///  - Built from the engine's context and queue (both retained), a shape and
///    an intent. Allocates exactly once, at construction; never reallocates.
///  - device_access() hands it to kernels; read_view() / write_view() to the
///    host. The two exclude each other; misuse throws clzero::Error.
///  - Movable, not copyable. Not thread-safe: one thread at a time uses a
///    tensor (different tensors may be used from different threads).
///
/// Policies: policy::Persistent, policy::MapPerInference, policy::CopyToPinned,
/// policy::Svm, policy::UnifiedHost, and policy::Auto, which picks one.
template <class T, class Policy = policy::Auto>
class MappedTensor {
  static_assert(std::is_trivially_copyable<T>::value, "MappedTensor<T>: T must be trivially copyable");
  static_assert(!std::is_const<T>::value && !std::is_volatile<T>::value,
                "MappedTensor<T>: T must not be const; read_view() gives const access");
  using Core = detail::TensorCore<Policy>;

 public:
  /// The element type.
  using value_type = T;
  /// The policy that moves the tensor between host and device.
  using policy_type = Policy;
  /// The policy's options, given to the constructor.
  using Options = typename Policy::Options;

  /// Allocates the tensor on `queue`'s device. `context` must be the queue's
  /// context (or null for "the queue's"). Throws clzero::Error for a null
  /// queue, a queue of another context, a size above
  /// CL_DEVICE_MAX_MEM_ALLOC_SIZE, a policy the device cannot run, or a
  /// failed allocation; nothing is left allocated or mapped then.
  MappedTensor(cl_context context, cl_command_queue queue, const Shape& shape, Intent intent,
               const Options& options = Options{})
      : MappedTensor(Slot::alone, context, queue, shape, intent, options) {}

  /// The same, with the queue's own context.
  MappedTensor(cl_command_queue queue, const Shape& shape, Intent intent, const Options& options = Options{})
      : MappedTensor(nullptr, queue, shape, intent, options) {}

  /// An empty tensor, holding no allocation (like a moved-from one): for
  /// engines that allocate later (e.g. on resize) and move a tensor in.
  MappedTensor() noexcept = default;

  /// Not copyable: a copy would need a second allocation, and a tensor allocates only when built.
  MappedTensor(const MappedTensor&) = delete;
  /// Not copyable, as above.
  MappedTensor& operator=(const MappedTensor&) = delete;
  /// Moving is always safe, even with live views or an open device access:
  /// they hold the tensor's state, not the MappedTensor object.
  MappedTensor(MappedTensor&&) noexcept = default;
  /// The old allocation is released once its last view or access has ended.
  MappedTensor& operator=(MappedTensor&&) noexcept = default;
  /// Releases the allocation once no view or access holds its state; never throws.
  ~MappedTensor() = default;

  /// Hands the tensor to the device for kernels that `access` it (default:
  /// what the intent implies: output -> write, input -> read, inout ->
  /// read_write). Throws if a host view is alive or an access is open.
  DeviceAccess device_access() { return device_access_named("MappedTensor::device_access"); }
  /// The same with the access named: Access::read lets a mapping for reading stay
  /// mapped while the kernels run (see Access).
  DeviceAccess device_access(Access access) { return device_access_named(access, "MappedTensor::device_access"); }

  /// A read-only view (Intent::output, Intent::inout), blocking only until
  /// the data of the last device access is visible on the host.
  HostView<const T> read_view() {
    constexpr const char* doing = "MappedTensor::read_view";
    return core(doing)->template begin_view<const T>(core_, false, doing);
  }

  /// A writable view (Intent::input, Intent::inout). For Intent::input its
  /// contents start undefined: write every element.
  HostView<T> write_view() {
    constexpr const char* doing = "MappedTensor::write_view";
    return core(doing)->template begin_view<T>(core_, true, doing);
  }

  /// Views of a region of the tensor as another trivially copyable type,
  /// e.g. one part of a TensorArena. `byte_offset` must suit U's alignment
  /// and the region must lie inside the tensor. Same rules as the views above.
  /// In a template, call them as `tensor.template read_view_as<U>(...)`, or
  /// pass the type as a last argument instead: `read_view_as(off, region, clzero::as<U>)`.
  template <class U>
  HostView<const U> read_view_as(std::size_t byte_offset, const Shape& region) {
    static_assert(std::is_trivially_copyable<U>::value, "U must be trivially copyable");
    return region_view<const U>(false, byte_offset, region, "MappedTensor::read_view_as");
  }
  template <class U>
  /// The writable counterpart of read_view_as().
  HostView<U> write_view_as(std::size_t byte_offset, const Shape& region) {
    static_assert(std::is_trivially_copyable<U>::value, "U must be trivially copyable");
    return region_view<U>(true, byte_offset, region, "MappedTensor::write_view_as");
  }
  template <class U>
  /// read_view_as<U>() spelled without a template argument list.
  HostView<const U> read_view_as(std::size_t byte_offset, const Shape& region, As<U>) {
    return read_view_as<U>(byte_offset, region);
  }
  template <class U>
  /// write_view_as<U>() spelled without a template argument list.
  HostView<U> write_view_as(std::size_t byte_offset, const Shape& region, As<U>) {
    return write_view_as<U>(byte_offset, region);
  }

  /// Whether a view would open without blocking (never blocks itself).
  bool host_ready() const { return core("MappedTensor::host_ready")->host_ready(); }

  /// Sets the tensor as argument `index` of `kernel`, as DeviceAccess::bind
  /// does, at any time: setting an argument touches no memory, and the
  /// tensor's cl_mem (or SVM / USM pointer) stays the same for its whole
  /// life. For engines that set a kernel's arguments once, when the network
  /// is prepared, and then only enqueue it: every inference then makes the
  /// calls of the fastest hand-written sequence and no clSetKernelArg. A
  /// kernel shared by several tensors is bound per access instead. A
  /// non-zero `byte_offset` binds a part of an SVM / USM tensor. Throws for
  /// an empty or unusable tensor, a null kernel or an offset outside it.
  void bind(cl_kernel kernel, cl_uint index, std::size_t byte_offset = 0) const {
    core("MappedTensor::bind")->bind(kernel, index, byte_offset, "MappedTensor::bind");
  }

  /// The shape given at construction. Throws for an empty tensor (a Shape
  /// always has at least one element).
  const Shape& shape() const { return core("MappedTensor::shape")->shape(); }
  /// The number of elements; 0 for an empty tensor.
  std::size_t size() const noexcept { return core_ ? core_->shape().elements() : 0; }
  /// The allocation's size, size() * sizeof(T); 0 for an empty tensor.
  std::size_t bytes() const noexcept { return core_ ? core_->bytes() : 0; }
  /// The intent given at construction. Throws for an empty tensor.
  Intent intent() const { return core("MappedTensor::intent")->intent(); }
  /// The policy object: e.g. policy().describe(), or Auto's choice(). Throws for an empty tensor.
  const Policy& policy() const { return core("MappedTensor::policy")->policy(); }
  /// The cl_mem behind the tensor (null for SVM / USM policies). For
  /// interop; kernels should get it through DeviceAccess. Throws for an
  /// empty tensor (a null cl_mem would read as "an SVM policy").
  cl_mem buffer() const { return core("MappedTensor::buffer")->buffer(); }
  /// The context the tensor retains (the queue's). Throws for an empty tensor.
  cl_context context() const { return core("MappedTensor::context")->queue_context().ctx(); }
  /// The queue the tensor retains; clzero enqueues its maps, unmaps and
  /// copies there. Throws for an empty tensor.
  cl_command_queue queue() const { return core("MappedTensor::queue")->queue_context().q(); }
  /// False after a failure left the tensor unusable: device_access() and every view then throw
  /// ErrorKind::unusable; the queries (shape, bytes, buffer, policy, ...) keep working, and
  /// destroying the tensor is the only way on.
  bool usable() const noexcept { return core_ && core_->is_usable(); }
  /// False for an empty (moved-from or default-constructed) tensor.
  explicit operator bool() const noexcept { return static_cast<bool>(core_); }

 private:
  // A TensorRing's slot: its host views must never wait for the later
  // inferences enqueued after its kernels, so its host side is enqueued right
  // after them even where the device's fastest wait is a map at the view.
  enum class Slot { alone, in_ring };
  template <class, class>
  friend class TensorRing;
  template <class>
  friend class TensorArena;

  // The calls behind device_access() and the views, named by `doing`: the
  // user's call, which every error names (a TensorArena's own calls too).
  DeviceAccess device_access_named(const char* doing) {
    return device_access_named(default_access(core(doing)->intent()), doing);
  }
  DeviceAccess device_access_named(Access access, const char* doing) {
    return core(doing)->begin_device_access(core_, access, doing);
  }
  template <class V>
  HostView<V> region_view(bool write, std::size_t byte_offset, const Shape& region, const char* doing) {
    return core(doing)->template begin_view<V>(core_, write, doing, byte_offset, &region);
  }

  MappedTensor(Slot slot, cl_context context, cl_command_queue queue, const Shape& shape, Intent intent,
               const Options& options) {
    constexpr const char* doing = "MappedTensor: constructing";
    detail::QueueContext q = detail::QueueContext::make(context, queue, doing);
    q.in_ring = slot == Slot::in_ring;
    // A slot's views poll through long waits even on CPU devices: when a
    // slot completes, the device is busy with the next one's kernel, so a
    // thread woken from clWaitForEvents waits for a core behind its
    // work-items, while a polling one holds its core already. Blocking
    // after the long wait, rings of 64 MiB slots on PoCL 3.1 (2 vCPUs) ran
    // 1.08 to 1.15 times the fastest hand-written ring, which polls, in three
    // of three runs (docs/logs/ci/22-sequences-pocl31/), polling at most 1.07
    // in six (docs/logs/ci/21-sequences-pocl31/).
    // For the same reason a slot's views keep polling after the thread was
    // idle: a slot's kernel runs while the host does other work.
    if (q.in_ring) {
      q.host_wait.block_after_ns = 0;
      q.host_wait.idle_block = false;
      q.host_wait.idle_learn = false;
    }
    if (shape.elements() > std::numeric_limits<std::size_t>::max() / sizeof(T))
      detail::raise_invalid(doing,
                            "shape " + shape.to_string() + " of " + std::to_string(sizeof(T)) +
                                "-byte elements overflows std::size_t bytes; split the tensor into smaller ones");
    const std::size_t bytes = shape.elements() * sizeof(T);
    if (bytes > q.max_alloc)
      detail::raise_invalid(doing, "shape " + shape.to_string() + " needs " + std::to_string(bytes) +
                                       " bytes, above the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE of " +
                                       std::to_string(q.max_alloc) + " bytes; split the tensor");
    core_ = std::make_shared<Core>(std::move(q), shape, bytes, intent, options);
  }

  Core* core(const char* what) const {
    if (!core_)
      detail::raise_misuse(what,
                           "use of an empty (moved-from or default-constructed) MappedTensor; it holds no "
                           "allocation: move a constructed tensor into it first");
    return core_.get();
  }

  std::shared_ptr<Core> core_;
};

}  // namespace clzero
