// SPDX-License-Identifier: Apache-2.0
// std::span (C++20): a host view converts to the span that C++20 code takes,
// with the view's data and size; the view keeps the tensor host-owned while
// the span is in use.
#include <clzero/clzero.hpp>

#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

static_assert(__cplusplus >= 202002L, "this test is built as C++20");

namespace {

// What engine code written for C++20 looks like: it takes spans, not views.
std::size_t count_stale(std::span<const std::uint32_t> out, std::uint32_t iter) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < out.size(); ++i) wrong += out[i] != value(static_cast<std::uint32_t>(i), iter);
  return wrong;
}

void write_input(std::span<std::uint32_t> in, std::uint32_t iter) {
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = value(static_cast<std::uint32_t>(i), iter);
}

}  // namespace

TEST_CASE("a read view converts to std::span of const elements, fresh every inference", "[span]") {
  Env& env = Env::get();
  constexpr std::size_t n = 3 * 1031;
  MappedTensor<std::uint32_t, policy::Persistent> tensor(env.context, env.queue, {3, 1031}, Intent::output);
  Kernel fill("fill_u32");
  std::size_t wrong = 0, checked = 0;
  for (std::uint32_t iter = 1; iter <= 8; ++iter) {
    {
      auto dev = tensor.device_access();
      dev.bind(fill.k, 0);
      fill.arg(1, static_cast<cl_uint>(n));
      fill.arg(2, iter);
      launch(env.queue, fill.k, n, dev);
    }
    auto view = tensor.read_view();
    std::span<const std::uint32_t> s = view;  // implicit, like a container
    REQUIRE(s.data() == view.data());
    REQUIRE(s.size() == n);
    REQUIRE(view.span().size() == n);
    checked += s.size();
    wrong += count_stale(view, iter);
  }
  CHECK(checked == n * 8);
  CHECK(wrong == 0);
}

TEST_CASE("a write view converts to std::span of mutable elements", "[span]") {
  Env& env = Env::get();
  constexpr std::size_t n = 4096;
  MappedTensor<std::uint32_t, policy::Persistent> tensor(env.context, env.queue, {n}, Intent::input);
  Kernel copy("copy_u32");
  cl_int rc = CL_SUCCESS;
  MemHandle check = MemHandle::adopt(clCreateBuffer(env.context, CL_MEM_READ_WRITE, n * 4, nullptr, &rc));
  ok(rc, "clCreateBuffer");
  std::vector<std::uint32_t> seen(n);
  std::size_t wrong = 0;
  for (std::uint32_t iter = 1; iter <= 6; ++iter) {
    write_input(tensor.write_view(), iter);  // the view lives until the end of the full expression
    {
      auto dev = tensor.device_access();
      dev.bind(copy.k, 0);
      copy.arg(1, check.get());
      copy.arg(2, static_cast<cl_uint>(n));
      launch(env.queue, copy.k, n, dev);
    }
    ok(clEnqueueReadBuffer(env.queue, check.get(), CL_TRUE, 0, n * 4, seen.data(), 0, nullptr, nullptr),
       "clEnqueueReadBuffer");
    wrong += count_stale(seen, iter);
  }
  CHECK(wrong == 0);
}

TEST_CASE("an ended view converts to an empty span", "[span]") {
  Env& env = Env::get();
  MappedTensor<float, policy::Persistent> tensor(env.context, env.queue, {16}, Intent::output);
  auto view = tensor.read_view();
  view.reset();
  std::span<const float> s = view;
  CHECK(s.empty());
  CHECK(std::accumulate(s.begin(), s.end(), 0.0f) == 0.0f);
}
