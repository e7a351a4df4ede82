// SPDX-License-Identifier: Apache-2.0
// Plain OpenCL allocations for the raw baselines, made the way an engine
// makes them by hand: clCreateBuffer with CL_MEM_ALLOC_HOST_PTR or
// CL_MEM_USE_HOST_PTR, NVIDIA's clCreateBufferNV, SVM, Intel USM host memory.
// Nothing here is timed; the per-inference calls live in the baselines.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "bench_env.hpp"

namespace clzero_bench {

enum class RawAllocation { device, alloc_host_ptr, use_host_ptr, nv_host_pinned };

// cl_nv_create_buffer's values, fixed by its specification (no Khronos header
// declares the extension).
using CreateBufferNvFn = cl_mem(CL_API_CALL*)(cl_context, cl_mem_flags, cl_bitfield, size_t, void*, cl_int*);
constexpr cl_bitfield kMemLocationHostNv = 1u << 0;
constexpr cl_bitfield kMemPinnedNv = 1u << 1;

/// One cl_mem of `bytes` bytes, released (after the queue drained) with its
/// host memory.
class RawBuffer {
 public:
  RawBuffer(RawAllocation kind, std::size_t bytes) : bytes_(bytes) {
    const Rig& rig = Rig::get();
    cl_int rc = CL_SUCCESS;
    switch (kind) {
      case RawAllocation::device: mem_ = clCreateBuffer(rig.ctx(), CL_MEM_READ_WRITE, bytes, nullptr, &rc); break;
      case RawAllocation::alloc_host_ptr:
        mem_ = clCreateBuffer(rig.ctx(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &rc);
        break;
      case RawAllocation::use_host_ptr: {
        const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
        if (posix_memalign(&host_, page, (bytes + page - 1) / page * page) != 0)
          throw std::runtime_error("posix_memalign failed");
        mem_ = clCreateBuffer(rig.ctx(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host_, &rc);
        break;
      }
      case RawAllocation::nv_host_pinned: {
        auto create = reinterpret_cast<CreateBufferNvFn>(
            clGetExtensionFunctionAddressForPlatform(rig.platform, "clCreateBufferNV"));
        if (create == nullptr) throw std::runtime_error("clCreateBufferNV is not offered");
        mem_ = create(rig.ctx(), CL_MEM_READ_WRITE, kMemLocationHostNv | kMemPinnedNv, bytes, nullptr, &rc);
        break;
      }
    }
    ok(rc, "creating a raw buffer");
  }
  RawBuffer(const RawBuffer&) = delete;
  RawBuffer& operator=(const RawBuffer&) = delete;
  ~RawBuffer() {
    clFinish(Rig::get().q());
    clReleaseMemObject(mem_);
    // USE_HOST_PTR memory may be used until the object is really deleted; the
    // queue is drained and nothing else holds the buffer.
    std::free(host_);
  }

  cl_mem mem() const { return mem_; }
  std::size_t bytes() const { return bytes_; }

  /// A blocking map of the whole buffer (set-up only).
  void* map_blocking(cl_map_flags flags) {
    cl_int rc = CL_SUCCESS;
    void* p = clEnqueueMapBuffer(Rig::get().q(), mem_, CL_TRUE, flags, 0, bytes_, 0, nullptr, nullptr, &rc);
    ok(rc, "clEnqueueMapBuffer (set-up)");
    return p;
  }
  void unmap_and_finish(void* p) {
    ok(clEnqueueUnmapMemObject(Rig::get().q(), mem_, p, 0, nullptr, nullptr), "clEnqueueUnmapMemObject (set-up)");
    ok(clFinish(Rig::get().q()), "clFinish (set-up)");
  }

 private:
  cl_mem mem_ = nullptr;
  void* host_ = nullptr;
  std::size_t bytes_;
};

// cl_intel_unified_shared_memory entry points used by the raw USM sequence.
using HostMemAllocIntelFn = void*(CL_API_CALL*)(cl_context, const cl_bitfield*, size_t, cl_uint, cl_int*);
using MemBlockingFreeIntelFn = cl_int(CL_API_CALL*)(cl_context, void*);
using SetKernelArgMemPointerIntelFn = cl_int(CL_API_CALL*)(cl_kernel, cl_uint, const void*);

template <class Fn>
Fn platform_function(const char* name) {
  auto f = reinterpret_cast<Fn>(clGetExtensionFunctionAddressForPlatform(Rig::get().platform, name));
  if (f == nullptr) throw std::runtime_error(std::string(name) + " is not offered");
  return f;
}

}  // namespace clzero_bench
