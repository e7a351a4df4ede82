// SPDX-License-Identifier: Apache-2.0
// Deliberate errors, one per sanitizer, run after each sanitized build's
// real tests (hidden from ordinary runs by the [.] tag): the build passes only
// if its sanitizer reports the error, which shows that a clean run of the
// real tests means something.
#include <climits>
#include <thread>

#include "support/catch.hpp"

TEST_CASE("control: a heap buffer overflow", "[.control_address]") {
  SUCCEED("reached: the overflow below must be reported");  // the run passes unless the sanitizer stops it
  volatile int* p = new int[4];
  p[4] = 1;  // one past the end
  delete[] p;
}

TEST_CASE("control: a leak", "[.control_leak]") {
  SUCCEED("reached: the leak below must be reported");  // the run passes unless the sanitizer stops it
  static volatile int* leaked = nullptr;
  leaked = new int[64];
  leaked = nullptr;  // the only pointer is gone: LeakSanitizer reports it at exit
}

TEST_CASE("control: a signed integer overflow", "[.control_undefined]") {
  SUCCEED("reached: the overflow below must be reported");  // the run passes unless the sanitizer stops it
  volatile int big = INT_MAX;
  volatile int sum = big + 1;
  (void)sum;
}

// Two threads write one variable without synchronisation. (Sharing one
// tensor between two threads would be the natural control, but every view
// flushes the queue, and PoCL's lock on it orders the two threads for
// ThreadSanitizer, which then cannot see the race.)
TEST_CASE("control: two threads write one variable without synchronisation", "[.control_thread]") {
  int shared = 0;
  auto writer = [&shared] {
    for (int i = 0; i < 100000; ++i) shared = shared + 1;
  };
  std::thread a(writer), b(writer);
  a.join();
  b.join();
  CHECK(shared > 0);
}
