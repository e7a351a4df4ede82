// SPDX-License-Identifier: Apache-2.0
// How the host waits for a device's commands, measured once per device.
//
// A host view waits for what makes the data visible in one of three ways:
//   map    the view itself enqueues a blocking map (clEnqueueMapBuffer with
//          CL_TRUE) after the kernels: one call, which submits the queue and
//          returns when the data is there. Nothing is enqueued between the
//          kernels and the view.
//   poll   the map is enqueued (non-blocking) right after the kernels and
//          submitted; the view polls its event's status (no sleep and
//          wake-up, one core busy), then blocks after the spin budget.
//   wait   the same map, and the view blocks in clWaitForEvents at once.
// Which is fastest depends on the implementation, not on the kind of device:
// measured interleaved in one process, a blocking map was both fresh and the
// fastest wait on NVIDIA's driver 580 (H200), while polling beat blocking on
// PoCL 3.1 on CPUs, even with 2 cores (docs/benchmarks.md, "Every legal
// sequence against clzero"). So the choice is measured, like Auto's policy:
// the first tensor on a device times a small kernel (1024 work-items, on a
// private queue of the engine's context) whose output, a CL_MEM_ALLOC_HOST_PTR
// buffer, is made visible each way, interleaved, in kWaitBlocks blocks
// kWaitBlockGap apart. A blocking map is kept only where it beats both others
// clearly (below 0.95 times the faster) in every block, polling unless
// clWaitForEvents beats it clearly (below 0.9 times) in every block; the
// result is kept for the device for the rest of the process. The blocks
// make the choice survive a spell of load at the moment it is made: loaded,
// the three waits measure alike within noise, and one measurement of 25
// rounds in one block on PoCL 3.1 (2 vCPUs, the machine compressing and
// sending files) chose clWaitForEvents, after which every inference of the
// process paid its wake-up (tests/wait_method/test_wait_burst.cpp). Quiet,
// 60 measurements there found clWaitForEvents clearly faster in at most 4
// of the 5 blocks, and in none in half of them. Polling is bounded by
// set_spin_wait() (100 us by default) or by 1.25 times the tensor's last
// wait, up to 10 ms (events.hpp), after which the view blocks, so a long
// kernel does not keep a core busy.
//
// A map at the view waits for everything enqueued before it on the queue, so
// a TensorRing's slots (whose views overlap later inferences) always map
// right after their kernels and poll or wait.
//
// CLZERO_HOST_WAIT=map|poll|wait sets the method without measuring (tests run
// every protocol on one device with it). CLZERO_WAIT_MEASURE=0 (or an OpenCL
// layer in OPENCL_LAYERS) skips the measurement and keeps the rule it
// replaced (poll on devices with their own processors, block on CPU devices,
// never map at the view); a measurement that fails for any reason keeps that
// rule too and says why.
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
#include <thread>
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
// A map at the view is chosen only if it beats the faster wait by more than 5%.
constexpr double kMapMustWinBy = 0.95;
// Each way is timed in kWaitBlocks blocks of kWaitBlockRounds rounds,
// kWaitBlockGap apart (the gaps make a device's first tensor 20 ms slower to
// construct, once per process), and a way other than polling must win in
// every block.
constexpr int kWaitBlocks = 5;
constexpr int kWaitBlockRounds = 12;
constexpr std::chrono::milliseconds kWaitBlockGap{5};

/// The wait a device's host views use, and the measurement behind it.
struct WaitMethod {
  bool poll = false;         ///< poll the events' status before blocking
  bool map_at_view = false;  ///< host views of mapped tensors map, blocking, when they open
  bool measured = false;     ///< false: the device-type rule (or CLZERO_HOST_WAIT) decided
  double poll_us = 0;        ///< median of kernel, non-blocking map, flush, polling until complete
  double block_us = 0;       ///< median of kernel, non-blocking map, flush, clWaitForEvents
  double map_us = 0;         ///< median of kernel, blocking map
  int blocks = 0;            ///< blocks measured (kWaitBlocks)
  int block_wins = 0;        ///< blocks where clWaitForEvents beat polling clearly
  int map_wins = 0;          ///< blocks where the blocking map beat both clearly
  std::string reason;        ///< a sentence for clzero-info and logs
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

/// The method CLZERO_HOST_WAIT names ("map", "poll" or "wait"), or false.
inline bool wait_from_environment(WaitMethod& w) {
  const char* env = std::getenv("CLZERO_HOST_WAIT");
  if (env == nullptr || env[0] == '\0') return false;
  const std::string name = env;
  if (name != "map" && name != "poll" && name != "wait") return false;
  w.map_at_view = name == "map";
  w.poll = name != "wait";
  w.reason = "CLZERO_HOST_WAIT=" + name;
  return true;
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
    MemHandle buffer = MemHandle::adopt(
        clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, kProbeItems * 4, nullptr, &rc));
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
    enum class Way { poll, wait, map };
    // One small kernel's output made visible on the host one way; the time
    // until the host holds the mapped pointer in microseconds, or a negative
    // value if a call failed. The unmap after the timing is ordered before
    // the next kernel by the in-order queue.
    auto once = [&](Way way, std::uint32_t value) -> double {
      const auto t0 = Clock::now();
      const std::size_t items = kProbeItems;
      if (clSetKernelArg(kernel.get(), 1, sizeof value, &value) != CL_SUCCESS ||
          clEnqueueNDRangeKernel(q, kernel.get(), 1, nullptr, &items, nullptr, 0, nullptr, nullptr) != CL_SUCCESS)
        return -1;
      cl_event e = nullptr;
      const cl_bool blocking = way == Way::map ? CL_TRUE : CL_FALSE;
      void* p = clEnqueueMapBuffer(q, mem, blocking, CL_MAP_READ, 0, kProbeItems * 4, 0, nullptr,
                                   way == Way::map ? nullptr : &e, &rc);
      if (rc != CL_SUCCESS) return -1;
      EventHandle event = EventHandle::adopt(e);
      if (way != Way::map && clFlush(q) != CL_SUCCESS) return -1;
      if (way == Way::poll) {
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
      } else if (way == Way::wait && clWaitForEvents(1, &e) != CL_SUCCESS) {
        return -1;
      }
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      if (clEnqueueUnmapMemObject(q, mem, p, 0, nullptr, nullptr) != CL_SUCCESS) return -1;
      return us;
    };
    auto median = [](std::vector<double> v) {
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      return v[v.size() / 2];
    };
    constexpr int kWarmup = 6, kBlockWarmup = 2;
    std::vector<double> polled, blocked, mapped;  // every block's rounds
    const Way order[3][3] = {
        {Way::poll, Way::wait, Way::map}, {Way::wait, Way::map, Way::poll}, {Way::map, Way::poll, Way::wait}};
    WaitMethod w;
    int round = 0;
    for (int b = 0; b < kWaitBlocks; ++b) {
      if (b > 0) std::this_thread::sleep_for(kWaitBlockGap);
      std::vector<double> by_poll, by_wait, by_map;  // this block's rounds
      const int warmup = b == 0 ? kWarmup : kBlockWarmup;
      for (int i = 0; i < warmup + kWaitBlockRounds; ++i, ++round) {
        // Rotate which goes first, so that none always follows another.
        for (int k = 0; k < 3; ++k) {
          const Way way = order[round % 3][k];
          const double us = once(way, static_cast<std::uint32_t>(3 * round + k + 1));
          if (us < 0) {
            clFinish(q);
            return wait_rule(device, "wait not measured (the probe kernel or its map failed)");
          }
          if (i < warmup) continue;
          (way == Way::poll ? by_poll : way == Way::wait ? by_wait : by_map).push_back(us);
        }
      }
      polled.insert(polled.end(), by_poll.begin(), by_poll.end());
      blocked.insert(blocked.end(), by_wait.begin(), by_wait.end());
      mapped.insert(mapped.end(), by_map.begin(), by_map.end());
      const double pm = median(by_poll), sm = median(by_wait), mm = median(by_map);
      w.block_wins += sm < kBlockMustWinBy * pm ? 1 : 0;
      w.map_wins += mm < kMapMustWinBy * std::min(pm, sm) ? 1 : 0;
      ++w.blocks;
    }
    clFinish(q);  // the private queue only
    w.measured = true;
    w.poll_us = median(polled);
    w.block_us = median(blocked);
    w.map_us = median(mapped);
    // Poll unless blocking is clearly faster in every block. The probe can
    // tie where a view still gains from polling: on the H200 (NVIDIA driver
    // 580.159.04) the probe measured 12.6 us polled and 12.7 us blocked,
    // while a view that blocked on its map and kernel events made a 4 KiB
    // inference of Persistent (nv_host_pinned) 20.6 us against 13.0 us
    // polled (docs/bench/sequences/h200-nvidia.json, issue 11's run).
    // Polling is bounded by the spin budget, so where it loses it loses
    // little.
    w.poll = w.block_wins < w.blocks;
    w.map_at_view = w.map_wins == w.blocks;
    char text[300];
    std::snprintf(text, sizeof text,
                  "measured on a small kernel in %d blocks: polling %.1f us, clWaitForEvents %.1f us, blocking map "
                  "%.1f us; clWaitForEvents clearly faster in %d, the blocking map in %d",
                  w.blocks, w.poll_us, w.block_us, w.map_us, w.block_wins, w.map_wins);
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
  WaitMethod w;
  if (!wait_from_environment(w))
    w = env != nullptr && env[0] == '0'          ? wait_rule(device, "CLZERO_WAIT_MEASURE=0")
        : layers != nullptr && layers[0] != '\0' ? wait_rule(device, "under an OpenCL layer")
                                                 : measure_wait(context, device);
  cache.emplace(device, w);
  return w;
}

}  // namespace detail
}  // namespace clzero
