// SPDX-License-Identifier: Apache-2.0
// The host's wait (poll first, or block in clWaitForEvents) is measured on
// the device the first time a tensor is made there, kept for the device, and
// used by every tensor on it; CLZERO_WAIT_MEASURE=0 leaves the device-type
// rule in place.
#include <clzero/clzero.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

TEST_CASE("The host's wait is measured on the device, once, and every tensor on the device uses it", "[wait_method]") {
  Env& env = Env::get();
  const detail::WaitMethod first = detail::wait_method(env.context, env.device);
  CHECK(first.measured);
  CHECK(first.poll_us > 0);
  CHECK(first.block_us > 0);
  CHECK(first.poll == !(first.block_us < detail::kBlockMustWinBy * first.poll_us));
  CHECK(first.reason.find("measured") != std::string::npos);

  // Kept: a second measurement would not give the very same medians.
  const detail::WaitMethod again = detail::wait_method(env.context, env.device);
  CHECK(again.poll_us == first.poll_us);
  CHECK(again.block_us == first.block_us);

  // A tensor's queue context carries the device's choice.
  const detail::QueueContext q = detail::QueueContext::make(env.context, env.queue, "test");
  CHECK(q.spin == first.poll);

  // And a tensor made now still reads fresh data with it.
  const std::size_t n = 4096;
  MappedTensor<std::uint32_t, policy::MapPerInference> t(env.context, env.queue, {n}, Intent::output);
  Kernel fill("fill_u32");
  for (cl_uint iter = 1; iter <= 5; ++iter) {
    {
      auto dev = t.device_access();
      dev.bind(fill.k, 0);
      fill.arg(1, static_cast<cl_uint>(n));
      fill.arg(2, iter);
      launch(env.queue, fill.k, n, dev);
    }
    auto view = t.read_view();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += view[i] != value(static_cast<std::uint32_t>(i), iter) ? 1 : 0;
    REQUIRE(wrong == 0);
  }
}

TEST_CASE("Without the measurement, host views poll on devices with their own processors and block on CPUs",
          "[wait_rule]") {
  Env& env = Env::get();
  const char* env_value = std::getenv("CLZERO_WAIT_MEASURE");
  REQUIRE(env_value != nullptr);
  REQUIRE(std::string(env_value) == "0");
  const detail::WaitMethod w = detail::wait_method(env.context, env.device);
  cl_device_type type = 0;
  REQUIRE(clGetDeviceInfo(env.device, CL_DEVICE_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS);
  CHECK_FALSE(w.measured);
  CHECK(w.poll == ((type & CL_DEVICE_TYPE_CPU) == 0));
  CHECK(w.reason.find("CLZERO_WAIT_MEASURE=0") != std::string::npos);
}
