// SPDX-License-Identifier: Apache-2.0
// DLPack out: a host view lent to a DLPack consumer as a DLManagedTensor that
// owns the view. The consumer here reads and writes through the DLTensor's
// own fields (data, shape, strides), as a framework would.
#include <dlpack/dlpack.h>

#include <clzero/clzero.hpp>
#include <clzero/interop/dlpack.hpp>

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

bool same(const DLDataType& a, const DLDataType& b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

// The element offset of a multi-index through the DLTensor's strides, or
// row-major from its shape when strides is null (DLPack 0.x's convention).
std::int64_t offset(const DLTensor& t, const std::vector<std::int64_t>& index) {
  std::int64_t flat = 0, stride = 1;
  for (int axis = t.ndim - 1; axis >= 0; --axis) {
    const auto a = static_cast<std::size_t>(axis);
    flat += index[a] * (t.strides != nullptr ? t.strides[a] : stride);
    stride *= t.shape[axis];
  }
  return flat;
}

// Visits every multi-index of the tensor in row-major order.
template <class F>
void for_each_index(const DLTensor& t, F&& f) {
  std::vector<std::int64_t> index(static_cast<std::size_t>(t.ndim), 0);
  for (std::int64_t flat = 0;; ++flat) {
    f(index, flat);
    int axis = t.ndim - 1;
    for (; axis >= 0; --axis) {
      const auto a = static_cast<std::size_t>(axis);
      if (++index[a] < t.shape[axis]) break;
      index[a] = 0;
    }
    if (axis < 0) return;
  }
}

void run_fill(MappedTensor<std::uint32_t, policy::Persistent>& tensor, Kernel& fill, std::uint32_t iter) {
  auto dev = tensor.device_access();
  dev.bind(fill.k, 0);
  fill.arg(1, static_cast<cl_uint>(tensor.size()));
  fill.arg(2, iter);
  launch(Env::get().queue, fill.k, tensor.size(), dev);
}

}  // namespace

TEST_CASE("dlpack_dtype names each arithmetic type by code and width", "[dlpack]") {
  CHECK(same(interop::dlpack_dtype<float>(), DLDataType{kDLFloat, 32, 1}));
  CHECK(same(interop::dlpack_dtype<double>(), DLDataType{kDLFloat, 64, 1}));
  CHECK(same(interop::dlpack_dtype<const float>(), DLDataType{kDLFloat, 32, 1}));
  CHECK(same(interop::dlpack_dtype<std::int8_t>(), DLDataType{kDLInt, 8, 1}));
  CHECK(same(interop::dlpack_dtype<std::int16_t>(), DLDataType{kDLInt, 16, 1}));
  CHECK(same(interop::dlpack_dtype<std::int32_t>(), DLDataType{kDLInt, 32, 1}));
  CHECK(same(interop::dlpack_dtype<std::int64_t>(), DLDataType{kDLInt, 64, 1}));
  CHECK(same(interop::dlpack_dtype<std::uint8_t>(), DLDataType{kDLUInt, 8, 1}));
  CHECK(same(interop::dlpack_dtype<std::uint16_t>(), DLDataType{kDLUInt, 16, 1}));
  CHECK(same(interop::dlpack_dtype<std::uint32_t>(), DLDataType{kDLUInt, 32, 1}));
  CHECK(same(interop::dlpack_dtype<std::uint64_t>(), DLDataType{kDLUInt, 64, 1}));
  CHECK(same(interop::dlpack_dtype<std::complex<float>>(), DLDataType{kDLComplex, 64, 1}));
  CHECK(same(interop::dlpack_dtype<std::complex<double>>(), DLDataType{kDLComplex, 128, 1}));
#if CLZERO_INTEROP_DLPACK_HAS_BOOL
  CHECK(same(interop::dlpack_dtype<bool>(), DLDataType{kDLBool, 8, 1}));
#endif
}

TEST_CASE("an exported read view describes the tensor on the CPU device", "[dlpack]") {
  Env& env = Env::get();
  MappedTensor<float, policy::Persistent> tensor(env.context, env.queue, {2, 3, 4, 5}, Intent::output);
  auto view = tensor.read_view();
  const float* data = view.data();
  DLManagedTensor* managed = interop::to_dlpack(std::move(view));
  REQUIRE(managed != nullptr);
  CHECK(!view);  // moved into the DLManagedTensor
  const DLTensor& t = managed->dl_tensor;
  CHECK(t.data == data);
  CHECK(t.byte_offset == 0);
  CHECK(t.device.device_type == kDLCPU);
  CHECK(t.device.device_id == 0);
  CHECK(same(t.dtype, DLDataType{kDLFloat, 32, 1}));
  REQUIRE(t.ndim == 4);
  CHECK(std::vector<std::int64_t>(t.shape, t.shape + 4) == std::vector<std::int64_t>{2, 3, 4, 5});
  REQUIRE(t.strides != nullptr);
  CHECK(std::vector<std::int64_t>(t.strides, t.strides + 4) == std::vector<std::int64_t>{60, 20, 5, 1});
  CHECK(managed->manager_ctx != nullptr);
  REQUIRE(managed->deleter != nullptr);
  managed->deleter(managed);
}

TEST_CASE("null strides are given on request", "[dlpack]") {
  Env& env = Env::get();
  MappedTensor<std::int16_t, policy::Persistent> tensor(env.context, env.queue, {3, 7}, Intent::output);
  DLManagedTensor* managed = interop::to_dlpack(tensor.read_view(), interop::DLPackStrides::null);
  CHECK(managed->dl_tensor.strides == nullptr);
  CHECK(managed->dl_tensor.shape[1] == 7);
  CHECK(same(managed->dl_tensor.dtype, DLDataType{kDLInt, 16, 1}));
  managed->deleter(managed);
}

TEST_CASE("the DLPack tensor owns the view: the tensor stays with the host until the deleter", "[dlpack]") {
  Env& env = Env::get();
  MappedTensor<std::uint32_t, policy::Persistent> tensor(env.context, env.queue, {64}, Intent::output);
  DLManagedTensor* managed = interop::to_dlpack(tensor.read_view());
  try {
    auto dev = tensor.device_access();
    FAIL("device access was granted while a DLPack consumer held a view");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::misuse);
  }
  managed->deleter(managed);
  auto dev = tensor.device_access();  // the deleter ended the view
  CHECK(dev.open());
}

TEST_CASE("data read through DLPack is fresh every inference, through shape and strides", "[dlpack]") {
  Env& env = Env::get();
  MappedTensor<std::uint32_t, policy::Persistent> tensor(env.context, env.queue, {3, 5, 7, 11}, Intent::output);
  Kernel fill("fill_u32");
  for (interop::DLPackStrides strides : {interop::DLPackStrides::row_major, interop::DLPackStrides::null}) {
    std::size_t checked = 0, wrong = 0;
    for (std::uint32_t iter = 1; iter <= 6; ++iter) {
      run_fill(tensor, fill, iter);
      DLManagedTensor* managed = interop::to_dlpack(tensor.read_view(), strides);
      const DLTensor& t = managed->dl_tensor;
      const auto* data = static_cast<const std::uint32_t*>(t.data);
      for_each_index(t, [&](const std::vector<std::int64_t>& index, std::int64_t flat) {
        ++checked;
        wrong += data[offset(t, index)] != value(static_cast<std::uint32_t>(flat), iter);
      });
      managed->deleter(managed);
    }
    CHECK(checked == tensor.size() * 6);
    CHECK(wrong == 0);
  }
}

TEST_CASE("a DLPack consumer fills an input through an exported write view", "[dlpack]") {
  Env& env = Env::get();
  constexpr std::size_t n = 6 * 50;
  MappedTensor<std::uint32_t, policy::Persistent> tensor(env.context, env.queue, {6, 50}, Intent::input);
  Kernel copy("copy_u32");
  cl_int rc = CL_SUCCESS;
  MemHandle check = MemHandle::adopt(clCreateBuffer(env.context, CL_MEM_READ_WRITE, n * 4, nullptr, &rc));
  ok(rc, "clCreateBuffer");
  std::vector<std::uint32_t> seen(n);
  std::size_t wrong = 0;
  for (std::uint32_t iter = 1; iter <= 6; ++iter) {
    DLManagedTensor* managed = interop::to_dlpack(tensor.write_view());
    const DLTensor& t = managed->dl_tensor;
    auto* data = static_cast<std::uint32_t*>(t.data);
    for_each_index(t, [&](const std::vector<std::int64_t>& index, std::int64_t flat) {
      data[offset(t, index)] = value(static_cast<std::uint32_t>(flat), iter);
    });
    managed->deleter(managed);
    {
      auto dev = tensor.device_access();
      dev.bind(copy.k, 0);
      copy.arg(1, check.get());
      copy.arg(2, static_cast<cl_uint>(n));
      launch(env.queue, copy.k, n, dev);
    }
    ok(clEnqueueReadBuffer(env.queue, check.get(), CL_TRUE, 0, n * 4, seen.data(), 0, nullptr, nullptr),
       "clEnqueueReadBuffer");
    for (std::size_t i = 0; i < n; ++i) wrong += seen[i] != value(static_cast<std::uint32_t>(i), iter);
  }
  CHECK(wrong == 0);
}

TEST_CASE("a DLPack tensor stays valid after its MappedTensor is destroyed", "[dlpack]") {
  Env& env = Env::get();
  constexpr std::size_t n = 999;
  DLManagedTensor* managed = nullptr;
  {
    MappedTensor<std::uint32_t, policy::Persistent> tensor(env.context, env.queue, {n}, Intent::output);
    Kernel fill("fill_u32");
    run_fill(tensor, fill, 42);
    managed = interop::to_dlpack(tensor.read_view());
  }
  const auto* data = static_cast<const std::uint32_t*>(managed->dl_tensor.data);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += data[i] != value(static_cast<std::uint32_t>(i), 42);
  CHECK(wrong == 0);
  managed->deleter(managed);  // the last owner: unmaps and releases the allocation
}

TEST_CASE("an ended view or a dtype of the wrong width is refused and the view kept", "[dlpack]") {
  Env& env = Env::get();
  MappedTensor<float, policy::Persistent> tensor(env.context, env.queue, {8}, Intent::output);
  HostView<const float> ended;
  try {
    interop::to_dlpack(std::move(ended));
    FAIL("an ended view was exported");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_argument);
  }
  auto view = tensor.read_view();
  try {
    interop::to_dlpack(std::move(view), DLDataType{kDLFloat, 64, 1});
    FAIL("a 64-bit dtype was accepted for 32-bit elements");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_argument);
    CHECK(std::string(e.what()).find("32 bits") != std::string::npos);
  }
  CHECK(view);  // still the caller's
  // A half-precision tensor stored as uint16_t names its dtype explicitly.
  MappedTensor<std::uint16_t, policy::Persistent> half(env.context, env.queue, {8}, Intent::output);
  DLManagedTensor* managed = interop::to_dlpack(half.read_view(), DLDataType{kDLFloat, 16, 1});
  CHECK(same(managed->dl_tensor.dtype, DLDataType{kDLFloat, 16, 1}));
  managed->deleter(managed);
}

#if CLZERO_INTEROP_DLPACK_HAS_VERSIONED
TEST_CASE("a versioned DLPack tensor carries the version and marks read views read-only", "[dlpack]") {
  Env& env = Env::get();
  MappedTensor<float, policy::Persistent> tensor(env.context, env.queue, {4, 4}, Intent::inout);
  DLManagedTensorVersioned* read = interop::to_dlpack_versioned(tensor.read_view());
  CHECK(read->version.major == DLPACK_MAJOR_VERSION);
  CHECK(read->version.minor == DLPACK_MINOR_VERSION);
  CHECK((read->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  CHECK(read->dl_tensor.ndim == 2);
  read->deleter(read);
  DLManagedTensorVersioned* write = interop::to_dlpack_versioned(tensor.write_view());
  CHECK((write->flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0);
  write->deleter(write);
}
#endif
