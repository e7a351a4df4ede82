// SPDX-License-Identifier: Apache-2.0
// What MNN's copyToHostTensor costs the host once the output's bytes are in
// host memory: a copy of an output that sits in DRAM (as a device's writes
// leave it) into the caller's tensor, then the caller's read of every
// element. A large memcpy may store past the cache (glibc does above its
// non-temporal threshold), so the read that follows comes from memory again;
// a copy in pieces below that threshold leaves the tensor in the cache.
// Each round flushes the source, then times each way in a shuffled order.
//   c++ -O2 -std=c++17 tools/device/copy_then_read.cpp -o copy_then_read && ./copy_then_read
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

void flush(const void* data, size_t bytes) {
#if defined(__x86_64__)
  const char* p = static_cast<const char*>(data);
  for (size_t i = 0; i < bytes; i += 64) _mm_clflush(p + i);
  _mm_mfence();
#else
  (void)data;
  (void)bytes;
#endif
}

void copy_in_pieces(void* dst, const void* src, size_t bytes, size_t piece) {
  for (size_t done = 0; done < bytes; done += piece) {
    std::memcpy(static_cast<char*>(dst) + done, static_cast<const char*>(src) + done, std::min(piece, bytes - done));
  }
}

// The caller's read after the copy: every element, as integers so that it
// vectorizes (as examples/engines/mnn/readback_bench.cpp reads).
uint64_t read_all(const uint32_t* data, size_t count) {
  uint64_t sum = 0;
  for (size_t i = 0; i < count; ++i) sum += data[i];
  return sum;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
  const size_t sizes[] = {256u << 10, 4u << 20, 16u << 20, 64u << 20};
  // Ways: 0 one memcpy, 1 pieces of 64 KiB, 2 pieces of 16 KiB, 3 no copy
  // (the caller reads the output where it is, as through a mapping).
  const char* names[] = {"memcpy", "pieces of 64 KiB", "pieces of 16 KiB", "no copy: read in place"};
  constexpr int kWays = 4;
  std::mt19937 shuffle(7);
  std::printf("%-10s %-24s %12s %12s %12s\n", "bytes", "way", "copy us", "read us", "sum us");
  for (size_t bytes : sizes) {
    const size_t count = bytes / sizeof(float);
    std::vector<uint32_t> src(count), dst(count);
    std::vector<double> copy_us[kWays], read_us[kWays];
    bool all_fresh = true;
    for (int round = 0; round < rounds; ++round) {
      int order[kWays] = {0, 1, 2, 3};
      std::shuffle(order, order + kWays, shuffle);
      for (int way : order) {
        const uint32_t first = static_cast<uint32_t>(round * kWays + way) * 7919u;
        for (size_t i = 0; i < count; ++i) src[i] = first + static_cast<uint32_t>(i);
        flush(src.data(), bytes);
        const auto t0 = Clock::now();
        if (way == 0) std::memcpy(dst.data(), src.data(), bytes);
        if (way == 1) copy_in_pieces(dst.data(), src.data(), bytes, 64u << 10);
        if (way == 2) copy_in_pieces(dst.data(), src.data(), bytes, 16u << 10);
        const auto t1 = Clock::now();
        const uint64_t sum = read_all(way == 3 ? src.data() : dst.data(), count);
        const auto t2 = Clock::now();
        // Untimed: the sum of first + i over every element, modulo 2^32 per
        // element as stored (the sum itself is 64-bit).
        uint64_t expected = 0;
        for (size_t i = 0; i < count; ++i) expected += static_cast<uint32_t>(first + static_cast<uint32_t>(i));
        all_fresh &= sum == expected;
        copy_us[way].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        read_us[way].push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
      }
    }
    if (!all_fresh) {
      std::fprintf(stderr, "copy_then_read: a read found a wrong element at %zu bytes\n", bytes);
      return 1;
    }
    for (int way = 0; way < kWays; ++way) {
      const double c = median(copy_us[way]), r = median(read_us[way]);
      std::printf("%-10zu %-24s %12.1f %12.1f %12.1f\n", bytes, names[way], c, r, c + r);
    }
  }
  std::printf("medians of %d rounds; the source flushed from the caches before each way\n", rounds);
  return 0;
}
