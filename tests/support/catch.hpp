// SPDX-License-Identifier: Apache-2.0
// Catch2 2.13 and 3.x behind one include.
#pragma once

#if CLZERO_CATCH2_MAJOR == 3
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#else
#include <catch2/catch.hpp>
#endif

#include <sstream>
#include <string>
#include <vector>

namespace clzero_test {

/// What CLZERO_NOT_RUN said in this process, in order. The runner
/// (support/runner.hpp) repeats it after the run only when no check failed:
/// the line CTest's SKIP_REGULAR_EXPRESSIONs read, so that a failed check
/// in the same process is never reported as "not run".
inline std::vector<std::string>& not_run_said() {
  static std::vector<std::string> said;
  return said;
}
inline void said_not_run(const std::string& why) { not_run_said().push_back(why); }

}  // namespace clzero_test

/// Says that a test case or section checks nothing on this device, and why.
/// The message is printed (the logs and the mutants' SKIP patterns read it)
/// and counts as the one assertion tests/main.cpp asks of every test case and
/// section, so that only a path that checks nothing in silence fails.
#define CLZERO_NOT_RUN(message)                         \
  do {                                                  \
    WARN(message);                                      \
    SUCCEED(message);                                   \
    std::ostringstream clzero_not_run_;                 \
    clzero_not_run_ << message;                         \
    ::clzero_test::said_not_run(clzero_not_run_.str()); \
  } while (false)

/// Ends the test case or section with CLZERO_NOT_RUN unless the device
/// offers `what` (`offered` true): "not run: the device offers no <what>",
/// the words the mutants' SKIP patterns (tests/mutants/CMakeLists.txt) read.
#define CLZERO_NEEDS(offered, what)                          \
  do {                                                       \
    if (!(offered)) {                                        \
      CLZERO_NOT_RUN("not run: the device offers no " what); \
      return;                                                \
    }                                                        \
  } while (false)

/// What a test case whose whole body needs OpenCL 2.0 says in a build below it.
#define CLZERO_NOT_RUN_BELOW_CL20() \
  CLZERO_NOT_RUN("not run: built without OpenCL 2.0 (CL_TARGET_OPENCL_VERSION below 200)")
