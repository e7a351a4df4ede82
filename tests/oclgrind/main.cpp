// SPDX-License-Identifier: Apache-2.0
// The test runner for Oclgrind. It ends the process without running static
// destructors: Oclgrind 21.10's runtime frees its per-thread API call stack
// at exit before the tests' shared OpenCL objects are released by a static
// destructor, and its clReleaseProgram then writes to freed memory (seen
// with valgrind); the process would abort after every test had passed.
#include <cstdio>
#include <cstdlib>

#include "../support/runner.hpp"

int main(int argc, char** argv) {
  const int result = clzero_test::run_tests(argc, argv);
  std::fflush(nullptr);
  std::_Exit(result);
}
