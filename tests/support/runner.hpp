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

namespace clzero_test {

/// Runs the tests the command line names; returns Catch2's exit status.
inline int run_tests(int argc, char* argv[]) {
  Catch::Session session;
  const int rc = session.applyCommandLine(argc, argv);
  if (rc != 0) return rc;
  auto& config = session.configData();
  config.warnings = static_cast<Catch::WarnAbout::What>(config.warnings | Catch::WarnAbout::NoAssertions);
  return session.run();
}

}  // namespace clzero_test
