// SPDX-License-Identifier: Apache-2.0
// EventList: a list of retained cl_events, reused across inferences so that the
// steady state allocates nothing; and the one helper that waits on events.
#pragma once

#include <CL/cl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <time.h>
#endif

#include "clzero/error.hpp"

namespace clzero {

namespace detail {
/// The execution status of `e` (CL_COMPLETE, a positive state, or the error
/// it ended with); false if it cannot be read.
inline bool event_status(cl_event e, cl_int& status) noexcept {
  return clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) == CL_SUCCESS;
}
}  // namespace detail

/// Owns one reference to each event it holds. Its storage is kept on clear(),
/// so a list reused every inference stops allocating after the first one.
class EventList {
 public:
  /// An empty list.
  EventList() = default;
  /// Retains a reference of its own to each of `other`'s events (clRetainEvent).
  /// If a retain fails, the references already taken are released and the
  /// error is thrown: they are built up in a local list, whose destructor
  /// runs on the throw, where this object's would not (it is not yet made).
  EventList(const EventList& other) {
    EventList local;
    local.append(other);
    swap(local);
  }
  /// Takes over `other`'s references, leaving it empty; no OpenCL call.
  EventList(EventList&& other) noexcept : events_(std::move(other.events_)) { other.events_.clear(); }
  /// Retains `other`'s events, then releases its own: on failure the list is unchanged.
  EventList& operator=(const EventList& other) {
    if (this != &other) {
      EventList copy(other);
      swap(copy);
    }
    return *this;
  }
  /// Releases its own events and takes over `other`'s.
  EventList& operator=(EventList&& other) noexcept {
    if (this != &other) {
      clear();
      events_.swap(other.events_);
    }
    return *this;
  }
  /// Releases every event (clReleaseEvent); failures go to the cleanup handler.
  CLZERO_DETAIL_HOT ~EventList() { clear(); }

  /// Adds an event the caller keeps owning: clzero retains its own reference.
  /// A failed retain names `who` (the caller's call, or EventList itself).
  void retain(cl_event event, const char* who = "EventList") {
    if (event == nullptr) return;
    make_room(1);
    detail::check(clRetainEvent(event), "clRetainEvent", who, "keeping an event the tensor depends on");
    events_.push_back(event);
  }

  /// Adds an event whose reference the caller hands over (what an enqueue
  /// call returned through its event argument). Released even if push fails.
  CLZERO_DETAIL_HOT void adopt(cl_event event) {
    if (event != nullptr) adopt_one(event);  // null in the steady state: inline, no call
  }

  /// Adds every event of `other` (retained).
  CLZERO_DETAIL_HOT void append(const EventList& other) {
    if (!other.empty()) append_all(other);  // empty in the steady state: inline, no call
  }

  /// Releases every event; keeps the storage.
  CLZERO_DETAIL_HOT void clear() noexcept {
    if (!events_.empty()) release_all();  // the steady state clears empty lists several times per inference
  }

  /// Exchanges the events of two lists; no OpenCL call, never allocates.
  void swap(EventList& other) noexcept { events_.swap(other.events_); }

  /// Drops the events whose commands have finished, in success or in error:
  /// they order nothing any more, and a failed one must not fail every
  /// command that would wait on it later. Returns the status of the first
  /// one that ended in error (CL_COMPLETE if none), for the caller to report.
  CLZERO_DETAIL_HOT cl_int drop_finished() noexcept { return events_.empty() ? CL_COMPLETE : drop_finished_some(); }

  /// Whether the list holds no event.
  bool empty() const noexcept { return events_.empty(); }
  /// The number of events.
  std::size_t size() const noexcept { return events_.size(); }
  /// The count and pointer to pass as an enqueue call's wait list.
  cl_uint count() const noexcept { return static_cast<cl_uint>(events_.size()); }
  /// The wait list for count(); null when empty, because every clEnqueue* call
  /// rejects a non-null list of zero events (CL_INVALID_EVENT_WAIT_LIST).
  const cl_event* data() const noexcept { return events_.empty() ? nullptr : events_.data(); }
  /// Event `i`, still owned by the list. Unchecked.
  cl_event operator[](std::size_t i) const noexcept { return events_[i]; }
  /// The events as a range, still owned by the list.
  const cl_event* begin() const noexcept { return events_.data(); }
  /// The end of the events' range.
  const cl_event* end() const noexcept { return events_.data() + events_.size(); }

  /// Whether every event has completed (CL_COMPLETE or an error status).
  /// Never blocks.
  bool complete() const {
    for (cl_event e : events_) {
      cl_int status = CL_QUEUED;
      detail::check(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr),
                    "clGetEventInfo", "asking whether the tensor's commands have completed");
      if (status > CL_COMPLETE) return false;
    }
    return true;
  }

 private:
  // The parts of adopt(), append(), drop_finished() and clear() (release_all)
  // with events to handle, out of line: an inference's hot path keeps only
  // the emptiness tests, fewer lines of code for the host's caches to hold.
  CLZERO_DETAIL_RARE void adopt_one(cl_event event) {
    struct Guard {
      cl_event e;
      ~Guard() {
        if (e != nullptr) clReleaseEvent(e);
      }
    } guard{event};
    events_.push_back(event);
    guard.e = nullptr;
  }
  CLZERO_DETAIL_RARE void append_all(const EventList& other) {
    make_room(other.size());
    for (cl_event e : other.events_) retain(e);
  }
  CLZERO_DETAIL_RARE cl_int drop_finished_some() noexcept {
    std::size_t kept = 0;
    cl_int failed = CL_COMPLETE;
    for (cl_event e : events_) {
      cl_int status = CL_QUEUED;
      const bool finished = detail::event_status(e, status) && status <= CL_COMPLETE;
      if (finished) {
        if (status < 0 && failed == CL_COMPLETE) failed = status;
        clReleaseEvent(e);
      } else {
        events_[kept++] = e;
      }
    }
    events_.resize(kept);
    return failed;
  }

  CLZERO_DETAIL_RARE void release_all() noexcept {
    for (cl_event e : events_) {
      const cl_int rc = clReleaseEvent(e);
      if (rc != CL_SUCCESS) detail::report_cleanup(Error("dropping an event", "clReleaseEvent", rc));
    }
    events_.clear();
  }

  // Grows geometrically so that push_back after it cannot throw (a retained
  // event is never left without an owner).
  void make_room(std::size_t more) {
    if (events_.capacity() - events_.size() >= more) return;
    events_.reserve(std::max<std::size_t>(events_.size() + more, 2 * events_.capacity() + 4));
  }

  std::vector<cl_event> events_;
};

namespace detail {
inline std::atomic<long long>& spin_wait_ns() noexcept {
  static std::atomic<long long> ns{100000};  // 100 us
  return ns;
}
/// The longest a view polls, however long the tensor's last wait was: 10 ms.
constexpr long long kMaxLearnedSpinNs = 10000000;
}  // namespace detail

/// How long a host view polls clzero's events before blocking in
/// clWaitForEvents, on devices whose measured wait is polling
/// (detail/wait_method.hpp, printed by clzero-info): default 100 us, no
/// sleep and wake-up meanwhile, or, if longer, as long as the tensor's last
/// wait took plus a quarter, up to 10 ms (a wait that finds its events
/// complete at the first look leaves that budget as it was). An engine that runs the same
/// network every time then never pays clWaitForEvents' wake-up: with the
/// fixed 100 us, a TensorRing of 4 MiB slots on the H200 lost 4% to the
/// best hand-written ring, and fine-grained Svm at 4 MiB on PoCL 3.1 (2
/// vCPUs) 17% to the same calls polled without a bound
/// (docs/benchmarks.md). Polling was measured faster than blocking on both:
/// on NVIDIA's driver 580 it took a 4 KiB inference from 17.2 to 13.0 us,
/// and on PoCL 3.1 a polled event beat clWaitForEvents in the legal
/// sequences of every memory kind. On CPU devices the bound is the
/// device's long wait instead (WaitMethod::block_after_us, at least this
/// budget): a view polls up to it, and blocks at once where the tensor's
/// last wait was longer, because there the polling core is one the kernel's
/// work-items would run on. Zero blocks at once on every device.
/// Process-wide.
inline void set_spin_wait(std::chrono::nanoseconds spin) noexcept {
  detail::spin_wait_ns().store(spin.count() > 0 ? static_cast<long long>(spin.count()) : 0);
}

namespace detail {

/// How many of a tensor's waits after idle each way keeps (IdleRecord).
constexpr unsigned kIdleSamples = 5;
/// Once both ways hold kIdleSamples waits, one wait after idle in this many
/// takes the way not chosen, so that its record follows the engine.
constexpr unsigned kIdleRecheckEvery = 64;
/// The choice after idle changes where the other way's median is below
/// this many times the chosen one's.
constexpr double kIdleSwitchBelow = 0.9;

/// A tensor's last waits after idle, each way (0: polled, 1: blocked at
/// once), from the wait's start to its end, in nanoseconds.
struct IdleRecord {
  long long ns[2][kIdleSamples] = {};
  unsigned count[2] = {0, 0};  // samples held, up to kIdleSamples
  unsigned next[2] = {0, 0};   // where the next sample goes
  unsigned since_recheck = 0;  // waits after idle since the way not chosen was last timed
};

/// How a tensor's host views wait for events: whether they poll first (the
/// device's measured wait), how long the tensor's last wait took, and, on
/// CPU devices, the wait beyond which they block at once. Each policy keeps
/// its own copy (in its QueueContext), so a tensor learns from its own
/// waits only.
struct HostWait {
  bool poll = false;
  // CPU devices: a view polls up to this long, and blocks at once where the
  // tensor's last wait took longer (0: no such bound, the learned budget).
  long long block_after_ns = 0;
  // The tensor's views block at once where the waiting thread was off its
  // core for kIdleOffCoreNs or more since its last wait: the probe's choice
  // (WaitMethod::idle_block) at first, then, where idle_learn is set, the
  // faster way of the views' own waits after idle (IdleRecord).
  mutable bool idle_block = false;
  // The views time their waits after idle both ways and keep the faster
  // (WaitMethod::idle_learn).
  bool idle_learn = false;
  // The last wait that ended in success after finding an event incomplete
  // at its first look, from its start to its end.
  mutable long long last_ns = 0;
  mutable IdleRecord idle;
};

/// How many status looks a polled wait takes between two clock reads.
constexpr unsigned kPollsPerClockRead = 8;

/// A thread off its core this long since its last wait (asleep, blocked in
/// another call, or preempted) is idle: where a tensor tracks idle
/// (tracks_idle), its next wait is a wait after idle, which blocks at once
/// or polls by the tensor's choice (idle_wait_blocks).
constexpr long long kIdleOffCoreNs = 500000;  // 0.5 ms

/// The calling thread's CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID),
/// or false where the platform has no such clock.
inline bool thread_cpu_ns(long long& ns) noexcept {
#if defined(CLOCK_THREAD_CPUTIME_ID)
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return false;
  ns = static_cast<long long>(ts.tv_sec) * 1000000000LL + static_cast<long long>(ts.tv_nsec);
  return true;
#else
  (void)ns;
  return false;
#endif
}

inline long long steady_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// How long a thread's waits go on the thread's last CPU-time sample
/// (ThreadWaitEnd) before one samples it again. The sample is a system
/// call: on PoCL 3.1's 2-vCPU host, tracking with one at every wait was
/// about 0.57 us of the some 0.6 us of host work clzero added to a 4 B
/// inference over the hand-written sequence
/// (docs/logs/ci/44-host-idle-tracking/NOTES). A thread that waits every
/// 33 us samples in about one wait of eight.
constexpr long long kIdleCpuSampleEveryNs = kIdleOffCoreNs / 2;  // 0.25 ms

/// When the calling thread's last wait on a tensor that tracks idle ended
/// (wall_ns < 0: none yet, or the CPU time could not be read), and the
/// thread's CPU time as sampled at the end of that wait or of an earlier one
/// at most kIdleCpuSampleEveryNs before it (cpu_ns, sampled at
/// cpu_wall_ns).
struct ThreadWaitEnd {
  long long wall_ns = -1;
  long long cpu_wall_ns = -1;
  long long cpu_ns = 0;
};
inline ThreadWaitEnd& thread_wait_end() noexcept {
  thread_local ThreadWaitEnd end;
  return end;
}

/// Whether the tensor's views tell waits after idle apart: where they block
/// at once after idle, or time both ways there.
inline bool tracks_idle(const HostWait& w) noexcept { return w.idle_block || w.idle_learn; }

/// Whether the calling thread was off its core for kIdleOffCoreNs or more
/// since its last wait ended: the wall time since then less the thread's
/// CPU time since the sample taken at that wait's end or up to
/// kIdleCpuSampleEveryNs before it (ThreadWaitEnd). The CPU time subtracted
/// is never less than the thread's since its last wait, so a thread found
/// idle was idle; one off its core 0.75 ms or more since its last wait (the
/// probe's sleep of 1 ms, say) is always found idle, and one off its core
/// between 0.5 and 0.75 ms is found idle where its CPU time from the sample
/// to that wait's end is at most its time off the core less 0.5 ms. Only
/// the tensors that track idle ask (tracks_idle), and the CPU time is read
/// only where the wall time since that wait is long enough. A thread's
/// first wait is not idle.
inline bool thread_was_idle(const HostWait& w) noexcept {
  if (!tracks_idle(w)) return false;
  const ThreadWaitEnd& end = thread_wait_end();
  if (end.wall_ns < 0) return false;
  const long long wall = steady_ns() - end.wall_ns;
  if (wall < kIdleOffCoreNs) return false;
  long long cpu = 0;
  return thread_cpu_ns(cpu) && wall - (cpu - end.cpu_ns) >= kIdleOffCoreNs;
}

/// Notes the end of a wait for thread_was_idle (tensors that track idle
/// only); samples the thread's CPU time where the last sample is
/// kIdleCpuSampleEveryNs old or more, before the wall time, so that the
/// sample never holds CPU time spent after the wait's end.
inline void note_wait_end(const HostWait& w) noexcept {
  if (!tracks_idle(w)) return;
  ThreadWaitEnd& end = thread_wait_end();
  const long long now = steady_ns();
  if (end.wall_ns >= 0 && now - end.cpu_wall_ns < kIdleCpuSampleEveryNs) {
    end.wall_ns = now;
    return;
  }
  if (!thread_cpu_ns(end.cpu_ns)) {
    end.wall_ns = -1;
    return;
  }
  end.wall_ns = end.cpu_wall_ns = steady_ns();
}

/// The poll budget of the next wait: zero when the device's wait is not
/// polling or set_spin_wait(0) was called. Else, on CPU devices, the longer
/// of set_spin_wait()'s budget and the device's long wait, or zero where the
/// last wait reached that bound; elsewhere set_spin_wait()'s budget, or 1.25
/// times the last wait if that is longer, at most kMaxLearnedSpinNs.
inline long long spin_budget_ns(const HostWait& w) noexcept {
  const long long base = spin_wait_ns().load(std::memory_order_relaxed);
  if (!w.poll || base <= 0) return 0;
  if (w.block_after_ns > 0) {
    const long long bound = std::max(base, w.block_after_ns);
    return w.last_ns >= bound ? 0 : bound;
  }
  return std::max(base, std::min(kMaxLearnedSpinNs, w.last_ns + w.last_ns / 4));
}

/// Whether a wait that blocks at once is still timed: on CPU devices, where
/// the next wait polls again once the tensor's waits have become short.
inline bool times_blocked_waits(const HostWait& w) noexcept {
  return w.poll && w.block_after_ns > 0 && spin_wait_ns().load(std::memory_order_relaxed) > 0;
}

/// Whether a wait after idle blocks at once: the tensor's choice, except
/// where its views time both ways (idle_learn) and one way holds fewer than
/// kIdleSamples waits (that way then), or where kIdleRecheckEvery waits
/// after idle have passed since the way not chosen was timed (that way
/// once).
CLZERO_DETAIL_RARE inline bool idle_wait_blocks(const HostWait& w) noexcept {
  if (!w.idle_learn) return w.idle_block;
  IdleRecord& r = w.idle;
  if (r.count[0] < kIdleSamples || r.count[1] < kIdleSamples)
    return r.count[0] == r.count[1] ? w.idle_block : r.count[1] < r.count[0];
  if (++r.since_recheck < kIdleRecheckEvery) return w.idle_block;
  r.since_recheck = 0;
  return !w.idle_block;
}

/// Records a wait after idle that succeeded (`blocked`: it blocked at once)
/// and, once both ways hold kIdleSamples waits, takes the other way where
/// its median is below kIdleSwitchBelow times the chosen way's.
CLZERO_DETAIL_RARE inline void note_idle_wait(const HostWait& w, bool blocked, long long ns) noexcept {
  IdleRecord& r = w.idle;
  const int way = blocked ? 1 : 0;
  r.ns[way][r.next[way]] = ns;
  r.next[way] = (r.next[way] + 1) % kIdleSamples;
  if (r.count[way] < kIdleSamples) ++r.count[way];
  if (r.count[0] < kIdleSamples || r.count[1] < kIdleSamples) return;
  long long median[2];
  for (int k = 0; k < 2; ++k) {
    long long sorted[kIdleSamples];
    std::copy(r.ns[k], r.ns[k] + kIdleSamples, sorted);
    std::nth_element(sorted, sorted + kIdleSamples / 2, sorted + kIdleSamples);
    median[k] = sorted[kIdleSamples / 2];
  }
  const int chosen = w.idle_block ? 1 : 0;
  if (static_cast<double>(median[1 - chosen]) < kIdleSwitchBelow * static_cast<double>(median[chosen]))
    w.idle_block = !w.idle_block;
}

/// clWaitForEvents at once, with no look before it, as the fastest
/// hand-written sequence after a sleep makes none; one look per event after
/// it, so that an event that ended in error is reported as a polled wait
/// reports it (await_polled). Timed for the long wait's bound where that
/// applies, as every blocked wait is there.
inline cl_int await_blocked(const EventList& events, const HostWait& w) noexcept {
  using Clock = std::chrono::steady_clock;
  const bool timed = times_blocked_waits(w);
  const auto start = timed ? Clock::now() : Clock::time_point{};
  const cl_int rc = clWaitForEvents(events.count(), events.data());
  if (rc != CL_SUCCESS) return rc;
  if (timed) w.last_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  for (cl_event e : events) {
    cl_int status = CL_COMPLETE;
    if (event_status(e, status) && status < 0) return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  }
  return CL_SUCCESS;
}

/// clWaitForEvents, after polling the events for the tensor's spin budget
/// (spin_budget_ns). Returns what clWaitForEvents returns (CL_SUCCESS once
/// all completed); a wait that succeeded is remembered for the next budget.
inline cl_int await_polled(const EventList& events, const HostWait& w) noexcept {
  using Clock = std::chrono::steady_clock;
  const long long spin = spin_budget_ns(w);
  if (spin <= 0 && !times_blocked_waits(w)) return clWaitForEvents(events.count(), events.data());
  // 1: all complete; 0: not yet; -1: one failed or its status cannot be
  // read (clWaitForEvents then reports it).
  const auto poll = [&events]() noexcept {
    int state = 1;
    for (cl_event e : events) {
      cl_int status = CL_QUEUED;
      if (!event_status(e, status) || status < 0) return -1;
      if (status != CL_COMPLETE) state = 0;
    }
    return state;
  };
  // One look before the clock is read: a wait that is over already costs
  // no clock reads, and leaves the budget as the last wait that waited set
  // it (a TensorRing's view often finds its slot done, then next time
  // waits as long as before).
  int state = poll();
  if (state == 1) return CL_SUCCESS;
  const auto start = Clock::now();
  if (state == 0 && spin > 0) {
    // The clock is read every kPollsPerClockRead looks only, and the wait
    // remembered is the time at the last read: a read is not free (about
    // 50 ns here, more where the clock is not the TSC), and each one between
    // two looks delays seeing the completion. The budget is overrun by at
    // most that many looks; a wait found over before the first read is
    // remembered as zero, below any budget set_spin_wait() gives.
    const auto deadline = start + std::chrono::nanoseconds(spin);
    auto last_read = start;
    for (unsigned looks = 1;; ++looks) {
      if ((state = poll()) != 0) break;
      if (looks % kPollsPerClockRead == 0 && (last_read = Clock::now()) >= deadline) break;
    }
    if (state == 1) {
      w.last_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(last_read - start).count();
      return CL_SUCCESS;
    }
  }
  const cl_int rc = clWaitForEvents(events.count(), events.data());
  if (rc == CL_SUCCESS) w.last_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  // A look found an event that ended in error: that is what the wait
  // reports, even where clWaitForEvents answers CL_SUCCESS for it (NVIDIA's
  // driver 580 does for a user event set to an error; tests/from_docs).
  return rc == CL_SUCCESS && state < 0 ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : rc;
}

/// The tensor's wait: polled (await_polled), or blocked at once where the
/// thread was idle (thread_was_idle) and the tensor's wait after idle says
/// so (idle_wait_blocks). A wait after idle that succeeded is timed where
/// the views time both ways (note_idle_wait); the thread's wait end is noted
/// for its next wait.
inline cl_int await(const EventList& events, const HostWait& w) noexcept {
  const bool idle = thread_was_idle(w);
  const bool block = idle && idle_wait_blocks(w);
  const long long start = idle && w.idle_learn ? steady_ns() : 0;
  // A wait after idle without a poll budget (set_spin_wait(0)) blocks as
  // await_blocked does, with its look after the wait, so that an event that
  // ended in error is reported on every path after idle.
  const bool checked_block = block || (idle && spin_budget_ns(w) <= 0 && !times_blocked_waits(w));
  const cl_int rc = checked_block ? await_blocked(events, w) : await_polled(events, w);
  if (idle && w.idle_learn && rc == CL_SUCCESS) note_idle_wait(w, block, steady_ns() - start);
  note_wait_end(w);
  return rc;
}

/// Whether every event has finished, in success or in error. False also
/// when a status cannot be read.
inline bool all_finished(const EventList& events) noexcept {
  for (cl_event e : events) {
    cl_int status = CL_QUEUED;
    if (!event_status(e, status) || status > CL_COMPLETE) return false;
  }
  return true;
}

/// Blocks until `events` complete, then empties the list. The caller has
/// submitted the queue (clFlush) first, because a command that was never
/// submitted never completes; ending a device access does so. clFlush
/// submits without waiting, unlike clFinish, which clzero never calls on the
/// engine's queue. If a command ended in error, the list is emptied too (its
/// commands are over) and CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST is
/// raised, naming `doing`, once; if the wait itself failed, the events are
/// kept, so that a release still waits for them.
inline void wait_for(EventList& events, const HostWait& w, const char* who, const char* step) {
  if (events.empty()) return;
  const cl_int rc = await(events, w);
  if (rc == CL_SUCCESS || all_finished(events)) events.clear();
  check(rc, "clWaitForEvents", who, step);
}

/// wait_for, except that events that completed are moved into `seen`
/// (releasing what it held) instead of being released now: the caller
/// releases them later, away from the moment they completed. On PoCL 3.1
/// (2 vCPUs), releasing a kernel's event as soon as a poll had seen it
/// complete cost a 4 B or 4 KiB inference 3 to 7%, against the same calls
/// with the release made at the next inference (tests/call_parity).
inline void wait_for(EventList& events, const HostWait& w, const char* doing, EventList& seen) {
  if (events.empty()) return;
  const cl_int rc = await(events, w);
  if (rc == CL_SUCCESS) {
    seen.clear();
    seen.swap(events);
    return;
  }
  if (all_finished(events)) events.clear();
  check(rc, "clWaitForEvents", doing);
}

/// For cleanup paths: never throws and never gives up early. A failed flush
/// or wait is reported, then the events are polled until every one has
/// finished (or a minute has passed), so that memory is never freed or
/// unmapped under a command that still uses it. Returns whether all went well.
inline bool wait_for_noexcept(const EventList& events, cl_command_queue queue, const char* doing) noexcept {
  if (events.empty()) return true;
  bool ok = true;
  cl_int rc = clFlush(queue);
  if (rc != CL_SUCCESS) {
    report_cleanup(Error(doing, "clFlush", rc));
    ok = false;
  }
  rc = clWaitForEvents(events.count(), events.data());
  if (rc == CL_SUCCESS) return ok;
  report_cleanup(Error(doing, "clWaitForEvents", rc));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!all_finished(events) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  return false;
}

}  // namespace detail
}  // namespace clzero
