// SPDX-License-Identifier: Apache-2.0
// One inference through clzero, exactly as the README shows it: the kernel's
// argument bound once, then per inference device_access, enqueue with the
// access's wait list and event slot for the tensor's queue, end of scope,
// read_view. The same code for every policy.
#pragma once

#include <CL/cl.h>

#include <clzero/clzero.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "bench_env.hpp"
#include "inference.hpp"

namespace clzero_bench {

template <class Policy>
class ClzeroInference final : public Inference {
 public:
  ClzeroInference(std::size_t n, const typename Policy::Options& options)
      : q_(Rig::get().q()),
        kernel_(Rig::get().make_kernel()),
        tensor_(Rig::get().ctx(), q_, clzero::Shape{n}, clzero::Intent::output, options),
        n_(n) {
    tensor_.bind(kernel_.get(), 0);
  }

  std::uint64_t run(std::uint32_t iter) override {
    {
      auto dev = tensor_.device_access();
      ok(enqueue_producer(q_, kernel_.get(), n_, iter, dev.wait_count(q_), dev.wait_list(q_), dev.event_slot(q_)),
         "clEnqueueNDRangeKernel");
    }
    auto view = tensor_.read_view();
    return host_sum(view.data(), view.size());
  }

  const clzero::MappedTensor<std::uint32_t, Policy>& tensor() const { return tensor_; }

 private:
  cl_command_queue q_;
  clzero::KernelHandle kernel_;
  clzero::MappedTensor<std::uint32_t, Policy> tensor_;
  std::size_t n_;
};

template <class Policy>
InferenceFactory clzero_factory(typename Policy::Options options = {}) {
  return [options](std::size_t n) -> std::unique_ptr<Inference> {
    return std::make_unique<ClzeroInference<Policy>>(n, options);
  };
}

}  // namespace clzero_bench
