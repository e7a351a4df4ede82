// SPDX-License-Identifier: Apache-2.0
// A part number is a clzero::Part, never a plain integer that could be taken
// for a byte offset: bind(kernel, index, 1) must not compile.
#define CL_TARGET_OPENCL_VERSION 300
#include <clzero/clzero.hpp>

void bind_parts(clzero::TensorArena<>& arena, cl_kernel kernel) {
  auto dev = arena.device_access();
  dev.bind(kernel, 0, clzero::Part{1});
#if defined(CLZERO_COMPILE_FAIL)
  dev.bind(kernel, 0, 1);
#endif
}
