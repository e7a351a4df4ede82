// SPDX-License-Identifier: Apache-2.0
// clzero's call sequences written out in raw OpenCL, the least a careful
// programmer would write for the same protocol: the other side of the
// wrapper-overhead comparison. Each issues the same enqueues, with the same
// wait lists, as the policy it mirrors (include/clzero/policy/*.hpp).
#pragma once

#include <CL/cl.h>

#include <clzero/clzero.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "bench_env.hpp"
#include "inference.hpp"
#include "raw_buffers.hpp"

namespace clzero_bench {

/// Persistent: mapped at rest; unmap, kernel after the unmap, non-blocking map
/// after the kernel, wait for the map (and, on NVIDIA host-located buffers,
/// for the kernel too: the driver completes that map early).
class RawPersistentSequence final : public Inference {
 public:
  RawPersistentSequence(std::size_t n, RawAllocation allocation)
      : n_(n),
        buffer_(allocation, n * sizeof(std::uint32_t)),
        wait_producer_(allocation == RawAllocation::nv_host_pinned) {
    host_ = buffer_.map_blocking(CL_MAP_READ);
  }
  ~RawPersistentSequence() override { buffer_.unmap_and_finish(host_); }

  std::uint64_t run(std::uint32_t iter) override {
    const cl_mem m = buffer_.mem();
    cl_event unmapped = nullptr, produced = nullptr, mapped = nullptr;
    ok(clEnqueueUnmapMemObject(q_, m, host_, 0, nullptr, &unmapped), "clEnqueueUnmapMemObject");
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
    ok(enqueue_producer(q_, kernel_.get(), n_, iter, 1, &unmapped, &produced), "clEnqueueNDRangeKernel");
    clReleaseEvent(unmapped);
    cl_int rc = CL_SUCCESS;
    host_ = clEnqueueMapBuffer(q_, m, CL_FALSE, CL_MAP_READ, 0, buffer_.bytes(), 1, &produced, &mapped, &rc);
    ok(rc, "clEnqueueMapBuffer");
    ok(clFlush(q_), "clFlush");
    ok(clWaitForEvents(1, &mapped), "clWaitForEvents");
    if (wait_producer_) ok(clWaitForEvents(1, &produced), "clWaitForEvents");
    clReleaseEvent(produced);
    clReleaseEvent(mapped);
    return host_sum(static_cast<const std::uint32_t*>(host_), n_);
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  RawBuffer buffer_;
  bool wait_producer_;
  void* host_ = nullptr;
};

/// MapPerInference: kernel after the last unmap, blocking map after the
/// kernel, read, unmap (not waited for: the next kernel waits on it).
class RawMapPerInferenceSequence final : public Inference {
 public:
  explicit RawMapPerInferenceSequence(std::size_t n)
      : n_(n), buffer_(RawAllocation::alloc_host_ptr, n * sizeof(std::uint32_t)) {}
  ~RawMapPerInferenceSequence() override {
    if (unmapped_ != nullptr) {
      clWaitForEvents(1, &unmapped_);
      clReleaseEvent(unmapped_);
    }
  }

  std::uint64_t run(std::uint32_t iter) override {
    const cl_mem m = buffer_.mem();
    cl_event produced = nullptr;
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
    ok(enqueue_producer(q_, kernel_.get(), n_, iter, unmapped_ != nullptr ? 1 : 0,
                        unmapped_ != nullptr ? &unmapped_ : nullptr, &produced),
       "clEnqueueNDRangeKernel");
    if (unmapped_ != nullptr) clReleaseEvent(unmapped_);
    unmapped_ = nullptr;
    cl_int rc = CL_SUCCESS;
    void* p = clEnqueueMapBuffer(q_, m, CL_TRUE, CL_MAP_READ, 0, buffer_.bytes(), 1, &produced, nullptr, &rc);
    clReleaseEvent(produced);
    ok(rc, "clEnqueueMapBuffer");
    const std::uint64_t sum = host_sum(static_cast<const std::uint32_t*>(p), n_);
    ok(clEnqueueUnmapMemObject(q_, m, p, 0, nullptr, &unmapped_), "clEnqueueUnmapMemObject");
    return sum;
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  RawBuffer buffer_;
  cl_event unmapped_ = nullptr;
};

/// CopyToPinned: kernel after the previous kernel, non-blocking
/// clEnqueueReadBuffer into staging mapped once, wait for the read.
class RawCopyToPinnedSequence final : public Inference {
 public:
  explicit RawCopyToPinnedSequence(std::size_t n)
      : n_(n),
        device_(RawAllocation::device, n * sizeof(std::uint32_t)),
        staging_(RawAllocation::alloc_host_ptr, n * sizeof(std::uint32_t)) {
    host_ = static_cast<std::uint32_t*>(staging_.map_blocking(CL_MAP_READ | CL_MAP_WRITE));
  }
  ~RawCopyToPinnedSequence() override {
    if (last_kernel_ != nullptr) clReleaseEvent(last_kernel_);
    staging_.unmap_and_finish(host_);
  }

  std::uint64_t run(std::uint32_t iter) override {
    const cl_mem m = device_.mem();
    cl_event produced = nullptr, downloaded = nullptr;
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
    ok(enqueue_producer(q_, kernel_.get(), n_, iter, last_kernel_ != nullptr ? 1 : 0,
                        last_kernel_ != nullptr ? &last_kernel_ : nullptr, &produced),
       "clEnqueueNDRangeKernel");
    if (last_kernel_ != nullptr) clReleaseEvent(last_kernel_);
    last_kernel_ = produced;
    ok(clEnqueueReadBuffer(q_, m, CL_FALSE, 0, device_.bytes(), host_, 1, &produced, &downloaded),
       "clEnqueueReadBuffer");
    ok(clFlush(q_), "clFlush");
    const cl_int rc = clWaitForEvents(1, &downloaded);
    clReleaseEvent(downloaded);
    ok(rc, "clWaitForEvents");
    return host_sum(host_, n_);
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  RawBuffer device_;
  RawBuffer staging_;
  std::uint32_t* host_ = nullptr;
  cl_event last_kernel_ = nullptr;
};

/// Fine-grained buffer SVM and Intel USM host memory: the kernel takes the
/// pointer, the host waits for the kernel's event and reads.
class RawCoherentSequence final : public Inference {
 public:
  enum class Memory { svm_fine, usm_host };

  RawCoherentSequence(std::size_t n, Memory memory) : n_(n), memory_(memory) {
    const Rig& rig = Rig::get();
    const std::size_t bytes = n * sizeof(std::uint32_t);
    if (memory == Memory::svm_fine) {
      ptr_ = clSVMAlloc(rig.ctx(), CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, bytes, 0);
      if (ptr_ == nullptr) ok(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clSVMAlloc");
    } else {
      set_arg_usm_ = platform_function<SetKernelArgMemPointerIntelFn>("clSetKernelArgMemPointerINTEL");
      free_usm_ = platform_function<MemBlockingFreeIntelFn>("clMemBlockingFreeINTEL");
      cl_int rc = CL_SUCCESS;
      ptr_ = platform_function<HostMemAllocIntelFn>("clHostMemAllocINTEL")(rig.ctx(), nullptr, bytes, 0, &rc);
      ok(rc, "clHostMemAllocINTEL");
    }
  }
  ~RawCoherentSequence() override {
    clFinish(q_);
    if (memory_ == Memory::svm_fine)
      clSVMFree(Rig::get().ctx(), ptr_);
    else
      free_usm_(Rig::get().ctx(), ptr_);
  }

  std::uint64_t run(std::uint32_t iter) override {
    if (memory_ == Memory::svm_fine)
      ok(clSetKernelArgSVMPointer(kernel_.get(), 0, ptr_), "clSetKernelArgSVMPointer");
    else
      ok(set_arg_usm_(kernel_.get(), 0, ptr_), "clSetKernelArgMemPointerINTEL");
    cl_event produced = nullptr;
    ok(enqueue_producer(q_, kernel_.get(), n_, iter, 0, nullptr, &produced), "clEnqueueNDRangeKernel");
    ok(clFlush(q_), "clFlush");
    const cl_int rc = clWaitForEvents(1, &produced);
    clReleaseEvent(produced);
    ok(rc, "clWaitForEvents");
    return host_sum(static_cast<const std::uint32_t*>(ptr_), n_);
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  Memory memory_;
  void* ptr_ = nullptr;
  SetKernelArgMemPointerIntelFn set_arg_usm_ = nullptr;
  MemBlockingFreeIntelFn free_usm_ = nullptr;
};

/// Coarse-grained buffer SVM: Persistent's protocol with the SVM calls.
class RawSvmCoarseSequence final : public Inference {
 public:
  explicit RawSvmCoarseSequence(std::size_t n) : n_(n), bytes_(n * sizeof(std::uint32_t)) {
    ptr_ = clSVMAlloc(Rig::get().ctx(), CL_MEM_READ_WRITE, bytes_, 0);
    if (ptr_ == nullptr) ok(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clSVMAlloc");
    ok(clEnqueueSVMMap(q_, CL_TRUE, CL_MAP_READ, ptr_, bytes_, 0, nullptr, nullptr), "clEnqueueSVMMap (set-up)");
  }
  ~RawSvmCoarseSequence() override {
    clEnqueueSVMUnmap(q_, ptr_, 0, nullptr, nullptr);
    clFinish(q_);
    clSVMFree(Rig::get().ctx(), ptr_);
  }

  std::uint64_t run(std::uint32_t iter) override {
    cl_event unmapped = nullptr, produced = nullptr, mapped = nullptr;
    ok(clEnqueueSVMUnmap(q_, ptr_, 0, nullptr, &unmapped), "clEnqueueSVMUnmap");
    ok(clSetKernelArgSVMPointer(kernel_.get(), 0, ptr_), "clSetKernelArgSVMPointer");
    ok(enqueue_producer(q_, kernel_.get(), n_, iter, 1, &unmapped, &produced), "clEnqueueNDRangeKernel");
    clReleaseEvent(unmapped);
    ok(clEnqueueSVMMap(q_, CL_FALSE, CL_MAP_READ, ptr_, bytes_, 1, &produced, &mapped), "clEnqueueSVMMap");
    clReleaseEvent(produced);
    ok(clFlush(q_), "clFlush");
    const cl_int rc = clWaitForEvents(1, &mapped);
    clReleaseEvent(mapped);
    ok(rc, "clWaitForEvents");
    return host_sum(static_cast<const std::uint32_t*>(ptr_), n_);
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  std::size_t bytes_;
  void* ptr_ = nullptr;
};

}  // namespace clzero_bench
