// SPDX-License-Identifier: Apache-2.0
// What one std::chrono::steady_clock read costs on this machine: a polled
// host wait (clzero::detail::await) reads the clock between its looks at
// the events' status, and each read delays seeing the completion.
//   c++ -O2 -std=c++17 tools/device/clock_cost.cpp -o clock_cost && ./clock_cost
#include <chrono>
#include <cstdio>

int main() {
  using Clock = std::chrono::steady_clock;
  constexpr int kReads = 2000000;
  long long sink = 0;
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = Clock::now();
    for (int i = 0; i < kReads; ++i) sink += Clock::now().time_since_epoch().count() & 1;
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / kReads;
    if (ns < best) best = ns;
  }
  std::printf("steady_clock::now(): %.1f ns per read (best of 5 x %d; %lld)\n", best, kReads, sink % 2);
  return 0;
}
