// SPDX-License-Identifier: Apache-2.0
// Faults of the caller: every misuse of the ownership rule (docs/api.md,
// "Ownership in one paragraph") and every bad
// argument gives a clzero::Error of the documented kind whose message says
// what went wrong and how to fix it, and leaves no OpenCL object, mapping or
// protocol violation behind (checked by the fault layer after each case).
// tests/test_misuse.cpp checks the kinds and the facts; this file the
// remedies.
#include <clzero/clzero.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "harness/fault_layer.hpp"
#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

// A message tells the caller what to do when, after saying what went wrong,
// it gives an instruction: "...; pass the engine's queue", "...: end every
// HostView before ...".
bool gives_a_remedy(const std::string& message) {
  static const char* const verbs[] = {"use ",   "pass ",  "end ",   "make ",   "create ", "split ", "destroy ",
                                      "move ",  "start ", "bind ",  "give ",   "define ", "build ", "write ",
                                      "read ",  "open ",  "keep ",  "reduce ", "call ",   "set ",   "flatten ",
                                      "check ", "ask ",   "choose ", "add ",    "copy ",  "allocate "};
  for (const char* separator : {"; ", ": ", " - "})
    for (const char* verb : verbs)
      if (message.find(std::string(separator) + verb) != std::string::npos) return true;
  return false;
}

// Runs `f`, which must raise a clzero::Error of `kind` whose message names
// `fact`; checks the remedy and that nothing was left behind.
template <class F>
void expect_error(ErrorKind kind, const char* fact, F&& f) {
  FaultLayer& layer = FaultLayer::get();
  layer.reset();
  const clzero_fault_counts before = layer.counts();
  std::string what;
  ErrorKind seen = ErrorKind::opencl;
  bool threw = false;
  try {
    f();
  } catch (const Error& e) {
    threw = true;
    what = e.what();
    seen = e.kind();
  }
  INFO("message: " << what);
  REQUIRE(threw);
  CHECK(seen == kind);
  CHECK(what.find(fact) != std::string::npos);
  CHECK(gives_a_remedy(what));
  {
    FaultLayer::Paused paused;
    ok(clFinish(Env::get().queue), "clFinish");
  }
  const clzero_fault_counts after = layer.counts();
  CHECK(after.live_mem == before.live_mem);
  CHECK(after.live_events == before.live_events);
  CHECK(after.live_svm == before.live_svm);
  CHECK(after.active_maps == before.active_maps);
  CHECK(layer.violations().empty());
}

using Tensor = MappedTensor<float, policy::Persistent>;

Tensor tensor(Intent intent, std::size_t n = 16) { return Tensor(Env::get().context, Env::get().queue, {n}, intent); }

}  // namespace

TEST_CASE("every misuse of the ownership rule says how to fix it", "[misuse_messages]") {
  SECTION("handing the tensor to the device while a host view is alive") {
    expect_error(ErrorKind::misuse, "host view(s) still alive", [] {
      Tensor t = tensor(Intent::output);
      auto view = t.read_view();
      (void)t.device_access();
    });
  }
  SECTION("opening a view while the device has the tensor") {
    expect_error(ErrorKind::misuse, "a device access is open", [] {
      Tensor t = tensor(Intent::inout);
      auto dev = t.device_access();
      (void)t.read_view();
    });
    expect_error(ErrorKind::misuse, "a device access is open", [] {
      Tensor t = tensor(Intent::inout);
      auto dev = t.device_access();
      (void)t.write_view();
    });
  }
  SECTION("two device accesses at once") {
    expect_error(ErrorKind::misuse, "already open", [] {
      Tensor t = tensor(Intent::output);
      auto dev = t.device_access();
      (void)t.device_access();
    });
  }
  SECTION("using a device access after it ended") {
    expect_error(ErrorKind::misuse, "has ended", [] {
      Tensor t = tensor(Intent::output);
      auto dev = t.device_access();
      dev.end();
      (void)dev.event_slot();
    });
  }
  SECTION("using a moved-from or empty tensor") {
    expect_error(ErrorKind::misuse, "empty", [] {
      Tensor a = tensor(Intent::output);
      Tensor b(std::move(a));
      (void)a.read_view();
    });
    expect_error(ErrorKind::misuse, "empty", [] {
      Tensor empty;
      (void)empty.device_access();
    });
  }
  SECTION("writing an output or reading an input on the host") {
    expect_error(ErrorKind::misuse, "Intent::output", [] { (void)tensor(Intent::output).write_view(); });
    expect_error(ErrorKind::misuse, "Intent::input", [] { (void)tensor(Intent::input).read_view(); });
  }
  SECTION("reading an ended view") {
    // An ended view breaks the ownership rule, as an ended access does
    // (api.md, "Ownership in one paragraph"): misuse, not a bad index.
    expect_error(ErrorKind::misuse, "ended", [] {
      Tensor t = tensor(Intent::output);
      auto view = t.read_view();
      view.reset();
      (void)view.at(0);
    });
  }
}

TEST_CASE("every construction error says how to fix it", "[misuse_messages]") {
  Env& env = Env::get();
  SECTION("a null queue") {
    expect_error(ErrorKind::invalid_argument, "cl_command_queue is null",
                 [] { Tensor t(nullptr, nullptr, {4}, Intent::output); });
  }
  SECTION("a queue of another context") {
    cl_int rc = CL_SUCCESS;
    cl_context other = clCreateContext(nullptr, 1, &env.device, nullptr, nullptr, &rc);
    ok(rc, "clCreateContext");
    expect_error(ErrorKind::invalid_argument, "another cl_context", [&] { Tensor t(other, env.queue, {4}, Intent::output); });
    clReleaseContext(other);
  }
  SECTION("a shape with an empty axis") {
    expect_error(ErrorKind::invalid_argument, "at least one element", [] { Shape s{4, 0, 2}; });
  }
  SECTION("a shape of rank 0") {
    expect_error(ErrorKind::invalid_argument, "rank 1 or more",
                 [] { Shape s(std::vector<std::size_t>{}.begin(), std::vector<std::size_t>{}.end()); });
  }
  SECTION("a shape of rank above 8") {
    expect_error(ErrorKind::invalid_argument, "rank above 8", [] { Shape s{1, 2, 3, 4, 5, 6, 7, 8, 9}; });
  }
  SECTION("an element count that overflows") {
    const std::size_t big = std::size_t{1} << 40;
    expect_error(ErrorKind::invalid_argument, "overflows", [&] { Shape s{big, big}; });
  }
  SECTION("a byte count that overflows") {
    const std::size_t n = std::numeric_limits<std::size_t>::max() / 2;
    expect_error(ErrorKind::invalid_argument, "overflows", [&] { Tensor t(env.queue, {n}, Intent::output); });
  }
  SECTION("a tensor above CL_DEVICE_MAX_MEM_ALLOC_SIZE") {
    const std::size_t n = static_cast<std::size_t>(env.caps.max_mem_alloc_size / sizeof(float)) + 1;
    expect_error(ErrorKind::invalid_argument, "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
                 [&] { Tensor t(env.queue, {n}, Intent::output); });
  }
  SECTION("a vendor allocation the device lacks") {
    if (!env.caps.nv_create_buffer)
      expect_error(ErrorKind::unsupported, "cl_nv_create_buffer",
                   [&] { Tensor t(env.queue, {4}, Intent::output, {Allocation::nv_host_pinned()}); });
    if (!env.caps.arm_import_memory)
      expect_error(ErrorKind::unsupported, "cl_arm_import_memory",
                   [&] { Tensor t(env.queue, {4}, Intent::output, {Allocation::arm_import_host()}); });
    if (!env.caps.qcom_ext_host_ptr)
      expect_error(ErrorKind::unsupported, "cl_qcom_ext_host_ptr",
                   [&] { Tensor t(env.queue, {4}, Intent::output, {Allocation::qcom_ext_host_ptr(nullptr)}); });
  }
  SECTION("a policy the device lacks") {
    if (!env.caps.intel_usm_host)
      expect_error(ErrorKind::unsupported, "cl_intel_unified_shared_memory",
                   [&] { MappedTensor<float, policy::UnifiedHost> t(env.queue, {4}, Intent::output); });
    else
      CLZERO_NOT_RUN("not run: the device offers Intel USM host allocations");
  }
  SECTION("a null device") {
    expect_error(ErrorKind::invalid_argument, "cl_device_id is null", [] { (void)DeviceCaps::query(nullptr); });
  }
  SECTION("a ring without slots") {
    expect_error(ErrorKind::invalid_argument, "at least one slot",
                 [&] { TensorRing<float, policy::Persistent> ring(env.context, env.queue, {4}, Intent::output, 0); });
  }
  SECTION("an arena without parts") {
    expect_error(ErrorKind::invalid_argument, "at least one part",
                 [&] { TensorArena<policy::Persistent> arena(env.context, env.queue, {}, Intent::output); });
  }
}

TEST_CASE("bad arguments to device accesses and views say how to fix them", "[misuse_messages]") {
  SECTION("binding to a null kernel") {
    expect_error(ErrorKind::invalid_argument, "cl_kernel is null", [] {
      Tensor t = tensor(Intent::output);
      t.device_access().bind(nullptr, 0);
    });
  }
  SECTION("binding past the end of the tensor") {
    expect_error(ErrorKind::invalid_argument, "past the tensor", [] {
      Tensor t = tensor(Intent::output);
      Kernel fill("fill_u32");
      t.device_access().bind(fill.k, 0, 64);
    });
  }
  SECTION("a null event") {
    expect_error(ErrorKind::invalid_argument, "the event is null", [] {
      Tensor t = tensor(Intent::output);
      t.device_access().used_by(nullptr);
    });
  }
  SECTION("an index past the end of a view") {
    expect_error(ErrorKind::invalid_argument, "past the end", [] {
      Tensor t = tensor(Intent::output, 6);
      (void)t.read_view().at(6);
    });
  }
  SECTION("the wrong number of indices") {
    expect_error(ErrorKind::invalid_argument, "indices for a tensor of rank", [] {
      MappedTensor<float, policy::Persistent> t(Env::get().queue, {2, 3}, Intent::output);
      (void)t.read_view()(1);
    });
  }
  SECTION("an index out of range along an axis") {
    expect_error(ErrorKind::invalid_argument, "out of range along axis 0", [] {
      MappedTensor<float, policy::Persistent> t(Env::get().queue, {2, 3}, Intent::output);
      (void)t.read_view()(2, 0);
    });
  }
  SECTION("a region view outside the tensor") {
    expect_error(ErrorKind::invalid_argument, "exceeds the tensor", [] {
      Tensor t = tensor(Intent::output);
      (void)t.read_view_as<float>(8, Shape{16});
    });
  }
  SECTION("an arena part that does not exist, or of another type") {
    Env& env = Env::get();
    expect_error(ErrorKind::invalid_argument, "part 2", [&] {
      TensorArena<policy::Persistent> arena(env.context, env.queue, {ArenaPart::of<float>({4}), ArenaPart::of<int>({4})},
                                            Intent::output);
      (void)arena.read_view<float>(2);
    });
    expect_error(ErrorKind::invalid_argument, "-byte elements", [&] {
      TensorArena<policy::Persistent> arena(env.context, env.queue, {ArenaPart::of<float>({4})}, Intent::output);
      (void)arena.read_view<double>(0);
    });
  }
}

TEST_CASE("a tensor left unusable by a failure says so, and what to do", "[misuse_messages]") {
  FaultLayer& layer = FaultLayer::get();
  Env& env = Env::get();
  // A failed unmap at the end of a MapPerInference view leaves the tensor
  // unusable (the view cannot be ended).
  const ErrorHandler previous = set_cleanup_error_handler([](const Error&) noexcept {});
  expect_error(ErrorKind::unusable, "unusable", [&] {
    MappedTensor<float, policy::MapPerInference> t(env.context, env.queue, {16}, Intent::output);
    {
      auto view = t.read_view();
      layer.arm("clEnqueueUnmapMemObject", 1, CL_OUT_OF_RESOURCES, CLZERO_FAULT_IMMEDIATE);
    }
    layer.disarm();
    REQUIRE_FALSE(t.usable());
    (void)t.device_access();
  });
  set_cleanup_error_handler(previous);
}
