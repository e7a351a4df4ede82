// SPDX-License-Identifier: Apache-2.0
// The vendor extensions clzero uses, declared here with the values their
// specifications fix, so clzero builds with any version of the Khronos headers
// (cl_nv_create_buffer is in none of them). Entry points are looked up at run
// time with clGetExtensionFunctionAddressForPlatform (OpenCL 1.2 section 9.2):
// the ICD loader exports no extension functions.
#pragma once

#include <CL/cl.h>

#include <cstdint>

namespace clzero {
namespace detail {

// Core queries clzero issues by value so that they compile for any
// CL_TARGET_OPENCL_VERSION (the device may be newer than the headers' target).
constexpr cl_device_info kDeviceSvmCapabilities = 0x1053;  // OpenCL 2.0
constexpr cl_bitfield kSvmCoarseGrainBuffer = 1u << 0;
constexpr cl_bitfield kSvmFineGrainBuffer = 1u << 1;
constexpr cl_bitfield kSvmFineGrainSystem = 1u << 2;
constexpr cl_bitfield kSvmAtomics = 1u << 3;

// cl_nv_create_buffer: clCreateBufferNV(context, flags, flags_NV, size, host_ptr, errcode_ret).
using CreateBufferNvFn = cl_mem(CL_API_CALL*)(cl_context, cl_mem_flags, cl_bitfield, size_t, void*, cl_int*);
constexpr cl_bitfield kMemLocationHostNv = 1u << 0;
constexpr cl_bitfield kMemPinnedNv = 1u << 1;

// cl_arm_import_memory: clImportMemoryARM(context, flags, properties, memory, size, errcode_ret).
using ImportMemoryArmFn = cl_mem(CL_API_CALL*)(cl_context, cl_mem_flags, const std::intptr_t*, void*, size_t, cl_int*);
constexpr std::intptr_t kImportTypeArm = 0x40B2;
constexpr std::intptr_t kImportTypeHostArm = 0x40B3;

// cl_qcom_ext_host_ptr: CL_MEM_USE_HOST_PTR | CL_MEM_EXT_HOST_PTR_QCOM with a
// descriptor (cl_mem_ion_host_ptr, cl_mem_dmabuf_host_ptr, ...) as host_ptr.
constexpr cl_mem_flags kMemExtHostPtrQcom = 1u << 29;
constexpr cl_device_info kDeviceExtMemPaddingQcom = 0x40A0;
constexpr cl_device_info kDevicePageSizeQcom = 0x40A1;

// cl_intel_unified_shared_memory (host allocations only).
using HostMemAllocIntelFn = void*(CL_API_CALL*)(cl_context, const cl_bitfield*, size_t, cl_uint, cl_int*);
using MemBlockingFreeIntelFn = cl_int(CL_API_CALL*)(cl_context, void*);
using SetKernelArgMemPointerIntelFn = cl_int(CL_API_CALL*)(cl_kernel, cl_uint, const void*);
using EnqueueMemFillIntelFn = cl_int(CL_API_CALL*)(cl_command_queue, void*, const void*, size_t, size_t, cl_uint,
                                                   const cl_event*, cl_event*);
constexpr cl_device_info kDeviceHostMemCapabilitiesIntel = 0x4190;
constexpr cl_bitfield kUnifiedSharedMemoryAccessIntel = 1u << 0;

/// The address of an extension function of `platform`, or null.
template <class Fn>
Fn extension_function(cl_platform_id platform, const char* name) noexcept {
#if defined(CL_VERSION_1_2)
  return reinterpret_cast<Fn>(clGetExtensionFunctionAddressForPlatform(platform, name));
#else
  (void)platform;
  return reinterpret_cast<Fn>(clGetExtensionFunctionAddress(name));
#endif
}

}  // namespace detail
}  // namespace clzero
