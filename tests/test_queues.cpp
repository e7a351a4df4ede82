// SPDX-License-Identifier: Apache-2.0
// The engine's queues: out-of-order queues ordered by events, producers on
// another queue, and never draining the engine's queue.
#include <clzero/clzero.hpp>

#include <chrono>
#include <cstdint>
#include <future>
#include <string>
#include <thread>
#include <type_traits>

#include "support/catch.hpp"
#include "support/freshness.hpp"
#include "support/probes.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

struct Queue {
  explicit Queue(cl_command_queue_properties props) : q(Env::get().make_queue(props)) {}
  ~Queue() { clReleaseCommandQueue(q); }
  cl_command_queue q;
};

bool out_of_order_supported() { return Env::get().caps.out_of_order_queue; }

template <class Policy>
void fresh_on_out_of_order_queue(const typename Policy::Options& options) {
  Queue ooo(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  for (std::size_t n : {std::size_t{1}, std::size_t{4096}, std::size_t{1} << 18}) {
    INFO(Policy::name << ", " << n << " elements");
    const Verdict v = output_freshness<std::uint32_t, Policy>(options, n, 12, ooo.q);
    INFO(v.first_wrong);
    CHECK(v.wrong == 0);
    CHECK(v.checked == n * 12);
  }
}

}  // namespace

TEST_CASE("an out-of-order queue gives fresh data when events are handed in", "[queues]") {
  if (!out_of_order_supported()) {
    // The device has no out-of-order queues: creating one must fail, so the
    // engine cannot have one either.
    bool created = true;
    try {
      clReleaseCommandQueue(Env::get().make_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE));
    } catch (const std::exception&) {
      created = false;
    }
    CHECK_FALSE(created);
    return;
  }
  fresh_on_out_of_order_queue<policy::Persistent>({});
  fresh_on_out_of_order_queue<policy::MapPerInference>({});
  fresh_on_out_of_order_queue<policy::CopyToPinned>({});
  fresh_on_out_of_order_queue<policy::Auto>({});
}

TEST_CASE("an out-of-order queue gives fresh data even without recorded events", "[queues]") {
  CLZERO_NEEDS(out_of_order_supported(), "out-of-order queue (the test above covers it)");
  Queue ooo(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Env& env = Env::get();
  MappedTensor<std::uint32_t, policy::Persistent> t(env.context, ooo.q, {65536}, Intent::output, {});
  Kernel fill("fill_u32");
  for (cl_uint iter = 1; iter <= 10; ++iter) {
    {
      auto dev = t.device_access();
      dev.bind(fill.k, 0);
      fill.arg(1, cl_uint{65536});
      fill.arg(2, iter);
      std::size_t n = 65536;
      // The kernel waits on the unmap but its event is not handed back:
      // clzero orders its map after a marker of everything enqueued so far.
      ok(clEnqueueNDRangeKernel(ooo.q, fill.k, 1, nullptr, &n, nullptr, dev.wait_count(), dev.wait_list(), nullptr),
         "clEnqueueNDRangeKernel");
    }
    auto view = t.read_view();
    std::size_t wrong = 0;
    for (std::uint32_t i = 0; i < 65536; ++i) wrong += view[i] != value(i, iter);
    REQUIRE(wrong == 0);
  }
}

TEST_CASE("a barrier orders a library call that takes no wait list", "[queues]") {
  CLZERO_NEEDS(out_of_order_supported(), "out-of-order queue (an in-order queue orders the call anyway)");
  Queue ooo(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Env& env = Env::get();
  MappedTensor<std::uint32_t, policy::Persistent> t(env.context, ooo.q, {65536}, Intent::output, {});
  Kernel fill("fill_u32");
  for (cl_uint iter = 1; iter <= 10; ++iter) {
    {
      auto dev = t.device_access();
      dev.enqueue_barrier(ooo.q);  // what an engine does before, say, a CLBlast call
      dev.bind(fill.k, 0);
      fill.arg(1, cl_uint{65536});
      fill.arg(2, iter);
      std::size_t n = 65536;
      ok(clEnqueueNDRangeKernel(ooo.q, fill.k, 1, nullptr, &n, nullptr, 0, nullptr, dev.event_slot()),
         "clEnqueueNDRangeKernel");
    }
    auto view = t.read_view();
    std::size_t wrong = 0;
    for (std::uint32_t i = 0; i < 65536; ++i) wrong += view[i] != value(i, iter);
    REQUIRE(wrong == 0);
  }
}

namespace {

// A producer on a second in-order queue, never flushed by the test: its
// event reaches the tensor through event_slot(queue) (launch), or through
// used_by(), where clzero cannot know its queue and asks for it
// (clGetEventInfo). Either way clzero submits that queue before its own
// commands wait on it (OpenCL 3.0 section 5.13), and every element is fresh.
void producer_on_another_queue(bool through_used_by) {
  Env& env = Env::get();
  Queue producer(0);
  MappedTensor<std::uint32_t, policy::Persistent> t(env.context, env.queue, {8192}, Intent::output, {});
  Kernel fill("fill_u32");
  for (cl_uint iter = 1; iter <= 8; ++iter) {
    {
      auto dev = t.device_access();
      dev.bind(fill.k, 0);
      fill.arg(1, cl_uint{8192});
      fill.arg(2, iter);
      if (through_used_by) {
        const std::size_t global = 8192;
        cl_event done = nullptr;
        ok(clEnqueueNDRangeKernel(producer.q, fill.k, 1, nullptr, &global, nullptr, dev.wait_count(producer.q),
                                  dev.wait_list(producer.q), &done),
           "clEnqueueNDRangeKernel");
        dev.used_by(done);
        clReleaseEvent(done);
      } else {
        launch(producer.q, fill.k, 8192, dev);
      }
    }
    auto view = t.read_view();
    std::size_t wrong = 0;
    for (std::uint32_t i = 0; i < 8192; ++i) wrong += view[i] != value(i, iter);
    REQUIRE(wrong == 0);
  }
}

}  // namespace

TEST_CASE("a producer on another queue is flushed and waited for", "[queues]") { producer_on_another_queue(false); }

TEST_CASE("a producer on another queue, its event handed in with used_by(), is flushed and waited for", "[queues]") {
  producer_on_another_queue(true);
}

namespace {

// If clzero drained the queue (clFinish) or waited for anything but its own
// step, the view would block behind the gate and the reader would time out.
// A lone tensor on a device whose host wait is a map at the view
// (detail/wait_method.hpp) is the documented exception: its view's blocking
// map joins the queue behind the gate, and returns once the gate opens. A
// TensorRing's slots never are.
template <class Policy>
void view_ignores_later_work(const char* name, bool in_ring) {
  Env& env = Env::get();
  INFO(name << (in_ring ? " (a TensorRing's slot)" : " (a lone tensor)"));
  TensorRing<std::uint32_t, Policy> ring(env.context, env.queue, {4096}, Intent::output, 1, typename Policy::Options{});
  MappedTensor<std::uint32_t, Policy> lone(env.context, env.queue, {4096}, Intent::output, typename Policy::Options{});
  MappedTensor<std::uint32_t, Policy>& t = in_ring ? ring[0] : lone;
  Kernel fill("fill_u32");
  Gate gate;
  {
    auto dev = t.device_access();
    dev.bind(fill.k, 0);
    fill.arg(1, cl_uint{4096});
    fill.arg(2, cl_uint{5});
    launch(env.queue, fill.k, 4096, dev);
  }
  const bool maps_at_view =
      detail::host_side_deferred(t.policy(), 0) && !std::is_same<Policy, policy::MapPerInference>::value;
  CHECK_FALSE((in_ring && maps_at_view));
  // Unrelated work after the producer that cannot finish before the gate opens.
  cl_event blocked = nullptr;
  ok(clEnqueueMarkerWithWaitList(env.queue, 1, &gate.event, &blocked), "clEnqueueMarkerWithWaitList");
  auto reader = std::async(std::launch::async, [&] {
    auto view = t.read_view();
    std::size_t wrong = 0;
    for (std::uint32_t i = 0; i < 4096; ++i) wrong += view[i] != value(i, 5);
    return wrong;
  });
  const bool done = finishes_within(reader, maps_at_view ? 0.5 : 60.0);
  gate.open();
  clWaitForEvents(1, &blocked);
  clReleaseEvent(blocked);
  if (maps_at_view) {
    CHECK_FALSE(done);  // the view's map waited behind the gate, as documented
    REQUIRE(finishes_within(reader, 60.0));
  } else {
    REQUIRE(done);
  }
  CHECK(reader.get() == 0);
}

}  // namespace

TEST_CASE("a host view never waits for work enqueued after the producer", "[queues]") {
  for (bool in_ring : {true, false}) {
    view_ignores_later_work<policy::Persistent>("Persistent", in_ring);
    view_ignores_later_work<policy::CopyToPinned>("CopyToPinned", in_ring);
    view_ignores_later_work<policy::Auto>("Auto", in_ring);
#if defined(CL_VERSION_2_0)
    if (Env::get().caps.svm_fine_grain_buffer) view_ignores_later_work<policy::Svm>("Svm", in_ring);
#endif
  }
}

namespace {

// Two device accesses in a row, their kernels on two queues: one on the
// tensor's own in-order queue, one on another in-order queue, each enqueued
// as the docs show for its queue (wait_count(queue), wait_list(queue),
// event_slot(queue)). The first kernel is held behind a gate; only the events
// clzero hands out can order the second after it. So the second kernel must
// not run while the gate is closed, and once it opens the host must read the
// second kernel's values in every element: a second kernel that ran
// unordered is overwritten by the first when the gate opens.
template <class Policy>
void accesses_on_two_queues(const char* name, const typename Policy::Options& options, bool first_on_own) {
  Env& env = Env::get();
  Queue other(0);
  const std::size_t n = 4096;
  MappedTensor<std::uint32_t, Policy> t(env.context, env.queue, {n}, Intent::output, options);
  Kernel first("fill_u32");
  Kernel second("fill_u32");
  cl_command_queue first_queue = first_on_own ? env.queue : other.q;
  cl_command_queue second_queue = first_on_own ? other.q : env.queue;
  for (cl_uint iter = 1; iter <= 2; ++iter) {
    INFO(name << (first_on_own ? ": first kernel on the tensor's queue, second on another"
                               : ": first kernel on another queue, second on the tensor's")
              << ", inference " << iter);
    const cl_uint held_value = 100 + iter;
    const cl_uint second_value = 200 + iter;
    Gate gate;
    // The engine's own wait, before the access: what follows on first_queue
    // (an in-order queue) waits for the gate.
    cl_event held = nullptr;
    ok(clEnqueueMarkerWithWaitList(first_queue, 1, &gate.event, &held), "clEnqueueMarkerWithWaitList");
    // One device access whose kernel runs on `queue`, enqueued as the docs
    // show for that queue.
    auto access_on = [&](cl_command_queue queue, Kernel& fill, cl_uint written, const char* what) {
      auto dev = t.device_access();
      dev.bind(fill.k, 0);
      fill.arg(1, cl_uint(n));
      fill.arg(2, written);
      ok(clEnqueueNDRangeKernel(queue, fill.k, 1, nullptr, &n, nullptr, dev.wait_count(queue), dev.wait_list(queue),
                                dev.event_slot(queue)),
         what);
    };
    access_on(first_queue, first, held_value, "clEnqueueNDRangeKernel (first)");
    access_on(second_queue, second, second_value, "clEnqueueNDRangeKernel (second)");
    // Completes after the second kernel (in-order queue), and only after the
    // gate opens if that kernel waits for the first.
    cl_event after_second = nullptr;
    ok(clEnqueueMarkerWithWaitList(second_queue, 0, nullptr, &after_second), "clEnqueueMarkerWithWaitList");
    ok(clFlush(second_queue), "clFlush");
    ok(clFlush(first_queue), "clFlush");
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    cl_int status = CL_QUEUED;
    while (status != CL_COMPLETE && status >= 0 && std::chrono::steady_clock::now() < until) {
      ok(clGetEventInfo(after_second, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr),
         "clGetEventInfo");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    CHECK(status != CL_COMPLETE);  // the second kernel ran before the first was let go
    gate.open();
    {
      auto view = t.read_view();
      std::size_t wrong = 0;
      std::size_t first_wrong = n;
      for (std::uint32_t i = 0; i < n; ++i) {
        if (view[i] != value(i, second_value)) {
          if (wrong == 0) first_wrong = i;
          ++wrong;
        }
      }
      INFO("wrong elements: " << wrong << " of " << n << ", the first at " << first_wrong);
      CHECK(wrong == 0);
    }
    // Whatever ran unordered ends before the tensor's memory can go.
    ok(clFinish(other.q), "clFinish");
    ok(clFinish(env.queue), "clFinish");
    clReleaseEvent(after_second);
    clReleaseEvent(held);
  }
}

template <class Policy>
void accesses_on_two_queues_both_ways(const char* name, const typename Policy::Options& options = {}) {
  accesses_on_two_queues<Policy>(name, options, true);
  accesses_on_two_queues<Policy>(name, options, false);
}

}  // namespace

TEST_CASE("consecutive accesses whose kernels run on two queues are ordered", "[queues]") {
  accesses_on_two_queues_both_ways<policy::Persistent>("Persistent");
  accesses_on_two_queues_both_ways<policy::MapPerInference>("MapPerInference");
  accesses_on_two_queues_both_ways<policy::CopyToPinned>("CopyToPinned");
  accesses_on_two_queues_both_ways<policy::Auto>("Auto");
#if defined(CL_VERSION_2_0)
  if (Env::get().caps.svm_fine_grain_buffer)
    accesses_on_two_queues_both_ways<policy::Svm>("Svm (fine)", policy::Svm::Options{policy::Svm::Grain::fine});
  if (Env::get().caps.svm_coarse_grain_buffer)
    accesses_on_two_queues_both_ways<policy::Svm>("Svm (coarse)", policy::Svm::Options{policy::Svm::Grain::coarse});
#endif
}
