// SPDX-License-Identifier: Apache-2.0
// What the translation units of the mixed-version programs share: plain
// OpenCL handles only, so that this header means the same in every
// configuration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

typedef struct _cl_context* cl_context;
typedef struct _cl_command_queue* cl_command_queue;
typedef struct _cl_kernel* cl_kernel;

struct Rig {
  cl_context context;
  cl_command_queue queue;
  cl_kernel fill;  // fill_u32(out, n, iter): out[i] = value(i, iter)
};

constexpr std::size_t kElements = 1000;
constexpr std::uint32_t kIterations = 20;

inline std::uint32_t expected(std::uint32_t i, std::uint32_t iter) {
  return (i * 2654435761u) ^ (iter * 40503u + 0x9E3779B9u);
}

/// Makes Auto tensors in a translation unit built with CL_TARGET_OPENCL_VERSION
/// 120 (or 300) and runs kIterations inferences on each; returns the stale
/// elements seen and names the policy Auto chose.
std::size_t auto_inferences_cl120(const Rig& rig, std::string& chose);
std::size_t auto_inferences_cl300(const Rig& rig, std::string& chose);
