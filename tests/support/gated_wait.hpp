// SPDX-License-Identifier: Apache-2.0
// Waits that are sure to be waits: a kernel (or a bare user event) held
// behind a user event that a thread completes a set time after the waiting
// thread first looks at an event or calls clWaitForEvents. Whatever this
// machine's speed, the first look then finds the wait not over, so that
// what a view did (polled, or blocked at once) can be told from the calls
// it made. The executables that use this count those calls themselves, by
// defining clWaitForEvents and clGetEventInfo (support/interpose.hpp), and
// hand their counters in.
#pragma once

#include <clzero/clzero.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "support/freshness.hpp"
#include "support/test_env.hpp"

namespace clzero_test {

/// The calls one wait made: clWaitForEvents, and status queries
/// (CL_EVENT_COMMAND_EXECUTION_STATUS).
struct WaitCounters {
  std::atomic<int> waits{0};
  std::atomic<int> looks{0};
};

/// What one view's opening (or one wait) did.
struct Opened {
  int waits = 0;
  int looks = 0;
};

/// A thread that completes `user` `gate` after the waiting thread first
/// looks at an event or calls clWaitForEvents (the counters past `before`),
/// so that the first look always finds the wait not over, however late this
/// thread or the waiting one is scheduled. Gives up waiting for a look after
/// 10 s. finish() spins until the thread is done before joining it, so that
/// the waiting thread stays on its core after its wait (a join that blocks
/// while the thread still runs clSetUserEventStatus takes it off its core,
/// which a test of what clzero does after the thread was idle must not).
class Opener {
 public:
  Opener() = default;
  Opener(cl_event user, std::chrono::microseconds gate, const WaitCounters& c, int before)
      : done_(std::make_shared<std::atomic<bool>>(false)) {
    thread_ = std::thread([user, gate, before, &c, done = done_] {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (c.looks.load() + c.waits.load() == before && std::chrono::steady_clock::now() < give_up)
        std::this_thread::yield();
      std::this_thread::sleep_for(gate);
      clSetUserEventStatus(user, CL_COMPLETE);
      done->store(true);
    });
  }
  Opener(Opener&&) = default;
  Opener& operator=(Opener&&) = default;
  ~Opener() { finish(); }
  void finish() {
    if (!thread_.joinable()) return;
    while (!done_->load()) {
    }
    thread_.join();
  }

 private:
  std::shared_ptr<std::atomic<bool>> done_;
  std::thread thread_;
};

/// One inference through `t`: where `gate` is positive, the kernel waits
/// behind a user event that a thread completes `gate` later; the host opens
/// a view (counted) and reads every element. Adds the wrong elements to
/// `wrong`. `before_view`, if given, runs right before the view opens, after
/// the kernel was enqueued (a sleep or a spin of the thread, say).
template <class Tensor, class BeforeView>
Opened gated_inference(Tensor& t, Kernel& fill, std::size_t n, std::uint32_t iter, std::chrono::microseconds gate,
                       std::size_t& wrong, WaitCounters& c, BeforeView before_view) {
  Env& env = Env::get();
  cl_event user = nullptr;
  if (gate.count() > 0) {
    cl_int rc = CL_SUCCESS;
    user = clCreateUserEvent(env.context, &rc);
    ok(rc, "clCreateUserEvent");
    ok(clEnqueueMarkerWithWaitList(env.queue, 1, &user, nullptr), "clEnqueueMarkerWithWaitList");
  }
  fill_iteration(t, fill, n, iter);
  before_view();
  Opened o;
  const int waits_before = c.waits.load(), looks_before = c.looks.load();
  Opener opener;
  if (user != nullptr) opener = Opener(user, gate, c, waits_before + looks_before);
  {
    auto view = t.read_view();
    o.waits = c.waits.load() - waits_before;
    o.looks = c.looks.load() - looks_before;
    for (std::size_t i = 0; i < n; ++i) wrong += view[i] != value(static_cast<std::uint32_t>(i), iter) ? 1 : 0;
  }
  opener.finish();
  if (user != nullptr) clReleaseEvent(user);
  return o;
}

template <class Tensor>
Opened gated_inference(Tensor& t, Kernel& fill, std::size_t n, std::uint32_t iter, std::chrono::microseconds gate,
                       std::size_t& wrong, WaitCounters& c) {
  return gated_inference(t, fill, n, iter, gate, wrong, c, [] {});
}

/// A list holding one user event already set to `status` (CL_COMPLETE, or
/// a negative error): a wait on it is over at its first look.
inline clzero::EventList settled_event(cl_int status) {
  cl_int rc = CL_SUCCESS;
  cl_event user = clCreateUserEvent(Env::get().context, &rc);
  ok(rc, "clCreateUserEvent");
  clzero::EventList events;
  events.retain(user);
  clReleaseEvent(user);
  ok(clSetUserEventStatus(user, status), "clSetUserEventStatus");
  return events;
}

/// Waits through detail::await for a user event that a thread completes
/// `gate` later; what the wait did.
inline Opened await_gated(const clzero::detail::HostWait& w, std::chrono::microseconds gate, WaitCounters& c) {
  cl_int rc = CL_SUCCESS;
  cl_event user = clCreateUserEvent(Env::get().context, &rc);
  ok(rc, "clCreateUserEvent");
  clzero::EventList events;
  events.retain(user);
  const int waits_before = c.waits.load(), looks_before = c.looks.load();
  Opener opener(user, gate, c, waits_before + looks_before);
  const cl_int done = clzero::detail::await(events, w);
  Opened o{c.waits.load() - waits_before, c.looks.load() - looks_before};
  opener.finish();
  clReleaseEvent(user);
  ok(done, "detail::await");
  return o;
}

}  // namespace clzero_test
