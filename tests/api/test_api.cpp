// SPDX-License-Identifier: Apache-2.0
// The API as engines hold it: integer extents of any type, accesses kept in
// containers, empty tensors queried, one message style, views in generic
// code, and Auto for engines whose kernels take only a cl_mem.
#include <clzero/clzero.hpp>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

template <class Tensor>
std::size_t stale_after_fills(Tensor& tensor, cl_uint first_iter, cl_uint iterations) {
  Env& env = Env::get();
  Kernel fill("fill_u32");
  std::size_t stale = 0;
  for (cl_uint iter = first_iter; iter < first_iter + iterations; ++iter) {
    {
      auto dev = tensor.device_access();
      dev.bind(fill.k, 0);
      fill.arg(1, static_cast<cl_uint>(tensor.size()));
      fill.arg(2, iter);
      std::size_t global = tensor.size();
      ok(clEnqueueNDRangeKernel(env.queue, fill.k, 1, nullptr, &global, nullptr, dev.wait_count(), dev.wait_list(),
                                dev.event_slot()),
         "clEnqueueNDRangeKernel");
    }
    auto view = tensor.read_view();
    for (std::uint32_t i = 0; i < view.size(); ++i) stale += view[i] != value(i, iter);
  }
  return stale;
}

// Generic engine code: the element type is a template parameter, and the
// typed views are spelled without `.template`.
template <class T, class Arena>
T first_of_part(Arena& arena, std::size_t part) {
  return arena.read_view(part, as<T>)[0];
}

}  // namespace

TEST_CASE("a Shape takes int and int64_t extents and names a negative one", "[api]") {
  const int classes = 10;
  const std::int64_t batch = 3;
  CHECK(Shape{batch, classes} == Shape{std::size_t{3}, std::size_t{10}});
  CHECK(Shape{classes}.elements() == 10);
  const std::vector<std::int64_t> dims = {2, 3, 4};
  CHECK(Shape(dims.begin(), dims.end()).to_string() == "[2, 3, 4]");

  const std::string negative = message_of([] { Shape s{4, -3, 2}; });
  INFO(negative);
  CHECK(negative.find("Shape: building a tensor shape") != std::string::npos);
  CHECK(negative.find("extent 1 is -3") != std::string::npos);
  CHECK(negative.find("give every axis an extent of 1 or more") != std::string::npos);
  const std::string from_dims = message_of([] {
    const std::vector<std::int64_t> bad = {1, 2, std::numeric_limits<std::int64_t>::min()};
    Shape s(bad.begin(), bad.end());
  });
  CHECK(from_dims.find("extent 2 is " + std::to_string(std::numeric_limits<std::int64_t>::min())) != std::string::npos);
  CHECK(message_of([] { Shape s{0}; }).find("extent 0 is 0") != std::string::npos);
  CHECK(message_of([] {
          Shape s{std::numeric_limits<std::int64_t>::max(), std::int64_t{4}};
        }).find("overflows std::size_t") != std::string::npos);
}

TEST_CASE("a device access can be move-assigned and the access it replaces ends first", "[api]") {
  Env& env = Env::get();
  using Tensor = MappedTensor<std::uint32_t, policy::Persistent>;
  Tensor a(env.queue, {256}, Intent::output), b(env.queue, {256}, Intent::output);
  DeviceAccess held = a.device_access();
  CHECK(held.open());
  held = b.device_access();  // a's access ends here
  CHECK(held.open());
  CHECK_NOTHROW(a.read_view());  // a is the host's again
  CHECK(message_of([&] { (void)b.read_view(); }).find("a device access is open") != std::string::npos);
  DeviceAccess& alias = held;
  held = std::move(alias);  // self-assignment keeps the access
  CHECK(held.open());
  held = DeviceAccess(std::move(held));
  CHECK(held.open());
  held.end();
  CHECK_NOTHROW(b.read_view());

  // Accesses kept in a container and replaced inference after inference.
  std::vector<Tensor> tensors;
  for (int i = 0; i < 3; ++i) tensors.emplace_back(env.queue, Shape{64}, Intent::output);
  Kernel fill("fill_u32");
  for (cl_uint iter = 1; iter <= 4; ++iter) {
    std::vector<DeviceAccess> accesses;
    for (Tensor& t : tensors) accesses.push_back(t.device_access());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      accesses[i].bind(fill.k, 0);
      fill.arg(1, cl_uint{64});
      fill.arg(2, iter + static_cast<cl_uint>(i));
      std::size_t global = 64;
      ok(clEnqueueNDRangeKernel(env.queue, fill.k, 1, nullptr, &global, nullptr, accesses[i].wait_count(),
                                accesses[i].wait_list(), accesses[i].event_slot()),
         "clEnqueueNDRangeKernel");
    }
    accesses[0] = std::move(accesses[2]);  // ends tensors[0]'s access; [2]'s moves
    CHECK_FALSE(accesses[2].open());
    accesses.clear();
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      auto view = tensors[i].read_view();
      std::size_t stale = 0;
      for (std::uint32_t e = 0; e < 64; ++e) stale += view[e] != value(e, iter + static_cast<cl_uint>(i));
      REQUIRE(stale == 0);
    }
  }
}

TEST_CASE("an empty tensor has size 0 and bytes 0 and refuses everything else", "[api]") {
  MappedTensor<float> empty;
  CHECK(empty.size() == 0);
  CHECK(empty.bytes() == 0);
  CHECK_FALSE(empty.usable());
  const std::string shape = message_of([&] { (void)empty.shape(); });
  CHECK(shape.find("clzero: MappedTensor::shape: use of an empty") != std::string::npos);
  CHECK(message_of([&] { (void)empty.buffer(); }).find("clzero: MappedTensor::buffer: ") == 0);
  MappedTensor<float> full(Env::get().queue, {5, 7}, Intent::output);
  CHECK(full.size() == 35);
  CHECK(full.bytes() == 140);
  MappedTensor<float> moved(std::move(full));
  CHECK(full.size() == 0);  // NOLINT(bugprone-use-after-move): a moved-from tensor is empty
}

TEST_CASE("every misuse message starts with the class and member that was called", "[api]") {
  Env& env = Env::get();
  MappedTensor<std::uint32_t, policy::Persistent> out(env.queue, {16}, Intent::output);
  MappedTensor<std::uint32_t, policy::Persistent> empty;
  auto dev = out.device_access();
  const std::pair<std::string, std::function<void()>> cases[] = {
      {"clzero: MappedTensor::device_access: ", [&] { (void)out.device_access(); }},
      {"clzero: MappedTensor::read_view: ", [&] { (void)out.read_view(); }},
      {"clzero: MappedTensor::write_view: ", [&] { (void)out.write_view(); }},
      {"clzero: MappedTensor::device_access: ", [&] { (void)empty.device_access(); }},
      {"clzero: MappedTensor::read_view: ", [&] { (void)empty.read_view(); }},
      {"clzero: MappedTensor::host_ready: ", [&] { (void)empty.host_ready(); }},
      {"clzero: DeviceAccess::bind: ", [&] { dev.bind(nullptr, 0); }},
      {"clzero: DeviceAccess::used_by: ", [&] { dev.used_by(nullptr); }},
  };
  for (const auto& c : cases) {
    const std::string what = message_of(c.second);
    INFO(what);
    CHECK(what.rfind(c.first, 0) == 0);
  }
  dev.end();
  for (const auto& c : std::vector<std::pair<std::string, std::function<void()>>>{
           {"clzero: DeviceAccess::wait_list: ", [&] { (void)dev.wait_list(); }},
           {"clzero: DeviceAccess::event_slot: ", [&] { (void)dev.event_slot(); }},
           {"clzero: DeviceAccess::bind: ", [&] { dev.bind(Kernel("fill_u32").k, 0); }}}) {
    const std::string what = message_of(c.second);
    INFO(what);
    CHECK(what.rfind(c.first, 0) == 0);
    CHECK(what.find("has ended") != std::string::npos);
  }
}

TEST_CASE("generic engine code reads arena parts without the template keyword", "[api]") {
  Env& env = Env::get();
  TensorArena<policy::Persistent> arena(
      env.context, env.queue, {ArenaPart::of<std::uint32_t>({8}), ArenaPart::of<std::uint8_t>({8})}, Intent::inout);
  {
    auto words = arena.write_view(0, as<std::uint32_t>);
    auto bytes = arena.write_view(1, as<std::uint8_t>);
    for (std::uint32_t i = 0; i < 8; ++i) {
      words[i] = value(i, 7);
      bytes[i] = byte_value(i, 7);
    }
  }
  CHECK(first_of_part<std::uint32_t>(arena, 0) == value(0, 7));
  CHECK(first_of_part<std::uint8_t>(arena, 1) == byte_value(0, 7));
  MappedTensor<std::uint32_t, policy::Persistent> t(env.queue, {8}, Intent::inout);
  {
    auto w = t.write_view();
    for (std::uint32_t i = 0; i < 8; ++i) w[i] = value(i, 9);
  }
  CHECK(t.read_view_as(4 * sizeof(std::uint32_t), {4}, as<std::uint32_t>)[0] == value(4, 9));
}

TEST_CASE("Auto restricted to buffers picks a buffer-backed policy by the same rules", "[api]") {
  DeviceCaps unified;
  unified.host_unified_memory = true;
  unified.svm_fine_grain_buffer = true;
  unified.intel_usm_host = true;
  DeviceCaps discrete = unified;
  discrete.host_unified_memory = false;
  for (Intent i : {Intent::output, Intent::input, Intent::inout}) {
    INFO(static_cast<int>(i));
    CHECK(policy::choose(unified, i, true).kind == policy::Choice::Kind::persistent);
    CHECK(policy::choose(unified, i, true).allocation.kind() == Allocation::Kind::alloc_host_ptr);
    CHECK(policy::choose(discrete, i, true).kind == policy::Choice::Kind::copy_to_pinned);
    for (const DeviceCaps& caps : {unified, discrete})
      for (const policy::Choice& c : policy::available(caps, i, true)) CHECK(c.buffer_backed());
    for (const policy::Choice& c : policy::Auto::measurement_candidates(discrete, i, true)) CHECK(c.buffer_backed());
  }
  discrete.nv_create_buffer = true;
  CHECK(policy::choose(discrete, Intent::output, true).allocation.kind() == Allocation::Kind::nv_host_pinned);
  // Without the restriction the pointer paths stay first where offered.
#if defined(CL_VERSION_2_0)
  CHECK_FALSE(policy::choose(unified, Intent::output).buffer_backed());
#endif
}

TEST_CASE("Auto restricted to buffers gives kernels a cl_mem on this device and fresh data", "[api]") {
  Env& env = Env::get();
  policy::Auto::Options only_buffers;
  only_buffers.buffers_only = true;
  for (bool measured : {false, true}) {
    // Measured: as on a discrete GPU, with the measurement forced on this device.
    if (measured) setenv("CLZERO_AUTO_MEASURE", "1", 1);
    MappedTensor<std::uint32_t> t(env.context, env.queue, {measured ? 5000u : 3000u}, Intent::output, only_buffers);
    if (measured) unsetenv("CLZERO_AUTO_MEASURE");
    const policy::Choice& c = t.policy().choice();
    INFO(c.label() << ": " << c.reason);
    CHECK(c.buffer_backed());
    CHECK(t.buffer() != nullptr);
    if (measured) CHECK(c.reason.find("measured at") != std::string::npos);
    {
      auto dev = t.device_access();
      CHECK(dev.buffer() != nullptr);
      CHECK(dev.svm_pointer() == nullptr);
    }
    CHECK(stale_after_fills(t, 1, 8) == 0);
  }
  policy::Auto::Options svm = only_buffers;
  svm.override_choice = true;
  svm.choice.kind = policy::Choice::Kind::svm;
  const std::string what = message_of([&] { MappedTensor<float> t(env.queue, {4}, Intent::output, svm); });
  CHECK(what.find("buffers_only asks for a cl_mem") != std::string::npos);
}
