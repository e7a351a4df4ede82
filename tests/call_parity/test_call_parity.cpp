// SPDX-License-Identifier: Apache-2.0
// clzero against the fastest legal sequence written by hand, call by call.
//
// For each policy on the engine's in-order queue, used as the README shows
// (the output argument bound once with MappedTensor::bind; per inference
// wait_list(queue) and event_slot(queue)), every OpenCL call of 16
// inferences in the steady state is counted (benchmarks/sequences/
// call_count.cpp, which counts clReleaseEvent too: an event made is an event
// released). A hand-written program that makes the same output host-visible
// the same way, with only the calls the OpenCL 3.0 rules require, is counted
// alike, and clzero may make no call it does not. Both check every element
// of every inference.
//
// The hand-written programs follow the host wait the library uses on the
// device (detail/wait_method.hpp), which CTest sets with CLZERO_HOST_WAIT
// (map, wait, poll).
//
// The same counted inferences of clzero must not allocate: this binary
// replaces the global operator new and counts the calls made while they
// run (the OpenCL runtimes below are C and allocate with malloc).
#include <clzero/clzero.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "call_count.hpp"
#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {
std::atomic<bool> g_count_new{false};
std::atomic<long long> g_new_calls{0};
}  // namespace

// GCC 13 inlines these into the standard containers' code and then takes
// std::free on memory from this operator new for a mismatch; the pair is
// matched here (both malloc and free), so that warning is a false alarm.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t size) {
  if (g_count_new.load(std::memory_order_relaxed)) g_new_calls.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

constexpr cl_uint kN = 1024;
long long g_allocations = 0;       // operator new calls of the last logged() window
std::vector<std::string> g_order;  // the calls of the last logged() window, in order
constexpr int kWarm = 4, kCounted = 16;

using Counts = std::map<std::string, long long>;

std::string show(const Counts& c) {
  std::ostringstream s;
  for (const auto& kv : c) s << kv.first << " x" << kv.second << "  ";
  return s.str();
}

// Runs `inference(iter)` kWarm times, then logs kCounted more.
template <class F>
Counts logged(F&& inference) {
  cl_uint iter = 1;
  for (int i = 0; i < kWarm; ++i) inference(iter++);
  clzero_seq::start_tracing_calls();
  clzero_seq::start_counting_calls();
  g_new_calls.store(0);
  g_count_new.store(true);
  for (int i = 0; i < kCounted; ++i) inference(iter++);
  g_count_new.store(false);
  g_allocations = g_new_calls.load();
  g_order = clzero_seq::stop_tracing_calls();
  Counts c;
  for (const auto& kv : clzero_seq::stop_counting_calls()) c[kv.first] = kv.second;
  return c;
}

std::size_t wrong_elements(const std::uint32_t* p, cl_uint iter) {
  std::size_t wrong = 0;
  for (cl_uint i = 0; i < kN; ++i) wrong += p[i] != value(i, iter);
  return wrong;
}

// The library's host wait on the device: whether views of mapped tensors
// map, blocking, as they open, and whether other waits poll.
struct Wait {
  bool map;
  bool poll;
};

Wait wait_of(const detail::WaitMethod& m) { return {m.map_at_view, m.poll}; }

// The host waits for `e` as the library's method says: polling its status,
// or clWaitForEvents.
void host_wait(cl_event e, Wait w) {
  if (w.poll) {
    cl_int status = CL_QUEUED;
    do ok(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr), "clGetEventInfo");
    while (status > CL_COMPLETE);
    ok(status, "the command's status");
  } else {
    ok(clWaitForEvents(1, &e), "clWaitForEvents");
  }
}

// A buffer of kN elements, released by clzero's handle.
MemHandle buffer(cl_mem_flags flags) {
  cl_int rc = CL_SUCCESS;
  MemHandle m = MemHandle::adopt(clCreateBuffer(Env::get().context, flags, kN * 4, nullptr, &rc));
  ok(rc, "clCreateBuffer");
  return m;
}

void enqueue_fill(cl_kernel k, cl_uint iter, cl_event* event) {
  Env& env = Env::get();
  std::size_t global = kN;
  ok(clSetKernelArg(k, 1, sizeof kN, &kN), "clSetKernelArg");
  ok(clSetKernelArg(k, 2, sizeof iter, &iter), "clSetKernelArg");
  ok(clEnqueueNDRangeKernel(env.queue, k, 1, nullptr, &global, nullptr, 0, nullptr, event), "clEnqueueNDRangeKernel");
}

// Maps the whole buffer for reading the way the library's wait says: one
// blocking call, or a non-blocking map submitted and waited for.
void* map_for_host(cl_mem m, Wait w) {
  Env& env = Env::get();
  cl_int rc = CL_SUCCESS;
  if (w.map) {
    void* p = clEnqueueMapBuffer(env.queue, m, CL_TRUE, CL_MAP_READ, 0, kN * 4, 0, nullptr, nullptr, &rc);
    ok(rc, "clEnqueueMapBuffer");
    return p;
  }
  cl_event mapped = nullptr;
  void* p = clEnqueueMapBuffer(env.queue, m, CL_FALSE, CL_MAP_READ, 0, kN * 4, 0, nullptr, &mapped, &rc);
  ok(rc, "clEnqueueMapBuffer");
  ok(clFlush(env.queue), "clFlush");
  host_wait(mapped, w);
  ok(clReleaseEvent(mapped), "clReleaseEvent");
  return p;
}

// Mapped by hand, at rest (unmap; kernel; map again; read) or per
// inference (kernel; map; read; unmap), the map blocking or submitted and
// waited for.
Counts hand_written_map(Wait w, bool at_rest, std::size_t& wrong) {
  Env& env = Env::get();
  Kernel fill("fill_u32");
  const MemHandle owned = buffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR);
  cl_mem mem = owned.get();
  ok(clSetKernelArg(fill.k, 0, sizeof mem, &mem), "clSetKernelArg");
  void* p = at_rest ? map_for_host(mem, Wait{true, false}) : nullptr;
  const auto unmap = [&] {
    ok(clEnqueueUnmapMemObject(env.queue, mem, p, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
  };
  const Counts c = logged([&](cl_uint iter) {
    if (at_rest) unmap();
    enqueue_fill(fill.k, iter, nullptr);
    p = map_for_host(mem, w);
    wrong += wrong_elements(static_cast<const std::uint32_t*>(p), iter);
    if (!at_rest) unmap();
  });
  if (at_rest) unmap();
  ok(clFinish(env.queue), "clFinish");
  return c;
}

Counts hand_written_mapped_at_rest(Wait w, std::size_t& wrong) { return hand_written_map(w, true, wrong); }
Counts hand_written_map_per_inference(Wait w, std::size_t& wrong) { return hand_written_map(w, false, wrong); }

// Copied into pinned memory, by hand: kernel; non-blocking read into a
// mapped ALLOC_HOST_PTR buffer; submitted and waited for; read.
Counts hand_written_copy_to_pinned(Wait w, std::size_t& wrong) {
  Env& env = Env::get();
  Kernel fill("fill_u32");
  const MemHandle device_owned = buffer(CL_MEM_READ_WRITE);
  const MemHandle staging_owned = buffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR);
  cl_mem device = device_owned.get(), staging = staging_owned.get();
  ok(clSetKernelArg(fill.k, 0, sizeof device, &device), "clSetKernelArg");
  cl_int rc = CL_SUCCESS;
  void* host =
      clEnqueueMapBuffer(env.queue, staging, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, kN * 4, 0, nullptr, nullptr, &rc);
  ok(rc, "clEnqueueMapBuffer");
  const Counts c = logged([&](cl_uint iter) {
    enqueue_fill(fill.k, iter, nullptr);
    cl_event down = nullptr;
    ok(clEnqueueReadBuffer(env.queue, device, CL_FALSE, 0, kN * 4, host, 0, nullptr, &down), "clEnqueueReadBuffer");
    ok(clFlush(env.queue), "clFlush");
    host_wait(down, w);
    ok(clReleaseEvent(down), "clReleaseEvent");
    wrong += wrong_elements(static_cast<const std::uint32_t*>(host), iter);
  });
  ok(clEnqueueUnmapMemObject(env.queue, staging, host, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
  ok(clFinish(env.queue), "clFinish");
  return c;
}

#if defined(CL_VERSION_2_0)
// Fine-grained buffer SVM by hand: the last kernel's event released; kernel
// with an event; submitted and waited for; read. No map: the kernel's
// completion makes what it wrote visible (OpenCL 3.0 section 3.3.6).
Counts hand_written_svm_fine(Wait w, std::size_t& wrong) {
  Env& env = Env::get();
  Kernel fill("fill_u32");
  void* p = clSVMAlloc(env.context, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, kN * 4, 0);
  REQUIRE(p != nullptr);
  ok(clSetKernelArgSVMPointer(fill.k, 0, p), "clSetKernelArgSVMPointer");
  cl_event done = nullptr;
  const Counts c = logged([&](cl_uint iter) {
    if (done != nullptr) ok(clReleaseEvent(done), "clReleaseEvent");
    enqueue_fill(fill.k, iter, &done);
    ok(clFlush(env.queue), "clFlush");
    host_wait(done, w);
    wrong += wrong_elements(static_cast<const std::uint32_t*>(p), iter);
  });
  ok(clReleaseEvent(done), "clReleaseEvent");
  ok(clFinish(env.queue), "clFinish");
  clSVMFree(env.context, p);
  return c;
}
#endif

// The README's inference with `Policy`.
template <class Policy>
Counts with_clzero(const typename Policy::Options& options, std::size_t& wrong) {
  Env& env = Env::get();
  Kernel fill("fill_u32");
  MappedTensor<std::uint32_t, Policy> t(env.context, env.queue, {kN}, Intent::output, options);
  t.bind(fill.k, 0);
  return logged([&](cl_uint iter) {
    {
      auto dev = t.device_access();
      std::size_t global = kN;
      ok(clSetKernelArg(fill.k, 1, sizeof kN, &kN), "clSetKernelArg");
      ok(clSetKernelArg(fill.k, 2, sizeof iter, &iter), "clSetKernelArg");
      ok(clEnqueueNDRangeKernel(env.queue, fill.k, 1, nullptr, &global, nullptr, dev.wait_count(env.queue),
                                dev.wait_list(env.queue), dev.event_slot(env.queue)),
         "clEnqueueNDRangeKernel");
    }
    auto view = t.read_view();
    wrong += wrong_elements(view.data(), iter);
  });
}

// Every call clzero makes beyond the hand-written program. Where the host polls, the number of status
// queries (and of clWaitForEvents after clzero's spin budget) depends on
// timing and is not compared.
std::string extra_calls(const Counts& lib, const Counts& hand, bool polled) {
  std::ostringstream s;
  for (const auto& kv : lib) {
    if (polled && (kv.first == "clGetEventInfo" || kv.first == "clWaitForEvents")) continue;
    const auto h = hand.find(kv.first);
    const long long allowed = h == hand.end() ? 0 : h->second;
    if (kv.second > allowed) s << kv.first << " +" << (kv.second - allowed) << " in " << kCounted << "  ";
  }
  return s.str();
}

// The calls in order, each wait for commands written "(wait)": status
// queries and clWaitForEvents in a row, in any mix (how many looks a poll
// takes, and whether it outlasts clzero's spin budget, depends on timing).
// Any other clGetEventInfo is a call of its own.
std::vector<std::string> steps(const std::vector<std::string>& calls) {
  const auto waits = [](const std::string& c) { return c == "clGetEventInfo(status)" || c == "clWaitForEvents"; };
  std::vector<std::string> out;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (!waits(calls[i])) {
      out.push_back(calls[i]);
      continue;
    }
    while (i + 1 < calls.size() && waits(calls[i + 1])) ++i;
    out.push_back("(wait)");
  }
  return out;
}

// Where two orders first differ, with the calls around it.
std::string first_difference(const std::vector<std::string>& lib, const std::vector<std::string>& hand) {
  std::size_t at = 0;
  while (at < lib.size() && at < hand.size() && lib[at] == hand[at]) ++at;
  if (at == lib.size() && at == hand.size()) return "";
  std::ostringstream s;
  const auto around = [&](const std::vector<std::string>& v) {
    std::ostringstream o;
    for (std::size_t i = at >= 3 ? at - 3 : 0; i < v.size() && i < at + 4; ++i)
      o << (i == at ? "> " : "") << v[i] << " ";
    return o.str();
  };
  s << "call " << at << " of " << lib.size() << " (clzero) and " << hand.size()
    << " (hand-written):\n  clzero:       " << around(lib) << "\n  hand-written: " << around(hand);
  return s.str();
}

template <class Policy, class Hand>
void compare(const char* what, const typename Policy::Options& options, Hand&& hand, bool map_at_view = false) {
  Wait w = wait_of(detail::wait_method(Env::get().context, Env::get().device));
  w.map = w.map || map_at_view;
  std::size_t wrong_lib = 0, wrong_hand = 0;
  const Counts lib = with_clzero<Policy>(options, wrong_lib);
  const long long allocations = g_allocations;
  const std::vector<std::string> lib_order = steps(g_order);
  const Counts by_hand = hand(w, wrong_hand);
  const std::vector<std::string> hand_order = steps(g_order);
  const bool polled = by_hand.count("clGetEventInfo") != 0;
  INFO(what << (w.map ? ", mapped tensors map at the view" : "") << (w.poll ? ", polled" : ", waited for"));
  INFO("clzero:       " << show(lib));
  INFO("hand-written: " << show(by_hand));
  REQUIRE(clzero_seq::call_counting_works());
  CHECK(wrong_lib == 0);
  CHECK(wrong_hand == 0);
  CHECK(extra_calls(lib, by_hand, polled).empty());
  CHECK(first_difference(lib_order, hand_order) == "");
  INFO("heap allocations of clzero's " << kCounted << " counted inferences: " << allocations);
  CHECK(allocations == 0);
  REQUIRE(lib.count("clEnqueueNDRangeKernel") == 1);
  CHECK(lib.at("clEnqueueNDRangeKernel") == kCounted);
}

}  // namespace

TEST_CASE("Persistent makes no call the hand-written mapped-at-rest sequence does not", "[call_parity]") {
  compare<policy::Persistent>("Persistent (alloc_host_ptr)", {}, hand_written_mapped_at_rest);
}

// NVIDIA's host-located memory always maps at the view (the non-blocking
// map completes early there, policy/persistent.hpp). The calls do not
// depend on the allocation, so the hand-written program's buffer is an
// ALLOC_HOST_PTR one.
TEST_CASE("Persistent over NVIDIA host-located memory makes no call the hand-written blocking re-map does not",
          "[call_parity]") {
  if (!Env::get().caps.nv_create_buffer) {
    CLZERO_NOT_RUN("not compared: the device lacks cl_nv_create_buffer");
    return;
  }
  policy::Persistent::Options o;
  o.allocation = Allocation::nv_host_pinned();
  compare<policy::Persistent>("Persistent (nv_host_pinned)", o, hand_written_mapped_at_rest, true);
}

TEST_CASE("MapPerInference makes no call the hand-written per-inference map does not", "[call_parity]") {
  compare<policy::MapPerInference>("MapPerInference (alloc_host_ptr)", {}, hand_written_map_per_inference);
}

TEST_CASE("CopyToPinned makes no call the hand-written read into pinned memory does not", "[call_parity]") {
  if (Env::get().caps.nv_create_buffer) {
    CLZERO_NOT_RUN("not compared: the staging buffer is NVIDIA host-located memory on this device");
    return;
  }
  compare<policy::CopyToPinned>("CopyToPinned", {}, hand_written_copy_to_pinned);
}

// The event of the kernel is released at the next inference, as the
// hand-written sequence does, not as soon as the view has seen it complete:
// on PoCL 3.1 (2 vCPUs) that early release was the gap between Auto and the
// hand-written svm_fine.poll at 4 B and 4 KiB (docs/benchmarks.md, "Every
// legal sequence against clzero", against the runs of dc217b3's headers in
// docs/logs/ci/38-sequences-pocl31/json-dc217b3/).
TEST_CASE("Svm over fine-grained buffers makes the hand-written fine SVM sequence's calls in its order",
          "[call_parity]") {
#if defined(CL_VERSION_2_0)
  if (!Env::get().caps.svm_fine_grain_buffer) {
    CLZERO_NOT_RUN("not compared: the device lacks fine-grained buffer SVM");
    return;
  }
  compare<policy::Svm>("Svm (fine)", policy::Svm::Options{policy::Svm::Grain::fine}, hand_written_svm_fine);
#else
  CLZERO_NOT_RUN("not compared: built below OpenCL 2.0, which has no SVM");
#endif
}
