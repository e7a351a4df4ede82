// SPDX-License-Identifier: Apache-2.0
// A test shim, not part of the patch: MNN's OpenCL backend asks each
// platform for CL_DEVICE_TYPE_GPU devices only (OpenCLRuntime.cpp), so on a
// CPU-only OpenCL such as PoCL it finds none and MNN runs the model on its
// CPU backend instead. Built as libOpenCL.so and put first on
// LD_LIBRARY_PATH, this library answers a GPU query that finds nothing with
// the platform's CPU devices; every other call resolves, through this
// library's dependency on the real libOpenCL.so.1, to the real loader (dlsym
// on this library's handle searches its dependencies too).
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stddef.h>

typedef cl_int (*GetDeviceIds)(cl_platform_id, cl_device_type, cl_uint, cl_device_id*, cl_uint*);

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id platform, cl_device_type type, cl_uint entries,
                                               cl_device_id* devices, cl_uint* found) {
  static GetDeviceIds real = NULL;
  if (real == NULL) {
    void* loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (loader != NULL) real = (GetDeviceIds)dlsym(loader, "clGetDeviceIDs");
    if (real == NULL || real == clGetDeviceIDs) return CL_INVALID_OPERATION;
  }
  cl_int rc = real(platform, type, entries, devices, found);
  if (type == CL_DEVICE_TYPE_GPU && rc == CL_DEVICE_NOT_FOUND) rc = real(platform, CL_DEVICE_TYPE_CPU, entries, devices, found);
  return rc;
}
