// SPDX-License-Identifier: Apache-2.0
// Controls of the test runner (tests/main.cpp), hidden from ordinary runs and
// run by name from CTest (tests/CMakeLists.txt): a test case or a section
// that makes no assertion must fail the run, so that a check a device's
// missing feature turned into nothing cannot pass in silence.
#include "support/catch.hpp"

TEST_CASE("control: a test case that makes no assertion", "[.][runner_control_case]") {}

TEST_CASE("control: a section that makes no assertion", "[.][runner_control_section]") {
  SECTION("checks something") { CHECK(1 + 1 == 2); }
  SECTION("checks nothing") {}
}

TEST_CASE("control: a path that says why it checks nothing", "[.][runner_control_not_run]") {
  CLZERO_NOT_RUN("not run: this control checks nothing on purpose");
}
