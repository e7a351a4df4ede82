// SPDX-License-Identifier: Apache-2.0
// The host's wait is measured once per device, when the first tensor is made
// there (detail/wait_method.hpp), and kept for the rest of the process. A
// short spell of load at that moment must not decide it: on PoCL 3.1 (2
// vCPUs), with the machine compressing and sending files, one such
// measurement chose clWaitForEvents, and every later inference of that
// process paid its wake-up (Auto 1.5 to 1.8 times the fastest legal
// sequence at 4 B to 256 KiB, docs/logs/ci/19-sequences-pocl31/).
//
// Both the load and the waits' costs are simulated, so that the test does
// not depend on this machine's own: this executable defines clGetEventInfo,
// clWaitForEvents, clEnqueueMapBuffer, clEnqueueSVMMap,
// clEnqueueNDRangeKernel and nanosleep itself (ELF interposition: the calls
// the headers and libstdc++ compile into it land here) and passes them on.
//
// The waits: every clWaitForEvents and every blocking map takes kWakeUp
// longer, a wake-up far above what load does to the real times, so that
// without the burst polling wins every block. On PoCL 3.1 the real ones are
// too close to decide anything: here polling and clWaitForEvents measure 44
// to 66 us, blocking clearly faster in 2 or 3 of the 5 blocks, and in a CI
// run of 882af59 the machine's own load made blocking clearly faster in all
// 5 blocks of two measurements in a row (13.5 and 22.5 us against 98.5 and
// 125.5 us polled), which failed this test though the burst covered only
// the first block.
//
// The load: armed, the first kernel starts a burst; during it every status
// query returns kSlowQuery after it read the status, as a polling thread does
// when it loses its core to other work. Polling then looks slower than
// blocking for as long as the burst lasts. The burst ends when the measuring
// thread first sleeps, which the measurement does between its blocks
// (std::this_thread::sleep_for, a call of nanosleep): it covers the first of
// the five blocks, warm-up included, however fast this machine runs them,
// and the whole of a measurement in one block (tests/mutants:
// wait_one_block). A burst of a fixed 20 ms did not: with the test and two
// busy processes on one core, a block took longer than the burst and the
// one-block mutant survived 6 of 6 runs. The slow query is slept unseen by
// the nanosleep below (clzero_test::sleep_unseen), leaving the cores to the
// device's threads. The wake-up is spun after the real wait returned, when
// the device has nothing left to run: slept, it made PoCL 3.1's polled probe
// right after it take 1.9 ms, so that blocking won blocks without the burst.

#include <clzero/clzero.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "support/catch.hpp"
#include "support/interpose.hpp"
#include "support/test_env.hpp"

namespace {

// A blocking wait's simulated wake-up, and a status query's delay in the
// burst: a polled wait in the burst looks at least once (most look twice),
// so it takes at least kSlowQuery, which must beat a blocking wait's
// kWakeUp plus its real time by more than the 10% blocking needs.
constexpr auto kWakeUp = std::chrono::milliseconds(2);
constexpr auto kSlowQuery = std::chrono::milliseconds(6);

std::atomic<bool> armed{false};     // the next kernel starts a burst
std::atomic<bool> bursting{false};  // status queries return late
std::atomic<int> slowed{0};
thread_local bool measuring = false;  // this thread runs the measurement
thread_local bool woken = false;      // this thread's blocking waits take kWakeUp longer

}  // namespace

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                                                       const size_t* offset, const size_t* global,
                                                       const size_t* local, cl_uint waits, const cl_event* wait_list,
                                                       cl_event* event) {
  static const auto real = CLZERO_TEST_NEXT(clEnqueueNDRangeKernel);
  if (armed.exchange(false)) bursting = true;
  return real(queue, kernel, dims, offset, global, local, waits, wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clGetEventInfo(cl_event event, cl_event_info name, size_t size, void* value,
                                               size_t* size_ret) {
  static const auto real = CLZERO_TEST_NEXT(clGetEventInfo);
  const cl_int rc = real(event, name, size, value, size_ret);
  // The status is read first and returned late: a polling thread that loses
  // its core after a look learns of the completion only when it gets the
  // core back. (Spinning before the look instead hid the delay behind the
  // probe kernel's own run time: the look then found the kernel complete,
  // and polling measured barely slower, so that a one-block measurement
  // chose blocking in only 18 of 20 runs.)
  if (name == CL_EVENT_COMMAND_EXECUTION_STATUS && bursting.load()) {
    clzero_test::sleep_unseen(kSlowQuery);
    ++slowed;
  }
  return rc;
}

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint count, const cl_event* events) {
  static const auto real = CLZERO_TEST_NEXT(clWaitForEvents);
  const cl_int rc = real(count, events);
  if (woken) clzero_test::spin_for(kWakeUp);
  return rc;
}

CL_API_ENTRY void* CL_API_CALL clEnqueueMapBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                                  cl_map_flags flags, size_t offset, size_t size, cl_uint waits,
                                                  const cl_event* wait_list, cl_event* event, cl_int* rc) {
  static const auto real = CLZERO_TEST_NEXT(clEnqueueMapBuffer);
  void* p = real(queue, buffer, blocking, flags, offset, size, waits, wait_list, event, rc);
  if (woken && blocking != CL_FALSE) clzero_test::spin_for(kWakeUp);
  return p;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueSVMMap(cl_command_queue queue, cl_bool blocking, cl_map_flags flags, void* ptr,
                                                size_t size, cl_uint waits, const cl_event* wait_list,
                                                cl_event* event) {
  static const auto real = CLZERO_TEST_NEXT(clEnqueueSVMMap);
  const cl_int rc = real(queue, blocking, flags, ptr, size, waits, wait_list, event);
  if (woken && blocking != CL_FALSE) clzero_test::spin_for(kWakeUp);
  return rc;
}

int nanosleep(const struct timespec* request, struct timespec* remaining) {
  static const auto real = CLZERO_TEST_NEXT(nanosleep);
  if (measuring) bursting = false;
  return real(request, remaining);
}

}  // extern "C"

using namespace clzero;
using namespace clzero_test;

TEST_CASE("A burst of load while the host's wait is measured does not make the device's views block",
          "[wait_burst]") {
  Env& env = Env::get();
  woken = true;
  // Quiet first: where blocking wins without the burst, the burst has
  // nothing to show. With the simulated wake-up that takes load of more than
  // kWakeUp on every polled wait of every block; still, three tries, then
  // the test says it could not run rather than pass or fail on a machine it
  // cannot judge.
  detail::WaitMethod quiet;
  for (int tries = 0; tries < 3 && !(quiet.measured && quiet.poll); ++tries) {
    if (tries > 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    quiet = detail::measure_wait(env.context, env.device);
  }
  INFO("quiet: " << quiet.reason);
  REQUIRE(quiet.measured);
  if (!quiet.poll) {
    CLZERO_NOT_RUN("not run: without the burst the measurement chose blocking three times (" << quiet.reason << ")");
    return;
  }

  // The same measurement with a burst at its start, until three attempts
  // where the burst took effect (it slowed at least a block's worth of
  // polled probes, 10 status queries, and blocking won at least one block)
  // polled; eight attempts at most. An attempt that chose blocking is
  // judged by a measurement without the burst right after it: where
  // blocking won there in all blocks but one or more, this machine's own
  // load, not the burst's one block, decided, and the attempt is not
  // counted (before the simulated wake-up, with compilers on both vCPUs,
  // attempts that chose blocking failed the test in 2 to 3 of 15 runs, with a burst of 60 us or of 1 ms
  // per query alike, and in 1 of 4 where only a measurement that chose
  // blocking excused them). A measurement in one block is what the
  // wait_one_block mutant puts back: its own verdict must not excuse it.
  // One counted attempt that chose blocking is forgiven; a second fails
  // the test.
  int polled = 0, blocked = 0, loaded = 0;
  for (int attempt = 1; polled < 3 && attempt <= 8; ++attempt) {
    slowed = 0;
    armed = true;
    measuring = true;
    const detail::WaitMethod busy = detail::measure_wait(env.context, env.device);
    measuring = false;
    armed = false;
    bursting = false;
    INFO("attempt " << attempt << ": " << busy.reason << "; " << slowed.load() << " status queries slowed");
    REQUIRE(busy.measured);
    if (slowed.load() < 10 || busy.block_wins == 0) {
      WARN("attempt " << attempt << ": the burst slowed " << slowed.load() << " status queries, and blocking won "
                      << busy.block_wins << " blocks; not counted");
    } else if (busy.poll) {
      ++polled;
    } else if (const detail::WaitMethod after = detail::measure_wait(env.context, env.device);
               after.blocks > 1 && after.block_wins >= after.blocks - 1) {
      ++loaded;
      WARN("attempt " << attempt << " chose blocking, and without the burst right after it blocking won all blocks "
                      << "but one or more (" << after.reason << "); not counted");
    } else {
      ++blocked;
      WARN("attempt " << attempt << " chose blocking: " << busy.reason << "; without the burst right after it: "
                      << after.reason);
      REQUIRE(blocked < 2);
    }
  }
  if (polled < 3 && loaded > 0) {
    CLZERO_NOT_RUN("not run: without the burst the measurement chose blocking after " << loaded
                                                                             << " attempts; the machine is loaded");
    return;
  }
  // Three attempts where the burst took effect, and each but one polled.
  CHECK(polled == 3);
}
