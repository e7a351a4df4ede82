// SPDX-License-Identifier: Apache-2.0
// policy::choose, policy::available, clzero::measure and policy::Auto: the
// documented rules, applied to described devices and to the real one.
#include <clzero/clzero.hpp>

#include <cstdint>
#include <string>

#include "support/catch.hpp"
#include "support/freshness.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;
using Kind = policy::Choice::Kind;

namespace {

DeviceCaps discrete_gpu() {
  DeviceCaps c;
  c.name = "a discrete GPU";
  c.type = CL_DEVICE_TYPE_GPU;
  c.host_unified_memory = false;
  return c;
}

}  // namespace

TEST_CASE("Auto needs no map on unified-memory devices with SVM or USM, else maps at rest", "[choice]") {
  DeviceCaps c = discrete_gpu();
  c.host_unified_memory = true;
  for (Intent i : {Intent::output, Intent::input, Intent::inout}) {
    c.svm_fine_grain_buffer = true;
    c.intel_usm_host = true;
#if defined(CL_VERSION_2_0)
    CHECK(policy::choose(c, i).kind == Kind::svm);
    CHECK(policy::choose(c, i).svm_fine);
#endif
    c.svm_fine_grain_buffer = false;
    CHECK(policy::choose(c, i).kind == Kind::unified_host);
    c.intel_usm_host = false;
    const policy::Choice choice = policy::choose(c, i);
    CHECK(choice.kind == Kind::persistent);
    CHECK(choice.allocation.kind() == Allocation::Kind::alloc_host_ptr);
    CHECK(choice.reason.find("CL_DEVICE_HOST_UNIFIED_MEMORY") != std::string::npos);
  }
}

TEST_CASE("Auto puts inputs of a discrete GPU in device memory", "[choice]") {
  DeviceCaps c = discrete_gpu();
  c.nv_create_buffer = true;
  CHECK(policy::choose(c, Intent::input).kind == Kind::copy_to_pinned);
}

TEST_CASE("Auto writes outputs of an NVIDIA GPU straight into pinned host memory", "[choice]") {
  DeviceCaps c = discrete_gpu();
  c.nv_create_buffer = true;
  c.svm_fine_grain_buffer = true;
  const policy::Choice choice = policy::choose(c, Intent::output);
  CHECK(choice.kind == Kind::persistent);
  CHECK(choice.allocation.kind() == Allocation::Kind::nv_host_pinned);
  CHECK(choice.label() == "Persistent (nv_host_pinned)");
}

TEST_CASE("Auto prefers fine-grained SVM, then Intel USM, then CopyToPinned on a discrete GPU", "[choice]") {
  DeviceCaps c = discrete_gpu();
  c.intel_usm_host = true;
#if defined(CL_VERSION_2_0)
  c.svm_fine_grain_buffer = true;
  CHECK(policy::choose(c, Intent::output).kind == Kind::svm);
  CHECK(policy::choose(c, Intent::output).svm_fine);
  c.svm_fine_grain_buffer = false;
#endif
  CHECK(policy::choose(c, Intent::inout).kind == Kind::unified_host);
  c.intel_usm_host = false;
  c.svm_coarse_grain_buffer = true;  // coarse SVM maps like a buffer: no gain over pinned copies
  CHECK(policy::choose(c, Intent::output).kind == Kind::copy_to_pinned);
}

TEST_CASE("available lists the rule's choice first and only what the device offers", "[choice]") {
  const DeviceCaps& caps = Env::get().caps;
  const auto all = policy::available(caps, Intent::output);
  REQUIRE(!all.empty());
  CHECK(all.front() == policy::choose(caps, Intent::output));
  for (const auto& c : all) {
    INFO(c.label());
    if (c.kind == Kind::persistent && c.allocation.kind() == Allocation::Kind::nv_host_pinned)
      CHECK(caps.nv_create_buffer);
    if (c.kind == Kind::unified_host) CHECK(caps.intel_usm_host);
    if (c.kind == Kind::svm) CHECK((c.svm_fine ? caps.svm_fine_grain_buffer : caps.svm_coarse_grain_buffer));
  }
}

TEST_CASE("measuring every available policy finds each one fresh", "[choice]") {
  Env& env = Env::get();
  const auto candidates = policy::available(env.caps, Intent::output);
  for (std::size_t bytes : {std::size_t{4}, std::size_t{4096}, std::size_t{1} << 20}) {
    const auto results = measure(env.context, env.device, bytes, Intent::output, candidates, 5);
    REQUIRE(results.size() == candidates.size());
    for (const Measurement& m : results) {
      INFO(bytes << " bytes, " << m.choice.label() << ": " << m.error);
      CHECK(m.error.empty());
      CHECK(m.fresh);
      CHECK(m.us_per_inference > 0);
    }
  }
}

TEST_CASE("Auto takes an engine's stored choice when told to", "[choice]") {
  policy::Auto::Options o;
  o.override_choice = true;
  o.choice.kind = Kind::copy_to_pinned;
  o.choice.reason = "stored by the engine";
  MappedTensor<std::uint32_t, policy::Auto> t(Env::get().queue, {64}, Intent::output, o);
  CHECK(t.policy().choice().kind == Kind::copy_to_pinned);
  CHECK(t.policy().choice().reason == "stored by the engine");
  CHECK(t.policy().describe().find("CopyToPinned") != std::string::npos);
  const Verdict v = output_freshness<std::uint32_t, policy::Auto>(o, 4096, 8);
  CHECK(v.wrong == 0);
}

namespace {

Measurement measured(policy::Choice c, double us, bool fresh, const char* error = "") {
  Measurement m;
  m.choice = std::move(c);
  m.us_per_inference = us;
  m.fresh = fresh;
  m.error = error;
  return m;
}

policy::Choice of_kind(Kind kind) {
  policy::Choice c;
  c.kind = kind;
  if (kind == Kind::persistent) c.allocation = Allocation::nv_host_pinned();
  return c;
}

}  // namespace

TEST_CASE("Auto never runs a policy its measurement saw return stale data (issue 10 defect 3)", "[choice]") {
  const policy::Choice rule = policy::choose(
      [] {
        DeviceCaps c = discrete_gpu();
        c.nv_create_buffer = true;
        return c;
      }(),
      Intent::output);
  REQUIRE(rule.kind == Kind::persistent);

  SECTION("the rule's choice stale, the others failed: MapPerInference, and the reason says why") {
    const policy::Choice c = policy::Auto::decide_measured(
        rule, {measured(rule, 10, false), measured(of_kind(Kind::copy_to_pinned), 0, true, "clzero: it failed")}, 4096);
    INFO(c.reason);
    CHECK(c.kind == Kind::map_per_inference);
    CHECK(c.reason.find("no candidate returned fresh data") != std::string::npos);
    CHECK(c.reason.find("STALE") != std::string::npos);
    CHECK(c.reason.find("fastest fresh policy") == std::string::npos);
  }
  SECTION("every candidate stale") {
    const policy::Choice c = policy::Auto::decide_measured(
        rule, {measured(rule, 10, false), measured(of_kind(Kind::copy_to_pinned), 20, false)}, 4096);
    CHECK(c.kind == Kind::map_per_inference);
  }
  SECTION("the rule's choice stale but fast, another fresh: the fresh one") {
    const policy::Choice c = policy::Auto::decide_measured(
        rule, {measured(rule, 1, false), measured(of_kind(Kind::copy_to_pinned), 50, true)}, 4096);
    CHECK(c.kind == Kind::copy_to_pinned);
  }
  SECTION("the rule's choice fresh and within 5 %: kept") {
    const policy::Choice c = policy::Auto::decide_measured(
        rule, {measured(rule, 10.4, true), measured(of_kind(Kind::copy_to_pinned), 10, true)}, 4096);
    CHECK(c == rule);
    CHECK(c.reason.find("confirmed by measurement") != std::string::npos);
  }
}
