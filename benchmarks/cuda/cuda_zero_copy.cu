// SPDX-License-Identifier: Apache-2.0
// The CUDA side of the comparison: the same inference as clzero_bench (a
// kernel writes N bytes, element i of inference `iter` being iter + i; the
// output becomes visible on the host; the host sums every element and the sum
// is checked), the same sizes, the median per inference.
//
//   cuda.zero_copy        cudaHostAlloc(cudaHostAllocMapped): the kernel writes
//                         pinned host memory, the host reads after a stream sync.
//   cuda.memcpy_pinned    device buffer, cudaMemcpyAsync into cudaHostAlloc memory.
//   cuda.memcpy_pageable  the same into a std::vector.
//   floor.kernel_sync     the kernel into device memory, then a stream sync.
//   floor.host_read       the host's read of resident, ordinary memory.
//
// Builds with nvcc alone (no CMake, no Google Benchmark):
//   nvcc -O2 -std=c++17 -o cuda_zero_copy benchmarks/cuda/cuda_zero_copy.cu
//   cuda_zero_copy [--json FILE] [--repetitions 5] [--min-time 0.1] [--filter SUBSTRING]
// The JSON has Google Benchmark's shape (context, benchmarks with name,
// run_type, repetition_index, real_time and counters such as median_us), so
// tools/bench_report.py reads it like clzero_bench's.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

__global__ void produce(std::uint32_t* out, std::uint32_t n, std::uint32_t iter) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = iter + i;
}

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(rc));
}

// The host's read; never inlined, so that it cannot be hoisted or dropped.
__attribute__((noinline)) std::uint64_t host_sum(const std::uint32_t* data, std::size_t n) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += data[i];
  return sum;
}

std::uint64_t fresh_sum(std::size_t n, std::uint32_t iter) {
  const std::uint64_t m = n;
  return m * iter + m * (m - 1) / 2;
}

class Inference {
 public:
  virtual ~Inference() = default;
  virtual std::uint64_t run(std::uint32_t iter) = 0;
  virtual bool checks_output() const { return true; }
};

class Launcher {
 public:
  explicit Launcher(std::size_t n) : n_(static_cast<std::uint32_t>(n)) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
  ~Launcher() { cudaStreamDestroy(stream_); }
  void launch(std::uint32_t* out, std::uint32_t iter) {
    const unsigned block = 256;
    produce<<<(n_ + block - 1) / block, block, 0, stream_>>>(out, n_, iter);
    check(cudaGetLastError(), "kernel launch");
  }
  void sync() { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }
  cudaStream_t stream() const { return stream_; }
  std::uint32_t n() const { return n_; }

 private:
  std::uint32_t n_;
  cudaStream_t stream_ = nullptr;
};

class ZeroCopy final : public Inference {
 public:
  explicit ZeroCopy(std::size_t n) : l_(n) {
    check(cudaHostAlloc(reinterpret_cast<void**>(&host_), n * sizeof(std::uint32_t), cudaHostAllocMapped),
          "cudaHostAlloc(cudaHostAllocMapped)");
    check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0), "cudaHostGetDevicePointer");
  }
  ~ZeroCopy() override { cudaFreeHost(host_); }
  std::uint64_t run(std::uint32_t iter) override {
    l_.launch(device_, iter);
    l_.sync();
    return host_sum(host_, l_.n());
  }

 private:
  Launcher l_;
  std::uint32_t* host_ = nullptr;
  std::uint32_t* device_ = nullptr;
};

class Memcpy final : public Inference {
 public:
  Memcpy(std::size_t n, bool pinned) : l_(n), bytes_(n * sizeof(std::uint32_t)) {
    check(cudaMalloc(reinterpret_cast<void**>(&device_), bytes_), "cudaMalloc");
    if (pinned) {
      check(cudaHostAlloc(reinterpret_cast<void**>(&pinned_), bytes_, cudaHostAllocDefault), "cudaHostAlloc");
      host_ = pinned_;
    } else {
      pageable_.assign(n, 0u);
      host_ = pageable_.data();
    }
  }
  ~Memcpy() override {
    cudaFree(device_);
    if (pinned_ != nullptr) cudaFreeHost(pinned_);
  }
  std::uint64_t run(std::uint32_t iter) override {
    l_.launch(device_, iter);
    check(cudaMemcpyAsync(host_, device_, bytes_, cudaMemcpyDeviceToHost, l_.stream()), "cudaMemcpyAsync");
    l_.sync();
    return host_sum(host_, l_.n());
  }

 private:
  Launcher l_;
  std::size_t bytes_;
  std::uint32_t* device_ = nullptr;
  std::uint32_t* pinned_ = nullptr;
  std::vector<std::uint32_t> pageable_;
  std::uint32_t* host_ = nullptr;
};

class FloorKernelSync final : public Inference {
 public:
  explicit FloorKernelSync(std::size_t n) : l_(n) {
    check(cudaMalloc(reinterpret_cast<void**>(&device_), n * sizeof(std::uint32_t)), "cudaMalloc");
  }
  ~FloorKernelSync() override { cudaFree(device_); }
  std::uint64_t run(std::uint32_t iter) override {
    l_.launch(device_, iter);
    l_.sync();
    return 0;
  }
  bool checks_output() const override { return false; }

 private:
  Launcher l_;
  std::uint32_t* device_ = nullptr;
};

class FloorHostRead final : public Inference {
 public:
  explicit FloorHostRead(std::size_t n) : data_(n) {
    for (std::size_t i = 0; i < n; ++i) data_[i] = static_cast<std::uint32_t>(i + 1);
  }
  std::uint64_t run(std::uint32_t) override { return host_sum(data_.data(), data_.size()); }
  bool checks_output() const override { return false; }

 private:
  std::vector<std::uint32_t> data_;
};

std::unique_ptr<Inference> make(const std::string& name, std::size_t n) {
  if (name == "cuda.zero_copy") return std::make_unique<ZeroCopy>(n);
  if (name == "cuda.memcpy_pinned") return std::make_unique<Memcpy>(n, true);
  if (name == "cuda.memcpy_pageable") return std::make_unique<Memcpy>(n, false);
  if (name == "floor.kernel_sync") return std::make_unique<FloorKernelSync>(n);
  if (name == "floor.host_read") return std::make_unique<FloorHostRead>(n);
  throw std::runtime_error("unknown strategy " + name);
}

struct Options {
  std::string json;
  std::string filter;
  int repetitions = 5;
  double min_time = 0.1;
};

struct Repetition {
  std::int64_t iterations = 0;
  double mean_us = 0, median_us = 0, p10_us = 0, p90_us = 0;
};

double quantile_us(std::vector<double>& s, double q) {
  const std::size_t k = std::min(s.size() - 1, static_cast<std::size_t>(q * static_cast<double>(s.size())));
  std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(k), s.end());
  return s[k] * 1e6;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--json" && has_value)
      opt.json = argv[++i];
    else if (a == "--filter" && has_value)
      opt.filter = argv[++i];
    else if (a == "--repetitions" && has_value)
      opt.repetitions = std::max(1, std::atoi(argv[++i]));
    else if (a == "--min-time" && has_value)
      opt.min_time = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--json FILE] [--repetitions N] [--min-time SECONDS] [--filter SUBSTRING]\n",
                   argv[0]);
      return 2;
    }
  }

  cudaDeviceProp prop{};
  int driver = 0, runtime = 0;
  try {
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
    check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    if (!prop.canMapHostMemory) throw std::runtime_error("the device cannot map host memory");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_zero_copy: %s\n", e.what());
    return 1;
  }
  std::printf("cuda_zero_copy on %s (CUDA driver %d, runtime %d)\n", prop.name, driver, runtime);

  const std::size_t sizes[] = {4, 4096, 256 * 1024, 4 * 1024 * 1024, 64 * 1024 * 1024};
  const char* strategies[] = {"cuda.zero_copy", "cuda.memcpy_pinned", "cuda.memcpy_pageable", "floor.kernel_sync",
                              "floor.host_read"};
  std::string rows;
  bool failed = false;
  std::printf("%-44s %12s %12s %12s %10s\n", "benchmark", "median_us", "p10_us", "p90_us", "iterations");
  for (const std::size_t bytes : sizes) {
    for (const char* strategy : strategies) {
      const std::string name = "infer/" + std::string(strategy) + "/" + std::to_string(bytes);
      if (!opt.filter.empty() && name.find(opt.filter) == std::string::npos) continue;
      const std::size_t n = bytes / sizeof(std::uint32_t);
      std::uint64_t wrong = 0;
      std::vector<Repetition> reps;
      try {
        const std::unique_ptr<Inference> inference = make(strategy, n);
        std::uint32_t iter = 1;
        auto once = [&] {
          const auto t0 = Clock::now();
          const std::uint64_t sum = inference->run(iter);
          const auto t1 = Clock::now();
          wrong += static_cast<std::uint64_t>(inference->checks_output() && sum != fresh_sum(n, iter));
          iter = iter >= (1u << 30) ? 1u : iter + 1u;
          return std::chrono::duration<double>(t1 - t0).count();
        };
        const auto warm_start = Clock::now();
        for (int i = 0; i < 200 && (i < 3 || Clock::now() - warm_start < std::chrono::milliseconds(2)); ++i) once();
        std::vector<double> samples;
        for (int r = 0; r < opt.repetitions; ++r) {
          samples.clear();
          double total = 0;
          while (total < opt.min_time || samples.size() < 10) {
            const double s = once();
            samples.push_back(s);
            total += s;
          }
          Repetition rep;
          rep.iterations = static_cast<std::int64_t>(samples.size());
          rep.mean_us = total / static_cast<double>(samples.size()) * 1e6;
          rep.median_us = quantile_us(samples, 0.5);
          rep.p10_us = quantile_us(samples, 0.1);
          rep.p90_us = quantile_us(samples, 0.9);
          reps.push_back(rep);
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
        failed = true;
        continue;
      }
      if (wrong > 0) {
        std::fprintf(stderr, "%s: stale or missing output in %llu inferences\n", name.c_str(),
                     static_cast<unsigned long long>(wrong));
        failed = true;
      }
      std::vector<double> medians;
      for (std::size_t r = 0; r < reps.size(); ++r) {
        const Repetition& rep = reps[r];
        medians.push_back(rep.median_us);
        char row[1024];
        std::snprintf(row, sizeof row,
                      "    {\"name\": %s, \"run_name\": %s, \"run_type\": \"iteration\", \"repetitions\": %d, "
                      "\"repetition_index\": %zu, \"threads\": 1, \"iterations\": %lld, \"real_time\": %.6f, "
                      "\"cpu_time\": %.6f, \"time_unit\": \"us\", \"bytes_per_second\": %.6e, \"median_us\": %.6f, "
                      "\"p10_us\": %.6f, \"p90_us\": %.6f, \"stale\": %llu%s}",
                      json_string(name + "/manual_time").c_str(), json_string(name + "/manual_time").c_str(),
                      opt.repetitions, r, static_cast<long long>(rep.iterations), rep.mean_us, rep.mean_us,
                      rep.mean_us > 0 ? static_cast<double>(bytes) / (rep.mean_us * 1e-6) : 0.0, rep.median_us,
                      rep.p10_us, rep.p90_us, static_cast<unsigned long long>(wrong),
                      wrong > 0 ? ", \"error_occurred\": true, \"error_message\": \"stale or missing output\"" : "");
        rows += (rows.empty() ? "" : ",\n") + std::string(row);
      }
      std::sort(medians.begin(), medians.end());
      std::printf("%-44s %12.2f %12.2f %12.2f %10lld\n", name.c_str(), medians[medians.size() / 2], reps[0].p10_us,
                  reps[0].p90_us, static_cast<long long>(reps[0].iterations));
      std::fflush(stdout);
    }
  }

  if (!opt.json.empty()) {
    std::ofstream out(opt.json);
    out << "{\n  \"context\": {\n"
        << "    \"date\": " << json_string(utc_now()) << ",\n"
        << "    \"executable\": " << json_string(argv[0]) << ",\n"
        << "    \"clzero.platform\": \"CUDA\",\n"
        << "    \"clzero.device\": " << json_string(prop.name) << ",\n"
        << "    \"clzero.driver_version\": " << json_string("CUDA driver " + std::to_string(driver)) << ",\n"
        << "    \"clzero.cuda_runtime\": " << json_string(std::to_string(runtime)) << ",\n"
        << "    \"clzero.cpu\": " << json_string(cpu_model()) << ",\n"
        << "    \"clzero.min_time\": " << json_string(std::to_string(opt.min_time)) << "\n"
        << "  },\n  \"benchmarks\": [\n"
        << rows << "\n  ]\n}\n";
    if (!out) {
      std::fprintf(stderr, "cuda_zero_copy: could not write %s\n", opt.json.c_str());
      return 1;
    }
  }
  return failed ? 1 : 0;
}
