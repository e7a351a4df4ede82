// SPDX-License-Identifier: Apache-2.0
// The CLHPP interop binds arena parts, never the whole arena by mistake:
// interop::bind(arena_access.access(), kernel, i) (which once bound the
// whole allocation) and interop::bind(arena_access, kernel, i) without a
// Part must not compile.
#define CL_TARGET_OPENCL_VERSION 300
#define CL_HPP_TARGET_OPENCL_VERSION 300
#define CL_HPP_MINIMUM_OPENCL_VERSION 300
#include <clzero/interop/clhpp.hpp>

void bind_parts(clzero::TensorArena<>& arena, const cl::Kernel& kernel) {
  auto dev = arena.device_access();
  clzero::interop::bind(dev, kernel, 0, clzero::Part{0});
#if defined(CLZERO_COMPILE_FAIL) && CLZERO_COMPILE_FAIL == 1
  clzero::interop::bind(dev.access(), kernel, 0);
#elif defined(CLZERO_COMPILE_FAIL) && CLZERO_COMPILE_FAIL == 2
  clzero::interop::bind(dev, kernel, 0);
#endif
}
