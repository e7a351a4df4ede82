// SPDX-License-Identifier: Apache-2.0
// A test shim, not part of the patch: MNN's OpenCL backend asks each
// platform for CL_DEVICE_TYPE_GPU devices only (OpenCLRuntime.cpp), so on a
// CPU-only OpenCL such as PoCL it finds none and MNN runs the model on its
// CPU backend instead. Built as libOpenCL.so and put first on
// LD_LIBRARY_PATH, this library answers a GPU query that finds nothing with
// the platform's CPU devices; every other call resolves, through this
// library's dependency on the real libOpenCL.so.1, to the real loader (dlsym
// on this library's handle searches its dependencies too).
//
// It also makes MNN's clCreateCommandQueue (OpenCL 1.x, deprecated since
// 2.0) with clCreateCommandQueueWithProperties: MNN on PoCL 5 (H200
// machine) died with a segmentation fault inside PoCL's clCreateCommandQueue
// while creating its OpenCL runtime, patched and unpatched alike. It dies
// inside PoCL's clCreateCommandQueueWithProperties just the same
// (docs/engines.md); the other call is kept as the one PoCL 3.1 and the
// H200 run's crash reports were made with.
#define CL_TARGET_OPENCL_VERSION 200
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

typedef cl_command_queue (*CreateQueueWithProperties)(cl_context, cl_device_id, const cl_queue_properties*, cl_int*);

CL_API_ENTRY cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context context, cl_device_id device,
                                                               cl_command_queue_properties properties, cl_int* rc) {
  static CreateQueueWithProperties create = NULL;
  if (create == NULL) {
    void* loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (loader != NULL) create = (CreateQueueWithProperties)dlsym(loader, "clCreateCommandQueueWithProperties");
    if (create == NULL) {
      if (rc != NULL) *rc = CL_INVALID_OPERATION;
      return NULL;
    }
  }
  const cl_queue_properties with[] = {CL_QUEUE_PROPERTIES, (cl_queue_properties)properties, 0};
  return create(context, device, properties != 0 ? with : NULL, rc);
}
