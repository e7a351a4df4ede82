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
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "clzero/device_access.hpp"
#include "clzero/error.hpp"
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
  /// The part's size in bytes.
  std::size_t bytes() const noexcept { return element_size * shape.elements(); }
};

/// A device access to a whole arena: DeviceAccess plus binding of parts.
class ArenaAccess {
 public:
  /// Binds part `part` as argument `index` of `kernel`.
  void bind(std::size_t part, cl_kernel kernel, cl_uint index) const {
    if (part >= count_)
      detail::raise_invalid("ArenaAccess::bind", "part " + std::to_string(part) + " of an arena of " +
                                                     std::to_string(count_) + " parts; use an index below parts()");
    const cl_mem sub = subs_[part].get();
    if (sub != nullptr) {
      if (kernel == nullptr)
        detail::raise_invalid("ArenaAccess::bind", "the cl_kernel is null; pass a kernel from clCreateKernel");
      detail::check(clSetKernelArg(kernel, index, sizeof sub, &sub), "clSetKernelArg", "ArenaAccess::bind");
    } else {
      access_.bind(kernel, index, offsets_[part]);
    }
  }

  /// The whole arena's access: wait_list(), event_slot(), used_by(), end().
  DeviceAccess& access() noexcept { return access_; }
  /// As DeviceAccess::wait_count(), for the whole arena.
  cl_uint wait_count() const { return access_.wait_count(); }
  /// As DeviceAccess::wait_list().
  const cl_event* wait_list() const { return access_.wait_list(); }
  /// As DeviceAccess::event_slot().
  cl_event* event_slot() { return access_.event_slot(); }
  /// As DeviceAccess::used_by().
  void used_by(cl_event event) { access_.used_by(event); }
  /// As DeviceAccess::end(): gives every part back to the host.
  void end() { access_.end(); }

  /// Made by TensorArena only; points into the arena's layout, which moves
  /// with the arena's storage (a moved arena keeps its accesses valid).
  ArenaAccess(DeviceAccess access, const std::size_t* offsets, const MemHandle* subs, std::size_t count)
      : access_(std::move(access)), offsets_(offsets), subs_(subs), count_(count) {}

 private:
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
  /// Part `i` as given; throws std::out_of_range past the last.
  const ArenaPart& part(std::size_t i) const { return parts_.at(i); }
  /// Part `i`'s byte offset in the allocation; throws std::out_of_range past the last.
  std::size_t offset(std::size_t i) const { return offsets_.at(i); }
  /// The sub-buffer kernels see for part i (null for SVM / USM arenas).
  cl_mem sub_buffer(std::size_t i) const { return subs_.at(i).get(); }
  /// The one tensor behind the arena (bytes), e.g. for policy().
  MappedTensor<unsigned char, Policy>& tensor() noexcept { return tensor_; }

  /// Hands every part to the device at once (one unmap, upload or nothing).
  ArenaAccess device_access() {
    return ArenaAccess(tensor_.device_access(), offsets_.data(), subs_.data(), parts_.size());
  }
  /// The same with the access named (see MappedTensor::device_access).
  ArenaAccess device_access(Access access) {
    return ArenaAccess(tensor_.device_access(access), offsets_.data(), subs_.data(), parts_.size());
  }

  /// Views of part i; open several at once and the arena maps once.
  template <class T>
  HostView<const T> read_view(std::size_t i) {
    check_part<T>(i, "TensorArena::read_view");
    return tensor_.template read_view_as<T>(offsets_[i], parts_[i].shape);
  }
  template <class T>
  /// A writable view of part `i` (Intent::input, Intent::inout).
  HostView<T> write_view(std::size_t i) {
    check_part<T>(i, "TensorArena::write_view");
    return tensor_.template write_view_as<T>(offsets_[i], parts_[i].shape);
  }

 private:
  template <class T>
  void check_part(std::size_t i, const char* doing) const {
    if (i >= parts_.size())
      detail::raise_invalid(doing, "part " + std::to_string(i) + " of an arena of " + std::to_string(parts_.size()) +
                                       " parts; use an index below parts()");
    if (sizeof(T) != parts_[i].element_size)
      detail::raise_invalid(doing, "part " + std::to_string(i) + " holds " + std::to_string(parts_[i].element_size) +
                                       "-byte elements, not " + std::to_string(sizeof(T)) +
                                       "-byte ones; use an element type of that size");
  }

  static std::vector<std::size_t> layout(cl_command_queue queue, const std::vector<ArenaPart>& parts) {
    constexpr const char* doing = "TensorArena: laying out the parts";
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
    for (const ArenaPart& p : parts) {
      const std::size_t align = std::max<std::size_t>({align_bits / 8, p.element_align, 1});
      at = (at + align - 1) / align * align;
      offsets.push_back(at);
      at += p.bytes();
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
