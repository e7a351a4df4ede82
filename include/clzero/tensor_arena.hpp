// SPDX-License-Identifier: Apache-2.0
// TensorArena: several tensors carved out of one allocation, moved between
// host and device together, so a model with N outputs pays one map (or one
// copy) per inference instead of N.
//
// Parts start at offsets aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN (reported in
// bits), which clCreateSubBuffer requires of a sub-buffer's origin (OpenCL 3.0
// section 5.2.1). Kernels see buffer-backed parts as sub-buffers, made once at
// construction; SVM and USM parts as pointers into the one allocation. Only
// the parent is ever mapped, and it is unmapped before any kernel touches a
// part: the spec's map rules cover a buffer's sub-buffers too (section 5.5.4).
#pragma once

#include <CL/cl.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "clzero/device_access.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/handle.hpp"
#include "clzero/host_view.hpp"
#include "clzero/intent.hpp"
#include "clzero/mapped_tensor.hpp"
#include "clzero/shape.hpp"

namespace clzero {

/// One tensor of an arena: its element type's size and alignment, and shape.
struct ArenaPart {
  /// sizeof the part's element type.
  std::size_t element_size;
  /// alignof the element type: the part's offset is a multiple of it.
  std::size_t element_align;
  /// The part's shape.
  Shape shape;

  template <class T>
  /// A part of `shape` elements of type T (trivially copyable).
  static ArenaPart of(const Shape& shape) {
    static_assert(std::is_trivially_copyable<T>::value, "arena parts hold trivially copyable elements");
    return ArenaPart{sizeof(T), alignof(T), shape};
  }
  /// The part's size in bytes. The arena checks it for overflow when it lays
  /// the parts out; for a part built by hand it wraps like any std::size_t product.
  std::size_t bytes() const noexcept { return element_size * shape.elements(); }
};

/// Names a part of a TensorArena by its index: ArenaAccess::bind(kernel, index,
/// Part{1}). A type of its own, so that a part number cannot be passed where a
/// kernel argument index or a byte offset is expected (or the other way round).
struct Part {
  /// Part `index`, counted from 0 in the order the arena was given its parts.
  constexpr explicit Part(std::size_t i) noexcept : index(i) {}
  /// The part's position in the arena.
  std::size_t index;
};

namespace detail {
template <class T>
struct always_false : std::false_type {};
}  // namespace detail

/// A device access to a whole arena: what DeviceAccess offers, with parts
/// bound one at a time. Movable (a move-assigned access is ended first), not copyable.
class ArenaAccess {
 public:
  /// Binds part `part` as argument `index` of `kernel`: its sub-buffer for
  /// buffer-backed policies (clSetKernelArg), a pointer to its first element
  /// for SVM and USM. Throws once the access has ended.
  void bind(cl_kernel kernel, cl_uint index, Part part) const {
    constexpr const char* doing = "ArenaAccess::bind";
    require_open(doing);
    check_part(part, doing);
    if (kernel == nullptr) detail::raise_invalid(doing, "the cl_kernel is null; pass a kernel from clCreateKernel");
    const cl_mem sub = subs_[part.index].get();
    if (sub != nullptr)
      detail::check(clSetKernelArg(kernel, index, sizeof sub, &sub), "clSetKernelArg", doing);
    else
      access_.bind(kernel, index, offsets_[part.index]);
  }

  /// The old order, bind(part, kernel, index), does not compile: the kernel
  /// comes first, as in DeviceAccess::bind.
  template <class Index, class Kernel, class Arg,
            class = std::enable_if_t<std::is_integral<Index>::value && std::is_convertible<Kernel, cl_kernel>::value>>
  void bind(Index, Kernel, Arg) const {
    static_assert(detail::always_false<Index>::value,
                  "ArenaAccess::bind takes the kernel first: bind(kernel, arg_index, clzero::Part{part})");
  }

  /// Part `part`'s sub-buffer (buffer-backed policies), or null for SVM and USM
  /// arenas, whose kernels take svm_pointer(part).
  cl_mem buffer(Part part) const {
    require_open("ArenaAccess::buffer");
    check_part(part, "ArenaAccess::buffer");
    return subs_[part.index].get();
  }
  /// A pointer to part `part`'s first element (SVM and USM arenas), or null for
  /// buffer-backed ones, whose kernels take buffer(part).
  void* svm_pointer(Part part) const {
    require_open("ArenaAccess::svm_pointer");
    check_part(part, "ArenaAccess::svm_pointer");
    void* base = access_.svm_pointer();
    return base != nullptr ? static_cast<unsigned char*>(base) + offsets_[part.index] : nullptr;
  }
  /// Part `part`'s byte offset in the arena's allocation.
  std::size_t offset(Part part) const {
    check_part(part, "ArenaAccess::offset");
    return offsets_[part.index];
  }
  /// The number of parts.
  std::size_t parts() const noexcept { return count_; }

  /// As DeviceAccess::wait_count(), for the whole arena.
  cl_uint wait_count() const {
    require_open("ArenaAccess::wait_count");
    return access_.wait_count();
  }
  /// As DeviceAccess::wait_list().
  const cl_event* wait_list() const {
    require_open("ArenaAccess::wait_list");
    return access_.wait_list();
  }
  /// As DeviceAccess::wait_count(queue): 0 for the arena's own in-order queue.
  cl_uint wait_count(cl_command_queue queue) const {
    require_open("ArenaAccess::wait_count");
    return access_.wait_count(queue);
  }
  /// As DeviceAccess::wait_list(queue): null for the arena's own in-order queue.
  const cl_event* wait_list(cl_command_queue queue) const {
    require_open("ArenaAccess::wait_list");
    return access_.wait_list(queue);
  }
  /// As DeviceAccess::waits(): the same events as an EventList.
  const EventList& waits() const {
    require_open("ArenaAccess::waits");
    return access_.waits();
  }
  /// As DeviceAccess::enqueue_barrier(), for libraries whose calls take no wait list.
  void enqueue_barrier(cl_command_queue queue) const {
    require_open("ArenaAccess::enqueue_barrier");
    access_.enqueue_barrier(queue);
  }
  /// As DeviceAccess::event_slot().
  cl_event* event_slot() {
    require_open("ArenaAccess::event_slot");
    return access_.event_slot();
  }
  /// As DeviceAccess::event_slot(queue): null for the arena's own in-order
  /// queue where the policy waits on no events.
  cl_event* event_slot(cl_command_queue queue) {
    require_open("ArenaAccess::event_slot");
    return access_.event_slot(queue);
  }
  /// As DeviceAccess::used_by().
  void used_by(cl_event event) {
    require_open("ArenaAccess::used_by");
    access_.used_by(event);
  }
  /// As DeviceAccess::end(): gives every part back to the host. Idempotent.
  void end() { access_.end(); }
  /// What the kernels of this access were declared to do.
  Access access() const noexcept { return access_.access(); }
  /// Whether the access is still open: not ended and not moved from.
  bool open() const noexcept { return access_.open(); }

  /// Made by TensorArena only; points into the arena's layout, which moves
  /// with the arena's storage (a moved arena keeps its accesses valid).
  ArenaAccess(DeviceAccess access, const std::size_t* offsets, const MemHandle* subs, std::size_t count) noexcept
      : access_(std::move(access)), offsets_(offsets), subs_(subs), count_(count) {}

 private:
  void require_open(const char* doing) const {
    if (!access_.open())
      detail::raise_misuse(doing, "this ArenaAccess has ended; start a new one with TensorArena::device_access()");
  }
  void check_part(Part part, const char* doing) const {
    if (part.index >= count_)
      detail::raise_invalid(doing, "part " + std::to_string(part.index) + " of an arena of " + std::to_string(count_) +
                                       " parts; use an index below parts()");
  }

  DeviceAccess access_;
  const std::size_t* offsets_;
  const MemHandle* subs_;
  std::size_t count_;
};

/// Several tensors in one allocation, handed to the device and back together.
/// The arena must outlive its ArenaAccess objects (views of parts are safe
/// either way: they keep the allocation alive). Movable, not copyable.
template <class Policy = policy::Auto>
class TensorArena {
 public:
  /// The policy's options, given to the one tensor behind the arena.
  using Options = typename Policy::Options;

  /// Lays the parts out (each offset aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN and the
  /// part's element), allocates one tensor for all of them and, for buffer-backed
  /// policies, one sub-buffer per part (clCreateSubBuffer). Throws clzero::Error for
  /// no parts or a null queue.
  TensorArena(cl_context context, cl_command_queue queue, std::vector<ArenaPart> parts, Intent intent,
              const Options& options = Options{})
      : parts_(std::move(parts)),
        offsets_(layout(queue, parts_)),
        tensor_(context, queue, {total_bytes(parts_, offsets_)}, intent, options) {
    subs_.resize(parts_.size());
    cl_mem parent = tensor_.buffer();
    if (parent == nullptr) return;  // SVM / USM: parts are pointers into the allocation
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      cl_buffer_region region{offsets_[i], parts_[i].bytes()};
      cl_int rc = CL_SUCCESS;
      cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &rc);
      detail::check(rc, "clCreateSubBuffer", "TensorArena: making the sub-buffer of a part");
      subs_[i] = MemHandle::adopt(sub);
    }
  }

  /// The number of parts.
  std::size_t parts() const noexcept { return parts_.size(); }
  /// Part `i` as given. Past the last part: ErrorKind::invalid_argument.
  const ArenaPart& part(std::size_t i) const {
    check_index(i, "TensorArena::part");
    return parts_[i];
  }
  /// Part `i`'s byte offset in the allocation. Past the last part: ErrorKind::invalid_argument.
  std::size_t offset(std::size_t i) const {
    check_index(i, "TensorArena::offset");
    return offsets_[i];
  }
  /// The sub-buffer kernels see for part i (null for SVM / USM arenas). Past
  /// the last part: ErrorKind::invalid_argument.
  cl_mem sub_buffer(std::size_t i) const {
    check_index(i, "TensorArena::sub_buffer");
    return subs_[i].get();
  }
  /// The one tensor behind the arena (bytes), e.g. for policy().
  MappedTensor<unsigned char, Policy>& tensor() noexcept { return tensor_; }

  /// Hands every part to the device at once (one unmap, upload or nothing).
  ArenaAccess device_access() {
    return ArenaAccess(tensor_.device_access_named("TensorArena::device_access"), offsets_.data(), subs_.data(),
                       parts_.size());
  }
  /// The same with the access named (see MappedTensor::device_access).
  ArenaAccess device_access(Access access) {
    return ArenaAccess(tensor_.device_access_named(access, "TensorArena::device_access"), offsets_.data(), subs_.data(),
                       parts_.size());
  }

  /// Views of part i; open several at once and the arena maps once. In a
  /// template, call them as `arena.template read_view<T>(i)` or, without the
  /// `template` keyword, `arena.read_view(i, clzero::as<T>)`.
  template <class T>
  HostView<const T> read_view(std::size_t i) {
    constexpr const char* doing = "TensorArena::read_view";
    check_part<T>(i, doing);
    return tensor_.template region_view<const T>(false, offsets_[i], parts_[i].shape, doing);
  }
  template <class T>
  /// A writable view of part `i` (Intent::input, Intent::inout).
  HostView<T> write_view(std::size_t i) {
    constexpr const char* doing = "TensorArena::write_view";
    check_part<T>(i, doing);
    return tensor_.template region_view<T>(true, offsets_[i], parts_[i].shape, doing);
  }
  template <class T>
  /// read_view<T>(i) spelled without a template argument list: read_view(i, clzero::as<T>).
  HostView<const T> read_view(std::size_t i, As<T>) {
    return read_view<T>(i);
  }
  template <class T>
  /// write_view<T>(i) spelled without a template argument list: write_view(i, clzero::as<T>).
  HostView<T> write_view(std::size_t i, As<T>) {
    return write_view<T>(i);
  }

 private:
  void check_index(std::size_t i, const char* doing) const {
    if (i >= parts_.size())
      detail::raise_invalid(doing, "part " + std::to_string(i) + " of an arena of " + std::to_string(parts_.size()) +
                                       " parts; use an index below parts()");
  }

  template <class T>
  void check_part(std::size_t i, const char* doing) const {
    check_index(i, doing);
    if (sizeof(T) != parts_[i].element_size)
      detail::raise_invalid(doing, "part " + std::to_string(i) + " holds " + std::to_string(parts_[i].element_size) +
                                       "-byte elements, not " + std::to_string(sizeof(T)) +
                                       "-byte ones; use an element type of that size");
  }

  // Every step of the layout is checked: a wrapped product or sum would give
  // a small allocation that parts then overrun, or parts that overlap.
  static std::vector<std::size_t> layout(cl_command_queue queue, const std::vector<ArenaPart>& parts) {
    constexpr const char* doing = "TensorArena: laying out the parts";
    constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
    if (parts.empty()) detail::raise_invalid(doing, "an arena needs at least one part; pass one ArenaPart per tensor");
    if (queue == nullptr) detail::raise_invalid(doing, "the cl_command_queue is null; pass the engine's queue");
    cl_device_id device = nullptr;
    detail::check(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr),
                  "clGetCommandQueueInfo", doing);
    cl_uint align_bits = 0;
    detail::check(clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, nullptr),
                  "clGetDeviceInfo", doing);
    std::vector<std::size_t> offsets;
    std::size_t at = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const ArenaPart& p = parts[i];
      const std::string part = "part " + std::to_string(i) + " (shape " + p.shape.to_string() + ")";
      if (p.element_size == 0)
        detail::raise_invalid(doing, part +
                                         " has 0-byte elements, so it holds no data; give every part at least one "
                                         "byte (make parts with ArenaPart::of<T>(shape))");
      if (p.shape.elements() > max / p.element_size)
        detail::raise_invalid(doing, part + " of " + std::to_string(p.element_size) +
                                         "-byte elements overflows std::size_t bytes; split the tensor into smaller "
                                         "ones");
      const std::size_t bytes = p.bytes();
      const std::size_t align = std::max<std::size_t>({align_bits / 8, p.element_align, 1});
      if (at > max - (align - 1))
        detail::raise_invalid(doing, part + " starts at byte " + std::to_string(at) + ", and aligning it to " +
                                         std::to_string(align) +
                                         " bytes overflows std::size_t; split the arena into smaller ones");
      at = (at + align - 1) / align * align;
      if (bytes > max - at)
        detail::raise_invalid(doing, part + " of " + std::to_string(bytes) + " bytes at offset " + std::to_string(at) +
                                         " ends past the largest std::size_t: the parts together overflow; split "
                                         "the arena into smaller ones");
      offsets.push_back(at);
      at += bytes;
    }
    return offsets;
  }

  static std::size_t total_bytes(const std::vector<ArenaPart>& parts, const std::vector<std::size_t>& offsets) {
    return offsets.back() + parts.back().bytes();
  }

  std::vector<ArenaPart> parts_;
  std::vector<std::size_t> offsets_;
  MappedTensor<unsigned char, Policy> tensor_;
  std::vector<MemHandle> subs_;
};

}  // namespace clzero
