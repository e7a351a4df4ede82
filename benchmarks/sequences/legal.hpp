// SPDX-License-Identifier: Apache-2.0
// Every legal way, written by hand in raw OpenCL on one in-order queue, to
// make a kernel's output visible on the host, one inference at a time; and
// the references that are not legal (a buffer kept mapped while kernels write
// it, the kernel alone). Legal means by OpenCL 3.0 section 5.5.4 (a mapped
// region is unmapped before a command writes the object; a non-blocking map's
// pointer is used only after its event completed) and section 5.6 (fine SVM
// and USM host memory are coherent at event completion).
//
// Wait methods, how the host learns that the data is there:
//   blocking   the map or read is blocking (CL_TRUE); for fine SVM and USM,
//              clFinish (there is no blocking call of their own)
//   wait       clWaitForEvents on the last command's event
//   wait_both  clWaitForEvents on the kernel's and the last command's events
//   poll       clGetEventInfo in a loop on the last command's event
//   poll_both  the same on the kernel's event, then on the last command's
//   blocking_events   blocking, with the unmap's and the kernel's events
//              created (what clzero's map-at-view protocol enqueues on the
//              tensor's own in-order queue; it prices the two events)
//   blocking_flushed  the same, with the unmap's event in the kernel's wait
//              list and the queue flushed after the unmap: what kernels on
//              another queue need (OpenCL 3.0 section 5.13); it prices the
//              flush that wait_list(queue) saves on the tensor's own queue
// Every non-blocking variant flushes the queue before it waits.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "../raw_buffers.hpp"
#include "sequence.hpp"

namespace clzero_seq {

using clzero_bench::RawAllocation;
using clzero_bench::RawBuffer;

enum class Wait { blocking, wait, wait_both, poll, poll_both, blocking_events, blocking_flushed };

inline const char* wait_name(Wait w) {
  switch (w) {
    case Wait::blocking: return "blocking";
    case Wait::wait: return "wait";
    case Wait::wait_both: return "wait_both";
    case Wait::poll: return "poll";
    case Wait::poll_both: return "poll_both";
    case Wait::blocking_events: return "blocking_events";
    case Wait::blocking_flushed: return "blocking_flushed";
  }
  return "?";
}

inline const char* allocation_name(RawAllocation a) {
  switch (a) {
    case RawAllocation::device: return "device";
    case RawAllocation::alloc_host_ptr: return "alloc_host_ptr";
    case RawAllocation::use_host_ptr: return "use_host_ptr";
    case RawAllocation::nv_host_pinned: return "nv_host_pinned";
  }
  return "?";
}

inline bool needs_kernel_event(Wait w) {
  return w == Wait::wait_both || w == Wait::poll_both || w == Wait::blocking_events || w == Wait::blocking_flushed;
}

/// After a flush: waits the non-blocking way `w` for `last` (and `kernel`).
inline void await(Wait w, cl_event kernel, cl_event last) {
  switch (w) {
    case Wait::blocking:
    case Wait::blocking_events:
    case Wait::blocking_flushed: break;
    case Wait::wait: ok(clWaitForEvents(1, &last), "clWaitForEvents"); break;
    case Wait::wait_both: {
      const cl_event both[2] = {kernel, last};
      ok(clWaitForEvents(2, both), "clWaitForEvents");
      break;
    }
    case Wait::poll: poll(last); break;
    case Wait::poll_both:
      poll(kernel);
      poll(last);
      break;
  }
}

/// A cl_mem made visible by clEnqueueMapBuffer. Per inference (at_rest =
/// false): kernel; map; read; unmap (not waited for: the in-order queue runs
/// the next kernel after it). Mapped at rest (at_rest = true): unmap; kernel;
/// map; read; the mapping stays until the next inference.
class MapSequence final : public SerialSequence {
 public:
  MapSequence(std::size_t n, RawAllocation allocation, bool at_rest, Wait wait)
      : n_(n), buffer_(allocation, n * sizeof(std::uint32_t)), at_rest_(at_rest), wait_(wait) {
    const cl_mem m = buffer_.mem();
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
    if (at_rest_) host_ = buffer_.map_blocking(CL_MAP_READ);
  }
  ~MapSequence() override {
    if (host_ != nullptr) buffer_.unmap_and_finish(host_);
  }

  std::size_t run(std::uint32_t iter) override {
    const cl_mem m = buffer_.mem();
    const bool flushed = wait_ == Wait::blocking_flushed;
    const bool events = flushed || wait_ == Wait::blocking_events;
    if (at_rest_) {
      ok(clEnqueueUnmapMemObject(q_, m, host_, 0, nullptr, events ? unmapped_.out() : nullptr),
         "clEnqueueUnmapMemObject");
      host_ = nullptr;
      if (flushed) ok(clFlush(q_), "clFlush");
    }
    const cl_event after_unmap = flushed ? unmapped_.get() : nullptr;
    enqueue_producer(q_, kernel_.get(), n_, iter, after_unmap != nullptr ? 1 : 0,
                     after_unmap != nullptr ? &after_unmap : nullptr,
                     needs_kernel_event(wait_) ? kernel_done_.out() : nullptr);
    cl_int rc = CL_SUCCESS;
    void* p = nullptr;
    if (wait_ == Wait::blocking || events) {
      p = clEnqueueMapBuffer(q_, m, CL_TRUE, CL_MAP_READ, 0, buffer_.bytes(), 0, nullptr, nullptr, &rc);
      ok(rc, "clEnqueueMapBuffer");
    } else {
      p = clEnqueueMapBuffer(q_, m, CL_FALSE, CL_MAP_READ, 0, buffer_.bytes(), 0, nullptr, mapped_.out(), &rc);
      ok(rc, "clEnqueueMapBuffer");
      ok(clFlush(q_), "clFlush");
      await(wait_, kernel_done_.get(), mapped_.get());
    }
    const std::size_t wrong = count_wrong(static_cast<const std::uint32_t*>(p), n_, iter);
    if (at_rest_)
      host_ = p;
    else
      ok(clEnqueueUnmapMemObject(q_, m, p, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
    return wrong;
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  RawBuffer buffer_;
  bool at_rest_;
  Wait wait_;
  void* host_ = nullptr;
  Event kernel_done_, mapped_, unmapped_;
};

/// Where clEnqueueReadBuffer copies to.
enum class ReadInto { pinned_alloc_host_ptr, pinned_nv_host, pageable };

inline const char* read_into_name(ReadInto r) {
  switch (r) {
    case ReadInto::pinned_alloc_host_ptr: return "pinned_alloc_host_ptr";
    case ReadInto::pinned_nv_host: return "pinned_nv_host_pinned";
    case ReadInto::pageable: return "pageable";
  }
  return "?";
}

/// A device buffer; kernel; clEnqueueReadBuffer into host memory (pinned: a
/// buffer of that allocation mapped once for the sequence's life; pageable: a
/// std::vector); read.
class ReadSequence final : public SerialSequence {
 public:
  ReadSequence(std::size_t n, ReadInto into, Wait wait)
      : n_(n), device_(RawAllocation::device, n * sizeof(std::uint32_t)), wait_(wait) {
    const cl_mem m = device_.mem();
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
    if (into == ReadInto::pageable) {
      pageable_.assign(n, 0u);
      host_ = pageable_.data();
    } else {
      staging_ = std::make_unique<RawBuffer>(
          into == ReadInto::pinned_nv_host ? RawAllocation::nv_host_pinned : RawAllocation::alloc_host_ptr,
          device_.bytes());
      host_ = static_cast<std::uint32_t*>(staging_->map_blocking(CL_MAP_READ | CL_MAP_WRITE));
    }
  }
  ~ReadSequence() override {
    if (staging_) staging_->unmap_and_finish(host_);
  }

  std::size_t run(std::uint32_t iter) override {
    enqueue_producer(q_, kernel_.get(), n_, iter, 0, nullptr, needs_kernel_event(wait_) ? kernel_done_.out() : nullptr);
    if (wait_ == Wait::blocking) {
      ok(clEnqueueReadBuffer(q_, device_.mem(), CL_TRUE, 0, device_.bytes(), host_, 0, nullptr, nullptr),
         "clEnqueueReadBuffer");
    } else {
      ok(clEnqueueReadBuffer(q_, device_.mem(), CL_FALSE, 0, device_.bytes(), host_, 0, nullptr, read_.out()),
         "clEnqueueReadBuffer");
      ok(clFlush(q_), "clFlush");
      await(wait_, kernel_done_.get(), read_.get());
    }
    return count_wrong(host_, n_, iter);
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  RawBuffer device_;
  std::unique_ptr<RawBuffer> staging_;
  std::vector<std::uint32_t> pageable_;
  std::uint32_t* host_ = nullptr;
  Wait wait_;
  Event kernel_done_, read_;
};

#if defined(CL_VERSION_2_0)
/// Coarse-grained buffer SVM: the map/unmap protocol with the SVM calls,
/// mapped at rest or per inference.
class SvmCoarseSequence final : public SerialSequence {
 public:
  SvmCoarseSequence(std::size_t n, bool at_rest, Wait wait)
      : n_(n), bytes_(n * sizeof(std::uint32_t)), at_rest_(at_rest), wait_(wait) {
    ptr_ = clSVMAlloc(Rig::get().ctx(), CL_MEM_READ_WRITE, bytes_, 0);
    if (ptr_ == nullptr) ok(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clSVMAlloc");
    ok(clSetKernelArgSVMPointer(kernel_.get(), 0, ptr_), "clSetKernelArgSVMPointer");
    if (at_rest_) {
      ok(clEnqueueSVMMap(q_, CL_TRUE, CL_MAP_READ, ptr_, bytes_, 0, nullptr, nullptr), "clEnqueueSVMMap (set-up)");
      mapped_now_ = true;
    }
  }
  ~SvmCoarseSequence() override {
    if (mapped_now_) clEnqueueSVMUnmap(q_, ptr_, 0, nullptr, nullptr);
    clFinish(q_);
    clSVMFree(Rig::get().ctx(), ptr_);
  }

  std::size_t run(std::uint32_t iter) override {
    if (at_rest_) {
      ok(clEnqueueSVMUnmap(q_, ptr_, 0, nullptr, nullptr), "clEnqueueSVMUnmap");
      mapped_now_ = false;
    }
    enqueue_producer(q_, kernel_.get(), n_, iter, 0, nullptr, needs_kernel_event(wait_) ? kernel_done_.out() : nullptr);
    if (wait_ == Wait::blocking) {
      ok(clEnqueueSVMMap(q_, CL_TRUE, CL_MAP_READ, ptr_, bytes_, 0, nullptr, nullptr), "clEnqueueSVMMap");
    } else {
      ok(clEnqueueSVMMap(q_, CL_FALSE, CL_MAP_READ, ptr_, bytes_, 0, nullptr, mapped_.out()), "clEnqueueSVMMap");
      ok(clFlush(q_), "clFlush");
      await(wait_, kernel_done_.get(), mapped_.get());
    }
    mapped_now_ = true;
    const std::size_t wrong = count_wrong(static_cast<const std::uint32_t*>(ptr_), n_, iter);
    if (!at_rest_) {
      ok(clEnqueueSVMUnmap(q_, ptr_, 0, nullptr, nullptr), "clEnqueueSVMUnmap");
      mapped_now_ = false;
    }
    return wrong;
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_, bytes_;
  bool at_rest_;
  Wait wait_;
  void* ptr_ = nullptr;
  bool mapped_now_ = false;
  Event kernel_done_, mapped_;
};
#endif

/// Memory the host and the kernel share without maps: fine-grained buffer
/// SVM, or cl_intel_unified_shared_memory host allocations. Kernel; wait for
/// it (clFinish for "blocking", or its event); read.
class CoherentSequence final : public SerialSequence {
 public:
  enum class Memory { svm_fine, usm_host };

  CoherentSequence(std::size_t n, Memory memory, Wait wait) : n_(n), memory_(memory), wait_(wait) {
    const std::size_t bytes = n * sizeof(std::uint32_t);
    cl_int rc = CL_SUCCESS;
    if (memory == Memory::svm_fine) {
#if defined(CL_VERSION_2_0)
      ptr_ = clSVMAlloc(Rig::get().ctx(), CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, bytes, 0);
      if (ptr_ == nullptr) ok(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clSVMAlloc");
      ok(clSetKernelArgSVMPointer(kernel_.get(), 0, ptr_), "clSetKernelArgSVMPointer");
#endif
    } else {
      free_usm_ = clzero_bench::platform_function<clzero_bench::MemBlockingFreeIntelFn>("clMemBlockingFreeINTEL");
      ptr_ = clzero_bench::platform_function<clzero_bench::HostMemAllocIntelFn>("clHostMemAllocINTEL")(
          Rig::get().ctx(), nullptr, bytes, 0, &rc);
      ok(rc, "clHostMemAllocINTEL");
      ok(clzero_bench::platform_function<clzero_bench::SetKernelArgMemPointerIntelFn>("clSetKernelArgMemPointerINTEL")(
             kernel_.get(), 0, ptr_),
         "clSetKernelArgMemPointerINTEL");
    }
  }
  ~CoherentSequence() override {
    clFinish(q_);
#if defined(CL_VERSION_2_0)
    if (memory_ == Memory::svm_fine) clSVMFree(Rig::get().ctx(), ptr_);
#endif
    if (memory_ == Memory::usm_host && ptr_ != nullptr) free_usm_(Rig::get().ctx(), ptr_);
  }

  std::size_t run(std::uint32_t iter) override {
    if (wait_ == Wait::blocking) {
      enqueue_producer(q_, kernel_.get(), n_, iter, 0, nullptr, nullptr);
      ok(clFinish(q_), "clFinish");
    } else {
      enqueue_producer(q_, kernel_.get(), n_, iter, 0, nullptr, kernel_done_.out());
      ok(clFlush(q_), "clFlush");
      await(wait_ == Wait::wait_both   ? Wait::wait
            : wait_ == Wait::poll_both ? Wait::poll
                                       : wait_,
            nullptr, kernel_done_.get());
    }
    return count_wrong(static_cast<const std::uint32_t*>(ptr_), n_, iter);
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  Memory memory_;
  Wait wait_;
  void* ptr_ = nullptr;
  clzero_bench::MemBlockingFreeIntelFn free_usm_ = nullptr;
  Event kernel_done_;
};

/// Not legal, a reference: a buffer mapped once and kept mapped while
/// kernels write it (what users ask for); kernel; clFinish; read. Stale on
/// discrete GPUs; the spec leaves the result undefined everywhere.
class KeptMappedSequence final : public SerialSequence {
 public:
  KeptMappedSequence(std::size_t n, RawAllocation allocation) : n_(n), buffer_(allocation, n * sizeof(std::uint32_t)) {
    const cl_mem m = buffer_.mem();
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
    host_ = buffer_.map_blocking(CL_MAP_READ);
  }
  ~KeptMappedSequence() override { buffer_.unmap_and_finish(host_); }

  std::size_t run(std::uint32_t iter) override {
    enqueue_producer(q_, kernel_.get(), n_, iter, 0, nullptr, nullptr);
    ok(clFinish(q_), "clFinish");
    return count_wrong(static_cast<const std::uint32_t*>(host_), n_, iter);
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  RawBuffer buffer_;
  void* host_ = nullptr;
};

/// Wrong on purpose, made only with CLZERO_SEQUENCES_SELF_CHECK=1: every
/// third inference skips the kernel and reads the previous output, so that
/// bench.sequences_detect_stale can show the check catches stale data.
class SkipsEveryThirdKernel final : public SerialSequence {
 public:
  explicit SkipsEveryThirdKernel(std::size_t n)
      : n_(n), buffer_(RawAllocation::alloc_host_ptr, n * sizeof(std::uint32_t)) {
    const cl_mem m = buffer_.mem();
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
  }
  std::size_t run(std::uint32_t iter) override {
    if (++count_ % 3 != 0) enqueue_producer(q_, kernel_.get(), n_, iter, 0, nullptr, nullptr);
    cl_int rc = CL_SUCCESS;
    void* p = clEnqueueMapBuffer(q_, buffer_.mem(), CL_TRUE, CL_MAP_READ, 0, buffer_.bytes(), 0, nullptr, nullptr, &rc);
    ok(rc, "clEnqueueMapBuffer");
    const std::size_t wrong = count_wrong(static_cast<const std::uint32_t*>(p), n_, iter);
    ok(clEnqueueUnmapMemObject(q_, buffer_.mem(), p, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
    return wrong;
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  RawBuffer buffer_;
  unsigned count_ = 0;
};

/// The floor: the kernel into a device buffer and clFinish; nothing reaches
/// the host, nothing is read.
class FloorSequence final : public SerialSequence {
 public:
  explicit FloorSequence(std::size_t n) : n_(n), buffer_(RawAllocation::device, n * sizeof(std::uint32_t)) {
    const cl_mem m = buffer_.mem();
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
  }
  std::size_t run(std::uint32_t iter) override {
    enqueue_producer(q_, kernel_.get(), n_, iter, 0, nullptr, nullptr);
    ok(clFinish(q_), "clFinish");
    return 0;
  }
  bool checks_output() const override { return false; }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  RawBuffer buffer_;
};

}  // namespace clzero_seq
