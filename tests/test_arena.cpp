// SPDX-License-Identifier: Apache-2.0
// TensorArena: several outputs in one allocation, fresh every inference, one
// mapping for all of them.
#include <clzero/clzero.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "support/catch.hpp"
#include "support/probes.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

// Three outputs of different types and odd sizes, as a detector head has.
std::vector<ArenaPart> parts() {
  return {ArenaPart::of<std::uint32_t>({7, 13}), ArenaPart::of<std::uint8_t>({33}),
          ArenaPart::of<std::uint32_t>({1000})};
}

template <class Policy>
void arena_outputs_are_fresh(const typename Policy::Options& options) {
  Env& env = Env::get();
  TensorArena<Policy> arena(env.context, env.queue, parts(), Intent::output, options);
  const std::size_t align = env.caps.mem_base_addr_align_bits / 8;
  for (std::size_t i = 0; i < arena.parts(); ++i) CHECK(arena.offset(i) % align == 0);
  Kernel f32("fill_u32"), f8("fill_u8"), f32b("fill_u32");
  for (cl_uint iter = 1; iter <= 10; ++iter) {
    {
      auto dev = arena.device_access();
      Kernel* ks[] = {&f32, &f8, &f32b};
      for (std::size_t p = 0; p < arena.parts(); ++p) {
        const cl_uint n = static_cast<cl_uint>(arena.part(p).shape.elements());
        dev.bind(ks[p]->k, 0, Part{p});
        ks[p]->arg(1, n);
        ks[p]->arg(2, iter + static_cast<cl_uint>(p));
        std::size_t global = n;
        cl_event done = nullptr;
        ok(clEnqueueNDRangeKernel(env.queue, ks[p]->k, 1, nullptr, &global, nullptr, dev.wait_count(), dev.wait_list(),
                                  &done),
           "clEnqueueNDRangeKernel");
        dev.used_by(done);
        clReleaseEvent(done);
      }
    }
    auto a = arena.template read_view<std::uint32_t>(0);
    auto b = arena.read_view(1, as<std::uint8_t>);  // the spelling without `.template`
    auto c = arena.template read_view<std::uint32_t>(2);
    if (arena.sub_buffer(0) != nullptr && std::string(Policy::name) == "MapPerInference")
      CHECK(settled_map_count(arena.tensor().buffer(), 1) == 1);  // three views, one mapping
    std::size_t wrong = 0;
    for (std::uint32_t i = 0; i < a.size(); ++i) wrong += a[i] != value(i, iter);
    for (std::uint32_t i = 0; i < b.size(); ++i) wrong += b[i] != byte_value(i, iter + 1);
    for (std::uint32_t i = 0; i < c.size(); ++i) wrong += c[i] != value(i, iter + 2);
    INFO(Policy::name << ", iteration " << iter);
    REQUIRE(a.size() + b.size() + c.size() == 91 + 33 + 1000);
    REQUIRE(wrong == 0);
    CHECK(a(6, 12) == value(90, iter));
  }
}

}  // namespace

TEST_CASE("an arena's parts are fresh every inference with every policy", "[arena]") {
  arena_outputs_are_fresh<policy::Persistent>({});
  arena_outputs_are_fresh<policy::MapPerInference>({});
  arena_outputs_are_fresh<policy::CopyToPinned>({});
  arena_outputs_are_fresh<policy::Auto>({});
#if defined(CL_VERSION_2_0)
  if (Env::get().caps.svm_fine_grain_buffer) arena_outputs_are_fresh<policy::Svm>({policy::Svm::Grain::fine});
  if (Env::get().caps.svm_coarse_grain_buffer) arena_outputs_are_fresh<policy::Svm>({policy::Svm::Grain::coarse});
#endif
}

TEST_CASE("an arena's inputs reach the kernels every inference", "[arena]") {
  Env& env = Env::get();
  TensorArena<policy::Persistent> arena(
      env.context, env.queue, {ArenaPart::of<std::uint32_t>({300}), ArenaPart::of<std::uint32_t>({5})}, Intent::input);
  Kernel copy("copy_u32");
  const std::size_t counts[] = {300, 5};
  MemHandle seen[2];
  for (std::size_t p = 0; p < 2; ++p) {
    cl_int rc = CL_SUCCESS;
    seen[p] = MemHandle::adopt(clCreateBuffer(env.context, CL_MEM_READ_WRITE, counts[p] * 4, nullptr, &rc));
    ok(rc, "clCreateBuffer");
  }
  for (cl_uint iter = 1; iter <= 6; ++iter) {
    {
      auto x = arena.write_view<std::uint32_t>(0);
      auto params = arena.write_view<std::uint32_t>(1);  // per-call parameters ride along
      for (std::uint32_t i = 0; i < 300; ++i) x[i] = value(i, iter);
      for (std::uint32_t i = 0; i < 5; ++i) params[i] = value(i, 100 + iter);
    }
    {
      auto dev = arena.device_access();
      for (std::size_t p = 0; p < 2; ++p) {
        dev.bind(copy.k, 0, Part{p});
        copy.arg(1, seen[p].get());
        copy.arg(2, static_cast<cl_uint>(counts[p]));
        std::size_t global = counts[p];
        ok(clEnqueueNDRangeKernel(env.queue, copy.k, 1, nullptr, &global, nullptr, dev.wait_count(), dev.wait_list(),
                                  dev.event_slot()),
           "clEnqueueNDRangeKernel");
      }
    }
    for (std::size_t p = 0; p < 2; ++p) {
      std::vector<std::uint32_t> got(counts[p]);
      ok(clEnqueueReadBuffer(env.queue, seen[p].get(), CL_TRUE, 0, counts[p] * 4, got.data(), 0, nullptr, nullptr),
         "clEnqueueReadBuffer");
      for (std::uint32_t i = 0; i < counts[p]; ++i) REQUIRE(got[i] == value(i, p == 0 ? iter : 100 + iter));
    }
  }
}

TEST_CASE("an arena rejects wrong parts and types", "[arena]") {
  Env& env = Env::get();
  TensorArena<policy::Persistent> arena(env.context, env.queue, parts(), Intent::output);
  auto error_of = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  CHECK(error_of([&] { (void)arena.read_view<std::uint32_t>(3); }).find("part 3 of an arena of 3") !=
        std::string::npos);
  CHECK(error_of([&] { (void)arena.read_view<std::uint32_t>(1); }).find("1-byte elements") != std::string::npos);
  CHECK(error_of([&] {
          TensorArena<policy::Persistent> a(env.context, env.queue, {}, Intent::output);
        }).find("at least one part") != std::string::npos);
}

TEST_CASE("an arena's queries past its last part raise clzero's invalid_argument, naming the call", "[arena]") {
  Env& env = Env::get();
  TensorArena<policy::Persistent> arena(env.context, env.queue, parts(), Intent::output);
  const std::pair<const char*, std::function<void()>> queries[] = {
      {"TensorArena::part", [&] { (void)arena.part(3); }},
      {"TensorArena::offset", [&] { (void)arena.offset(3); }},
      {"TensorArena::sub_buffer", [&] { (void)arena.sub_buffer(3); }},
  };
  for (const auto& [call, query] : queries) {
    INFO(call);
    bool raised = false;
    try {
      query();
    } catch (const Error& e) {
      raised = true;
      CHECK(e.kind() == ErrorKind::invalid_argument);
      const std::string what = e.what();
      CHECK(what.find(std::string("clzero: ") + call) == 0);
      CHECK(what.find("part 3 of an arena of 3 parts") != std::string::npos);
    } catch (const std::exception& e) {
      FAIL_CHECK(call << " raised " << e.what() << ", not a clzero::Error");
      raised = true;
    }
    CHECK(raised);
  }
  // In range the queries answer, and the arena still works.
  CHECK(arena.part(2).shape.elements() == 1000);
  CHECK(arena.offset(0) == 0);
  auto v = arena.read_view<std::uint32_t>(2);
  CHECK(v.size() == 1000);
}

namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Every policy this device runs, as a function that builds an arena of
// `parts` with it (the arena is dropped at once).
std::vector<std::pair<const char*, std::function<void(std::vector<ArenaPart>)>>> arena_makers() {
  Env& env = Env::get();
  std::vector<std::pair<const char*, std::function<void(std::vector<ArenaPart>)>>> makers = {
      {"Persistent",
       [&env](std::vector<ArenaPart> p) {
         TensorArena<policy::Persistent>(env.context, env.queue, p, Intent::output);
       }},
      {"MapPerInference",
       [&env](std::vector<ArenaPart> p) {
         TensorArena<policy::MapPerInference>(env.context, env.queue, p, Intent::output);
       }},
      {"CopyToPinned",
       [&env](std::vector<ArenaPart> p) {
         TensorArena<policy::CopyToPinned>(env.context, env.queue, p, Intent::output);
       }},
      {"Auto",
       [&env](std::vector<ArenaPart> p) { TensorArena<policy::Auto>(env.context, env.queue, p, Intent::output); }},
  };
#if defined(CL_VERSION_2_0)
  if (env.caps.svm_fine_grain_buffer)
    makers.push_back({"Svm (fine)", [&env](std::vector<ArenaPart> p) {
                        TensorArena<policy::Svm>(env.context, env.queue, p, Intent::output, {policy::Svm::Grain::fine});
                      }});
  if (env.caps.svm_coarse_grain_buffer)
    makers.push_back({"Svm (coarse)", [&env](std::vector<ArenaPart> p) {
                        TensorArena<policy::Svm>(env.context, env.queue, p, Intent::output,
                                                 {policy::Svm::Grain::coarse});
                      }});
#endif
  if (env.caps.intel_usm_host)
    makers.push_back({"UnifiedHost", [&env](std::vector<ArenaPart> p) {
                        TensorArena<policy::UnifiedHost>(env.context, env.queue, p, Intent::output);
                      }});
  return makers;
}

}  // namespace

TEST_CASE("an arena access cannot bind a part once it has ended (issue 10 defect 6)", "[arena]") {
  Env& env = Env::get();
  TensorArena<policy::Persistent> arena(env.context, env.queue, parts(), Intent::output);
  REQUIRE(arena.sub_buffer(0) != nullptr);  // buffer-backed: parts are sub-buffers
  Kernel fill("fill_u32");
  auto dev = arena.device_access();
  dev.end();
  const std::string what = message_of([&] { dev.bind(fill.k, 0, Part{0}); });
  INFO(what);
  CHECK(what.find("ArenaAccess::bind") != std::string::npos);
  CHECK(what.find("has ended") != std::string::npos);
  CHECK(what.find("TensorArena::device_access()") != std::string::npos);
  // The tensor is untouched: a view opens (nothing was bound to a mapped buffer).
  CHECK_NOTHROW(arena.read_view<std::uint32_t>(0));
}

TEST_CASE("arena sizes that overflow std::size_t are rejected at every step (issue 10 defect 7)", "[arena]") {
  const std::size_t big = std::size_t{1} << 62;
  for (auto& maker : arena_makers()) {
    auto error = [&](std::vector<ArenaPart> p) { return message_of([&] { maker.second(std::move(p)); }); };
    INFO(maker.first);
    // 2^62 + 1 floats: 2^64 + 4 bytes, which wraps to a 4-byte allocation.
    const std::string one = error({ArenaPart::of<float>({big + 1})});
    INFO(one);
    CHECK(one.find("part 0 (shape [" + std::to_string(big + 1) + "])") != std::string::npos);
    CHECK(one.find("4-byte elements overflows std::size_t bytes") != std::string::npos);
    // Two parts of 2^63 bytes each: the second would start where the first does.
    const std::string two = error({ArenaPart::of<float>({big / 2}), ArenaPart::of<float>({big / 2})});
    INFO(two);
    CHECK(two.find("part 1 ") != std::string::npos);
    CHECK(two.find("overflow") != std::string::npos);
    // {2^31, 2^31} floats: 2^64 bytes, which wraps to 0.
    const std::string square = error({ArenaPart::of<float>({std::size_t{1} << 31, std::size_t{1} << 31})});
    INFO(square);
    CHECK(square.find("overflows std::size_t bytes") != std::string::npos);
    CHECK(square.find("extent 0 is 0") == std::string::npos);
    // The round-up of an offset to the part's alignment.
    const std::string align =
        error({ArenaPart{1, 1, {std::numeric_limits<std::size_t>::max() - 2}}, ArenaPart{1, 64, {1}}});
    INFO(align);
    CHECK(align.find("part 1 ") != std::string::npos);
    CHECK(align.find("overflow") != std::string::npos);
  }
}

TEST_CASE("a zero-byte arena part is rejected with one message on every policy (issue 10 defect 7)", "[arena]") {
  std::string first;
  for (auto& maker : arena_makers()) {
    INFO(maker.first);
    const std::string what = message_of([&] { maker.second({ArenaPart::of<float>({8}), ArenaPart{0, 1, {16}}}); });
    INFO(what);
    CHECK(what.find("part 1 (shape [16]) has 0-byte elements") != std::string::npos);
    if (first.empty()) first = what;
    CHECK(what == first);
  }
}

TEST_CASE("an arena access offers what a device access offers, part by part", "[arena]") {
  Env& env = Env::get();
  TensorArena<policy::Persistent> buffers(env.context, env.queue, parts(), Intent::output);
  auto dev = buffers.device_access();
  CHECK(dev.open());
  CHECK(dev.parts() == 3);
  CHECK(dev.access() == Access::write);
  CHECK(dev.waits().count() == dev.wait_count());
  CHECK(dev.waits().data() == dev.wait_list());
  for (std::size_t p = 0; p < 3; ++p) {
    CHECK(dev.buffer(Part{p}) == buffers.sub_buffer(p));
    CHECK(dev.svm_pointer(Part{p}) == nullptr);
    CHECK(dev.offset(Part{p}) == buffers.offset(p));
  }
  CHECK(message_of([&] { (void)dev.buffer(Part{3}); }).find("part 3 of an arena of 3") != std::string::npos);
  // Move-assigned: the access it replaces ends first, and the arena is the host's again.
  TensorArena<policy::Persistent> other(env.context, env.queue, parts(), Intent::output);
  auto second = other.device_access();
  dev = std::move(second);
  CHECK_FALSE(second.open());
  CHECK(dev.open());
  CHECK_NOTHROW(buffers.read_view<std::uint32_t>(0));
  dev.end();
  CHECK(message_of([&] { (void)dev.waits(); }).find("ArenaAccess::waits: this ArenaAccess has ended") !=
        std::string::npos);
#if defined(CL_VERSION_2_0)
  if (env.caps.svm_fine_grain_buffer) {
    TensorArena<policy::Svm> svm(env.context, env.queue, parts(), Intent::output, {policy::Svm::Grain::fine});
    auto s = svm.device_access();
    for (std::size_t p = 0; p < 3; ++p) {
      CHECK(s.buffer(Part{p}) == nullptr);
      CHECK(static_cast<unsigned char*>(s.svm_pointer(Part{p})) ==
            static_cast<unsigned char*>(s.svm_pointer(Part{0})) + svm.offset(p));
    }
  }
#endif
}
