// SPDX-License-Identifier: Apache-2.0
// Raw-OpenCL probe: does a blocking clEnqueueReadBuffer into ordinary host
// memory deliver the data when that memory lies where a host-located buffer
// (cl_nv_create_buffer) or an ALLOC_HOST_PTR buffer was mapped before it was
// released? The fault layer's shadow maps (fresh anonymous memory for every
// map) read wrong elements after such reads on NVIDIA's driver 580 in the
// churn stage of tools/device/h200_run.sh, while the raw runs never did.
//
//   pinned_reuse [platform-name-substring] [trials]
//
// Per trial and size: a buffer of the kind is made, mapped (blocking),
// unmapped and released, the queue finished; then anonymous memory is mapped
// at the address the buffer's map returned (MAP_FIXED_NOREPLACE: only where
// nothing is mapped there any more), a kernel writes a device buffer with
// values new to the trial, and a blocking clEnqueueReadBuffer copies it into
// that memory. "fresh" does the same into anonymous memory wherever the
// kernel chooses to put it. Every element is checked. Exit status 1 where any
// element was wrong.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "probe.hpp"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

namespace {

using probe::kNvHostPinned;
using probe::value;

enum Kind { kNvPinned, kAllocHostPtr, kFresh, kKinds };
const char* kind_name[kKinds] = {"at a released NV host+pinned map", "at a released ALLOC_HOST_PTR map",
                                 "fresh anonymous memory"};

struct Tally {
  long trials = 0, placed = 0, not_free = 0, wrong_trials = 0, wrong_elements = 0;
  std::string first;
};

}  // namespace

int main(int argc, char** argv) {
  const char* want = argc > 1 ? argv[1] : "NVIDIA";
  const int trials = argc > 2 ? std::max(1, std::atoi(argv[2])) : 200;
  cl_platform_id platform = nullptr;
  cl_device_id dev = nullptr;
  if (!probe::find_device(want, platform, dev)) {
    std::printf("pinned_reuse: no device on a platform named like \"%s\"\n", want);
    return 2;
  }
  cl_int rc = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &rc);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &rc);
  const char* src =
      "uint value(uint i, uint iter) { return (i * 2654435761u) ^ (iter * 40503u + 0x9E3779B9u); }\n"
      "__kernel void fill(__global uint* o, uint n, uint iter) { uint i = get_global_id(0); if (i < n) o[i] = "
      "value(i, iter); }\n";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, nullptr, &rc);
  if (clBuildProgram(prog, 1, &dev, "", nullptr, nullptr) != CL_SUCCESS) {
    std::printf("pinned_reuse: the kernel did not build\n");
    return 2;
  }
  cl_kernel fill = clCreateKernel(prog, "fill", &rc);
  auto create_nv = probe::create_buffer_nv(platform);
  char dev_name[256] = {}, driver[256] = {};
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dev_name, dev_name, nullptr);
  clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof driver, driver, nullptr);
  std::printf("pinned_reuse on %s, driver %s: %d trials per size%s\n", dev_name, driver, trials,
              create_nv == nullptr ? " (no cl_nv_create_buffer: its case is skipped)" : "");

  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  Tally tally[kKinds];
  cl_uint iter = 1;
  for (size_t bytes : {size_t{4096}, size_t{65536}, size_t{1} << 20}) {
    const size_t n = bytes / sizeof(cl_uint);
    cl_mem device = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &rc);
    for (int t = 0; t < trials; ++t) {
      for (int k = 0; k < kKinds; ++k, ++iter) {
        if (k == kNvPinned && create_nv == nullptr) continue;
        Tally& c = tally[k];
        ++c.trials;
        void* at = nullptr;
        if (k != kFresh) {
          cl_mem b = k == kNvPinned ? create_nv(ctx, CL_MEM_READ_WRITE, kNvHostPinned, bytes, nullptr, &rc)
                                    : clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &rc);
          if (b == nullptr) continue;
          at = clEnqueueMapBuffer(q, b, CL_TRUE, CL_MAP_READ, 0, bytes, 0, nullptr, nullptr, &rc);
          if (at != nullptr) clEnqueueUnmapMemObject(q, b, at, 0, nullptr, nullptr);
          clFinish(q);
          clReleaseMemObject(b);
          clFinish(q);
        }
        // The pages that held the map, or any pages.
        const uintptr_t first = reinterpret_cast<uintptr_t>(at) & ~(page - 1);
        const size_t length = ((reinterpret_cast<uintptr_t>(at) + bytes + page - 1) & ~(page - 1)) - first;
        void* mem = mmap(k == kFresh ? nullptr : reinterpret_cast<void*>(first), k == kFresh ? bytes : length,
                         PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (k == kFresh ? 0 : MAP_FIXED_NOREPLACE),
                         -1, 0);
        if (mem == MAP_FAILED || (k != kFresh && mem != reinterpret_cast<void*>(first))) {
          if (mem != MAP_FAILED) munmap(mem, length);
          ++c.not_free;  // the driver still holds those pages (or the kernel put the memory elsewhere)
          continue;
        }
        ++c.placed;
        cl_uint* host = k == kFresh ? static_cast<cl_uint*>(mem)
                                    : reinterpret_cast<cl_uint*>(first + (reinterpret_cast<uintptr_t>(at) - first));
        for (size_t i = 0; i < n; ++i) host[i] = 0xDEADBEEFu;
        const cl_uint nn = static_cast<cl_uint>(n);
        clSetKernelArg(fill, 0, sizeof(cl_mem), &device);
        clSetKernelArg(fill, 1, sizeof nn, &nn);
        clSetKernelArg(fill, 2, sizeof iter, &iter);
        rc = clEnqueueNDRangeKernel(q, fill, 1, nullptr, &n, nullptr, 0, nullptr, nullptr);
        if (rc == CL_SUCCESS) rc = clEnqueueReadBuffer(q, device, CL_TRUE, 0, bytes, host, 0, nullptr, nullptr);
        long wrong = 0;
        size_t first_wrong = 0;
        for (size_t i = 0; i < n; ++i)
          if (host[i] != value(static_cast<cl_uint>(i), iter) && wrong++ == 0) first_wrong = i;
        if (rc != CL_SUCCESS || wrong != 0) {
          ++c.wrong_trials;
          c.wrong_elements += wrong;
          if (c.first.empty())
            c.first = std::to_string(bytes) + " bytes, trial " + std::to_string(t) + ": rc " + std::to_string(rc) +
                      ", " + std::to_string(wrong) + " wrong, the first at " + std::to_string(first_wrong) +
                      (wrong != 0 && host[first_wrong] == 0xDEADBEEFu ? " (never written)" : "");
        }
        munmap(mem, k == kFresh ? bytes : length);
      }
    }
    clReleaseMemObject(device);
  }
  long wrong = 0;
  for (int k = 0; k < kKinds; ++k) {
    const Tally& c = tally[k];
    if (c.trials == 0) continue;
    wrong += c.wrong_elements + c.wrong_trials;
    std::printf("ReadBuffer into memory %s: %ld trials, placed there %ld, address still taken %ld, trials with wrong "
                "elements %ld, wrong elements %ld%s%s\n",
                kind_name[k], c.trials, c.placed, c.not_free, c.wrong_trials, c.wrong_elements,
                c.first.empty() ? "" : "; first: ", c.first.c_str());
  }
  clReleaseKernel(fill);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return wrong != 0 ? 1 : 0;
}
