// SPDX-License-Identifier: Apache-2.0
// docs/policies.md's example of Auto's options, compiled and run as a test:
// the part between the "snippet" markers is what the page shows, character
// for character (docs.policies_snippet_matches). C++17: no designated
// initializers.
#define CL_TARGET_OPENCL_VERSION 300
#include <clzero/clzero.hpp>

#include <cstdio>

// snippet begin
// The rules alone decide, without the measurement on discrete GPUs.
clzero::MappedTensor<float> make_logits(cl_context context, cl_command_queue queue, std::size_t n) {
  clzero::policy::Auto::Options options;
  options.measure = false;
  return clzero::MappedTensor<float>(context, queue, {n}, clzero::Intent::output, options);
}
// snippet end

int main() {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_int rc = clGetPlatformIDs(1, &platform, nullptr);
  if (rc == CL_SUCCESS) rc = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr);
  if (rc != CL_SUCCESS) return 1;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &rc);
  int status = 1;
  {
    clzero::MappedTensor<float> logits = make_logits(context, queue, 1000);
    const clzero::policy::Choice& choice = logits.policy().choice();
    // Without the measurement, the choice is the rules' alone.
    const bool rules_only = choice == clzero::policy::choose(clzero::DeviceCaps::query(device), clzero::Intent::output) &&
                            choice.reason.find("measure") == std::string::npos;
    std::printf("policies_auto_options: %s (%s)\n", choice.label().c_str(), choice.reason.c_str());
    status = rules_only && logits.size() == 1000 ? 0 : 1;
  }
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return status;
}
