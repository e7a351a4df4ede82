// SPDX-License-Identifier: Apache-2.0
// On a CPU device a host view that polls takes a core the kernel's
// work-items would run on, so a long wait blocks (detail/wait_method.hpp,
// WaitMethod::block_after_us): a view polls up to the device's long wait,
// and once a tensor's wait took longer, its next view blocks in
// clWaitForEvents at once; when its waits become short again, it polls
// again. Interleaved on PoCL 3.1 (2 vCPUs), fine-grained SVM polled took
// 1.19 times clWaitForEvents' time at 64 MiB, while clzero's views polled
// up to 10 ms (docs/logs/ci/22-long-wait-pocl31/).
//
// The waits are made here, not by this machine's speed: each inference's
// kernel waits, on the in-order queue, behind a marker gated by a user
// event that a thread completes kLongGate later (three times the longest
// long wait, 10 ms). That a tensor polls again once its waits are short is
// checked on detail::await itself, with user events and a bound the test
// sets: on PoCL 3.1 a kernel released by a user event, even at once, took
// over 600 us now and then, and a kernel of its own often completed before
// the view's first look, so neither makes a short wait that is sure to be
// short and not yet over. This executable defines clWaitForEvents and clGetEventInfo
// itself (ELF interposition: the calls the headers compile into it land
// here) to count what each view does, and passes them on to the loader's.
#include <clzero/clzero.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "support/catch.hpp"
#include "support/freshness.hpp"
#include "support/gated_wait.hpp"
#include "support/interpose.hpp"
#include "support/test_env.hpp"

namespace {

clzero_test::WaitCounters counted;  // clWaitForEvents calls and status queries
constexpr auto kLongGate = std::chrono::milliseconds(30);
constexpr int kInferences = 6;

}  // namespace

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint count, const cl_event* events) {
  static const auto real = CLZERO_TEST_NEXT(clWaitForEvents);
  ++counted.waits;
  return real(count, events);
}

CL_API_ENTRY cl_int CL_API_CALL clGetEventInfo(cl_event event, cl_event_info name, size_t size, void* value,
                                               size_t* size_ret) {
  static const auto real = CLZERO_TEST_NEXT(clGetEventInfo);
  if (name == CL_EVENT_COMMAND_EXECUTION_STATUS) ++counted.looks;
  return real(event, name, size, value, size_ret);
}

}  // extern "C"

using namespace clzero;
using namespace clzero_test;

namespace {

/// Long waits, then short ones, through `t`.
template <class Tensor>
void long_then_short(Tensor& t, const char* name) {
  const std::size_t n = t.size();
  Kernel fill("fill_u32");
  std::size_t wrong = 0;
  std::uint32_t iter = 1;
  std::string seen;
  // The first long wait polls up to the long wait, then blocks; every later
  // one blocks at once, after one look at each event.
  for (int i = 0; i < kInferences; ++i) {
    const Opened o = gated_inference(t, fill, n, iter++, kLongGate, wrong, counted);
    seen += " long: " + std::to_string(o.waits) + " waits, " + std::to_string(o.looks) + " looks;";
    INFO(name << ":" << seen);
    CHECK(o.waits >= 1);
    if (i > 0) CHECK(o.looks <= 4);
  }

  // Short kernels again, read fresh whichever way the views wait.
  for (int i = 0; i < kInferences; ++i)
    gated_inference(t, fill, n, iter++, std::chrono::microseconds(0), wrong, counted);
  CHECK(wrong == 0);
}

/// Whether the device is a CPU device whose views poll, with its wait in
/// `w`; otherwise says why the test does not run.
bool polling_cpu_device(detail::WaitMethod& w) {
  Env& env = Env::get();
  if (!env.caps.is_cpu()) {
    CLZERO_NOT_RUN("not run: not a CPU device (the long wait bounds polling on CPU devices only)");
    return false;
  }
  w = detail::wait_method(env.context, env.device);
  if (!w.poll) {
    CLZERO_NOT_RUN("not run: the device's views do not poll (" << w.reason << ")");
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("On a CPU device a view blocks at once after a long wait", "[wait_long]") {
  Env& env = Env::get();
  detail::WaitMethod w;
  if (!polling_cpu_device(w)) return;
  INFO("the device's wait: " << w.reason);
  const std::size_t n = 4096;
  // The long gate is three times the longest long wait.
  REQUIRE(w.block_after_us >= detail::kMinLongWaitUs);
  REQUIRE(w.block_after_us <= detail::kMaxLongWaitUs);
  REQUIRE(std::chrono::microseconds(kLongGate).count() >= 3 * detail::kMaxLongWaitUs);

  // Where buffer views map at the view, their blocking map is their wait.
  if (!w.map_at_view) {
    MappedTensor<std::uint32_t, policy::Persistent> persistent(env.context, env.queue, {n}, Intent::output);
    long_then_short(persistent, "Persistent");
    MappedTensor<std::uint32_t, policy::MapPerInference> per_inference(env.context, env.queue, {n}, Intent::output);
    long_then_short(per_inference, "MapPerInference");
  }
  if (w.map_at_view && !env.caps.svm_fine_grain_buffer)
    CLZERO_NOT_RUN("not run: buffer views map at the view and the device has no fine-grained SVM");
#if defined(CL_VERSION_2_0)
  if (env.caps.svm_fine_grain_buffer) {
    MappedTensor<std::uint32_t, policy::Svm> fine(env.context, env.queue, {n}, Intent::output,
                                                  policy::Svm::Options{policy::Svm::Grain::fine});
    long_then_short(fine, "Svm (fine)");
  }
#endif
}

TEST_CASE("A wait past the long-wait bound blocks at once next time, and polls again after a short one",
          "[wait_long_unit]") {
  detail::HostWait w;
  w.poll = true;
  // A bound far above the short gate: the gate's thread, woken while this
  // one polls, may get a core late (with two busy processes on one core,
  // 20 ms were once not enough).
  w.block_after_ns = 50'000'000;  // 50 ms
  const auto longer = std::chrono::milliseconds(150), shorter = std::chrono::milliseconds(1);

  Opened o = await_gated(w, longer, counted);  // nothing learned yet: polls up to 50 ms, then blocks
  CHECK(o.looks > 1);
  CHECK(o.waits == 1);
  CHECK(w.last_ns >= 100'000'000);
  o = await_gated(w, longer, counted);  // the last wait was long: blocks after one look
  CHECK(o.looks == 1);
  CHECK(o.waits == 1);
  o = await_gated(w, shorter, counted);  // still blocks at once, and learns the short wait
  CHECK(o.looks == 1);
  CHECK(o.waits == 1);
  CHECK(w.last_ns < 50'000'000);
  o = await_gated(w, shorter, counted);  // polls again
  CHECK(o.looks > 1);
  CHECK(o.waits == 0);

  // set_spin_wait(0) never polls, bound or not.
  set_spin_wait(std::chrono::nanoseconds(0));
  o = await_gated(w, shorter, counted);
  set_spin_wait(std::chrono::microseconds(100));
  CHECK(o.looks == 0);
  CHECK(o.waits == 1);
}

// A TensorRing's slots keep polling through waits longer than the long
// wait: when a slot completes, the device is busy with the next one's
// kernel, and a thread woken from clWaitForEvents would wait for a core
// behind its work-items (mapped_tensor.hpp). A gate of twice the long wait
// makes every wait long; from each slot's second wait on, a view must poll
// (look more than once) rather than block at once. It polls as long as the
// slot's last wait took plus a quarter, and may still block after that where
// the gate's thread wakes late.
TEST_CASE("A TensorRing's slots poll through long waits on a CPU device", "[wait_long_ring]") {
  Env& env = Env::get();
  detail::WaitMethod w;  // a slot's map always follows its kernels: no map at the view
  if (!polling_cpu_device(w)) return;
  INFO("the device's wait: " << w.reason);
  const std::size_t n = 4096;
  TensorRing<std::uint32_t, policy::Persistent> ring(env.context, env.queue, {n}, Intent::output, 2);
  const auto gate = std::chrono::microseconds(static_cast<long long>(2 * w.block_after_us));
  Kernel fill("fill_u32");
  std::size_t wrong = 0;
  std::string seen;
  for (std::uint32_t i = 0; i < 8; ++i) {
    const Opened o = gated_inference(ring[i], fill, n, i + 1, gate, wrong, counted);
    seen += " slot " + std::to_string(i % 2) + ": " + std::to_string(o.waits) + " waits, " + std::to_string(o.looks) +
            " looks;";
    INFO("gate " << gate.count() << " us:" << seen);
    if (i >= 2) CHECK(o.looks > 1);  // each slot's first wait was long
  }
  CHECK(wrong == 0);
}
