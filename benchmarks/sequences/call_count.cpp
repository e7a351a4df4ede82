// SPDX-License-Identifier: Apache-2.0
#include "call_count.hpp"

#include <CL/cl.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

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
// The order of the calls while tracing: entry numbers, in a buffer made
// before tracing starts, so that tracing allocates nothing.
std::atomic<bool> g_tracing{false};
std::vector<unsigned char> g_trace;
std::size_t g_traced = 0;
// A status query (clGetEventInfo for CL_EVENT_COMMAND_EXECUTION_STATUS) is
// traced as an entry of its own, and a run of them as one: a poll looks
// thousands of times, as often as timing allows, while any other event query
// is a call of its own to compare.
constexpr int kStatusQuery = kEntries;
static_assert(kStatusQuery < 256, "an entry's number is stored in one byte");
inline void trace(int e) {
  if (e == kStatusQuery && g_traced > 0 && g_traced <= g_trace.size() && g_trace[g_traced - 1] == kStatusQuery) return;
  if (g_traced < g_trace.size()) g_trace[g_traced] = static_cast<unsigned char>(e);
  ++g_traced;
}
std::atomic<long long> g_wrapped_calls{0};

// The null device (set_null_device): commands are not made; an event asked
// for is one of these, complete, recycled in turn (an inference holds a few
// at a time), and a buffer map returns scratch memory of its own.
std::atomic<bool> g_null{false};
struct FakeEvent {
  cl_command_queue queue;
  cl_command_type type;
};
FakeEvent g_fakes[256];
unsigned g_next_fake = 0;
std::map<cl_mem, std::vector<unsigned char>> g_scratch;

inline bool null_device() { return g_null.load(std::memory_order_relaxed); }

inline cl_int made(cl_event* event, cl_command_queue queue, cl_command_type type) {
  if (event != nullptr) {
    FakeEvent& f = g_fakes[g_next_fake++ % 256];
    f = FakeEvent{queue, type};
    *event = reinterpret_cast<cl_event>(&f);
  }
  return CL_SUCCESS;
}

inline const FakeEvent* fake(cl_event e) {
  const auto* f = reinterpret_cast<const FakeEvent*>(e);
  return f >= g_fakes && f < g_fakes + 256 ? f : nullptr;
}

template <class T>
cl_int answer(const T& value, std::size_t size, void* out, std::size_t* size_ret) {
  if (size_ret != nullptr) *size_ret = sizeof value;
  if (out != nullptr) {
    if (size < sizeof value) return CL_INVALID_VALUE;
    std::memcpy(out, &value, sizeof value);
  }
  return CL_SUCCESS;
}

inline void count(Entry e) {
  g_wrapped_calls.fetch_add(1, std::memory_order_relaxed);
  if (g_counting.load(std::memory_order_relaxed)) g_counts[e].fetch_add(1, std::memory_order_relaxed);
  if (g_tracing.load(std::memory_order_relaxed) && e != e_clGetEventInfo) trace(e);
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

void start_tracing_calls() {
  g_trace.assign(kMaxTracedCalls, 0);
  g_traced = 0;
  g_tracing.store(true);
}

std::vector<std::string> stop_tracing_calls() {
  g_tracing.store(false);
  if (g_traced > g_trace.size())
    throw std::length_error("stop_tracing_calls: " + std::to_string(g_traced) + " calls were made, more than the " +
                            std::to_string(g_trace.size()) + " the trace holds");
  std::vector<std::string> out;
  out.reserve(g_traced);
  for (std::size_t i = 0; i < g_traced; ++i)
    out.emplace_back(g_trace[i] == kStatusQuery ? "clGetEventInfo(status)" : kNames[g_trace[i]]);
  return out;
}

bool call_counting_works() { return g_wrapped_calls.load() > 0; }

void set_null_device(bool on) { g_null.store(on); }

}  // namespace clzero_seq

using clzero_seq::count;
using clzero_seq::made;
using clzero_seq::null_device;

#define CLZERO_SEQ_REAL(name)                                             \
  static const auto real = clzero_seq::next<decltype(&name)>(#name);     \
  count(clzero_seq::e_##name)

#define CLZERO_SEQ_FORWARD(ret, name, params, args) \
  extern "C" CL_API_ENTRY ret CL_API_CALL name params { \
    CLZERO_SEQ_REAL(name);                          \
    return real args;                               \
  }

// A command: on the null device, not made (its event, if asked for, is a
// complete fake one).
#define CLZERO_SEQ_COMMAND(name, params, args, type)            \
  extern "C" CL_API_ENTRY cl_int CL_API_CALL name params {     \
    CLZERO_SEQ_REAL(name);                                     \
    if (null_device()) return made(e, q, type);                \
    return real args;                                          \
  }

// Returns CL_SUCCESS and makes nothing on the null device.
#define CLZERO_SEQ_NOTHING(name, params, args)              \
  extern "C" CL_API_ENTRY cl_int CL_API_CALL name params { \
    CLZERO_SEQ_REAL(name);                                 \
    if (null_device()) return CL_SUCCESS;                  \
    return real args;                                      \
  }

CLZERO_SEQ_COMMAND(clEnqueueNDRangeKernel,
                   (cl_command_queue q, cl_kernel k, cl_uint dim, const size_t* off, const size_t* global,
                    const size_t* local, cl_uint n, const cl_event* w, cl_event* e),
                   (q, k, dim, off, global, local, n, w, e), CL_COMMAND_NDRANGE_KERNEL)

extern "C" CL_API_ENTRY void* CL_API_CALL clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f,
                                                             size_t off, size_t size, cl_uint n, const cl_event* w,
                                                             cl_event* e, cl_int* rc) {
  CLZERO_SEQ_REAL(clEnqueueMapBuffer);
  if (!null_device()) return real(q, m, b, f, off, size, n, w, e, rc);
  std::vector<unsigned char>& scratch = clzero_seq::g_scratch[m];
  if (scratch.size() < off + size) scratch.resize(off + size);
  if (rc != nullptr) *rc = CL_SUCCESS;
  made(e, q, CL_COMMAND_MAP_BUFFER);
  return scratch.data() + off;
}

CLZERO_SEQ_COMMAND(clEnqueueUnmapMemObject,
                   (cl_command_queue q, cl_mem m, void* p, cl_uint n, const cl_event* w, cl_event* e),
                   (q, m, p, n, w, e), CL_COMMAND_UNMAP_MEM_OBJECT)
CLZERO_SEQ_COMMAND(clEnqueueReadBuffer,
                   (cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t size, void* p, cl_uint n,
                    const cl_event* w, cl_event* e),
                   (q, m, b, off, size, p, n, w, e), CL_COMMAND_READ_BUFFER)
CLZERO_SEQ_COMMAND(clEnqueueWriteBuffer,
                   (cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t size, const void* p, cl_uint n,
                    const cl_event* w, cl_event* e),
                   (q, m, b, off, size, p, n, w, e), CL_COMMAND_WRITE_BUFFER)
CLZERO_SEQ_COMMAND(clEnqueueFillBuffer,
                   (cl_command_queue q, cl_mem m, const void* pat, size_t ps, size_t off, size_t size, cl_uint n,
                    const cl_event* w, cl_event* e),
                   (q, m, pat, ps, off, size, n, w, e), CL_COMMAND_FILL_BUFFER)
CLZERO_SEQ_COMMAND(clEnqueueMarkerWithWaitList, (cl_command_queue q, cl_uint n, const cl_event* w, cl_event* e),
                   (q, n, w, e), CL_COMMAND_MARKER)
CLZERO_SEQ_COMMAND(clEnqueueBarrierWithWaitList, (cl_command_queue q, cl_uint n, const cl_event* w, cl_event* e),
                   (q, n, w, e), CL_COMMAND_BARRIER)
#if defined(CL_VERSION_2_0)
CLZERO_SEQ_COMMAND(clEnqueueSVMMap,
                   (cl_command_queue q, cl_bool b, cl_map_flags f, void* p, size_t size, cl_uint n,
                    const cl_event* w, cl_event* e),
                   (q, b, f, p, size, n, w, e), CL_COMMAND_SVM_MAP)
CLZERO_SEQ_COMMAND(clEnqueueSVMUnmap, (cl_command_queue q, void* p, cl_uint n, const cl_event* w, cl_event* e),
                   (q, p, n, w, e), CL_COMMAND_SVM_UNMAP)
CLZERO_SEQ_FORWARD(cl_int, clSetKernelArgSVMPointer, (cl_kernel k, cl_uint i, const void* p), (k, i, p))
#endif
CLZERO_SEQ_NOTHING(clFlush, (cl_command_queue q), (q))
CLZERO_SEQ_NOTHING(clFinish, (cl_command_queue q), (q))
CLZERO_SEQ_NOTHING(clWaitForEvents, (cl_uint n, const cl_event* w), (n, w))

extern "C" CL_API_ENTRY cl_int CL_API_CALL clGetEventInfo(cl_event e, cl_event_info i, size_t s, void* v, size_t* r) {
  CLZERO_SEQ_REAL(clGetEventInfo);
  if (clzero_seq::g_tracing.load(std::memory_order_relaxed))
    clzero_seq::trace(i == CL_EVENT_COMMAND_EXECUTION_STATUS ? clzero_seq::kStatusQuery : clzero_seq::e_clGetEventInfo);
  const clzero_seq::FakeEvent* f = clzero_seq::fake(e);
  if (f == nullptr) return real(e, i, s, v, r);
  switch (i) {
    case CL_EVENT_COMMAND_EXECUTION_STATUS: return clzero_seq::answer(cl_int{CL_COMPLETE}, s, v, r);
    case CL_EVENT_COMMAND_QUEUE: return clzero_seq::answer(f->queue, s, v, r);
    case CL_EVENT_COMMAND_TYPE: return clzero_seq::answer(f->type, s, v, r);
    case CL_EVENT_REFERENCE_COUNT: return clzero_seq::answer(cl_uint{1}, s, v, r);
    default: return CL_INVALID_VALUE;
  }
}
extern "C" CL_API_ENTRY cl_int CL_API_CALL clRetainEvent(cl_event e) {
  CLZERO_SEQ_REAL(clRetainEvent);
  return clzero_seq::fake(e) != nullptr ? CL_SUCCESS : real(e);
}
extern "C" CL_API_ENTRY cl_int CL_API_CALL clReleaseEvent(cl_event e) {
  CLZERO_SEQ_REAL(clReleaseEvent);
  return clzero_seq::fake(e) != nullptr ? CL_SUCCESS : real(e);
}
CLZERO_SEQ_FORWARD(cl_int, clSetKernelArg, (cl_kernel k, cl_uint i, size_t s, const void* v), (k, i, s, v))
CLZERO_SEQ_FORWARD(cl_int, clGetCommandQueueInfo,
                   (cl_command_queue q, cl_command_queue_info i, size_t s, void* v, size_t* r), (q, i, s, v, r))
CLZERO_SEQ_FORWARD(cl_int, clGetDeviceInfo, (cl_device_id d, cl_device_info i, size_t s, void* v, size_t* r),
                   (d, i, s, v, r))
CLZERO_SEQ_FORWARD(cl_int, clGetMemObjectInfo, (cl_mem m, cl_mem_info i, size_t s, void* v, size_t* r),
                   (m, i, s, v, r))
