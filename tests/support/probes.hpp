// SPDX-License-Identifier: Apache-2.0
// Small probes the rule tests use to observe the OpenCL state directly.
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <thread>

#include "support/test_env.hpp"

namespace clzero_test {

/// CL_MEM_MAP_COUNT: for tests only (the spec says it is for debugging).
inline cl_uint map_count(cl_mem m) {
  cl_uint n = 0;
  ok(clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof n, &n, nullptr), "clGetMemObjectInfo(CL_MEM_MAP_COUNT)");
  return n;
}

/// A count the implementation updates a moment after the command behind it
/// (the spec calls such counts "immediately stale"): read until it equals
/// `expected`, for up to two seconds; returns the last value read.
template <class Read>
cl_uint settled(Read read, cl_uint expected) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  cl_uint n = read();
  while (n != expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    n = read();
  }
  return n;
}

/// CL_MEM_MAP_COUNT once it has settled: PoCL 5 was seen to update it just
/// after the unmap's event completed.
inline cl_uint settled_map_count(cl_mem m, cl_uint expected) {
  return settled([m] { return map_count(m); }, expected);
}

inline cl_ulong profile(cl_event e, cl_profiling_info what) {
  cl_ulong t = 0;
  ok(clGetEventProfilingInfo(e, what, sizeof t, &t, nullptr), "clGetEventProfilingInfo");
  return t;
}

inline void wait(cl_uint n, const cl_event* events) {
  if (n > 0) ok(clWaitForEvents(n, events), "clWaitForEvents");
}

/// A user event that holds back whatever waits on it until open() is called.
struct Gate {
  Gate() {
    cl_int rc = CL_SUCCESS;
    event = clCreateUserEvent(Env::get().context, &rc);
    ok(rc, "clCreateUserEvent");
  }
  ~Gate() {
    open();
    clReleaseEvent(event);
  }
  void open() {
    if (!opened) clSetUserEventStatus(event, CL_COMPLETE);
    opened = true;
  }
  cl_event event = nullptr;
  bool opened = false;
};

/// Whether `f` finishes within `seconds` (it keeps running if not).
template <class Future>
bool finishes_within(Future& f, double seconds) {
  return f.wait_for(std::chrono::duration<double>(seconds)) == std::future_status::ready;
}

}  // namespace clzero_test
