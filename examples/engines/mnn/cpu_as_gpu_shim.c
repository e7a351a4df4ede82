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
//
// With CLZERO_SHIM_TRACE=1 it also writes to stderr what MNN asks of the
// loader while it makes its runtime: the platforms, each device query, the
// context's platform and devices, and for the queue whether its device is
// one of its context's (each device named with its platform). Those calls
// pass through unchanged.
#define CL_TARGET_OPENCL_VERSION 200
#include <CL/cl.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static void* real(const char* name) {
  void* loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  return loader != NULL ? dlsym(loader, name) : NULL;
}

static int tracing(void) {
  const char* t = getenv("CLZERO_SHIM_TRACE");
  return t != NULL && t[0] == '1';
}

typedef cl_int (*PlatformInfo)(cl_platform_id, cl_platform_info, size_t, void*, size_t*);
typedef cl_int (*DeviceInfo)(cl_device_id, cl_device_info, size_t, void*, size_t*);

// "platform name" of a platform, or of a device's platform.
static const char* platform_name(cl_platform_id p, char* out, size_t size) {
  PlatformInfo info = (PlatformInfo)real("clGetPlatformInfo");
  out[0] = 0;
  if (info == NULL || info(p, CL_PLATFORM_NAME, size - 1, out, NULL) != CL_SUCCESS) snprintf(out, size, "?");
  return out;
}

static const char* device_platform(cl_device_id d, char* out, size_t size) {
  DeviceInfo info = (DeviceInfo)real("clGetDeviceInfo");
  cl_platform_id p = NULL;
  if (info == NULL || info(d, CL_DEVICE_PLATFORM, sizeof p, &p, NULL) != CL_SUCCESS) {
    snprintf(out, size, "? (clGetDeviceInfo failed)");
    return out;
  }
  return platform_name(p, out, size);
}

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
  const int as_cpu = type == CL_DEVICE_TYPE_GPU && rc == CL_DEVICE_NOT_FOUND;
  if (as_cpu) rc = real(platform, CL_DEVICE_TYPE_CPU, entries, devices, found);
  if (tracing()) {
    char name[256];
    fprintf(stderr, "shim: clGetDeviceIDs(%s, type 0x%llx, %u entries) = %d, %u found%s\n",
            platform_name(platform, name, sizeof name), (unsigned long long)type, entries, rc,
            found != NULL ? *found : 0u, as_cpu ? " (CPU devices for a GPU query)" : "");
  }
  return rc;
}

typedef cl_context (*CreateContext)(const cl_context_properties*, cl_uint, const cl_device_id*,
                                    void(CL_CALLBACK*)(const char*, const void*, size_t, void*), void*, cl_int*);

CL_API_ENTRY cl_context CL_API_CALL clCreateContext(const cl_context_properties* properties, cl_uint count,
                                                    const cl_device_id* devices,
                                                    void(CL_CALLBACK* notify)(const char*, const void*, size_t,
                                                                              void*),
                                                    void* user_data, cl_int* rc) {
  CreateContext create = (CreateContext)real("clCreateContext");
  if (create == NULL) {
    if (rc != NULL) *rc = CL_INVALID_OPERATION;
    return NULL;
  }
  if (tracing()) {
    char name[256];
    fprintf(stderr, "shim: clCreateContext of %u device(s)", count);
    for (const cl_context_properties* p = properties; p != NULL && p[0] != 0; p += 2)
      if (p[0] == CL_CONTEXT_PLATFORM)
        fprintf(stderr, ", CL_CONTEXT_PLATFORM %s", platform_name((cl_platform_id)p[1], name, sizeof name));
      else
        fprintf(stderr, ", property 0x%llx", (unsigned long long)p[0]);
    for (cl_uint i = 0; i < count; ++i)
      fprintf(stderr, ", device %u of %s", i, device_platform(devices[i], name, sizeof name));
    fprintf(stderr, "\n");
  }
  return create(properties, count, devices, notify, user_data, rc);
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
  if (tracing()) {
    typedef cl_int (*ContextInfo)(cl_context, cl_context_info, size_t, void*, size_t*);
    ContextInfo info = (ContextInfo)real("clGetContextInfo");
    cl_device_id in_context[16];
    size_t bytes = 0;
    char name[256];
    int member = 0;
    const cl_int got = info != NULL ? info(context, CL_CONTEXT_DEVICES, sizeof in_context, in_context, &bytes)
                                    : CL_INVALID_OPERATION;
    for (size_t i = 0; got == CL_SUCCESS && i < bytes / sizeof in_context[0]; ++i) member |= in_context[i] == device;
    fprintf(stderr, "shim: clCreateCommandQueue(properties 0x%llx): the device is of %s; ",
            (unsigned long long)properties, device_platform(device, name, sizeof name));
    if (got == CL_SUCCESS)
      fprintf(stderr, "its context holds %zu device(s), the first of %s; the device is %sone of them\n",
              bytes / sizeof in_context[0], bytes != 0 ? device_platform(in_context[0], name, sizeof name) : "-",
              member ? "" : "NOT ");
    else
      fprintf(stderr, "clGetContextInfo on its context failed: %d\n", got);
  }
  const cl_queue_properties with[] = {CL_QUEUE_PROPERTIES, (cl_queue_properties)properties, 0};
  return create(context, device, properties != 0 ? with : NULL, rc);
}
