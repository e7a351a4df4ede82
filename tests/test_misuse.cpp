// SPDX-License-Identifier: Apache-2.0
// Every misuse and every construction error gives its documented
// clzero::Error (kind and message), and leaves the tensor usable.
#include <clzero/clzero.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

template <class F>
Error error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected a clzero::Error, none was thrown");
  throw;  // unreachable
}

bool mentions(const Error& e, const char* text) { return std::string(e.what()).find(text) != std::string::npos; }

using Tensor = MappedTensor<float, policy::Persistent>;

}  // namespace

TEST_CASE("device access while a host view is alive is an error", "[misuse]") {
  Tensor t(Env::get().queue, {16}, Intent::output, {});
  auto view = t.read_view();
  const Error e = error_of([&] { (void)t.device_access(); });
  CHECK(e.kind() == ErrorKind::misuse);
  CHECK(mentions(e, "host view(s) still alive"));
  view.reset();
  CHECK_NOTHROW(t.device_access());  // usable again once the view ended
}

TEST_CASE("a host view while a device access is open is an error", "[misuse]") {
  Tensor t(Env::get().queue, {16}, Intent::inout, {});
  auto dev = t.device_access();
  CHECK(error_of([&] { (void)t.read_view(); }).kind() == ErrorKind::misuse);
  CHECK(mentions(error_of([&] { (void)t.write_view(); }), "a device access is open"));
  dev.end();
  CHECK_NOTHROW(t.read_view());
}

TEST_CASE("two device accesses at once are an error", "[misuse]") {
  Tensor t(Env::get().queue, {16}, Intent::output, {});
  auto dev = t.device_access();
  const Error e = error_of([&] { (void)t.device_access(); });
  CHECK(e.kind() == ErrorKind::misuse);
  CHECK(mentions(e, "already open"));
}

TEST_CASE("use of a moved-from tensor is an error", "[misuse]") {
  Tensor a(Env::get().queue, {16}, Intent::output, {});
  Tensor b(std::move(a));
  CHECK_FALSE(static_cast<bool>(a));
  for (auto* what : {"device_access", "read_view", "shape"}) {
    INFO(what);
    const Error e = error_of([&] {
      if (std::string(what) == "device_access")
        (void)a.device_access();
      else if (std::string(what) == "read_view")
        (void)a.read_view();
      else
        (void)a.shape();
    });
    CHECK(e.kind() == ErrorKind::misuse);
    CHECK(mentions(e, "moved-from"));
  }
  CHECK_NOTHROW(b.read_view());
}

TEST_CASE("an empty tensor is an error until a real one is moved in", "[misuse]") {
  Tensor t;
  CHECK_FALSE(static_cast<bool>(t));
  CHECK(mentions(error_of([&] { (void)t.read_view(); }), "default-constructed"));
  t = Tensor(Env::get().queue, {8}, Intent::output, {});
  CHECK(t.read_view().size() == 8);
}

TEST_CASE("the host cannot write an output or read an input", "[misuse]") {
  Tensor out(Env::get().queue, {16}, Intent::output, {});
  CHECK(mentions(error_of([&] { (void)out.write_view(); }), "Intent::output"));
  Tensor in(Env::get().queue, {16}, Intent::input, {});
  CHECK(mentions(error_of([&] { (void)in.read_view(); }), "Intent::input"));
}

TEST_CASE("an ended device access cannot be used", "[misuse]") {
  Tensor t(Env::get().queue, {16}, Intent::output, {});
  auto dev = t.device_access();
  dev.end();
  CHECK_NOTHROW(dev.end());  // idempotent
  Kernel k("fill_u32");
  CHECK(error_of([&] { dev.bind(k.k, 0); }).kind() == ErrorKind::misuse);
  CHECK(error_of([&] { (void)dev.event_slot(); }).kind() == ErrorKind::misuse);
  CHECK(mentions(error_of([&] { (void)dev.wait_list(); }), "has ended"));
}

TEST_CASE("null kernels and null events are rejected", "[misuse]") {
  Tensor t(Env::get().queue, {16}, Intent::output, {});
  auto dev = t.device_access();
  CHECK(error_of([&] { dev.bind(nullptr, 0); }).kind() == ErrorKind::invalid_argument);
  CHECK(error_of([&] { dev.used_by(nullptr); }).kind() == ErrorKind::invalid_argument);
}

TEST_CASE("MappedTensor::bind rejects an empty tensor, a null kernel and an offset outside the tensor",
          "[misuse]") {
  Tensor empty;
  Kernel k("fill_u32");
  const Error e = error_of([&] { empty.bind(k.k, 0); });
  CHECK(e.kind() == ErrorKind::misuse);
  CHECK(mentions(e, "MappedTensor::bind"));
  Tensor t(Env::get().queue, {16}, Intent::output, {});
  const Error null_kernel = error_of([&] { t.bind(nullptr, 0); });
  CHECK(null_kernel.kind() == ErrorKind::invalid_argument);
  CHECK(mentions(null_kernel, "MappedTensor::bind"));
  const Error past = error_of([&] { t.bind(k.k, 0, 64); });
  CHECK(past.kind() == ErrorKind::invalid_argument);
  CHECK(mentions(past, "is past the tensor's 64 bytes"));
  // Allowed while a view is open or an access is open: no memory is touched.
  {
    auto view = t.read_view();
    CHECK_NOTHROW(t.bind(k.k, 0));
  }
  auto dev = t.device_access();
  CHECK_NOTHROW(t.bind(k.k, 0));
}

TEST_CASE("a shape with zero elements is rejected", "[misuse]") {
  CHECK(mentions(error_of([] { Shape s{4, 0, 2}; }), "at least one element"));
  CHECK(mentions(error_of([] { Shape s(std::vector<std::size_t>{}.begin(), std::vector<std::size_t>{}.end()); }),
                 "rank 1 or more"));
  CHECK(mentions(error_of([] { Shape s{1, 2, 3, 4, 5, 6, 7, 8, 9}; }), "rank above 8"));
}

TEST_CASE("an element count that overflows is rejected", "[misuse]") {
  const std::size_t big = std::size_t{1} << 40;
  CHECK(mentions(error_of([&] { Shape s{big, big}; }), "overflows"));
  // elements fit in size_t, bytes do not
  const std::size_t n = std::numeric_limits<std::size_t>::max() / 2;
  const Error e = error_of([&] { Tensor t(Env::get().queue, {n}, Intent::output, {}); });
  CHECK(e.kind() == ErrorKind::invalid_argument);
  CHECK(mentions(e, "overflows std::size_t bytes"));
}

TEST_CASE("a tensor above CL_DEVICE_MAX_MEM_ALLOC_SIZE is rejected before allocating", "[misuse]") {
  const std::size_t too_many = static_cast<std::size_t>(Env::get().caps.max_mem_alloc_size / sizeof(float)) + 1;
  const Error e = error_of([&] { Tensor t(Env::get().queue, {too_many}, Intent::output, {}); });
  CHECK(e.kind() == ErrorKind::invalid_argument);
  CHECK(mentions(e, "CL_DEVICE_MAX_MEM_ALLOC_SIZE"));
}

TEST_CASE("null handles are rejected", "[misuse]") {
  const Error e = error_of([] { Tensor t(nullptr, nullptr, {4}, Intent::output, {}); });
  CHECK(e.kind() == ErrorKind::invalid_argument);
  CHECK(mentions(e, "cl_command_queue is null"));
  CHECK(error_of([] { DeviceCaps::query(nullptr); }).kind() == ErrorKind::invalid_argument);
}

TEST_CASE("a queue of another context is rejected", "[misuse]") {
  Env& env = Env::get();
  cl_int rc = CL_SUCCESS;
  cl_context other = clCreateContext(nullptr, 1, &env.device, nullptr, nullptr, &rc);
  ok(rc, "clCreateContext");
  const Error e = error_of([&] { Tensor t(other, env.queue, {4}, Intent::output, {}); });
  clReleaseContext(other);
  CHECK(e.kind() == ErrorKind::invalid_argument);
  CHECK(mentions(e, "another cl_context"));
}

TEST_CASE("HostView checks indices in at() and operator()", "[misuse]") {
  MappedTensor<float, policy::Persistent> t(Env::get().queue, {2, 3}, Intent::output, {});
  auto v = t.read_view();
  CHECK(v.size() == 6);
  CHECK(v(1, 2) == v[5]);
  CHECK(mentions(error_of([&] { (void)v.at(6); }), "past the end"));
  CHECK(mentions(error_of([&] { (void)v(2, 0); }), "out of range along axis 0"));
  CHECK(mentions(error_of([&] { (void)v(1); }), "1 indices for a tensor of rank 2"));
}

TEST_CASE("Error names the OpenCL call and the error by name", "[misuse]") {
  const Error e("mapping the tensor", "clEnqueueMapBuffer", CL_MAP_FAILURE);
  CHECK(e.kind() == ErrorKind::opencl);
  CHECK(std::string(e.api()) == "clEnqueueMapBuffer");
  CHECK(std::string(e.code_name()) == "CL_MAP_FAILURE");
  CHECK(std::string(e.what()) == "clzero: mapping the tensor: clEnqueueMapBuffer failed with CL_MAP_FAILURE (-12)");
  CHECK(std::string(error_name(CL_MEM_OBJECT_ALLOCATION_FAILURE)) == "CL_MEM_OBJECT_ALLOCATION_FAILURE");
  CHECK(std::string(error_name(-9999)) == "CL_UNKNOWN_ERROR");
}
