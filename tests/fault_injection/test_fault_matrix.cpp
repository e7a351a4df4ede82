// SPDX-License-Identifier: Apache-2.0
// Every OpenCL call clzero makes in a tensor's life, failed in turn, for every
// policy and intent: the failure reaches the application as a clzero::Error
// naming the call and the error, nothing leaks, the map protocol holds, and
// the tensor is either usable again or says it is not (usable() false, every
// call throws ErrorKind::unusable).
//
// The fault points are not listed by hand: a clean run logs every call the
// layer intercepts, then each of them is failed in turn (the kth call of its
// name, so that calls whose number depends on timing, like clFlush, stay
// addressable), with the codes drivers return for that call. A call clzero
// starts making tomorrow is covered without touching this file.
#include <clzero/clzero.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "harness/fault_layer.hpp"
#include "harness/scenario.hpp"
#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

struct Injection {
  cl_int code;
  int mode;
};

// The codes implementations return for each call (OpenCL 3.0 reference
// pages, errors section), and "the command ends in error" for the
// non-blocking enqueues whose failure a driver may only report later.
std::vector<Injection> injections_for(const std::string& api) {
  const int now = CLZERO_FAULT_IMMEDIATE, later = CLZERO_FAULT_ASYNC;
  if (api == "clCreateBuffer" || api == "clCreateBufferWithProperties")
    return {{CL_MEM_OBJECT_ALLOCATION_FAILURE, now}, {CL_OUT_OF_RESOURCES, now}, {CL_OUT_OF_HOST_MEMORY, now}};
  if (api == "clSVMAlloc") return {{CL_MEM_OBJECT_ALLOCATION_FAILURE, now}};  // NULL is its only signal
  if (api == "clEnqueueMapBuffer")
    return {{CL_MAP_FAILURE, now},
            {CL_MEM_OBJECT_ALLOCATION_FAILURE, now},
            {CL_OUT_OF_RESOURCES, now},
            {CL_MAP_FAILURE, later}};
  if (api == "clEnqueueSVMMap")
    return {{CL_OUT_OF_RESOURCES, now}, {CL_OUT_OF_HOST_MEMORY, now}, {CL_OUT_OF_RESOURCES, later}};
  if (api == "clEnqueueUnmapMemObject" || api == "clEnqueueSVMUnmap")
    return {{CL_OUT_OF_RESOURCES, now}, {CL_OUT_OF_HOST_MEMORY, now}};
  if (api == "clEnqueueFillBuffer" || api == "clEnqueueSVMMemFill" || api == "clEnqueueReadBuffer" ||
      api == "clEnqueueWriteBuffer" || api == "clEnqueueCopyBuffer")
    return {{CL_MEM_OBJECT_ALLOCATION_FAILURE, now}, {CL_OUT_OF_RESOURCES, now}, {CL_OUT_OF_RESOURCES, later}};
  if (api == "clEnqueueMarkerWithWaitList" || api == "clEnqueueBarrierWithWaitList")
    return {{CL_OUT_OF_RESOURCES, now}, {CL_OUT_OF_RESOURCES, later}};
  // CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST is not injected here: it
  // comes from the commands that end in error above, as it does on a driver.
  if (api == "clWaitForEvents") return {{CL_OUT_OF_RESOURCES, now}, {CL_OUT_OF_HOST_MEMORY, now}};
  return {{CL_OUT_OF_RESOURCES, now}};  // queries, clFlush, clRetainEvent, kernel arguments
}

std::string fault_point(const std::string& api, const Injection& i) {
  return i.mode == CLZERO_FAULT_ASYNC ? api + ": the command ends in error" : api + " returns " + error_name(i.code);
}

// The fault points x policies table for docs/reliability.md, written when
// CLZERO_FAULT_TABLE names a file.
class Table {
 public:
  static Table& get() {
    static Table t;
    return t;
  }
  void add(const std::string& subject, const std::string& point, const std::string& outcome) {
    if (std::find(subjects_.begin(), subjects_.end(), subject) == subjects_.end()) subjects_.push_back(subject);
    if (std::find(points_.begin(), points_.end(), point) == points_.end()) points_.push_back(point);
    ++cells_[{point, subject}][outcome];
    ++scenarios_;
  }
  ~Table() {
    const char* path = std::getenv("CLZERO_FAULT_TABLE");
    if (path == nullptr || *path == '\0' || scenarios_ == 0) return;
    std::ofstream f(path);
    f << "| fault point (" << scenarios_ << " scenarios) |";
    for (const auto& s : subjects_) f << ' ' << s << " |";
    f << "\n|---|";
    for (std::size_t i = 0; i < subjects_.size(); ++i) f << "---|";
    f << '\n';
    for (const auto& p : points_) {
      f << "| " << p << " |";
      for (const auto& s : subjects_) {
        auto it = cells_.find({p, s});
        std::string cell;
        if (it != cells_.end())
          for (const auto& o : it->second)
            cell += (cell.empty() ? "" : "<br>") + o.first + " " + std::to_string(o.second);
        f << ' ' << (cell.empty() ? "·" : cell) << " |";
      }
      f << '\n';
    }
  }

 private:
  std::vector<std::string> subjects_, points_;
  std::map<std::pair<std::string, std::string>, std::map<std::string, int>> cells_;
  long scenarios_ = 0;
};

// Whether one of the errors the application saw is the injected one.
bool names_the_fault(const Outcome& o, const std::string& api, const Injection& i) {
  for (const Reported& r : o.errors) {
    if (r.kind != ErrorKind::opencl) continue;
    if (r.api == api && r.code_name == error_name(i.code)) return true;
    // A command that ended in error is seen by whoever waits for it.
    if (i.mode == CLZERO_FAULT_ASYNC && r.code_name != std::string("CL_SUCCESS")) return true;
  }
  return false;
}

bool mentions(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

// A failed query that changed nothing visible: every element of every
// inference right, nothing leaked, no protocol violation. DeviceCaps reads
// an optional property it cannot query as absent (e.g. the deprecated
// CL_DEVICE_HOST_UNIFIED_MEMORY), and a release that cannot ask a map's
// status assumes it completed and unmaps: both keep working correctly.
bool absorbed_rightly(const Outcome& o, const std::string& api) {
  return o.after == Outcome::After::unaffected && o.problems.empty() &&
         (api == "clGetDeviceInfo" || api == "clGetPlatformInfo" || api == "clGetEventInfo");
}

// A marker clzero enqueued (an out-of-order queue without events) that ends
// in error after the kernels have read an input orders only the host's next
// write of that input: the commands it stood for are over either way, and no
// data is read from the tensor, so there is nothing to report. With the
// engine's events (test above) the same failure reaches the engine's kernels.
bool marker_of_consumed_input(const Outcome& o, const std::string& api, const Injection& injection, Intent intent) {
  return intent == Intent::input && api == "clEnqueueMarkerWithWaitList" && injection.mode == CLZERO_FAULT_ASYNC &&
         o.problems.empty();
}

// The spec leaves a release of a mapped object unspecified (OpenCL 3.0
// section 5.5.4), but when the unmap before the release fails there is
// nothing better to do than report it and release: keeping the object would
// leak it for good.
bool accepted(const std::string& problem, const Outcome& o, const std::string& api) {
  if (!mentions(problem, "released while mapped")) return false;
  if (api != "clEnqueueUnmapMemObject" && api != "clEnqueueSVMUnmap") return false;
  for (const Reported& r : o.errors)
    if (r.cleanup && r.api == api) return true;
  return false;
}

std::string describe(const Outcome& o) {
  std::string s = std::string("outcome: ") + to_string(o.after);
  for (const Reported& r : o.errors) s += std::string("\n  ") + (r.cleanup ? "cleanup handler: " : "thrown: ") + r.what;
  for (const std::string& p : o.problems) s += "\n  PROBLEM: " + p;
  return s;
}

using Run = std::function<Outcome(Intent, const Fault&)>;

template <class Policy>
Run runner(typename Policy::Options options) {
  return [options](Intent intent, const Fault& fault) { return run_scenario<Policy>(options, intent, fault); };
}

// Fails every intercepted call of a tensor's life in turn, for each intent.
void every_fault(const std::string& subject, const Run& run) {
  const bool verbose = std::getenv("CLZERO_FAULT_VERBOSE") != nullptr;
  for (Intent intent : {Intent::output, Intent::input, Intent::inout}) {
    INFO(subject << ", intent " << to_string(intent));
    if (const char* only = std::getenv("CLZERO_FAULT_SUBJECT");
        only != nullptr && subject.find(only) == std::string::npos) {
      CLZERO_NOT_RUN("not run: CLZERO_FAULT_SUBJECT names another subject");
      return;
    }
    const Outcome clean = run(intent, Fault{});
    INFO("clean run: " << describe(clean));
    REQUIRE(clean.problems.empty());
    REQUIRE(clean.after == Outcome::After::unaffected);
    const std::vector<std::string> calls = FaultLayer::get().calls();
    REQUIRE(calls.size() > 5);
    if (verbose)
      for (const std::string& c : calls) std::fprintf(stderr, "  clean run calls %s\n", c.c_str());
    std::map<std::string, long> occurrences;
    std::map<std::string, long> reached;  // per call name: injected faults that fired
    for (const std::string& api : calls) {
      const long k = ++occurrences[api];
      for (const Injection& injection : injections_for(api)) {
        const std::string point = fault_point(api, injection);
        if (verbose) std::fprintf(stderr, "%s, %s: %s #%ld\n", subject.c_str(), to_string(intent), point.c_str(), k);
        const Outcome o = run(intent, Fault{api, k, injection.code, injection.mode});
        if (o.fired.empty()) {  // fewer such calls this time (clFlush, clGetEventInfo follow timing)
          Table::get().add(subject, point, "not reached");
          continue;
        }
        ++reached[api];
        INFO("fault: " << point << " (call " << k << " of that name)\n" << describe(o));
        std::string outcome = to_string(o.after);
        std::vector<std::string> problems = o.problems;
        if (o.after == Outcome::After::unaffected) {
          if (absorbed_rightly(o, api))
            outcome = "absorbed, data right";
          else if (marker_of_consumed_input(o, api, injection, intent))
            outcome = "absorbed: the input was consumed, nothing stale read";
          else
            problems.push_back("the fault never reached the application: no error was thrown or reported");
        } else if (!names_the_fault(o, api, injection)) {
          problems.push_back("no error names " + api + " with " + error_name(injection.code));
        }
        for (const std::string& problem : problems) {
          if (!accepted(problem, o, api)) FAIL_CHECK(problem);
        }
        Table::get().add(subject, point, outcome);
      }
    }
    // A call the clean run made is reached by some fault, unless how often
    // it is made follows timing: a matrix whose faults all missed would
    // otherwise pass on its clean runs alone.
    for (const auto& [api, count] : occurrences) {
      if (api == "clFlush" || api == "clGetEventInfo" || api == "clWaitForEvents" || injections_for(api).empty())
        continue;
      INFO("call " << api << ", made " << count << " time(s) in the clean run");
      CHECK(reached[api] > 0);
    }
  }
}

bool svm(bool fine) {
#if defined(CL_VERSION_2_0)
  return fine ? Env::get().caps.svm_fine_grain_buffer : Env::get().caps.svm_coarse_grain_buffer;
#else
  (void)fine;
  return false;
#endif
}

}  // namespace

TEST_CASE("every fault in a MapPerInference tensor's life is reported and leaks nothing", "[fault]") {
  every_fault("MapPerInference (alloc_host_ptr)", runner<policy::MapPerInference>({Allocation::alloc_host_ptr()}));
  every_fault("MapPerInference (use_host_ptr)", runner<policy::MapPerInference>({Allocation::use_host_ptr()}));
}

TEST_CASE("every fault in a Persistent tensor's life is reported and leaks nothing", "[fault]") {
  every_fault("Persistent (alloc_host_ptr)", runner<policy::Persistent>({Allocation::alloc_host_ptr()}));
  every_fault("Persistent (use_host_ptr)", runner<policy::Persistent>({Allocation::use_host_ptr()}));
}

TEST_CASE("every fault in a CopyToPinned tensor's life is reported and leaks nothing", "[fault]") {
  every_fault("CopyToPinned", runner<policy::CopyToPinned>({}));
}

#if defined(CL_VERSION_2_0)
TEST_CASE("every fault in an Svm tensor's life is reported and leaks nothing", "[fault]") {
  if (svm(true)) every_fault("Svm (fine)", runner<policy::Svm>({policy::Svm::Grain::fine}));
  if (svm(false)) every_fault("Svm (coarse)", runner<policy::Svm>({policy::Svm::Grain::coarse}));
  if (!svm(true) && !svm(false)) CLZERO_NOT_RUN("not run: the device offers no buffer SVM");
}
#endif

TEST_CASE("every fault in an Auto tensor's life is reported and leaks nothing", "[fault]") {
  every_fault("Auto", runner<policy::Auto>({}));
}

namespace {

struct OutOfOrderQueue {
  OutOfOrderQueue() : q(Env::get().make_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) {}
  ~OutOfOrderQueue() { clReleaseCommandQueue(q); }
  OutOfOrderQueue(const OutOfOrderQueue&) = delete;
  OutOfOrderQueue& operator=(const OutOfOrderQueue&) = delete;
  cl_command_queue q;
};

// On an out-of-order queue whose engine hands no events back, clzero orders
// the host's side with markers: their faults are covered here.
template <class Policy>
Run unordered(typename Policy::Options options, cl_command_queue q) {
  return [options, q](Intent intent, const Fault& fault) {
    return run_scenario<Policy>(options, intent, fault, q, false);
  };
}

}  // namespace

TEST_CASE("every fault on an out-of-order queue without recorded events is reported and leaks nothing",
          "[fault_out_of_order]") {
  CLZERO_NEEDS(Env::get().caps.out_of_order_queue, "out-of-order queue");
  OutOfOrderQueue ooo;
  every_fault("Persistent, out of order", unordered<policy::Persistent>({}, ooo.q));
  every_fault("MapPerInference, out of order", unordered<policy::MapPerInference>({}, ooo.q));
  every_fault("CopyToPinned, out of order", unordered<policy::CopyToPinned>({}, ooo.q));
#if defined(CL_VERSION_2_0)
  if (svm(true)) every_fault("Svm (fine), out of order", unordered<policy::Svm>({policy::Svm::Grain::fine}, ooo.q));
#endif
}
