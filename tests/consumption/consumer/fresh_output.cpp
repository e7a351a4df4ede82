// SPDX-License-Identifier: Apache-2.0
// A consumer of clzero as an engine would write it, built by every way clzero
// can be consumed: a kernel writes an output tensor, the host reads every
// element of every inference, and the values change every inference.
//
// Built with CL_TARGET_OPENCL_VERSION set by the consumer and
// CONSUMER_CL_VERSION, the value it set, to check that clzero changed nothing.
#include <CL/cl.h>

#include <clzero/clzero.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

static_assert(CL_TARGET_OPENCL_VERSION == CONSUMER_CL_VERSION, "CL_TARGET_OPENCL_VERSION is the consumer's own");
#if defined(CL_HPP_TARGET_OPENCL_VERSION) || defined(CL_HPP_MINIMUM_OPENCL_VERSION) || defined(CL_HPP_ENABLE_EXCEPTIONS)
#error "clzero must not define OpenCL or CLHPP configuration macros for its users"
#endif
#if CONSUMER_CL_VERSION < 200 && defined(CL_VERSION_2_0)
#error "a 1.2 target must not see OpenCL 2.0 declarations"
#endif

namespace {

constexpr const char* kSource = R"CLC(
__kernel void produce(__global uint* out, uint n, uint iter) {
  uint i = get_global_id(0);
  if (i < n) out[i] = (i * 2654435761u) ^ (iter * 40503u + 0x9E3779B9u);
}
)CLC";

std::uint32_t expected(std::uint32_t i, std::uint32_t iter) {
  return (i * 2654435761u) ^ (iter * 40503u + 0x9E3779B9u);
}

[[noreturn]] void fail(const std::string& what, cl_int rc) {
  std::fprintf(stderr, "FAIL: %s (%s)\n", what.c_str(), clzero::error_name(rc));
  std::exit(1);
}

}  // namespace

int main() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) fail("no OpenCL platform", CL_SUCCESS);
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  const char* want = std::getenv("CLZERO_TEST_PLATFORM");
  cl_device_id device = nullptr;
  for (cl_platform_id p : platforms) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (want != nullptr && *want != '\0' && std::string(name).find(want) == std::string::npos) continue;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS) break;
    device = nullptr;
  }
  if (device == nullptr) fail("no OpenCL device", CL_DEVICE_NOT_FOUND);

  cl_int rc = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  if (rc != CL_SUCCESS) fail("clCreateContext", rc);
#if CONSUMER_CL_VERSION >= 200
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &rc);
#else
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &rc);
#endif
  if (rc != CL_SUCCESS) fail("creating the queue", rc);
  const char* source = kSource;
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &rc);
  if (rc != CL_SUCCESS || clBuildProgram(program, 1, &device, "", nullptr, nullptr) != CL_SUCCESS)
    fail("building the kernel", rc);
  cl_kernel kernel = clCreateKernel(program, "produce", &rc);
  if (rc != CL_SUCCESS) fail("clCreateKernel", rc);

  constexpr std::uint32_t n = 4099;
  constexpr std::uint32_t iterations = 12;
  std::size_t checked = 0, wrong = 0;
  std::string policy;
  {
    clzero::MappedTensor<std::uint32_t> logits(context, queue, {n}, clzero::Intent::output);
    policy = logits.policy().describe();
    for (std::uint32_t iter = 1; iter <= iterations; ++iter) {
      {
        auto dev = logits.device_access();
        dev.bind(kernel, 0);
        clSetKernelArg(kernel, 1, sizeof n, &n);
        clSetKernelArg(kernel, 2, sizeof iter, &iter);
        const std::size_t global = n;
        rc = clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, dev.wait_count(), dev.wait_list(),
                                    dev.event_slot());
        if (rc != CL_SUCCESS) fail("clEnqueueNDRangeKernel", rc);
      }
      auto view = logits.read_view();
      for (std::uint32_t i = 0; i < view.size(); ++i, ++checked) wrong += view[i] != expected(i, iter);
    }
  }
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);

  std::printf("%s, CL_TARGET_OPENCL_VERSION %d, %s: %zu of %zu elements wrong\n", CONSUMER_HOW,
              CL_TARGET_OPENCL_VERSION, policy.c_str(), wrong, checked);
  if (checked != std::size_t{n} * iterations || wrong != 0) {
    std::printf("FAIL\n");
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}
