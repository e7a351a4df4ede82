// SPDX-License-Identifier: Apache-2.0
#define CL_TARGET_OPENCL_VERSION 120
#include "cross_return.inc"
