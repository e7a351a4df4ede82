// SPDX-License-Identifier: Apache-2.0
// Ways to get a kernel's output into memory the caller allocated (as MNN's
// copyToHostTensor must: the caller owns the host tensor), each timed from
// the kernel's enqueue to the end of the caller's read of every element,
// in one process, every way once per round in a shuffled order:
//   read_pageable     the kernel writes a device buffer; blocking
//                     clEnqueueReadBuffer into the caller's memory (MNN today)
//   map_memcpy        the kernel writes an ALLOC_HOST_PTR buffer kept mapped
//                     at rest; unmap before the kernel, blocking map after,
//                     memcpy into the caller's memory (clzero's MNN patch)
//   use_host_ptr_new  a USE_HOST_PTR buffer over the caller's memory, created
//                     for the call: the kernel writes it, blocking map
//                     (READ: the spec makes host_ptr hold the latest bits once
//                     the map completes), unmap, release
//   use_host_ptr_kept the same buffer kept from call to call (only legal
//                     while the caller's memory outlives it)
//   nv_memcpy         as map_memcpy over a cl_nv_create_buffer host-located,
//                     pinned buffer (the kernel writes host memory itself),
//                     where the platform offers it
// and, to see where each buffer's data lands, two reads in place of the
// mapped output, no copy: nv_in_place and ahp_in_place (ALLOC_HOST_PTR).
// With a third argument T > 1, two more ways copy with T threads (the
// calling thread and T - 1 workers started once, each copying one slice):
//   map_memcpy_par    as map_memcpy
//   nv_memcpy_par     as nv_memcpy
// The caller's memory is malloc'd with 64-byte alignment, as MNN's host
// tensors are. Every element of every call is checked (untimed), and so is
// the timed read's sum, which the program prints at the end: a sum that
// nothing used would let the compiler drop the read from the timed part
// (before this, it did, and every time here left the read out).
//   g++ -std=c++17 -O3 -pthread tools/device/host_tensor_readback.cpp -lOpenCL && ./a.out [platform] [rounds] [T]
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void ok(cl_int rc, const char* what) {
  if (rc != CL_SUCCESS) {
    std::fprintf(stderr, "host_tensor_readback: %s failed: %d\n", what, rc);
    std::exit(1);
  }
}

const char* kSource =
    "__kernel void fill(__global uint* out, uint k) {"
    "  uint i = get_global_id(0); out[i] = i * 2654435761u ^ k; }";

uint64_t read_all(const uint32_t* data, size_t count) {
  uint64_t sum = 0;
  for (size_t i = 0; i < count; ++i) sum += data[i];
  return sum;
}

// What read_all must give for a fresh output, without reading it.
uint64_t expected_sum(size_t count, uint32_t k) {
  uint64_t sum = 0;
  for (size_t i = 0; i < count; ++i) sum += (static_cast<uint32_t>(i) * 2654435761u) ^ k;
  return sum;
}

bool fresh(const uint32_t* data, size_t count, uint32_t k) {
  for (size_t i = 0; i < count; ++i)
    if (data[i] != ((static_cast<uint32_t>(i) * 2654435761u) ^ k)) return false;
  return true;
}

// memcpy split into `threads` slices: the caller copies the first, workers
// started once copy the others; copy() returns when every slice is copied.
class ParallelCopy {
 public:
  explicit ParallelCopy(int threads) : threads_(threads) {
    for (int i = 1; i < threads_; ++i) workers_.emplace_back([this, i] { work(i); });
  }
  ~ParallelCopy() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
      ++generation_;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }
  void copy(void* dst, const void* src, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(m_);
      dst_ = static_cast<char*>(dst);
      src_ = static_cast<const char*>(src);
      bytes_ = bytes;
      left_ = threads_ - 1;
      ++generation_;
    }
    cv_.notify_all();
    slice(0);
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [this] { return left_ == 0; });
  }

 private:
  void slice(int i) {
    const size_t per = (bytes_ / threads_ + 63) / 64 * 64;
    const size_t begin = std::min(bytes_, per * i), end = i + 1 == threads_ ? bytes_ : std::min(bytes_, per * (i + 1));
    if (end > begin) std::memcpy(dst_ + begin, src_ + begin, end - begin);
  }
  void work(int i) {
    unsigned long seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
      }
      slice(i);
      std::lock_guard<std::mutex> lock(m_);
      if (--left_ == 0) done_.notify_one();
    }
  }
  const int threads_;
  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_, done_;
  unsigned long generation_ = 0;
  int left_ = 0;
  bool stop_ = false;
  char* dst_ = nullptr;
  const char* src_ = nullptr;
  size_t bytes_ = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t sink = 0;  // every timed read's sum: printed, so no read can be dropped
  const std::string want = argc > 1 ? argv[1] : "NVIDIA";
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 200;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 0;
  ParallelCopy parallel(std::max(threads, 1));
  cl_uint count = 0;
  ok(clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  ok(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  cl_platform_id platform = nullptr;
  for (auto p : platforms) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (std::string(name).find(want) != std::string::npos) platform = p;
  }
  if (platform == nullptr) {
    std::fprintf(stderr, "host_tensor_readback: no platform named like '%s'\n", want.c_str());
    return 1;
  }
  cl_device_id device = nullptr;
  ok(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
  cl_int rc = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  ok(rc, "clCreateContext");
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, nullptr, &rc);
  ok(rc, "clCreateCommandQueueWithProperties");
  cl_program prog = clCreateProgramWithSource(ctx, 1, &kSource, nullptr, &rc);
  ok(rc, "clCreateProgramWithSource");
  ok(clBuildProgram(prog, 1, &device, "", nullptr, nullptr), "clBuildProgram");
  cl_kernel fill = clCreateKernel(prog, "fill", &rc);
  ok(rc, "clCreateKernel");

  using CreateBufferNv = cl_mem(CL_API_CALL*)(cl_context, cl_mem_flags, cl_bitfield, size_t, void*, cl_int*);
  auto create_nv = reinterpret_cast<CreateBufferNv>(
      clGetExtensionFunctionAddressForPlatform(platform, "clCreateBufferNV"));
  const char* names[] = {"read_pageable", "map_memcpy",   "use_host_ptr_new", "use_host_ptr_kept", "nv_memcpy",
                         "nv_in_place",   "ahp_in_place", "map_memcpy_par",   "nv_memcpy_par"};
  constexpr int kWays = 9;
  std::vector<int> ways = {0, 1, 2, 3, 6};
  if (create_nv != nullptr) ways.insert(ways.end(), {4, 5});
  if (threads > 1) ways.push_back(7);
  if (threads > 1 && create_nv != nullptr) ways.push_back(8);
  if (threads > 1) std::printf("the _par ways copy with %d threads\n", threads);
  std::mt19937 shuffle(11);
  std::printf("%-10s %-18s %10s %10s %10s\n", "bytes", "way", "median us", "p10 us", "p90 us");
  for (size_t bytes : {size_t{4} << 10, size_t{256} << 10, size_t{4} << 20}) {
    const size_t n = bytes / 4;
    // The caller's host tensors, one per way, 64-byte aligned as MNN's.
    std::vector<uint32_t*> host(kWays);
    for (auto& h : host) {
      h = static_cast<uint32_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
      std::memset(h, 0, bytes);
    }
    cl_mem device_buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &rc);
    ok(rc, "device buffer");
    cl_mem pinned = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &rc);
    ok(rc, "ALLOC_HOST_PTR buffer");
    // Buffers kept mapped at rest, each unmapped before its kernel: ways 1,
    // 4 to 8 (4, 5 and 8 host-located and pinned by cl_nv_create_buffer).
    cl_mem rest[kWays] = {};
    void* at_rest[kWays] = {};
    rest[1] = pinned;
    for (int w : {6, 7}) {
      rest[w] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &rc);
      ok(rc, "another ALLOC_HOST_PTR buffer");
    }
    if (create_nv != nullptr) {
      for (int w : {4, 5, 8}) {
        rest[w] = create_nv(ctx, CL_MEM_READ_WRITE, 3 /* CL_MEM_LOCATION_HOST_NV | CL_MEM_PINNED_NV */, bytes, nullptr,
                            &rc);
        ok(rc, "clCreateBufferNV");
      }
    }
    for (int w = 0; w < kWays; ++w) {
      if (rest[w] == nullptr) continue;
      at_rest[w] = clEnqueueMapBuffer(q, rest[w], CL_TRUE, CL_MAP_READ, 0, bytes, 0, nullptr, nullptr, &rc);
      ok(rc, "first map");
    }
    cl_mem kept = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host[3], &rc);
    ok(rc, "kept USE_HOST_PTR buffer");
    std::vector<double> us[kWays];
    uint32_t k = 1;
    const size_t global = n;
    for (int round = -10; round < rounds; ++round) {
      std::vector<int> order = ways;
      std::shuffle(order.begin(), order.end(), shuffle);
      for (int way : order) {
        k = k * 1664525u + 1013904223u;
        const auto t0 = Clock::now();
        cl_mem target = way == 0 ? device_buf : way == 3 ? kept : rest[way];
        if (rest[way] != nullptr)
          ok(clEnqueueUnmapMemObject(q, rest[way], at_rest[way], 0, nullptr, nullptr), "unmap at rest");
        if (way == 2) {
          target = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host[2], &rc);
          ok(rc, "USE_HOST_PTR buffer for the call");
        }
        ok(clSetKernelArg(fill, 0, sizeof target, &target), "clSetKernelArg");
        ok(clSetKernelArg(fill, 1, sizeof k, &k), "clSetKernelArg");
        ok(clEnqueueNDRangeKernel(q, fill, 1, nullptr, &global, nullptr, 0, nullptr, nullptr), "kernel");
        if (way == 0) ok(clEnqueueReadBuffer(q, device_buf, CL_TRUE, 0, bytes, host[0], 0, nullptr, nullptr), "read");
        if (rest[way] != nullptr) {
          at_rest[way] = clEnqueueMapBuffer(q, rest[way], CL_TRUE, CL_MAP_READ, 0, bytes, 0, nullptr, nullptr, &rc);
          ok(rc, "map");
          if (way == 1 || way == 4) std::memcpy(host[way], at_rest[way], bytes);
          if (way == 7 || way == 8) parallel.copy(host[way], at_rest[way], bytes);
        }
        if (way == 2 || way == 3) {
          void* p = clEnqueueMapBuffer(q, target, CL_TRUE, CL_MAP_READ, 0, bytes, 0, nullptr, nullptr, &rc);
          ok(rc, "map USE_HOST_PTR");
          if (p != host[way]) {
            std::fprintf(stderr, "host_tensor_readback: the map of a USE_HOST_PTR buffer returned another pointer\n");
            return 1;
          }
          ok(clEnqueueUnmapMemObject(q, target, p, 0, nullptr, nullptr), "unmap USE_HOST_PTR");
          if (way == 2) {
            ok(clFinish(q), "clFinish before release");
            ok(clReleaseMemObject(target), "release");
          }
        }
        const uint32_t* result = (way == 5 || way == 6) ? static_cast<const uint32_t*>(at_rest[way]) : host[way];
        const uint64_t read_sum = read_all(result, n);
        const auto t1 = Clock::now();
        sink += read_sum;
        if (read_sum != expected_sum(n, k) || !fresh(result, n, k)) {
          std::fprintf(stderr, "host_tensor_readback: %s read a wrong element at %zu bytes\n", names[way], bytes);
          return 1;
        }
        if (round >= 0) us[way].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      }
    }
    for (int way = 0; way < kWays; ++way) {
      if (us[way].empty()) continue;
      auto v = us[way];
      std::sort(v.begin(), v.end());
      std::printf("%-10zu %-18s %10.1f %10.1f %10.1f\n", bytes, names[way], median(v), v[v.size() / 10],
                  v[v.size() * 9 / 10]);
    }
    ok(clFinish(q), "clFinish");
    for (int w = 0; w < kWays; ++w) {
      if (rest[w] == nullptr) continue;
      ok(clEnqueueUnmapMemObject(q, rest[w], at_rest[w], 0, nullptr, nullptr), "last unmap");
    }
    ok(clFinish(q), "clFinish");
    for (int w : {4, 5, 6, 7, 8})
      if (rest[w] != nullptr) clReleaseMemObject(rest[w]);
    clReleaseMemObject(kept);
    clReleaseMemObject(pinned);
    clReleaseMemObject(device_buf);
    for (auto h : host) std::free(h);
    std::fflush(stdout);
  }
  std::printf("the timed reads summed to %llu\n", static_cast<unsigned long long>(sink));
  std::printf("every element of every call checked; medians of %d rounds\n", rounds);
  return 0;
}
