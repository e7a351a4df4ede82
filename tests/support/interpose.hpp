// SPDX-License-Identifier: Apache-2.0
// For test executables that define an OpenCL (or libc) function themselves
// to change its cost: ELF interposition sends the calls the headers compile
// into the executable to that definition, which passes them on to the next
// definition, the loader's (or libc's).
#pragma once

#include <dlfcn.h>

#include <cstdlib>

namespace clzero_test {

/// The next definition of `name` after this executable's; aborts where
/// there is none (the loader and libc export every function interposed).
template <class Fn>
Fn next_definition(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == nullptr) std::abort();
  return reinterpret_cast<Fn>(f);
}

}  // namespace clzero_test
