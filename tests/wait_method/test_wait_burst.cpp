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
// clWaitForEvents, clEnqueueMapBuffer, clEnqueueSVMMap and nanosleep itself
// (ELF interposition: the calls the headers and libstdc++ compile into it
// land here) and passes them on.
//
// The waits: every clWaitForEvents and every blocking map of a measurement
// the test makes takes kWakeUp longer, a wake-up far above what load does to the
// real times, so that without a burst polling wins every block. On PoCL 3.1
// the real ones are too close to decide anything: here polling and
// clWaitForEvents measure 44 to 66 us, blocking clearly faster in 2 or 3 of
// the 5 blocks, and in a CI run of 882af59 the machine's own load made
// blocking clearly faster in all 5 blocks of two measurements in a row
// (13.5 and 22.5 us against 98.5 and 125.5 us polled), which failed this
// test though the burst covered only the first block. The wake-up is spun
// after the real wait returned, when the device has nothing left to run:
// slept, it made PoCL 3.1's polled probe right after it take 1.9 ms, so
// that blocking won blocks without a burst.
//
// The load: during a burst every status query of the measuring thread
// returns kSlowQuery after it read the status, as a polling thread does when
// it loses its core to other work, slept unseen by the nanosleep below
// (clzero_test::sleep_unseen). Polling then looks slower than blocking for
// as long as the burst lasts. A burst covers one block of the measurement,
// warm-up included, however fast this machine runs them: the measurement
// sleeps kWaitBlockGap between its blocks (std::this_thread::sleep_for, a
// call of nanosleep), and the sleeps of that length the measuring thread
// made so far are the block's index. (A burst of a fixed 20 ms did not do:
// with the test and two busy processes on one core, a block took longer
// than the burst and the one-block mutant survived 6 of 6 runs.)
//
// Each block in turn holds the burst, and every measurement must poll: no
// single block, the first or a later one, may decide. Two controls keep
// the test from passing a library that cannot block at all, or from
// skipping one that blocks for no reason: a burst over every block must
// make the measurement block, and a quiet measurement that blocks although
// its own times show polling clearly faster fails the test.

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

// A blocking wait's simulated wake-up, and a status query's delay in a
// burst: a polled wait in a burst looks at least once (most look twice), so
// it takes at least kSlowQuery, which must beat a blocking wait's kWakeUp
// plus its real time by more than the 10% blocking needs.
constexpr auto kWakeUp = std::chrono::milliseconds(2);
constexpr auto kSlowQuery = std::chrono::milliseconds(6);
constexpr int kNoBurst = -1, kEveryBlock = 1000;

std::atomic<int> burst_block{kNoBurst};  // the block whose status queries return late
std::atomic<int> gaps{0};                // the measurement's sleeps between blocks so far
std::atomic<int> slowed{0};
thread_local bool measuring = false;  // this thread runs a measurement: its blocking waits take kWakeUp longer

}  // namespace

extern "C" {

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
  const int burst = burst_block.load();
  if (name == CL_EVENT_COMMAND_EXECUTION_STATUS && measuring && (burst == kEveryBlock || burst == gaps.load())) {
    clzero_test::sleep_unseen(kSlowQuery);
    ++slowed;
  }
  return rc;
}

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint count, const cl_event* events) {
  static const auto real = CLZERO_TEST_NEXT(clWaitForEvents);
  const cl_int rc = real(count, events);
  if (measuring) clzero_test::spin_for(kWakeUp);
  return rc;
}

CL_API_ENTRY void* CL_API_CALL clEnqueueMapBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                                  cl_map_flags flags, size_t offset, size_t size, cl_uint waits,
                                                  const cl_event* wait_list, cl_event* event, cl_int* rc) {
  static const auto real = CLZERO_TEST_NEXT(clEnqueueMapBuffer);
  void* p = real(queue, buffer, blocking, flags, offset, size, waits, wait_list, event, rc);
  if (measuring && blocking != CL_FALSE) clzero_test::spin_for(kWakeUp);
  return p;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueSVMMap(cl_command_queue queue, cl_bool blocking, cl_map_flags flags, void* ptr,
                                                size_t size, cl_uint waits, const cl_event* wait_list,
                                                cl_event* event) {
  static const auto real = CLZERO_TEST_NEXT(clEnqueueSVMMap);
  const cl_int rc = real(queue, blocking, flags, ptr, size, waits, wait_list, event);
  if (measuring && blocking != CL_FALSE) clzero_test::spin_for(kWakeUp);
  return rc;
}

int nanosleep(const struct timespec* request, struct timespec* remaining) {
  static const auto real = CLZERO_TEST_NEXT(nanosleep);
  // Only the measurement's own sleeps between its blocks count: any other
  // sleep of the thread (a driver's, say) would shift the burst.
  constexpr auto gap_ns = std::chrono::nanoseconds(clzero::detail::kWaitBlockGap).count();
  if (measuring && request != nullptr && request->tv_sec == gap_ns / 1000000000 &&
      request->tv_nsec == gap_ns % 1000000000)
    ++gaps;
  return real(request, remaining);
}

}  // extern "C"

using namespace clzero;
using namespace clzero_test;

namespace {

/// The measurement with a burst over block `block` (kNoBurst, a block's
/// index or kEveryBlock), and how many status queries the burst slowed.
detail::WaitMethod measure_with_burst(Env& env, int block, int& slowed_queries) {
  slowed = 0;
  gaps = 0;
  burst_block = block;
  measuring = true;
  const detail::WaitMethod w = detail::measure_wait(env.context, env.device);
  measuring = false;
  burst_block = kNoBurst;
  slowed_queries = slowed.load();
  return w;
}

}  // namespace

TEST_CASE("A burst of load while the host's wait is measured does not make the device's views block", "[wait_burst]") {
  Env& env = Env::get();
  int slowed_queries = 0;
  // Quiet first: where the measurement blocks without a burst, a burst has
  // nothing to show. With the simulated wake-up that takes load of more than
  // kWakeUp on every polled wait of every block, so a quiet measurement that
  // blocks although its own times show polling clearly faster is the
  // library's fault; otherwise, after three tries, the test says it could
  // not run rather than pass or fail on a machine it cannot judge.
  detail::WaitMethod quiet;
  for (int tries = 0; tries < 3 && !(quiet.measured && quiet.poll); ++tries) {
    if (tries > 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    quiet = measure_with_burst(env, kNoBurst, slowed_queries);
  }
  INFO("quiet: " << quiet.reason);
  REQUIRE(quiet.measured);
  if (!quiet.poll) {
    REQUIRE_FALSE(quiet.poll_us < detail::kBlockMustWinBy * quiet.block_us);
    CLZERO_NOT_RUN("not run: without a burst the measurement chose blocking three times (" << quiet.reason << ")");
    return;
  }

  // The control: a burst over every block must make the measurement block,
  // or the test below would pass a library that never blocks.
  const detail::WaitMethod every = measure_with_burst(env, kEveryBlock, slowed_queries);
  INFO("a burst over every block: " << every.reason << "; " << slowed_queries << " status queries slowed");
  REQUIRE(every.measured);
  REQUIRE_FALSE(every.poll);

  // A burst over one block, each block in turn, twice at most where the
  // burst took no effect (it must slow at least a block's worth of polled
  // probes, 10 status queries, and make blocking win at least one block).
  // A measurement that chose blocking is judged by one without a burst
  // right after it: where blocking won there in all blocks but one or more,
  // this machine's own load, not the burst's one block, decided, and the
  // block is not counted (before the simulated wake-up, with compilers on
  // both vCPUs, measurements that chose blocking failed the test in 2 to 3
  // of 15 runs). A measurement in one block is what the wait_one_block
  // mutant puts back: its own verdict must not excuse it.
  int polled = 0, blocked = 0, loaded = 0, uncounted = 0;
  for (int block = 0; block < detail::kWaitBlocks; ++block) {
    for (int attempt = 1; attempt <= 2; ++attempt) {
      const detail::WaitMethod busy = measure_with_burst(env, block, slowed_queries);
      INFO("a burst over block " << block << ", attempt " << attempt << ": " << busy.reason << "; "
                                 << slowed_queries << " status queries slowed");
      REQUIRE(busy.measured);
      if (slowed_queries < 10 || busy.block_wins == 0) {
        WARN("a burst over block " << block << " slowed " << slowed_queries << " status queries, and blocking won "
                                   << busy.block_wins << " blocks; not counted");
        ++uncounted;
        continue;
      }
      if (busy.poll) {
        ++polled;
      } else if (const detail::WaitMethod after = measure_with_burst(env, kNoBurst, slowed_queries);
                 after.blocks > 1 && after.block_wins >= after.blocks - 1) {
        ++loaded;
        WARN("a burst over block " << block << " chose blocking, and without a burst right after it blocking won "
                                   << "all blocks but one or more (" << after.reason << "); not counted");
      } else {
        ++blocked;
        WARN("a burst over block " << block << " chose blocking: " << busy.reason
                                   << "; without a burst right after it: " << after.reason);
        REQUIRE(blocked == 0);
      }
      break;
    }
  }
  if (loaded > 0) {
    CLZERO_NOT_RUN("not run: without a burst the measurement chose blocking after " << loaded
                                                                             << " bursts; the machine is loaded");
    return;
  }
  // A burst over each block, and each measurement polled.
  INFO(uncounted << " bursts took no effect");
  CHECK(polled == detail::kWaitBlocks);
}
