// SPDX-License-Identifier: Apache-2.0
// Which sequences the runner measures on the benchmark device: every legal
// hand-written sequence the device offers, clzero's policies, the references.
#pragma once

#include <clzero/clzero.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "cuda.hpp"
#include "legal.hpp"
#include "pipelined.hpp"
#include "sequence.hpp"

namespace clzero_seq {

struct Catalogue {
  std::vector<Variant> variants;
  std::vector<std::string> lacking;  ///< "what: why the device does not offer it"
};

namespace detail_catalogue {

template <class T, class... Args>
Factory make(Args... args) {
  return [=](std::size_t n) -> std::unique_ptr<Sequence> { return std::make_unique<T>(n, args...); };
}

template <class Policy>
Factory clzero_serial(typename Policy::Options options = {}) {
  return
      [=](std::size_t n) -> std::unique_ptr<Sequence> { return std::make_unique<ClzeroSequence<Policy>>(n, options); };
}

template <class Policy>
Factory clzero_ring(std::size_t slots, typename Policy::Options options = {}) {
  return [=](std::size_t n) -> std::unique_ptr<Sequence> {
    return std::make_unique<ClzeroRing<Policy>>(n, slots, options);
  };
}

template <class Slot, class... Args>
Factory ring(std::size_t slots, Args... args) {
  return [=](std::size_t n) -> std::unique_ptr<Sequence> { return std::make_unique<Ring<Slot>>(n, slots, args...); };
}

struct ClzeroPolicy {
  std::string name;        // "Persistent.nv_host_pinned"
  std::string family;      // the legal family it is held against ("" for Auto: every family)
  std::string allocation;  // within that family
  std::size_t slots;
  Factory make;
};

template <class Policy>
Factory for_slots(std::size_t slots, const typename Policy::Options& options) {
  return slots == 1 ? clzero_serial<Policy>(options) : clzero_ring<Policy>(slots, options);
}

inline std::vector<ClzeroPolicy> clzero_policies(const clzero::DeviceCaps& caps, std::size_t slots) {
  namespace policy = clzero::policy;
  using clzero::Allocation;
  std::vector<ClzeroPolicy> out;
  out.push_back({"Auto", "", "", slots, for_slots<policy::Auto>(slots, policy::Auto::Options{})});
  std::vector<std::pair<const char*, Allocation>> allocations = {{"alloc_host_ptr", Allocation::alloc_host_ptr()},
                                                                 {"use_host_ptr", Allocation::use_host_ptr()}};
  if (caps.nv_create_buffer) allocations.push_back({"nv_host_pinned", Allocation::nv_host_pinned()});
  for (const auto& a : allocations)
    out.push_back({std::string("Persistent.") + a.first, "mapped_at_rest", a.first, slots,
                   for_slots<policy::Persistent>(slots, policy::Persistent::Options{a.second})});
  for (const auto& a : allocations)
    out.push_back({std::string("MapPerInference.") + a.first, "map_per_inference", a.first, slots,
                   for_slots<policy::MapPerInference>(slots, policy::MapPerInference::Options{a.second})});
  out.push_back({"CopyToPinned", "read_buffer", "pinned_alloc_host_ptr", slots,
                 for_slots<policy::CopyToPinned>(slots, policy::CopyToPinned::Options{})});
#if defined(CL_VERSION_2_0)
  if (caps.svm_fine_grain_buffer)
    out.push_back({"Svm.fine", "svm_fine", "", slots,
                   for_slots<policy::Svm>(slots, policy::Svm::Options{policy::Svm::Grain::fine})});
  if (caps.svm_coarse_grain_buffer)
    out.push_back({"Svm.coarse", "svm_coarse", "", slots,
                   for_slots<policy::Svm>(slots, policy::Svm::Options{policy::Svm::Grain::coarse})});
#endif
  if (caps.intel_usm_host)
    out.push_back(
        {"UnifiedHost", "usm_host", "", slots, for_slots<policy::UnifiedHost>(slots, policy::UnifiedHost::Options{})});
  return out;
}

}  // namespace detail_catalogue

/// Adds a second copy of each variant named in `names` that the catalogue
/// holds, named with "twin" in place of "legal" and of kind "twin": the same
/// code and calls over buffers of its own, never a reference. How far a
/// variant and its twin come apart in one run is the measurement's own
/// spread, against which a ratio to the fastest legal sequence is read.
inline void add_twins(Catalogue& c, const std::vector<std::string>& names) {
  std::vector<Variant> twins;
  for (const Variant& v : c.variants)
    for (const std::string& name : names)
      if (v.name == name) {
        Variant t = v;
        const std::size_t at = t.name.find("legal.");
        t.name.replace(at, 5, "twin");
        t.kind = "twin";
        twins.push_back(std::move(t));
      }
  for (Variant& t : twins) c.variants.push_back(std::move(t));
}

/// One inference at a time: every legal sequence, clzero's policies, the
/// references; and CUDA's zero copy where `cuda_device` (the OpenCL device)
/// is an NVIDIA GPU with CUDA's driver.
inline Catalogue serial_catalogue(const clzero::DeviceCaps& caps, cl_device_id cuda_device = nullptr) {
  using namespace detail_catalogue;
  Catalogue c;
  std::vector<RawAllocation> allocations = {RawAllocation::device, RawAllocation::alloc_host_ptr,
                                            RawAllocation::use_host_ptr};
  if (caps.nv_create_buffer)
    allocations.push_back(RawAllocation::nv_host_pinned);
  else
    c.lacking.push_back("nv_host_pinned: the device does not offer cl_nv_create_buffer");
  for (RawAllocation a : allocations) {
    const std::string an = allocation_name(a);
    for (Wait w : {Wait::blocking, Wait::poll})
      c.variants.push_back({"legal.map_per_inference." + an + "." + wait_name(w), "legal", "map_per_inference", an,
                            wait_name(w), 1, make<MapSequence>(a, false, w)});
    std::vector<Wait> waits = {Wait::blocking, Wait::wait, Wait::wait_both, Wait::poll, Wait::poll_both};
    if (a == RawAllocation::alloc_host_ptr || a == RawAllocation::nv_host_pinned)
      waits.insert(waits.end(), {Wait::blocking_events, Wait::blocking_flushed});
    for (Wait w : waits)
      c.variants.push_back({"legal.at_rest." + an + "." + wait_name(w), "legal", "mapped_at_rest", an, wait_name(w), 1,
                            make<MapSequence>(a, true, w)});
  }
  std::vector<ReadInto> intos = {ReadInto::pinned_alloc_host_ptr, ReadInto::pageable};
  if (caps.nv_create_buffer) intos.insert(intos.begin() + 1, ReadInto::pinned_nv_host);
  for (ReadInto r : intos)
    for (Wait w : {Wait::blocking, Wait::wait, Wait::poll})
      c.variants.push_back({std::string("legal.read.") + read_into_name(r) + "." + wait_name(w), "legal", "read_buffer",
                            read_into_name(r), wait_name(w), 1, make<ReadSequence>(r, w)});
#if defined(CL_VERSION_2_0)
  if (caps.svm_coarse_grain_buffer) {
    for (Wait w : {Wait::blocking, Wait::wait, Wait::poll})
      c.variants.push_back({std::string("legal.svm_coarse.at_rest.") + wait_name(w), "legal", "svm_coarse", "at_rest",
                            wait_name(w), 1, make<SvmCoarseSequence>(true, w)});
    c.variants.push_back({"legal.svm_coarse.per_inference.blocking", "legal", "svm_coarse", "per_inference", "blocking",
                          1, make<SvmCoarseSequence>(false, Wait::blocking)});
  } else {
    c.lacking.push_back("svm_coarse: no coarse-grained buffer SVM (CL_DEVICE_SVM_CAPABILITIES)");
  }
  if (caps.svm_fine_grain_buffer) {
    for (Wait w : {Wait::blocking, Wait::wait, Wait::poll})
      c.variants.push_back({std::string("legal.svm_fine.") + (w == Wait::blocking ? "finish" : wait_name(w)), "legal",
                            "svm_fine", "", w == Wait::blocking ? "finish" : wait_name(w), 1,
                            make<CoherentSequence>(CoherentSequence::Memory::svm_fine, w)});
  } else {
    c.lacking.push_back("svm_fine: no fine-grained buffer SVM (CL_DEVICE_SVM_CAPABILITIES)");
  }
#endif
  if (caps.intel_usm_host) {
    for (Wait w : {Wait::blocking, Wait::wait, Wait::poll})
      c.variants.push_back({std::string("legal.usm_host.") + (w == Wait::blocking ? "finish" : wait_name(w)), "legal",
                            "usm_host", "", w == Wait::blocking ? "finish" : wait_name(w), 1,
                            make<CoherentSequence>(CoherentSequence::Memory::usm_host, w)});
  } else {
    c.lacking.push_back("usm_host: no cl_intel_unified_shared_memory host allocations");
  }
  c.variants.push_back({"ub.kept_mapped.alloc_host_ptr", "ub", "kept_mapped", "alloc_host_ptr", "finish", 1,
                        make<KeptMappedSequence>(RawAllocation::alloc_host_ptr)});
  if (caps.nv_create_buffer)
    c.variants.push_back({"ub.kept_mapped.nv_host_pinned", "ub", "kept_mapped", "nv_host_pinned", "finish", 1,
                          make<KeptMappedSequence>(RawAllocation::nv_host_pinned)});
  c.variants.push_back({"floor.kernel_finish", "floor", "floor", "device", "finish", 1, make<FloorSequence>()});
  if (cuda_device != nullptr) {
    std::string why;
    if (const cuda::Driver* d = cuda::Driver::get(cuda_device, &why)) {
      c.variants.push_back({"cuda.zero_copy", "cuda", "cuda", "mapped_pinned", "sync", 1,
                            [d](std::size_t n) -> std::unique_ptr<Sequence> {
                              return std::make_unique<cuda::ZeroCopy>(*d, n);
                            }});
      c.variants.push_back({"cuda.floor", "cuda", "cuda", "device", "sync", 1,
                            [d](std::size_t n) -> std::unique_ptr<Sequence> {
                              return std::make_unique<cuda::Floor>(*d, n);
                            }});
    } else {
      c.lacking.push_back("cuda: " + why);
    }
  }
  // Twins of what is fastest on the devices measured so far (the H200's
  // NVIDIA OpenCL; PoCL) and of one sequence every device offers.
  add_twins(c, {"legal.at_rest.alloc_host_ptr.blocking", "legal.at_rest.nv_host_pinned.blocking",
                "legal.svm_fine.poll"});
  for (auto& p : clzero_policies(caps, 1))
    c.variants.push_back({"clzero." + p.name, "clzero", p.family, p.allocation, "", 1, p.make});
  // Counted as clzero's, so that its stale output fails the run.
  if (const char* self_check = std::getenv("CLZERO_SEQUENCES_SELF_CHECK"); self_check && self_check[0] == '1')
    c.variants.push_back({"clzero.selfcheck_stale", "clzero", "map_per_inference", "alloc_host_ptr", "", 1,
                          make<SkipsEveryThirdKernel>()});
  return c;
}

/// Pipelined: hand-written rings and TensorRing of 2 and 3 slots, and the
/// serial sequences they are held against, in the same rounds.
inline Catalogue pipelined_catalogue(const clzero::DeviceCaps& caps) {
  using namespace detail_catalogue;
  Catalogue c;
  std::vector<RawAllocation> allocations = {RawAllocation::alloc_host_ptr, RawAllocation::use_host_ptr};
  if (caps.nv_create_buffer) allocations.push_back(RawAllocation::nv_host_pinned);
  // The serial references: the fastest serial candidates of each family.
  for (RawAllocation a : allocations) {
    const std::string an = allocation_name(a);
    c.variants.push_back({"serial.legal.at_rest." + an + ".blocking", "legal", "mapped_at_rest", an, "blocking", 1,
                          make<MapSequence>(a, true, Wait::blocking)});
  }
  c.variants.push_back({"serial.legal.map_per_inference.alloc_host_ptr.blocking", "legal", "map_per_inference",
                        "alloc_host_ptr", "blocking", 1,
                        make<MapSequence>(RawAllocation::alloc_host_ptr, false, Wait::blocking)});
  c.variants.push_back({"serial.legal.read.pinned_alloc_host_ptr.poll", "legal", "read_buffer", "pinned_alloc_host_ptr",
                        "poll", 1, make<ReadSequence>(ReadInto::pinned_alloc_host_ptr, Wait::poll)});
  if (caps.nv_create_buffer)
    c.variants.push_back({"serial.legal.read.pinned_nv_host_pinned.poll", "legal", "read_buffer",
                          "pinned_nv_host_pinned", "poll", 1,
                          make<ReadSequence>(ReadInto::pinned_nv_host, Wait::poll)});
#if defined(CL_VERSION_2_0)
  if (caps.svm_fine_grain_buffer)
    c.variants.push_back({"serial.legal.svm_fine.poll", "legal", "svm_fine", "", "poll", 1,
                          make<CoherentSequence>(CoherentSequence::Memory::svm_fine, Wait::poll)});
#endif
  if (caps.intel_usm_host)
    c.variants.push_back({"serial.legal.usm_host.poll", "legal", "usm_host", "", "poll", 1,
                          make<CoherentSequence>(CoherentSequence::Memory::usm_host, Wait::poll)});
  c.variants.push_back({"serial.clzero.Auto", "clzero", "", "", "", 1,
                        clzero_serial<clzero::policy::Auto>(clzero::policy::Auto::Options{})});
  for (std::size_t k : {std::size_t{2}, std::size_t{3}}) {
    const std::string ring_name = "ring" + std::to_string(k);
    for (RawAllocation a : allocations) {
      const std::string an = allocation_name(a);
      c.variants.push_back({ring_name + ".legal.at_rest." + an + ".poll_both", "legal", "mapped_at_rest", an,
                            "poll_both", k, ring<MapSlot>(k, a)});
    }
    std::vector<ReadInto> intos = {ReadInto::pinned_alloc_host_ptr};
    if (caps.nv_create_buffer) intos.push_back(ReadInto::pinned_nv_host);
    for (ReadInto r : intos)
      c.variants.push_back({ring_name + ".legal.read." + read_into_name(r) + ".poll", "legal", "read_buffer",
                            read_into_name(r), "poll", k, ring<ReadSlot>(k, r)});
#if defined(CL_VERSION_2_0)
    if (caps.svm_fine_grain_buffer)
      c.variants.push_back({ring_name + ".legal.svm_fine.poll", "legal", "svm_fine", "", "poll", k,
                            ring<CoherentSlot>(k, CoherentSequence::Memory::svm_fine)});
    if (caps.svm_coarse_grain_buffer)
      c.variants.push_back({ring_name + ".legal.svm_coarse.at_rest.poll_both", "legal", "svm_coarse", "at_rest",
                            "poll_both", k, ring<SvmCoarseSlot>(k)});
#endif
    if (caps.intel_usm_host)
      c.variants.push_back({ring_name + ".legal.usm_host.poll", "legal", "usm_host", "", "poll", k,
                            ring<CoherentSlot>(k, CoherentSequence::Memory::usm_host)});
    for (auto& p : clzero_policies(caps, k))
      c.variants.push_back({ring_name + ".clzero." + p.name, "clzero", p.family, p.allocation, "", k, p.make});
  }
  add_twins(c, {"ring2.legal.read.pinned_alloc_host_ptr.poll", "ring2.legal.svm_fine.poll"});
  // The ring of 2 again with views that poll for up to 20 ms (the default is
  // 100 us, then clWaitForEvents): what the spin budget costs a ring whose
  // views wait for a large transfer.
  c.variants.push_back(
      {"ring2.clzero.Auto.spin_20ms", "clzero", "", "", "", 2, [](std::size_t n) -> std::unique_ptr<Sequence> {
         return std::make_unique<ClzeroRing<clzero::policy::Auto>>(n, 2, clzero::policy::Auto::Options{}, 20000);
       }});
  return c;
}

}  // namespace clzero_seq
