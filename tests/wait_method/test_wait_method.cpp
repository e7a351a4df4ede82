// SPDX-License-Identifier: Apache-2.0
// The host's wait (a blocking map at the view, poll first, or block in
// clWaitForEvents) is measured on the device the first time a tensor is made
// there, kept for the device, and used by every tensor on it;
// CLZERO_WAIT_MEASURE=0 leaves the device-type rule in place and
// CLZERO_HOST_WAIT names the method.
#include <clzero/clzero.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

#include "support/catch.hpp"
#include "support/freshness.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

TEST_CASE("The host's wait is measured on the device, once, and every tensor on the device uses it", "[wait_method]") {
  Env& env = Env::get();
  const detail::WaitMethod first = detail::wait_method(env.context, env.device);
  CHECK(first.measured);
  CHECK(first.poll_us > 0);
  CHECK(first.block_us > 0);
  CHECK(first.map_us > 0);
  // Blocking only where it won in every block; a map at the view where it
  // won in most blocks and over all rounds.
  CHECK(first.blocks == detail::kWaitBlocks);
  CHECK(first.block_wins >= 0);
  CHECK(first.block_wins <= first.blocks);
  CHECK(first.map_wins >= 0);
  CHECK(first.map_wins <= first.blocks);
  CHECK(first.poll == (first.block_wins < first.blocks));
  CHECK(first.map_at_view == (first.map_wins >= detail::kMapWinBlocks &&
                              first.map_us < detail::kMapMustWinBy * std::min(first.poll_us, first.block_us)));
  // Coarse-grained SVM, timed in the same rounds where the device offers it
  // (to a build of OpenCL 2.0 or later: below it there is no SVM to time).
#if defined(CL_VERSION_2_0)
  CHECK(first.svm_measured == env.caps.svm_coarse_grain_buffer);
#else
  CHECK_FALSE(first.svm_measured);
#endif
  if (first.svm_measured) {
    CHECK(first.svm_poll_us > 0);
    CHECK(first.svm_block_us > 0);
    CHECK(first.svm_map_us > 0);
    CHECK(first.svm_map_wins >= 0);
    CHECK(first.svm_map_wins <= first.blocks);
    CHECK(first.reason.find("coarse-grained SVM") != std::string::npos);
  }
  CHECK(first.svm_map_at_view ==
        (first.svm_measured && first.svm_map_wins >= detail::kMapWinBlocks &&
         first.svm_map_us < detail::kMapMustWinBy * std::min(first.svm_poll_us, first.svm_block_us)));
  CHECK(first.reason.find("measured") != std::string::npos);
  // The wait after idle: measured where views poll and the thread's CPU
  // time can be read; blocking needs a clear win, except on CPU devices,
  // which block unless polling wins clearly (test_wait_idle.cpp checks
  // both ways under simulated costs).
  long long cpu_ns = 0;
  CHECK(first.idle_measured == (first.poll && detail::thread_cpu_ns(cpu_ns)));
  if (first.idle_measured) {
    CHECK(first.idle_rounds == detail::kIdleRounds);
    CHECK(first.idle_poll_us > 0);
    CHECK(first.idle_block_us > 0);
    CHECK(first.idle_block_wins + first.idle_poll_wins <= first.idle_rounds);
    CHECK(first.reason.find("after a sleep of") != std::string::npos);
    const bool polling_wins = first.idle_poll_wins >= detail::kIdleWinRounds &&
                              first.idle_poll_us < detail::kBlockMustWinBy * first.idle_block_us;
    const bool blocking_wins = first.idle_block_wins >= detail::kIdleWinRounds &&
                               first.idle_block_us < detail::kBlockMustWinBy * first.idle_poll_us;
    CHECK(first.idle_block == (env.caps.is_cpu() ? !polling_wins : blocking_wins));
  } else {
    CHECK_FALSE(first.idle_block);
  }

  // Kept: a second measurement would not give the very same medians.
  const detail::WaitMethod again = detail::wait_method(env.context, env.device);
  CHECK(again.poll_us == first.poll_us);
  CHECK(again.block_us == first.block_us);

  // A tensor's queue context carries the device's choice.
  const detail::QueueContext q = detail::QueueContext::make(env.context, env.queue, "test");
  CHECK(q.host_wait.poll == first.poll);
  CHECK(q.map_at_view == first.map_at_view);
  CHECK(q.svm_map_at_view == first.svm_map_at_view);

  // And a tensor made now still reads fresh data with it.
  const std::size_t n = 4096;
  MappedTensor<std::uint32_t, policy::MapPerInference> t(env.context, env.queue, {n}, Intent::output);
  Kernel fill("fill_u32");
  for (cl_uint iter = 1; iter <= 5; ++iter) {
    fill_iteration(t, fill, n, iter);
    auto view = t.read_view();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += view[i] != value(static_cast<std::uint32_t>(i), iter) ? 1 : 0;
    REQUIRE(wrong == 0);
  }
}

TEST_CASE("Without the measurement, host views poll on devices with their own processors and block on CPUs",
          "[wait_rule]") {
  Env& env = Env::get();
  const char* env_value = std::getenv("CLZERO_WAIT_MEASURE");
  REQUIRE(env_value != nullptr);
  REQUIRE(std::string(env_value) == "0");
  const detail::WaitMethod w = detail::wait_method(env.context, env.device);
  cl_device_type type = 0;
  REQUIRE(clGetDeviceInfo(env.device, CL_DEVICE_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS);
  CHECK_FALSE(w.measured);
  CHECK(w.poll == ((type & CL_DEVICE_TYPE_CPU) == 0));
  CHECK(w.reason.find("CLZERO_WAIT_MEASURE=0") != std::string::npos);
}

TEST_CASE("CLZERO_HOST_WAIT names the host's wait without measuring", "[wait_environment]") {
  Env& env = Env::get();
  const char* env_value = std::getenv("CLZERO_HOST_WAIT");
  REQUIRE(env_value != nullptr);
  const std::string method = env_value;
  REQUIRE((method == "map" || method == "poll" || method == "wait"));
  const detail::WaitMethod w = detail::wait_method(env.context, env.device);
  CHECK_FALSE(w.measured);
  CHECK(w.map_at_view == (method == "map"));
  CHECK(w.svm_map_at_view == (method == "map"));
  CHECK(w.poll == (method != "wait"));
  CHECK(w.reason == "CLZERO_HOST_WAIT=" + method);
  // A lone tensor follows it; a TensorRing's slot never maps at the view.
  MappedTensor<std::uint32_t, policy::Persistent> lone(env.context, env.queue, {64}, Intent::output);
  TensorRing<std::uint32_t, policy::Persistent> ring(env.context, env.queue, {64}, Intent::output, 2);
  for (MappedTensor<std::uint32_t, policy::Persistent>* t : {&lone, &ring[0], &ring[1]}) {
    { auto dev = t->device_access(); }
    const bool deferred = detail::host_side_deferred(t->policy(), 0);
    CHECK(deferred == (method == "map" && t == &lone));
    auto view = t->read_view();
    CHECK(view[0] == 0u);  // nothing wrote it: still the zeros of the allocation
  }
}

// The poll budget (set_spin_wait): grown to the tensor's last wait,
// bounded, and zero when switched off or where the device's wait blocks.
TEST_CASE("The poll budget follows the tensor's last wait", "[wait_method]") {
  using std::chrono::microseconds;
  const long long base = detail::spin_wait_ns().load();
  struct Restore {
    long long ns;
    ~Restore() { set_spin_wait(std::chrono::nanoseconds(ns)); }
  } restore{base};
  set_spin_wait(microseconds(100));

  detail::HostWait blocks;  // the device's wait is clWaitForEvents
  blocks.last_ns = 4000000;
  CHECK(detail::spin_budget_ns(blocks) == 0);

  detail::HostWait polls;
  polls.poll = true;
  CHECK(detail::spin_budget_ns(polls) == 100000);  // nothing learnt yet
  polls.last_ns = 40000;
  CHECK(detail::spin_budget_ns(polls) == 100000);  // never below set_spin_wait's budget
  polls.last_ns = 4000000;
  CHECK(detail::spin_budget_ns(polls) == 5000000);  // the last wait and a quarter
  polls.last_ns = 1000000000;
  CHECK(detail::spin_budget_ns(polls) == detail::kMaxLearnedSpinNs);
  set_spin_wait(std::chrono::nanoseconds(0));
  CHECK(detail::spin_budget_ns(polls) == 0);
  set_spin_wait(microseconds(100));

  // A wait that succeeds is remembered: a kernel held back by a user event
  // that another thread sets 20 ms after it starts, so the wait outlasts the
  // 100 us budget, ends in clWaitForEvents and takes at least 2 ms even where
  // this thread is descheduled for a while before it looks.
  Env& env = Env::get();
  Kernel fill("fill_u32");
  const std::size_t n = 1 << 16;
  cl_int rc = CL_SUCCESS;
  cl_mem out = clCreateBuffer(env.context, CL_MEM_READ_WRITE, n * 4, nullptr, &rc);
  ok(rc, "clCreateBuffer");
  fill.arg(0, out);
  fill.arg(1, static_cast<cl_uint>(n));
  fill.arg(2, cl_uint{7});
  cl_event gate = clCreateUserEvent(env.context, &rc);
  ok(rc, "clCreateUserEvent");
  EventList done;
  cl_event e = nullptr;
  ok(clEnqueueNDRangeKernel(env.queue, fill.k, 1, nullptr, &n, nullptr, 1, &gate, &e), "clEnqueueNDRangeKernel");
  done.adopt(e);
  ok(clFlush(env.queue), "clFlush");
  std::thread opener([gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    clSetUserEventStatus(gate, CL_COMPLETE);
  });
  detail::HostWait learns;
  learns.poll = true;
  CHECK(detail::await(done, learns) == CL_SUCCESS);
  opener.join();
  CHECK(learns.last_ns >= 2000000);

  // A wait that is over before it starts costs no clock reads and leaves
  // the budget as the last wait that waited set it: a TensorRing's view
  // that finds its slot done this time waits as long as before the next
  // time, and must not then fall back to the base budget and block (on
  // PoCL 3.1 that cost rings of 4 to 64 MiB 5 to 15%).
  const long long learnt = learns.last_ns;
  CHECK(detail::await(done, learns) == CL_SUCCESS);
  CHECK(learns.last_ns == learnt);
  CHECK(detail::spin_budget_ns(learns) >= 2500000);
  clReleaseEvent(gate);
  clReleaseMemObject(out);
}
