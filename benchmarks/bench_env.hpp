// SPDX-License-Identifier: Apache-2.0
// The OpenCL setup every benchmark shares: one platform (the first with a
// device, or the first whose name contains $CLZERO_BENCH_PLATFORM), its first
// device, a context, one in-order queue without profiling, and the producer
// kernel every strategy runs.
#pragma once

#include <CL/cl.h>

#include <clzero/clzero.hpp>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace clzero_bench {

// Element i of inference `iter` is iter + i: the host's sum of a fresh tensor
// has a closed form (fresh_sum), and a stale or unwritten element lowers it,
// so every element of every inference is checked at the cost of one compare.
constexpr const char* kProducerSource = R"CLC(
__kernel void produce(__global uint* out, uint iter) {
  size_t i = get_global_id(0);
  out[i] = iter + (uint)i;
}
)CLC";

/// The sum of a fresh tensor of n elements written in inference `iter`.
/// Exact while iter + n < 2^32 (no element wraps): iterations restart below 2^30.
inline std::uint64_t fresh_sum(std::size_t n, std::uint32_t iter) {
  const std::uint64_t m = n;
  return m * iter + m * (m - 1) / 2;
}

inline void ok(cl_int rc, const char* what) {
  if (rc != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + clzero::error_name(rc));
}

struct Rig {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  clzero::ContextHandle context;
  clzero::QueueHandle queue;
  clzero::ProgramHandle program;
  clzero::DeviceCaps caps;

  static Rig& get() {
    static Rig rig;
    return rig;
  }

  cl_context ctx() const { return context.get(); }
  cl_command_queue q() const { return queue.get(); }

  clzero::KernelHandle make_kernel() const {
    cl_int rc = CL_SUCCESS;
    cl_kernel k = clCreateKernel(program.get(), "produce", &rc);
    ok(rc, "clCreateKernel(produce)");
    return clzero::KernelHandle::adopt(k);
  }

 private:
  Rig() {
    cl_uint n = 0;
    ok(clGetPlatformIDs(0, nullptr, &n), "clGetPlatformIDs");
    std::vector<cl_platform_id> platforms(n);
    ok(clGetPlatformIDs(n, platforms.data(), nullptr), "clGetPlatformIDs");
    const char* want = std::getenv("CLZERO_BENCH_PLATFORM");
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
      throw std::runtime_error(
          std::string("no OpenCL device found") +
          (want ? std::string(" on a platform whose name contains '") + want + "'" : std::string()));
    cl_int rc = CL_SUCCESS;
    context = clzero::ContextHandle::adopt(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc));
    ok(rc, "clCreateContext");
    queue = clzero::QueueHandle::adopt(clCreateCommandQueueWithProperties(ctx(), device, nullptr, &rc));
    ok(rc, "clCreateCommandQueueWithProperties");
    const char* src = kProducerSource;
    program = clzero::ProgramHandle::adopt(clCreateProgramWithSource(ctx(), 1, &src, nullptr, &rc));
    ok(rc, "clCreateProgramWithSource");
    if (clBuildProgram(program.get(), 1, &device, "", nullptr, nullptr) != CL_SUCCESS) {
      char log[8192] = {};
      clGetProgramBuildInfo(program.get(), device, CL_PROGRAM_BUILD_LOG, sizeof log, log, nullptr);
      throw std::runtime_error(std::string("the producer kernel failed to build:\n") + log);
    }
    caps = clzero::DeviceCaps::query(device);
  }
};

}  // namespace clzero_bench
