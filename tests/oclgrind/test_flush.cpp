// SPDX-License-Identifier: Apache-2.0
// Submission (clFlush) of what clzero enqueues, under Oclgrind, which runs a
// queue's commands only once the queue is flushed or waited for, as the spec
// allows (OpenCL 3.0 section 5.13): a command that was never submitted
// never completes, however long the host polls.
#include <clzero/clzero.hpp>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

constexpr auto kBound = std::chrono::seconds(10);

// Polls `ready` until it is true or kBound has passed; whether it became true.
template <class Ready>
bool becomes_true(Ready&& ready) {
  const auto until = std::chrono::steady_clock::now() + kBound;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

bool finished(cl_event e) {
  cl_int status = CL_QUEUED;
  ok(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr), "clGetEventInfo");
  return status <= CL_COMPLETE;
}

// The engine enqueues its kernel, ends the access and polls host_ready()
// without flushing its queue itself: clzero's end submits what it enqueued.
template <class Policy>
void host_ready_becomes_true() {
  Env& env = Env::get();
  const cl_uint n = 1024;
  Kernel fill("fill_u32");
  MappedTensor<std::uint32_t, Policy> t(env.context, env.queue, {n}, Intent::output);
  for (cl_uint iter = 1; iter <= 3; ++iter) {
    {
      auto dev = t.device_access();
      dev.bind(fill.k, 0);
      fill.arg(1, n);
      fill.arg(2, iter);
      const std::size_t global = n;
      ok(clEnqueueNDRangeKernel(env.queue, fill.k, 1, nullptr, &global, nullptr, dev.wait_count(), dev.wait_list(),
                                dev.event_slot()),
         "clEnqueueNDRangeKernel");
    }
    INFO(Policy::name << ", iteration " << iter);
    REQUIRE(becomes_true([&] { return t.host_ready(); }));
    auto view = t.read_view();
    std::size_t wrong = 0;
    for (cl_uint i = 0; i < n; ++i) wrong += view[i] != value(i, iter);
    CHECK(wrong == 0);
  }
}

// The kernel runs on a second queue and waits on wait_list(), which names
// clzero's commands on the tensor's queue; the engine flushes only its own
// (second) queue. The kernel must still complete: clzero submitted its queue.
template <class Policy>
void consumer_on_another_queue_completes(Intent intent) {
  Env& env = Env::get();
  const cl_uint n = 1024;
  const std::size_t global = n;
  cl_command_queue second = env.make_queue(0);
  {
    Kernel fill("fill_u32"), copy("copy_u32");
    cl_int rc = CL_SUCCESS;
    cl_mem copied = clCreateBuffer(env.context, CL_MEM_READ_WRITE, n * 4, nullptr, &rc);
    ok(rc, "clCreateBuffer");
    MappedTensor<std::uint32_t, Policy> t(env.context, env.queue, {n}, intent);
    for (cl_uint iter = 1; iter <= 3; ++iter) {
      if (intent == Intent::input) {
        auto view = t.write_view();
        for (cl_uint i = 0; i < n; ++i) view[i] = value(i, iter);
      }
      cl_event done = nullptr;
      {
        auto dev = t.device_access();
        cl_kernel k = intent == Intent::input ? copy.k : fill.k;
        dev.bind(k, 0);
        if (intent == Intent::input) {
          copy.arg(1, copied);
          copy.arg(2, n);
        } else {
          fill.arg(1, n);
          fill.arg(2, iter);
        }
        ok(clEnqueueNDRangeKernel(second, k, 1, nullptr, &global, nullptr, dev.wait_count(), dev.wait_list(), &done),
           "clEnqueueNDRangeKernel");
        ok(clFlush(second), "clFlush");
        INFO(Policy::name << ", " << to_string(intent) << ", iteration " << iter
                          << ": the kernel on the second queue, waiting on wait_list()");
        const bool completed = becomes_true([&] { return finished(done); });
        dev.used_by(done);
        clReleaseEvent(done);
        REQUIRE(completed);
      }
      std::vector<std::uint32_t> seen(n);
      if (intent == Intent::input) {
        ok(clEnqueueReadBuffer(second, copied, CL_TRUE, 0, n * 4, seen.data(), 0, nullptr, nullptr),
           "clEnqueueReadBuffer");
      } else {
        auto view = t.read_view();
        for (cl_uint i = 0; i < n; ++i) seen[i] = view[i];
      }
      std::size_t wrong = 0;
      for (cl_uint i = 0; i < n; ++i) wrong += seen[i] != value(i, iter);
      CHECK(wrong == 0);
    }
    clReleaseMemObject(copied);
  }
  clReleaseCommandQueue(second);
}

}  // namespace

TEST_CASE("D-review-4: host_ready() becomes true after a device access without the engine flushing", "[flush]") {
  SECTION("Persistent") { host_ready_becomes_true<policy::Persistent>(); }
  SECTION("MapPerInference") { host_ready_becomes_true<policy::MapPerInference>(); }
  SECTION("CopyToPinned") { host_ready_becomes_true<policy::CopyToPinned>(); }
}

TEST_CASE("D-review-5, functional: a kernel on another queue that waits on wait_list() completes", "[flush]") {
  SECTION("Persistent, output") { consumer_on_another_queue_completes<policy::Persistent>(Intent::output); }
  SECTION("Persistent, input") { consumer_on_another_queue_completes<policy::Persistent>(Intent::input); }
  SECTION("MapPerInference, input") { consumer_on_another_queue_completes<policy::MapPerInference>(Intent::input); }
  SECTION("CopyToPinned, input") { consumer_on_another_queue_completes<policy::CopyToPinned>(Intent::input); }
}
