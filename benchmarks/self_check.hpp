// SPDX-License-Identifier: Apache-2.0
// A strategy that is wrong on purpose, registered only with
// CLZERO_BENCH_SELF_CHECK=1: every third inference skips the kernel and reads
// the previous output. The test bench.detects_stale_output runs it to show
// that the per-inference check catches stale data and fails the run.
#pragma once

#include <CL/cl.h>

#include <clzero/clzero.hpp>

#include <cstddef>
#include <cstdint>

#include "bench_env.hpp"
#include "inference.hpp"
#include "raw_buffers.hpp"

namespace clzero_bench {

class SkipsEveryThirdKernel final : public Inference {
 public:
  explicit SkipsEveryThirdKernel(std::size_t n)
      : n_(n), buffer_(RawAllocation::alloc_host_ptr, n * sizeof(std::uint32_t)) {
    const cl_mem m = buffer_.mem();
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
  }

  std::uint64_t run(std::uint32_t iter) override {
    if (iter % 3 != 0) ok(enqueue_producer(q_, kernel_.get(), n_, iter, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
    cl_int rc = CL_SUCCESS;
    void* p = clEnqueueMapBuffer(q_, buffer_.mem(), CL_TRUE, CL_MAP_READ, 0, buffer_.bytes(), 0, nullptr, nullptr, &rc);
    ok(rc, "clEnqueueMapBuffer");
    const std::uint64_t sum = host_sum(static_cast<const std::uint32_t*>(p), n_);
    ok(clEnqueueUnmapMemObject(q_, buffer_.mem(), p, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
    return sum;
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  RawBuffer buffer_;
};

}  // namespace clzero_bench
