// SPDX-License-Identifier: Apache-2.0
// TensorArena: several outputs in one allocation, fresh every inference, one
// mapping for all of them.
#include <clzero/clzero.hpp>

#include <cstdint>
#include <string>
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
        dev.bind(p, ks[p]->k, 0);
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
    auto b = arena.template read_view<std::uint8_t>(1);
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
        dev.bind(p, copy.k, 0);
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
