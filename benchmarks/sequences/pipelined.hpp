// SPDX-License-Identifier: Apache-2.0
// Pipelined sequences: rings of K slots on one in-order queue, so that the
// host reads inference i while the device runs inferences i+1 .. i+K-1. A
// block primes the ring with K inferences, then reads each in turn and
// enqueues the next into the slot it has just read, and ends with nothing in
// flight. Hand-written rings over every host path the device offers, and
// clzero's TensorRing with each policy; every slot is read only after the
// events of its own commands (never the whole queue), and every element of
// every inference is checked.
#pragma once

#include <CL/cl.h>

#include <clzero/clzero.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "../raw_buffers.hpp"
#include "legal.hpp"
#include "sequence.hpp"

namespace clzero_seq {

/// Runs blocks over `slots` slots of type Slot, which enqueue one inference
/// (enqueue) and wait for and check it (wait_and_check).
template <class Slot>
class Ring final : public Sequence {
 public:
  template <class... Args>
  Ring(std::size_t n, std::size_t slots, const Args&... args) : n_(n) {
    for (std::size_t i = 0; i < slots; ++i) slots_.push_back(std::make_unique<Slot>(n, args...));
  }

  std::size_t run_block(std::uint32_t first, std::size_t count) override {
    const std::size_t k = slots_.size();
    iters_.resize(count);
    std::uint32_t iter = first;
    for (std::size_t i = 0; i < count; ++i, iter = next_iter(iter)) iters_[i] = iter;
    for (std::size_t i = 0; i < k && i < count; ++i) slots_[i]->enqueue(q_, n_, iters_[i]);
    std::size_t stale = 0;
    for (std::size_t i = 0; i < count; ++i) {
      stale += slots_[i % k]->wait_and_check(n_, iters_[i]) != 0 ? 1 : 0;
      if (i + k < count) slots_[i % k]->enqueue(q_, n_, iters_[i + k]);
    }
    return stale;
  }

 private:
  cl_command_queue q_ = Rig::get().q();
  std::size_t n_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::uint32_t> iters_;
};

/// A cl_mem mapped at rest: unmap; kernel; non-blocking map; flush. The
/// host polls the kernel's event, then the map's (both: on NVIDIA's
/// host-located memory the map alone completes too early).
class MapSlot {
 public:
  MapSlot(std::size_t n, RawAllocation allocation) : buffer_(allocation, n * sizeof(std::uint32_t)) {
    const cl_mem m = buffer_.mem();
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
    host_ = buffer_.map_blocking(CL_MAP_READ);
  }
  ~MapSlot() { buffer_.unmap_and_finish(host_); }

  void enqueue(cl_command_queue q, std::size_t n, std::uint32_t iter) {
    const cl_mem m = buffer_.mem();
    ok(clEnqueueUnmapMemObject(q, m, host_, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
    enqueue_producer(q, kernel_.get(), n, iter, 0, nullptr, produced_.out());
    cl_int rc = CL_SUCCESS;
    host_ = clEnqueueMapBuffer(q, m, CL_FALSE, CL_MAP_READ, 0, buffer_.bytes(), 0, nullptr, mapped_.out(), &rc);
    ok(rc, "clEnqueueMapBuffer");
    ok(clFlush(q), "clFlush");
  }
  std::size_t wait_and_check(std::size_t n, std::uint32_t iter) {
    poll(produced_.get());
    poll(mapped_.get());
    return count_wrong(static_cast<const std::uint32_t*>(host_), n, iter);
  }

 private:
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  RawBuffer buffer_;
  void* host_ = nullptr;
  Event produced_, mapped_;
};

/// A device buffer; kernel; non-blocking clEnqueueReadBuffer into the
/// slot's pinned memory (a buffer mapped once); flush. The host polls the read.
class ReadSlot {
 public:
  ReadSlot(std::size_t n, ReadInto into)
      : device_(RawAllocation::device, n * sizeof(std::uint32_t)),
        staging_(into == ReadInto::pinned_nv_host ? RawAllocation::nv_host_pinned : RawAllocation::alloc_host_ptr,
                 n * sizeof(std::uint32_t)) {
    const cl_mem m = device_.mem();
    ok(clSetKernelArg(kernel_.get(), 0, sizeof m, &m), "clSetKernelArg");
    host_ = static_cast<std::uint32_t*>(staging_.map_blocking(CL_MAP_READ | CL_MAP_WRITE));
  }
  ~ReadSlot() { staging_.unmap_and_finish(host_); }

  void enqueue(cl_command_queue q, std::size_t n, std::uint32_t iter) {
    enqueue_producer(q, kernel_.get(), n, iter, 0, nullptr, nullptr);
    ok(clEnqueueReadBuffer(q, device_.mem(), CL_FALSE, 0, device_.bytes(), host_, 0, nullptr, read_.out()),
       "clEnqueueReadBuffer");
    ok(clFlush(q), "clFlush");
  }
  std::size_t wait_and_check(std::size_t n, std::uint32_t iter) {
    poll(read_.get());
    return count_wrong(host_, n, iter);
  }

 private:
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  RawBuffer device_;
  RawBuffer staging_;
  std::uint32_t* host_ = nullptr;
  Event read_;
};

/// Fine-grained SVM or USM host memory: kernel; flush. The host polls the kernel.
class CoherentSlot {
 public:
  CoherentSlot(std::size_t n, CoherentSequence::Memory memory) : memory_(memory) {
    const std::size_t bytes = n * sizeof(std::uint32_t);
    if (memory == CoherentSequence::Memory::svm_fine) {
#if defined(CL_VERSION_2_0)
      ptr_ = clSVMAlloc(Rig::get().ctx(), CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, bytes, 0);
      if (ptr_ == nullptr) ok(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clSVMAlloc");
      ok(clSetKernelArgSVMPointer(kernel_.get(), 0, ptr_), "clSetKernelArgSVMPointer");
#endif
    } else {
      cl_int rc = CL_SUCCESS;
      free_usm_ = clzero_bench::platform_function<clzero_bench::MemBlockingFreeIntelFn>("clMemBlockingFreeINTEL");
      ptr_ = clzero_bench::platform_function<clzero_bench::HostMemAllocIntelFn>("clHostMemAllocINTEL")(
          Rig::get().ctx(), nullptr, bytes, 0, &rc);
      ok(rc, "clHostMemAllocINTEL");
      ok(clzero_bench::platform_function<clzero_bench::SetKernelArgMemPointerIntelFn>("clSetKernelArgMemPointerINTEL")(
             kernel_.get(), 0, ptr_),
         "clSetKernelArgMemPointerINTEL");
    }
  }
  ~CoherentSlot() {
    clFinish(Rig::get().q());
#if defined(CL_VERSION_2_0)
    if (memory_ == CoherentSequence::Memory::svm_fine) clSVMFree(Rig::get().ctx(), ptr_);
#endif
    if (memory_ == CoherentSequence::Memory::usm_host && ptr_ != nullptr) free_usm_(Rig::get().ctx(), ptr_);
  }

  void enqueue(cl_command_queue q, std::size_t n, std::uint32_t iter) {
    enqueue_producer(q, kernel_.get(), n, iter, 0, nullptr, produced_.out());
    ok(clFlush(q), "clFlush");
  }
  std::size_t wait_and_check(std::size_t n, std::uint32_t iter) {
    poll(produced_.get());
    return count_wrong(static_cast<const std::uint32_t*>(ptr_), n, iter);
  }

 private:
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  CoherentSequence::Memory memory_;
  void* ptr_ = nullptr;
  clzero_bench::MemBlockingFreeIntelFn free_usm_ = nullptr;
  Event produced_;
};

#if defined(CL_VERSION_2_0)
/// Coarse-grained SVM mapped at rest: SVM unmap; kernel; non-blocking SVM
/// map; flush. The host polls the kernel, then the map.
class SvmCoarseSlot {
 public:
  explicit SvmCoarseSlot(std::size_t n) : bytes_(n * sizeof(std::uint32_t)) {
    ptr_ = clSVMAlloc(Rig::get().ctx(), CL_MEM_READ_WRITE, bytes_, 0);
    if (ptr_ == nullptr) ok(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clSVMAlloc");
    ok(clSetKernelArgSVMPointer(kernel_.get(), 0, ptr_), "clSetKernelArgSVMPointer");
    ok(clEnqueueSVMMap(Rig::get().q(), CL_TRUE, CL_MAP_READ, ptr_, bytes_, 0, nullptr, nullptr),
       "clEnqueueSVMMap (set-up)");
  }
  ~SvmCoarseSlot() {
    clEnqueueSVMUnmap(Rig::get().q(), ptr_, 0, nullptr, nullptr);
    clFinish(Rig::get().q());
    clSVMFree(Rig::get().ctx(), ptr_);
  }

  void enqueue(cl_command_queue q, std::size_t n, std::uint32_t iter) {
    ok(clEnqueueSVMUnmap(q, ptr_, 0, nullptr, nullptr), "clEnqueueSVMUnmap");
    enqueue_producer(q, kernel_.get(), n, iter, 0, nullptr, produced_.out());
    ok(clEnqueueSVMMap(q, CL_FALSE, CL_MAP_READ, ptr_, bytes_, 0, nullptr, mapped_.out()), "clEnqueueSVMMap");
    ok(clFlush(q), "clFlush");
  }
  std::size_t wait_and_check(std::size_t n, std::uint32_t iter) {
    poll(produced_.get());
    poll(mapped_.get());
    return count_wrong(static_cast<const std::uint32_t*>(ptr_), n, iter);
  }

 private:
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t bytes_;
  void* ptr_ = nullptr;
  Event produced_, mapped_;
};
#endif

/// One inference through clzero, as the README shows it: the kernel's
/// argument bound once (as the hand-written sequences set theirs), then
/// device_access, enqueue with the access's wait list and event slot for the
/// tensor's queue, read_view.
template <class Policy>
class ClzeroSequence final : public SerialSequence {
 public:
  ClzeroSequence(std::size_t n, const typename Policy::Options& options)
      : n_(n), tensor_(Rig::get().ctx(), q_, clzero::Shape{n}, clzero::Intent::output, options) {
    tensor_.bind(kernel_.get(), 0);
  }

  std::size_t run(std::uint32_t iter) override {
    {
      auto dev = tensor_.device_access();
      enqueue_producer(q_, kernel_.get(), n_, iter, dev.wait_count(q_), dev.wait_list(q_), dev.event_slot(q_));
    }
    auto view = tensor_.read_view();
    return count_wrong(view.data(), view.size(), iter);
  }
  const clzero::MappedTensor<std::uint32_t, Policy>& tensor() const { return tensor_; }

 private:
  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  clzero::MappedTensor<std::uint32_t, Policy> tensor_;
};

/// clzero's TensorRing: the same block order as the hand-written rings.
/// `spin_us` > 0 sets clzero's spin budget (set_spin_wait) for this
/// variant's blocks only, to price the default budget against the
/// hand-written rings, which poll without a bound.
template <class Policy>
class ClzeroRing final : public Sequence {
 public:
  ClzeroRing(std::size_t n, std::size_t slots, const typename Policy::Options& options, long long spin_us = 0)
      : n_(n),
        ring_(Rig::get().ctx(), q_, clzero::Shape{n}, clzero::Intent::output, slots, options),
        spin_us_(spin_us) {}

  std::size_t run_block(std::uint32_t first, std::size_t count) override {
    if (spin_us_ <= 0) return run_ring(first, count);
    const long long before = clzero::detail::spin_wait_ns().load();
    clzero::set_spin_wait(std::chrono::microseconds(spin_us_));
    const std::size_t stale = run_ring(first, count);
    clzero::set_spin_wait(std::chrono::nanoseconds(before));
    return stale;
  }

 private:
  std::size_t run_ring(std::uint32_t first, std::size_t count) {
    const std::size_t k = ring_.slots();
    iters_.resize(count);
    std::uint32_t iter = first;
    for (std::size_t i = 0; i < count; ++i, iter = next_iter(iter)) iters_[i] = iter;
    for (std::size_t i = 0; i < k && i < count; ++i) enqueue(i, iters_[i]);
    std::size_t stale = 0;
    for (std::size_t i = 0; i < count; ++i) {
      {
        auto view = ring_[i].read_view();
        stale += count_wrong(view.data(), view.size(), iters_[i]) != 0 ? 1 : 0;
      }
      if (i + k < count) enqueue(i + k, iters_[i + k]);
    }
    return stale;
  }

  void enqueue(std::size_t inference, std::uint32_t iter) {
    auto dev = ring_[inference].device_access();
    dev.bind(kernel_.get(), 0);
    enqueue_producer(q_, kernel_.get(), n_, iter, dev.wait_count(q_), dev.wait_list(q_), dev.event_slot(q_));
  }

  cl_command_queue q_ = Rig::get().q();
  clzero::KernelHandle kernel_ = Rig::get().make_kernel();
  std::size_t n_;
  clzero::TensorRing<std::uint32_t, Policy> ring_;
  long long spin_us_;
  std::vector<std::uint32_t> iters_;
};

}  // namespace clzero_seq
