// SPDX-License-Identifier: Apache-2.0
// The Catch2 session every test runner of the suite runs (tests/main.cpp,
// tests/oclgrind/main.cpp), for Catch2 2.13 and 3. Included by a runner's
// main only: with Catch2 2 it makes that file the one that holds Catch2's
// implementation.
//
// A test case or section that makes no assertion fails, as with Catch2's
// `-w NoAssertions`, always on: a check that a device without some feature
// turns into nothing must say so (CLZERO_NOT_RUN, support/catch.hpp) instead
// of passing in silence.
#pragma once

#if CLZERO_CATCH2_MAJOR == 3
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include <cstdio>
#include <string>

#include "catch.hpp"  // support/catch.hpp, beside this file

namespace clzero_test {

/// Runs the tests the command line names; returns Catch2's exit status.
inline int run_tests(int argc, char* argv[]) {
  Catch::Session session;
  const int rc = session.applyCommandLine(argc, argv);
  if (rc != 0) return rc;
  auto& config = session.configData();
  config.warnings = static_cast<Catch::WarnAbout::What>(config.warnings | Catch::WarnAbout::NoAssertions);
  const int failed = session.run();
  // CTest's skip patterns read these lines (tests/wait_method): printed only
  // when nothing failed, since a skip pattern wins over a failing status.
  if (failed == 0)
    for (const std::string& why : not_run_said()) std::printf("clzero-test: no check failed, %s\n", why.c_str());
  return failed;
}

}  // namespace clzero_test
