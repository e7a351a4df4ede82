// SPDX-License-Identifier: Apache-2.0
// What both versions of the ported engine share: CLHPP, the error check in
// the plain style engines use, and the model, a detection-style head with one
// input and two outputs.
#pragma once

#if __has_include(<CL/opencl.hpp>)
#include <CL/opencl.hpp>
#else
#include <CL/cl2.hpp>
#endif

#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace porting {

constexpr std::size_t kRows = 256, kChannels = 16, kClasses = 10;

// One work-item per row: four box coordinates and kClasses sigmoid scores.
inline const char* kHeadSource = R"CLC(
__kernel void head(__global const float* x, __global float* boxes, __global float* scores,
                   uint channels, uint classes) {
  uint i = get_global_id(0);
  __global const float* row = x + i * channels;
  for (uint j = 0; j < 4; ++j) boxes[i * 4 + j] = row[j] * 0.5f + row[j + 4];
  for (uint k = 0; k < classes; ++k) scores[i * classes + k] = 1.0f / (1.0f + exp(-row[k % channels]));
}
)CLC";

inline void check_cl(cl_int res, const char* what) {
  if (res != CL_SUCCESS) {
    std::fprintf(stderr, "%s failed: %d\n", what, res);
    std::abort();
  }
}

}  // namespace porting
