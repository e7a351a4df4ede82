// SPDX-License-Identifier: Apache-2.0
// The test runner's main (Catch2 2 only; Catch2 3 brings its own).
#if CLZERO_CATCH2_MAJOR == 2
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif
