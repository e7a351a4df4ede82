// SPDX-License-Identifier: Apache-2.0
// The freshness checks every policy runs: kernels write values that change
// every iteration and the host checks every element of every iteration
// through the view clzero returns, exactly as a user would read it.
#pragma once

#include <clzero/clzero.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "support/test_env.hpp"

namespace clzero_test {

/// What a freshness run found: every element of every iteration compared.
struct Verdict {
  std::size_t checked = 0;
  std::size_t wrong = 0;
  std::string first_wrong;  // "iteration 3, element 17: got 5, expected 9"

  void compare(int iter, std::size_t i, std::uint64_t got, std::uint64_t expected) {
    ++checked;
    if (got == expected) return;
    if (wrong++ == 0)
      first_wrong = "iteration " + std::to_string(iter) + ", element " + std::to_string(i) + ": got " +
                    std::to_string(got) + ", expected " + std::to_string(expected);
  }
};

template <class T>
T expected_value(std::uint32_t i, std::uint32_t iter) {
  if constexpr (std::is_same<T, std::uint8_t>::value)
    return byte_value(i, iter);
  else
    return value(i, iter);
}

template <class T>
const char* kernel_name(const char* u32, const char* u8) {
  return std::is_same<T, std::uint8_t>::value ? u8 : u32;
}

/// One inference's device side: `fill` (fill_u32 or fill_u8) writes the
/// values of iteration `iter` into every element of `tensor`, in an access
/// of the tensor on `queue`.
template <class Tensor>
void fill_iteration(Tensor& tensor, Kernel& fill, std::size_t elements, std::uint32_t iter,
                    cl_command_queue queue = Env::get().queue) {
  auto dev = tensor.device_access();
  dev.bind(fill.k, 0);
  fill.arg(1, static_cast<cl_uint>(elements));
  fill.arg(2, static_cast<cl_uint>(iter));
  launch(queue, fill.k, elements, dev);
}

/// Output intent: the device writes, the host reads every element.
template <class T, class Policy>
Verdict output_freshness(const typename Policy::Options& options, std::size_t elements, int iterations,
                         cl_command_queue queue = Env::get().queue) {
  Env& env = Env::get();
  clzero::MappedTensor<T, Policy> tensor(env.context, queue, {elements}, clzero::Intent::output, options);
  Kernel fill(kernel_name<T>("fill_u32", "fill_u8"));
  Verdict v;
  for (int iter = 1; iter <= iterations; ++iter) {
    fill_iteration(tensor, fill, elements, static_cast<std::uint32_t>(iter), queue);
    auto view = tensor.read_view();
    for (std::size_t i = 0; i < view.size(); ++i)
      v.compare(iter, i, view[i], expected_value<T>(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(iter)));
    if (view.size() != elements) v.compare(iter, elements, view.size(), elements);
  }
  return v;
}

/// Input intent: the host writes every element, a kernel copies the tensor
/// into a plain buffer, and the test reads that buffer back with
/// clEnqueueReadBuffer, independently of clzero.
template <class T, class Policy>
Verdict input_freshness(const typename Policy::Options& options, std::size_t elements, int iterations) {
  Env& env = Env::get();
  clzero::MappedTensor<T, Policy> tensor(env.context, env.queue, {elements}, clzero::Intent::input, options);
  Kernel copy(kernel_name<T>("copy_u32", "copy_u8"));
  cl_int rc = CL_SUCCESS;
  clzero::MemHandle check =
      clzero::MemHandle::adopt(clCreateBuffer(env.context, CL_MEM_READ_WRITE, elements * sizeof(T), nullptr, &rc));
  ok(rc, "clCreateBuffer");
  const cl_uint n = static_cast<cl_uint>(elements);
  std::vector<T> seen(elements);
  Verdict v;
  for (int iter = 1; iter <= iterations; ++iter) {
    {
      auto view = tensor.write_view();
      for (std::size_t i = 0; i < view.size(); ++i)
        view[i] = expected_value<T>(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(iter));
    }
    {
      auto dev = tensor.device_access();
      dev.bind(copy.k, 0);
      copy.arg(1, check.get());
      copy.arg(2, n);
      launch(env.queue, copy.k, elements, dev);
    }
    ok(clEnqueueReadBuffer(env.queue, check.get(), CL_TRUE, 0, elements * sizeof(T), seen.data(), 0, nullptr, nullptr),
       "clEnqueueReadBuffer");
    for (std::size_t i = 0; i < elements; ++i)
      v.compare(iter, i, seen[i], expected_value<T>(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(iter)));
  }
  return v;
}

/// Inout intent: the host writes new values on odd iterations (and only reads
/// on even ones); a kernel updates every element in place (x*3 + iter); the
/// host checks every element after every kernel.
template <class T, class Policy>
Verdict inout_freshness(const typename Policy::Options& options, std::size_t elements, int iterations) {
  Env& env = Env::get();
  clzero::MappedTensor<T, Policy> tensor(env.context, env.queue, {elements}, clzero::Intent::inout, options);
  Kernel update(kernel_name<T>("update_u32", "update_u8"));
  const cl_uint n = static_cast<cl_uint>(elements);
  std::vector<T> expected(elements, T{0});
  Verdict v;
  for (int iter = 1; iter <= iterations; ++iter) {
    if (iter % 2 == 1) {
      auto view = tensor.write_view();
      for (std::size_t i = 0; i < view.size(); ++i)
        view[i] = expected[i] = expected_value<T>(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(iter));
    }
    {
      auto dev = tensor.device_access();
      dev.bind(update.k, 0);
      update.arg(1, n);
      update.arg(2, static_cast<cl_uint>(iter));
      launch(env.queue, update.k, elements, dev);
    }
    for (auto& e : expected) e = static_cast<T>(e * 3u + static_cast<unsigned>(iter));
    auto view = tensor.read_view();
    for (std::size_t i = 0; i < view.size(); ++i) v.compare(iter, i, view[i], expected[i]);
  }
  return v;
}

}  // namespace clzero_test
