// SPDX-License-Identifier: Apache-2.0
// The test runner's main, for Catch2 2.13 and 3 (support/runner.hpp: a test
// case or section that makes no assertion fails).
#include "support/runner.hpp"

int main(int argc, char* argv[]) { return clzero_test::run_tests(argc, argv); }
