// SPDX-License-Identifier: Apache-2.0
// The fault layer's own checks, each shown to fire on a program that breaks
// the rule, with raw OpenCL calls: a check that cannot fail proves nothing.
#include <CL/cl.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "harness/fault_layer.hpp"
#include "support/catch.hpp"
#include "support/probes.hpp"
#include "support/test_env.hpp"

using namespace clzero_test;

namespace {

cl_mem make_buffer(std::size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR) {
  cl_int rc = CL_SUCCESS;
  cl_mem m = clCreateBuffer(Env::get().context, flags, bytes, nullptr, &rc);
  ok(rc, "clCreateBuffer");
  return m;
}

void* map(cl_mem m, std::size_t bytes, cl_map_flags flags) {
  cl_int rc = CL_SUCCESS;
  void* p = clEnqueueMapBuffer(Env::get().queue, m, CL_TRUE, flags, 0, bytes, 0, nullptr, nullptr, &rc);
  ok(rc, "clEnqueueMapBuffer");
  return p;
}

void unmap(cl_mem m, void* p) {
  cl_event done = nullptr;
  ok(clEnqueueUnmapMemObject(Env::get().queue, m, p, 0, nullptr, &done), "clEnqueueUnmapMemObject");
  ok(clWaitForEvents(1, &done), "clWaitForEvents");
  clReleaseEvent(done);
}

bool recorded(const char* text) {
  for (const std::string& v : FaultLayer::get().violations())
    if (v.find(text) != std::string::npos) return true;
  return false;
}

// Runs `f` in a child process; returns the signal that ended it, or 0.
template <class F>
int signal_of_child(F&& f) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {                   // the child touches memory only: no OpenCL after fork
    std::signal(SIGSEGV, SIG_DFL);  // not the test framework's handler
    f();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

struct Shadows {
  Shadows() { FaultLayer::get().shadow_maps(true); }
  ~Shadows() { FaultLayer::get().shadow_maps(false); }
  Shadows(const Shadows&) = delete;
  Shadows& operator=(const Shadows&) = delete;
};

}  // namespace

TEST_CASE("the layer records an unmap of a pointer that is not mapped", "[layer]") {
  FaultLayer::get().reset();
  cl_mem m = make_buffer(4096);
  void* p = map(m, 4096, CL_MAP_READ);
  unmap(m, p);
  CHECK(FaultLayer::get().violations().empty());
  std::vector<char> elsewhere(64);
  cl_event e = nullptr;
  (void)clEnqueueUnmapMemObject(Env::get().queue, m, elsewhere.data(), 0, nullptr, &e);
  if (e != nullptr) clReleaseEvent(e);
  CHECK(recorded("unmap of a pointer that is not mapped"));
  clReleaseMemObject(m);
}

TEST_CASE("the layer records a double unmap", "[layer]") {
  FaultLayer::get().reset();
  cl_mem m = make_buffer(4096);
  void* p = map(m, 4096, CL_MAP_READ);
  unmap(m, p);
  cl_event e = nullptr;
  (void)clEnqueueUnmapMemObject(Env::get().queue, m, p, 0, nullptr, &e);
  if (e != nullptr) clReleaseEvent(e);
  CHECK(recorded("unmapped twice"));
  clReleaseMemObject(m);
}

TEST_CASE("the layer records a kernel enqueued on a buffer mapped for writing", "[layer]") {
  FaultLayer::get().reset();
  cl_mem m = make_buffer(4096);
  void* p = map(m, 4096, CL_MAP_WRITE);
  Kernel fill("fill_u32");
  fill.arg(0, m);
  fill.arg(1, cl_uint{1024});
  fill.arg(2, cl_uint{1});
  const std::size_t n = 1024;
  ok(clEnqueueNDRangeKernel(Env::get().queue, fill.k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr), "kernel");
  CHECK(recorded("mapped for writing"));
  unmap(m, p);
  clFinish(Env::get().queue);
  clReleaseMemObject(m);
}

// A sub-buffer is a region of its parent (OpenCL 3.0 section 5.2.2): a kernel
// on it uses the parent's memory, and the map rules of section 5.5.4 hold
// across the two handles.
TEST_CASE("the layer records a kernel on a sub-buffer of a parent mapped for writing", "[layer]") {
  FaultLayer::get().reset();
  constexpr std::size_t kHalf = 4096;  // a multiple of every CL_DEVICE_MEM_BASE_ADDR_ALIGN in use
  cl_mem parent = make_buffer(2 * kHalf);
  const cl_buffer_region second_half{kHalf, kHalf};
  cl_int rc = CL_SUCCESS;
  cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &second_half, &rc);
  ok(rc, "clCreateSubBuffer");
  Kernel fill("fill_u32");
  fill.arg(0, sub);
  fill.arg(1, cl_uint{kHalf / 4});
  fill.arg(2, cl_uint{1});
  const std::size_t n = kHalf / 4;

  // The parent's other half mapped: no overlap, no violation.
  cl_int map_rc = CL_SUCCESS;
  void* first =
      clEnqueueMapBuffer(Env::get().queue, parent, CL_TRUE, CL_MAP_WRITE, 0, kHalf, 0, nullptr, nullptr, &map_rc);
  ok(map_rc, "clEnqueueMapBuffer");
  ok(clEnqueueNDRangeKernel(Env::get().queue, fill.k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr), "kernel");
  CHECK(FaultLayer::get().violations().empty());
  unmap(parent, first);

  // The whole parent mapped for writing: the kernel on its sub-buffer breaks the rule.
  void* whole = map(parent, 2 * kHalf, CL_MAP_WRITE);
  ok(clEnqueueNDRangeKernel(Env::get().queue, fill.k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr), "kernel");
  CHECK(recorded("mapped for writing (through a sub-buffer or its parent)"));
  unmap(parent, whole);
  clFinish(Env::get().queue);
  clReleaseMemObject(sub);
  clReleaseMemObject(parent);
}

TEST_CASE("the layer records a release while mapped and counts what is still held", "[layer]") {
  FaultLayer& layer = FaultLayer::get();
  layer.reset();
  const clzero_fault_counts before = layer.counts();
  cl_mem m = make_buffer(4096);
  cl_event e = nullptr;
  const cl_uchar zero = 0;
  ok(clEnqueueFillBuffer(Env::get().queue, m, &zero, 1, 0, 4096, 0, nullptr, &e), "clEnqueueFillBuffer");
  ok(clWaitForEvents(1, &e), "clWaitForEvents");
  CHECK(layer.counts().live_mem == before.live_mem + 1);
  CHECK(layer.counts().live_events == before.live_events + 1);
  (void)map(m, 4096, CL_MAP_READ);
  CHECK(layer.counts().active_maps == before.active_maps + 1);
  clReleaseMemObject(m);  // still mapped
  CHECK(recorded("released while mapped"));
  clReleaseEvent(e);
  CHECK(layer.counts().live_mem == before.live_mem);
  CHECK(layer.counts().live_events == before.live_events);
}

TEST_CASE("an armed fault fails the nth call of its name once, with its code", "[layer]") {
  FaultLayer& layer = FaultLayer::get();
  layer.reset();
  layer.arm("clCreateBuffer", 2, CL_MEM_OBJECT_ALLOCATION_FAILURE, CLZERO_FAULT_IMMEDIATE);
  cl_int rc[3] = {};
  cl_mem m[3] = {};
  for (int i = 0; i < 3; ++i) m[i] = clCreateBuffer(Env::get().context, CL_MEM_READ_WRITE, 64, nullptr, &rc[i]);
  CHECK(rc[0] == CL_SUCCESS);
  CHECK(rc[1] == CL_MEM_OBJECT_ALLOCATION_FAILURE);
  CHECK(m[1] == nullptr);
  CHECK(rc[2] == CL_SUCCESS);
  CHECK(std::string(layer.fired()) == "clCreateBuffer");
  for (cl_mem x : m)
    if (x != nullptr) clReleaseMemObject(x);
  layer.disarm();
}

TEST_CASE("a command that ends in error fails what waits on it, as the spec says", "[layer]") {
  FaultLayer& layer = FaultLayer::get();
  layer.reset();
  cl_mem m = make_buffer(4096);
  layer.arm("clEnqueueFillBuffer", 1, CL_OUT_OF_RESOURCES, CLZERO_FAULT_ASYNC);
  cl_event fill = nullptr;
  const cl_uchar zero = 0;
  CHECK(clEnqueueFillBuffer(Env::get().queue, m, &zero, 1, 0, 4096, 0, nullptr, &fill) == CL_SUCCESS);
  CHECK(clWaitForEvents(1, &fill) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  cl_int status = CL_COMPLETE;
  ok(clGetEventInfo(fill, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr), "clGetEventInfo");
  CHECK(status == CL_OUT_OF_RESOURCES);
  // A kernel that waits on it does not run (PoCL 3.1 would never complete it).
  Kernel k("fill_u32");
  k.arg(0, m);
  k.arg(1, cl_uint{1024});
  k.arg(2, cl_uint{1});
  const std::size_t n = 1024;
  cl_event kernel = nullptr;
  ok(clEnqueueNDRangeKernel(Env::get().queue, k.k, 1, nullptr, &n, nullptr, 1, &fill, &kernel), "kernel");
  CHECK(clWaitForEvents(1, &kernel) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  // A blocking map that waits on it returns the error instead of blocking.
  cl_int rc = CL_SUCCESS;
  void* p = clEnqueueMapBuffer(Env::get().queue, m, CL_TRUE, CL_MAP_READ, 0, 4096, 1, &fill, nullptr, &rc);
  CHECK(p == nullptr);
  CHECK(rc == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  clReleaseEvent(kernel);
  clReleaseEvent(fill);
  clReleaseMemObject(m);
  layer.disarm();
}

TEST_CASE("a shadow map hands out a new pointer for every map and carries the data both ways", "[layer]") {
  Shadows shadows;
  const std::size_t n = 1024;
  cl_mem m = make_buffer(n * 4);
  std::vector<void*> seen;
  for (std::uint32_t round = 1; round <= 3; ++round) {
    auto* w = static_cast<std::uint32_t*>(map(m, n * 4, CL_MAP_READ | CL_MAP_WRITE));
    seen.push_back(w);
    if (round > 1)
      for (std::uint32_t i = 0; i < n; ++i) REQUIRE(w[i] == value(i, round - 1));  // copied in
    for (std::uint32_t i = 0; i < n; ++i) w[i] = value(i, round);
    unmap(m, w);  // copied out
  }
  CHECK(seen[0] != seen[1]);
  CHECK(seen[1] != seen[2]);
  // What the device sees is what the host wrote through the shadow.
  std::vector<std::uint32_t> back(n);
  ok(clEnqueueReadBuffer(Env::get().queue, m, CL_TRUE, 0, n * 4, back.data(), 0, nullptr, nullptr), "read");
  for (std::uint32_t i = 0; i < n; ++i) REQUIRE(back[i] == value(i, 3));
  clReleaseMemObject(m);
}

TEST_CASE("a shadow map's pointer faults once unmapped, and before its map completed", "[layer]") {
  Shadows shadows;
  cl_mem m = make_buffer(4096);
  auto* p = static_cast<volatile std::uint32_t*>(map(m, 4096, CL_MAP_READ));
  CHECK(signal_of_child([&] { (void)p[0]; }) == 0);      // mapped: readable
  CHECK(signal_of_child([&] { p[0] = 1; }) == SIGSEGV);  // mapped for reading only
  unmap(m, const_cast<std::uint32_t*>(p));
  CHECK(signal_of_child([&] { (void)p[0]; }) == SIGSEGV);  // used after unmap

  Gate gate;  // a map whose command cannot complete yet
  cl_int rc = CL_SUCCESS;
  cl_event mapped = nullptr;
  auto* q = static_cast<volatile std::uint32_t*>(
      clEnqueueMapBuffer(Env::get().queue, m, CL_FALSE, CL_MAP_READ, 0, 4096, 1, &gate.event, &mapped, &rc));
  ok(rc, "clEnqueueMapBuffer");
  CHECK(signal_of_child([&] { (void)q[0]; }) == SIGSEGV);  // used before the map completed
  gate.open();
  ok(clWaitForEvents(1, &mapped), "clWaitForEvents");
  CHECK(signal_of_child([&] { (void)q[0]; }) == 0);
  unmap(m, const_cast<std::uint32_t*>(q));
  clReleaseEvent(mapped);
  clReleaseMemObject(m);
}

TEST_CASE("a shadow map leaves CL_MEM_USE_HOST_PTR buffers alone, whose pointer the spec fixes", "[layer]") {
  Shadows shadows;
  alignas(4096) static std::uint32_t host[1024];
  cl_int rc = CL_SUCCESS;
  cl_mem m = clCreateBuffer(Env::get().context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, sizeof host, host, &rc);
  ok(rc, "clCreateBuffer");
  void* p = map(m, sizeof host, CL_MAP_READ);
  CHECK(p == static_cast<void*>(host));
  unmap(m, p);
  clReleaseMemObject(m);
}

#if defined(CL_VERSION_2_0)
TEST_CASE("the layer records an SVM free while a kernel that uses the memory is pending", "[layer]") {
  Env& env = Env::get();
  CLZERO_NEEDS(env.caps.svm_fine_grain_buffer, "fine-grained buffer SVM");
  FaultLayer::get().reset();
  void* svm = clSVMAlloc(env.context, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, 4096, 0);
  REQUIRE(svm != nullptr);
  Kernel fill("fill_u32");
  ok(clSetKernelArgSVMPointer(fill.k, 0, svm), "clSetKernelArgSVMPointer");
  fill.arg(1, cl_uint{1024});
  fill.arg(2, cl_uint{1});
  Gate gate;
  const std::size_t n = 1024;
  cl_event done = nullptr;
  ok(clEnqueueNDRangeKernel(env.queue, fill.k, 1, nullptr, &n, nullptr, 1, &gate.event, &done), "kernel");
  clSVMFree(env.context, svm);  // the layer holds the free back until the kernel ran
  CHECK(recorded("freed while a kernel that uses it has not completed"));
  gate.open();
  ok(clWaitForEvents(1, &done), "clWaitForEvents");
  clReleaseEvent(done);
  clFinish(env.queue);
}
#endif
