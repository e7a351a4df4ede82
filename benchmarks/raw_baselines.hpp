// SPDX-License-Identifier: Apache-2.0
// The ways engines read an output today, written plainly in raw OpenCL (kernel
// arguments set once, as engines do at load time), and the two floors.
//
//   raw.map_unmap     blocking map, read, unmap every inference on a
//                     CL_MEM_ALLOC_HOST_PTR buffer (MNN 2019, TNN).
//   raw.read_pinned   blocking clEnqueueReadBuffer from a device buffer into
//                     pinned memory (an ALLOC_HOST_PTR buffer mapped once).
//   raw.read_pageable the same into a std::vector (MNN today).
//   floor.kernel_finish  the kernel into a device buffer, then clFinish.
//   floor.host_read      the host's read of n elements of ordinary memory.
#pragma once

#include <CL/cl.h>

#include <clzero/clzero.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "bench_env.hpp"
#include "inference.hpp"
#include "raw_buffers.hpp"

namespace clzero_bench {

class RawMapUnmap final : public Inference {
 public:
  explicit RawMapUnmap(std::size_t n) : n_(n), buffer_(RawAllocation::alloc_host_ptr, n * sizeof(std::uint32_t)) {
    const cl_mem m = buffer_.mem();
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
  }

  std::uint64_t run(std::uint32_t iter) override {
    ok(enqueue_producer(q_, kernel_.get(), n_, iter, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
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

/// clEnqueueReadBuffer into pinned staging (pinned = true) or a std::vector.
class RawReadBuffer final : public Inference {
 public:
  RawReadBuffer(std::size_t n, bool pinned) : n_(n), device_(RawAllocation::device, n * sizeof(std::uint32_t)) {
    const cl_mem m = device_.mem();
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
    if (pinned) {
      staging_ = std::make_unique<RawBuffer>(RawAllocation::alloc_host_ptr, device_.bytes());
      host_ = static_cast<std::uint32_t*>(staging_->map_blocking(CL_MAP_READ | CL_MAP_WRITE));
    } else {
      pageable_.assign(n, 0u);  // touched now, not on the first read
      host_ = pageable_.data();
    }
  }
  ~RawReadBuffer() override {
    if (staging_) staging_->unmap_and_finish(host_);
  }

  std::uint64_t run(std::uint32_t iter) override {
    ok(enqueue_producer(q_, kernel_.get(), n_, iter, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
    ok(clEnqueueReadBuffer(q_, device_.mem(), CL_TRUE, 0, device_.bytes(), host_, 0, nullptr, nullptr),
       "clEnqueueReadBuffer");
    return host_sum(host_, n_);
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  RawBuffer device_;
  std::unique_ptr<RawBuffer> staging_;
  std::vector<std::uint32_t> pageable_;
  std::uint32_t* host_ = nullptr;
};

class FloorKernelFinish final : public Inference {
 public:
  explicit FloorKernelFinish(std::size_t n) : n_(n), device_(RawAllocation::device, n * sizeof(std::uint32_t)) {
    const cl_mem m = device_.mem();
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
  }

  std::uint64_t run(std::uint32_t iter) override {
    ok(enqueue_producer(q_, kernel_.get(), n_, iter, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
    ok(clFinish(q_), "clFinish");
    return 0;
  }
  bool checks_output() const override { return false; }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  RawBuffer device_;
};

/// Reads memory that is already resident (and, up to the cache sizes, cached):
/// a lower bound for reading what a kernel just wrote.
class FloorHostRead final : public Inference {
 public:
  explicit FloorHostRead(std::size_t n) : data_(n) {
    for (std::size_t i = 0; i < n; ++i) data_[i] = static_cast<std::uint32_t>(i + 1);
  }
  std::uint64_t run(std::uint32_t) override { return host_sum(data_.data(), data_.size()); }
  bool checks_output() const override { return false; }

 private:
  std::vector<std::uint32_t> data_;
};

}  // namespace clzero_bench
