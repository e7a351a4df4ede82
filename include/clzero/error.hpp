// SPDX-License-Identifier: Apache-2.0
// clzero::Error: one error type for everything clzero reports, and the hooks
// that receive failures where throwing is not an option (destructors, builds
// without exceptions).
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

#include "clzero/detail/hot_path.hpp"

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define CLZERO_DETAIL_HAS_EXCEPTIONS 1
#else
#define CLZERO_DETAIL_HAS_EXCEPTIONS 0
#endif

#if !CLZERO_DETAIL_HAS_EXCEPTIONS && !defined(CLZERO_NO_EXCEPTIONS)
/// Defined where exceptions are off (-fno-exceptions), or by the user: every error then goes
/// to set_error_handler()'s handler, then std::abort().
#define CLZERO_NO_EXCEPTIONS 1
#endif

namespace clzero {

/// What kind of failure an Error reports.
enum class ErrorKind {
  opencl,            ///< an OpenCL call returned an error code
  invalid_argument,  ///< bad input to a clzero call (shape, handles, options)
  misuse,            ///< a call out of order: e.g. device access while a HostView lives
  unsupported,       ///< the device lacks what the chosen policy needs
  unusable,          ///< the tensor was left unusable by an earlier failure
};

/// The symbolic name of an OpenCL error code ("CL_MAP_FAILURE" for -12), or
/// "CL_UNKNOWN_ERROR" for a code no specification or common extension defines.
inline const char* error_name(cl_int code) noexcept {
  switch (code) {
    // clang-format off
    case 0: return "CL_SUCCESS";
    case -1: return "CL_DEVICE_NOT_FOUND";
    case -2: return "CL_DEVICE_NOT_AVAILABLE";
    case -3: return "CL_COMPILER_NOT_AVAILABLE";
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -7: return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case -8: return "CL_MEM_COPY_OVERLAP";
    case -9: return "CL_IMAGE_FORMAT_MISMATCH";
    case -10: return "CL_IMAGE_FORMAT_NOT_SUPPORTED";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -12: return "CL_MAP_FAILURE";
    case -13: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case -14: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case -15: return "CL_COMPILE_PROGRAM_FAILURE";
    case -16: return "CL_LINKER_NOT_AVAILABLE";
    case -17: return "CL_LINK_PROGRAM_FAILURE";
    case -18: return "CL_DEVICE_PARTITION_FAILED";
    case -19: return "CL_KERNEL_ARG_INFO_NOT_AVAILABLE";
    case -30: return "CL_INVALID_VALUE";
    case -31: return "CL_INVALID_DEVICE_TYPE";
    case -32: return "CL_INVALID_PLATFORM";
    case -33: return "CL_INVALID_DEVICE";
    case -34: return "CL_INVALID_CONTEXT";
    case -35: return "CL_INVALID_QUEUE_PROPERTIES";
    case -36: return "CL_INVALID_COMMAND_QUEUE";
    case -37: return "CL_INVALID_HOST_PTR";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -39: return "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR";
    case -40: return "CL_INVALID_IMAGE_SIZE";
    case -41: return "CL_INVALID_SAMPLER";
    case -42: return "CL_INVALID_BINARY";
    case -43: return "CL_INVALID_BUILD_OPTIONS";
    case -44: return "CL_INVALID_PROGRAM";
    case -45: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -47: return "CL_INVALID_KERNEL_DEFINITION";
    case -48: return "CL_INVALID_KERNEL";
    case -49: return "CL_INVALID_ARG_INDEX";
    case -50: return "CL_INVALID_ARG_VALUE";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -53: return "CL_INVALID_WORK_DIMENSION";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -55: return "CL_INVALID_WORK_ITEM_SIZE";
    case -56: return "CL_INVALID_GLOBAL_OFFSET";
    case -57: return "CL_INVALID_EVENT_WAIT_LIST";
    case -58: return "CL_INVALID_EVENT";
    case -59: return "CL_INVALID_OPERATION";
    case -60: return "CL_INVALID_GL_OBJECT";
    case -61: return "CL_INVALID_BUFFER_SIZE";
    case -62: return "CL_INVALID_MIP_LEVEL";
    case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -64: return "CL_INVALID_PROPERTY";
    case -65: return "CL_INVALID_IMAGE_DESCRIPTOR";
    case -66: return "CL_INVALID_COMPILER_OPTIONS";
    case -67: return "CL_INVALID_LINKER_OPTIONS";
    case -68: return "CL_INVALID_DEVICE_PARTITION_COUNT";
    case -69: return "CL_INVALID_PIPE_SIZE";
    case -70: return "CL_INVALID_DEVICE_QUEUE";
    case -71: return "CL_INVALID_SPEC_ID";
    case -72: return "CL_MAX_SIZE_RESTRICTION_EXCEEDED";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    case -1057: return "CL_DEVICE_PARTITION_FAILED_EXT";
    case -1058: return "CL_INVALID_PARTITION_COUNT_EXT";
    case -1059: return "CL_INVALID_PARTITION_NAME_EXT";
    case -1108: return "CL_COMMAND_TERMINATED_ITSELF_WITH_FAILURE_ARM";
    case -1121: return "CL_CONTEXT_TERMINATED_KHR";
    case -1138: return "CL_INVALID_COMMAND_BUFFER_KHR";
    case -1139: return "CL_INVALID_SYNC_POINT_WAIT_LIST_KHR";
    case -1140: return "CL_INCOMPATIBLE_COMMAND_QUEUE_KHR";
    case -1141: return "CL_INVALID_MUTABLE_COMMAND_KHR";
    case -1142: return "CL_INVALID_SEMAPHORE_KHR";
    default: return "CL_UNKNOWN_ERROR";
      // clang-format on
  }
}

/// The one exception type of clzero. Its message names what clzero was doing,
/// the OpenCL call that failed (if any) with the error's name and code, and,
/// for misuse, how to fix the calling code.
class Error : public std::runtime_error {
 public:
  /// A failed OpenCL call: `api` is the call's name ("clEnqueueMapBuffer").
  Error(std::string doing, const char* api, cl_int code)
      : std::runtime_error(compose(doing, api, code, {})),
        kind_(ErrorKind::opencl),
        api_(api),
        code_(code),
        doing_(std::move(doing)) {}

  /// A failure that is not an OpenCL error code: misuse, bad input, missing
  /// device support. `detail` says what went wrong and how to fix it.
  Error(ErrorKind kind, std::string doing, const std::string& detail)
      : std::runtime_error(compose(doing, nullptr, CL_SUCCESS, detail)), kind_(kind), doing_(std::move(doing)) {}

  /// What kind of failure this is; ErrorKind::opencl when api() names a call.
  ErrorKind kind() const noexcept { return kind_; }
  /// The OpenCL call that failed, or "" when the error is not an OpenCL error.
  const char* api() const noexcept { return api_; }
  /// The OpenCL error code, or CL_SUCCESS when the error is not an OpenCL error.
  cl_int code() const noexcept { return code_; }
  /// The code's symbolic name ("CL_MAP_FAILURE").
  const char* code_name() const noexcept { return error_name(code_); }
  /// What clzero was doing, e.g. "Persistent: mapping the tensor for the host".
  const std::string& doing() const noexcept { return doing_; }

 private:
  static std::string compose(const std::string& doing, const char* api, cl_int code, const std::string& detail) {
    std::string m = "clzero: " + doing;
    if (api != nullptr) {
      m += ": ";
      m += api;
      m += " failed with ";
      m += error_name(code);
      m += " (" + std::to_string(code) + ")";
    }
    if (!detail.empty()) m += ": " + detail;
    return m;
  }

  ErrorKind kind_;
  const char* api_ = "";
  cl_int code_ = CL_SUCCESS;
  std::string doing_;
};

/// Receives errors that cannot be thrown: failures while a destructor unmaps,
/// waits or releases. It must not throw. The default prints to stderr.
using ErrorHandler = void (*)(const Error&) noexcept;

namespace detail {
inline void print_error(const Error& e) noexcept { std::fprintf(stderr, "%s\n", e.what()); }
inline std::atomic<ErrorHandler>& cleanup_handler() noexcept {
  static std::atomic<ErrorHandler> handler{&print_error};
  return handler;
}
inline std::atomic<ErrorHandler>& raise_handler() noexcept {
  static std::atomic<ErrorHandler> handler{nullptr};
  return handler;
}
}  // namespace detail

/// Replaces the handler for failures during cleanup (destructors never throw:
/// they do their best and report here). Returns the previous handler. A null
/// handler restores the default, which prints to stderr.
inline ErrorHandler set_cleanup_error_handler(ErrorHandler handler) noexcept {
  return detail::cleanup_handler().exchange(handler != nullptr ? handler : &detail::print_error);
}

/// Builds with CLZERO_NO_EXCEPTIONS (defined for you under -fno-exceptions, or
/// by you in a build with exceptions): every error goes to this handler
/// instead of being thrown; if the handler returns, clzero prints the error and
/// calls std::abort(), because the operation that failed cannot return a
/// usable result. Without CLZERO_NO_EXCEPTIONS errors are thrown and this
/// handler is never called.
inline ErrorHandler set_error_handler(ErrorHandler handler) noexcept {
  return detail::raise_handler().exchange(handler);
}

namespace detail {

/// Reports a failure that happened where nothing may throw.
inline void report_cleanup(const Error& e) noexcept {
  ErrorHandler h = cleanup_handler().load();
  if (h != nullptr) h(e);
}

/// The one place clzero raises an error.
[[noreturn]] inline void raise(const Error& e) {
#if defined(CLZERO_NO_EXCEPTIONS)
  ErrorHandler h = raise_handler().load();
  if (h != nullptr) h(e);
  print_error(e);
  std::abort();
#else
  throw e;
#endif
}

/// Raises an Error for a failed OpenCL call; does nothing on CL_SUCCESS.
inline void check(cl_int code, const char* api, const char* doing) {
  if (code != CL_SUCCESS) raise(Error(doing, api, code));
}

/// The same, with `doing` composed as "<who>: <step>" only when the call failed.
inline void check(cl_int code, const char* api, const char* who, const char* step) {
  if (code != CL_SUCCESS) raise(Error(std::string(who) + ": " + step, api, code));
}

/// Runs `f` where nothing may throw (destructors, view ends): a failure goes
/// to the cleanup handler and the result says whether `f` completed.
template <class F>
bool call_noexcept(F&& f, const char* doing) noexcept {
#if CLZERO_DETAIL_HAS_EXCEPTIONS
  try {
    f();
    return true;
  } catch (const Error& e) {
    report_cleanup(e);
  } catch (const std::exception& e) {
    report_cleanup(Error(ErrorKind::opencl, doing, e.what()));
  } catch (...) {
    report_cleanup(Error(ErrorKind::opencl, doing, "unknown exception"));
  }
  return false;
#else
  (void)doing;
  f();
  return true;
#endif
}

[[noreturn]] inline void raise_misuse(const char* doing, const std::string& detail) {
  raise(Error(ErrorKind::misuse, doing, detail));
}

[[noreturn]] inline void raise_invalid(const char* doing, const std::string& detail) {
  raise(Error(ErrorKind::invalid_argument, doing, detail));
}

}  // namespace detail
}  // namespace clzero
