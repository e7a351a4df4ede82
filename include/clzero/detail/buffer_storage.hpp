// SPDX-License-Identifier: Apache-2.0
// BufferStorage: one cl_mem made by one of the Allocation kinds, and the
// buffer forms of the steps every protocol uses (map, unmap, fill, bind).
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#if defined(_WIN32)
#include <malloc.h>
#else
#include <unistd.h>
#endif

#include "clzero/allocation.hpp"
#include "clzero/detail/extensions.hpp"
#include "clzero/detail/queue_context.hpp"
#include "clzero/device_caps.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/handle.hpp"

namespace clzero {
namespace detail {

inline std::size_t page_size() noexcept {
#if defined(_WIN32)
  return 4096;
#else
  const long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? static_cast<std::size_t>(p) : 4096;
#endif
}

inline void* aligned_host_alloc(std::size_t alignment, std::size_t bytes) noexcept {
#if defined(_WIN32)
  return _aligned_malloc(bytes, alignment);
#else
  void* p = nullptr;
  return posix_memalign(&p, alignment, bytes) == 0 ? p : nullptr;
#endif
}

inline void aligned_host_free(void* p) noexcept {
#if defined(_WIN32)
  _aligned_free(p);
#else
  std::free(p);
#endif
}

inline std::size_t round_up(std::size_t n, std::size_t to) noexcept { return (n + to - 1) / to * to; }

/// Frees host memory the tensor lent to a cl_mem once the implementation has
/// really deleted the object, which may be after clReleaseMemObject returns
/// (commands still using it keep it alive; OpenCL 3.0 section 5.5.1).
inline void CL_CALLBACK free_host_memory_callback(cl_mem, void* memory) { aligned_host_free(memory); }

class BufferStorage {
 public:
  BufferStorage(const QueueContext& q, std::size_t bytes, const Allocation& allocation, const char* doing)
      : bytes_(bytes) {
    if (allocation.kind() == Allocation::Kind::alloc_host_ptr) {
      create_plain(q, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, doing);
      return;
    }
    const DeviceCaps caps = DeviceCaps::query(q.device);
    switch (allocation.kind()) {
      case Allocation::Kind::use_host_ptr: create_over_owned_memory(q, nullptr, doing); break;
      case Allocation::Kind::nv_host_pinned: create_nv_host_pinned(q, caps, doing); break;
      case Allocation::Kind::arm_import_host: {
        if (!caps.arm_import_memory) unsupported(caps, "cl_arm_import_memory", "Arm Mali", doing);
        auto import = extension_function<ImportMemoryArmFn>(q.platform, "clImportMemoryARM");
        if (import == nullptr) unsupported(caps, "clImportMemoryARM", "Arm Mali", doing);
        create_over_owned_memory(q, import, doing);
        break;
      }
      case Allocation::Kind::qcom_ext_host_ptr: {
        if (!caps.qcom_ext_host_ptr) unsupported(caps, "cl_qcom_ext_host_ptr", "Qualcomm Adreno", doing);
        if (allocation.qcom_descriptor() == nullptr)
          raise_invalid(doing, "Allocation::qcom_ext_host_ptr needs the engine's ION or dma-buf descriptor");
        cl_int rc = CL_SUCCESS;
        cl_mem m = clCreateBuffer(q.ctx(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR | kMemExtHostPtrQcom, bytes_,
                                  allocation.qcom_descriptor(), &rc);
        check(rc, "clCreateBuffer", doing);
        mem_ = MemHandle::adopt(m);
        break;
      }
      case Allocation::Kind::alloc_host_ptr: break;
    }
  }

  /// A buffer with the given flags (CopyToPinned's device-resident buffer).
  BufferStorage(const QueueContext& q, std::size_t bytes, cl_mem_flags flags, const char* doing) : bytes_(bytes) {
    create_plain(q, flags, doing);
  }

  void keep_memory() noexcept {}  // the runtime keeps a buffer until its commands finish

  /// Whether host views map, blocking, as they open: the device's measured
  /// wait for buffers (detail/wait_method.hpp).
  static bool maps_at_view(const QueueContext& q) noexcept { return q.map_at_view; }

  cl_mem mem() const noexcept { return mem_.get(); }
  void* svm_pointer() const noexcept { return nullptr; }
  std::size_t bytes() const noexcept { return bytes_; }

  /// clEnqueueMapBuffer over the whole tensor. Non-blocking unless `blocking`:
  /// the pointer may be used once *event completes (OpenCL 3.0 section 5.5.4).
  void* map(cl_command_queue q, cl_map_flags flags, cl_bool blocking, const EventList& waits, cl_event* event,
            const char* who) {
    cl_int rc = CL_SUCCESS;
    void* p = clEnqueueMapBuffer(q, mem_.get(), blocking, flags, 0, bytes_, waits.count(), waits.data(), event, &rc);
    check(rc, "clEnqueueMapBuffer", who, "mapping the tensor for the host");
    return p;
  }

  /// clEnqueueUnmapMemObject of exactly the pointer the matching map returned.
  cl_int unmap(cl_command_queue q, void* p, const EventList& waits, cl_event* event) noexcept {
    return clEnqueueUnmapMemObject(q, mem_.get(), p, waits.count(), waits.data(), event);
  }
  static constexpr const char* unmap_api() noexcept { return "clEnqueueUnmapMemObject"; }

  /// Zeroes the contents on the device (clEnqueueFillBuffer, byte pattern).
  void fill_zero(cl_command_queue q, cl_event* event, const char* who) {
    const cl_uchar zero = 0;
    check(clEnqueueFillBuffer(q, mem_.get(), &zero, 1, 0, bytes_, 0, nullptr, event), "clEnqueueFillBuffer", who,
          "zeroing the new tensor");
  }

  /// Sets the buffer as argument `index` of `kernel` (clSetKernelArg). A
  /// buffer binds whole: a part of it needs a sub-buffer (TensorArena).
  void bind(cl_kernel kernel, cl_uint index, std::size_t offset, const char* who) const {
    if (offset != 0)
      raise_invalid(who,
                    "a cl_mem buffer is bound whole; bind a part of it through a sub-buffer (TensorArena "
                    "makes them)");
    const cl_mem m = mem_.get();
    check(clSetKernelArg(kernel, index, sizeof m, &m), "clSetKernelArg", who,
          "binding the tensor as a kernel argument");
  }

  /// Buffers stay alive until the commands that use them finish (the runtime
  /// keeps them), so releasing one never needs to wait for kernels.
  static constexpr bool needs_idle_before_free = false;

 private:
  void create_plain(const QueueContext& q, cl_mem_flags flags, const char* doing) {
    cl_int rc = CL_SUCCESS;
    cl_mem m = clCreateBuffer(q.ctx(), flags, bytes_, nullptr, &rc);
    check(rc, "clCreateBuffer", doing);
    mem_ = MemHandle::adopt(m);
  }

  // USE_HOST_PTR, or an Arm import, over page-aligned memory the tensor owns;
  // the memory is freed by the cl_mem's destructor callback.
  void create_over_owned_memory(const QueueContext& q, ImportMemoryArmFn import, const char* doing) {
    const std::size_t size = round_up(bytes_, 64);
    void* host = aligned_host_alloc(page_size(), round_up(size, page_size()));
    if (host == nullptr)
      raise_invalid(doing, "could not allocate " + std::to_string(size) + " bytes of page-aligned host memory");
    cl_int rc = CL_SUCCESS;
    cl_mem m = nullptr;
    const char* api = "clCreateBuffer";
    if (import != nullptr) {
      const std::intptr_t props[] = {kImportTypeArm, kImportTypeHostArm, 0};
      m = import(q.ctx(), CL_MEM_READ_WRITE, props, host, size, &rc);
      api = "clImportMemoryARM";
    } else {
      m = clCreateBuffer(q.ctx(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, size, host, &rc);
    }
    if (rc != CL_SUCCESS) {
      aligned_host_free(host);
      raise(Error(doing, api, rc));
    }
    rc = clSetMemObjectDestructorCallback(m, &free_host_memory_callback, host);
    if (rc != CL_SUCCESS) {
      // No command has used the buffer yet: after its release nothing reads the memory.
      clReleaseMemObject(m);
      aligned_host_free(host);
      raise(Error(doing, "clSetMemObjectDestructorCallback", rc));
    }
    mem_ = MemHandle::adopt(m);
  }

  void create_nv_host_pinned(const QueueContext& q, const DeviceCaps& caps, const char* doing) {
    if (!caps.nv_create_buffer) unsupported(caps, "cl_nv_create_buffer", "NVIDIA", doing);
    auto create = extension_function<CreateBufferNvFn>(q.platform, "clCreateBufferNV");
    if (create == nullptr) unsupported(caps, "clCreateBufferNV", "NVIDIA", doing);
    cl_int rc = CL_SUCCESS;
    cl_mem m = create(q.ctx(), CL_MEM_READ_WRITE, kMemLocationHostNv | kMemPinnedNv, bytes_, nullptr, &rc);
    check(rc, "clCreateBufferNV", doing);
    mem_ = MemHandle::adopt(m);
  }

  [[noreturn]] static void unsupported(const DeviceCaps& caps, const char* what, const char* vendor,
                                       const char* doing) {
    raise(Error(ErrorKind::unsupported, doing,
                std::string("device \"") + caps.name + "\" (" + caps.platform_name + ") does not offer " + what + " (" +
                    vendor + " only); use Allocation::alloc_host_ptr() or policy::Auto"));
  }

  MemHandle mem_;
  std::size_t bytes_;
};

}  // namespace detail
}  // namespace clzero
