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
// kWaitBlockGap apart. Polling is kept unless clWaitForEvents beats it
// clearly (below 0.9 times) in every block. A map at the view is chosen
// where it beats both waits clearly (below 0.95 times the faster) over all
// rounds and in most blocks (kMapWinBlocks of kWaitBlocks): requiring every
// block made a clear difference lose on a noisy device (PoCL 5.0 on the
// H200's 16 cores: a blocking SVM map at 0.72 to 0.90 times the polled
// map's time over all rounds won clearly in 3 of 5 blocks, twice in three
// runs). The result is kept for the device for the rest of the process. The blocks
// make the choice survive a spell of load at the moment it is made: loaded,
// the three waits measure alike within noise, and one measurement of 25
// rounds in one block on PoCL 3.1 (2 vCPUs, the machine compressing and
// sending files) chose clWaitForEvents, after which every inference of the
// process paid its wake-up (tests/wait_method/test_wait_burst.cpp). Quiet,
// 60 measurements there found clWaitForEvents clearly faster in at most 4
// of the 5 blocks, and in none in half of them. Polling is bounded by
// set_spin_wait() (100 us by default) or by 1.25 times the tensor's last
// wait, up to 10 ms (events.hpp), after which the view blocks, so a long
// kernel does not keep a core busy. On CPU devices, where that core is one
// the kernel runs on, the bound is a long wait derived from the measured
// wake-up (block_after_us), and a tensor whose last wait was longer blocks
// at once.
//
// Coarse-grained SVM is timed the same way with clEnqueueSVMMap, in the same
// rounds, and its views map at the view by their own measurement: a blocking
// SVM map and a blocking buffer map cost differently on the same device
// (measure_wait).
//
// A map at the view waits for everything enqueued before it on the queue, so
// a TensorRing's slots (whose views overlap later inferences) always map
// right after their kernels and poll or wait.
//
// Where views poll, the probe also times polling and clWaitForEvents right
// after the thread slept (kIdleGap): a view whose thread was off its core
// since its last wait (events.hpp, kIdleOffCoreNs) first blocks at once where
// clWaitForEvents won clearly there, on CPU devices unless polling did
// (WaitMethod::idle_block). On CPU devices, and wherever that first choice
// is to block, each tensor then times its own waits after idle both ways
// and keeps the faster (WaitMethod::idle_learn; events.hpp, IdleRecord):
// one probe at the first tensor proved unreliable there. An engine that
// sleeps between inferences waiting for its input then waits like the
// fastest hand-written code does after a sleep, and one that runs back to
// back, or works on the host between inferences, keeps polling.
// CLZERO_IDLE_WAIT=poll|wait sets that choice, and nothing is learned.
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

#include "clzero/events.hpp"
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
// construct, once per process). clWaitForEvents must win in every block, a
// map at the view in kMapWinBlocks of them (and over all rounds), so that a
// spell of load in one or two blocks decides neither.
constexpr int kWaitBlocks = 5;
constexpr int kMapWinBlocks = 3;
constexpr int kWaitBlockRounds = 12;
constexpr std::chrono::milliseconds kWaitBlockGap{5};
// On a CPU device a polling host thread takes a core from the kernel's
// work-items, which costs in proportion to the wait, while clWaitForEvents
// costs one wake-up, about the measured clWaitForEvents time less the
// polled one. A wait is long, and blocks, where that wake-up is at most
// 1/kWakesPerLongWait of it, and never under kMinLongWaitUs nor over 10 ms,
// the longest any view polls. Measured interleaved, fine-grained SVM on
// PoCL 3.1 (2 vCPUs): polled 0.85 times clWaitForEvents' time at 1 MiB,
// 0.94 at 4 MiB (about 650 us), 1.05 at 16 MiB (about 2.3 ms), 1.19 at
// 64 MiB (docs/logs/ci/22-long-wait-pocl31/); on PoCL 5.0 (the H200's 16
// cores) 1.00 to 1.13 at 64 MiB. On PoCL 3.1 the probe put the wake-up at
// 4 to 22 us, so with a floor of 500 us Auto blocked at 4 MiB and trailed
// the polled SVM sequence by 1.06 and 1.04 in two of three runs
// (docs/logs/ci/22-sequences-pocl31/): hence the floor of 1 ms.
// TensorRing slots never block by this bound (mapped_tensor.hpp).
constexpr double kWakesPerLongWait = 50;
constexpr double kMinLongWaitUs = 1000;
constexpr double kMaxLongWaitUs = 10000;
// A thread that slept before the kernel was enqueued can find blocking
// faster where polling wins back to back. Paced by a sleep of 1 ms before
// each inference on PoCL 3.1 (2 vCPUs), every polled legal sequence took
// 45 to 59 us at 4 KiB and every blocking one 25 to 34 us, while back to
// back polling took 28 us and clWaitForEvents 59 (docs/benchmarks.md,
// "Paced"). So where views poll, the probe also times polling and
// clWaitForEvents each right after a sleep of kIdleGap, kIdleRounds times,
// alternating which goes first; blocking after idle is chosen where
// clWaitForEvents beats polling clearly (below kBlockMustWinBy times) in
// kIdleWinRounds of the pairs and over all of them, and on CPU devices
// unless polling beats clWaitForEvents so (events.hpp, kIdleOffCoreNs, says
// when a view counts as idle). It adds about 40 ms to the measurement.
constexpr std::chrono::milliseconds kIdleGap{1};
constexpr int kIdleRounds = 16;
constexpr int kIdleWinRounds = 10;

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
  int map_wins = 0;          ///< blocks where the blocking map beat both waits clearly
  // The same for coarse-grained buffer SVM (clEnqueueSVMMap), where the
  // device offers it; the views of such tensors map at the view by these.
  bool svm_measured = false;     ///< coarse-grained SVM was timed too
  bool svm_map_at_view = false;  ///< host views of coarse-grained SVM tensors map, blocking, when they open
  double svm_poll_us = 0;        ///< as poll_us, with clEnqueueSVMMap
  double svm_block_us = 0;       ///< as block_us, with clEnqueueSVMMap
  double svm_map_us = 0;         ///< as map_us, a blocking clEnqueueSVMMap
  int svm_map_wins = 0;          ///< blocks where the blocking SVM map beat both SVM waits clearly
  /// CPU devices whose wait is polling: a view polls up to this long and
  /// blocks at once where the tensor's last wait was longer (0: none).
  double block_after_us = 0;
  // After the thread was idle (off its core kIdleOffCoreNs or more since its
  // last wait), measured where views poll and the thread's CPU time can be read.
  bool idle_measured = false;  ///< polling and clWaitForEvents were timed after sleeps
  bool idle_block = false;     ///< views block at once after the thread was idle (at first, where idle_learn)
  bool idle_learn = false;     ///< each tensor's views time both ways after idle and keep the faster (events.hpp)
  double idle_poll_us = 0;     ///< median of poll_us's sequence right after a sleep of kIdleGap
  double idle_block_us = 0;    ///< median of block_us's sequence right after a sleep of kIdleGap
  int idle_rounds = 0;         ///< pairs timed (kIdleRounds)
  int idle_block_wins = 0;     ///< pairs where clWaitForEvents beat polling clearly
  int idle_poll_wins = 0;      ///< pairs where polling beat clWaitForEvents clearly
  std::string reason;          ///< a sentence for clzero-info and logs
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
  w.svm_map_at_view = w.map_at_view;
  w.poll = name != "wait";
  w.reason = "CLZERO_HOST_WAIT=" + name;
  return true;
}

/// The phrase a measurement's reason ends its wait after idle with where
/// each tensor goes on to learn it (WaitMethod::idle_learn).
constexpr const char* kIdleLearnedPhrase = ", then each tensor keeps the faster of its own waits after idle";

/// The idle wait CLZERO_IDLE_WAIT names ("poll": as when busy, "wait":
/// block at once), set in `w`, which then learns nothing after idle; false
/// where it names neither.
inline bool idle_wait_from_environment(WaitMethod& w) {
  const char* env = std::getenv("CLZERO_IDLE_WAIT");
  if (env == nullptr || env[0] == '\0') return false;
  const std::string name = env;
  if (name != "poll" && name != "wait") return false;
  w.idle_block = name == "wait";
  w.idle_learn = false;
  const std::size_t learned = w.reason.find(kIdleLearnedPhrase);
  if (learned != std::string::npos) w.reason.erase(learned, std::string(kIdleLearnedPhrase).size());
  w.reason += "; after the thread was idle: CLZERO_IDLE_WAIT=" + name;
  return true;
}

/// Whether `device` offers coarse-grained buffer SVM (OpenCL 2.0 and later).
inline bool offers_coarse_svm(cl_device_id device) noexcept {
#if defined(CL_VERSION_2_0)
  char version[256] = {};
  clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof version, version, nullptr);
  if (!(version[7] >= '2' && version[7] <= '9')) return false;  // "OpenCL 2.x" or later
  cl_device_svm_capabilities svm = 0;
  return clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, nullptr) == CL_SUCCESS &&
         (svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) != 0;
#else
  (void)device;
  return false;
#endif
}

/// Times the waits on a private queue of `context` (never the engine's), for
/// a CL_MEM_ALLOC_HOST_PTR buffer and, where the device offers it, for
/// coarse-grained buffer SVM, whose blocking map need not cost what a
/// buffer's does: on PoCL 5.0 (the H200's host CPU) a blocking
/// clEnqueueSVMMap made a small output visible in 0.85 times the polled
/// map's time, while a blocking clEnqueueMapBuffer was no faster than
/// polling (docs/logs/h200/20-final-7c74ce4/json/, PoCL runs); on PoCL 3.1
/// (2 vCPUs) the blocking SVM map took 1.5 times as long in those runs, and
/// measured faster in later ones (docs/logs/ci/21-sequences-pocl31/): the
/// machine's state decides, so it is measured. The views of the two kinds
/// map at the view or not each by their own measurement; both poll or both
/// block by the buffer's. Any OpenCL failure of the buffer's probe falls
/// back to wait_rule, naming the failing call; a failure of the SVM probe
/// only leaves SVM views without a map at the view (only std::bad_alloc can
/// leave it; the library builds without exceptions too).
inline WaitMethod measure_wait(cl_context context, cl_device_id device) {
  {
    cl_device_type type = 0;
    clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    char version[256] = {};
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

    // The coarse-grained SVM probe: its own kernel object, writing an SVM
    // allocation that is freed once the private queue is idle.
    struct SvmProbe {
      cl_context context;
      cl_command_queue q;
      void* ptr = nullptr;
      KernelHandle kernel;
      std::string failed;  // the call that failed, or empty
      SvmProbe(cl_context c, cl_command_queue queue) : context(c), q(queue) {}
      SvmProbe(const SvmProbe&) = delete;
      SvmProbe& operator=(const SvmProbe&) = delete;
      ~SvmProbe() {
#if defined(CL_VERSION_2_0)
        if (ptr == nullptr) return;
        clFinish(q);  // clSVMFree does not wait for commands that use the memory
        clSVMFree(context, ptr);
#endif
      }
    } svm(context, q);
    bool svm_on = offers_coarse_svm(device);
#if defined(CL_VERSION_2_0)
    if (svm_on) {
      svm.ptr = clSVMAlloc(context, CL_MEM_READ_WRITE, kProbeItems * 4, 0);
      if (svm.ptr == nullptr) svm.failed = "clSVMAlloc";
      if (svm.failed.empty()) svm.kernel = KernelHandle::adopt(clCreateKernel(program.get(), "clzero_wait_probe", &rc));
      if (svm.failed.empty() && rc != CL_SUCCESS) svm.failed = "clCreateKernel";
      if (svm.failed.empty() && clSetKernelArgSVMPointer(svm.kernel.get(), 0, svm.ptr) != CL_SUCCESS)
        svm.failed = "clSetKernelArgSVMPointer";
      svm_on = svm.failed.empty();
    }
#endif

    using Clock = std::chrono::steady_clock;
    enum Way { kPoll, kWait, kMap };
    enum Kind { kBuffer, kSvm };
    // One small kernel's output made visible on the host one way; the time
    // until the host holds the mapped pointer in microseconds, or a negative
    // value if a call failed. The unmap after the timing is ordered before
    // the next kernel by the in-order queue.
    auto once = [&](Kind kind, Way way, std::uint32_t value) -> double {
      const auto t0 = Clock::now();
      const std::size_t items = kProbeItems;
      const cl_kernel k = kind == kSvm ? svm.kernel.get() : kernel.get();
      if (clSetKernelArg(k, 1, sizeof value, &value) != CL_SUCCESS ||
          clEnqueueNDRangeKernel(q, k, 1, nullptr, &items, nullptr, 0, nullptr, nullptr) != CL_SUCCESS)
        return -1;
      cl_event e = nullptr;
      const cl_bool blocking = way == kMap ? CL_TRUE : CL_FALSE;
      cl_event* event = way == kMap ? nullptr : &e;
      void* p = svm.ptr;
#if defined(CL_VERSION_2_0)
      if (kind == kSvm)
        rc = clEnqueueSVMMap(q, blocking, CL_MAP_READ, svm.ptr, kProbeItems * 4, 0, nullptr, event);
      else
#endif
        p = clEnqueueMapBuffer(q, mem, blocking, CL_MAP_READ, 0, kProbeItems * 4, 0, nullptr, event, &rc);
      if (rc != CL_SUCCESS) return -1;
      EventHandle held = EventHandle::adopt(e);
      if (way != kMap && clFlush(q) != CL_SUCCESS) return -1;
      if (way == kPoll) {
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
      } else if (way == kWait && clWaitForEvents(1, &e) != CL_SUCCESS) {
        return -1;
      }
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
#if defined(CL_VERSION_2_0)
      if (kind == kSvm) return clEnqueueSVMUnmap(q, p, 0, nullptr, nullptr) == CL_SUCCESS ? us : -1;
#endif
      return clEnqueueUnmapMemObject(q, mem, p, 0, nullptr, nullptr) == CL_SUCCESS ? us : -1;
    };
    auto median = [](std::vector<double> v) {
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      return v[v.size() / 2];
    };
    constexpr int kWarmup = 6, kBlockWarmup = 2;
    std::vector<double> all[2][3];  // every block's rounds, by kind and way
    WaitMethod w;
    int round = 0;
    for (int b = 0; b < kWaitBlocks; ++b) {
      if (b > 0) std::this_thread::sleep_for(kWaitBlockGap);
      std::vector<double> block[2][3];  // this block's rounds
      const int warmup = b == 0 ? kWarmup : kBlockWarmup;
      for (int i = 0; i < warmup + kWaitBlockRounds; ++i, ++round) {
        // Every way of every kind once a round; which goes first rotates,
        // so that none always follows another.
        const int ways = svm_on ? 6 : 3;
        for (int k = 0; k < ways; ++k) {
          const int slot = (round + k) % ways;
          const Kind kind = slot < 3 ? kBuffer : kSvm;
          const Way way = static_cast<Way>(slot % 3);
          const double us = once(kind, way, static_cast<std::uint32_t>(ways * round + k + 1));
          if (us < 0 && kind == kSvm) {  // the buffer's measurement goes on without it
            clFinish(q);
            svm.failed = "the probe kernel or its clEnqueueSVMMap";
            svm_on = false;
            break;
          }
          if (us < 0) {
            clFinish(q);
            return wait_rule(device, "wait not measured (the probe kernel or its map failed)");
          }
          if (i >= warmup) block[kind][way].push_back(us);
        }
      }
      for (int kind = 0; kind < 2; ++kind)
        for (int way = 0; way < 3; ++way) all[kind][way].insert(all[kind][way].end(), block[kind][way].begin(),
                                                                block[kind][way].end());
      const double pm = median(block[kBuffer][kPoll]), sm = median(block[kBuffer][kWait]),
                   mm = median(block[kBuffer][kMap]);
      w.block_wins += sm < kBlockMustWinBy * pm ? 1 : 0;
      w.map_wins += mm < kMapMustWinBy * std::min(pm, sm) ? 1 : 0;
      if (svm_on)
        w.svm_map_wins += median(block[kSvm][kMap]) <
                                  kMapMustWinBy * std::min(median(block[kSvm][kPoll]), median(block[kSvm][kWait]))
                              ? 1
                              : 0;
      ++w.blocks;
    }
    clFinish(q);  // the private queue only
    w.measured = true;
    w.poll_us = median(all[kBuffer][kPoll]);
    w.block_us = median(all[kBuffer][kWait]);
    w.map_us = median(all[kBuffer][kMap]);
    // Poll unless blocking is clearly faster in every block. The probe can
    // tie where a view still gains from polling: on the H200 (NVIDIA driver
    // 580.159.04) the probe measured 12.6 us polled and 12.7 us blocked,
    // while a view that blocked on its map and kernel events made a 4 KiB
    // inference of Persistent (nv_host_pinned) 20.6 us against 13.0 us
    // polled (docs/bench/sequences/h200-nvidia.json, issue 11's run).
    // Polling is bounded by the spin budget, so where it loses it loses
    // little.
    w.poll = w.block_wins < w.blocks;
    w.map_at_view = w.map_wins >= kMapWinBlocks && w.map_us < kMapMustWinBy * std::min(w.poll_us, w.block_us);
    if (w.poll && (type & CL_DEVICE_TYPE_CPU) != 0)
      w.block_after_us = std::min(kMaxLongWaitUs, std::max(kMinLongWaitUs, kWakesPerLongWait * (w.block_us - w.poll_us)));
    char text[300];
    std::snprintf(text, sizeof text,
                  "measured on a small kernel in %d blocks: polling %.1f us, clWaitForEvents %.1f us, blocking map "
                  "%.1f us; clWaitForEvents clearly faster in %d, the blocking map in %d",
                  w.blocks, w.poll_us, w.block_us, w.map_us, w.block_wins, w.map_wins);
    w.reason = text;
    if (w.block_after_us > 0) {
      std::snprintf(text, sizeof text, "; a CPU device: views block at once after a wait over %.0f us",
                    w.block_after_us);
      w.reason += text;
    }
    // After idle: each of polling and clWaitForEvents right after a sleep,
    // the queue finished before it, so that only the kernel and its map are
    // timed, as in every round above.
    long long cpu_ns = 0;
    bool idle_failed = false;     // a call of the idle rounds failed: the busy measurement stands alone
    std::vector<double> idle[2];  // by way: kPoll, kWait
    if (w.poll && thread_cpu_ns(cpu_ns)) {
      for (int r = 0; r < kIdleRounds && !idle_failed; ++r, ++round) {
        double pair[2] = {0, 0};
        for (int k = 0; k < 2 && !idle_failed; ++k) {
          const Way way = (r + k) % 2 == 0 ? kPoll : kWait;
          idle_failed = clFinish(q) != CL_SUCCESS;
          if (idle_failed) break;
          std::this_thread::sleep_for(kIdleGap);
          const double us = once(kBuffer, way, static_cast<std::uint32_t>(7 * round + k + 1));
          idle_failed = us < 0;
          pair[way] = us;
          idle[way].push_back(us);
        }
        if (idle_failed) break;
        w.idle_block_wins += pair[kWait] < kBlockMustWinBy * pair[kPoll] ? 1 : 0;
        w.idle_poll_wins += pair[kPoll] < kBlockMustWinBy * pair[kWait] ? 1 : 0;
        ++w.idle_rounds;
      }
      clFinish(q);
    }
    if (idle_failed) {
      w.idle_block_wins = w.idle_poll_wins = w.idle_rounds = 0;
      w.reason += "; the wait after idle not measured (the probe kernel, its map or clFinish failed)";
    } else if (w.idle_rounds == kIdleRounds) {
      w.idle_measured = true;
      w.idle_poll_us = median(idle[kPoll]);
      w.idle_block_us = median(idle[kWait]);
      // Elsewhere clWaitForEvents must win clearly, as for the busy wait; on
      // CPU devices polling must, since there the polling thread holds a
      // core the waking work-items need (the reason for block_after_us).
      // On PoCL 3.1 (2 vCPUs) the probe sometimes measured the two alike
      // for a whole process, around 150 us, while the paced runs of that
      // process found blocking about twice as fast after a sleep.
      const bool cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
      w.idle_block = cpu ? !(w.idle_poll_wins >= kIdleWinRounds && w.idle_poll_us < kBlockMustWinBy * w.idle_block_us)
                         : w.idle_block_wins >= kIdleWinRounds && w.idle_block_us < kBlockMustWinBy * w.idle_poll_us;
      // What one probe after sleeps finds is only where the views start: on
      // CPU devices, and wherever blocking won, each tensor's views go on
      // timing both ways after idle (events.hpp, IdleRecord). Quiet, the
      // probe of a sleeping process on PoCL 3.1 (2 vCPUs) and of one on
      // PoCL 5.0 (the H200's host) found polling clearly faster after its
      // sleeps, 13 of 16 pairs on PoCL 3.1, while after every later sleep of
      // those processes blocking was clearly faster (docs/benchmarks.md,
      // "Paced"). Elsewhere (a GPU whose probe found polling as fast) the
      // views do not track idle at all, which costs a busy engine nothing.
      w.idle_learn = cpu || w.idle_block;
      std::snprintf(text, sizeof text,
                    "; after a sleep of %lld ms: polling %.1f us, clWaitForEvents %.1f us, polling clearly faster "
                    "in %d of %d, clWaitForEvents in %d (%s%s)",
                    static_cast<long long>(kIdleGap.count()), w.idle_poll_us, w.idle_block_us, w.idle_poll_wins,
                    w.idle_rounds, w.idle_block_wins,
                    w.idle_block ? "views block at once after the thread was idle" : "views poll after idle too",
                    w.idle_learn ? kIdleLearnedPhrase : "");
      w.reason += text;
    }
    if (svm_on) {
      w.svm_measured = true;
      w.svm_poll_us = median(all[kSvm][kPoll]);
      w.svm_block_us = median(all[kSvm][kWait]);
      w.svm_map_us = median(all[kSvm][kMap]);
      w.svm_map_at_view = w.svm_map_wins >= kMapWinBlocks &&
                          w.svm_map_us < kMapMustWinBy * std::min(w.svm_poll_us, w.svm_block_us);
      std::snprintf(text, sizeof text,
                    "; coarse-grained SVM: polling %.1f us, clWaitForEvents %.1f us, blocking clEnqueueSVMMap %.1f "
                    "us, the blocking map clearly faster in %d",
                    w.svm_poll_us, w.svm_block_us, w.svm_map_us, w.svm_map_wins);
      w.reason += text;
    } else if (!svm.failed.empty()) {
      w.svm_map_wins = 0;
      w.reason += "; coarse-grained SVM not measured (" + svm.failed + " failed)";
    }
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
  idle_wait_from_environment(w);
  cache.emplace(device, w);
  return w;
}

}  // namespace detail
}  // namespace clzero
