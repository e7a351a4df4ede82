// SPDX-License-Identifier: Apache-2.0
// How the host waits for a device's commands, measured once per device.
//
// A host view waits for clzero's events either by blocking in
// clWaitForEvents (the thread sleeps until the implementation wakes it) or by
// polling the events' status first (no sleep and wake-up, one core busy).
// Which is faster depends on the implementation, not on the kind of device:
// measured interleaved in one process, a kernel's event polled after a flush
// beat clWaitForEvents and clFinish on PoCL 3.1 on CPUs, even with 2 cores,
// and clzero's views gained from polling on NVIDIA's driver 580
// (docs/benchmarks.md, "Every legal sequence against clzero"). So the choice
// is measured, like Auto's policy: the first tensor on a device times a small
// kernel (1024 work-items, on a private queue of the engine's context)
// finished each way, interleaved; polling is kept unless blocking is clearly
// faster (below 0.9 times), and the result is kept for the device for the
// rest of the process. Polling is bounded by set_spin_wait() (100 us by
// default), after which the view blocks, so a long kernel does not keep a
// core busy.
//
// CLZERO_WAIT_MEASURE=0 (or an OpenCL layer in OPENCL_LAYERS) skips the
// measurement and keeps the rule it replaced (poll on devices with their own
// processors, block on CPU devices); a measurement that fails for any reason
// keeps that rule too and says why.
#pragma once

#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "clzero/handle.hpp"

namespace clzero {
namespace detail {

// The command whose completion is waited for: a small kernel, because that is
// what a view waits for (a fill of a few bytes completed at once on PoCL, so
// both waits measured alike there while they differ for kernels).
constexpr const char* kProbeKernel = R"CLC(
__kernel void clzero_wait_probe(__global uint* out, uint value) { out[get_global_id(0)] = value; }
)CLC";
constexpr std::size_t kProbeItems = 1024;
// Blocking is chosen only if it beats polling by more than 10%.
constexpr double kBlockMustWinBy = 0.9;

/// The wait a device's host views use, and the measurement behind it.
struct WaitMethod {
  bool poll = false;      ///< poll the events' status before blocking
  bool measured = false;  ///< false: the device-type rule decided
  double poll_us = 0;     ///< median of flush + polling until complete
  double block_us = 0;    ///< median of flush + clWaitForEvents
  std::string reason;     ///< a sentence for clzero-info and logs
};

/// The rule used where nothing was measured: poll on GPUs and other devices
/// with their own processors, block on CPU devices.
inline WaitMethod wait_rule(cl_device_id device, const std::string& why) {
  cl_device_type type = 0;
  clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
  WaitMethod w;
  w.poll = (type & CL_DEVICE_TYPE_CPU) == 0;
  w.reason = why + (w.poll ? "; rule: poll first (not a CPU device)" : "; rule: block (a CPU device)");
  return w;
}

/// Times the two waits on a private queue of `context` (never the engine's).
/// Any OpenCL failure falls back to wait_rule, naming the failing call (only
/// std::bad_alloc can leave it; the library builds without exceptions too).
inline WaitMethod measure_wait(cl_context context, cl_device_id device) {
  {
    char version[64] = {};
    clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof version, version, nullptr);
    const bool cl2 = version[7] >= '2' && version[7] <= '9';  // "OpenCL 2.x" or later
    cl_int rc = CL_SUCCESS;
    QueueHandle queue;
#if defined(CL_VERSION_2_0)
    if (cl2) queue = QueueHandle::adopt(clCreateCommandQueueWithProperties(context, device, nullptr, &rc));
#endif
    if (!queue) {
      (void)cl2;
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
      queue = QueueHandle::adopt(clCreateCommandQueue(context, device, 0, &rc));
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
    }
    if (rc != CL_SUCCESS || !queue) return wait_rule(device, "wait not measured (clCreateCommandQueue failed)");
    MemHandle buffer = MemHandle::adopt(clCreateBuffer(context, CL_MEM_READ_WRITE, kProbeItems * 4, nullptr, &rc));
    if (rc != CL_SUCCESS) return wait_rule(device, "wait not measured (clCreateBuffer failed)");
    const char* src = kProbeKernel;
    ProgramHandle program = ProgramHandle::adopt(clCreateProgramWithSource(context, 1, &src, nullptr, &rc));
    if (rc != CL_SUCCESS) return wait_rule(device, "wait not measured (clCreateProgramWithSource failed)");
    if (clBuildProgram(program.get(), 1, &device, "", nullptr, nullptr) != CL_SUCCESS)
      return wait_rule(device, "wait not measured (no online compiler: clBuildProgram failed)");
    KernelHandle kernel = KernelHandle::adopt(clCreateKernel(program.get(), "clzero_wait_probe", &rc));
    const cl_mem mem = buffer.get();
    if (rc != CL_SUCCESS || clSetKernelArg(kernel.get(), 0, sizeof mem, &mem) != CL_SUCCESS)
      return wait_rule(device, "wait not measured (clCreateKernel failed)");
    const cl_command_queue q = queue.get();
    using Clock = std::chrono::steady_clock;
    // One short command finished one way; its time in microseconds, or a
    // negative value if a call failed.
    auto once = [&](bool poll, std::uint32_t value) -> double {
      cl_event e = nullptr;
      const auto t0 = Clock::now();
      const std::size_t items = kProbeItems;
      if (clSetKernelArg(kernel.get(), 1, sizeof value, &value) != CL_SUCCESS ||
          clEnqueueNDRangeKernel(q, kernel.get(), 1, nullptr, &items, nullptr, 0, nullptr, &e) != CL_SUCCESS)
        return -1;
      EventHandle event = EventHandle::adopt(e);
      if (clFlush(q) != CL_SUCCESS) return -1;
      if (poll) {
        // Bounded like a view's spin: a device that never reports
        // completion through polling falls back to blocking.
        const auto deadline = t0 + std::chrono::milliseconds(50);
        for (;;) {
          cl_int status = CL_QUEUED;
          if (clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) != CL_SUCCESS ||
              status < 0)
            return -1;
          if (status == CL_COMPLETE) break;
          if (Clock::now() > deadline) {
            if (clWaitForEvents(1, &e) != CL_SUCCESS) return -1;
            break;
          }
        }
      } else if (clWaitForEvents(1, &e) != CL_SUCCESS) {
        return -1;
      }
      return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    };
    constexpr int kWarmup = 6, kRounds = 25;
    std::vector<double> polled, blocked;
    for (int i = 0; i < kWarmup + kRounds; ++i) {
      // Alternate which goes first, so that neither always follows the other.
      const bool poll_first = (i % 2) == 0;
      const double a = once(poll_first, static_cast<std::uint32_t>(2 * i + 1));
      const double b = once(!poll_first, static_cast<std::uint32_t>(2 * i + 2));
      if (a < 0 || b < 0) return wait_rule(device, "wait not measured (the probe kernel failed)");
      if (i < kWarmup) continue;
      (poll_first ? polled : blocked).push_back(a);
      (poll_first ? blocked : polled).push_back(b);
    }
    clFinish(q);  // the private queue only
    auto median = [](std::vector<double> v) {
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      return v[v.size() / 2];
    };
    WaitMethod w;
    w.measured = true;
    w.poll_us = median(polled);
    w.block_us = median(blocked);
    // Poll unless blocking is clearly faster. The probe can tie where a view
    // still gains from polling: on the H200 (NVIDIA driver 580.159.04) the
    // probe measured 12.6 us polled and 12.7 us blocked, while a view that
    // blocked on its map and kernel events made a 4 KiB inference of
    // Persistent (nv_host_pinned) 20.6 us against 13.0 us polled
    // (docs/bench/sequences/h200-nvidia.json, issue 11's run). Polling is
    // bounded by the spin budget, so where it loses it loses little.
    w.poll = !(w.block_us < kBlockMustWinBy * w.poll_us);
    char text[160];
    std::snprintf(text, sizeof text, "measured on a small kernel: polling %.1f us, clWaitForEvents %.1f us", w.poll_us,
                  w.block_us);
    w.reason = text;
    return w;
  }
}

/// The wait of `device`'s host views: measured the first time a tensor is
/// made on the device (with the engine's context), then kept.
inline WaitMethod wait_method(cl_context context, cl_device_id device) {
  static std::mutex mutex;
  static std::map<cl_device_id, WaitMethod> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto found = cache.find(device);
  if (found != cache.end()) return found->second;
  const char* env = std::getenv("CLZERO_WAIT_MEASURE");
  // Under an OpenCL layer the rule decides too: the layer's own work would
  // be timed with the driver's, and the fault-injection layer's tests replay
  // a tensor's calls one by one, which a measurement made for the first
  // tensor only would shift.
  const char* layers = std::getenv("OPENCL_LAYERS");
  const WaitMethod w = env != nullptr && env[0] == '0'          ? wait_rule(device, "CLZERO_WAIT_MEASURE=0")
                       : layers != nullptr && layers[0] != '\0' ? wait_rule(device, "under an OpenCL layer")
                                                                : measure_wait(context, device);
  cache.emplace(device, w);
  return w;
}

}  // namespace detail
}  // namespace clzero
