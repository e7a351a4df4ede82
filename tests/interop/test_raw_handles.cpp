// SPDX-License-Identifier: Apache-2.0
// Raw OpenCL handles in and out: an engine that never includes an interop
// header builds tensors from its cl_context / cl_command_queue, and takes the
// cl_mem or SVM pointer back to set kernel arguments and enqueue commands of
// its own, with OpenCL's usual reference counting.
#include <clzero/clzero.hpp>

#include <cstdint>
#include <vector>

#include "support/catch.hpp"
#include "support/probes.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

cl_uint mem_refs(cl_mem m) {
  cl_uint n = 0;
  ok(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof n, &n, nullptr), "clGetMemObjectInfo");
  return n;
}

// A kernel whose first argument is set by hand from DeviceAccess::buffer(),
// never through bind(); every element of every iteration is checked.
template <class Policy>
void hand_set_buffer_argument_is_fresh(const typename Policy::Options& options) {
  Env& env = Env::get();
  constexpr std::size_t n = 4099;
  MappedTensor<std::uint32_t, Policy> tensor(env.context, env.queue, {n}, Intent::output, options);
  Kernel fill("fill_u32");
  cl_mem first = nullptr;
  std::size_t wrong = 0;
  for (std::uint32_t iter = 1; iter <= 8; ++iter) {
    {
      auto dev = tensor.device_access();
      cl_mem m = dev.buffer();
      REQUIRE(m != nullptr);
      REQUIRE(m == tensor.buffer());
      if (first == nullptr) first = m;
      REQUIRE(m == first);  // one allocation for the tensor's life
      fill.arg(0, m);
      fill.arg(1, static_cast<cl_uint>(n));
      fill.arg(2, iter);
      launch(env.queue, fill.k, n, dev);
    }
    auto view = tensor.read_view();
    REQUIRE(view.size() == n);
    for (std::size_t i = 0; i < n; ++i) wrong += view[i] != value(static_cast<std::uint32_t>(i), iter);
  }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("a tensor hands back the engine's own context and queue", "[raw]") {
  Env& env = Env::get();
  MappedTensor<float> with_context(env.context, env.queue, {16}, Intent::output);
  CHECK(with_context.context() == env.context);
  CHECK(with_context.queue() == env.queue);
  MappedTensor<float> queue_only(env.queue, {16}, Intent::output);
  CHECK(queue_only.context() == env.context);
  CHECK(queue_only.queue() == env.queue);
}

TEST_CASE("kernel arguments set by hand from DeviceAccess::buffer see fresh data", "[raw]") {
  SECTION("Persistent over ALLOC_HOST_PTR") {
    hand_set_buffer_argument_is_fresh<policy::Persistent>({Allocation::alloc_host_ptr()});
  }
  SECTION("Persistent over USE_HOST_PTR") {
    hand_set_buffer_argument_is_fresh<policy::Persistent>({Allocation::use_host_ptr()});
  }
  SECTION("MapPerInference") { hand_set_buffer_argument_is_fresh<policy::MapPerInference>({}); }
  SECTION("CopyToPinned") { hand_set_buffer_argument_is_fresh<policy::CopyToPinned>({}); }
}

TEST_CASE("a command of the engine's own, not a kernel, may produce the tensor", "[raw]") {
  Env& env = Env::get();
  constexpr std::size_t n = 1024;
  MappedTensor<std::uint32_t, policy::Persistent> tensor(env.context, env.queue, {n}, Intent::output);
  std::size_t wrong = 0;
  for (std::uint32_t iter = 1; iter <= 8; ++iter) {
    std::vector<std::uint32_t> source(n);
    for (std::size_t i = 0; i < n; ++i) source[i] = value(static_cast<std::uint32_t>(i), iter);
    {
      auto dev = tensor.device_access();
      // Non-blocking: `source` must outlive the write, which the view below
      // waits for through the event recorded in the access.
      ok(clEnqueueWriteBuffer(env.queue, dev.buffer(), CL_FALSE, 0, n * sizeof(std::uint32_t), source.data(),
                              dev.wait_count(), dev.wait_list(), dev.event_slot()),
         "clEnqueueWriteBuffer");
    }
    auto view = tensor.read_view();
    for (std::size_t i = 0; i < n; ++i) wrong += view[i] != source[i];
  }
  CHECK(wrong == 0);
}

TEST_CASE("the cl_mem lives on while the engine holds a reference to it", "[raw]") {
  Env& env = Env::get();
  cl_mem kept = nullptr;
  {
    MappedTensor<std::uint32_t, policy::Persistent> tensor(env.context, env.queue, {256}, Intent::output);
    kept = tensor.buffer();
    { auto settle = tensor.read_view(); }  // the initial map has completed: no command holds the cl_mem
    // The implementation may drop its own reference for that map a moment
    // after the map's event completed (PoCL 5 on the H200 read 3, then 3
    // after the retain): read the count once it has settled on the
    // tensor's single reference, as it does where nothing else holds one.
    const auto refs = [kept] { return mem_refs(kept); };
    const cl_uint before = settled(refs, 1);
    ok(clRetainMemObject(kept), "clRetainMemObject");
    CHECK(settled(refs, before + 1) == before + 1);
  }
  std::size_t size = 0;
  ok(clGetMemObjectInfo(kept, CL_MEM_SIZE, sizeof size, &size, nullptr), "clGetMemObjectInfo");
  CHECK(size >= 256 * sizeof(std::uint32_t));
  cl_uint map_count = 1;
  ok(clGetMemObjectInfo(kept, CL_MEM_MAP_COUNT, sizeof map_count, &map_count, nullptr), "clGetMemObjectInfo");
  CHECK(map_count == 0);  // the tensor unmapped before letting go of it
  ok(clReleaseMemObject(kept), "clReleaseMemObject");
}

#if defined(CL_VERSION_2_0)
TEST_CASE("SVM kernel arguments set by hand from DeviceAccess::svm_pointer see fresh data", "[raw]") {
  Env& env = Env::get();
  if (!env.caps.svm_any()) {
    CLZERO_NOT_RUN("the device offers no buffer SVM; nothing to check here");
    return;
  }
  constexpr std::size_t n = 4099;
  MappedTensor<std::uint32_t, policy::Svm> tensor(env.context, env.queue, {n}, Intent::output);
  CHECK(tensor.buffer() == nullptr);
  Kernel fill("fill_u32");
  std::size_t wrong = 0;
  for (std::uint32_t iter = 1; iter <= 8; ++iter) {
    {
      auto dev = tensor.device_access();
      REQUIRE(dev.buffer() == nullptr);
      REQUIRE(dev.svm_pointer() != nullptr);
      ok(clSetKernelArgSVMPointer(fill.k, 0, dev.svm_pointer()), "clSetKernelArgSVMPointer");
      fill.arg(1, static_cast<cl_uint>(n));
      fill.arg(2, iter);
      launch(env.queue, fill.k, n, dev);
    }
    auto view = tensor.read_view();
    for (std::size_t i = 0; i < n; ++i) wrong += view[i] != value(static_cast<std::uint32_t>(i), iter);
  }
  CHECK(wrong == 0);
}
#endif
