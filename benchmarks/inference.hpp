// SPDX-License-Identifier: Apache-2.0
// Inference: the measured unit. One call runs one inference of a strategy: the
// producer kernel writes every element of an n-element uint32 tensor, the
// output becomes visible on the host, and the host reads every element (the
// returned sum, which the caller compares with fresh_sum).
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace clzero_bench {

class Inference {
 public:
  virtual ~Inference() = default;
  /// Runs inference number `iter`; returns the host's sum of the output.
  virtual std::uint64_t run(std::uint32_t iter) = 0;
  /// False for the floors, which produce no host-visible output to check.
  virtual bool checks_output() const { return true; }
};

/// Makes the inference of one strategy for n elements; may throw
/// (clzero::Error or std::runtime_error) when the device cannot run it.
using InferenceFactory = std::function<std::unique_ptr<Inference>(std::size_t n)>;

/// The host's read of every element. Kept out of line so that the compiler
/// cannot fold it into the caller or drop it.
std::uint64_t host_sum(const std::uint32_t* data, std::size_t n);

/// Sets the producer's arguments and enqueues it over n work-items.
inline cl_int enqueue_producer(cl_command_queue q, cl_kernel k, std::size_t n, std::uint32_t iter, cl_uint waits,
                               const cl_event* wait_list, cl_event* event) {
  const cl_uint arg = iter;
  const cl_int rc = clSetKernelArg(k, 1, sizeof arg, &arg);
  if (rc != CL_SUCCESS) return rc;
  return clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, waits, wait_list, event);
}

}  // namespace clzero_bench
