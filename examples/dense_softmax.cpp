// SPDX-License-Identifier: Apache-2.0
// A small inference run with every clzero policy: a dense layer and a softmax
// over a batch, a few hundred times. Each inference gets a new input, written
// by the host into an input tensor; the output tensor is read on the host
// without a copy or a visible map call, and every output is checked against a
// CPU reference. Prints the time per inference for each policy and a verdict.
//
//   dense_softmax [platform-name-substring]
#define CL_TARGET_OPENCL_VERSION 300
#include <clzero/clzero.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kBatch = 32, kIn = 256, kOut = 16;
constexpr int kInferences = 300;

const char* kSource = R"CLC(
// One work-item per (sample, class): logits = x W + b, then a numerically
// stable softmax per sample by the first work-item of each row.
__kernel void dense(__global const float* x, __global const float* w, __global const float* b,
                    __global float* y, uint n_in, uint n_out) {
  uint s = get_global_id(1), c = get_global_id(0);
  float acc = b[c];
  for (uint k = 0; k < n_in; ++k) acc += x[s * n_in + k] * w[k * n_out + c];
  y[s * n_out + c] = acc;
}
__kernel void softmax(__global float* y, uint n_out) {
  uint s = get_global_id(0);
  __global float* row = y + s * n_out;
  float m = row[0];
  for (uint c = 1; c < n_out; ++c) m = fmax(m, row[c]);
  float sum = 0.0f;
  for (uint c = 0; c < n_out; ++c) { row[c] = exp(row[c] - m); sum += row[c]; }
  for (uint c = 0; c < n_out; ++c) row[c] /= sum;
}
)CLC";

// Setup failures end the program; failures inside one policy's run are
// reported with that policy and the other policies still run.
void check(cl_int rc, const char* what) {
  if (rc != CL_SUCCESS) throw clzero::Error("dense_softmax", what, rc);
}

// Deterministic inputs that change every inference.
float input_value(std::size_t i, int inference) {
  return std::sin(0.37f * static_cast<float>(i) + 0.11f * static_cast<float>(inference));
}

void reference(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
               std::vector<float>& y) {
  for (std::size_t s = 0; s < kBatch; ++s) {
    double row[kOut];
    double m = -1e300;
    for (std::size_t c = 0; c < kOut; ++c) {
      double acc = b[c];
      for (std::size_t k = 0; k < kIn; ++k) acc += double(x[s * kIn + k]) * double(w[k * kOut + c]);
      row[c] = acc;
      m = std::max(m, acc);
    }
    double sum = 0;
    for (std::size_t c = 0; c < kOut; ++c) sum += (row[c] = std::exp(row[c] - m));
    for (std::size_t c = 0; c < kOut; ++c) y[s * kOut + c] = static_cast<float>(row[c] / sum);
  }
}

struct Engine {
  cl_context context;
  cl_command_queue queue;
  cl_program program;
  cl_mem weights, bias;
};

// Kernel objects of one model instance. Each policy's run gets its own, as
// each model an engine loads would: on NVIDIA's driver 580 a kernel whose
// argument was once an SVM pointer (policy::Svm) can no longer be enqueued
// after that argument is set to a cl_mem (CL_INVALID_KERNEL_ARGS; see
// docs/drivers.md, "A kernel argument once set to an SVM pointer cannot take
// a cl_mem again"), so kernels are not shared between SVM and buffer tensors.
struct Kernels {
  explicit Kernels(const Engine& e) {
    cl_int rc = CL_SUCCESS;
    dense = clCreateKernel(e.program, "dense", &rc);
    check(rc, "clCreateKernel dense");
    softmax = clCreateKernel(e.program, "softmax", &rc);
    check(rc, "clCreateKernel softmax");
    const cl_uint in = kIn, out = kOut;
    check(clSetKernelArg(dense, 1, sizeof(cl_mem), &e.weights), "dense arg 1");
    check(clSetKernelArg(dense, 2, sizeof(cl_mem), &e.bias), "dense arg 2");
    check(clSetKernelArg(dense, 4, sizeof in, &in), "dense arg 4");
    check(clSetKernelArg(dense, 5, sizeof out, &out), "dense arg 5");
    check(clSetKernelArg(softmax, 1, sizeof out, &out), "softmax arg 1");
  }
  ~Kernels() {
    clReleaseKernel(dense);
    clReleaseKernel(softmax);
  }
  Kernels(const Kernels&) = delete;
  Kernels& operator=(const Kernels&) = delete;
  cl_kernel dense = nullptr, softmax = nullptr;
};

struct Result {
  double us_per_inference = 0;
  double max_error = 0;
  std::string policy;
};

// One policy: allocate the tensors once, then run kInferences inferences.
template <class Policy>
Result run(const Engine& e) {
  using clzero::Intent;
  const Kernels k(e);
  clzero::MappedTensor<float, Policy> input(e.context, e.queue, {kBatch, kIn}, Intent::input, {});
  clzero::MappedTensor<float, Policy> output(e.context, e.queue, {kBatch, kOut}, Intent::output, {});
  std::vector<float> x(kBatch * kIn), w(kIn * kOut), b(kOut), ref(kBatch * kOut);
  check(clEnqueueReadBuffer(e.queue, e.weights, CL_TRUE, 0, w.size() * 4, w.data(), 0, nullptr, nullptr), "read w");
  check(clEnqueueReadBuffer(e.queue, e.bias, CL_TRUE, 0, b.size() * 4, b.data(), 0, nullptr, nullptr), "read b");

  Result r;
  r.policy = output.policy().describe();
  std::vector<double> times;
  for (int n = 0; n < kInferences; ++n) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = input_value(i, n);
    const auto t0 = std::chrono::steady_clock::now();
    {
      auto in = input.write_view();  // the host writes the whole input
      std::memcpy(in.data(), x.data(), in.size_bytes());
    }
    {
      auto in = input.device_access();
      auto out = output.device_access();
      in.bind(k.dense, 0);
      out.bind(k.dense, 3);
      out.bind(k.softmax, 0);
      const std::size_t dense_size[2] = {kOut, kBatch};
      std::vector<cl_event> waits(in.waits().begin(), in.waits().end());
      waits.insert(waits.end(), out.waits().begin(), out.waits().end());
      cl_event dense_done = nullptr;
      cl_int drc = clEnqueueNDRangeKernel(e.queue, k.dense, 2, nullptr, dense_size, nullptr,
                                          static_cast<cl_uint>(waits.size()), waits.data(), &dense_done);
      check(drc, "dense");
      in.used_by(dense_done);
      const std::size_t rows = kBatch;
      check(clEnqueueNDRangeKernel(e.queue, k.softmax, 1, nullptr, &rows, nullptr, 1, &dense_done, out.event_slot()),
            "softmax");
      clReleaseEvent(dense_done);
    }                             // both tensors go back to the host, ordered after their kernels
    auto y = output.read_view();  // blocks only until the softmax is visible
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());

    reference(x, w, b, ref);
    for (std::size_t s = 0; s < kBatch; ++s)
      for (std::size_t c = 0; c < kOut; ++c)
        r.max_error = std::max(r.max_error, double(std::fabs(y(s, c) - ref[s * kOut + c])));
  }
  std::sort(times.begin(), times.end());
  r.us_per_inference = times[times.size() / 2];
  return r;
}

}  // namespace

int main(int argc, char** argv) try {
  const char* want = argc > 1 ? argv[1] : nullptr;
  cl_uint np = 0;
  check(clGetPlatformIDs(0, nullptr, &np), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(np);
  check(clGetPlatformIDs(np, platforms.data(), nullptr), "clGetPlatformIDs");
  cl_device_id device = nullptr;
  for (cl_platform_id p : platforms) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (want != nullptr && std::strstr(name, want) == nullptr) continue;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS) break;
  }
  if (device == nullptr) {
    std::fprintf(stderr, "no OpenCL device found%s%s\n", want ? " on platform " : "", want ? want : "");
    return 1;
  }
  const clzero::DeviceCaps caps = clzero::DeviceCaps::query(device);
  std::printf("device: %s (%s, %s, driver %s)\n", caps.name.c_str(), caps.platform_name.c_str(),
              caps.device_version.c_str(), caps.driver_version.c_str());
  std::printf("model: dense %zux%zu + softmax, batch %zu, %d inferences per policy\n\n", kIn, kOut, kBatch,
              kInferences);

  cl_int rc = CL_SUCCESS;
  Engine e{};
  e.context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  check(rc, "clCreateContext");
  e.queue = clCreateCommandQueueWithProperties(e.context, device, nullptr, &rc);  // in-order
  check(rc, "clCreateCommandQueueWithProperties");
  e.program = clCreateProgramWithSource(e.context, 1, &kSource, nullptr, &rc);
  check(rc, "clCreateProgramWithSource");
  check(clBuildProgram(e.program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
  std::vector<float> w(kIn * kOut), b(kOut);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * std::cos(0.7f * static_cast<float>(i));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = 0.01f * static_cast<float>(i);
  e.weights = clCreateBuffer(e.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, w.size() * 4, w.data(), &rc);
  check(rc, "weights");
  e.bias = clCreateBuffer(e.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, b.size() * 4, b.data(), &rc);
  check(rc, "bias");

  std::vector<Result> results;
  auto attempt = [&](const char* name, Result (*run_policy)(const Engine&)) {
    try {
      results.push_back(run_policy(e));
    } catch (const clzero::Error& error) {
      Result failed;
      failed.policy = name;
      failed.max_error = -1;
      std::printf("%s failed: %s\n", name, error.what());
      results.push_back(failed);
    }
  };
  attempt("MapPerInference", &run<clzero::policy::MapPerInference>);
  attempt("Persistent", &run<clzero::policy::Persistent>);
  attempt("CopyToPinned", &run<clzero::policy::CopyToPinned>);
  if (caps.svm_any()) attempt("Svm", &run<clzero::policy::Svm>);
  attempt("Auto", &run<clzero::policy::Auto>);

  bool all_ok = true;
  std::printf("%-52s %14s %12s  %s\n", "policy", "us/inference", "max |error|", "verdict");
  for (const Result& r : results) {
    const bool ok = r.max_error >= 0 && r.max_error < 1e-5;
    all_ok = all_ok && ok;
    std::printf("%-52s %14.1f %12.2e  %s\n", r.policy.c_str(), r.us_per_inference, r.max_error,
                ok                ? "OK"
                : r.max_error < 0 ? "FAILED"
                                  : "WRONG");
  }
  std::printf("\n%s: every output of every inference %s the CPU reference (tolerance 1e-5)\n", all_ok ? "PASS" : "FAIL",
              all_ok ? "matched" : "did NOT match");

  clReleaseMemObject(e.weights);
  clReleaseMemObject(e.bias);
  clReleaseProgram(e.program);
  clReleaseCommandQueue(e.queue);
  clReleaseContext(e.context);
  return all_ok ? 0 : 1;
} catch (const clzero::Error& error) {
  std::fprintf(stderr, "%s\n", error.what());
  return 1;
}
