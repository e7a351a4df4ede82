// SPDX-License-Identifier: Apache-2.0
// Every policy, every allocation, every intent: kernels write values that
// change every iteration, the host checks every element of every iteration.
// Sizes: 4 B, 4 KiB, 1 MiB, 16 MiB (64 MiB on request) and odd byte counts
// (1, 3, 4097, 1000003).
#include <clzero/clzero.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/freshness.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

struct Size {
  std::size_t bytes;
  int iterations;
};
// Large sizes run fewer iterations; each still checks every element.
// CLZERO_TEST_LARGE=1 adds 64 MiB (the GPU machine's run sets it).
std::vector<Size> sizes() {
  std::vector<Size> s = {{4, 24}, {4096, 16}, {1 << 20, 6}, {16 << 20, 3}, {1, 24}, {3, 24}, {4097, 12}, {1000003, 4}};
  const char* large = std::getenv("CLZERO_TEST_LARGE");
  if (large != nullptr && large[0] == '1') s.push_back({std::size_t{64} << 20, 3});
  return s;
}

template <class Policy>
void every_intent_every_size(const typename Policy::Options& options) {
  for (const Size& s : sizes()) {
    for (Intent intent : {Intent::output, Intent::input, Intent::inout}) {
      INFO("bytes " << s.bytes << ", intent " << to_string(intent) << ", " << s.iterations << " iterations");
      Verdict v;
      if (s.bytes % 4 == 0) {
        const std::size_t n = s.bytes / 4;
        v = intent == Intent::output  ? output_freshness<std::uint32_t, Policy>(options, n, s.iterations)
            : intent == Intent::input ? input_freshness<std::uint32_t, Policy>(options, n, s.iterations)
                                      : inout_freshness<std::uint32_t, Policy>(options, n, s.iterations);
      } else {
        v = intent == Intent::output  ? output_freshness<std::uint8_t, Policy>(options, s.bytes, s.iterations)
            : intent == Intent::input ? input_freshness<std::uint8_t, Policy>(options, s.bytes, s.iterations)
                                      : inout_freshness<std::uint8_t, Policy>(options, s.bytes, s.iterations);
      }
      INFO(v.first_wrong);
      CHECK(v.checked == (s.bytes % 4 == 0 ? s.bytes / 4 : s.bytes) * static_cast<std::size_t>(s.iterations));
      CHECK(v.wrong == 0);
    }
  }
}

// Runs the freshness matrix where the device offers the policy; where it
// does not, checks that construction fails with ErrorKind::unsupported and a
// message naming what is missing (never a silent fallback).
template <class Policy>
void where_supported(const typename Policy::Options& options, const char* missing) {
  bool supported = true;
  try {
    MappedTensor<std::uint32_t, Policy> probe(Env::get().queue, {1}, Intent::output, options);
  } catch (const Error& e) {
    INFO(e.what());
    REQUIRE(e.kind() == ErrorKind::unsupported);
    REQUIRE(std::string(e.what()).find(missing) != std::string::npos);
    supported = false;
  }
  if (supported)
    every_intent_every_size<Policy>(options);
  else  // said, so that a run can tell a device without the memory from one whose freshness was checked
    CLZERO_NOT_RUN("not run here: the device lacks " << missing << ", and the policy is refused as unsupported");
}

}  // namespace

TEST_CASE("MapPerInference over ALLOC_HOST_PTR gives fresh data every inference", "[freshness]") {
  every_intent_every_size<policy::MapPerInference>({Allocation::alloc_host_ptr()});
}

TEST_CASE("MapPerInference over USE_HOST_PTR gives fresh data every inference", "[freshness]") {
  every_intent_every_size<policy::MapPerInference>({Allocation::use_host_ptr()});
}

TEST_CASE("Persistent over ALLOC_HOST_PTR gives fresh data every inference", "[freshness]") {
  every_intent_every_size<policy::Persistent>({Allocation::alloc_host_ptr()});
}

TEST_CASE("Persistent over USE_HOST_PTR gives fresh data every inference", "[freshness]") {
  every_intent_every_size<policy::Persistent>({Allocation::use_host_ptr()});
}

TEST_CASE("Persistent over NVIDIA host-pinned memory gives fresh data, or says the device lacks it", "[freshness]") {
  where_supported<policy::Persistent>({Allocation::nv_host_pinned()}, "cl_nv_create_buffer");
}

// A view that polled only the map's event read stale elements on the H200
// (NVIDIA's driver 580: the map of host-located memory completes before the
// kernel's writes land), in clzero_sequences at cb6482c.
TEST_CASE("MapPerInference over NVIDIA host-pinned memory gives fresh data, or says the device lacks it",
          "[freshness]") {
  where_supported<policy::MapPerInference>({Allocation::nv_host_pinned()}, "cl_nv_create_buffer");
}

TEST_CASE("CopyToPinned gives fresh data every inference", "[freshness]") {
  every_intent_every_size<policy::CopyToPinned>({});
}

#if defined(CL_VERSION_2_0)
TEST_CASE("Svm with fine-grained buffers gives fresh data, or says the device lacks them", "[freshness]") {
  where_supported<policy::Svm>({policy::Svm::Grain::fine}, "fine-grained buffer SVM");
}

TEST_CASE("Svm with coarse-grained buffers gives fresh data, or says the device lacks them", "[freshness]") {
  where_supported<policy::Svm>({policy::Svm::Grain::coarse}, "coarse-grained buffer SVM");
}
#endif

TEST_CASE("UnifiedHost gives fresh data, or says the device lacks Intel USM", "[freshness]") {
  where_supported<policy::UnifiedHost>({}, "cl_intel_unified_shared_memory");
}

namespace {

// Every policy the device offers (through Auto's override), six inferences
// of 1 << 18 elements each, every element checked. `bind_once`: the
// kernel's argument is set once with MappedTensor::bind, else per access;
// `enqueue(dev, kernel, n)` runs the kernel in the form under test.
template <class Enqueue>
void every_policy_fresh(bool bind_once, Enqueue&& enqueue) {
  Env& env = Env::get();
  constexpr cl_uint n = 1 << 18;
  for (const policy::Choice& c : policy::available(env.caps, Intent::output)) {
    INFO(c.label());
    policy::Auto::Options o;
    o.override_choice = true;
    o.choice = c;
    MappedTensor<std::uint32_t, policy::Auto> t(env.context, env.queue, {n}, Intent::output, o);
    Kernel fill("fill_u32");
    if (bind_once) t.bind(fill.k, 0);
    fill.arg(1, n);
    for (cl_uint iter = 1; iter <= 6; ++iter) {
      {
        auto dev = t.device_access();
        if (!bind_once) dev.bind(fill.k, 0);
        fill.arg(2, iter);
        enqueue(dev, fill.k, std::size_t{n});
      }
      auto view = t.read_view();
      std::size_t wrong = 0;
      for (std::uint32_t i = 0; i < n; ++i) wrong += view[i] != value(i, iter);
      REQUIRE(wrong == 0);
    }
  }
}

}  // namespace

TEST_CASE("every policy gives fresh data on an in-order queue without recorded events", "[freshness]") {
  // Events are optional on an in-order queue: the kernel's event is not
  // handed back here, so clzero must order the host's side by itself.
  every_policy_fresh(false, [](DeviceAccess& dev, cl_kernel k, std::size_t n) {
    ok(clEnqueueNDRangeKernel(Env::get().queue, k, 1, nullptr, &n, nullptr, dev.wait_count(), dev.wait_list(),
                              nullptr),
       "clEnqueueNDRangeKernel");
  });
}

TEST_CASE("every policy gives fresh data with its argument bound once, in the README's form", "[freshness]") {
  // MappedTensor::bind once, then per inference wait_list(queue) and
  // event_slot(queue): no clSetKernelArg for the tensor, and on this
  // in-order queue no event where the policy needs none.
  every_policy_fresh(true, [](DeviceAccess& dev, cl_kernel k, std::size_t n) {
    cl_command_queue q = Env::get().queue;
    ok(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, dev.wait_count(q), dev.wait_list(q),
                              dev.event_slot(q)),
       "clEnqueueNDRangeKernel");
  });
}

TEST_CASE("Auto gives fresh data every inference with the policy it picks", "[freshness]") {
  const policy::Choice c = policy::choose(Env::get().caps, Intent::output);
  INFO("Auto picks " << c.name() << ": " << c.reason);
  every_intent_every_size<policy::Auto>({});
}
