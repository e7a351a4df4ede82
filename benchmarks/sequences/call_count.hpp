// SPDX-License-Identifier: Apache-2.0
// Counting the OpenCL calls of an inference (issue: no call the fastest legal
// sequence does not make). call_count.cpp defines the hot-path entry points
// in the executable itself, so that every call the benchmark and the
// header-only library make reaches a counter first and then the ICD loader's
// function (found with dlsym(RTLD_NEXT)). Counting costs one relaxed load
// per call while it is off.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace clzero_seq {

/// Starts counting from zero.
void start_counting_calls();
/// Stops and returns (entry point, calls) for every entry point called.
std::vector<std::pair<std::string, long long>> stop_counting_calls();
/// Whether the interposition is in place (the executable's own definitions
/// of the entry points are the ones called).
bool call_counting_works();

}  // namespace clzero_seq
