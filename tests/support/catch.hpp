// SPDX-License-Identifier: Apache-2.0
// Catch2 2.13 and 3.x behind one include.
#pragma once

#if CLZERO_CATCH2_MAJOR == 3
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#else
#include <catch2/catch.hpp>
#endif

/// Says that a test case or section checks nothing on this device, and why.
/// The message is printed (the logs and the mutants' SKIP patterns read it)
/// and counts as the one assertion tests/main.cpp asks of every test case and
/// section, so that only a path that checks nothing in silence fails.
#define CLZERO_NOT_RUN(message) \
  do {                          \
    WARN(message);              \
    SUCCEED(message);           \
  } while (false)
