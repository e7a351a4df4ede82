// SPDX-License-Identifier: Apache-2.0
// Faults clzero once mishandled, found by the fault matrix
// (test_fault_matrix.cpp), one focused test each, written to fail before the
// fix: each states the rule and provokes the fault deterministically, where
// the matrix met it only by timing. docs/reliability.md, "What was found",
// describes each (its table D1-D13) with the commit that fixed it.
#include <clzero/clzero.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/fault_layer.hpp"
#include "harness/scenario.hpp"
#include "support/catch.hpp"
#include "support/probes.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

struct Reports {
  Reports() : previous(set_cleanup_error_handler(&record)) { list().clear(); }
  ~Reports() { set_cleanup_error_handler(previous); }
  Reports(const Reports&) = delete;
  Reports& operator=(const Reports&) = delete;
  static std::vector<std::string>& list() {
    static std::vector<std::string> reports;
    return reports;
  }
  static void record(const Error& e) noexcept { list().push_back(e.what()); }
  ErrorHandler previous;
};

bool any_violation_mentions(const char* text) {
  for (const std::string& v : FaultLayer::get().violations())
    if (v.find(text) != std::string::npos) return true;
  return false;
}

std::string violations() {
  std::string all;
  for (const std::string& v : FaultLayer::get().violations()) all += v + "\n";
  return all;
}

// Opens `gate` from another thread a little later: a release that waits for
// the gated command returns then; one that does not wait frees memory the
// gated command still uses, which the layer records. The outcome does not
// depend on the delay, only how long a correct release blocks.
std::thread open_later(Gate& gate) {
  return std::thread([&gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    FaultLayer::Paused paused;
    gate.open();
  });
}

// Runs one inference and reports what the application saw.
template <class Tensor>
std::string try_inference(Tensor& t, std::uint32_t iter) {
  scenario_detail::Kernels kernels;
  Outcome out;
  try {
    inference(t, kernels, iter, out);
  } catch (const Error& e) {
    return e.what();
  } catch (const KernelFailed& k) {
    return std::string("the engine's kernel ended with ") + error_name(k.status);
  }
  return out.problems.empty() ? "" : out.problems.front();
}

// After a failure the tensor works again, or says it does not.
template <class Tensor>
void usable_or_clearly_not(Tensor& t) {
  if (!t.usable()) {
    try {
      (void)t.device_access();
      FAIL("device_access() succeeded on a tensor that says it is unusable");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::unusable);
    }
    return;
  }
  for (std::uint32_t iter = 10; iter <= 12; ++iter) {
    INFO("usable() is true; inference " << iter << " after the failure");
    CHECK(try_inference(t, iter) == "");
  }
}

template <class Policy>
void command_ending_in_error(const typename Policy::Options& options, Intent intent, const char* call, long nth) {
  FaultLayer& layer = FaultLayer::get();
  set_spin_wait(std::chrono::nanoseconds(0));
  layer.reset();
  Reports reports;
  layer.arm(call, nth, CL_OUT_OF_RESOURCES, CLZERO_FAULT_ASYNC);
  {
    MappedTensor<std::uint32_t, Policy> t(Env::get().context, Env::get().queue, {scenario_detail::kElements}, intent,
                                          options);
    std::string first;
    for (std::uint32_t iter = 1; iter <= 3 && first.empty(); ++iter) first = try_inference(t, iter);
    INFO(Policy::name << ", intent " << to_string(intent) << ": " << call << " #" << nth
                      << " ends in error; the application saw: " << first);
    REQUIRE(layer.fired() != nullptr);
    CHECK_FALSE(first.empty());
    usable_or_clearly_not(t);
  }
  layer.disarm();
  CHECK(violations() == "");
}

}  // namespace

TEST_CASE("a command that ends in error leaves the tensor usable or clearly unusable", "[fault_regression]") {
  SECTION("MapPerInference: the zero fill ends in error") {
    command_ending_in_error<policy::MapPerInference>({}, Intent::output, "clEnqueueFillBuffer", 1);
  }
  SECTION("CopyToPinned: an upload ends in error") {
    command_ending_in_error<policy::CopyToPinned>({}, Intent::input, "clEnqueueWriteBuffer", 1);
  }
  SECTION("CopyToPinned: a download ends in error") {
    command_ending_in_error<policy::CopyToPinned>({}, Intent::output, "clEnqueueReadBuffer", 1);
  }
  SECTION("Persistent: a map of an input ends in error") {
    command_ending_in_error<policy::Persistent>({}, Intent::input, "clEnqueueMapBuffer", 2);
  }
}

TEST_CASE("a failed clFlush while releasing still waits for the commands that use the memory", "[fault_regression]") {
#if defined(CL_VERSION_2_0)
  CLZERO_NEEDS(Env::get().caps.svm_fine_grain_buffer, "fine-grained buffer SVM");
  FaultLayer& layer = FaultLayer::get();
  Env& env = Env::get();
  layer.reset();
  Reports reports;
  Gate gate;
  Kernel fill("fill_u32");
  std::thread opener;
  {
    MappedTensor<std::uint32_t, policy::Svm> t(env.context, env.queue, {4096}, Intent::output,
                                               {policy::Svm::Grain::fine});
    {
      auto dev = t.device_access();
      dev.bind(fill.k, 0);
      FaultLayer::Paused paused;
      fill.arg(1, cl_uint{4096});
      fill.arg(2, cl_uint{1});
      std::vector<cl_event> waits(dev.waits().begin(), dev.waits().end());
      waits.push_back(gate.event);  // the kernel cannot run before the gate opens
      const std::size_t n = 4096;
      ok(clEnqueueNDRangeKernel(env.queue, fill.k, 1, nullptr, &n, nullptr, static_cast<cl_uint>(waits.size()),
                                waits.data(), dev.event_slot()),
         "clEnqueueNDRangeKernel");
    }
    layer.arm("clFlush", 1, CL_OUT_OF_RESOURCES, CLZERO_FAULT_IMMEDIATE);
    opener = open_later(gate);
  }  // the release's flush fails
  opener.join();
  {
    FaultLayer::Paused paused;
    ok(clFinish(env.queue), "clFinish");
  }
  layer.disarm();
  REQUIRE(layer.fired() != nullptr);
  INFO("cleanup reports: " << (reports.list().empty() ? "none" : reports.list().front()));
  CHECK(reports.list().size() == 1);
  INFO(violations());
  CHECK_FALSE(any_violation_mentions("freed while a kernel that uses it has not completed"));
#else
  CLZERO_NOT_RUN_BELOW_CL20();
#endif
}

TEST_CASE("a device access whose end failed is still waited for before the memory is freed", "[fault_regression]") {
#if defined(CL_VERSION_2_0)
  CLZERO_NEEDS(Env::get().caps.svm_fine_grain_buffer, "fine-grained buffer SVM");
  FaultLayer& layer = FaultLayer::get();
  Env& env = Env::get();
  layer.reset();
  Reports reports;
  Gate gate;
  Kernel fill("fill_u32");
  std::thread opener;
  {
    MappedTensor<std::uint32_t, policy::Svm> t(env.context, env.queue, {4096}, Intent::output,
                                               {policy::Svm::Grain::fine});
    auto dev = t.device_access();
    dev.bind(fill.k, 0);
    {
      FaultLayer::Paused paused;
      fill.arg(1, cl_uint{4096});
      fill.arg(2, cl_uint{1});
      const std::size_t n = 4096;
      ok(clEnqueueNDRangeKernel(env.queue, fill.k, 1, nullptr, &n, nullptr, 1, &gate.event, dev.event_slot()),
         "clEnqueueNDRangeKernel");
    }
    layer.arm("clGetEventInfo", 1, CL_OUT_OF_RESOURCES, CLZERO_FAULT_IMMEDIATE);
    CHECK_THROWS_AS(dev.end(), Error);  // handing the tensor back fails
    CHECK_FALSE(t.usable());
    opener = open_later(gate);
  }  // the release must still wait for the gated kernel
  opener.join();
  {
    FaultLayer::Paused paused;
    ok(clFinish(env.queue), "clFinish");
  }
  layer.disarm();
  REQUIRE(layer.fired() != nullptr);
  INFO(violations());
  CHECK_FALSE(any_violation_mentions("freed while a kernel that uses it has not completed"));
#else
  CLZERO_NOT_RUN_BELOW_CL20();
#endif
}

namespace {

struct OutOfOrderQueue {
  OutOfOrderQueue() : q(Env::get().make_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) {}
  ~OutOfOrderQueue() { clReleaseCommandQueue(q); }
  OutOfOrderQueue(const OutOfOrderQueue&) = delete;
  OutOfOrderQueue& operator=(const OutOfOrderQueue&) = delete;
  cl_command_queue q;
};

}  // namespace

// The engine hands no events back and its queue is out of order, so clzero
// orders the map after a marker. The map that followed the construction
// ended in error, so the unmap before the kernel failed with it, and the
// kernel, which waits on the unmap, never ran. Now the construction maps
// blocking, after its fill has landed, so the failed map fails the
// construction itself: an error too.
TEST_CASE("a view never shows data its producer could not write without an error (out-of-order queue)",
          "[fault_regression]") {
  CLZERO_NEEDS(Env::get().caps.out_of_order_queue, "out-of-order queue");
  FaultLayer& layer = FaultLayer::get();
  set_spin_wait(std::chrono::nanoseconds(0));
  OutOfOrderQueue ooo;
  layer.reset();
  Reports reports;
  layer.arm("clEnqueueMapBuffer", 1, CL_OUT_OF_RESOURCES, CLZERO_FAULT_ASYNC);
  {
    scenario_detail::Kernels kernels;
    Outcome out;
    std::string error;
    try {
      MappedTensor<std::uint32_t, policy::Persistent> t(Env::get().context, ooo.q, {scenario_detail::kElements},
                                                        Intent::output);
      inference(t, kernels, 1, out, false);
    } catch (const Error& e) {
      error = e.what();
    }
    INFO("error: " << (error.empty() ? "none" : error));
    INFO("problems: " << (out.problems.empty() ? "none" : out.problems.front()));
    CHECK((!error.empty() || out.problems.empty()));  // an error, or the right data
  }
  {
    FaultLayer::Paused paused;
    ok(clFinish(ooo.q), "clFinish");
  }
  layer.disarm();
  CHECK(violations() == "");
}

TEST_CASE("a failed marker at the end of a device access still lets the release wait for its commands",
          "[fault_regression]") {
#if defined(CL_VERSION_2_0)
  Env& env = Env::get();
  CLZERO_NEEDS(env.caps.out_of_order_queue && env.caps.svm_fine_grain_buffer,
               "out-of-order queue or no fine-grained buffer SVM");
  FaultLayer& layer = FaultLayer::get();
  OutOfOrderQueue ooo;
  layer.reset();
  Reports reports;
  Gate gate;
  Kernel fill("fill_u32");
  std::thread opener;
  {
    MappedTensor<std::uint32_t, policy::Svm> t(env.context, ooo.q, {4096}, Intent::output, {policy::Svm::Grain::fine});
    auto dev = t.device_access();
    dev.bind(fill.k, 0);
    {
      FaultLayer::Paused paused;
      fill.arg(1, cl_uint{4096});
      fill.arg(2, cl_uint{1});
      const std::size_t n = 4096;
      ok(clEnqueueNDRangeKernel(ooo.q, fill.k, 1, nullptr, &n, nullptr, 1, &gate.event, nullptr),
         "clEnqueueNDRangeKernel");  // no event handed back: clzero orders with a marker
    }
    layer.arm("clEnqueueMarkerWithWaitList", 1, CL_OUT_OF_RESOURCES, CLZERO_FAULT_IMMEDIATE);
    CHECK_THROWS_AS(dev.end(), Error);
    opener = open_later(gate);
  }  // the release must still wait for the gated kernel
  opener.join();
  {
    FaultLayer::Paused paused;
    ok(clFinish(ooo.q), "clFinish");
  }
  layer.disarm();
  REQUIRE(layer.fired() != nullptr);
  INFO(violations());
  CHECK_FALSE(any_violation_mentions("freed while a kernel that uses it has not completed"));
#else
  CLZERO_NOT_RUN_BELOW_CL20();
#endif
}

// Two device accesses without a host view between them, on an out-of-order
// queue whose engine passes dev.wait_list() but hands no events back: the
// second kernel must not overtake the first, which is held by a gate. The
// poll only avoids a deadlock when clzero orders them correctly; the verdict
// is the data.
TEST_CASE("a device access orders its kernels after the tensor's previous ones (fine SVM, out-of-order queue)",
          "[fault_regression]") {
#if defined(CL_VERSION_2_0)
  Env& env = Env::get();
  CLZERO_NEEDS(env.caps.out_of_order_queue && env.caps.svm_fine_grain_buffer,
               "out-of-order queue or no fine-grained buffer SVM");
  OutOfOrderQueue ooo;
  Kernel first("fill_u32"), second("fill_u32");
  Gate gate;
  const cl_uint n = 4096;
  MappedTensor<std::uint32_t, policy::Svm> t(env.context, ooo.q, {n}, Intent::output, {policy::Svm::Grain::fine});
  const std::size_t global = n;
  {
    auto dev = t.device_access();
    dev.bind(first.k, 0);
    first.arg(1, n);
    first.arg(2, cl_uint{1});
    std::vector<cl_event> waits(dev.waits().begin(), dev.waits().end());
    waits.push_back(gate.event);
    ok(clEnqueueNDRangeKernel(ooo.q, first.k, 1, nullptr, &global, nullptr, static_cast<cl_uint>(waits.size()),
                              waits.data(), nullptr),
       "clEnqueueNDRangeKernel");
  }
  cl_event second_done = nullptr;
  {
    auto dev = t.device_access();
    dev.bind(second.k, 0);
    second.arg(1, n);
    second.arg(2, cl_uint{2});
    ok(clEnqueueNDRangeKernel(ooo.q, second.k, 1, nullptr, &global, nullptr, dev.wait_count(), dev.wait_list(),
                              &second_done),
       "clEnqueueNDRangeKernel");
  }
  ok(clFlush(ooo.q), "clFlush");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  cl_int status = CL_QUEUED;
  while (std::chrono::steady_clock::now() < until) {
    ok(clGetEventInfo(second_done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr), "status");
    if (status <= CL_COMPLETE) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  INFO("the second kernel " << (status <= CL_COMPLETE ? "ran before the first" : "waited for the first"));
  gate.open();
  clReleaseEvent(second_done);
  auto view = t.read_view();
  std::size_t wrong = 0;
  for (std::uint32_t i = 0; i < n; ++i) wrong += view[i] != value(i, 2);
  CHECK(wrong == 0);
#else
  CLZERO_NOT_RUN_BELOW_CL20();
#endif
}

TEST_CASE("CopyToPinned names clFlush when the flush before its last unmap fails", "[fault_regression]") {
  FaultLayer& layer = FaultLayer::get();
  layer.reset();
  Reports reports;
  {
    MappedTensor<std::uint32_t, policy::CopyToPinned> t(Env::get().queue, {256}, Intent::output, {});
    layer.arm("clFlush", 1, CL_OUT_OF_RESOURCES, CLZERO_FAULT_IMMEDIATE);
  }
  layer.disarm();
  REQUIRE(layer.fired() != nullptr);
  REQUIRE(reports.list().size() >= 1);
  INFO(reports.list().front());
  CHECK(reports.list().front().find("clFlush failed") != std::string::npos);
}

TEST_CASE("Persistent unmaps before release even when waiting for its last map failed", "[fault_regression]") {
  FaultLayer& layer = FaultLayer::get();
  set_spin_wait(std::chrono::nanoseconds(0));
  layer.reset();
  Reports reports;
  {
    // An output: it is mapped at rest from construction on (an input is
    // mapped only once the host opens a write view).
    MappedTensor<std::uint32_t, policy::Persistent> t(Env::get().queue, {256}, Intent::output, {});
    layer.arm("clWaitForEvents", 1, CL_OUT_OF_RESOURCES, CLZERO_FAULT_IMMEDIATE);
  }  // the release waits for the construction's map first
  layer.disarm();
  REQUIRE(layer.fired() != nullptr);
  CHECK(reports.list().size() == 1);
  INFO(violations());
  CHECK_FALSE(any_violation_mentions("released while mapped"));
}

// On an out-of-order queue, where the unmap's event is what orders the next
// commands after it (on an in-order queue the unmap has no event: see the
// next case).
TEST_CASE("MapPerInference waits for its last unmap even when keeping the unmap's event failed", "[fault_regression]") {
  FaultLayer& layer = FaultLayer::get();
  Env& env = Env::get();
  OutOfOrderQueue ooo;
  layer.reset();
  Reports reports;
  Gate gate;
  std::thread opener;
  {
    MappedTensor<std::uint32_t, policy::MapPerInference> t(env.context, ooo.q, {256}, Intent::output, {});
    auto view = t.read_view();
    {
      FaultLayer::Paused paused;  // hold the queue, so the view's unmap is still pending at release
      ok(clEnqueueBarrierWithWaitList(ooo.q, 1, &gate.event, nullptr), "clEnqueueBarrierWithWaitList");
    }
    layer.arm("clRetainEvent", 1, CL_OUT_OF_RESOURCES, CLZERO_FAULT_IMMEDIATE);
    view.reset();
    opener = open_later(gate);
  }
  opener.join();
  layer.disarm();
  REQUIRE(layer.fired() != nullptr);
  INFO(violations());
  CHECK_FALSE(any_violation_mentions("before its unmap completed"));
}

// On an in-order queue the view's unmap is enqueued without an event (the
// queue orders what follows): the release must still wait for it, and a
// failed marker falls back to a barrier.
TEST_CASE("MapPerInference and Persistent wait at release for an unmap enqueued without an event",
          "[fault_regression]") {
  FaultLayer& layer = FaultLayer::get();
  Env& env = Env::get();
  for (bool marker_fails : {false, true}) {
    for (bool persistent : {false, true}) {
      INFO((persistent ? "Persistent" : "MapPerInference")
           << (marker_fails ? ", clEnqueueMarkerWithWaitList fails" : ""));
      layer.reset();
      Reports reports;
      Gate gate;
      std::thread opener;
      {
        MappedTensor<std::uint32_t, policy::MapPerInference> m(env.context, env.queue, {256}, Intent::output, {});
        // An input is mapped only by a write view, so after its access ends
        // nothing is mapped and the release waits for the access's unmap.
        MappedTensor<std::uint32_t, policy::Persistent> p(env.context, env.queue, {256}, Intent::input, {});
        if (persistent) {
          {
            auto w = p.write_view();
            for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::uint32_t>(i);
          }
          {
            FaultLayer::Paused paused;  // hold the queue, so the unmap is still pending at release
            ok(clEnqueueMarkerWithWaitList(env.queue, 1, &gate.event, nullptr), "clEnqueueMarkerWithWaitList");
          }
          auto dev = p.device_access();  // unmaps, with no event on this in-order queue
        } else {
          auto view = m.read_view();
          {
            FaultLayer::Paused paused;
            ok(clEnqueueMarkerWithWaitList(env.queue, 1, &gate.event, nullptr), "clEnqueueMarkerWithWaitList");
          }
          view.reset();  // unmaps, with no event on this in-order queue
        }
        if (marker_fails) layer.arm("clEnqueueMarkerWithWaitList", 1, CL_OUT_OF_RESOURCES, CLZERO_FAULT_IMMEDIATE);
        opener = open_later(gate);
      }
      opener.join();
      layer.disarm();
      if (marker_fails) CHECK(layer.fired() != nullptr);
      INFO(violations());
      CHECK_FALSE(any_violation_mentions("before its unmap completed"));
      CHECK(reports.list().size() == (marker_fails ? 1u : 0u));  // the marker's failure, reported
    }
  }
}

#if defined(CL_VERSION_2_0)
TEST_CASE("a failed clSVMAlloc is an OpenCL error naming clSVMAlloc", "[fault_regression]") {
  FaultLayer& layer = FaultLayer::get();
  layer.reset();
  layer.arm("clSVMAlloc", 1, CL_MEM_OBJECT_ALLOCATION_FAILURE, CLZERO_FAULT_IMMEDIATE);
  bool threw = false;
  try {
    MappedTensor<float, policy::Svm> t(Env::get().queue, {64}, Intent::output, {});
  } catch (const Error& e) {
    threw = true;
    INFO(e.what());
    CHECK(e.kind() == ErrorKind::opencl);
    CHECK(std::string(e.api()) == "clSVMAlloc");
    CHECK(e.code() != CL_SUCCESS);
  }
  layer.disarm();
  CHECK(threw);
}

TEST_CASE("a device query that fails is reported, never read as a missing feature", "[fault_regression]") {
  Env& env = Env::get();
  CLZERO_NEEDS(env.caps.svm_fine_grain_buffer, "fine-grained buffer SVM");
  FaultLayer& layer = FaultLayer::get();
  layer.reset();
  { MappedTensor<float, policy::Svm> probe(env.queue, {64}, Intent::output, {policy::Svm::Grain::fine}); }
  long queries = 0;
  for (const std::string& c : layer.calls()) queries += c == "clGetDeviceInfo";
  for (long k = 1; k <= queries; ++k) {
    layer.reset();
    layer.arm("clGetDeviceInfo", k, CL_OUT_OF_RESOURCES, CLZERO_FAULT_IMMEDIATE);
    std::string said;
    try {
      MappedTensor<float, policy::Svm> t(env.queue, {64}, Intent::output, {policy::Svm::Grain::fine});
    } catch (const Error& e) {
      said = e.what();
    }
    INFO("clGetDeviceInfo #" << k << " failed; clzero said: " << said);
    CHECK(said.find("does not offer") == std::string::npos);
  }
  layer.disarm();
}
#endif

namespace {

// A layer option for one scope, put back however the scope ends.
struct RunAfterFailed {
  RunAfterFailed() { FaultLayer::get().run_after_failed(true); }
  ~RunAfterFailed() { FaultLayer::get().run_after_failed(false); }
};
struct AsVendor {
  explicit AsVendor(unsigned id) { FaultLayer::get().vendor_id(id); }
  ~AsVendor() { FaultLayer::get().vendor_id(0); }
};

// One output inference whose device access also names an event that ended
// in error (a producer elsewhere, handed in with used_by), on a platform
// that runs a non-blocking map or read after a failed event and completes
// it (NVIDIA's driver 580, emulated by the layer). Returns what the view
// did: empty when it reported the failure as an OpenCL error.
template <class Policy>
std::string view_after_failed_producer(const typename Policy::Options& options) {
  using Tensor = MappedTensor<std::uint32_t, Policy>;
  scenario_detail::Kernels kernels;
  Tensor t(Env::get().context, Env::get().queue, {scenario_detail::kElements}, Intent::output, options);
  Outcome out;
  inference(t, kernels, 1, out);
  if (!out.problems.empty()) return "the inference before: " + out.problems.front();
  cl_int rc = CL_SUCCESS;
  cl_event failed = nullptr;
  {
    FaultLayer::Paused paused;
    failed = clCreateUserEvent(Env::get().context, &rc);
    ok(rc, "clCreateUserEvent");
    ok(clSetUserEventStatus(failed, CL_OUT_OF_RESOURCES), "clSetUserEventStatus");
  }
  const EventHandle producer = EventHandle::adopt(failed);
  std::string result;
  try {
    RunAfterFailed nvidia_like;
    {
      auto dev = t.device_access();
      dev.bind(kernels.fill.k, 0);
      FaultLayer::Paused paused;
      const cl_uint n = scenario_detail::kElements;
      const cl_uint iter = 2;
      kernels.fill.arg(1, n);
      kernels.fill.arg(2, iter);
      const std::size_t global = n;
      ok(clEnqueueNDRangeKernel(t.queue(), kernels.fill.k, 1, nullptr, &global, nullptr, dev.wait_count(),
                                dev.wait_list(), dev.event_slot()),
         "clEnqueueNDRangeKernel");
      dev.used_by(producer.get());
    }
    auto view = t.read_view();
    result = "the view opened without an error";
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::opencl) result = std::string("an error of another kind: ") + e.what();
    // docs/api.md: every message starts with "clzero: " and the class
    // whose call or step failed (a policy's name, for the steps it takes).
    const std::string what = e.what();
    bool named = false;
    for (const char* who : {"Persistent", "MapPerInference", "CopyToPinned", "Svm", "UnifiedHost", "MappedTensor::"})
      named = named || what.rfind(std::string("clzero: ") + who, 0) == 0;
    if (result.empty() && !named) result = "a message that names no clzero class: " + what;
  }
  Outcome after;
  inference(t, kernels, 3, after);
  if (result.empty() && !after.problems.empty()) result = "the inference after: " + after.problems.front();
  return result;
}

}  // namespace

// NVIDIA's driver 580 completes a map or a read whose wait list holds an
// event that ended in error with CL_COMPLETE (the spec leaves what such a
// command does to the implementation). A view of Persistent or CopyToPinned
// waited only for its own command, so it opened without an error and showed
// data the failed producer should have written (tests/from_docs,
// contract.cpp, on the H200). The view now reads the statuses of the events
// its command waited on.
TEST_CASE("a producer that ended in error fails the view where the platform runs the map after it",
          "[fault_regression]") {
  FaultLayer::get().reset();
  Reports reports;
  set_spin_wait(std::chrono::nanoseconds(0));
  policy::Persistent::Options use_host;
  use_host.allocation = Allocation::use_host_ptr();
  CHECK(view_after_failed_producer<policy::Persistent>({}) == "");
  CHECK(view_after_failed_producer<policy::Persistent>(use_host) == "");
  CHECK(view_after_failed_producer<policy::CopyToPinned>({}) == "");
  CHECK(view_after_failed_producer<policy::MapPerInference>({}) == "");
  CHECK(view_after_failed_producer<policy::Auto>({}) == "");
#if defined(CL_VERSION_2_0)
  if (Env::get().caps.svm_coarse_grain_buffer) {
    policy::Svm::Options coarse;
    coarse.grain = policy::Svm::Grain::coarse;
    CHECK(view_after_failed_producer<policy::Svm>(coarse) == "");
  }
#endif
  CHECK(violations() == "");
  CHECK(reports.list().empty());
}

namespace {

// The calls an input's write view makes when it opens on a device that
// reports NVIDIA's vendor ID (0x10DE, answered by the layer), after one
// inference: empty when its map was blocking (no clFlush after the map: a
// blocking map submits itself, a non-blocking one is flushed and waited for).
template <class Policy>
std::string write_view_on_nvidia(const typename Policy::Options& options) {
  using Tensor = MappedTensor<std::uint32_t, Policy>;
  FaultLayer& layer = FaultLayer::get();
  scenario_detail::Kernels kernels;
  std::optional<Tensor> made;
  {
    AsVendor nvidia(0x10DE);  // read when the tensor is made
    made.emplace(Env::get().context, Env::get().queue, Shape{scenario_detail::kElements}, Intent::input, options);
  }
  Tensor& t = *made;
  Outcome out;
  inference(t, kernels, 1, out);
  if (!out.problems.empty()) return "the inference before: " + out.problems.front();
  layer.reset();
  { auto view = t.write_view(); }
  const std::vector<std::string> calls = layer.calls();
  bool mapped = false;
  std::string all;
  for (const std::string& c : calls) {
    all += c + " ";
    mapped = mapped || c == "clEnqueueMapBuffer" || c == "clEnqueueSVMMap";
    if (mapped && c == "clFlush") return "a non-blocking map, flushed and waited for: " + all;
  }
  if (!mapped) return "no map: " + all;
  inference(t, kernels, 2, out);
  return out.problems.empty() ? "" : "the inference after: " + out.problems.front();
}

}  // namespace

// NVIDIA's driver 580 completes a non-blocking map for writing only before
// the kernel it follows when the GPU is loaded, and the host's next input
// reached the kernel still reading the previous one (tests/from_docs,
// usage.cpp, four of four processes under CLZERO_HOST_WAIT=poll on the H200;
// docs/drivers.md). On a device with NVIDIA's vendor ID, an input's write
// view maps blocking, whatever the measured host wait says.
TEST_CASE("an input's write view maps blocking on NVIDIA devices", "[fault_regression]") {
  Reports reports;
  policy::Persistent::Options use_host;
  use_host.allocation = Allocation::use_host_ptr();
  policy::MapPerInference::Options map_use_host;
  map_use_host.allocation = Allocation::use_host_ptr();
  CHECK(write_view_on_nvidia<policy::Persistent>({}) == "");
  CHECK(write_view_on_nvidia<policy::Persistent>(use_host) == "");
  CHECK(write_view_on_nvidia<policy::MapPerInference>({}) == "");
  CHECK(write_view_on_nvidia<policy::MapPerInference>(map_use_host) == "");
#if defined(CL_VERSION_2_0)
  if (Env::get().caps.svm_coarse_grain_buffer) {
    policy::Svm::Options coarse;
    coarse.grain = policy::Svm::Grain::coarse;
    CHECK(write_view_on_nvidia<policy::Svm>(coarse) == "");
  }
#endif
  CHECK(violations() == "");
  CHECK(reports.list().empty());
}

namespace {

// How the engine hands its kernels the tensor in failed_upload_then_read.
enum class Engine {
  readme,        // wait_list(queue) (empty on the tensor's queue), no event back
  readme_event,  // the same, and the kernel's event handed back
  asked_list,    // wait_list() for the kernel, then another kernel's event handed back
};
// What the host does after the inference.
enum class Host {
  read,          // a read view
  region_write,  // a write view of one element, then a read view
  whole_update,  // a write view of the whole inout tensor that reads what it updates
};

// One inout inference on the tensor's own in-order queue whose upload
// (CopyToPinned's clEnqueueWriteBuffer) ends in error, so the kernel runs on
// the device's old data or does not run at all. Returns "" when clzero
// reported the failure before the host read the data, else what the host saw.
std::string failed_upload_then_read(Engine engine, Host host) {
  using Tensor = MappedTensor<std::uint32_t, policy::CopyToPinned>;
  using scenario_detail::kElements;
  FaultLayer& layer = FaultLayer::get();
  scenario_detail::Kernels kernels;
  Tensor t(Env::get().context, Env::get().queue, {kElements}, Intent::inout);
  Outcome out;
  inference(t, kernels, 1, out);
  if (!out.problems.empty()) return "the inference before: " + out.problems.front();
  const std::uint32_t iter = 2;
  {
    auto view = t.write_view();
    for (std::uint32_t i = 0; i < kElements; ++i) view[i] = value(i, iter);
  }
  std::string result;
  try {
    layer.arm("clEnqueueWriteBuffer", 1, CL_OUT_OF_RESOURCES, CLZERO_FAULT_ASYNC);
    {
      auto dev = t.device_access();
      dev.bind(kernels.update.k, 0);
      FaultLayer::Paused paused;
      kernels.update.arg(1, cl_uint{kElements});
      kernels.update.arg(2, cl_uint{iter});
      const std::size_t global = kElements;
      cl_event done = nullptr;
      const bool asked = engine == Engine::asked_list;
      ok(clEnqueueNDRangeKernel(t.queue(), kernels.update.k, 1, nullptr, &global, nullptr,
                                asked ? dev.wait_count() : dev.wait_count(t.queue()),
                                asked ? dev.wait_list() : dev.wait_list(t.queue()),
                                engine == Engine::readme_event ? &done : nullptr),
         "clEnqueueNDRangeKernel");
      if (asked) {  // the network's last kernel, ordered after the first by the queue
        kernels.fill.arg(0, kernels.check);
        kernels.fill.arg(1, cl_uint{kElements});
        kernels.fill.arg(2, cl_uint{iter});
        ok(clEnqueueNDRangeKernel(t.queue(), kernels.fill.k, 1, nullptr, &global, nullptr, 0, nullptr, &done),
           "clEnqueueNDRangeKernel");
      }
      if (done != nullptr) {
        const EventHandle kernel = EventHandle::adopt(done);
        dev.used_by(kernel.get());
      }
    }
    layer.disarm();
    if (layer.fired() == nullptr) return "the upload was not failed";
    std::uint32_t first = 0;
    std::size_t wrong = 0;
    if (host == Host::region_write) {
      auto part = t.write_view_as<std::uint32_t>(0, Shape{1});
      part[0] = 7;
      first = 1;
    } else if (host == Host::whole_update) {
      auto view = t.write_view();
      for (std::uint32_t i = 0; i < kElements; ++i) {
        wrong += view[i] != value(i, iter) * 3u + iter;
        view[i] += 1;
      }
      result = "the write view opened without an error; " + std::to_string(wrong) + " of " + std::to_string(kElements) +
               " elements it read were wrong";
    }
    if (host != Host::whole_update) {
      auto view = t.read_view();
      for (std::uint32_t i = first; i < kElements; ++i) wrong += view[i] != value(i, iter) * 3u + iter;
      result = "the view opened without an error; " + std::to_string(wrong) + " of " + std::to_string(kElements) +
               " elements the kernel should have written were wrong";
    }
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::opencl) result = std::string("an error of another kind: ") + e.what();
  }
  layer.disarm();
  Outcome after;
  inference(t, kernels, 3, after);
  if (result.empty() && !after.problems.empty()) result = "the inference after: " + after.problems.front();
  return result;
}

}  // namespace

// A command clzero enqueued before the kernels (here an inout tensor's
// upload) that ended in error is checked by the next view that may read the
// data, since kernels on the tensor's in-order queue need not wait on its
// event. Three ways let the host read the data of kernels that ran on old
// contents, or did not run, without an error: a write view of a region
// dropped the check (the host overwrote only part of the tensor); an event
// the engine handed back dropped it too, though the command that made the
// event need not have waited on clzero's (the README's empty wait list, or
// a later kernel ordered after the failed one by the queue alone); and a
// write view of a whole inout tensor dropped it, though such a view maps for
// reading too and the host may update what it reads.
TEST_CASE("a failed upload is reported after a region write or an event the engine handed back", "[fault_regression]") {
  FaultLayer::get().reset();
  Reports reports;
  set_spin_wait(std::chrono::nanoseconds(0));
  for (Engine engine : {Engine::readme, Engine::readme_event, Engine::asked_list})
    for (Host host : {Host::read, Host::region_write, Host::whole_update}) {
      INFO("engine " << static_cast<int>(engine) << " (0: README form, 1: and its event, 2: wait_list() then "
                     << "another kernel's event); host " << static_cast<int>(host)
                     << " (0: read, 1: region write then read, 2: whole update)");
      CHECK(failed_upload_then_read(engine, host) == "");
    }
  CHECK(violations() == "");
  CHECK(reports.list().empty());
}

// The engine's own kernel ended in error in one access (it waited on a failed
// event of the engine's), and reached the engine through its event; the
// next access's kernel wrote every element. clzero keeps the failed kernel's
// event for the next kernels to wait on (fine-grained SVM), so a view that
// blamed every failed event on clzero reported an error over right data.
TEST_CASE("the engine's failed kernel of an earlier access is not reported as clzero's", "[fault_regression]") {
#if defined(CL_VERSION_2_0)
  Env& env = Env::get();
  CLZERO_NEEDS(env.caps.svm_fine_grain_buffer, "fine-grained buffer SVM");
  FaultLayer::get().reset();
  Reports reports;
  set_spin_wait(std::chrono::nanoseconds(0));
  using scenario_detail::kElements;
  scenario_detail::Kernels kernels;
  MappedTensor<std::uint32_t, policy::Svm> t(env.context, env.queue, {kElements}, Intent::output,
                                             {policy::Svm::Grain::fine});
  const std::size_t global = kElements;
  cl_int rc = CL_SUCCESS;
  cl_event failed = nullptr;
  {
    FaultLayer::Paused paused;
    failed = clCreateUserEvent(env.context, &rc);
    ok(rc, "clCreateUserEvent");
    ok(clSetUserEventStatus(failed, CL_OUT_OF_RESOURCES), "clSetUserEventStatus");
  }
  const EventHandle producer = EventHandle::adopt(failed);
  for (std::uint32_t iter = 1; iter <= 2; ++iter) {
    auto dev = t.device_access();
    dev.bind(kernels.fill.k, 0);
    FaultLayer::Paused paused;
    kernels.fill.arg(1, cl_uint{kElements});
    kernels.fill.arg(2, cl_uint{iter});
    const cl_event* waits = iter == 1 ? &failed : nullptr;
    ok(clEnqueueNDRangeKernel(t.queue(), kernels.fill.k, 1, nullptr, &global, nullptr, iter == 1 ? 1 : 0, waits,
                              dev.event_slot(t.queue())),
       "clEnqueueNDRangeKernel");
  }
  std::string said;
  std::size_t wrong = 0;
  try {
    auto view = t.read_view();
    for (std::uint32_t i = 0; i < kElements; ++i) wrong += view[i] != value(i, 2);
  } catch (const Error& e) {
    said = e.what();
  }
  INFO("the view said: " << (said.empty() ? "nothing" : said));
  CHECK(said.empty());
  CHECK(wrong == 0);
  CHECK(violations() == "");
#else
  CLZERO_NOT_RUN_BELOW_CL20();
#endif
}
