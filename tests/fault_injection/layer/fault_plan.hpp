// SPDX-License-Identifier: Apache-2.0
// FaultPlan: which intercepted call fails, with which code and how, and the
// log of intercepted calls that lets a test fail each of them in turn.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include <clzero/error.hpp>

#include "fault_control.h"

namespace clzero_fault {

class FaultPlan {
 public:
  static constexpr std::size_t kLogLimit = 65536;

  struct Decision {
    bool fail = false;
    cl_int code = CL_SUCCESS;
    int mode = CLZERO_FAULT_IMMEDIATE;
  };

  void arm(const char* call, long nth, cl_int code, int mode) {
    call_ = call != nullptr ? call : "*";
    nth_ = nth;
    code_ = code;
    mode_ = mode;
    seen_ = 0;
    fired_ = nullptr;
    and_later_ = false;
  }
  void disarm() { call_.clear(); }

  void reset() {
    disarm();
    fired_ = nullptr;
    log_.clear();
    calls_ = 0;
    faults_ = 0;
  }

  /// Counts one intercepted call and says whether it must fail. Paused
  /// calls (the test's own) are neither counted nor failed.
  Decision hit(const char* api) {
    if (paused_) return {};
    ++calls_;
    if (log_.size() < kLogLimit) log_.push_back(api);
    if (call_.empty() || (fired_ != nullptr && !and_later_)) return {};
    if (call_ != "*" && call_ != api) return {};
    ++seen_;
    if (and_later_ ? seen_ < nth_ : seen_ != nth_) return {};
    fired_ = api;
    ++faults_;
    return {true, code_, mode_};
  }

  void pause(bool paused) { paused_ = paused; }
  long calls() const { return calls_; }
  long faults() const { return faults_; }
  const char* fired() const { return fired_; }
  const char* logged(long i) const {
    return i >= 0 && static_cast<std::size_t>(i) < log_.size() ? log_[static_cast<std::size_t>(i)] : nullptr;
  }

  /// "clEnqueueMapBuffer:3:CL_MAP_FAILURE[:async]", as CLZERO_FAULT holds it;
  /// "3+" fails the third such call and every later one.
  bool parse(const std::string& spec) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t colon; (colon = spec.find(':', start)) != std::string::npos; start = colon + 1)
      parts.push_back(spec.substr(start, colon - start));
    parts.push_back(spec.substr(start));
    if (parts.size() < 3 || parts.size() > 4) return false;
    char* end = nullptr;
    const long nth = std::strtol(parts[1].c_str(), &end, 10);
    const bool and_later = end != nullptr && *end == '+';
    if (end == parts[1].c_str() || (*end != '\0' && !(and_later && end[1] == '\0'))) return false;
    cl_int code = CL_SUCCESS;
    if (!parse_code(parts[2], code) || nth < 1) return false;
    const int mode = parts.size() == 4 && parts[3] == "async" ? CLZERO_FAULT_ASYNC : CLZERO_FAULT_IMMEDIATE;
    arm(parts[0].c_str(), nth, code, mode);
    and_later_ = and_later;
    return true;
  }

 private:
  static bool parse_code(const std::string& text, cl_int& code) {
    char* end = nullptr;
    const long n = std::strtol(text.c_str(), &end, 10);
    if (end != text.c_str() && *end == '\0') {
      code = static_cast<cl_int>(n);
      return true;
    }
    for (cl_int c = -1; c >= -1200; --c) {
      if (text == clzero::error_name(c)) {
        code = c;
        return true;
      }
    }
    return false;
  }

  std::string call_;
  long nth_ = 0;
  cl_int code_ = CL_SUCCESS;
  int mode_ = CLZERO_FAULT_IMMEDIATE;
  long seen_ = 0;
  const char* fired_ = nullptr;
  std::vector<const char*> log_;
  long calls_ = 0;
  long faults_ = 0;
  bool paused_ = false;
  bool and_later_ = false;  // every matching call from the nth on fails
};

}  // namespace clzero_fault
