// SPDX-License-Identifier: Apache-2.0
#include "strategies.hpp"

#include <clzero/clzero.hpp>

#include <cstdlib>
#include <exception>
#include <memory>
#include <utility>

#include "bench_env.hpp"
#include "clzero_inference.hpp"
#include "raw_baselines.hpp"
#include "raw_sequences.hpp"
#include "self_check.hpp"

namespace clzero_bench {
namespace {

using clzero::Allocation;
namespace policy = clzero::policy;

template <class T, class... Args>
InferenceFactory factory(Args... args) {
  return [=](std::size_t n) -> std::unique_ptr<Inference> { return std::make_unique<T>(n, args...); };
}

InferenceFactory raw_persistent(RawAllocation a) { return factory<RawPersistentSequence>(a); }

/// The raw sequence that mirrors a policy choice, or an empty factory.
InferenceFactory raw_sequence_for(const policy::Choice& c) {
  switch (c.kind) {
    case policy::Choice::Kind::persistent:
      switch (c.allocation.kind()) {
        case Allocation::Kind::alloc_host_ptr: return raw_persistent(RawAllocation::alloc_host_ptr);
        case Allocation::Kind::use_host_ptr: return raw_persistent(RawAllocation::use_host_ptr);
        case Allocation::Kind::nv_host_pinned: return raw_persistent(RawAllocation::nv_host_pinned);
        default: return {};
      }
    case policy::Choice::Kind::map_per_inference:
      return c.allocation.kind() == Allocation::Kind::alloc_host_ptr ? factory<RawMapPerInferenceSequence>()
                                                                     : InferenceFactory{};
    case policy::Choice::Kind::copy_to_pinned: return factory<RawCopyToPinnedSequence>();
    case policy::Choice::Kind::svm:
      return c.svm_fine ? factory<RawCoherentSequence>(RawCoherentSequence::Memory::svm_fine)
                        : factory<RawSvmCoarseSequence>();
    case policy::Choice::Kind::unified_host: return factory<RawCoherentSequence>(RawCoherentSequence::Memory::usm_host);
  }
  return {};
}

/// Runs one inference of a one-element tensor; returns why it cannot run, or "".
std::string trial(const InferenceFactory& make) {
  try {
    auto inference = make(1);
    const std::uint64_t sum = inference->run(7);
    if (inference->checks_output() && sum != fresh_sum(1, 7))
      return "its first inference returned stale data (benchmarked anyway)";
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace

Catalogue make_catalogue() {
  const clzero::DeviceCaps& caps = Rig::get().caps;
  struct Candidate {
    const char* name;
    bool offered;
    const char* lacking;  // why it is not offered
    InferenceFactory make, raw_sequence;
  };
  const Candidate candidates[] = {
      {"clzero.Auto", true, "", clzero_factory<policy::Auto>(), {}},
      {"clzero.Persistent.alloc_host_ptr", true, "", clzero_factory<policy::Persistent>({Allocation::alloc_host_ptr()}),
       raw_persistent(RawAllocation::alloc_host_ptr)},
      {"clzero.Persistent.use_host_ptr", true, "", clzero_factory<policy::Persistent>({Allocation::use_host_ptr()}),
       raw_persistent(RawAllocation::use_host_ptr)},
      {"clzero.Persistent.nv_host_pinned", caps.nv_create_buffer, "the device does not offer cl_nv_create_buffer",
       clzero_factory<policy::Persistent>({Allocation::nv_host_pinned()}),
       raw_persistent(RawAllocation::nv_host_pinned)},
      {"clzero.MapPerInference", true, "", clzero_factory<policy::MapPerInference>(),
       factory<RawMapPerInferenceSequence>()},
      {"clzero.CopyToPinned", true, "", clzero_factory<policy::CopyToPinned>(), factory<RawCopyToPinnedSequence>()},
      {"clzero.Svm.fine", caps.svm_fine_grain_buffer,
       "the device has no fine-grained buffer SVM (CL_DEVICE_SVM_CAPABILITIES)",
       clzero_factory<policy::Svm>({policy::Svm::Grain::fine}),
       factory<RawCoherentSequence>(RawCoherentSequence::Memory::svm_fine)},
      {"clzero.Svm.coarse", caps.svm_coarse_grain_buffer,
       "the device has no coarse-grained buffer SVM (CL_DEVICE_SVM_CAPABILITIES)",
       clzero_factory<policy::Svm>({policy::Svm::Grain::coarse}), factory<RawSvmCoarseSequence>()},
      {"clzero.UnifiedHost", caps.intel_usm_host,
       "the device offers no host allocations of cl_intel_unified_shared_memory", clzero_factory<policy::UnifiedHost>(),
       factory<RawCoherentSequence>(RawCoherentSequence::Memory::usm_host)},
      {"raw.map_unmap", true, "", factory<RawMapUnmap>(), {}},
      {"raw.read_pinned", true, "", factory<RawReadBuffer>(true), {}},
      {"raw.read_pageable", true, "", factory<RawReadBuffer>(false), {}},
      {"floor.kernel_finish", true, "", factory<FloorKernelFinish>(), {}},
      {"floor.host_read", true, "", factory<FloorHostRead>(), {}},
  };
  Catalogue out;
  for (const Candidate& c : candidates) {
    if (!c.offered) {
      out.skipped.push_back(std::string(c.name) + ": " + c.lacking);
      continue;
    }
    const std::string why = trial(c.make);
    if (!why.empty() && why.rfind("its first", 0) != 0) {
      out.skipped.push_back(std::string(c.name) + ": " + why);
      continue;
    }
    InferenceFactory raw = c.raw_sequence;
    if (raw) {
      const std::string raw_why = trial(raw);
      if (!raw_why.empty()) {
        out.skipped.push_back(std::string(c.name) + " (raw sequence, overhead pair only): " + raw_why);
        raw = {};
      }
    }
    out.strategies.push_back(Strategy{c.name, c.make, raw});
  }
  const char* self_check = std::getenv("CLZERO_BENCH_SELF_CHECK");
  if (self_check != nullptr && self_check[0] == '1')
    out.strategies.push_back(Strategy{"selfcheck.stale", factory<SkipsEveryThirdKernel>(), {}});
  return out;
}

AutoPick auto_pick(std::size_t bytes) {
  ClzeroInference<policy::Auto> probe(bytes / sizeof(std::uint32_t), policy::Auto::Options{});
  const policy::Choice& choice = probe.tensor().policy().choice();
  AutoPick pick;
  pick.label = choice.label();
  pick.reason = choice.reason;
  pick.make = clzero_factory<policy::Auto>();
  pick.raw_sequence = raw_sequence_for(choice);
  return pick;
}

}  // namespace clzero_bench
