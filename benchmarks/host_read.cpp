// SPDX-License-Identifier: Apache-2.0
// The host's read of an output: every element, summed. In a translation unit
// of its own so that no caller can inline it and drop or hoist the read.
#include <cstddef>
#include <cstdint>

#include "inference.hpp"

namespace clzero_bench {

std::uint64_t host_sum(const std::uint32_t* data, std::size_t n) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += data[i];
  return sum;
}

}  // namespace clzero_bench
