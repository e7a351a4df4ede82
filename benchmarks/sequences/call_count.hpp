// SPDX-License-Identifier: Apache-2.0
// Counting the OpenCL calls of an inference (issue: no call the fastest legal
// sequence does not make). call_count.cpp defines the hot-path entry points
// in the executable itself, so that every call the benchmark and the
// header-only library make reaches a counter first and then the ICD loader's
// function (found with dlsym(RTLD_NEXT)). Counting costs one relaxed load
// per call while it is off. The same definitions can stand in for the
// device (set_null_device), for the host's own cost of an inference.
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
/// Starts recording, in order, the entry points called (at most
/// kMaxTracedCalls; single-threaded use only).
void start_tracing_calls();
/// Stops and returns the entry points called since start_tracing_calls(),
/// in order; throws std::length_error if more were called than it can hold.
/// A status query (clGetEventInfo of CL_EVENT_COMMAND_EXECUTION_STATUS) is
/// named "clGetEventInfo(status)", and consecutive ones are one entry.
std::vector<std::string> stop_tracing_calls();
constexpr std::size_t kMaxTracedCalls = 1u << 20;
/// Whether the interposition is in place (the executable's own definitions
/// of the entry points are the ones called).
bool call_counting_works();

/// The null device, for the host's own cost of an inference: while on, the
/// interposed commands (kernel, map, unmap, read, write, fill, marker,
/// barrier, SVM map and unmap) are not made, clFlush, clFinish and
/// clWaitForEvents return at once, an event asked for is a fake one that
/// reads as complete, and a buffer map returns scratch memory owned here.
/// What runs is the host's side only: the calls' own entry and the
/// bookkeeping around them. Objects that used it are destroyed before it is
/// turned off (their mappings are then the scratch memory's, not the
/// runtime's). Single-threaded use only.
void set_null_device(bool on);

}  // namespace clzero_seq
