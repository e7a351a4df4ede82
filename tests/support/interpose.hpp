// SPDX-License-Identifier: Apache-2.0
// For test executables that define an OpenCL (or libc) function themselves
// to change its cost: ELF interposition sends the calls the headers compile
// into the executable to that definition, which passes them on to the next
// definition, the loader's (or libc's).
#pragma once

#include <dlfcn.h>
#include <time.h>

#include <chrono>
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

/// The next definition of the function `name`, which this executable
/// defines itself, as a pointer of the type its declaration gives.
#define CLZERO_TEST_NEXT(name) ::clzero_test::next_definition<decltype(&name)>(#name)

/// Sleeps `d` with clock_nanosleep, which an executable that defines
/// nanosleep itself (to count the sleeps of the code under test) does not
/// see. A simulated cost slept rather than spun leaves the cores to the
/// device's threads, as a CPU device needs.
inline void sleep_unseen(std::chrono::nanoseconds d) {
  struct timespec t {};
  clock_gettime(CLOCK_MONOTONIC, &t);
  const long long end_ns = static_cast<long long>(t.tv_nsec) + d.count();
  t.tv_sec += static_cast<time_t>(end_ns / 1000000000LL);
  t.tv_nsec = static_cast<long>(end_ns % 1000000000LL);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr) != 0) {
  }
}

/// Spins `d` on the steady clock, keeping this thread on its core: for a
/// simulated cost paid where the device has nothing left to run. A host
/// thread that sleeps changes what the device's next wait costs (see
/// tests/wait_method/test_wait_burst.cpp).
inline void spin_for(std::chrono::nanoseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

}  // namespace clzero_test
