// SPDX-License-Identifier: Apache-2.0
#include "call_count.hpp"

#include <CL/cl.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace clzero_seq {
namespace {

std::atomic<bool> g_counting{false};

enum Entry {
#define CLZERO_SEQ_ENTRY(name) e_##name,
#include "call_count_entries.inc"
#undef CLZERO_SEQ_ENTRY
  kEntries
};

const char* const kNames[] = {
#define CLZERO_SEQ_ENTRY(name) #name,
#include "call_count_entries.inc"
#undef CLZERO_SEQ_ENTRY
};

std::atomic<long long> g_counts[kEntries];
std::atomic<long long> g_wrapped_calls{0};

inline void count(Entry e) {
  g_wrapped_calls.fetch_add(1, std::memory_order_relaxed);
  if (g_counting.load(std::memory_order_relaxed)) g_counts[e].fetch_add(1, std::memory_order_relaxed);
}

template <class Fn>
Fn next(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    std::fprintf(stderr, "clzero_sequences: %s not found behind the call counter\n", name);
    std::abort();
  }
  return reinterpret_cast<Fn>(f);
}

}  // namespace

void start_counting_calls() {
  for (auto& c : g_counts) c.store(0);
  g_counting.store(true);
}

std::vector<std::pair<std::string, long long>> stop_counting_calls() {
  g_counting.store(false);
  std::vector<std::pair<std::string, long long>> out;
  for (int i = 0; i < kEntries; ++i)
    if (const long long c = g_counts[i].load(); c != 0) out.emplace_back(kNames[i], c);
  return out;
}

bool call_counting_works() { return g_wrapped_calls.load() > 0; }

}  // namespace clzero_seq

using clzero_seq::count;

#define CLZERO_SEQ_FORWARD(ret, name, params, args)                       \
  extern "C" CL_API_ENTRY ret CL_API_CALL name params {                   \
    static const auto real = clzero_seq::next<decltype(&name)>(#name);    \
    count(clzero_seq::e_##name);                                          \
    return real args;                                                     \
  }

CLZERO_SEQ_FORWARD(cl_int, clEnqueueNDRangeKernel,
                   (cl_command_queue q, cl_kernel k, cl_uint dim, const size_t* off, const size_t* global,
                    const size_t* local, cl_uint n, const cl_event* w, cl_event* e),
                   (q, k, dim, off, global, local, n, w, e))
CLZERO_SEQ_FORWARD(void*, clEnqueueMapBuffer,
                   (cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f, size_t off, size_t size, cl_uint n,
                    const cl_event* w, cl_event* e, cl_int* rc),
                   (q, m, b, f, off, size, n, w, e, rc))
CLZERO_SEQ_FORWARD(cl_int, clEnqueueUnmapMemObject,
                   (cl_command_queue q, cl_mem m, void* p, cl_uint n, const cl_event* w, cl_event* e),
                   (q, m, p, n, w, e))
CLZERO_SEQ_FORWARD(cl_int, clEnqueueReadBuffer,
                   (cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t size, void* p, cl_uint n,
                    const cl_event* w, cl_event* e),
                   (q, m, b, off, size, p, n, w, e))
CLZERO_SEQ_FORWARD(cl_int, clEnqueueWriteBuffer,
                   (cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t size, const void* p, cl_uint n,
                    const cl_event* w, cl_event* e),
                   (q, m, b, off, size, p, n, w, e))
CLZERO_SEQ_FORWARD(cl_int, clEnqueueFillBuffer,
                   (cl_command_queue q, cl_mem m, const void* pat, size_t ps, size_t off, size_t size, cl_uint n,
                    const cl_event* w, cl_event* e),
                   (q, m, pat, ps, off, size, n, w, e))
CLZERO_SEQ_FORWARD(cl_int, clEnqueueMarkerWithWaitList, (cl_command_queue q, cl_uint n, const cl_event* w, cl_event* e),
                   (q, n, w, e))
CLZERO_SEQ_FORWARD(cl_int, clEnqueueBarrierWithWaitList,
                   (cl_command_queue q, cl_uint n, const cl_event* w, cl_event* e), (q, n, w, e))
#if defined(CL_VERSION_2_0)
CLZERO_SEQ_FORWARD(cl_int, clEnqueueSVMMap,
                   (cl_command_queue q, cl_bool b, cl_map_flags f, void* p, size_t size, cl_uint n,
                    const cl_event* w, cl_event* e),
                   (q, b, f, p, size, n, w, e))
CLZERO_SEQ_FORWARD(cl_int, clEnqueueSVMUnmap, (cl_command_queue q, void* p, cl_uint n, const cl_event* w, cl_event* e),
                   (q, p, n, w, e))
CLZERO_SEQ_FORWARD(cl_int, clSetKernelArgSVMPointer, (cl_kernel k, cl_uint i, const void* p), (k, i, p))
#endif
CLZERO_SEQ_FORWARD(cl_int, clFlush, (cl_command_queue q), (q))
CLZERO_SEQ_FORWARD(cl_int, clFinish, (cl_command_queue q), (q))
CLZERO_SEQ_FORWARD(cl_int, clWaitForEvents, (cl_uint n, const cl_event* w), (n, w))
CLZERO_SEQ_FORWARD(cl_int, clGetEventInfo, (cl_event e, cl_event_info i, size_t s, void* v, size_t* r),
                   (e, i, s, v, r))
CLZERO_SEQ_FORWARD(cl_int, clRetainEvent, (cl_event e), (e))
CLZERO_SEQ_FORWARD(cl_int, clReleaseEvent, (cl_event e), (e))
CLZERO_SEQ_FORWARD(cl_int, clSetKernelArg, (cl_kernel k, cl_uint i, size_t s, const void* v), (k, i, s, v))
CLZERO_SEQ_FORWARD(cl_int, clGetCommandQueueInfo,
                   (cl_command_queue q, cl_command_queue_info i, size_t s, void* v, size_t* r), (q, i, s, v, r))
CLZERO_SEQ_FORWARD(cl_int, clGetDeviceInfo, (cl_device_id d, cl_device_info i, size_t s, void* v, size_t* r),
                   (d, i, s, v, r))
CLZERO_SEQ_FORWARD(cl_int, clGetMemObjectInfo, (cl_mem m, cl_mem_info i, size_t s, void* v, size_t* r),
                   (m, i, s, v, r))
