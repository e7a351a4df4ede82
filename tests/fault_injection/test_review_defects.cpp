// SPDX-License-Identifier: Apache-2.0
// Defects found by reviewing the code against the spec's ordering rules
// (docs/reliability.md lists them), one test each, written to fail before
// the fix. They run under the fault layer: its shadow maps give every map
// fresh memory (poisoned where the map invalidates), and it counts the
// events the application holds.
#include <clzero/clzero.hpp>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness/fault_layer.hpp"
#include "support/catch.hpp"
#include "support/probes.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

struct Queue {
  explicit Queue(cl_command_queue_properties props) : q(Env::get().make_queue(props)) {}
  ~Queue() { clReleaseCommandQueue(q); }
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;
  cl_command_queue q;
};

struct Buffer {
  explicit Buffer(std::size_t bytes) {
    cl_int rc = CL_SUCCESS;
    mem = clCreateBuffer(Env::get().context, CL_MEM_READ_WRITE, bytes, nullptr, &rc);
    ok(rc, "clCreateBuffer");
  }
  ~Buffer() { clReleaseMemObject(mem); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  cl_mem mem = nullptr;
};

// While alive, every map of a buffer returns fresh memory: what a map with
// CL_MAP_WRITE_INVALIDATE_REGION leaves undefined reads as 0xa5 bytes.
struct ShadowMaps {
  ShadowMaps() { FaultLayer::get().shadow_maps(true); }
  ~ShadowMaps() { FaultLayer::get().shadow_maps(false); }
  ShadowMaps(const ShadowMaps&) = delete;
  ShadowMaps& operator=(const ShadowMaps&) = delete;
};

std::vector<std::uint32_t> read_back(cl_command_queue q, cl_mem m, std::size_t n) {
  std::vector<std::uint32_t> out(n);
  ok(clFinish(q), "clFinish");
  ok(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * 4, out.data(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
  return out;
}

// Polls `e` until it has finished or `ms` have passed; whether it finished.
bool finishes_within_ms(cl_event e, int ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  cl_int status = CL_QUEUED;
  for (;;) {
    ok(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr), "clGetEventInfo");
    if (status <= CL_COMPLETE) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

template <class Tensor>
void wait_until_host_ready(Tensor& t) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!t.host_ready() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// ---- defect 1 ---------------------------------------------------------------

// A read-only access keeps the read mapping; the kernel that reads is held
// by a gate. The next access writes new values: its kernel must not run
// before the reader, or the reader copies the new values.
template <class Policy>
void reader_is_not_overtaken(const typename Policy::Options& options, cl_command_queue tensor_queue,
                             cl_command_queue reader_queue) {
  Env& env = Env::get();
  const cl_uint n = 4096;
  const std::size_t global = n;
  Kernel fill("fill_u32"), copy("copy_u32");
  Buffer copied(n * 4);
  MappedTensor<std::uint32_t, Policy> t(env.context, tensor_queue, {n}, Intent::output, options);
  for (cl_uint iter = 1; iter <= 3; ++iter) {
    {
      auto dev = t.device_access();
      dev.bind(fill.k, 0);
      fill.arg(1, n);
      fill.arg(2, iter);
      launch(tensor_queue, fill.k, n, dev);
    }
    Gate gate;
    {
      auto dev = t.device_access(Access::read);
      dev.bind(copy.k, 0);
      copy.arg(1, copied.mem);
      copy.arg(2, n);
      std::vector<cl_event> waits(dev.waits().begin(), dev.waits().end());
      waits.push_back(gate.event);
      ok(clEnqueueNDRangeKernel(reader_queue, copy.k, 1, nullptr, &global, nullptr, static_cast<cl_uint>(waits.size()),
                                waits.data(), dev.event_slot()),
         "clEnqueueNDRangeKernel");
    }
    ok(clFlush(reader_queue), "clFlush");
    cl_event writer = nullptr;
    {
      auto dev = t.device_access(Access::write);
      dev.bind(fill.k, 0);
      fill.arg(2, iter + 100);
      ok(clEnqueueNDRangeKernel(tensor_queue, fill.k, 1, nullptr, &global, nullptr, dev.wait_count(), dev.wait_list(),
                                &writer),
         "clEnqueueNDRangeKernel");
      dev.used_by(writer);
    }
    ok(clFlush(tensor_queue), "clFlush");
    // Only a writer ordered after the gated reader waits here; the verdict is the data.
    const bool overtook = finishes_within_ms(writer, 200);
    clReleaseEvent(writer);
    gate.open();
    ok(clFinish(reader_queue), "clFinish");
    const std::vector<std::uint32_t> seen = read_back(reader_queue, copied.mem, n);
    std::size_t wrong = 0;
    for (cl_uint i = 0; i < n; ++i) wrong += seen[i] != value(i, iter);
    INFO(Policy::name << ", iteration " << iter << ": the writing kernel " << (overtook ? "ran before" : "waited for")
                      << " the reading one");
    CHECK(wrong == 0);
    auto view = t.read_view();
    std::size_t stale = 0;
    for (cl_uint i = 0; i < n; ++i) stale += view[i] != value(i, iter + 100);
    CHECK(stale == 0);
  }
}

}  // namespace

TEST_CASE("D-review-1: a write access never overtakes the kernels of an earlier read-only access", "[review_defects]") {
  Env& env = Env::get();
  SECTION("Persistent, out-of-order queue") {
    CLZERO_NEEDS(env.caps.out_of_order_queue, "out-of-order queue");
    Queue ooo(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    reader_is_not_overtaken<policy::Persistent>({}, ooo.q, ooo.q);
  }
  SECTION("Persistent, reader on a second queue") {
    Queue second(0);
    reader_is_not_overtaken<policy::Persistent>({}, env.queue, second.q);
  }
#if defined(CL_VERSION_2_0)
  SECTION("coarse-grained Svm, out-of-order queue") {
    CLZERO_NEEDS(env.caps.out_of_order_queue && env.caps.svm_coarse_grain_buffer,
                 "out-of-order queue or no coarse-grained buffer SVM");
    Queue ooo(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    reader_is_not_overtaken<policy::Svm>({policy::Svm::Grain::coarse}, ooo.q, ooo.q);
  }
  SECTION("coarse-grained Svm, reader on a second queue") {
    CLZERO_NEEDS(env.caps.svm_coarse_grain_buffer, "coarse-grained buffer SVM");
    Queue second(0);
    reader_is_not_overtaken<policy::Svm>({policy::Svm::Grain::coarse}, env.queue, second.q);
  }
#endif
}

// ---- defect 2 ---------------------------------------------------------------

namespace {

// Writes an input once, then hands it to a copying kernel three times with
// no host write in between: every copy must hold what the host wrote.
template <class Policy>
void input_keeps_its_contents(const typename Policy::Options& options) {
  Env& env = Env::get();
  ShadowMaps shadow;
  const cl_uint n = 4096;
  Kernel copy("copy_u32");
  Buffer copied(n * 4);
  MappedTensor<std::uint32_t, Policy> t(env.context, env.queue, {n}, Intent::input, options);
  for (cl_uint iter = 1; iter <= 3; ++iter) {
    {
      auto view = t.write_view();
      for (cl_uint i = 0; i < n; ++i) view[i] = value(i, iter);
    }
    for (int use = 1; use <= 3; ++use) {
      {
        auto dev = t.device_access();
        dev.bind(copy.k, 0);
        copy.arg(1, copied.mem);
        copy.arg(2, n);
        launch(env.queue, copy.k, n, dev);
      }
      const std::vector<std::uint32_t> seen = read_back(env.queue, copied.mem, n);
      std::size_t wrong = 0;
      for (cl_uint i = 0; i < n; ++i) wrong += seen[i] != value(i, iter);
      INFO(Policy::name << ", iteration " << iter << ", use " << use << " since the host wrote; element 0 is 0x"
                        << std::hex << seen[0]);
      CHECK(wrong == 0);
      // Whatever clzero enqueued after the kernel has run before the next use.
      wait_until_host_ready(t);
    }
  }
}

}  // namespace

TEST_CASE("D-review-2: an input used again without a host write keeps its contents, on every policy",
          "[review_defects]") {
  Env& env = Env::get();
  SECTION("MapPerInference") { input_keeps_its_contents<policy::MapPerInference>({}); }
  SECTION("Persistent") { input_keeps_its_contents<policy::Persistent>({}); }
  SECTION("CopyToPinned") { input_keeps_its_contents<policy::CopyToPinned>({}); }
  SECTION("Auto") { input_keeps_its_contents<policy::Auto>({}); }
#if defined(CL_VERSION_2_0)
  SECTION("fine-grained Svm") {
    if (env.caps.svm_fine_grain_buffer)
      input_keeps_its_contents<policy::Svm>({policy::Svm::Grain::fine});
    else
      CLZERO_NOT_RUN("not run: the device offers no fine-grained buffer SVM");
  }
  SECTION("coarse-grained Svm") {
    if (env.caps.svm_coarse_grain_buffer)
      input_keeps_its_contents<policy::Svm>({policy::Svm::Grain::coarse});
    else
      CLZERO_NOT_RUN("not run: the device offers no coarse-grained buffer SVM");
  }
#endif
  SECTION("UnifiedHost") {
    if (env.caps.intel_usm_host)
      input_keeps_its_contents<policy::UnifiedHost>({});
    else
      CLZERO_NOT_RUN("not run: the device offers no Intel USM host allocations");
  }
}

// ---- issue 13 item 4: input arenas written one part at a time ----------------

namespace {

// Two input parts, each written in its own view (and, in the second half,
// in its own host phase with a device access between): a kernel copying
// the whole arena must see every element of both parts as last written.
template <class Policy>
void parts_written_one_at_a_time(const typename Policy::Options& options) {
  Env& env = Env::get();
  ShadowMaps shadow;
  const std::size_t n0 = 1000, n1 = 777;
  TensorArena<Policy> arena(env.context, env.queue,
                            {ArenaPart::of<std::uint32_t>({n0}), ArenaPart::of<std::uint32_t>({n1})}, Intent::input,
                            options);
  const std::size_t bytes = arena.tensor().bytes();
  Kernel copy("copy_u8");
  Buffer copied(bytes);
  std::uint32_t want0 = 0, want1 = 0;
  auto write_part = [&](std::size_t part, std::uint32_t iter) {
    auto view = arena.template write_view<std::uint32_t>(part);
    for (std::uint32_t i = 0; i < view.size(); ++i) view[i] = value(i, iter);
    (part == 0 ? want0 : want1) = iter;
  };
  auto run_and_check = [&](const char* when) {
    {
      auto dev = arena.tensor().device_access();
      dev.bind(copy.k, 0);
      copy.arg(1, copied.mem);
      copy.arg(2, static_cast<cl_uint>(bytes));
      launch(env.queue, copy.k, bytes, dev);
    }
    std::vector<unsigned char> raw(bytes);
    ok(clFinish(env.queue), "clFinish");
    ok(clEnqueueReadBuffer(env.queue, copied.mem, CL_TRUE, 0, bytes, raw.data(), 0, nullptr, nullptr),
       "clEnqueueReadBuffer");
    std::size_t wrong0 = 0, wrong1 = 0;
    for (std::uint32_t i = 0; i < n0; ++i) {
      std::uint32_t v;
      std::memcpy(&v, raw.data() + arena.offset(0) + 4 * i, 4);
      wrong0 += v != value(i, want0);
    }
    for (std::uint32_t i = 0; i < n1; ++i) {
      std::uint32_t v;
      std::memcpy(&v, raw.data() + arena.offset(1) + 4 * i, 4);
      wrong1 += v != value(i, want1);
    }
    INFO(Policy::name << ", " << when);
    CHECK(wrong0 == 0);
    CHECK(wrong1 == 0);
    wait_until_host_ready(arena.tensor());
  };
  for (std::uint32_t iter = 1; iter <= 3; ++iter) {
    write_part(0, 10 * iter);
    write_part(1, 10 * iter + 1);
    run_and_check("both parts written in separate views of one host phase");
    write_part(0, 10 * iter + 2);
    run_and_check("part 0 rewritten, part 1 kept from the inference before");
    write_part(1, 10 * iter + 3);
    run_and_check("part 1 rewritten, part 0 kept from the inference before");
  }
}

}  // namespace

TEST_CASE("Issue 13 item 4: input arena parts written one at a time keep the other parts, on every policy",
          "[review_defects]") {
  Env& env = Env::get();
  SECTION("MapPerInference") { parts_written_one_at_a_time<policy::MapPerInference>({}); }
  SECTION("Persistent") { parts_written_one_at_a_time<policy::Persistent>({}); }
  SECTION("CopyToPinned") { parts_written_one_at_a_time<policy::CopyToPinned>({}); }
  SECTION("Auto") { parts_written_one_at_a_time<policy::Auto>({}); }
#if defined(CL_VERSION_2_0)
  SECTION("fine-grained Svm") {
    if (env.caps.svm_fine_grain_buffer)
      parts_written_one_at_a_time<policy::Svm>({policy::Svm::Grain::fine});
    else
      CLZERO_NOT_RUN("not run: the device offers no fine-grained buffer SVM");
  }
  SECTION("coarse-grained Svm") {
    if (env.caps.svm_coarse_grain_buffer)
      parts_written_one_at_a_time<policy::Svm>({policy::Svm::Grain::coarse});
    else
      CLZERO_NOT_RUN("not run: the device offers no coarse-grained buffer SVM");
  }
#endif
  SECTION("UnifiedHost") {
    if (env.caps.intel_usm_host)
      parts_written_one_at_a_time<policy::UnifiedHost>({});
    else
      CLZERO_NOT_RUN("not run: the device offers no Intel USM host allocations");
  }
}

// ---- defect 8 ---------------------------------------------------------------

TEST_CASE("D-review-8: read-only accesses do not hold events the tensor no longer needs", "[review_defects]") {
  Env& env = Env::get();
  FaultLayer& layer = FaultLayer::get();
  const cl_uint n = 256;
  const std::size_t global = n;
  Kernel fill("fill_u32"), copy("copy_u32");
  Buffer copied(n * 4);
  auto run = [&](auto& t) {
    {
      auto dev = t.device_access();
      dev.bind(fill.k, 0);
      fill.arg(1, n);
      fill.arg(2, cl_uint{7});
      launch(env.queue, fill.k, n, dev);
    }
    const long before = layer.counts().live_events;
    for (int i = 0; i < 1000; ++i) {
      auto dev = t.device_access(Access::read);
      dev.bind(copy.k, 0);
      copy.arg(1, copied.mem);
      copy.arg(2, n);
      cl_event done = nullptr;
      ok(clEnqueueNDRangeKernel(env.queue, copy.k, 1, nullptr, &global, nullptr, dev.wait_count(), dev.wait_list(),
                                &done),
         "clEnqueueNDRangeKernel");
      dev.used_by(done);
      dev.end();
      ok(clWaitForEvents(1, &done), "clWaitForEvents");
      clReleaseEvent(done);
    }
    const long held = layer.counts().live_events - before;
    INFO(t.policy().describe() << ": events held after 1000 read-only accesses whose kernels have completed");
    CHECK(held <= 2);
    const std::vector<std::uint32_t> seen = read_back(env.queue, copied.mem, n);
    std::size_t wrong = 0;
    for (cl_uint i = 0; i < n; ++i) wrong += seen[i] != value(i, 7);
    CHECK(wrong == 0);
  };
  SECTION("Persistent") {
    MappedTensor<std::uint32_t, policy::Persistent> t(env.context, env.queue, {n}, Intent::output);
    run(t);
  }
#if defined(CL_VERSION_2_0)
  SECTION("coarse-grained Svm") {
    CLZERO_NEEDS(env.caps.svm_coarse_grain_buffer, "coarse-grained buffer SVM");
    MappedTensor<std::uint32_t, policy::Svm> t(env.context, env.queue, {n}, Intent::output,
                                               {policy::Svm::Grain::coarse});
    run(t);
  }
#endif
}

// ---- defect 9 ---------------------------------------------------------------

TEST_CASE("D-review-9: a copy of an EventList that fails part-way holds no event", "[review_defects]") {
  Env& env = Env::get();
  FaultLayer& layer = FaultLayer::get();
  ok(clFinish(env.queue), "clFinish");
  const long before = layer.counts().live_events;
  {
    EventList list;  // five events of real commands, which the layer counts
    for (int i = 0; i < 5; ++i) {
      cl_event e = nullptr;
      ok(clEnqueueMarkerWithWaitList(env.queue, 0, nullptr, &e), "clEnqueueMarkerWithWaitList");
      list.adopt(e);
    }
    ok(clFinish(env.queue), "clFinish");
    REQUIRE(layer.counts().live_events == before + 5);
    layer.reset();
    layer.arm("clRetainEvent", 3, CL_OUT_OF_RESOURCES, CLZERO_FAULT_IMMEDIATE);
    bool threw = false;
    try {
      EventList copy(list);
    } catch (const Error& e) {
      threw = true;
      CHECK(std::string(e.what()).find("clRetainEvent") != std::string::npos);
    }
    const char* fired = layer.fired();
    layer.disarm();
    REQUIRE(fired != nullptr);
    CHECK(threw);
    // The assignment gives the strong guarantee through the constructor.
    EventList target;
    layer.reset();
    layer.arm("clRetainEvent", 4, CL_OUT_OF_RESOURCES, CLZERO_FAULT_IMMEDIATE);
    CHECK_THROWS_AS(target = list, Error);
    layer.disarm();
    CHECK(target.empty());
  }
  // With the list gone, an event is still alive only if a reference leaked.
  INFO("events still held after the list and its failed copies are gone");
  CHECK(layer.counts().live_events == before);
}

// ---- defect 5 ---------------------------------------------------------------

namespace {

// What device_access() calls, in order, for a tensor whose last step left a
// command for the next access's kernels to wait on (an unmap, an upload).
template <class Policy>
std::vector<std::string> calls_of_device_access(const typename Policy::Options& options, Intent intent) {
  Env& env = Env::get();
  FaultLayer& layer = FaultLayer::get();
  MappedTensor<std::uint32_t, Policy> t(env.context, env.queue, {1024}, intent, options);
  if (intent == Intent::input) {
    auto view = t.write_view();
    for (std::uint32_t i = 0; i < view.size(); ++i) view[i] = value(i, 5);
  } else {
    wait_until_host_ready(t);
  }
  layer.reset();
  auto dev = t.device_access();
  (void)dev.wait_list();  // handed out for kernels on a queue clzero does not know
  std::vector<std::string> calls = layer.calls();
  INFO(Policy::name << ": the access's kernels wait on " << dev.wait_count() << " event(s)");
  CHECK(dev.wait_count() > 0);
  // Handed out again, or for the tensor's own in-order queue: no more calls.
  layer.reset();
  (void)dev.wait_list();
  (void)dev.waits();
  CHECK(dev.wait_count(env.queue) == 0);
  CHECK(dev.wait_list(env.queue) == nullptr);
  dev.enqueue_barrier(env.queue);
  CHECK(layer.calls().empty());
  return calls;
}

std::string joined(const std::vector<std::string>& calls) {
  std::string s;
  for (const std::string& c : calls) s += c + " ";
  return s;
}

// The wait list may name a command only the tensor's queue holds: a kernel on
// another queue waiting on it needs that queue flushed (OpenCL 3.0 section
// 5.13), and the engine cannot know to do it. Once the list is handed out,
// the last call is the flush; for the tensor's own in-order queue the list
// is empty and nothing is flushed (the queue orders the kernels).
void flushed_after_enqueue(const std::vector<std::string>& calls) {
  INFO("device_access() called: " << joined(calls));
  REQUIRE_FALSE(calls.empty());
  CHECK(calls.back() == "clFlush");
}

}  // namespace

TEST_CASE(
    "D-review-5: handing out a device access's wait list submits the tensor's queue, whose commands the "
    "kernels wait on",
    "[review_defects]") {
  SECTION("Persistent, output (unmap)") {
    flushed_after_enqueue(calls_of_device_access<policy::Persistent>({}, Intent::output));
  }
  SECTION("Persistent, input (unmap)") {
    flushed_after_enqueue(calls_of_device_access<policy::Persistent>({}, Intent::input));
  }
  SECTION("MapPerInference, input (the view's unmap)") {
    flushed_after_enqueue(calls_of_device_access<policy::MapPerInference>({}, Intent::input));
  }
  SECTION("CopyToPinned, input (upload)") {
    flushed_after_enqueue(calls_of_device_access<policy::CopyToPinned>({}, Intent::input));
  }
#if defined(CL_VERSION_2_0)
  SECTION("coarse-grained Svm, output (unmap)") {
    if (Env::get().caps.svm_coarse_grain_buffer)
      flushed_after_enqueue(calls_of_device_access<policy::Svm>({policy::Svm::Grain::coarse}, Intent::output));
    else
      CLZERO_NOT_RUN("not run: the device offers no coarse-grained buffer SVM");
  }
#endif
}
