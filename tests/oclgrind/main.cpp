// SPDX-License-Identifier: Apache-2.0
// The test runner for Oclgrind. It ends the process without running static
// destructors: Oclgrind 21.10's runtime frees its per-thread API call stack
// at exit before the tests' shared OpenCL objects are released by a static
// destructor, and its clReleaseProgram then writes to freed memory (seen
// with valgrind); the process would abort after every test had passed.
#include <cstdio>
#include <cstdlib>

#if CLZERO_CATCH2_MAJOR == 3
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

int main(int argc, char** argv) {
  // As tests/main.cpp: a test case or section that makes no assertion fails.
  Catch::Session session;
  int result = session.applyCommandLine(argc, argv);
  if (result == 0) {
    auto& config = session.configData();
    config.warnings = static_cast<Catch::WarnAbout::What>(config.warnings | Catch::WarnAbout::NoAssertions);
    result = session.run();
  }
  std::fflush(nullptr);
  std::_Exit(result);
}
