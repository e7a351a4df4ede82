// SPDX-License-Identifier: Apache-2.0
// The README's out-of-order and several-queues example, compiled and run as a
// test: the part between the "snippet" markers is what the README shows,
// character for character (docs.readme_queues_snippet_matches). main() runs
// it on an out-of-order queue where the device has one, with a second queue
// for the library call, and checks every element of every inference.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

// snippet begin
#include <clzero/clzero.hpp>

#include <algorithm>
#include <vector>

// One inference on an out-of-order queue: the host writes the input, one
// kernel reads it and writes the output, the host reads the output.
float infer(cl_command_queue queue, cl_kernel kernel, clzero::MappedTensor<float>& input,
            clzero::MappedTensor<float>& output, const std::vector<float>& data) {
  {
    auto in = input.write_view();
    std::copy(data.begin(), data.end(), in.begin());
  }
  {
    auto in = input.device_access();
    auto out = output.device_access();
    in.bind(kernel, 0);
    out.bind(kernel, 1);
    // The kernel touches both tensors, so it waits on the union of their
    // lists: each holds what clzero enqueued for this access (an unmap, an
    // upload) and the previous access's commands on that tensor.
    clzero::EventList waits;
    waits.append(in.waits());
    waits.append(out.waits());
    cl_event done = nullptr;
    std::size_t n = output.size();
    clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &n, nullptr, waits.count(), waits.data(), &done);
    in.used_by(done);  // each tensor goes back to the host only after the kernel
    out.used_by(done);
    clReleaseEvent(done);  // used_by() retained references of its own
  }  // both accesses end: clzero enqueues what makes the output host-visible
  auto view = output.read_view();  // waits for this tensor's events only
  return *std::max_element(view.begin(), view.end());
}

// A library whose calls take no wait list and only buffers (CLBlast, clBLAS)
// runs on its own in-order queue: a barrier makes its calls wait for the
// access's events. `output` is buffer-backed (a policy with a cl_mem).
template <class Tensor, class LibraryCall>
void run_library(cl_command_queue library_queue, Tensor& output, LibraryCall call) {
  auto out = output.device_access();
  out.enqueue_barrier(library_queue);  // what follows on library_queue waits for out.waits()
  cl_event done = nullptr;
  call(library_queue, out.buffer(), &done);  // e.g. a GEMM writing the output buffer
  out.used_by(done);  // the access's end flushes library_queue, the view waits for `done`
  clReleaseEvent(done);
}
// snippet end

namespace {

void check(cl_int rc, const char* what) {
  if (rc != CL_SUCCESS) {
    std::fprintf(stderr, "readme_queues: %s failed (%d)\n", what, rc);
    std::exit(1);
  }
}

}  // namespace

int main() {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  check(clGetPlatformIDs(1, &platform, nullptr), "clGetPlatformIDs");
  check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
  cl_int rc = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  check(rc, "clCreateContext");
  const cl_queue_properties out_of_order[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, out_of_order, &rc);
  const bool ooo = rc == CL_SUCCESS;
  if (!ooo) queue = clCreateCommandQueueWithProperties(context, device, nullptr, &rc);
  check(rc, "clCreateCommandQueueWithProperties");
  cl_command_queue library_queue = clCreateCommandQueueWithProperties(context, device, nullptr, &rc);
  check(rc, "clCreateCommandQueueWithProperties");
  const char* src =
      "__kernel void scale(__global const float* x, __global float* y, float k) {"
      "  size_t i = get_global_id(0); y[i] = x[i] * k; }"
      "__kernel void fill(__global float* y, float v) { y[get_global_id(0)] = v + (float)get_global_id(0); }";
  cl_program program = clCreateProgramWithSource(context, 1, &src, nullptr, &rc);
  check(rc, "clCreateProgramWithSource");
  check(clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
  cl_kernel scale = clCreateKernel(program, "scale", &rc);
  check(rc, "clCreateKernel scale");
  cl_kernel fill = clCreateKernel(program, "fill", &rc);
  check(rc, "clCreateKernel fill");

  const std::size_t n = 4096;
  long wrong = 0;
  {
    // Buffer-backed tensors, so that the library call gets a cl_mem on every device.
    using Buffered = clzero::MappedTensor<float, clzero::policy::MapPerInference>;
    clzero::MappedTensor<float> input(context, queue, {n}, clzero::Intent::input);
    clzero::MappedTensor<float> output(context, queue, {n}, clzero::Intent::output);
    Buffered library_output(context, queue, {n}, clzero::Intent::output, {});
    std::vector<float> data(n);
    for (int it = 1; it <= 40; ++it) {
      for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<float>((i * 7 + static_cast<std::size_t>(it)) % 1000);
      const float k = static_cast<float>(it);
      check(clSetKernelArg(scale, 2, sizeof k, &k), "clSetKernelArg");
      infer(queue, scale, input, output, data);
      {
        auto view = output.read_view();
        for (std::size_t i = 0; i < n; ++i)
          if (view[i] != data[i] * k) ++wrong;
      }
      const float v = static_cast<float>(it * 10000);
      run_library(library_queue, library_output, [&](cl_command_queue q, cl_mem y, cl_event* done) {
        check(clSetKernelArg(fill, 0, sizeof y, &y), "clSetKernelArg");
        check(clSetKernelArg(fill, 1, sizeof v, &v), "clSetKernelArg");
        check(clEnqueueNDRangeKernel(q, fill, 1, nullptr, &n, nullptr, 0, nullptr, done), "clEnqueueNDRangeKernel");
      });
      auto view = library_output.read_view();
      for (std::size_t i = 0; i < n; ++i)
        if (view[i] != v + static_cast<float>(i)) ++wrong;
    }
    std::printf("readme_queues: %s queue, %s / %s, 40 inferences, %ld wrong elements\n",
                ooo ? "out-of-order" : "in-order", output.policy().describe().c_str(),
                library_output.policy().describe().c_str(), wrong);
  }
  clReleaseKernel(fill);
  clReleaseKernel(scale);
  clReleaseProgram(program);
  clReleaseCommandQueue(library_queue);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return wrong == 0 ? 0 : 1;
}
