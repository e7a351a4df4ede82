// SPDX-License-Identifier: Apache-2.0
// CUDA's zero copy, timed in the same rounds as the OpenCL sequences: what an
// engine on CUDA gets from one call (pinned host memory mapped into the
// device's address space, which cudaHostAlloc(cudaHostAllocMapped) makes).
// Measured in the same process, so that no minutes of a shared machine lie
// between the two numbers a ratio is made of.
//
// The runner needs no CUDA to build or to run: the driver API is opened at
// run time (libcuda.so.1, NVIDIA's driver, present wherever NVIDIA's OpenCL
// is), and the kernel is PTX text that the driver compiles for its GPU. Where
// the driver, a CUDA device on the OpenCL device's PCI bus or the mapping of
// host memory is missing, the variants are left out and the catalogue says
// why. Element i of inference `iter` holds iter + i, as the OpenCL producer
// writes it, and the host compares every element.
#pragma once

#include <CL/cl.h>
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "sequence.hpp"

namespace clzero_seq {
namespace cuda {

// The few driver API types used here, as cuda.h declares them.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;

constexpr CUresult kSuccess = 0;
constexpr unsigned kHostAllocDeviceMap = 0x02;  // CU_MEMHOSTALLOC_DEVICEMAP
constexpr unsigned kStreamNonBlocking = 0x1;    // CU_STREAM_NON_BLOCKING
constexpr int kAttrCanMapHostMemory = 19;       // CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY
constexpr int kAttrPciBusId = 33;               // CU_DEVICE_ATTRIBUTE_PCI_BUS_ID
constexpr int kAttrPciDeviceId = 34;            // CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID
constexpr int kAttrPciDomainId = 50;            // CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID
// cl_nv_device_attribute_query
constexpr cl_device_info kClPciBusIdNv = 0x4008;
constexpr cl_device_info kClPciSlotIdNv = 0x4009;
constexpr cl_device_info kClPciDomainIdNv = 0x400A;

/// The producer: out[i] = iter + i for i < n, one thread per element.
constexpr const char* kProducerPtx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry produce(.param .u64 out, .param .u32 n, .param .u32 iter)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  ld.param.u32 %r5, [n];
  setp.ge.u32 %p1, %r4, %r5;
  @%p1 bra DONE;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.param.u32 %r6, [iter];
  add.s32 %r7, %r6, %r4;
  st.global.u32 [%rd3], %r7;
DONE:
  ret;
}
)";

/// The driver's entry points, the process's primary context on the CUDA
/// device that is the OpenCL device, and the producer loaded into it.
/// Made once; never unloaded (the driver outlives every sequence).
class Driver {
 public:
  /// The driver for `device`, or null with `why` set.
  static const Driver* get(cl_device_id device, std::string* why) {
    static std::string reason;
    static const Driver* driver = open(device, &reason);
    if (driver == nullptr && why != nullptr) *why = reason;
    return driver;
  }

  void check(CUresult rc, const char* what) const {
    if (rc == kSuccess) return;
    const char* text = nullptr;
    if (get_error_string == nullptr || get_error_string(rc, &text) != kSuccess || text == nullptr) text = "?";
    throw std::runtime_error(std::string(what) + " failed: " + std::to_string(rc) + " (" + text + ")");
  }
  /// Makes the primary context current on this thread (NVIDIA's OpenCL may
  /// have left another one current).
  void enter() const { check(ctx_set_current(context), "cuCtxSetCurrent"); }

  CUresult (*init)(unsigned) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*stream_create)(CUstream*, unsigned) = nullptr;
  CUresult (*stream_destroy)(CUstream) = nullptr;
  CUresult (*stream_synchronize)(CUstream) = nullptr;
  CUresult (*mem_host_alloc)(void**, std::size_t, unsigned) = nullptr;
  CUresult (*mem_free_host)(void*) = nullptr;
  CUresult (*mem_host_get_device_pointer)(CUdeviceptr*, void*, unsigned) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, std::size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            CUstream, void**, void**) = nullptr;
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;
  CUresult (*driver_get_version)(int*) = nullptr;

  CUcontext context = nullptr;
  CUfunction produce = nullptr;
  std::string name;  ///< the CUDA device's name and the driver's CUDA version

 private:
  template <class F>
  static bool bind(void* lib, F& f, const char* symbol) {
    f = reinterpret_cast<F>(dlsym(lib, symbol));
    return f != nullptr;
  }

  static const Driver* open(cl_device_id device, std::string* why) {
    // The CUDA device must be the OpenCL device: the one on its PCI bus,
    // which NVIDIA's OpenCL names (cl_nv_device_attribute_query).
    cl_uint bus = 0, slot = 0, domain = 0;
    if (clGetDeviceInfo(device, kClPciBusIdNv, sizeof bus, &bus, nullptr) != CL_SUCCESS ||
        clGetDeviceInfo(device, kClPciSlotIdNv, sizeof slot, &slot, nullptr) != CL_SUCCESS) {
      *why = "the OpenCL device names no PCI bus (cl_nv_device_attribute_query), so it is no NVIDIA GPU";
      return nullptr;
    }
    const bool has_domain = clGetDeviceInfo(device, kClPciDomainIdNv, sizeof domain, &domain, nullptr) == CL_SUCCESS;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      *why = "no CUDA driver (libcuda.so.1 did not load)";
      return nullptr;
    }
    auto d = std::make_unique<Driver>();
    const bool bound =
        bind(lib, d->init, "cuInit") && bind(lib, d->device_get_count, "cuDeviceGetCount") &&
        bind(lib, d->device_get, "cuDeviceGet") && bind(lib, d->device_get_attribute, "cuDeviceGetAttribute") &&
        bind(lib, d->device_get_name, "cuDeviceGetName") &&
        bind(lib, d->primary_ctx_retain, "cuDevicePrimaryCtxRetain") &&
        bind(lib, d->ctx_set_current, "cuCtxSetCurrent") && bind(lib, d->module_load_data, "cuModuleLoadData") &&
        bind(lib, d->module_get_function, "cuModuleGetFunction") && bind(lib, d->stream_create, "cuStreamCreate") &&
        bind(lib, d->stream_destroy, "cuStreamDestroy_v2") &&
        bind(lib, d->stream_synchronize, "cuStreamSynchronize") && bind(lib, d->mem_host_alloc, "cuMemHostAlloc") &&
        bind(lib, d->mem_free_host, "cuMemFreeHost") &&
        bind(lib, d->mem_host_get_device_pointer, "cuMemHostGetDevicePointer_v2") &&
        bind(lib, d->mem_alloc, "cuMemAlloc_v2") && bind(lib, d->mem_free, "cuMemFree_v2") &&
        bind(lib, d->launch_kernel, "cuLaunchKernel") && bind(lib, d->get_error_string, "cuGetErrorString") &&
        bind(lib, d->driver_get_version, "cuDriverGetVersion");
    if (!bound) {
      *why = std::string("the CUDA driver lacks an entry point: ") + dlerror();
      return nullptr;
    }
    try {
      d->check(d->init(0), "cuInit");
      int count = 0;
      d->check(d->device_get_count(&count), "cuDeviceGetCount");
      CUdevice found = -1;
      for (int i = 0; i < count && found < 0; ++i) {
        CUdevice dev = 0;
        int cu_bus = -1, cu_slot = -1, cu_domain = -1;
        d->check(d->device_get(&dev, i), "cuDeviceGet");
        d->check(d->device_get_attribute(&cu_bus, kAttrPciBusId, dev), "cuDeviceGetAttribute");
        d->check(d->device_get_attribute(&cu_slot, kAttrPciDeviceId, dev), "cuDeviceGetAttribute");
        d->check(d->device_get_attribute(&cu_domain, kAttrPciDomainId, dev), "cuDeviceGetAttribute");
        if (static_cast<cl_uint>(cu_bus) == bus && static_cast<cl_uint>(cu_slot) == slot &&
            (!has_domain || static_cast<cl_uint>(cu_domain) == domain))
          found = dev;
      }
      if (found < 0) {
        *why = "no CUDA device on the OpenCL device's PCI bus " + std::to_string(bus);
        return nullptr;
      }
      int can_map = 0;
      d->check(d->device_get_attribute(&can_map, kAttrCanMapHostMemory, found), "cuDeviceGetAttribute");
      if (can_map == 0) {
        *why = "the CUDA device cannot map host memory";
        return nullptr;
      }
      char name[256] = {};
      d->check(d->device_get_name(name, static_cast<int>(sizeof name) - 1, found), "cuDeviceGetName");
      int version = 0;
      d->check(d->driver_get_version(&version), "cuDriverGetVersion");
      d->name = std::string(name) + ", CUDA driver " + std::to_string(version);
      d->check(d->primary_ctx_retain(&d->context, found), "cuDevicePrimaryCtxRetain");
      d->enter();
      CUmodule module = nullptr;
      d->check(d->module_load_data(&module, kProducerPtx), "cuModuleLoadData (the producer's PTX)");
      d->check(d->module_get_function(&d->produce, module, "produce"), "cuModuleGetFunction");
    } catch (const std::exception& e) {
      *why = e.what();
      return nullptr;
    }
    return d.release();
  }
};

/// One stream and one output, and the producer launched over it.
class CudaSequence : public SerialSequence {
 public:
  CudaSequence(const Driver& d, std::size_t n) : d_(d), n_(static_cast<std::uint32_t>(n)) {
    d_.enter();
    d_.check(d_.stream_create(&stream_, kStreamNonBlocking), "cuStreamCreate");
  }
  CudaSequence(const CudaSequence&) = delete;
  CudaSequence& operator=(const CudaSequence&) = delete;
  ~CudaSequence() override {
    if (stream_ != nullptr) d_.stream_destroy(stream_);
  }
  std::size_t run_block(std::uint32_t first, std::size_t count) override {
    d_.enter();
    return SerialSequence::run_block(first, count);
  }

 protected:
  /// Launches the producer over `out` and waits for the stream.
  void produce(CUdeviceptr out, std::uint32_t iter) {
    void* args[] = {&out, &n_, &iter};
    const unsigned block = 256;
    d_.check(d_.launch_kernel(d_.produce, (n_ + block - 1) / block, 1, 1, block, 1, 1, 0, stream_, args, nullptr),
             "cuLaunchKernel");
    d_.check(d_.stream_synchronize(stream_), "cuStreamSynchronize");
  }
  const Driver& d_;
  std::uint32_t n_;
  CUstream stream_ = nullptr;
};

/// cuda.zero_copy: the kernel writes pinned host memory mapped into the
/// device's address space; the host reads it after the stream's wait.
class ZeroCopy : public CudaSequence {
 public:
  ZeroCopy(const Driver& d, std::size_t n) : CudaSequence(d, n) {
    void* host = nullptr;
    d_.check(d_.mem_host_alloc(&host, n * sizeof(std::uint32_t), kHostAllocDeviceMap), "cuMemHostAlloc");
    host_ = static_cast<std::uint32_t*>(host);
    d_.check(d_.mem_host_get_device_pointer(&device_, host, 0), "cuMemHostGetDevicePointer");
  }
  ~ZeroCopy() override {
    if (host_ != nullptr) d_.mem_free_host(host_);
  }
  std::size_t run(std::uint32_t iter) override {
    produce(device_, iter);
    return count_wrong(host_, n_, iter);
  }

 private:
  std::uint32_t* host_ = nullptr;
  CUdeviceptr device_ = 0;
};

/// cuda.floor: the kernel into device memory and the stream's wait, nothing
/// read (CUDA's counterpart of floor.kernel_finish).
class Floor : public CudaSequence {
 public:
  Floor(const Driver& d, std::size_t n) : CudaSequence(d, n) {
    d_.check(d_.mem_alloc(&device_, n * sizeof(std::uint32_t)), "cuMemAlloc");
  }
  ~Floor() override {
    if (device_ != 0) d_.mem_free(device_);
  }
  std::size_t run(std::uint32_t iter) override {
    produce(device_, iter);
    return 0;
  }
  bool checks_output() const override { return false; }

 private:
  CUdeviceptr device_ = 0;
};

}  // namespace cuda
}  // namespace clzero_seq
