// SPDX-License-Identifier: Apache-2.0
// One test per rule of the OpenCL specification that clzero keeps
// (clEnqueueMapBuffer / clEnqueueUnmapMemObject, OpenCL 3.0 section 5.5.4;
// events, section 5.11), observed on the OpenCL objects themselves.
#include <clzero/clzero.hpp>

#include <cstdint>
#include <future>
#include <vector>

#include "support/catch.hpp"
#include "support/probes.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

template <class Policy>
void kernel_never_touches_mapped(const typename Policy::Options& options, Intent intent, Access access) {
  Env& env = Env::get();
  MappedTensor<std::uint32_t, Policy> t(env.context, env.queue, {4096}, intent, options);
  Kernel fill("fill_u32");
  for (cl_uint iter = 1; iter <= 3; ++iter) {
    {  // the host owns the tensor first, as in every inference
      if (host_reads(intent))
        (void)t.read_view();
      else
        (void)t.write_view();
    }
    auto dev = t.device_access(access);
    wait(dev.wait_count(), dev.wait_list());  // what the kernel will wait for
    INFO("iteration " << iter);
    REQUIRE(settled_map_count(dev.buffer(), 0) == 0);
    dev.bind(fill.k, 0);
    fill.arg(1, cl_uint{4096});
    fill.arg(2, iter);
    cl_event done = nullptr;
    std::size_t n = 4096;
    ok(clEnqueueNDRangeKernel(env.queue, fill.k, 1, nullptr, &n, nullptr, dev.wait_count(), dev.wait_list(), &done),
       "clEnqueueNDRangeKernel");
    // Profiling: the kernel started after every command it had to wait for ended.
    wait(1, &done);
    for (cl_event w : dev.waits())
      CHECK(profile(w, CL_PROFILING_COMMAND_END) <= profile(done, CL_PROFILING_COMMAND_START));
    dev.used_by(done);
    clReleaseEvent(done);
  }
}

}  // namespace

TEST_CASE("a kernel that writes never starts while the tensor is mapped (Persistent)", "[spec]") {
  for (Intent intent : {Intent::output, Intent::input, Intent::inout}) {
    INFO("intent " << to_string(intent));
    kernel_never_touches_mapped<policy::Persistent>({Allocation::alloc_host_ptr()}, intent, Access::write);
    kernel_never_touches_mapped<policy::Persistent>({Allocation::use_host_ptr()}, intent, Access::read_write);
  }
}

TEST_CASE("a kernel never starts while the tensor is mapped (MapPerInference)", "[spec]") {
  for (Intent intent : {Intent::output, Intent::input, Intent::inout})
    kernel_never_touches_mapped<policy::MapPerInference>({}, intent, Access::read_write);
}

TEST_CASE("a kernel that only reads never starts while the tensor is mapped for writing", "[spec]") {
  kernel_never_touches_mapped<policy::Persistent>({}, Intent::input, Access::read);
  kernel_never_touches_mapped<policy::Persistent>({}, Intent::inout, Access::read);
}

TEST_CASE("a read mapping may stay while kernels only read the tensor", "[spec]") {
  Env& env = Env::get();
  MappedTensor<std::uint32_t, policy::Persistent> t(env.context, env.queue, {1024}, Intent::output, {});
  Kernel fill("fill_u32"), copy("copy_u32");
  {
    auto dev = t.device_access();
    dev.bind(fill.k, 0);
    fill.arg(1, cl_uint{1024});
    fill.arg(2, cl_uint{7});
    launch(env.queue, fill.k, 1024, dev);
  }
  (void)t.read_view();
  cl_mem m = t.buffer();
  REQUIRE(settled_map_count(m, 1) == 1);  // mapped at rest, for reading
  cl_int rc = CL_SUCCESS;
  MemHandle check = MemHandle::adopt(clCreateBuffer(env.context, CL_MEM_READ_WRITE, 4096, nullptr, &rc));
  ok(rc, "clCreateBuffer");
  {
    auto dev = t.device_access(Access::read);
    wait(dev.wait_count(), dev.wait_list());  // an unmap, had one been enqueued, would be done now
    CHECK(map_count(m) == 1);                 // no unmap was enqueued for a reading kernel
    dev.bind(copy.k, 0);
    copy.arg(1, check.get());
    copy.arg(2, cl_uint{1024});
    launch(env.queue, copy.k, 1024, dev);
  }
  std::vector<std::uint32_t> seen(1024);
  ok(clEnqueueReadBuffer(env.queue, check.get(), CL_TRUE, 0, 4096, seen.data(), 0, nullptr, nullptr), "read");
  auto view = t.read_view();
  for (std::uint32_t i = 0; i < 1024; ++i) {
    REQUIRE(seen[i] == value(i, 7));
    REQUIRE(view[i] == value(i, 7));
  }
  CHECK(settled_map_count(m, 1) == 1);
}

TEST_CASE("at rest Persistent holds exactly one mapping and MapPerInference none", "[spec]") {
  Env& env = Env::get();
  MappedTensor<float, policy::Persistent> p(env.context, env.queue, {256}, Intent::inout, {});
  (void)p.read_view();
  CHECK(settled_map_count(p.buffer(), 1) == 1);
  MappedTensor<float, policy::MapPerInference> m(env.context, env.queue, {256}, Intent::inout, {});
  {
    auto view = m.read_view();
    CHECK(settled_map_count(m.buffer(), 1) == 1);
  }
  // The view's end enqueued the unmap; the next device access waits for it.
  auto dev = m.device_access();
  wait(dev.wait_count(), dev.wait_list());
  CHECK(settled_map_count(m.buffer(), 0) == 0);
}

TEST_CASE("a host view waits until the producer has completed", "[spec]") {
  Env& env = Env::get();
  MappedTensor<std::uint32_t, policy::Persistent> t(env.context, env.queue, {4096}, Intent::output, {});
  Kernel fill("fill_u32");
  Gate gate;
  {
    auto dev = t.device_access();
    dev.bind(fill.k, 0);
    fill.arg(1, cl_uint{4096});
    fill.arg(2, cl_uint{11});
    std::vector<cl_event> waits(dev.waits().begin(), dev.waits().end());
    waits.push_back(gate.event);  // the producer cannot start before the gate opens
    std::size_t n = 4096;
    ok(clEnqueueNDRangeKernel(env.queue, fill.k, 1, nullptr, &n, nullptr, static_cast<cl_uint>(waits.size()),
                              waits.data(), dev.event_slot()),
       "clEnqueueNDRangeKernel");
  }
  CHECK_FALSE(t.host_ready());
  auto reader = std::async(std::launch::async, [&] {
    auto view = t.read_view();
    std::size_t wrong = 0;
    for (std::uint32_t i = 0; i < 4096; ++i) wrong += view[i] != value(i, 11);
    return wrong;
  });
  CHECK_FALSE(finishes_within(reader, 0.3));  // held back by the gate, not by luck of timing
  gate.open();
  REQUIRE(finishes_within(reader, 30.0));
  CHECK(reader.get() == 0);
  CHECK(t.host_ready());
}

TEST_CASE("releasing a mapped tensor unmaps it and lets the unmap complete first", "[spec]") {
  Env& env = Env::get();
  MemHandle kept;
  {
    MappedTensor<float, policy::Persistent> t(env.context, env.queue, {1024}, Intent::output, {});
    (void)t.read_view();
    REQUIRE(settled_map_count(t.buffer(), 1) == 1);
    kept = MemHandle::retain(t.buffer());
  }
  CHECK(settled_map_count(kept.get(), 0) == 0);
  {
    MappedTensor<float, policy::CopyToPinned> t(env.context, env.queue, {1024}, Intent::output, {});
    (void)t.read_view();
  }  // the pinned staging buffer is unmapped too; nothing to observe but a clean exit
}

TEST_CASE("the tensor allocates once and never reallocates", "[spec]") {
  Env& env = Env::get();
  MappedTensor<std::uint32_t, policy::Persistent> t(env.context, env.queue, {512}, Intent::output, {});
  const cl_mem first = t.buffer();
  Kernel fill("fill_u32");
  for (cl_uint iter = 1; iter <= 5; ++iter) {
    auto dev = t.device_access();
    CHECK(dev.buffer() == first);
    dev.bind(fill.k, 0);
    fill.arg(1, cl_uint{512});
    fill.arg(2, iter);
    launch(env.queue, fill.k, 512, dev);
    dev.end();
    CHECK(t.read_view().size() == 512);
  }
  CHECK(t.buffer() == first);
}
