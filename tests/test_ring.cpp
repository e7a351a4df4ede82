// SPDX-License-Identifier: Apache-2.0
// TensorRing: the host reads inference i while inference i+1 is enqueued;
// every element of every inference is still fresh.
#include <clzero/clzero.hpp>

#include <cstdint>
#include <string>

#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

template <class Policy>
void pipelined_outputs_are_fresh(std::size_t slots) {
  Env& env = Env::get();
  const std::size_t n = 50000;
  TensorRing<std::uint32_t, Policy> ring(env.context, env.queue, {n}, Intent::output, slots);
  Kernel fill("fill_u32");
  const std::size_t inferences = 24;
  std::size_t checked = 0;
  for (std::size_t i = 0; i <= inferences; ++i) {
    if (i < inferences) {  // enqueue inference i
      auto dev = ring[i].device_access();
      dev.bind(fill.k, 0);
      fill.arg(1, static_cast<cl_uint>(n));
      fill.arg(2, static_cast<cl_uint>(i + 1));
      launch(env.queue, fill.k, n, dev);
    }
    if (i >= 1) {  // read inference i-1 while i runs
      auto view = ring[i - 1].read_view();
      std::size_t wrong = 0;
      for (std::uint32_t e = 0; e < n; ++e) wrong += view[e] != value(e, static_cast<std::uint32_t>(i));
      INFO(Policy::name << ", " << slots << " slots, inference " << i - 1);
      REQUIRE(wrong == 0);
      checked += n;
    }
  }
  CHECK(checked == n * inferences);
}

}  // namespace

TEST_CASE("a ring of tensors gives fresh data while inferences overlap", "[ring]") {
  for (std::size_t slots : {2u, 3u}) {
    pipelined_outputs_are_fresh<policy::Persistent>(slots);
    pipelined_outputs_are_fresh<policy::CopyToPinned>(slots);
    pipelined_outputs_are_fresh<policy::MapPerInference>(slots);
    pipelined_outputs_are_fresh<policy::Auto>(slots);
  }
}

TEST_CASE("a ring needs at least one slot", "[ring]") {
  Env& env = Env::get();
  bool threw = false;
  try {
    TensorRing<float, policy::Persistent> ring(env.context, env.queue, {4}, Intent::output, 0);
  } catch (const Error& e) {
    threw = e.kind() == ErrorKind::invalid_argument;
  }
  CHECK(threw);
}

TEST_CASE("a ring's Auto overlaps a copy where a lone tensor would write host-located memory", "[ring]") {
  Env& env = Env::get();
  TensorRing<std::uint32_t> ring(env.context, env.queue, {4096}, Intent::output, 2);
  MappedTensor<std::uint32_t> lone(env.context, env.queue, {4096}, Intent::output);
  const policy::Choice& in_ring = ring[0].policy().choice();
  const policy::Choice& alone = lone.policy().choice();
  INFO("ring: " << in_ring.label() << " (" << in_ring.reason << "); lone: " << alone.label());
  if (policy::choose(env.caps, Intent::output).allocation.kind() == Allocation::Kind::nv_host_pinned &&
      !env.caps.host_unified_memory) {
    CHECK(in_ring.kind == policy::Choice::Kind::copy_to_pinned);
    CHECK(in_ring.reason.find("TensorRing") != std::string::npos);
  } else {
    CHECK(in_ring.kind == alone.kind);  // only that case differs
  }
}

TEST_CASE("indexing a moved-from ring is an error", "[ring]") {
  Env& env = Env::get();
  TensorRing<std::uint32_t, policy::Persistent> a(env.context, env.queue, {16}, Intent::output, 2);
  TensorRing<std::uint32_t, policy::Persistent> b(std::move(a));
  CHECK(b.slots() == 2);
  CHECK(a.slots() == 0);  // NOLINT(bugprone-use-after-move): what is tested
  for (std::size_t inference : {std::size_t{0}, std::size_t{5}}) {
    INFO("ring[" << inference << "]");
    bool threw = false;
    try {
      (void)a[inference];  // NOLINT(bugprone-use-after-move)
    } catch (const Error& e) {
      threw = true;
      CHECK(e.kind() == ErrorKind::misuse);
      CHECK(std::string(e.what()).find("moved-from") != std::string::npos);
    }
    CHECK(threw);
  }
  const auto& constant = a;  // NOLINT(bugprone-use-after-move)
  CHECK_THROWS_AS((void)constant[1], Error);
  CHECK_NOTHROW((void)b[3].read_view());
}
