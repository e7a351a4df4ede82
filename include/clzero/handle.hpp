// SPDX-License-Identifier: Apache-2.0
// Handle<T>: reference-counted ownership of one OpenCL object (clRetain* on
// copy, clRelease* on destruction), the only way clzero holds cl_ handles.
#pragma once

#include <CL/cl.h>

#include <utility>

#include "clzero/error.hpp"

namespace clzero {
namespace detail {

template <class T>
struct HandleTraits;

#define CLZERO_DETAIL_HANDLE_TRAITS(type, retain_fn, release_fn)                 \
  template <>                                                                    \
  struct HandleTraits<type> {                                                    \
    static cl_int retain(type h) noexcept { return retain_fn(h); }               \
    static cl_int release(type h) noexcept { return release_fn(h); }             \
    static constexpr const char* retain_name() noexcept { return #retain_fn; }   \
    static constexpr const char* release_name() noexcept { return #release_fn; } \
  };
CLZERO_DETAIL_HANDLE_TRAITS(cl_mem, clRetainMemObject, clReleaseMemObject)
CLZERO_DETAIL_HANDLE_TRAITS(cl_event, clRetainEvent, clReleaseEvent)
CLZERO_DETAIL_HANDLE_TRAITS(cl_command_queue, clRetainCommandQueue, clReleaseCommandQueue)
CLZERO_DETAIL_HANDLE_TRAITS(cl_context, clRetainContext, clReleaseContext)
CLZERO_DETAIL_HANDLE_TRAITS(cl_kernel, clRetainKernel, clReleaseKernel)
CLZERO_DETAIL_HANDLE_TRAITS(cl_program, clRetainProgram, clReleaseProgram)
#undef CLZERO_DETAIL_HANDLE_TRAITS

}  // namespace detail

/// Owns one reference to an OpenCL object. Copying retains, destruction
/// releases; a failed release is reported to the cleanup handler, never thrown.
template <class T>
class Handle {
  using Traits = detail::HandleTraits<T>;

 public:
  /// Holds nothing: get() is null.
  Handle() noexcept = default;

  /// Takes over a reference the caller already owns (what clCreate* returned).
  static Handle adopt(T raw) noexcept {
    Handle h;
    h.raw_ = raw;
    return h;
  }

  /// Adds a reference of our own (clRetain*) to an object the caller keeps.
  static Handle retain(T raw) {
    if (raw != nullptr) detail::check(Traits::retain(raw), Traits::retain_name(), "retaining an OpenCL object");
    return adopt(raw);
  }

  /// Adds a reference of its own (clRetain*); throws clzero::Error if that fails.
  Handle(const Handle& other) : raw_(other.raw_) {
    if (raw_ != nullptr) detail::check(Traits::retain(raw_), Traits::retain_name(), "copying a clzero::Handle");
  }
  /// Takes over `other`'s reference, leaving it null; no OpenCL call.
  Handle(Handle&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
  /// Copy or move assignment by swap: the old reference is released with `other`.
  Handle& operator=(Handle other) noexcept {
    std::swap(raw_, other.raw_);
    return *this;
  }
  /// Releases the reference (clRelease*); a failure goes to the cleanup handler.
  ~Handle() { reset(); }

  /// Drops this reference now.
  void reset() noexcept {
    if (raw_ == nullptr) return;
    const cl_int rc = Traits::release(std::exchange(raw_, nullptr));
    if (rc != CL_SUCCESS) detail::report_cleanup(Error("releasing an OpenCL object", Traits::release_name(), rc));
  }

  /// Gives the reference to the caller, who must release it.
  T detach() noexcept { return std::exchange(raw_, nullptr); }

  /// The raw handle, still owned by this Handle (null if it holds nothing).
  T get() const noexcept { return raw_; }
  /// Whether it holds an object.
  explicit operator bool() const noexcept { return raw_ != nullptr; }

 private:
  T raw_ = nullptr;
};

/// A cl_mem reference (clRetainMemObject / clReleaseMemObject).
using MemHandle = Handle<cl_mem>;
/// A cl_event reference (clRetainEvent / clReleaseEvent).
using EventHandle = Handle<cl_event>;
/// A cl_command_queue reference (clRetainCommandQueue / clReleaseCommandQueue).
using QueueHandle = Handle<cl_command_queue>;
/// A cl_context reference (clRetainContext / clReleaseContext).
using ContextHandle = Handle<cl_context>;
/// A cl_kernel reference (clRetainKernel / clReleaseKernel).
using KernelHandle = Handle<cl_kernel>;
/// A cl_program reference (clRetainProgram / clReleaseProgram).
using ProgramHandle = Handle<cl_program>;

}  // namespace clzero
