// SPDX-License-Identifier: Apache-2.0
// Raw-OpenCL probe: do allocations fail now and then when several threads
// make and free buffers on one context at once? clzero's soak
// (tests/soak/soak.cpp) saw NVIDIA's driver refuse a tensor's allocation
// now and then (clCreateBufferNV CL_OUT_OF_RESOURCES, clSVMAlloc NULL),
// and the same allocation made again 10 ms later succeeded. This program
// does what the soak's tensors do to the driver, without clzero: threads
// with a queue each, on one context, make memory of one kind and a random
// size, have a kernel write it for a random number of inferences, read
// every element on the host, and free it. Kinds: a host-located pinned
// buffer (cl_nv_create_buffer, where the platform has it), coarse-grained
// SVM, an ALLOC_HOST_PTR buffer, and a device buffer with a host-located
// pinned staging buffer mapped for its whole life (CopyToPinned's pair);
// each allocation's life has a kernel object of its own, as the soak's
// tensors do.
// Where an allocation is refused it is tried again at once and, if that
// fails too, after 10 ms; the counts say which met it.
//
//   alloc_churn [platform-name-substring] [threads] [seconds] [seed]
// A platform of "-" takes CLZERO_TEST_PLATFORM's (the first platform with a
// device where that is unset), as clzero's tests do.
// Prints one line per thread and a total; exits 1 where an element was
// wrong or an allocation was refused even after 10 ms, 2 where it could not
// run.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "probe.hpp"

namespace {

using probe::CreateBufferNv;
using probe::kNvHostPinned;
using probe::value;

cl_context ctx = nullptr;
cl_device_id dev = nullptr;
cl_program prog = nullptr;
CreateBufferNv create_nv = nullptr;
bool svm = false;


enum Kind { kNvPinned, kSvmCoarse, kAllocHostPtr, kDeviceStaging, kKinds };
const char* kind_name[kKinds] = {"NV host+pinned", "coarse SVM", "ALLOC_HOST_PTR", "device + NV staging"};

struct Counts {
  long lives = 0, inferences = 0, wrong = 0, errors = 0;
  long refused[kKinds] = {}, met_at_once[kKinds] = {}, met_after_10ms[kKinds] = {}, not_met[kKinds] = {};
  long wrong_elements[kKinds] = {}, wrong_inferences[kKinds] = {};
  std::string first_refusal;
  std::string first_wrong;  // where the first wrong element was, and what it held
};

// One allocation of `kind`; nullptr (and the error in rc) where refused.
struct Memory {
  cl_mem buffer = nullptr;   // the buffer the kernel writes (not for SVM)
  cl_mem staging = nullptr;  // kDeviceStaging: host-located staging, mapped for life
  void* staged = nullptr;    // its mapping
  void* svm_ptr = nullptr;   // kSvmCoarse
};

bool allocate(Kind kind, size_t bytes, cl_command_queue q, Memory& m, cl_int& rc) {
  rc = CL_SUCCESS;
  switch (kind) {
    case kNvPinned:
      m.buffer = create_nv(ctx, CL_MEM_READ_WRITE, kNvHostPinned, bytes, nullptr, &rc);
      return m.buffer != nullptr;
    case kSvmCoarse:
      m.svm_ptr = clSVMAlloc(ctx, CL_MEM_READ_WRITE, bytes, 0);
      if (m.svm_ptr == nullptr) rc = CL_MEM_OBJECT_ALLOCATION_FAILURE;
      return m.svm_ptr != nullptr;
    case kAllocHostPtr:
      m.buffer = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &rc);
      return m.buffer != nullptr;
    case kDeviceStaging:
    default:
      m.buffer = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &rc);
      if (m.buffer == nullptr) return false;
      m.staging = create_nv(ctx, CL_MEM_READ_WRITE, kNvHostPinned, bytes, nullptr, &rc);
      if (m.staging == nullptr) {
        clReleaseMemObject(m.buffer);
        m.buffer = nullptr;
        return false;
      }
      m.staged = clEnqueueMapBuffer(q, m.staging, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr, nullptr,
                                    &rc);
      if (rc != CL_SUCCESS) {
        clReleaseMemObject(m.staging);
        clReleaseMemObject(m.buffer);
        m.buffer = m.staging = nullptr;
        return false;
      }
      return true;
  }
}

// Frees as a tensor's release does: after its last unmap (the last command
// on the thread's in-order queue) has completed.
void release(cl_command_queue q, Memory& m) {
  if (m.staging != nullptr) clEnqueueUnmapMemObject(q, m.staging, m.staged, 0, nullptr, nullptr);
  clFinish(q);
  if (m.staging != nullptr) clReleaseMemObject(m.staging);
  if (m.buffer != nullptr) clReleaseMemObject(m.buffer);
  if (m.svm_ptr != nullptr) clSVMFree(ctx, m.svm_ptr);
  m = Memory{};
}

void lane(unsigned seed, std::chrono::steady_clock::time_point end, Counts& c) {
  cl_int rc = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &rc);
  if (q == nullptr) {
    ++c.errors;
    return;
  }
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> log_size(0.0, 18.0);
  std::uniform_int_distribution<int> life_length(1, 64), pick(0, kKinds - 1);
  cl_uint iter = seed * 1000003u;
  while (std::chrono::steady_clock::now() < end) {
    Kind kind = static_cast<Kind>(pick(rng));
    if (create_nv == nullptr && (kind == kNvPinned || kind == kDeviceStaging)) kind = kAllocHostPtr;
    if (!svm && kind == kSvmCoarse) kind = kAllocHostPtr;
    const size_t n = std::max<size_t>(1, static_cast<size_t>(std::exp2(log_size(rng))));
    const size_t bytes = n * sizeof(cl_uint);
    const int count = life_length(rng);
    Memory m;
    if (!allocate(kind, bytes, q, m, rc)) {
      ++c.refused[kind];
      if (c.first_refusal.empty())
        c.first_refusal = std::string(kind_name[kind]) + ", " + std::to_string(bytes) + " bytes: " + std::to_string(rc);
      if (allocate(kind, bytes, q, m, rc)) {
        ++c.met_at_once[kind];
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (allocate(kind, bytes, q, m, rc)) {
          ++c.met_after_10ms[kind];
        } else {
          ++c.not_met[kind];
          continue;
        }
      }
    }
    ++c.lives;
    // A kernel object for each allocation's life, as the soak makes one for
    // each tensor.
    cl_kernel fill = clCreateKernel(prog, "fill", &rc);
    if (fill == nullptr) {
      ++c.errors;
      release(q, m);
      break;
    }
    for (int k = 0; k < count; ++k, ++iter) {
      const cl_uint nn = static_cast<cl_uint>(n);
      if (kind == kSvmCoarse)
        rc = clSetKernelArgSVMPointer(fill, 0, m.svm_ptr);
      else
        rc = clSetKernelArg(fill, 0, sizeof(cl_mem), &m.buffer);
      rc |= clSetKernelArg(fill, 1, sizeof nn, &nn);
      rc |= clSetKernelArg(fill, 2, sizeof iter, &iter);
      if (rc == CL_SUCCESS) rc = clEnqueueNDRangeKernel(q, fill, 1, nullptr, &n, nullptr, 0, nullptr, nullptr);
      const cl_uint* host = nullptr;
      void* mapped = nullptr;
      if (rc == CL_SUCCESS) {
        if (kind == kSvmCoarse) {
          rc = clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, m.svm_ptr, bytes, 0, nullptr, nullptr);
          host = static_cast<const cl_uint*>(m.svm_ptr);
        } else if (kind == kDeviceStaging) {
          rc = clEnqueueReadBuffer(q, m.buffer, CL_TRUE, 0, bytes, m.staged, 0, nullptr, nullptr);
          host = static_cast<const cl_uint*>(m.staged);
        } else {
          mapped = clEnqueueMapBuffer(q, m.buffer, CL_TRUE, CL_MAP_READ, 0, bytes, 0, nullptr, nullptr, &rc);
          host = static_cast<const cl_uint*>(mapped);
        }
      }
      if (rc != CL_SUCCESS) {
        ++c.errors;
        break;
      }
      long wrong_here = 0;
      for (size_t i = 0; i < n; ++i) {
        const cl_uint want = value(static_cast<cl_uint>(i), iter);
        if (host[i] == want) continue;
        if (wrong_here++ == 0 && c.first_wrong.empty())
          c.first_wrong = std::string(kind_name[kind]) + ", " + std::to_string(bytes) + " bytes, inference " +
                          std::to_string(k + 1) + " of its allocation, element " + std::to_string(i) + ": " +
                          (k > 0 && host[i] == value(static_cast<cl_uint>(i), iter - 1) ? "the previous inference's value"
                                                                                         : "neither this inference's "
                                                                                           "value nor the previous one's");
      }
      if (wrong_here != 0) {
        c.wrong += wrong_here;
        c.wrong_elements[kind] += wrong_here;
        ++c.wrong_inferences[kind];
      }
      ++c.inferences;
      if (kind == kSvmCoarse)
        clEnqueueSVMUnmap(q, m.svm_ptr, 0, nullptr, nullptr);
      else if (mapped != nullptr)
        clEnqueueUnmapMemObject(q, m.buffer, mapped, 0, nullptr, nullptr);
    }
    release(q, m);
    clReleaseKernel(fill);
  }
  clFinish(q);
  clReleaseCommandQueue(q);
}

}  // namespace

int main(int argc, char** argv) {
  const char* want = argc > 1 ? argv[1] : "NVIDIA";
  if (std::strcmp(want, "-") == 0) {
    const char* from_env = std::getenv("CLZERO_TEST_PLATFORM");
    want = from_env != nullptr ? from_env : "";
  }
  const int threads = argc > 2 ? std::max(1, std::atoi(argv[2])) : 2;
  const double seconds = argc > 3 ? std::atof(argv[3]) : 5.0;
  const unsigned seed = argc > 4 ? static_cast<unsigned>(std::atoi(argv[4])) : 2u;
  cl_platform_id platform = nullptr;
  if (!probe::find_device(want, platform, dev)) {
    std::printf("alloc_churn: no device on a platform named like '%s'\n", want);
    return 2;
  }
  char dn[256] = {}, dv[256] = {};
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dn, dn, nullptr);
  clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof dv, dv, nullptr);
  cl_device_svm_capabilities caps = 0;
  svm = clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr) == CL_SUCCESS &&
        (caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) != 0;
  create_nv = probe::create_buffer_nv(platform);
  cl_int rc = CL_SUCCESS;
  ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &rc);
  const char* src =
      "__kernel void fill(__global uint* o, uint n, uint it) { uint i = get_global_id(0);"
      " if (i < n) o[i] = (i * 2654435761u) ^ (it * 40503u + 0x9E3779B9u); }";
  prog = clCreateProgramWithSource(ctx, 1, &src, nullptr, &rc);
  if (rc != CL_SUCCESS || clBuildProgram(prog, 1, &dev, "", nullptr, nullptr) != CL_SUCCESS) {
    std::printf("alloc_churn: the kernel did not build\n");
    return 2;
  }
  std::printf("alloc_churn on %s, driver %s: %d threads, %.1f s, seed %u, kinds:%s%s ALLOC_HOST_PTR\n", dn, dv,
              threads, seconds, seed, create_nv ? " NV host+pinned, device + NV staging," : "",
              svm ? " coarse SVM," : "");
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                          std::chrono::duration<double>(seconds));
  std::vector<Counts> counts(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(lane, seed * 7919u + static_cast<unsigned>(t), end, std::ref(counts[static_cast<size_t>(t)]));
  for (auto& t : pool) t.join();
  Counts total;
  for (size_t t = 0; t < counts.size(); ++t) {
    const Counts& c = counts[t];
    long refused = 0;
    for (int k = 0; k < kKinds; ++k) {
      refused += c.refused[k];
      total.refused[k] += c.refused[k];
      total.met_at_once[k] += c.met_at_once[k];
      total.met_after_10ms[k] += c.met_after_10ms[k];
      total.not_met[k] += c.not_met[k];
      total.wrong_elements[k] += c.wrong_elements[k];
      total.wrong_inferences[k] += c.wrong_inferences[k];
    }
    total.lives += c.lives;
    total.inferences += c.inferences;
    total.wrong += c.wrong;
    total.errors += c.errors;
    std::printf("thread %zu: %ld allocations, %ld inferences, %ld wrong elements, %ld errors, %ld refused%s%s\n", t,
                c.lives, c.inferences, c.wrong, c.errors, refused, c.first_refusal.empty() ? "" : " (first: ",
                c.first_refusal.empty() ? "" : (c.first_refusal + ")").c_str());
    if (!c.first_wrong.empty()) std::printf("thread %zu: first wrong element: %s\n", t, c.first_wrong.c_str());
  }
  for (int k = 0; k < kKinds; ++k)
    if (total.wrong_inferences[k] != 0)
      std::printf("  %-20s wrong elements %ld in %ld inferences\n", kind_name[k], total.wrong_elements[k],
                  total.wrong_inferences[k]);
  long not_met = 0;
  for (int k = 0; k < kKinds; ++k) {
    not_met += total.not_met[k];
    if (total.refused[k] != 0)
      std::printf("  %-20s refused %ld: made again at once %ld, after 10 ms %ld, not made %ld\n", kind_name[k],
                  total.refused[k], total.met_at_once[k], total.met_after_10ms[k], total.not_met[k]);
  }
  long refused = 0;
  for (int k = 0; k < kKinds; ++k) refused += total.refused[k];
  std::printf("total: %ld allocations, %ld inferences, %ld wrong elements, %ld errors, %ld refused, %ld not made\n",
              total.lives, total.inferences, total.wrong, total.errors, refused, not_met);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  return total.wrong != 0 || total.errors != 0 || not_met != 0 ? 1 : 0;
}
