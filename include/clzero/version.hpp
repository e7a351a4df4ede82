// SPDX-License-Identifier: Apache-2.0
#pragma once

/// clzero's major version: changes when the API breaks.
#define CLZERO_VERSION_MAJOR 0
/// clzero's minor version: changes when the API grows.
#define CLZERO_VERSION_MINOR 1
/// clzero's patch version: fixes only.
#define CLZERO_VERSION_PATCH 0
/// The version as "major.minor.patch".
#define CLZERO_VERSION_STRING "0.1.0"
