// SPDX-License-Identifier: Apache-2.0
// clzero-info: for every OpenCL platform and device, what matters for zero
// copy (memory model, SVM, vendor host-memory extensions), the policy
// policy::Auto picks for each intent and why, and the measured time of one
// inference with every policy the device offers (each checked element by
// element).
//
//   clzero-info [--no-measure] [--platform SUBSTRING] [--iterations N]
#include <clzero/clzero.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Args {
  bool measure = true;
  const char* platform = nullptr;
  int iterations = 15;
};

std::string bytes_text(cl_ulong b) {
  char s[32];
  if (b >= (cl_ulong{1} << 30))
    std::snprintf(s, sizeof s, "%.1f GiB", double(b) / double(1u << 30));
  else if (b >= (cl_ulong{1} << 20))
    std::snprintf(s, sizeof s, "%.1f MiB", double(b) / double(1u << 20));
  else if (b >= 1024)
    std::snprintf(s, sizeof s, "%.0f KiB", double(b) / 1024.0);
  else
    std::snprintf(s, sizeof s, "%llu B", static_cast<unsigned long long>(b));
  return s;
}

std::string svm_text(const clzero::DeviceCaps& c) {
  std::string s;
  auto add = [&](bool has, const char* what) {
    if (has) s += (s.empty() ? "" : ", ") + std::string(what);
  };
  add(c.svm_coarse_grain_buffer, "coarse-grained buffer");
  add(c.svm_fine_grain_buffer, "fine-grained buffer");
  add(c.svm_fine_grain_system, "fine-grained system");
  add(c.svm_atomics, "atomics");
  return s.empty() ? "none" : s;
}

void row(const char* key, const std::string& value) { std::printf("    %-26s %s\n", key, value.c_str()); }

void device_report(cl_device_id device, const Args& args) {
  const clzero::DeviceCaps c = clzero::DeviceCaps::query(device);
  std::printf("  Device: %s\n", c.name.c_str());
  row("version", c.device_version + ", driver " + c.driver_version);
  row("type", c.is_gpu() ? "GPU" : c.is_cpu() ? "CPU" : "other");
  row("host-unified memory", c.host_unified_memory ? "yes (maps need not copy)" : "no (discrete)");
  row("max allocation", bytes_text(c.max_mem_alloc_size));
  row("base address alignment", std::to_string(c.mem_base_addr_align_bits) + " bits");
  row("out-of-order queues", c.out_of_order_queue ? "yes" : "no");
  row("SVM", svm_text(c));
  std::string vendor;
  if (c.nv_create_buffer) vendor += "cl_nv_create_buffer ";
  if (c.arm_import_memory) vendor += "cl_arm_import_memory ";
  if (c.qcom_ext_host_ptr) vendor += "cl_qcom_ext_host_ptr ";
  if (c.intel_usm_host) vendor += "cl_intel_unified_shared_memory (host) ";
  row("vendor host memory", vendor.empty() ? "none" : vendor);
  std::printf("    Auto's rules pick:\n");
  for (clzero::Intent i : {clzero::Intent::output, clzero::Intent::input, clzero::Intent::inout}) {
    const clzero::policy::Choice choice = clzero::policy::choose(c, i);
    std::printf("      %-7s %s: %s\n", clzero::to_string(i), choice.label().c_str(), choice.reason.c_str());
  }
  if (!args.measure) return;

  cl_int rc = CL_SUCCESS;
  clzero::ContextHandle context =
      clzero::ContextHandle::adopt(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc));
  clzero::detail::check(rc, "clCreateContext", "clzero-info: creating a context");
  // How host views wait on this device: measured once per device
  // (detail/wait_method.hpp), the same measurement every tensor uses.
  const clzero::detail::WaitMethod wait = clzero::detail::wait_method(context.get(), device);
  char spin[200];
  const double base_us = static_cast<double>(clzero::detail::spin_wait_ns().load()) / 1000.0;
  if (wait.block_after_us > 0)
    std::snprintf(spin, sizeof spin,
                  "poll for up to %.0f us, then clWaitForEvents; clWaitForEvents at once where the tensor's last "
                  "wait took longer",
                  std::max(base_us, wait.block_after_us));
  else
    std::snprintf(spin, sizeof spin,
                  "poll for up to %.0f us (or 1.25 times the tensor's last wait, at most 10 ms), then clWaitForEvents",
                  base_us);
  std::string how = wait.poll ? spin : "clWaitForEvents at once";
  if (wait.poll && wait.idle_learn)
    how += std::string("; where the thread was off its core 0.5 ms or more since its last wait: ") +
           (wait.idle_block ? "clWaitForEvents at once" : "polling") +
           " at first, then whichever of the two each tensor's own waits after idle find faster";
  else if (wait.poll && wait.idle_block)
    how += "; clWaitForEvents at once where the thread was off its core 0.5 ms or more since its last wait";
  row("host views wait", how + " (" + wait.reason + ")");
  const std::size_t sizes[] = {4096, std::size_t{1} << 20, std::size_t{16} << 20};
  const auto candidates = clzero::policy::available(c, clzero::Intent::output);
  std::vector<std::vector<clzero::Measurement>> results;
  for (std::size_t bytes : sizes)
    results.push_back(
        clzero::measure(context.get(), device, bytes, clzero::Intent::output, candidates, args.iterations));
  std::printf(
      "    measured per inference (a kernel writes the output, the host reads every element;\n"
      "    median of at least %d rounds, policies taking turns; every element checked):\n",
      args.iterations);
  std::printf("      %-34s %12s %12s %12s\n", "policy", "4 KiB", "1 MiB", "16 MiB");
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    std::printf("      %-34s", candidates[k].label().c_str());
    for (std::size_t s = 0; s < results.size(); ++s) {
      const clzero::Measurement& m = results[s][k];
      char cell[32];
      if (!m.error.empty())
        std::snprintf(cell, sizeof cell, "failed");
      else if (!m.fresh)
        std::snprintf(cell, sizeof cell, "STALE");
      else
        std::snprintf(cell, sizeof cell, "%.1f us", m.us_per_inference);
      std::printf(" %12s", cell);
    }
    std::printf("\n");
    for (std::size_t s = 0; s < results.size(); ++s)
      if (!results[s][k].error.empty())
        std::printf("        %s at %s: %s\n", candidates[k].label().c_str(), bytes_text(sizes[s]).c_str(),
                    results[s][k].error.c_str());
  }
  // What Auto itself settles on for an output of each size (it measures on
  // discrete GPUs, once per size class).
  cl_command_queue queue = nullptr;
  queue = clCreateCommandQueueWithProperties(context.get(), device, nullptr, &rc);
  clzero::detail::check(rc, "clCreateCommandQueueWithProperties", "clzero-info: creating a queue");
  clzero::QueueHandle q = clzero::QueueHandle::adopt(queue);
  std::printf("    Auto picks for an output of\n");
  for (std::size_t bytes : sizes) {
    clzero::MappedTensor<std::uint8_t, clzero::policy::Auto> t(context.get(), q.get(), {bytes}, clzero::Intent::output);
    std::printf("      %-7s %s: %s\n", bytes_text(bytes).c_str(), t.policy().choice().label().c_str(),
                t.policy().choice().reason.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--no-measure"))
      args.measure = false;
    else if (!std::strcmp(argv[i], "--platform") && i + 1 < argc)
      args.platform = argv[++i];
    else if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc)
      args.iterations = std::atoi(argv[++i]);
    else {
      std::printf("usage: clzero-info [--no-measure] [--platform SUBSTRING] [--iterations N]\n");
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (args.iterations < 1) args.iterations = 1;
  std::printf("clzero-info %s\n", CLZERO_VERSION_STRING);
  cl_uint n = 0;
  if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) {
    std::printf("no OpenCL platform found (is an ICD installed and registered in /etc/OpenCL/vendors?)\n");
    return 1;
  }
  std::vector<cl_platform_id> platforms(n);
  clGetPlatformIDs(n, platforms.data(), nullptr);
  int failures = 0;
  for (cl_platform_id p : platforms) {
    char name[256] = {}, version[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    clGetPlatformInfo(p, CL_PLATFORM_VERSION, sizeof version, version, nullptr);
    if (args.platform != nullptr && std::strstr(name, args.platform) == nullptr) continue;
    std::printf("\nPlatform: %s (%s)\n", name, version);
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) {
      std::printf("  no devices\n");
      continue;
    }
    std::vector<cl_device_id> devices(nd);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr);
    for (cl_device_id d : devices) {
      try {
        device_report(d, args);
      } catch (const clzero::Error& e) {
        std::printf("    failed: %s\n", e.what());
        ++failures;
      }
    }
  }
  return failures == 0 ? 0 : 1;
}
