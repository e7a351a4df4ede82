// SPDX-License-Identifier: Apache-2.0
// The tests' handle on the fault layer: finds the copy the ICD loader loaded
// (from OPENCL_LAYERS) and resolves its control functions.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "layer/fault_control.h"
#include "support/test_env.hpp"

namespace clzero_test {

class FaultLayer {
 public:
  /// The loaded layer. Throws if the process runs without it: the fault
  /// tests are meaningless on the bare implementation.
  static FaultLayer& get() {
    static FaultLayer layer;
    return layer;
  }

  void reset() { reset_(); }
  void arm(const char* call, long nth, cl_int code, int mode) { arm_(call, nth, code, mode); }
  void disarm() { disarm_(); }
  void pause(bool paused) { pause_(paused ? 1 : 0); }
  void shadow_maps(bool on) { shadow_(on ? 1 : 0); }
  /// Non-blocking maps and reads run after a failed event in their wait
  /// list and complete (CLZERO_FAULT_RUN_AFTER_FAILED, fault_control.h).
  void run_after_failed(bool on) { run_after_failed_(on ? 1 : 0); }
  /// CL_DEVICE_VENDOR_ID answered as `id` (0: the device's own).
  void vendor_id(unsigned id) { vendor_id_(id); }
  clzero_fault_counts counts() {
    clzero_fault_counts c{};
    counts_(&c);
    return c;
  }
  /// The intercepted calls since the last reset, in order.
  std::vector<std::string> calls() {
    std::vector<std::string> out;
    for (long i = 0; const char* c = call_(i); ++i) out.emplace_back(c);
    return out;
  }
  const char* fired() { return fired_(); }
  std::vector<std::string> violations() {
    std::vector<std::string> out;
    for (long i = 0; const char* v = violation_(i); ++i) out.emplace_back(v);
    return out;
  }

  /// The happens-before checker (CLZERO_FAULT_HAZARDS=1): its figures, its
  /// reports since the last hazard_clear(), and clearing them (a test that
  /// provokes hazards on purpose clears them, so the run's exit status
  /// speaks only of the others).
  clzero_hazard_counts hazard_counts() {
    clzero_hazard_counts c{};
    hazard_counts_(&c);
    return c;
  }
  std::vector<std::string> hazard_reports() {
    std::vector<std::string> out;
    for (long i = 0; const char* r = hazard_report_(i); ++i) out.emplace_back(r);
    return out;
  }
  void hazard_clear() { hazard_clear_(); }

  /// While alive, the test's own OpenCL calls are not counted or failed.
  class Paused {
   public:
    Paused() { FaultLayer::get().pause(true); }
    ~Paused() { FaultLayer::get().pause(false); }
    Paused(const Paused&) = delete;
    Paused& operator=(const Paused&) = delete;
  };

 private:
  FaultLayer() {
    Env::get();  // the loader loads layers at its first call
    const char* path = std::getenv("OPENCL_LAYERS");
    if (path == nullptr || *path == '\0')
      throw std::runtime_error("OPENCL_LAYERS is not set: run this test through ctest, which loads the fault layer");
    void* lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr)
      throw std::runtime_error(std::string("the ICD loader did not load the fault layer ") + path +
                               " (does it support OPENCL_LAYERS?)");
    resolve(lib, "clzero_fault_reset", reset_);
    resolve(lib, "clzero_fault_arm", arm_);
    resolve(lib, "clzero_fault_disarm", disarm_);
    resolve(lib, "clzero_fault_pause", pause_);
    resolve(lib, "clzero_fault_shadow_maps", shadow_);
    resolve(lib, "clzero_fault_run_after_failed", run_after_failed_);
    resolve(lib, "clzero_fault_vendor_id", vendor_id_);
    resolve(lib, "clzero_fault_get_counts", counts_);
    resolve(lib, "clzero_fault_call", call_);
    resolve(lib, "clzero_fault_fired", fired_);
    resolve(lib, "clzero_fault_violation", violation_);
    resolve(lib, "clzero_fault_hazard_counts", hazard_counts_);
    resolve(lib, "clzero_fault_hazard_report", hazard_report_);
    resolve(lib, "clzero_fault_hazard_clear", hazard_clear_);
  }

  template <class Fn>
  static void resolve(void* lib, const char* name, Fn& fn) {
    fn = reinterpret_cast<Fn>(dlsym(lib, name));
    if (fn == nullptr) throw std::runtime_error(std::string("the fault layer lacks ") + name);
  }

  void (*reset_)() = nullptr;
  void (*arm_)(const char*, long, int, int) = nullptr;
  void (*disarm_)() = nullptr;
  void (*pause_)(int) = nullptr;
  void (*shadow_)(int) = nullptr;
  void (*run_after_failed_)(int) = nullptr;
  void (*vendor_id_)(unsigned) = nullptr;
  void (*counts_)(clzero_fault_counts*) = nullptr;
  const char* (*call_)(long) = nullptr;
  const char* (*fired_)() = nullptr;
  const char* (*violation_)(long) = nullptr;
  void (*hazard_counts_)(clzero_hazard_counts*) = nullptr;
  const char* (*hazard_report_)(long) = nullptr;
  void (*hazard_clear_)() = nullptr;
};

}  // namespace clzero_test
