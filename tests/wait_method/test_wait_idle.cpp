// SPDX-License-Identifier: Apache-2.0
// A thread that slept before its inference can find blocking faster where
// polling wins back to back: paced by a sleep of 1 ms before each
// inference on PoCL 3.1 (2 vCPUs), the fastest legal sequence blocked (25
// us at 4 KiB, every polled one 45 us or more) while clzero's views, whose
// wait was measured back to back, polled (Auto 1.89 times the fastest at 4
// KiB, 1.45 at 256 KiB; docs/benchmarks.md, "Paced"). So the probe also
// times both waits right after a sleep (detail/wait_method.hpp,
// WaitMethod::idle_block), and a view whose thread was off its core for
// kIdleOffCoreNs or more since its last wait blocks at once where that
// measurement says so (events.hpp, thread_was_idle).
//
// Three things are checked here, none by this machine's speed:
//  - the rule itself, on detail::await: after a sleep, or a block in another
//    call, the wait blocks at once (clWaitForEvents before any status query,
//    and an event that ended in error still reported); back to back, after
//    a spin of the thread, on a thread's first wait, or without idle_block,
//    it polls;
//  - the views: with the choice named (CLZERO_IDLE_WAIT, CLZERO_HOST_WAIT),
//    a tensor's view after a sleep blocks at once, one back to back or after
//    a spin polls, a TensorRing's slot polls after a sleep too, and every
//    element of every inference is fresh;
//  - the probe's decision, with simulated costs: polled waits made slow
//    after the measurement's sleeps must make it choose blocking after
//    idle, and every clWaitForEvents made slow must make it keep polling
//    after idle;
//  - what each tensor learns from its own waits after idle, with simulated
//    costs after the test's sleeps: its first waits after idle alternate,
//    then it keeps the faster way whichever it started with, takes the
//    other way once in kIdleRecheckEvery, counts no wait that failed, and
//    learns nothing where the choice was named; the views of a measured
//    device learn it too, a TensorRing's slots keep polling.
// Each wait is gated (support/gated_wait.hpp) so that its first look finds
// it not over. A wait expected to poll is judged only where the thread was
// surely on its core: at the wait's first OpenCL call, just after the
// library asked, the thread had been off its core since its last wait for
// under half the bound (time off the core only grows, so the library saw
// less); a loaded machine preempts a thread for longer now and then, and
// the library rightly counts that as idle. This executable defines clWaitForEvents, clGetEventInfo and
// nanosleep itself (ELF interposition, support/interpose.hpp) to count what
// each wait does and to add the simulated costs.
#include <clzero/clzero.hpp>

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/freshness.hpp"
#include "support/gated_wait.hpp"
#include "support/interpose.hpp"
#include "support/test_env.hpp"

namespace {

clzero_test::WaitCounters counted;  // clWaitForEvents calls and status queries

// The simulated costs of a probe (measure_idle): "poll" makes the first
// status query after each of the probe's sleeps after idle take kCost longer; "wait"
// makes every clWaitForEvents of the probe take kCost longer. Spun, so that
// the thread stays on its core and the device finishes meanwhile.
constexpr auto kCost = std::chrono::milliseconds(10);
enum class Cost { none, poll_after_sleep, wait, fail_after_sleep };
std::atomic<Cost> cost{Cost::none};
thread_local bool measuring = false;   // this thread runs the probe
thread_local bool just_slept = false;  // it slept kIdleGap and has not looked or waited since
// The views' own waits after idle (learning), with simulated costs: the test
// sets just_slept after each of its sleeps; then the first status query
// after it takes learn_poll_cost longer, or the first clWaitForEvents after
// it learn_wait_cost longer.
constexpr auto kLearnCost = std::chrono::milliseconds(20);
thread_local bool learning = false;
thread_local std::chrono::microseconds learn_poll_cost{0};
thread_local std::chrono::microseconds learn_wait_cost{0};
std::atomic<int> slowed{0};

// The thread's time off its core since its last wait ended as the library
// reckons it from detail::thread_wait_end() (the wall time since that end
// less the CPU time since the sample it holds, taken then or up to
// kIdleCpuSampleEveryNs before), read at the first status query or
// clWaitForEvents after arm_first_call(): 0 where it had not waited yet, -1
// where nothing was read.
// clWaitForEvents answers CL_SUCCESS for an event that ended in error, as
// NVIDIA's driver 580 does for a user event set to an error (tests/from_docs).
thread_local bool wait_hides_errors = false;

thread_local bool armed = false;
thread_local long long off_core_at_first_call = -1;
thread_local bool first_call_waited = false;  // the first call was clWaitForEvents, not a look

void arm_first_call() {
  armed = true;
  off_core_at_first_call = -1;
}

void first_call(bool waits) {
  if (!armed) return;
  armed = false;
  first_call_waited = waits;
  const clzero::detail::ThreadWaitEnd& end = clzero::detail::thread_wait_end();
  long long cpu = 0;
  if (end.wall_ns < 0)
    off_core_at_first_call = 0;
  else if (clzero::detail::thread_cpu_ns(cpu))
    off_core_at_first_call = (clzero::detail::steady_ns() - end.wall_ns) - (cpu - end.cpu_ns);
}

/// Whether the library surely found the thread busy at the last armed wait.
bool surely_busy() {
  return off_core_at_first_call >= 0 && off_core_at_first_call < clzero::detail::kIdleOffCoreNs / 2;
}

}  // namespace

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint count, const cl_event* events) {
  static const auto real = CLZERO_TEST_NEXT(clWaitForEvents);
  first_call(true);
  ++counted.waits;
  cl_int rc = real(count, events);
  if (wait_hides_errors && rc == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) rc = CL_SUCCESS;
  if (measuring && cost.load() == Cost::wait) {
    clzero_test::spin_for(kCost);
    ++slowed;
  }
  if (learning && just_slept && learn_wait_cost.count() > 0) {
    clzero_test::spin_for(learn_wait_cost);
    ++slowed;
  }
  just_slept = false;
  return rc;
}

CL_API_ENTRY cl_int CL_API_CALL clGetEventInfo(cl_event event, cl_event_info name, size_t size, void* value,
                                               size_t* size_ret) {
  static const auto real = CLZERO_TEST_NEXT(clGetEventInfo);
  if (name != CL_EVENT_COMMAND_EXECUTION_STATUS) return real(event, name, size, value, size_ret);
  first_call(false);
  ++counted.looks;
  const cl_int rc = real(event, name, size, value, size_ret);
  if (measuring && just_slept && cost.load() == Cost::poll_after_sleep) {
    clzero_test::spin_for(kCost);
    ++slowed;
  }
  if (learning && just_slept && learn_poll_cost.count() > 0) {
    clzero_test::spin_for(learn_poll_cost);
    ++slowed;
  }
  just_slept = false;
  return rc;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                                                       const size_t* offset, const size_t* global, const size_t* local,
                                                       cl_uint waits, const cl_event* wait_list, cl_event* event) {
  static const auto real = CLZERO_TEST_NEXT(clEnqueueNDRangeKernel);
  if (measuring && just_slept && cost.load() == Cost::fail_after_sleep) {
    ++slowed;
    return CL_OUT_OF_RESOURCES;
  }
  return real(queue, kernel, dims, offset, global, local, waits, wait_list, event);
}

int nanosleep(const struct timespec* request, struct timespec* remaining) {
  static const auto real = CLZERO_TEST_NEXT(nanosleep);
  const int rc = real(request, remaining);
  // Only the probe's sleeps before its waits after idle count.
  constexpr auto gap_ns = std::chrono::nanoseconds(clzero::detail::kIdleGap).count();
  if (measuring && request != nullptr && request->tv_sec == gap_ns / 1000000000 &&
      request->tv_nsec == gap_ns % 1000000000)
    just_slept = true;
  return rc;
}

}  // extern "C"

using namespace clzero;
using namespace clzero_test;

namespace {

constexpr auto kGate = std::chrono::microseconds(3000);  // a wait's length after the first look
constexpr auto kIdle = std::chrono::milliseconds(3);     // a sleep or a spin of the thread

/// A list holding one user event that ended in error.
EventList failed_event() { return settled_event(-1); }

/// await_gated, armed: what the wait did, and whether the library surely
/// found the thread busy (`busy`).
Opened armed_await(const detail::HostWait& w, bool& busy) {
  arm_first_call();
  const Opened o = await_gated(w, kGate, counted);
  busy = surely_busy();
  return o;
}

}  // namespace

TEST_CASE("After the thread was off its core, a wait blocks at once where the device's idle wait says so",
          "[wait_idle_unit]") {
  long long probe = 0;
  if (!detail::thread_cpu_ns(probe)) {
    CLZERO_NOT_RUN("not run: the platform has no CLOCK_THREAD_CPUTIME_ID");
    return;
  }
  detail::HostWait w;
  w.poll = true;
  w.idle_block = true;
  detail::thread_wait_end() = detail::ThreadWaitEnd{};  // this thread has not waited yet
  std::string seen;
  const auto note = [&seen](const char* what, const Opened& o, bool busy) {
    seen += std::string("; ") + what + ": " + std::to_string(o.waits) + " waits, " + std::to_string(o.looks) +
            " looks" + (busy ? "" : " (not surely busy)");
  };
  int judged_polls = 0;
  bool busy = false;

  Opened o = armed_await(w, busy);  // the thread's first wait: polls
  note("first wait", o, busy);
  INFO(seen);
  CHECK(busy);
  CHECK(o.looks > 1);

  // Back to back, and after a spin on the thread's core: polls.
  for (int i = 0; i < 6; ++i) {
    o = armed_await(w, busy);
    note("back to back", o, busy);
    INFO(seen);
    if (busy) CHECK(o.looks > 1);
    judged_polls += busy ? 1 : 0;
    spin_for(kIdle);
    o = armed_await(w, busy);
    note("after a spin", o, busy);
    INFO(seen);
    if (busy) CHECK(o.looks > 1);
    judged_polls += busy ? 1 : 0;
  }

  std::this_thread::sleep_for(kIdle);
  o = armed_await(w, busy);  // after a sleep: clWaitForEvents first, one look after it
  note("after a sleep", o, busy);
  INFO(seen);
  CHECK(first_call_waited);
  CHECK(o.looks <= 1);
  CHECK(o.waits == 1);

  // Blocked in another call (here, joining a thread) counts as a sleep.
  std::thread([] { std::this_thread::sleep_for(kIdle); }).join();
  o = armed_await(w, busy);
  note("after blocking in another call", o, busy);
  INFO(seen);
  CHECK(first_call_waited);
  CHECK(o.looks <= 1);
  CHECK(o.waits == 1);

  // Where the device's idle wait is polling, a sleep changes nothing.
  w.idle_block = false;
  std::this_thread::sleep_for(kIdle);
  o = armed_await(w, busy);
  note("after a sleep, no idle_block", o, busy);
  INFO(seen);
  CHECK(o.looks > 1);

  // On a CPU device (a long-wait bound), the wait that blocked at once is
  // timed for that bound, as every blocked wait there is.
  w.idle_block = true;
  w.block_after_ns = 50'000'000;  // 50 ms, far above the gate
  w.last_ns = 0;
  std::this_thread::sleep_for(kIdle);
  o = armed_await(w, busy);
  note("after a sleep, long-wait bound", o, busy);
  INFO(seen << "; last wait " << w.last_ns << " ns");
  CHECK(first_call_waited);
  CHECK(o.looks <= 1);
  CHECK(o.waits == 1);
  CHECK(w.last_ns >= std::chrono::nanoseconds(kGate).count());

  // An event that ended in error is reported after a sleep as a polled wait
  // reports it, even where clWaitForEvents answers CL_SUCCESS for it; with
  // the long-wait bound and without it (a device with its own processors).
  for (const long long bound : {w.block_after_ns, 0LL}) {
    w.block_after_ns = bound;
    INFO("long-wait bound " << bound << " ns");
    wait_hides_errors = true;
    EventList events = failed_event();
    std::this_thread::sleep_for(kIdle);
    arm_first_call();
    CHECK(detail::await(events, w) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    CHECK(first_call_waited);
    wait_hides_errors = false;
  }
  if (judged_polls == 0) CLZERO_NOT_RUN("not run: the machine preempted every busy wait (" << seen << ")");
}

namespace {

/// Inferences through `t` with the thread asleep, spinning or neither
/// before each view; every element of every inference checked. Adds the
/// polls judged (the thread surely busy) to `judged_polls`.
template <class Tensor>
void sleep_spin_back_to_back(Tensor& t, const char* name, bool idle_blocks, int& judged_polls) {
  const std::size_t n = t.size();
  Kernel fill("fill_u32");
  std::size_t wrong = 0;
  std::uint32_t iter = 1;
  std::string seen = name;
  const auto note = [&seen](const char* what, const Opened& o, bool busy) {
    seen += std::string("; ") + what + ": " + std::to_string(o.waits) + " waits, " + std::to_string(o.looks) +
            " looks" + (busy ? "" : " (not surely busy)");
  };
  // Each hook runs between the kernel's enqueue and the view, then arms the
  // count of the view's first call.
  const auto back_to_back = [] { arm_first_call(); };
  const auto sleep = [] {
    std::this_thread::sleep_for(kIdle);
    arm_first_call();
  };
  const auto spin = [] {
    spin_for(kIdle);
    arm_first_call();
  };
  for (int i = 0; i < 4; ++i) {
    gated_inference(t, fill, n, iter++, kGate, wrong, counted);  // a wait to count from
    Opened o = gated_inference(t, fill, n, iter++, kGate, wrong, counted, back_to_back);
    bool busy = surely_busy();
    note("back to back", o, busy);
    INFO(seen);
    if (busy) CHECK(o.looks > 1);
    judged_polls += busy ? 1 : 0;

    // Asleep between the kernel's enqueue and the view (an engine waiting
    // for its input sleeps before the enqueue; the thread's last wait is
    // the previous view's either way).
    o = gated_inference(t, fill, n, iter++, kGate, wrong, counted, sleep);
    note("after a sleep", o, surely_busy());
    INFO(seen);
    if (idle_blocks) {
      CHECK(first_call_waited);
      CHECK(o.waits >= 1);
      CHECK(o.looks <= 4);  // status queries after the wait, none of them a poll
    } else {
      CHECK(o.looks > 1);
    }

    o = gated_inference(t, fill, n, iter++, kGate, wrong, counted, spin);
    busy = surely_busy();
    note("after a spin", o, busy);
    INFO(seen);
    if (busy) CHECK(o.looks > 1);
    judged_polls += busy ? 1 : 0;
  }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("A view whose thread slept blocks at once where the device's idle wait says so; back to back it polls",
          "[wait_idle_view]") {
  Env& env = Env::get();
  long long probe = 0;
  if (!detail::thread_cpu_ns(probe)) {
    CLZERO_NOT_RUN("not run: the platform has no CLOCK_THREAD_CPUTIME_ID");
    return;
  }
  const char* idle = std::getenv("CLZERO_IDLE_WAIT");
  const char* host = std::getenv("CLZERO_HOST_WAIT");
  REQUIRE(idle != nullptr);
  REQUIRE(host != nullptr);
  REQUIRE(std::string(host) == "poll");
  const bool idle_blocks = std::string(idle) == "wait";
  const detail::WaitMethod w = detail::wait_method(env.context, env.device);
  INFO("the device's wait: " << w.reason);
  REQUIRE(w.poll);
  REQUIRE_FALSE(w.map_at_view);
  REQUIRE(w.idle_block == idle_blocks);
  REQUIRE(w.reason.find(std::string("CLZERO_IDLE_WAIT=") + idle) != std::string::npos);
  const std::size_t n = 4096;
  int judged_polls = 0;

  MappedTensor<std::uint32_t, policy::Persistent> persistent(env.context, env.queue, {n}, Intent::output);
  sleep_spin_back_to_back(persistent, "Persistent", idle_blocks, judged_polls);
  MappedTensor<std::uint32_t, policy::MapPerInference> per_inference(env.context, env.queue, {n}, Intent::output);
  sleep_spin_back_to_back(per_inference, "MapPerInference", idle_blocks, judged_polls);
#if defined(CL_VERSION_2_0)
  if (env.caps.svm_fine_grain_buffer) {
    MappedTensor<std::uint32_t, policy::Svm> fine(env.context, env.queue, {n}, Intent::output,
                                                  policy::Svm::Options{policy::Svm::Grain::fine});
    sleep_spin_back_to_back(fine, "Svm (fine)", idle_blocks, judged_polls);
  }
#endif

  // A TensorRing's slots keep polling after a sleep: a slot's kernel runs
  // while the host does other work.
  TensorRing<std::uint32_t, policy::Persistent> ring(env.context, env.queue, {n}, Intent::output, 2);
  Kernel fill("fill_u32");
  std::size_t wrong = 0;
  std::string seen;
  for (std::uint32_t i = 0; i < 6; ++i) {
    const Opened o =
        gated_inference(ring[i], fill, n, i + 1, kGate, wrong, counted, [] { std::this_thread::sleep_for(kIdle); });
    seen += " slot " + std::to_string(i % 2) + ": " + std::to_string(o.waits) + " waits, " + std::to_string(o.looks) +
            " looks;";
    INFO("ring after sleeps:" << seen);
    CHECK(o.looks > 1);
  }
  CHECK(wrong == 0);
  if (judged_polls == 0) CLZERO_NOT_RUN("not run: the machine preempted every busy view");
}

namespace {

/// The probe with the simulated cost `c`; how many calls it slowed.
detail::WaitMethod measure_with(Env& env, Cost c, int& slowed_calls) {
  slowed = 0;
  cost = c;
  measuring = true;
  const detail::WaitMethod w = detail::measure_wait(env.context, env.device);
  measuring = false;
  just_slept = false;
  cost = Cost::none;
  slowed_calls = slowed.load();
  return w;
}

}  // namespace

TEST_CASE("The wait after idle is measured after sleeps: slow polls there choose blocking, slow blocking keeps polling",
          "[wait_idle_probe]") {
  Env& env = Env::get();
  long long probe = 0;
  if (!detail::thread_cpu_ns(probe)) {
    CLZERO_NOT_RUN("not run: the platform has no CLOCK_THREAD_CPUTIME_ID");
    return;
  }
  int slowed_calls = 0;
  // Polled waits slowed only after the probe's sleeps before its idle
  // rounds: the busy measurement still polls (unless the machine's own
  // times make it block, which leaves nothing after idle to decide).
  const detail::WaitMethod slow_poll = measure_with(env, Cost::poll_after_sleep, slowed_calls);
  INFO("slow polls after sleeps: " << slow_poll.reason << "; " << slowed_calls << " calls slowed");
  if (!slow_poll.poll) {
    CLZERO_NOT_RUN("not run: the quiet measurement blocks on this machine (" << slow_poll.reason << ")");
    return;
  }
  REQUIRE(slow_poll.idle_measured);
  CHECK(slow_poll.idle_rounds == detail::kIdleRounds);
  CHECK(slowed_calls == detail::kIdleRounds);  // one poll after each pair's sleep before it
  CHECK(slow_poll.idle_block_wins >= detail::kIdleWinRounds);
  CHECK(slow_poll.idle_block);

  // Every clWaitForEvents slowed: the busy measurement polls, and so must
  // the wait after idle, on CPU devices too.
  const detail::WaitMethod slow_wait = measure_with(env, Cost::wait, slowed_calls);
  INFO("slow clWaitForEvents: " << slow_wait.reason << "; " << slowed_calls << " calls slowed");
  REQUIRE(slow_wait.poll);
  REQUIRE(slow_wait.idle_measured);
  CHECK(slow_wait.idle_poll_wins >= detail::kIdleWinRounds);
  CHECK_FALSE(slow_wait.idle_block);

  // A probe kernel that fails after a sleep leaves the wait after idle
  // unmeasured and the busy measurement as it was: still polling, still
  // measured, not the device-type rule.
  const detail::WaitMethod failing = measure_with(env, Cost::fail_after_sleep, slowed_calls);
  INFO("probe kernel failing after sleeps: " << failing.reason << "; " << slowed_calls << " calls failed");
  REQUIRE(failing.measured);
  if (!failing.poll) {
    CLZERO_NOT_RUN("not run: the quiet measurement blocks on this machine (" << failing.reason << ")");
    return;
  }
  CHECK(slowed_calls == 1);
  CHECK_FALSE(failing.idle_measured);
  CHECK_FALSE(failing.idle_block);
  CHECK(failing.reason.find("the wait after idle not measured") != std::string::npos);
}

namespace {

/// The simulated costs after the test's sleeps: of the first status query
/// (a polled wait's first look) and of the first clWaitForEvents.
struct LearnCosts {
  std::chrono::microseconds poll{0};
  std::chrono::microseconds wait{0};
};
const LearnCosts kSlowPolls{kLearnCost, {}};
const LearnCosts kSlowWaits{{}, kLearnCost};

void arm_learning(const LearnCosts& c) {
  learn_poll_cost = c.poll;
  learn_wait_cost = c.wait;
  learning = true;
  just_slept = true;
  arm_first_call();
}

void disarm_learning() {
  learning = false;
  just_slept = false;
  learn_poll_cost = learn_wait_cost = std::chrono::microseconds{0};
}

/// Sleeps kIdle, then waits through detail::await for a gated event with
/// the costs `c` after the sleep; whether the wait's first call was
/// clWaitForEvents (it blocked at once).
bool idle_await(const detail::HostWait& w, const LearnCosts& c) {
  std::this_thread::sleep_for(kIdle);
  arm_learning(c);
  await_gated(w, kGate, counted);
  disarm_learning();
  return first_call_waited;
}

std::string ways(const std::vector<bool>& blocked) {
  std::string s;
  for (bool b : blocked) s += b ? 'W' : 'P';
  return s;
}

/// A tensor's wait that polls and learns after idle, starting with
/// `start_blocking`, after one wait to count from.
detail::HostWait learning_wait(bool start_blocking) {
  detail::HostWait w;
  w.poll = true;
  w.idle_block = start_blocking;
  w.idle_learn = true;
  detail::thread_wait_end() = detail::ThreadWaitEnd{};
  await_gated(w, kGate, counted);
  return w;
}

}  // namespace

TEST_CASE("A tensor's waits after idle are timed both ways and the faster is kept", "[wait_idle_learn]") {
  long long probe = 0;
  if (!detail::thread_cpu_ns(probe)) {
    CLZERO_NOT_RUN("not run: the platform has no CLOCK_THREAD_CPUTIME_ID");
    return;
  }
  constexpr unsigned first = 2 * detail::kIdleSamples;  // the waits that fill both records
  // Each wait after a sleep: W blocked at once, P polled (its first call a status query).
  std::vector<bool> blocked;

  SECTION("polls slow after sleeps: a tensor that started polling learns to block") {
    const detail::HostWait w = learning_wait(false);
    for (unsigned i = 0; i < first + 20; ++i) blocked.push_back(idle_await(w, kSlowPolls));
    INFO("ways after sleeps: " << ways(blocked));
    // The first waits alternate, from the choice the tensor started with.
    for (unsigned i = 0; i < first; ++i) CHECK(blocked[i] == (i % 2 == 1));
    CHECK(w.idle_block);
    for (unsigned i = first; i < blocked.size(); ++i) CHECK(blocked[i]);
  }

  SECTION("clWaitForEvents slow after sleeps: a tensor that started blocking learns to poll, and rechecks rarely") {
    const detail::HostWait w = learning_wait(true);
    const unsigned total = first + 2 * detail::kIdleRecheckEvery;
    for (unsigned i = 0; i < total; ++i) blocked.push_back(idle_await(w, kSlowWaits));
    INFO("ways after sleeps: " << ways(blocked));
    for (unsigned i = 0; i < first; ++i) CHECK(blocked[i] == (i % 2 == 0));
    CHECK_FALSE(w.idle_block);
    // After that, the way not chosen once in kIdleRecheckEvery waits after idle.
    unsigned rechecks = 0;
    for (unsigned i = first; i < total; ++i) rechecks += blocked[i] ? 1 : 0;
    CHECK(rechecks == 2);
    CHECK(blocked[first + detail::kIdleRecheckEvery - 1]);
    CHECK(blocked[total - 1]);
  }

  SECTION("a tensor that started with the faster way keeps it, each way") {
    for (const bool start_blocking : {false, true}) {
      const detail::HostWait w = learning_wait(start_blocking);
      blocked.clear();
      for (unsigned i = 0; i < first + 8; ++i)
        blocked.push_back(idle_await(w, start_blocking ? kSlowPolls : kSlowWaits));
      INFO("started " << (start_blocking ? "blocking" : "polling") << "; ways after sleeps: " << ways(blocked));
      CHECK(w.idle_block == start_blocking);
      for (unsigned i = first; i < blocked.size(); ++i) CHECK(blocked[i] == start_blocking);
    }
  }

  SECTION("the other way must be clearly faster: a tensor keeps its way where the two differ by under a tenth") {
    // Both ways slowed: a blocked wait takes the gate and then its cost, a
    // polled one its cost (the gate ends meanwhile), set to 0.97 times the
    // blocked one's, above kIdleSwitchBelow.
    const auto blocked_us = std::chrono::duration_cast<std::chrono::microseconds>(kGate + kLearnCost);
    const LearnCosts close{blocked_us * 97 / 100, kLearnCost};
    const detail::HostWait w = learning_wait(true);
    for (unsigned i = 0; i < first + 4; ++i) blocked.push_back(idle_await(w, close));
    INFO("ways after sleeps: " << ways(blocked));
    CHECK(w.idle_block);
    for (unsigned i = first; i < blocked.size(); ++i) CHECK(blocked[i]);
  }

  SECTION("without idle_learn (CLZERO_IDLE_WAIT) the choice stays however slow it is") {
    detail::HostWait w = learning_wait(true);
    w.idle_learn = false;
    for (unsigned i = 0; i < first + 2; ++i) blocked.push_back(idle_await(w, kSlowWaits));
    INFO("ways after sleeps: " << ways(blocked));
    for (bool b : blocked) CHECK(b);
    CHECK(w.idle_block);
    CHECK(w.idle.count[0] + w.idle.count[1] == 0);
  }

  SECTION(
      "a wait after idle that ended in error is reported each way, even where clWaitForEvents hides it, and "
      "not counted") {
    for (const bool start_blocking : {false, true}) {
      const detail::HostWait w = learning_wait(start_blocking);
      for (int i = 0; i < 2; ++i) {
        INFO("started " << (start_blocking ? "blocking" : "polling") << ", failed wait " << i);
        EventList events = failed_event();
        std::this_thread::sleep_for(kIdle);
        wait_hides_errors = true;
        arm_first_call();
        CHECK(detail::await(events, w) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        wait_hides_errors = false;
        CHECK(first_call_waited == start_blocking);
      }
      CHECK(w.idle.count[0] + w.idle.count[1] == 0);
    }
  }
}

TEST_CASE("A tensor's views learn the faster wait after idle; a TensorRing's slots keep polling",
          "[wait_idle_learn_view]") {
  Env& env = Env::get();
  long long probe = 0;
  if (!detail::thread_cpu_ns(probe)) {
    CLZERO_NOT_RUN("not run: the platform has no CLOCK_THREAD_CPUTIME_ID");
    return;
  }
  REQUIRE(std::getenv("CLZERO_IDLE_WAIT") == nullptr);
  const detail::WaitMethod w = detail::wait_method(env.context, env.device);
  INFO("the device's wait: " << w.reason);
  if (!w.poll) {
    CLZERO_NOT_RUN("not run: the device's measured wait blocks (" << w.reason << ")");
    return;
  }
  // Where the wait after idle was measured, views learn on CPU devices and
  // wherever blocking won; the reason says so.
  REQUIRE(w.idle_measured);
  const bool cpu = (env.caps.type & CL_DEVICE_TYPE_CPU) != 0;
  CHECK(w.idle_learn == (cpu || w.idle_block));
  CHECK((w.reason.find(detail::kIdleLearnedPhrase) != std::string::npos) == w.idle_learn);
  if (!w.idle_learn) {
    CLZERO_NOT_RUN("not run: this device's views do not time their waits after idle (" << w.reason << ")");
    return;
  }
  const std::size_t n = 4096;
  Kernel fill("fill_u32");
  std::uint32_t iter = 1;
  std::size_t wrong = 0;
  // Inferences with a sleep before each view and the costs `c` after it;
  // W: the view blocked at once, P: it polled.
  const auto sleeping = [&](auto& t, const LearnCosts& c, unsigned count) {
    std::vector<bool> blocked;
    for (unsigned i = 0; i < count; ++i) {
      gated_inference(t, fill, n, iter++, kGate, wrong, counted, [&c] {
        std::this_thread::sleep_for(kIdle);
        arm_learning(c);
      });
      disarm_learning();
      blocked.push_back(first_call_waited);
    }
    return blocked;
  };
  const unsigned first = 2 * detail::kIdleSamples;
  {
    MappedTensor<std::uint32_t, policy::Persistent> t(env.context, env.queue, {n}, Intent::output);
    const std::vector<bool> blocked = sleeping(t, kSlowPolls, first + 8);
    INFO("Persistent, polls slow after sleeps: " << ways(blocked));
    for (unsigned i = first; i < blocked.size(); ++i) CHECK(blocked[i]);
  }
  {
    MappedTensor<std::uint32_t, policy::MapPerInference> t(env.context, env.queue, {n}, Intent::output);
    const std::vector<bool> blocked = sleeping(t, kSlowWaits, first + 8);
    INFO("MapPerInference, clWaitForEvents slow after sleeps: " << ways(blocked));
    for (unsigned i = first; i < blocked.size(); ++i) CHECK_FALSE(blocked[i]);
  }
  {
    TensorRing<std::uint32_t, policy::Persistent> ring(env.context, env.queue, {n}, Intent::output, 2);
    std::vector<bool> blocked;
    for (unsigned i = 0; i < first + 2; ++i) {
      const std::vector<bool> one = sleeping(ring[i], kSlowPolls, 1);
      blocked.push_back(one[0]);
    }
    INFO("TensorRing slots, polls slow after sleeps: " << ways(blocked));
    for (bool b : blocked) CHECK_FALSE(b);
  }
  CHECK(wrong == 0);
}
