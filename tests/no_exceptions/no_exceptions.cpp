// SPDX-License-Identifier: Apache-2.0
// clzero in a program built with -fno-exceptions, as engines on Android are:
// every policy instantiated, a full inference checked element by element,
// and each kind of error delivered to the handler set with
// clzero::set_error_handler before the process ends.
//
//   no_exceptions inference   every policy the device offers, fresh data
//   no_exceptions misuse      a misuse reaches the handler, which exits 0
//   no_exceptions invalid     a construction error reaches the handler
//   no_exceptions opencl      a failed OpenCL call (the fault layer fails it)
//   no_exceptions destructor  the same, inside a DeviceAccess's destructor:
//                             without exceptions it reaches set_error_handler
//                             too (with them, the cleanup handler)
//   no_exceptions abort       no handler: clzero prints the error and aborts
//   no_exceptions returns     a handler that returns: clzero aborts after it
#include <clzero/clzero.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#error "this test must be built with -fno-exceptions"
#endif
#if !defined(CLZERO_NO_EXCEPTIONS)
#error "clzero must define CLZERO_NO_EXCEPTIONS by itself when exceptions are off"
#endif

template class clzero::MappedTensor<float, clzero::policy::MapPerInference>;
template class clzero::MappedTensor<float, clzero::policy::Persistent>;
template class clzero::MappedTensor<std::uint8_t, clzero::policy::CopyToPinned>;
template class clzero::MappedTensor<double, clzero::policy::UnifiedHost>;
template class clzero::MappedTensor<std::int32_t, clzero::policy::Auto>;
#if defined(CL_VERSION_2_0)
template class clzero::MappedTensor<float, clzero::policy::Svm>;
#endif

namespace {

const char* kind_name(clzero::ErrorKind k) {
  switch (k) {
    case clzero::ErrorKind::opencl: return "opencl";
    case clzero::ErrorKind::invalid_argument: return "invalid_argument";
    case clzero::ErrorKind::misuse: return "misuse";
    case clzero::ErrorKind::unsupported: return "unsupported";
    case clzero::ErrorKind::unusable: return "unusable";
  }
  return "?";
}

// The handler an engine would install: log, then leave without unwinding.
void log_and_exit(const clzero::Error& e) noexcept {
  std::printf("handler received: kind=%s api=%s code=%s: %s\n", kind_name(e.kind()), e.api(), e.code_name(), e.what());
  std::fflush(stdout);
  _exit(0);
}

void cleanup_log_and_exit(const clzero::Error& e) noexcept {
  std::printf("cleanup handler received: %s\n", e.what());
  std::fflush(stdout);
  _exit(0);
}

void log_and_return(const clzero::Error& e) noexcept {
  std::printf("handler received and returned: %s\n", e.what());
  std::fflush(stdout);
}

struct Device {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_program program = nullptr;
  clzero::DeviceCaps caps;

  Device() {
    cl_platform_id platform = nullptr;
    if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS)
      fail("no OpenCL device");
    cl_int rc = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
#if defined(CL_VERSION_2_0)
    queue = clCreateCommandQueueWithProperties(context, device, nullptr, &rc);
#else
    queue = clCreateCommandQueue(context, device, 0, &rc);
#endif
    const char* src =
        "__kernel void fill(__global uint* out, uint n, uint iter) {"
        "  uint i = get_global_id(0); if (i < n) out[i] = i * 7u + iter; }";
    program = clCreateProgramWithSource(context, 1, &src, nullptr, &rc);
    if (rc != CL_SUCCESS || clBuildProgram(program, 1, &device, "", nullptr, nullptr) != CL_SUCCESS)
      fail("the kernel did not build");
    caps = clzero::DeviceCaps::query(device);
  }
  ~Device() {
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
  }
  [[noreturn]] static void fail(const char* why) {
    std::printf("FAIL: %s\n", why);
    std::exit(1);
  }
};

// Three inferences, every element checked; returns the number checked.
template <class Policy>
std::size_t inferences(Device& d, const typename Policy::Options& options) {
  const cl_uint n = 10007;
  clzero::MappedTensor<std::uint32_t, Policy> t(d.context, d.queue, {n}, clzero::Intent::output, options);
  cl_int rc = CL_SUCCESS;
  cl_kernel k = clCreateKernel(d.program, "fill", &rc);
  std::size_t checked = 0;
  for (cl_uint iter = 1; iter <= 3; ++iter) {
    {
      auto dev = t.device_access();
      dev.bind(k, 0);
      clSetKernelArg(k, 1, sizeof n, &n);
      clSetKernelArg(k, 2, sizeof iter, &iter);
      const std::size_t global = n;
      if (clEnqueueNDRangeKernel(d.queue, k, 1, nullptr, &global, nullptr, dev.wait_count(), dev.wait_list(),
                                 dev.event_slot()) != CL_SUCCESS)
        Device::fail("clEnqueueNDRangeKernel");
    }
    auto view = t.read_view();
    for (cl_uint i = 0; i < n; ++i)
      if (view[i] != i * 7u + iter) Device::fail(Policy::name);
    checked += view.size();
  }
  clReleaseKernel(k);
  return checked;
}

int inference(Device& d) {
  std::size_t checked = 0;
  checked += inferences<clzero::policy::MapPerInference>(d, {});
  checked += inferences<clzero::policy::Persistent>(d, {clzero::Allocation::alloc_host_ptr()});
  checked += inferences<clzero::policy::Persistent>(d, {clzero::Allocation::use_host_ptr()});
  checked += inferences<clzero::policy::CopyToPinned>(d, {});
  checked += inferences<clzero::policy::Auto>(d, {});
#if defined(CL_VERSION_2_0)
  if (d.caps.svm_fine_grain_buffer) checked += inferences<clzero::policy::Svm>(d, {clzero::policy::Svm::Grain::fine});
  if (d.caps.svm_coarse_grain_buffer)
    checked += inferences<clzero::policy::Svm>(d, {clzero::policy::Svm::Grain::coarse});
#endif
  std::printf("PASS: %zu elements checked without exceptions\n", checked);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* scenario = argc > 1 ? argv[1] : "inference";
  Device d;
  if (std::strcmp(scenario, "inference") == 0) return inference(d);
  if (std::strcmp(scenario, "abort") != 0)
    clzero::set_error_handler(std::strcmp(scenario, "returns") == 0 ? &log_and_return : &log_and_exit);

  if (std::strcmp(scenario, "misuse") == 0 || std::strcmp(scenario, "abort") == 0 ||
      std::strcmp(scenario, "returns") == 0) {
    clzero::MappedTensor<float, clzero::policy::Persistent> t(d.context, d.queue, {16}, clzero::Intent::output);
    auto view = t.read_view();
    (void)t.device_access();  // a kernel must not touch a mapped tensor
  } else if (std::strcmp(scenario, "invalid") == 0) {
    clzero::MappedTensor<float, clzero::policy::Persistent> t(nullptr, nullptr, {16}, clzero::Intent::output);
  } else if (std::strcmp(scenario, "opencl") == 0) {
    clzero::MappedTensor<float, clzero::policy::Persistent> t(d.context, d.queue, {16}, clzero::Intent::output);
  } else if (std::strcmp(scenario, "destructor") == 0) {
    clzero::set_cleanup_error_handler(&cleanup_log_and_exit);
    clzero::MappedTensor<float, clzero::policy::Persistent> t(d.context, d.queue, {16}, clzero::Intent::output);
    { auto dev = t.device_access(); }  // ending it maps the tensor again: the map fails
  }
  std::printf("FAIL: scenario %s reached its end; the error did not stop it\n", scenario);
  return 1;
}
