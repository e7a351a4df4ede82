// SPDX-License-Identifier: Apache-2.0
// The host CPU's model name, recorded beside every benchmark run (both
// clzero_bench and clzero_sequences), so that a table says what it ran on.
#pragma once

#include <fstream>
#include <string>

namespace clzero_bench {

/// The first "model name" of /proc/cpuinfo, or "unknown".
inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown";
}

}  // namespace clzero_bench
