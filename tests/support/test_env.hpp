// SPDX-License-Identifier: Apache-2.0
// The OpenCL environment every test shares: one platform and device (the
// first with a device, or the one whose name contains $CLZERO_TEST_PLATFORM),
// a context, an in-order profiling queue, and the test kernels.
#pragma once

#include <CL/cl.h>

#include <clzero/clzero.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace clzero_test {

// The value a kernel writes at element i in iteration `iter`: different for
// every element and every iteration, and never zero for iter > 0 patterns to
// hide behind (the tensor is zeroed at construction).
inline std::uint32_t value(std::uint32_t i, std::uint32_t iter) {
  return (i * 2654435761u) ^ (iter * 40503u + 0x9E3779B9u);
}
inline std::uint8_t byte_value(std::uint32_t i, std::uint32_t iter) {
  return static_cast<std::uint8_t>(((i * 131u) ^ (iter * 29u + 0x5Bu)) | 1u);
}

constexpr const char* kKernels = R"CLC(
uint value(uint i, uint iter) { return (i * 2654435761u) ^ (iter * 40503u + 0x9E3779B9u); }
uchar byte_value(uint i, uint iter) { return (uchar)(((i * 131u) ^ (iter * 29u + 0x5Bu)) | 1u); }

__kernel void fill_u32(__global uint* out, uint n, uint iter) {
  uint i = get_global_id(0);
  if (i < n) out[i] = value(i, iter);
}
__kernel void fill_u8(__global uchar* out, uint n, uint iter) {
  uint i = get_global_id(0);
  if (i < n) out[i] = byte_value(i, iter);
}
__kernel void copy_u32(__global const uint* in, __global uint* out, uint n) {
  uint i = get_global_id(0);
  if (i < n) out[i] = in[i];
}
__kernel void copy_u8(__global const uchar* in, __global uchar* out, uint n) {
  uint i = get_global_id(0);
  if (i < n) out[i] = in[i];
}
__kernel void update_u32(__global uint* io, uint n, uint iter) {
  uint i = get_global_id(0);
  if (i < n) io[i] = io[i] * 3u + iter;
}
__kernel void update_u8(__global uchar* io, uint n, uint iter) {
  uint i = get_global_id(0);
  if (i < n) io[i] = (uchar)(io[i] * 3u + iter);
}
)CLC";

inline void ok(cl_int rc, const char* what) {
  if (rc != CL_SUCCESS)
    throw std::runtime_error(std::string("test setup: ") + what + " failed: " + clzero::error_name(rc));
}

struct Env {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;  // in-order, profiling
  cl_program program = nullptr;
  clzero::DeviceCaps caps;

  static Env& get() {
    static Env env;
    return env;
  }

  cl_kernel kernel(const char* name) const {
    cl_int rc = CL_SUCCESS;
    cl_kernel k = clCreateKernel(program, name, &rc);
    ok(rc, "clCreateKernel");
    return k;
  }

  /// A new queue on the test device (release it yourself).
  /// A new queue on the device, in the suite's context or in `in` (another
  /// context of the same device).
  cl_command_queue make_queue(cl_command_queue_properties props, cl_context in = nullptr) const {
    cl_int rc = CL_SUCCESS;
    cl_context ctx = in != nullptr ? in : context;
#if defined(CL_VERSION_2_0)
    const cl_queue_properties p[] = {CL_QUEUE_PROPERTIES, props, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, props ? p : nullptr, &rc);
#else
    cl_command_queue q = clCreateCommandQueue(ctx, device, props, &rc);
#endif
    ok(rc, "creating a command queue");
    return q;
  }

 private:
  Env() {
    cl_uint n = 0;
    ok(clGetPlatformIDs(0, nullptr, &n), "clGetPlatformIDs");
    std::vector<cl_platform_id> platforms(n);
    ok(clGetPlatformIDs(n, platforms.data(), nullptr), "clGetPlatformIDs");
    const char* want = std::getenv("CLZERO_TEST_PLATFORM");
    for (cl_platform_id p : platforms) {
      char name[256] = {};
      clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
      if (want != nullptr && *want != '\0' && std::string(name).find(want) == std::string::npos) continue;
      cl_device_id d = nullptr;
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr) == CL_SUCCESS) {
        platform = p;
        device = d;
        break;
      }
    }
    if (device == nullptr)
      throw std::runtime_error(std::string("no OpenCL device found") +
                               (want ? std::string(" on a platform named like '") + want + "'" : std::string()));
    cl_int rc = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
    ok(rc, "clCreateContext");
    queue = make_queue(CL_QUEUE_PROFILING_ENABLE);
    const char* src = kKernels;
    program = clCreateProgramWithSource(context, 1, &src, nullptr, &rc);
    ok(rc, "clCreateProgramWithSource");
    if (clBuildProgram(program, 1, &device, "", nullptr, nullptr) != CL_SUCCESS) {
      char log[8192] = {};
      clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, nullptr);
      throw std::runtime_error(std::string("test kernels failed to build:\n") + log);
    }
    caps = clzero::DeviceCaps::query(device);
    std::fprintf(stderr, "clzero tests on: %s | %s | %s | driver %s\n", caps.platform_name.c_str(), caps.name.c_str(),
                 caps.device_version.c_str(), caps.driver_version.c_str());
    // The map_at_view entries run whole suites again with CLZERO_HOST_WAIT
    // set. Were the library to stop honouring it, those runs would test the
    // measured protocol a second time and pass: stop every test instead.
    const clzero::detail::WaitMethod wait = clzero::detail::wait_method(context, device);
    std::fprintf(stderr, "clzero tests: host views wait: %s%s(%s)\n", wait.map_at_view ? "a map at the view " : "",
                 wait.svm_map_at_view ? "coarse-grained SVM: a map at the view " : "", wait.reason.c_str());
    // The reason starts with the named method (CLZERO_IDLE_WAIT may add its own after it).
    const char* forced = std::getenv("CLZERO_HOST_WAIT");
    const std::string named = std::string("CLZERO_HOST_WAIT=") + (forced != nullptr ? forced : "");
    if (forced != nullptr && forced[0] != '\0' && wait.reason != named && wait.reason.rfind(named + ";", 0) != 0)
      throw std::runtime_error(named + " is set, but the library's host wait is " + wait.reason);
  }
  ~Env() {
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
  }
};

/// Owns a kernel for a test's duration.
struct Kernel {
  explicit Kernel(const char* name) : k(Env::get().kernel(name)) {}
  ~Kernel() { clReleaseKernel(k); }
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  template <class T>
  void arg(cl_uint index, const T& v) {
    ok(clSetKernelArg(k, index, sizeof v, &v), "clSetKernelArg");
  }
  cl_kernel k;
};

/// Enqueues `kernel` over n work-items on `queue`, ordered after `access`'s
/// commands and recorded in it, in the two documented forms by turns:
/// odd calls hand out every event (wait_list(), event_slot(): right for
/// any queue), even calls the README's form (wait_list(queue),
/// event_slot(queue): no events, and no flush, on the tensor's own in-order
/// queue). So every test that launches through here sees both forms, and
/// a tensor sees accesses of one form follow the other.
inline void launch(cl_command_queue queue, cl_kernel kernel, std::size_t n, clzero::DeviceAccess& access) {
  thread_local unsigned long calls = 0;  // per thread: tests launch from several
  const bool every_event = ++calls % 2 == 1;
  ok(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &n, nullptr,
                            every_event ? access.wait_count() : access.wait_count(queue),
                            every_event ? access.wait_list() : access.wait_list(queue),
                            every_event ? access.event_slot() : access.event_slot(queue)),
     "clEnqueueNDRangeKernel");
}

}  // namespace clzero_test
