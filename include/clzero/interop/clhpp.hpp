// SPDX-License-Identifier: Apache-2.0
// Optional CLHPP interop: build tensors from cl::Context / cl::CommandQueue,
// hand out the buffer as cl::Buffer and the events as cl::Event, as engines
// written against CLHPP (MNN, TNN, ComputeLibrary) expect.
//
// Include CLHPP your way first (with your CL_HPP_* macros), or let this header
// include <CL/opencl.hpp> (or the older <CL/cl2.hpp>) with whatever macros
// you have defined; clzero defines none.
#pragma once

#if !defined(CL_HPP_) && !defined(CL_HPP_OPENCL_HPP_) && !defined(CL_HPP_CL2_HPP_)
#if __has_include(<CL/opencl.hpp>)
#include <CL/opencl.hpp>
#else
#include <CL/cl2.hpp>
#endif
#endif

#include <cstddef>
#include <vector>

#include "clzero/clzero.hpp"

namespace clzero {
namespace interop {

/// A tensor on `queue` (and `context`, which must be the queue's).
template <class T, class Policy = policy::Auto>
MappedTensor<T, Policy> make_tensor(const cl::Context& context, const cl::CommandQueue& queue, const Shape& shape,
                                    Intent intent,
                                    const typename Policy::Options& options = typename Policy::Options{}) {
  return MappedTensor<T, Policy>(context(), queue(), shape, intent, options);
}

/// The same on the queue's own context.
template <class T, class Policy = policy::Auto>
MappedTensor<T, Policy> make_tensor(const cl::CommandQueue& queue, const Shape& shape, Intent intent,
                                    const typename Policy::Options& options = typename Policy::Options{}) {
  return MappedTensor<T, Policy>(queue(), shape, intent, options);
}

/// The tensor's cl_mem as a cl::Buffer holding its own reference (null for
/// SVM / USM policies).
template <class T, class Policy>
cl::Buffer buffer(const MappedTensor<T, Policy>& tensor) {
  cl_mem m = tensor.buffer();
  return m != nullptr ? cl::Buffer(m, true) : cl::Buffer();
}

/// The open device access's cl_mem as a cl::Buffer (null for SVM / USM).
inline cl::Buffer buffer(const DeviceAccess& access) {
  cl_mem m = access.buffer();
  return m != nullptr ? cl::Buffer(m, true) : cl::Buffer();
}

/// The events a kernel must wait on, as CLHPP events (each retained).
inline std::vector<cl::Event> wait_events(const DeviceAccess& access) {
  std::vector<cl::Event> events;
  events.reserve(access.waits().size());
  for (cl_event e : access.waits()) events.emplace_back(e, true);
  return events;
}

/// Records a CLHPP event of a command that used the tensor.
inline void used_by(DeviceAccess& access, const cl::Event& event) { access.used_by(event()); }

/// Binds the tensor as argument `index` of a CLHPP kernel (any policy); a
/// non-zero `byte_offset` binds a part of an SVM / USM tensor, as
/// DeviceAccess::bind does.
inline void bind(const DeviceAccess& access, const cl::Kernel& kernel, cl_uint index, std::size_t byte_offset = 0) {
  access.bind(kernel(), index, byte_offset);
}

/// Binds part `part` of an arena as argument `index` of a CLHPP kernel: its
/// sub-buffer, or a pointer to it for SVM / USM arenas (ArenaAccess::bind).
inline void bind(const ArenaAccess& access, const cl::Kernel& kernel, cl_uint index, Part part) {
  access.bind(kernel(), index, part);
}

/// Part `part`'s sub-buffer as a cl::Buffer holding its own reference (null
/// for SVM / USM arenas).
inline cl::Buffer buffer(const ArenaAccess& access, Part part) {
  cl_mem m = access.buffer(part);
  return m != nullptr ? cl::Buffer(m, true) : cl::Buffer();
}

/// The events a kernel using the arena must wait on, as CLHPP events (each retained).
inline std::vector<cl::Event> wait_events(const ArenaAccess& access) {
  std::vector<cl::Event> events;
  events.reserve(access.waits().size());
  for (cl_event e : access.waits()) events.emplace_back(e, true);
  return events;
}

/// Records a CLHPP event of a command that used the arena.
inline void used_by(ArenaAccess& access, const cl::Event& event) { access.used_by(event()); }

}  // namespace interop
}  // namespace clzero
