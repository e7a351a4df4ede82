// SPDX-License-Identifier: Apache-2.0
// Catch2 2.13 and 3.x behind one include.
#pragma once

#if CLZERO_CATCH2_MAJOR == 3
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#else
#include <catch2/catch.hpp>
#endif
