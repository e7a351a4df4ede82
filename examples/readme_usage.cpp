// SPDX-License-Identifier: Apache-2.0
// The README's usage snippet, compiled and run as a test: the part between
// the "snippet" markers is what the README shows, character for character.
#define CL_TARGET_OPENCL_VERSION 300
#include <cstdio>
#include <vector>

// snippet begin
#include <clzero/clzero.hpp>

#include <algorithm>

// Once, when the model is loaded: the output tensor, allocated once.
// clzero::MappedTensor<float> uses policy::Auto, the best policy for the device.
struct Model {
  Model(cl_context context, cl_command_queue q, cl_kernel k, std::size_t count)
      : queue(q), kernel(k), n(count), logits(context, q, {count}, clzero::Intent::output) {
    logits.bind(kernel, 0);  // argument 0 of the kernel, set once
  }

  // Every inference: the kernel writes the logits, the host reads them.
  float infer() {
    {
      auto dev = logits.device_access();  // the tensor is now legal for kernels
      clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &n, nullptr,  //
                             dev.wait_count(queue), dev.wait_list(queue), dev.event_slot(queue));
    }  // back to the host, ordered after the kernel's event

    auto view = logits.read_view();  // waits for this tensor's data, never clFinish
    return *std::max_element(view.begin(), view.end());
  }

  cl_command_queue queue;
  cl_kernel kernel;
  std::size_t n;
  clzero::MappedTensor<float> logits;
};
// snippet end

int main() {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  clGetPlatformIDs(1, &platform, nullptr);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr);
  cl_int rc = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &rc);
  const char* src =
      "__kernel void logits(__global float* y, float step) {"
      "  y[get_global_id(0)] = (float)get_global_id(0) * step; }";
  cl_program program = clCreateProgramWithSource(context, 1, &src, nullptr, &rc);
  clBuildProgram(program, 1, &device, "", nullptr, nullptr);
  cl_kernel kernel = clCreateKernel(program, "logits", &rc);
  if (rc != CL_SUCCESS) return 1;
  int failures = 0;
  {
    Model model(context, queue, kernel, 1000);
    for (int i = 1; i <= 50; ++i) {
      const float step = static_cast<float>(i);
      clSetKernelArg(kernel, 1, sizeof step, &step);
      const float best = model.infer();
      if (best != 999.0f * step) ++failures;  // fresh every inference
    }
    std::printf("readme_usage: %s, 50 inferences, %d stale\n", model.logits.policy().describe().c_str(), failures);
  }
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return failures == 0 ? 0 : 1;
}
