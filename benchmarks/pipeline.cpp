// SPDX-License-Identifier: Apache-2.0
// Engine-shaped benchmarks: several outputs in one TensorArena (one map)
// against as many separate tensors (one map each), and a TensorRing that
// reads inference i while inference i+1 runs against the serialized loop.
// Same measured unit and check as every other benchmark: the host reads
// every element of every output and the sum must be a fresh tensor's.
#include "pipeline.hpp"

#include <clzero/clzero.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_env.hpp"
#include "clzero_inference.hpp"
#include "inference.hpp"
#include "timed_loop.hpp"

namespace clzero_bench {
namespace {

// Like the producer, but element i of a part holds iter + base + i, so that
// all parts together sum like one fresh tensor of their total size.
constexpr const char* kPartSource = R"CLC(
__kernel void produce_part(__global uint* out, uint iter, uint base) {
  size_t i = get_global_id(0);
  out[i] = iter + base + (uint)i;
}
)CLC";

clzero::KernelHandle part_kernel() {
  static clzero::ProgramHandle program = [] {
    const Rig& rig = Rig::get();
    cl_int rc = CL_SUCCESS;
    const char* src = kPartSource;
    clzero::ProgramHandle p = clzero::ProgramHandle::adopt(clCreateProgramWithSource(rig.ctx(), 1, &src, nullptr, &rc));
    ok(rc, "clCreateProgramWithSource(produce_part)");
    ok(clBuildProgram(p.get(), 1, &rig.device, "", nullptr, nullptr), "clBuildProgram(produce_part)");
    return p;
  }();
  cl_int rc = CL_SUCCESS;
  clzero::KernelHandle k = clzero::KernelHandle::adopt(clCreateKernel(program.get(), "produce_part", &rc));
  ok(rc, "clCreateKernel(produce_part)");
  return k;
}

cl_int enqueue_part(cl_command_queue q, cl_kernel k, std::size_t n, std::uint32_t iter, std::uint32_t base,
                    cl_uint waits, const cl_event* wait_list, cl_event* event) {
  cl_int rc = clSetKernelArg(k, 1, sizeof iter, &iter);
  if (rc == CL_SUCCESS) rc = clSetKernelArg(k, 2, sizeof base, &base);
  if (rc != CL_SUCCESS) return rc;
  return clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, waits, wait_list, event);
}

/// `parts` outputs in one arena: one device access, one view per part (open
/// together, so the arena maps once).
template <class Policy>
class ArenaInference final : public Inference {
 public:
  ArenaInference(std::size_t n, std::size_t parts)
      : q_(Rig::get().q()),
        kernel_(part_kernel()),
        per_part_(n / parts),
        arena_(Rig::get().ctx(), q_,
               std::vector<clzero::ArenaPart>(parts, clzero::ArenaPart::of<std::uint32_t>({n / parts})),
               clzero::Intent::output) {
    views_.resize(parts);
  }

  std::uint64_t run(std::uint32_t iter) override {
    {
      auto dev = arena_.device_access();
      for (std::size_t p = 0; p < arena_.parts(); ++p) {
        dev.bind(kernel_.get(), 0, clzero::Part{p});
        ok(enqueue_part(q_, kernel_.get(), per_part_, iter, static_cast<std::uint32_t>(p * per_part_),
                        dev.wait_count(q_), dev.wait_list(q_), dev.event_slot(q_)),
           "clEnqueueNDRangeKernel");
      }
    }
    std::uint64_t sum = 0;
    for (std::size_t p = 0; p < views_.size(); ++p) views_[p] = arena_.template read_view<std::uint32_t>(p);
    for (auto& v : views_) sum += host_sum(v.data(), v.size());
    for (auto& v : views_) v.reset();
    return sum;
  }

 private:
  cl_command_queue q_;
  clzero::KernelHandle kernel_;
  std::size_t per_part_;
  clzero::TensorArena<Policy> arena_;
  std::vector<clzero::HostView<const std::uint32_t>> views_;
};

/// The same outputs as separate tensors: one device access and one view each.
template <class Policy>
class SeparateInference final : public Inference {
 public:
  SeparateInference(std::size_t n, std::size_t parts)
      : q_(Rig::get().q()), kernel_(part_kernel()), per_part_(n / parts) {
    for (std::size_t p = 0; p < parts; ++p)
      tensors_.emplace_back(Rig::get().ctx(), q_, clzero::Shape{per_part_}, clzero::Intent::output);
  }

  std::uint64_t run(std::uint32_t iter) override {
    for (std::size_t p = 0; p < tensors_.size(); ++p) {
      auto dev = tensors_[p].device_access();
      dev.bind(kernel_.get(), 0);
      ok(enqueue_part(q_, kernel_.get(), per_part_, iter, static_cast<std::uint32_t>(p * per_part_),
                      dev.wait_count(q_), dev.wait_list(q_), dev.event_slot(q_)),
         "clEnqueueNDRangeKernel");
    }
    std::uint64_t sum = 0;
    for (auto& t : tensors_) {
      auto v = t.read_view();
      sum += host_sum(v.data(), v.size());
    }
    return sum;
  }

 private:
  cl_command_queue q_;
  clzero::KernelHandle kernel_;
  std::size_t per_part_;
  std::vector<clzero::MappedTensor<std::uint32_t, Policy>> tensors_;
};

/// A ring of `slots` tensors, one inference ahead: each call enqueues the
/// next inference, then reads this one while the next runs. In steady state
/// one call costs one inference of throughput.
template <class Policy>
class RingInference final : public Inference {
 public:
  RingInference(std::size_t n, std::size_t slots)
      : q_(Rig::get().q()),
        kernel_(Rig::get().make_kernel()),
        n_(n),
        ring_(Rig::get().ctx(), q_, clzero::Shape{n}, clzero::Intent::output, slots) {}

  std::uint64_t run(std::uint32_t iter) override {
    if (!started_ || iter != expected_) enqueue(iter);  // first call, or the caller's count restarted
    const std::uint32_t next = iter >= (1u << 30) ? 1u : iter + 1u;
    enqueue(next);
    expected_ = next;
    started_ = true;
    auto view = ring_[slot_of(iter)].read_view();
    return host_sum(view.data(), view.size());
  }

 private:
  void enqueue(std::uint32_t iter) {
    auto dev = ring_[slot_of(iter)].device_access();
    dev.bind(kernel_.get(), 0);
    ok(enqueue_producer(q_, kernel_.get(), n_, iter, dev.wait_count(q_), dev.wait_list(q_), dev.event_slot(q_)),
       "clEnqueueNDRangeKernel");
  }
  std::size_t slot_of(std::uint32_t iter) const { return iter % ring_.slots(); }

  cl_command_queue q_;
  clzero::KernelHandle kernel_;
  std::size_t n_;
  clzero::TensorRing<std::uint32_t, Policy> ring_;
  std::uint32_t expected_ = 0;
  bool started_ = false;
};

template <template <class> class Kind, class Policy>
InferenceFactory factory(std::size_t count) {
  return [count](std::size_t n) -> std::unique_ptr<Inference> { return std::make_unique<Kind<Policy>>(n, count); };
}

}  // namespace

void register_pipeline_benchmarks(const Register& add) {
  constexpr std::size_t kParts = 4;
  for (std::size_t bytes : {std::size_t{4096}, std::size_t{256} << 10, std::size_t{4} << 20}) {
    const std::string size = "/" + std::to_string(bytes);
    add("arena/one_map.Auto.4_outputs" + size, factory<ArenaInference, clzero::policy::Auto>(kParts), bytes);
    add("arena/separate.Auto.4_outputs" + size, factory<SeparateInference, clzero::policy::Auto>(kParts), bytes);
    add("arena/one_map.MapPerInference.4_outputs" + size,
        factory<ArenaInference, clzero::policy::MapPerInference>(kParts), bytes);
    add("arena/separate.MapPerInference.4_outputs" + size,
        factory<SeparateInference, clzero::policy::MapPerInference>(kParts), bytes);
    add("pipeline/serial.Auto" + size, clzero_factory<clzero::policy::Auto>(), bytes);
    add("pipeline/ring2.Auto" + size, factory<RingInference, clzero::policy::Auto>(2), bytes);
    add("pipeline/ring3.Auto" + size, factory<RingInference, clzero::policy::Auto>(3), bytes);
    add("pipeline/serial.CopyToPinned" + size, clzero_factory<clzero::policy::CopyToPinned>(), bytes);
    add("pipeline/ring2.CopyToPinned" + size, factory<RingInference, clzero::policy::CopyToPinned>(2), bytes);
  }
}

}  // namespace clzero_bench
