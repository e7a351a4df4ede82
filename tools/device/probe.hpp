// SPDX-License-Identifier: Apache-2.0
// What the raw-OpenCL probes alloc_churn.cpp and pinned_reuse.cpp share: the
// platform lookup, NVIDIA's host-located buffers and the values a probe's
// kernel writes. Each probe is one source file compiled with this header
// beside it (g++ tools/device/<probe>.cpp -lOpenCL).
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <cstring>
#include <vector>

namespace probe {

/// clCreateBufferNV (cl_nv_create_buffer), found per platform.
using CreateBufferNv = cl_mem(CL_API_CALL*)(cl_context, cl_mem_flags, cl_bitfield, size_t, void*, cl_int*);
constexpr cl_bitfield kNvHostPinned = 3;  // CL_MEM_LOCATION_HOST_NV | CL_MEM_PINNED_NV

/// The value element i holds after inference `iter` (the same formula as
/// clzero's tests and the probes' kernels).
inline cl_uint value(cl_uint i, cl_uint iter) { return (i * 2654435761u) ^ (iter * 40503u + 0x9E3779B9u); }

/// The first platform whose name contains `want` and that has a device;
/// false where there is none.
inline bool find_device(const char* want, cl_platform_id& platform, cl_device_id& device) {
  cl_uint np = 0;
  clGetPlatformIDs(0, nullptr, &np);
  std::vector<cl_platform_id> ps(np);
  clGetPlatformIDs(np, ps.data(), nullptr);
  for (cl_platform_id p : ps) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (std::strstr(name, want) != nullptr && clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS) {
      platform = p;
      return true;
    }
  }
  return false;
}

/// clCreateBufferNV of `platform`, or null where it lacks cl_nv_create_buffer.
inline CreateBufferNv create_buffer_nv(cl_platform_id platform) {
  return reinterpret_cast<CreateBufferNv>(clGetExtensionFunctionAddressForPlatform(platform, "clCreateBufferNV"));
}

}  // namespace probe
