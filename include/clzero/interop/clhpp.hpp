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

/// Binds the tensor as argument `index` of a CLHPP kernel (any policy).
inline void bind(const DeviceAccess& access, const cl::Kernel& kernel, cl_uint index) {
  access.bind(kernel(), index, 0);
}

}  // namespace interop
}  // namespace clzero
