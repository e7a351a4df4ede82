// SPDX-License-Identifier: Apache-2.0
// Soak: inferences with random policies, intents, element types and sizes,
// on several threads with a queue each; every element of every inference is
// checked against values that change every inference. Tensors live for a
// random number of inferences, so construction and release are soaked too.
//
//   clzero_soak [--inferences N] [--threads T] [--seed S] [--max-elements M]
//               [--subject NAME]   (only the subjects whose name starts so)
//
// Prints one summary line per thread and a total; exits 1 on any wrong
// element or error. An allocation the implementation refuses is asked for
// once more (make_tensor): a refusal met then is counted and reported, one
// that is not is an error. docs/reliability.md has the long runs.
#include <clzero/clzero.hpp>

#if defined(__linux__)
#include <sys/resource.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

struct Options {
  long inferences = 2000;
  int threads = 2;
  std::uint64_t seed = 1;
  std::size_t max_elements = std::size_t{1} << 18;
  std::string subject;  // empty: every subject
};

struct Totals {
  long inferences = 0;
  long tensors = 0;
  long long elements = 0;
  long long wrong = 0;
  std::map<std::string, long> per_subject;
  std::string first_wrong;
  std::string error;
  // Allocations the implementation refused and made when asked again.
  long refusals_met = 0;
  std::string first_refusal;
};

// The queue and check buffer of one thread.
struct Lane {
  explicit Lane(std::size_t max_elements)
      : queue(Env::get().make_queue(0)) {
    cl_int rc = CL_SUCCESS;
    check = clCreateBuffer(Env::get().context, CL_MEM_READ_WRITE, max_elements * 4, nullptr, &rc);
    ok(rc, "clCreateBuffer");
  }
  ~Lane() {
    clReleaseMemObject(check);
    clReleaseCommandQueue(queue);
  }
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  cl_command_queue queue;
  cl_mem check = nullptr;
};

template <class T>
T expected_value(std::uint32_t i, std::uint32_t iter) {
  if constexpr (std::is_same<T, std::uint8_t>::value) return byte_value(i, iter);
  else return value(i, iter);
}

// What the process holds, for an allocation the implementation refused:
// its mappings, resident, locked and pinned memory and the locked-memory
// limit (Linux; elsewhere nothing).
std::string process_state() {
#if defined(__linux__)
  std::string out;
  if (std::FILE* f = std::fopen("/proc/self/maps", "r")) {
    long lines = 0;
    for (int c; (c = std::fgetc(f)) != EOF;) lines += c == '\n' ? 1 : 0;
    std::fclose(f);
    out += std::to_string(lines) + " mappings";
  }
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      const std::string l = line;
      const std::size_t colon = l.find(':');
      if (colon == std::string::npos) continue;
      const std::string key = l.substr(0, colon);
      if (key != "VmRSS" && key != "VmLck" && key != "VmPin" && key != "Threads") continue;
      const std::size_t from = l.find_first_not_of(" \t", colon + 1), to = l.find_last_not_of(" \t\n");
      if (from != std::string::npos && to >= from) out += ", " + key + " " + l.substr(from, to - from + 1);
    }
    std::fclose(f);
  }
  struct rlimit lock {};
  if (getrlimit(RLIMIT_MEMLOCK, &lock) == 0)
    out += ", RLIMIT_MEMLOCK " + (lock.rlim_cur == RLIM_INFINITY ? std::string("unlimited")
                                                                 : std::to_string(lock.rlim_cur / 1024) + " kB");
  return out;
#else
  return "no process state on this system";
#endif
}

// The tensor of one life. Where the implementation refuses it, the same
// tensor is asked for again once the lane's queue has finished and 10 ms
// have passed. NVIDIA's driver 580 refuses allocations now and then while
// other threads make and free memory on the same context, and makes them
// when asked again: tools/device/alloc_churn.cpp shows it without clzero
// (docs/reliability.md, "Soak"). A refusal met so is counted, with what the
// process held the first time; one that is not ends the thread's soak with
// both errors, a failure. Only a refusal is asked again: any other error
// ends the soak at once.
template <class T, class Policy>
MappedTensor<T, Policy> make_tensor(Lane& lane, const typename Policy::Options& options, Intent intent,
                                    std::size_t n, Totals& totals) {
  try {
    return MappedTensor<T, Policy>(Env::get().context, lane.queue, {n}, intent, options);
  } catch (const clzero::Error& e) {
    if (e.code() != CL_OUT_OF_RESOURCES && e.code() != CL_MEM_OBJECT_ALLOCATION_FAILURE &&
        e.code() != CL_OUT_OF_HOST_MEMORY)
      throw;
    const std::string refused = std::string(e.what()) + " [process: " + process_state() + "]";
    clFinish(lane.queue);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    try {
      MappedTensor<T, Policy> again(Env::get().context, lane.queue, {n}, intent, options);
      if (totals.refusals_met++ == 0) totals.first_refusal = refused;
      return again;
    } catch (const std::exception& again) {
      throw std::runtime_error(refused + "; the same tensor after clFinish and 10 ms: refused again: " + again.what());
    }
  }
}

// One tensor's life: `count` inferences, every element checked.
template <class T, class Policy>
void life(Lane& lane, const typename Policy::Options& options, Intent intent, std::size_t n, int count,
          std::uint32_t& iter, Totals& totals, const std::string& subject) {
  constexpr bool bytes = std::is_same<T, std::uint8_t>::value;
  MappedTensor<T, Policy> t = make_tensor<T, Policy>(lane, options, intent, n, totals);
  ++totals.tensors;
  std::vector<T> expected(n, T{0});
  std::vector<T> seen(n);
  const cl_uint count_arg = static_cast<cl_uint>(n);
  // A kernel object for this tensor alone: NVIDIA's OpenCL (H200, driver
  // 580.159.04) refuses to enqueue a kernel whose argument was once an SVM
  // pointer and is now a cl_mem (CL_INVALID_KERNEL_ARGS; docs/drivers.md).
  Kernel kernel(intent == Intent::output  ? (bytes ? "fill_u8" : "fill_u32")
                : intent == Intent::input ? (bytes ? "copy_u8" : "copy_u32")
                                          : (bytes ? "update_u8" : "update_u32"));
  for (int k = 0; k < count; ++k) {
    ++iter;
    if (intent != Intent::output) {
      auto view = t.write_view();
      for (std::uint32_t i = 0; i < n; ++i) view[i] = expected[i] = expected_value<T>(i, iter);
    }
    {
      auto dev = t.device_access();
      dev.bind(kernel.k, 0);
      if (intent == Intent::input) {
        kernel.arg(1, lane.check);
        kernel.arg(2, count_arg);
      } else {
        kernel.arg(1, count_arg);
        kernel.arg(2, static_cast<cl_uint>(iter));
      }
      launch(lane.queue, kernel.k, n, dev);
    }
    if (intent == Intent::output)
      for (std::uint32_t i = 0; i < n; ++i) expected[i] = expected_value<T>(i, iter);
    if (intent == Intent::inout)
      for (auto& e : expected) e = static_cast<T>(e * 3u + iter);
    if (intent == Intent::input) {
      ok(clEnqueueReadBuffer(lane.queue, lane.check, CL_TRUE, 0, n * sizeof(T), seen.data(), 0, nullptr, nullptr),
         "clEnqueueReadBuffer");
    } else {
      auto view = t.read_view();
      std::copy(view.begin(), view.end(), seen.begin());
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (seen[i] == expected[i]) continue;
      if (totals.wrong++ == 0)
        totals.first_wrong = subject + ", intent " + to_string(intent) + ", " + std::to_string(n) +
                             " elements, inference " + std::to_string(iter) + ", element " + std::to_string(i);
    }
    totals.elements += static_cast<long long>(n);
    ++totals.inferences;
  }
  totals.per_subject[subject] += count;
}

using Life = std::function<void(Lane&, Intent, std::size_t, int, std::uint32_t&, Totals&)>;

template <class Policy>
std::vector<std::pair<std::string, Life>> subject(const std::string& name, const typename Policy::Options& options) {
  return {{name + " u32",
           [options, name](Lane& l, Intent in, std::size_t n, int c, std::uint32_t& it, Totals& t) {
             life<std::uint32_t, Policy>(l, options, in, n, c, it, t, name + " u32");
           }},
          {name + " u8", [options, name](Lane& l, Intent in, std::size_t n, int c, std::uint32_t& it, Totals& t) {
             life<std::uint8_t, Policy>(l, options, in, n, c, it, t, name + " u8");
           }}};
}

std::vector<std::pair<std::string, Life>> subjects() {
  const DeviceCaps& caps = Env::get().caps;
  std::vector<std::pair<std::string, Life>> all;
  auto add = [&all](std::vector<std::pair<std::string, Life>> more) { all.insert(all.end(), more.begin(), more.end()); };
  add(subject<policy::MapPerInference>("MapPerInference(alloc_host_ptr)", {Allocation::alloc_host_ptr()}));
  add(subject<policy::MapPerInference>("MapPerInference(use_host_ptr)", {Allocation::use_host_ptr()}));
  add(subject<policy::Persistent>("Persistent(alloc_host_ptr)", {Allocation::alloc_host_ptr()}));
  add(subject<policy::Persistent>("Persistent(use_host_ptr)", {Allocation::use_host_ptr()}));
  add(subject<policy::CopyToPinned>("CopyToPinned", {}));
  add(subject<policy::Auto>("Auto", {}));
#if defined(CL_VERSION_2_0)
  if (caps.svm_fine_grain_buffer) add(subject<policy::Svm>("Svm(fine)", {policy::Svm::Grain::fine}));
  if (caps.svm_coarse_grain_buffer) add(subject<policy::Svm>("Svm(coarse)", {policy::Svm::Grain::coarse}));
#else
  (void)caps;
#endif
  return all;
}

// One thread's share of the inferences.
void soak(const Options& o, int thread, long inferences, Totals& totals) {
  try {
    Lane lane(o.max_elements);
    auto all = subjects();
    all.erase(std::remove_if(all.begin(), all.end(),
                             [&o](const auto& s) { return s.first.compare(0, o.subject.size(), o.subject) != 0; }),
              all.end());
    if (all.empty()) throw std::runtime_error("no subject's name starts with '" + o.subject + "' on this device");
    std::mt19937_64 rng(o.seed * 1000003u + static_cast<std::uint64_t>(thread));
    std::uniform_int_distribution<std::size_t> pick(0, all.size() - 1);
    std::uniform_int_distribution<int> intent_pick(0, 2), life_length(1, 64);
    // Sizes spread evenly over orders of magnitude, from 1 element up.
    std::uniform_real_distribution<double> log_size(0.0, std::log2(static_cast<double>(o.max_elements)));
    std::uint32_t iter = static_cast<std::uint32_t>(thread) << 24;
    while (totals.inferences < inferences) {
      const auto& s = all[pick(rng)];
      const Intent intent = static_cast<Intent>(intent_pick(rng));
      const std::size_t n = std::max<std::size_t>(1, static_cast<std::size_t>(std::exp2(log_size(rng))));
      const int count = static_cast<int>(std::min<long>(life_length(rng), inferences - totals.inferences));
      s.second(lane, intent, n, count, iter, totals);
    }
  } catch (const std::exception& e) {
    totals.error = e.what();
  }
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char* v = argv[i + 1];
    if (key == "--inferences") o.inferences = std::atol(v);
    else if (key == "--threads") o.threads = std::max(1, std::atoi(v));
    else if (key == "--seed") o.seed = std::strtoull(v, nullptr, 10);
    else if (key == "--subject") o.subject = v;
    else if (key == "--max-elements") o.max_elements = std::max<std::size_t>(1, std::strtoull(v, nullptr, 10));
    else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  Env::get();
  std::vector<Totals> totals(static_cast<std::size_t>(o.threads));
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t) {
    const long share = o.inferences / o.threads + (t < o.inferences % o.threads ? 1 : 0);
    threads.emplace_back([&o, &totals, t, share] { soak(o, t, share, totals[static_cast<std::size_t>(t)]); });
  }
  for (auto& th : threads) th.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  Totals all;
  bool failed = false;
  for (std::size_t t = 0; t < totals.size(); ++t) {
    const Totals& x = totals[t];
    std::printf("thread %zu: %ld inferences, %ld tensors, %lld elements checked, %lld wrong%s%s\n", t, x.inferences,
                x.tensors, x.elements, x.wrong, x.error.empty() ? "" : ", error: ", x.error.c_str());
    if (!x.first_wrong.empty()) std::printf("  first wrong: %s\n", x.first_wrong.c_str());
    if (x.refusals_met != 0)
      std::printf("  %ld refused allocation(s) made when asked again after clFinish and 10 ms; the first: %s\n",
                  x.refusals_met, x.first_refusal.c_str());
    failed = failed || x.wrong != 0 || !x.error.empty();
    all.inferences += x.inferences;
    all.tensors += x.tensors;
    all.elements += x.elements;
    all.wrong += x.wrong;
    all.refusals_met += x.refusals_met;
    for (const auto& s : x.per_subject) all.per_subject[s.first] += s.second;
  }
  for (const auto& s : all.per_subject) std::printf("  %-36s %ld inferences\n", s.first.c_str(), s.second);
  std::printf("soak: %ld inferences on %d threads with a queue each, %ld tensors, %lld elements checked, %lld wrong, "
              "%ld refused allocation(s) made when asked again, %.1f s (seed %llu)\n",
              all.inferences, o.threads, all.tensors, all.elements, all.wrong, all.refusals_met, seconds,
              static_cast<unsigned long long>(o.seed));
  failed = failed || all.inferences != o.inferences;
  std::printf("%s\n", failed ? "FAIL" : "PASS");
  return failed ? 1 : 0;
}
