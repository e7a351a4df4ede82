// SPDX-License-Identifier: Apache-2.0
// How long the host's read of every element takes when the memory was read
// just before, in a process that does nothing else: the counterpart, outside
// MNN, of readback_bench's own_read_us (examples/engines/mnn), with the same
// loop (uint32 elements summed into 64 bits) built the same way (-O3).
//
//   g++ -std=c++17 -O3 tools/device/hot_read.cpp -o hot_read && ./hot_read [rounds]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

__attribute__((noinline)) std::uint64_t read_all(const void* data, std::size_t bytes) {
  auto words = static_cast<const std::uint32_t*>(data);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < bytes / 4; ++i) sum += words[i];
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 300;
  std::uint64_t sink = 0;
  std::printf("bytes      read again, median us   p10 us   p90 us\n");
  for (std::size_t bytes : {std::size_t{4096}, std::size_t{262144}, std::size_t{4194304}}) {
    std::vector<std::uint32_t> own(bytes / 4);
    for (std::size_t i = 0; i < own.size(); ++i) own[i] = static_cast<std::uint32_t>(i * 2654435761u);
    std::vector<double> t;
    for (int r = 0; r < rounds; ++r) {
      sink += read_all(own.data(), bytes);
      const auto a = std::chrono::steady_clock::now();
      sink += read_all(own.data(), bytes);
      const auto b = std::chrono::steady_clock::now();
      t.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    }
    std::sort(t.begin(), t.end());
    std::printf("%-10zu %24.1f %8.1f %8.1f\n", bytes, t[t.size() / 2], t[t.size() / 10], t[t.size() * 9 / 10]);
  }
  std::printf("medians of %d rounds (sum %llu)\n", rounds, static_cast<unsigned long long>(sink));
  return 0;
}
