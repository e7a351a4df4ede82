// SPDX-License-Identifier: Apache-2.0
// Auto's measurement only refines the rule: when it cannot be set up, Auto
// keeps the rule's choice and says why, instead of failing the tensor. Run
// under the fault layer, which fails clBuildProgram on demand;
// CLZERO_AUTO_MEASURE=1 makes Auto measure on this (unified-memory) device.
#include <clzero/clzero.hpp>

#include <cstdlib>
#include <string>

#include "harness/fault_layer.hpp"
#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

TEST_CASE("Auto keeps the rule's choice when its measurement cannot build its program (issue 10 defect 10)",
          "[auto_measure_fault]") {
  Env& env = Env::get();
  FaultLayer& layer = FaultLayer::get();
  setenv("CLZERO_AUTO_MEASURE", "1", 1);
  const policy::Choice rule = policy::choose(env.caps, Intent::output);
  // Sizes in size classes of their own, so that no earlier measurement is cached.
  for (std::size_t n : {std::size_t{1} << 10, std::size_t{1} << 12}) {
    layer.reset();
    layer.arm("clBuildProgram", 1, CL_COMPILER_NOT_AVAILABLE, CLZERO_FAULT_IMMEDIATE);
    std::string what;
    MappedTensor<std::uint32_t> t;
    try {
      t = MappedTensor<std::uint32_t>(env.context, env.queue, {n}, Intent::output);
    } catch (const Error& e) {
      what = e.what();
    }
    layer.disarm();
    INFO("error: " << what);
    REQUIRE(layer.fired() != nullptr);
    REQUIRE(what.empty());
    const policy::Choice& c = t.policy().choice();
    INFO("reason: " << c.reason);
    CHECK(c == rule);
    CHECK(c.reason.find(rule.reason) != std::string::npos);
    CHECK(c.reason.find("could not be set up") != std::string::npos);
    CHECK(c.reason.find("CL_COMPILER_NOT_AVAILABLE") != std::string::npos);
    // The tensor works: a kernel's data reaches the host.
    Kernel fill("fill_u32");
    for (cl_uint iter = 1; iter <= 3; ++iter) {
      {
        auto dev = t.device_access();
        dev.bind(fill.k, 0);
        fill.arg(1, static_cast<cl_uint>(n));
        fill.arg(2, iter);
        std::size_t global = n;
        ok(clEnqueueNDRangeKernel(env.queue, fill.k, 1, nullptr, &global, nullptr, dev.wait_count(), dev.wait_list(),
                                  dev.event_slot()),
           "clEnqueueNDRangeKernel");
      }
      auto view = t.read_view();
      std::size_t wrong = 0;
      for (std::uint32_t i = 0; i < view.size(); ++i) wrong += view[i] != value(i, iter);
      REQUIRE(wrong == 0);
    }
  }
  unsetenv("CLZERO_AUTO_MEASURE");
  // Once the compiler is back, Auto measures again: a failure is not cached.
  setenv("CLZERO_AUTO_MEASURE", "1", 1);
  MappedTensor<std::uint32_t> t(env.context, env.queue, {std::size_t{1} << 10}, Intent::output);
  unsetenv("CLZERO_AUTO_MEASURE");
  INFO("reason: " << t.policy().choice().reason);
  CHECK(t.policy().choice().reason.find("measured at") != std::string::npos);
}
