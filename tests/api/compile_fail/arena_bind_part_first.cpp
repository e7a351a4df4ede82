// SPDX-License-Identifier: Apache-2.0
// ArenaAccess::bind takes the kernel first, like DeviceAccess::bind: the old
// order bind(part, kernel, index) must not compile. Built once as is (it
// must compile) and once with CLZERO_COMPILE_FAIL (it must not, with the
// static_assert's message).
#define CL_TARGET_OPENCL_VERSION 300
#include <clzero/clzero.hpp>

void bind_parts(clzero::TensorArena<>& arena, cl_kernel kernel) {
  auto dev = arena.device_access();
  dev.bind(kernel, 0, clzero::Part{1});
#if defined(CLZERO_COMPILE_FAIL)
  dev.bind(1, kernel, 0);
#endif
}
