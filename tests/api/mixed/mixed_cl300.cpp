// SPDX-License-Identifier: Apache-2.0
// One program, two OpenCL configurations (CL_TARGET_OPENCL_VERSION 300 here,
// 120 in mixed_cl120.cpp): each translation unit makes and uses its own Auto
// tensors, every element of every inference fresh; a Persistent tensor made
// here is used there. Handing an Auto tensor across does not link (the
// compile-fail tests next to this file).
#define CL_TARGET_OPENCL_VERSION 300
#include <clzero/clzero.hpp>

#include <cstdio>

#include "rig.hpp"

// After rig.hpp, whose names it uses.
#include "inference.inc"

std::size_t persistent_inferences_cl120(const Rig& rig,
                                        clzero::MappedTensor<std::uint32_t, clzero::policy::Persistent>& tensor);

std::size_t auto_inferences_cl300(const Rig& rig, std::string& chose) {
  clzero::MappedTensor<std::uint32_t> logits(rig.context, rig.queue, {kElements}, clzero::Intent::output);
  chose = logits.policy().choice().label();
  return stale_after_inferences(rig, logits);
}

// Used by the cross_*.inc programs: an Auto tensor of this configuration.
std::uint32_t first_element(clzero::MappedTensor<std::uint32_t>& tensor) { return tensor.read_view()[0]; }
clzero::MappedTensor<std::uint32_t> make_auto_tensor(const Rig& rig) {
  return clzero::MappedTensor<std::uint32_t>(rig.context, rig.queue, {kElements}, clzero::Intent::output);
}

std::size_t cross_parameter(const Rig& rig);
std::size_t cross_return(const Rig& rig);

int main() {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
    std::printf("mixed versions: no OpenCL device\n");
    return 1;
  }
  cl_int rc = CL_SUCCESS;
  Rig rig{};
  rig.context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  rig.queue = clCreateCommandQueueWithProperties(rig.context, device, nullptr, &rc);
  const char* src =
      "__kernel void fill_u32(__global uint* out, uint n, uint iter) {"
      "  uint i = get_global_id(0);"
      "  if (i < n) out[i] = (i * 2654435761u) ^ (iter * 40503u + 0x9E3779B9u); }";
  cl_program program = clCreateProgramWithSource(rig.context, 1, &src, nullptr, &rc);
  clBuildProgram(program, 1, &device, "", nullptr, nullptr);
  rig.fill = clCreateKernel(program, "fill_u32", &rc);
  if (rc != CL_SUCCESS) return 1;

  int failures = 0;
  {
    std::string chose120, chose300;
    const std::size_t stale120 = auto_inferences_cl120(rig, chose120);
    const std::size_t stale300 = auto_inferences_cl300(rig, chose300);
    std::printf("mixed versions: Auto in the 1.2 unit chose %s, %zu stale; in the 3.0 unit chose %s, %zu stale\n",
                chose120.c_str(), stale120, chose300.c_str(), stale300);
    failures += stale120 != 0 || stale300 != 0;
    // Two Autos in one program: the 1.2 one can never have chosen Svm.
    failures += chose120.find("Svm") != std::string::npos;

    clzero::MappedTensor<std::uint32_t, clzero::policy::Persistent> shared(rig.context, rig.queue, {kElements},
                                                                           clzero::Intent::output);
    const std::size_t stale_shared = persistent_inferences_cl120(rig, shared) + stale_after_inferences(rig, shared);
    std::printf("mixed versions: a Persistent tensor made in the 3.0 unit and used in both: %zu stale\n", stale_shared);
    failures += stale_shared != 0;

    // The cross_*.inc code compiled for this same configuration links and runs.
    const std::size_t crossed = cross_parameter(rig) + cross_return(rig);
    std::printf("mixed versions: Auto tensors handed between units of one configuration: %zu stale\n", crossed);
    failures += crossed != 0;
  }
  clReleaseKernel(rig.fill);
  clReleaseProgram(program);
  clReleaseCommandQueue(rig.queue);
  clReleaseContext(rig.context);
  return failures == 0 ? 0 : 1;
}
