// SPDX-License-Identifier: Apache-2.0
#pragma once

#define CLZERO_VERSION_MAJOR 0
#define CLZERO_VERSION_MINOR 1
#define CLZERO_VERSION_PATCH 0
#define CLZERO_VERSION_STRING "0.1.0"
