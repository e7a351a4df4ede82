// SPDX-License-Identifier: Apache-2.0
// A deliberately wrong program: a kernel writes a buffer while it is mapped
// (undefined behaviour, OpenCL 3.0 section 5.5.4). Under Oclgrind it must be
// reported; the CTest entry passes only if it is, which shows that the
// Oclgrind runs of the real tests can fail.
#include <CL/cl.h>

#include <cstdio>

int main() {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_int rc = clGetPlatformIDs(1, &platform, nullptr);
  if (rc == CL_SUCCESS) rc = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr);
  if (rc != CL_SUCCESS) {
    std::fprintf(stderr, "no OpenCL device (%d)\n", rc);
    return 1;
  }
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &rc);
  const char* source = "__kernel void fill(__global uint* out) { out[get_global_id(0)] = 7u; }";
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &rc);
  clBuildProgram(program, 1, &device, "", nullptr, nullptr);
  cl_kernel kernel = clCreateKernel(program, "fill", &rc);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, 64 * sizeof(cl_uint), nullptr, &rc);
  clSetKernelArg(kernel, 0, sizeof buffer, &buffer);

  void* mapped = clEnqueueMapBuffer(queue, buffer, CL_TRUE, CL_MAP_READ, 0, 64 * sizeof(cl_uint), 0, nullptr,
                                    nullptr, &rc);
  const size_t global = 64;
  clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);  // the bug
  clFinish(queue);
  clEnqueueUnmapMemObject(queue, buffer, mapped, 0, nullptr, nullptr);
  clFinish(queue);

  clReleaseMemObject(buffer);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  std::printf("the kernel ran on a mapped buffer\n");
  return 0;
}
