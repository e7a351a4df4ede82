// SPDX-License-Identifier: Apache-2.0
// What telling a wait after idle apart costs a busy thread. A tensor that
// tracks idle (events.hpp, thread_was_idle) needs the thread's CPU time,
// which is a system call. Read at every wait, tracking was about 0.57 us of
// the some 0.6 us of host work clzero added to a 4 B inference over the
// hand-written sequence on PoCL 3.1's 2-vCPU host
// (docs/logs/ci/44-host-idle-tracking/NOTES). So a wait's end samples it only
// where the last sample is kIdleCpuSampleEveryNs old, and the check before
// a wait reads it only where the wall time since the last wait is long
// enough to be idle.
//
// Checked by counting, not by timing: this executable defines clock_gettime
// itself (support/interpose.hpp) and counts the calls that read the
// calling thread's CPU time. Over a busy loop of waits lasting T, samples at
// wait ends are at least kIdleCpuSampleEveryNs apart (at most 1 + T / that),
// and checks before waits need kIdleOffCoreNs of wall time since the last
// wait each (at most 1 + T / that: the first gap may begin before the
// loop), whatever the machine's speed. A wait that
// read the CPU time at every wait makes one read per wait, far more. The
// same loop then sleeps and spins: what tracking must still tell apart
// with the samples spaced out.
#include <clzero/clzero.hpp>

#include <time.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "support/catch.hpp"
#include "support/gated_wait.hpp"
#include "support/interpose.hpp"
#include "support/test_env.hpp"

namespace {

thread_local bool counting = false;  // this thread's reads of its CPU time are counted
thread_local long long cpu_reads = 0;

}  // namespace

extern "C" {

int clock_gettime(clockid_t clock, struct timespec* ts) noexcept {
  static const auto real = CLZERO_TEST_NEXT(clock_gettime);
  if (counting && clock == CLOCK_THREAD_CPUTIME_ID) ++cpu_reads;
  return real(clock, ts);
}

}  // extern "C"

using namespace clzero;
using namespace clzero_test;

namespace {

/// `waits` waits on `events`, each after `work` of the thread's own (spun,
/// on its core); how long they took, in nanoseconds, and the thread's CPU
/// time reads among them.
struct Loop {
  long long wall_ns = 0;
  long long reads = 0;
};
Loop busy_waits(const EventList& events, const detail::HostWait& w, int waits, std::chrono::nanoseconds work) {
  cpu_reads = 0;
  counting = true;
  const long long start = detail::steady_ns();
  for (int i = 0; i < waits; ++i) {
    spin_for(work);
    ok(detail::await(events, w), "clzero::detail::await");
  }
  const long long wall = detail::steady_ns() - start;
  counting = false;
  return {wall, cpu_reads};
}

}  // namespace

TEST_CASE("A busy thread's waits read its CPU time at most once per kIdleCpuSampleEveryNs", "[wait_idle_cost]") {
  long long probe = 0;
  if (!detail::thread_cpu_ns(probe)) {
    CLZERO_NOT_RUN("not run: the platform has no CLOCK_THREAD_CPUTIME_ID");
    return;
  }
  // Already complete: each wait is over at its first look, as a view's is
  // when the host comes late to its output.
  const EventList events = settled_event(CL_COMPLETE);
  detail::HostWait w;
  w.poll = true;
  w.idle_block = true;  // tracks idle, as the views of a CPU device do
  w.idle_learn = true;
  detail::thread_wait_end() = detail::ThreadWaitEnd{};

  // From 2 us to 40 us of the thread's own work per inference: every wait
  // shorter than the sampling period, as an engine's at the small sizes.
  // The bound holds however slow the machine; it tells a read per wait
  // apart only where the waits came at least 4 times faster than the
  // sampling period.
  int telling = 0;
  std::string seen;
  for (const auto work : {std::chrono::microseconds(2), std::chrono::microseconds(10), std::chrono::microseconds(40)}) {
    const int waits = 2000;
    const Loop loop = busy_waits(events, w, waits, work);
    const long long bound = 2 + loop.wall_ns / detail::kIdleCpuSampleEveryNs + loop.wall_ns / detail::kIdleOffCoreNs;
    seen += "; " + std::to_string(waits) + " waits after " + std::to_string(work.count()) +
            " us of work each: " + std::to_string(loop.wall_ns / 1000) + " us, " + std::to_string(loop.reads) +
            " reads, at most " + std::to_string(bound);
    INFO(seen);
    CHECK(loop.reads >= 1);
    CHECK(loop.reads <= bound);
    telling += loop.wall_ns / waits < detail::kIdleCpuSampleEveryNs / 4 ? 1 : 0;
  }

  // Tracking still tells idle apart: after a busy loop (samples spaced
  // out), a sleep of the probe's gap is idle, and a spin of the same length
  // is not.
  int judged_spins = 0;
  for (int i = 0; i < 5; ++i) {
    busy_waits(events, w, 50, std::chrono::microseconds(20));
    std::this_thread::sleep_for(detail::kIdleGap);
    CHECK(detail::thread_was_idle(w));
    ok(detail::await(events, w), "clzero::detail::await");
    busy_waits(events, w, 50, std::chrono::microseconds(20));
    spin_for(detail::kIdleGap);
    const bool spun_idle = detail::thread_was_idle(w);
    // A preemption during the spin is time off the core: only a spin whose
    // thread stayed on its core is judged.
    long long cpu_after = 0;
    detail::thread_cpu_ns(cpu_after);
    const detail::ThreadWaitEnd& end = detail::thread_wait_end();
    const long long off_core = (detail::steady_ns() - end.wall_ns) - (cpu_after - end.cpu_ns);
    INFO("after a spin: off the core " << off_core << " ns");
    if (off_core < detail::kIdleOffCoreNs / 2) {
      CHECK_FALSE(spun_idle);
      ++judged_spins;
    }
    ok(detail::await(events, w), "clzero::detail::await");
  }
  if (telling == 0) CLZERO_NOT_RUN("not run: every loop's waits came too slowly to tell" << seen);
  if (judged_spins == 0) CLZERO_NOT_RUN("not run: the machine preempted every spin");
}
