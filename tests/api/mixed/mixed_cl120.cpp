// SPDX-License-Identifier: Apache-2.0
// A translation unit built for OpenCL 1.2 headers, in the same program as
// one built for 3.0: its Auto (without Svm) is its own, and it uses tensors
// it makes itself, and a Persistent tensor handed in from the other one
// (Persistent is the same in every configuration).
#define CL_TARGET_OPENCL_VERSION 120
#include <clzero/clzero.hpp>

#include "rig.hpp"

// After rig.hpp, whose names it uses.
#include "inference.inc"

std::size_t auto_inferences_cl120(const Rig& rig, std::string& chose) {
  clzero::MappedTensor<std::uint32_t> logits(rig.context, rig.queue, {kElements}, clzero::Intent::output);
  chose = logits.policy().choice().label();
  return stale_after_inferences(rig, logits);
}

std::size_t persistent_inferences_cl120(const Rig& rig,
                                        clzero::MappedTensor<std::uint32_t, clzero::policy::Persistent>& tensor) {
  return stale_after_inferences(rig, tensor);
}
