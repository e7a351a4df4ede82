// SPDX-License-Identifier: Apache-2.0
// The strategies the benchmark compares, in the order the tables show them:
// every clzero policy and allocation (each with the raw call sequence it
// mirrors, for the wrapper-overhead pairs), the engines' raw ways, the floors.
// Only what the device can run is listed; the rest is named with the reason.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "inference.hpp"

namespace clzero_bench {

struct Strategy {
  std::string name;  ///< "clzero.Persistent.alloc_host_ptr", "raw.map_unmap", "floor.host_read"
  InferenceFactory make;
  InferenceFactory raw_sequence;  ///< clzero policies only: the same calls in raw OpenCL
};

struct Catalogue {
  std::vector<Strategy> strategies;
  std::vector<std::string> skipped;  ///< "clzero.Svm.fine: <why>"
};

/// Every strategy the benchmark device (Rig) can run. Each is tried once on a
/// one-element tensor; one that throws is skipped with its error. With
/// CLZERO_BENCH_SELF_CHECK=1, also selfcheck.stale (self_check.hpp).
Catalogue make_catalogue();

/// What policy::Auto picked for an output tensor of `bytes` bytes on the
/// benchmark device, and the raw call sequence of that pick.
struct AutoPick {
  std::string label;  ///< "Persistent (nv_host_pinned)"
  std::string reason;
  InferenceFactory make;
  InferenceFactory raw_sequence;  ///< empty when the pick has none here
};
AutoPick auto_pick(std::size_t bytes);

}  // namespace clzero_bench
