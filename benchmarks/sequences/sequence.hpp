// SPDX-License-Identifier: Apache-2.0
// The unit the interleaved runner (clzero_sequences) measures: one way of
// making a kernel's output visible on the host, run for a block of
// consecutive inferences. Every inference's producer writes values that
// change from one inference to the next, and the host compares every element
// with what that inference wrote; a sequence that ever shows a wrong element
// is reported as stale and never counted as a winner.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "../bench_env.hpp"

namespace clzero_seq {

using clzero_bench::ok;
using clzero_bench::Rig;

/// How many elements of `p` differ from what inference `iter` wrote (element
/// i holds iter + i). Out of line, so that the read of every element can be
/// neither hoisted nor dropped; the loop has no early exit, so its cost does
/// not depend on where the first wrong element is.
std::size_t count_wrong(const std::uint32_t* p, std::size_t n, std::uint32_t iter);

/// Inference numbers restart below 2^30 so that iter + i never wraps for the
/// largest output (2^24 elements).
inline std::uint32_t next_iter(std::uint32_t iter) { return iter >= (1u << 30) ? 1u : iter + 1u; }

class Sequence {
 public:
  virtual ~Sequence() = default;
  /// Runs `count` inferences numbered first, next_iter(first), ...; the
  /// output of each is visible and checked on the host before the call
  /// returns (a pipelined sequence overlaps inside the block and leaves
  /// nothing in flight at its end). Returns the number of inferences that
  /// showed at least one wrong element.
  virtual std::size_t run_block(std::uint32_t first, std::size_t count) = 0;
  /// False for the floor, which leaves nothing on the host to check.
  virtual bool checks_output() const { return true; }
};

/// A sequence that handles one inference at a time.
class SerialSequence : public Sequence {
 public:
  /// One inference; the number of wrong elements it showed.
  virtual std::size_t run(std::uint32_t iter) = 0;
  std::size_t run_block(std::uint32_t first, std::size_t count) override {
    std::size_t stale = 0;
    std::uint32_t iter = first;
    for (std::size_t i = 0; i < count; ++i, iter = next_iter(iter)) stale += run(iter) != 0 ? 1 : 0;
    return stale;
  }
};

/// Builds a sequence over n uint32 elements; throws when the device cannot.
using Factory = std::function<std::unique_ptr<Sequence>(std::size_t n)>;

/// What a variant is, for the report.
struct Variant {
  std::string name;        ///< "legal.at_rest.nv_host_pinned.blocking", "clzero.Auto", "ring2.clzero.Auto"
  std::string kind;        ///< "legal", "clzero", "twin" (a legal one again), "ub" (undefined behaviour), "floor",
                           ///< "cuda" (CUDA's zero copy and floor, the comparison: never a reference)
  std::string family;      ///< map_per_inference, mapped_at_rest, read_buffer, svm_coarse, svm_fine, usm_host, ...
  std::string allocation;  ///< the allocation kind or read destination; "" where none
  std::string wait;        ///< blocking, wait, wait_both, poll, poll_both, finish; "" for clzero
  std::size_t slots = 1;   ///< > 1: a pipelined ring of this many slots
  Factory make;
};

/// Sets the producer's inference number and enqueues it over n work-items.
inline void enqueue_producer(cl_command_queue q, cl_kernel k, std::size_t n, std::uint32_t iter, cl_uint waits,
                             const cl_event* wait_list, cl_event* event) {
  const cl_uint arg = iter;
  ok(clSetKernelArg(k, 1, sizeof arg, &arg), "clSetKernelArg");
  ok(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, waits, wait_list, event), "clEnqueueNDRangeKernel");
}

/// Polls until `e` has completed; throws if it ended in error.
inline void poll(cl_event e) {
  for (;;) {
    cl_int status = CL_QUEUED;
    ok(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr), "clGetEventInfo");
    if (status == CL_COMPLETE) return;
    if (status < 0) ok(status, "a polled command");
  }
}

/// Owns at most one event.
class Event {
 public:
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { reset(); }
  cl_event* out() {
    reset();
    return &e_;
  }
  cl_event get() const { return e_; }
  void reset() {
    if (e_ != nullptr) clReleaseEvent(e_);
    e_ = nullptr;
  }

 private:
  cl_event e_ = nullptr;
};

}  // namespace clzero_seq
