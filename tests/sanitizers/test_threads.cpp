// SPDX-License-Identifier: Apache-2.0
// Different tensors on different threads (the README's thread-safety rule):
// two threads with a queue and a tensor each, and a producer next to a
// reader of another tensor. Every element of every inference is checked.
// Built into the ThreadSanitizer runs (sanitizers.*.thread), which look for
// data races inside clzero while the threads run.
#include <clzero/clzero.hpp>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

namespace {

// What one thread found; compared by the main thread (the test framework's
// assertions are not thread-safe).
struct Tally {
  std::size_t checked = 0;
  std::size_t wrong = 0;
  std::string error;
};

struct Queue {
  Queue() : q(Env::get().make_queue(0)) {}
  ~Queue() { clReleaseCommandQueue(q); }
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;
  cl_command_queue q;
};

template <class Policy>
void produce(MappedTensor<std::uint32_t, Policy>& t, Kernel& fill, cl_command_queue q, std::uint32_t iter) {
  auto dev = t.device_access();
  dev.bind(fill.k, 0);
  fill.arg(1, static_cast<cl_uint>(t.size()));
  fill.arg(2, static_cast<cl_uint>(iter));
  launch(q, fill.k, t.size(), dev);
}

template <class Policy>
void check(MappedTensor<std::uint32_t, Policy>& t, std::uint32_t iter, Tally& tally) {
  auto view = t.read_view();
  for (std::uint32_t i = 0; i < view.size(); ++i) tally.wrong += view[i] != value(i, iter);
  tally.checked += view.size();
}

// One thread's inferences: its own queue, kernel and tensor.
template <class Policy>
void inferences(std::size_t elements, std::uint32_t first, int count, Tally& tally) {
  try {
    Queue queue;
    Kernel fill("fill_u32");
    MappedTensor<std::uint32_t, Policy> t(Env::get().context, queue.q, {elements}, Intent::output);
    for (std::uint32_t iter = first; iter < first + static_cast<std::uint32_t>(count); ++iter) {
      produce(t, fill, queue.q, iter);
      check(t, iter, tally);
    }
  } catch (const std::exception& e) {
    tally.error = e.what();
  }
}

template <class PolicyA, class PolicyB>
void two_threads(const char* what) {
  Tally a, b;
  std::thread ta([&] { inferences<PolicyA>(4096, 1, 60, a); });
  std::thread tb([&] { inferences<PolicyB>(3000, 1000, 60, b); });
  ta.join();
  tb.join();
  INFO(what << ": " << a.error << " " << b.error);
  CHECK(a.error.empty());
  CHECK(b.error.empty());
  CHECK(a.wrong == 0);
  CHECK(b.wrong == 0);
  CHECK(a.checked == 4096u * 60u);
  CHECK(b.checked == 3000u * 60u);
}

bool fine_svm() {
#if defined(CL_VERSION_2_0)
  return Env::get().caps.svm_fine_grain_buffer;
#else
  return false;
#endif
}

}  // namespace

TEST_CASE("two threads with a queue and a tensor each both get fresh data", "[threads]") {
  two_threads<policy::Persistent, policy::Persistent>("Persistent and Persistent");
  two_threads<policy::MapPerInference, policy::CopyToPinned>("MapPerInference and CopyToPinned");
  two_threads<policy::Auto, policy::Persistent>("Auto and Persistent");
#if defined(CL_VERSION_2_0)
  if (fine_svm()) two_threads<policy::Svm, policy::CopyToPinned>("Svm and CopyToPinned");
#endif
}

TEST_CASE("a thread produces one tensor while another reads views of a different one", "[threads]") {
  Env& env = Env::get();
  Queue reader_queue;
  Kernel reader_fill("fill_u32");
  const std::size_t n = 5000;
  // The reader's tensor, produced before the threads start.
  MappedTensor<std::uint32_t, policy::Persistent> read_side(env.context, reader_queue.q, {n}, Intent::output);
  produce(read_side, reader_fill, reader_queue.q, 77);
  Tally producer, reader;
  std::thread p([&] {
    try {
      Queue queue;
      Kernel fill("fill_u32");
      MappedTensor<std::uint32_t, policy::Persistent> t(env.context, queue.q, {n}, Intent::output);
      for (std::uint32_t iter = 1; iter <= 200; ++iter) produce(t, fill, queue.q, iter);  // no host view between
      check(t, 200, producer);
    } catch (const std::exception& e) {
      producer.error = e.what();
    }
  });
  std::thread r([&] {
    try {
      for (int round = 0; round < 200; ++round) check(read_side, 77, reader);  // a view opened and ended each round
    } catch (const std::exception& e) {
      reader.error = e.what();
    }
  });
  p.join();
  r.join();
  INFO(producer.error << " " << reader.error);
  CHECK(producer.error.empty());
  CHECK(reader.error.empty());
  CHECK(producer.wrong == 0);
  CHECK(producer.checked == n);
  CHECK(reader.wrong == 0);
  CHECK(reader.checked == n * 200);
}
