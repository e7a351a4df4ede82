// SPDX-License-Identifier: Apache-2.0
// A trained 64-32-10 MLP classifying 8x8 handwritten digits, run with every
// buffer-backed clzero policy. Each inference the host writes a batch of 64
// images into the input tensor, CLBlast's SGEMM and a small bias(+ReLU) kernel
// run each layer on the engine's queue, and the host reads the logits in
// place. Every logit of every inference is checked against a CPU reference
// (float, same weights); prints test accuracy and time per inference.
//
//   mlp_digits [--data DIR] [--platform NAME] [--out-of-order] [--inject-stale]
//
// DIR holds weights.txt and test_set.txt (train.py writes both). Exits 1 on
// any mismatch, 77 when the device cannot run the requested queue.
// --inject-stale runs no kernels in the second inference, so its logits are
// the first one's; it passes only if the checks catch exactly that inference.
#define CL_TARGET_OPENCL_VERSION 300
#include <clblast_c.h>
#include <clzero/clzero.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_reference.hpp"
#include "model_files.hpp"

#ifndef MLP_DIGITS_DATA_DIR
#define MLP_DIGITS_DATA_DIR "."
#endif

namespace {

using clzero::Intent;
using clzero::MappedTensor;
using mlp_digits::Dense;

constexpr std::size_t kBatch = 64;
constexpr std::size_t kMaxInferences = 300;
constexpr int kSkipped = 77;

const char* kSource = R"CLC(
// After a layer's GEMM: y = y + b per column, then ReLU if asked.
__kernel void bias_activation(__global float* y, __global const float* b, uint columns, uint relu) {
  size_t i = get_global_id(0);
  float v = y[i] + b[i % columns];
  y[i] = relu ? fmax(v, 0.0f) : v;
}
)CLC";

void check(cl_int rc, const char* what) {
  if (rc != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + clzero::error_name(rc));
}

// CLBlast's status codes are OpenCL's where they overlap; its own are -1024
// and below (clblast_c.h).
void check(CLBlastStatusCode rc, const char* what) {
  if (rc != CLBlastSuccess)
    throw std::runtime_error(std::string(what) + " failed: CLBlast status " + std::to_string(int(rc)) +
                             (int(rc) > -1024 ? std::string(" (") + clzero::error_name(cl_int(rc)) + ")" : ""));
}

// What the engine owns whatever clzero does: the queue, the kernel, the
// weights (uploaded once) and the hidden activations, which never leave the
// device and so are plain buffers rather than clzero tensors.
struct Engine {
  cl_device_id device = nullptr;
  clzero::ContextHandle context;
  clzero::QueueHandle queue;
  bool out_of_order = false;
  clzero::ProgramHandle program;
  clzero::KernelHandle bias_activation;
  struct Layer {
    const Dense* dense;
    clzero::MemHandle weights, bias;
  };
  std::vector<Layer> layers;
  std::vector<clzero::MemHandle> hidden;  // batch x outputs of every layer but the last

  cl_mem make_buffer(cl_mem_flags flags, std::size_t bytes, const void* data) {
    cl_int rc = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context.get(), flags, bytes, const_cast<void*>(data), &rc);
    check(rc, "clCreateBuffer");
    return m;
  }

  Engine(cl_device_id d, bool ooo, const std::vector<Dense>& model) : device(d), out_of_order(ooo) {
    cl_int rc = CL_SUCCESS;
    context = clzero::ContextHandle::adopt(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc));
    check(rc, "clCreateContext");
    const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    queue = clzero::QueueHandle::adopt(
        clCreateCommandQueueWithProperties(context.get(), device, ooo ? props : nullptr, &rc));
    check(rc, "clCreateCommandQueueWithProperties");
    program = clzero::ProgramHandle::adopt(clCreateProgramWithSource(context.get(), 1, &kSource, nullptr, &rc));
    check(rc, "clCreateProgramWithSource");
    check(clBuildProgram(program.get(), 1, &device, "", nullptr, nullptr), "clBuildProgram");
    bias_activation = clzero::KernelHandle::adopt(clCreateKernel(program.get(), "bias_activation", &rc));
    check(rc, "clCreateKernel");
    for (const Dense& l : model) {
      const cl_mem_flags upload = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
      layers.push_back({&l, clzero::MemHandle::adopt(make_buffer(upload, l.weights.size() * 4, l.weights.data())),
                        clzero::MemHandle::adopt(make_buffer(upload, l.bias.size() * 4, l.bias.data()))});
      if (&l != &model.back())
        hidden.push_back(clzero::MemHandle::adopt(make_buffer(CL_MEM_READ_WRITE, kBatch * l.outputs * 4, nullptr)));
    }
  }
};

// CLBlast takes no wait list. On an in-order queue the order of enqueueing
// is enough; on an out-of-order queue a barrier makes the GEMM wait for
// clzero's unmap or upload and for the previous layer (OpenCL 3.0 section
// 5.13: only events and barriers order commands there).
void order_next_command(const Engine& e, const std::vector<cl_event>& waits) {
  if (!e.out_of_order || waits.empty()) return;
  check(clEnqueueBarrierWithWaitList(e.queue.get(), static_cast<cl_uint>(waits.size()), waits.data(), nullptr),
        "clEnqueueBarrierWithWaitList");
}

// One inference: the host writes the batch into the input tensor, every layer
// runs as CLBlast's SGEMM plus the bias kernel, and the logits tensor goes
// back to the host ordered after the last kernel. The caller reads it.
template <class Policy>
void infer(Engine& e, MappedTensor<float, Policy>& input, MappedTensor<float, Policy>& logits,
           const std::vector<float>& batch, bool run_kernels = true) {
  {
    auto x = input.write_view();  // the whole batch is overwritten
    std::copy(batch.begin(), batch.end(), x.begin());
  }
  auto in = input.device_access();
  auto out = logits.device_access();
  cl_command_queue queue = e.queue.get();
  clzero::EventHandle previous;  // the last command of the layer before
  for (std::size_t i = 0; run_kernels && i < e.layers.size(); ++i) {
    const Dense& d = *e.layers[i].dense;
    const bool first = i == 0, last = i + 1 == e.layers.size();
    cl_mem a = first ? in.buffer() : e.hidden[i - 1].get();
    cl_mem c = last ? out.buffer() : e.hidden[i].get();

    std::vector<cl_event> waits;
    if (first) waits.insert(waits.end(), in.waits().begin(), in.waits().end());
    if (last) waits.insert(waits.end(), out.waits().begin(), out.waits().end());
    if (previous) waits.push_back(previous.get());
    order_next_command(e, waits);

    cl_event gemm_event = nullptr;
    check(CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, kBatch, d.outputs, d.inputs,
                       1.0f, a, 0, d.inputs, e.layers[i].weights.get(), 0, d.outputs, 0.0f, c, 0, d.outputs, &queue,
                       &gemm_event),
          "CLBlastSgemm");
    clzero::EventHandle gemm = clzero::EventHandle::adopt(gemm_event);
    if (first) in.used_by(gemm.get());  // the input is free once the first GEMM has read it

    cl_kernel k = e.bias_activation.get();
    const cl_mem bias = e.layers[i].bias.get();
    const cl_uint columns = static_cast<cl_uint>(d.outputs), relu = d.relu ? 1u : 0u;
    check(clSetKernelArg(k, 0, sizeof c, &c), "clSetKernelArg 0");
    check(clSetKernelArg(k, 1, sizeof bias, &bias), "clSetKernelArg 1");
    check(clSetKernelArg(k, 2, sizeof columns, &columns), "clSetKernelArg 2");
    check(clSetKernelArg(k, 3, sizeof relu, &relu), "clSetKernelArg 3");
    const std::size_t elements = kBatch * d.outputs;
    cl_event bias_event = nullptr;
    check(clEnqueueNDRangeKernel(queue, k, 1, nullptr, &elements, nullptr, 1, &gemm_event,
                                 last ? out.event_slot() : &bias_event),
          "clEnqueueNDRangeKernel bias_activation");
    previous = clzero::EventHandle::adopt(bias_event);
  }
}  // both tensors go back to the host: ordered after the events they recorded

struct Report {
  std::string policy;
  std::string skipped;  // why, when the policy did not run
  std::size_t inferences = 0, rows = 0, correct = 0;
  std::size_t argmax_mismatches = 0, logit_mismatches = 0;
  std::vector<std::size_t> wrong_inferences;  // those with any mismatch
  double max_relative_error = 0, first_us = 0, median_us = 0;
};

struct Data {
  std::vector<Dense> layers;
  mlp_digits::TestSet test;
  std::vector<float> reference;  // samples x classes
  std::size_t classes() const { return layers.back().outputs; }
};

// Logits agree when |a - b| <= 1e-5 * max(1, |b|), b the CPU's. Both sides
// compute in float from the same weights but sum in different orders (CLBlast
// tiles the K loop, the CPU sums in index order), so they differ by rounding
// alone, and rounding grows with the magnitude of the terms, not of the sum.
// Hence relative to |b| for large logits (up to 28 on this test set) and
// absolute near zero, where cancellation makes a relative error meaningless
// (one logit's terms add up to at most 44 x max(1, |b|) here). Measured with
// PoCL 3.1 (CPU): at most 3.2e-6. A stale logit is far outside: the
// --inject-stale run's 640 stale logits all fail, by up to 21.
bool logits_agree(float device, float cpu, double& relative_error) {
  const double err = std::fabs(double(device) - double(cpu));
  const double scale = std::max(1.0, std::fabs(double(cpu)));
  relative_error = err / scale;
  return err <= 1e-5 * scale;
}

// One policy: the tensors are allocated once, then every inference takes the
// next kBatch samples (wrapping around), so the batch differs every time and
// over the run every sample is seen equally often.
template <class Policy>
Report run(Engine& e, const Data& data, const char* label, bool inject_stale,
           const typename Policy::Options& options = typename Policy::Options{}) {
  Report r;
  r.policy = label;
  const std::size_t n = data.test.samples, features = data.test.features, classes = data.classes();
  std::optional<MappedTensor<float, Policy>> input, logits;
  try {
    input.emplace(e.context.get(), e.queue.get(), clzero::Shape{kBatch, features}, Intent::input, options);
    logits.emplace(e.context.get(), e.queue.get(), clzero::Shape{kBatch, classes}, Intent::output, options);
  } catch (const clzero::Error& err) {
    if (err.kind() != clzero::ErrorKind::unsupported) throw;
    r.skipped = std::string("the device cannot run it: ") + err.what();
    return r;
  }
  r.policy = logits->policy().describe();
  if (input->buffer() == nullptr || logits->buffer() == nullptr) {
    r.skipped = "CLBlast takes a cl_mem and offsets; this policy gives kernels a pointer, not a buffer";
    return r;
  }

  // lcm(n, kBatch) / kBatch inferences see every sample equally often.
  const std::size_t inferences = std::clamp(n / std::gcd(n, kBatch), (n + kBatch - 1) / kBatch, kMaxInferences);

  std::vector<float> batch(kBatch * features);
  std::vector<double> times;
  for (std::size_t inference = 0; inference < inferences; ++inference) {
    const std::size_t start = inference * kBatch;
    for (std::size_t row = 0; row < kBatch; ++row)
      std::copy_n(&data.test.inputs[((start + row) % n) * features], features, &batch[row * features]);

    const auto t0 = std::chrono::steady_clock::now();
    infer(e, *input, *logits, batch, !(inject_stale && inference == 1));
    auto y = logits->read_view();  // blocks only until the last kernel's result is visible
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());

    const std::size_t mismatches_before = r.argmax_mismatches + r.logit_mismatches;
    for (std::size_t row = 0; row < kBatch; ++row) {
      const std::size_t sample = (start + row) % n;
      const float* got = &y[row * classes];
      const float* want = &data.reference[sample * classes];
      for (std::size_t c = 0; c < classes; ++c) {
        double rel = 0;
        if (!logits_agree(got[c], want[c], rel)) ++r.logit_mismatches;
        r.max_relative_error = std::max(r.max_relative_error, rel);
      }
      const int predicted = mlp_digits::argmax(got, classes);
      if (predicted != mlp_digits::argmax(want, classes)) ++r.argmax_mismatches;
      if (predicted == data.test.labels[sample]) ++r.correct;
      ++r.rows;
    }
    if (r.argmax_mismatches + r.logit_mismatches != mismatches_before) r.wrong_inferences.push_back(inference);
  }
  r.inferences = inferences;
  r.first_us = times.front();
  std::sort(times.begin() + 1, times.end());
  r.median_us = times.size() > 1 ? times[1 + (times.size() - 1) / 2] : times.front();
  return r;
}

cl_device_id pick_device(const char* want_platform) {
  cl_uint np = 0;
  check(clGetPlatformIDs(0, nullptr, &np), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(np);
  check(clGetPlatformIDs(np, platforms.data(), nullptr), "clGetPlatformIDs");
  for (cl_platform_id p : platforms) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (want_platform != nullptr && std::strstr(name, want_platform) == nullptr) continue;
    cl_device_id device = nullptr;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS) return device;
  }
  return nullptr;
}

int run_all(int argc, char** argv) {
  std::string data_dir = MLP_DIGITS_DATA_DIR;
  const char* platform = nullptr;
  bool out_of_order = false, inject_stale = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--data" && i + 1 < argc) data_dir = argv[++i];
    else if (arg == "--platform" && i + 1 < argc) platform = argv[++i];
    else if (arg == "--out-of-order") out_of_order = true;
    else if (arg == "--inject-stale") inject_stale = true;
    else {
      std::fprintf(stderr, "usage: mlp_digits [--data DIR] [--platform NAME] [--out-of-order] [--inject-stale]\n");
      return 2;
    }
  }

  Data data;
  data.layers = mlp_digits::load_layers(data_dir + "/weights.txt");
  data.test = mlp_digits::load_test_set(data_dir + "/test_set.txt");
  if (data.test.features != data.layers.front().inputs)
    throw std::runtime_error("the test set's features do not match the model's inputs");
  for (std::size_t s = 0; s < data.test.samples; ++s) {
    const std::vector<float> z = reference_logits(data.layers, &data.test.inputs[s * data.test.features]);
    data.reference.insert(data.reference.end(), z.begin(), z.end());
  }

  const cl_device_id device = pick_device(platform);
  if (device == nullptr) {
    std::fprintf(stderr, "no OpenCL device found%s%s\n", platform ? " on platform " : "", platform ? platform : "");
    return 1;
  }
  const clzero::DeviceCaps caps = clzero::DeviceCaps::query(device);
  std::printf("device: %s (%s, %s, driver %s)\n", caps.name.c_str(), caps.platform_name.c_str(),
              caps.device_version.c_str(), caps.driver_version.c_str());
  if (out_of_order && !caps.out_of_order_queue) {
    std::printf("SKIPPED: the device offers no out-of-order queue\n");
    return kSkipped;
  }
  std::printf("model: ");
  for (const Dense& d : data.layers) std::printf("%zu-", d.inputs);
  std::printf("%zu MLP, batch %zu, %zu test samples, %s queue, GEMMs by CLBlast\n\n", data.classes(), kBatch,
              data.test.samples, out_of_order ? "out-of-order" : "in-order");

  Engine engine(device, out_of_order, data.layers);
  std::vector<Report> reports;
  reports.push_back(run<clzero::policy::MapPerInference>(engine, data, "MapPerInference", inject_stale));
  reports.push_back(run<clzero::policy::Persistent>(engine, data, "Persistent", inject_stale));
  reports.push_back(run<clzero::policy::CopyToPinned>(engine, data, "CopyToPinned", inject_stale));
  reports.push_back(run<clzero::policy::Svm>(engine, data, "Svm", inject_stale));
  reports.push_back(run<clzero::policy::UnifiedHost>(engine, data, "UnifiedHost", inject_stale));
  // CLBlast takes a cl_mem: Auto chooses among the buffer-backed policies,
  // so it runs on every device (never skipped).
  clzero::policy::Auto::Options buffers;
  buffers.buffers_only = true;
  reports.push_back(run<clzero::policy::Auto>(engine, data, "Auto", inject_stale, buffers));
  const bool auto_ran = reports.back().skipped.empty();

  bool ok = true;
  std::size_t ran = 0;
  std::printf("%-44s %6s %9s %10s %11s %9s %9s  %s\n", "policy", "runs", "accuracy", "first us", "median us",
              "max rel", "mismatch", "verdict");
  for (const Report& r : reports) {
    if (!r.skipped.empty()) {
      std::printf("%-44s skipped: %s\n", r.policy.c_str(), r.skipped.c_str());
      continue;
    }
    ++ran;
    const double accuracy = double(r.correct) / double(r.rows);
    const bool good = inject_stale ? r.wrong_inferences == std::vector<std::size_t>{1}
                                   : r.wrong_inferences.empty() && accuracy > 0.9;
    ok = ok && good;
    std::printf("%-44s %6zu %9.4f %10.0f %11.1f %9.1e %4zu/%-4zu  %s\n", r.policy.c_str(), r.inferences, accuracy,
                r.first_us, r.median_us, r.max_relative_error, r.argmax_mismatches, r.logit_mismatches,
                good ? "OK" : "WRONG");
  }
  ok = ok && ran > 0;
  if (!auto_ran) {
    std::printf("Auto with buffers_only was skipped; it must run on every device\n");
    ok = false;
  }
  std::printf("\n(first us: the first inference; for the first policy it includes CLBlast building its kernels.\n"
              " mismatch: samples whose class / logits whose value differ from the CPU reference)\n");
  if (inject_stale)
    std::printf("%s: the stale second inference was %s\n", ok ? "PASS" : "FAIL",
                ok ? "caught, and only it, with every policy" : "NOT caught exactly (see the table)");
  else
    std::printf("%s: %s\n", ok ? "PASS" : "FAIL",
                ok ? "every logit of every inference matched the CPU reference (|a-b| <= 1e-5 max(1,|b|)), "
                     "accuracy > 0.9"
                   : "a policy gave a wrong logit, a different class or accuracy <= 0.9");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_all(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlp_digits: %s\n", e.what());
    return 1;
  }
}
