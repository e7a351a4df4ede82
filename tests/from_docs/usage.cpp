// Uses clzero the way an inference engine would after reading README.md and
// docs/*.md, and checks every element of every inference against values
// computed on the host. Each scenario prints one line: PASS, FAIL or SKIP.
//
// Build: g++ -std=c++17 -O2 -Wall -Wextra -I include tests/from_docs/usage.cpp -lOpenCL
// Platform: the first one with a device, or the first whose name contains
// $CLZERO_TEST_PLATFORM.

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <clzero/clzero.hpp>

#if __has_include(<dlpack/dlpack.h>)
#include <clzero/interop/dlpack.hpp>
#define FROM_DOCS_HAVE_DLPACK 1
#else
#define FROM_DOCS_HAVE_DLPACK 0
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

// ---------------------------------------------------------------------------
// Test parameters

// A few elements, a size that is not a multiple of 64 bytes (4000 B), and one
// above 1 MiB that is not a multiple of 64 bytes either (1048644 B).
constexpr std::size_t kSizes[] = {3, 1000, 262161};
constexpr std::uint32_t kIterations = 50;

// ---------------------------------------------------------------------------
// Values written by kernels and recomputed on the host. For a fixed index and
// salt, value_u32 is a bijection of the iteration number, so an element left
// over from any earlier inference never matches.

const char* const kKernelSource = R"CLC(
uint mix32(uint x) {
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
  return x;
}
uint value_u32(uint iter, uint i, uint salt) {
  return mix32((iter * 0x9E3779B1U) ^ (i * 0x85EBCA77U) ^ salt);
}
float value_f32(uint iter, uint i) { return (float)((iter * 4099U + i * 13U) & 0xFFFFFFU); }
uchar value_u8(uint iter, uint i) { return (uchar)(iter * 31U + i * 7U + 1U); }

__kernel void fill_u32(__global uint* out, uint iter, uint salt) {
  uint i = get_global_id(0);
  out[i] = value_u32(iter, i, salt);
}
__kernel void fill_f32(__global float* out, uint iter) {
  uint i = get_global_id(0);
  out[i] = value_f32(iter, i);
}
__kernel void transform_u32(__global const uint* in, __global uint* out, uint iter) {
  uint i = get_global_id(0);
  out[i] = in[i] * 3U + (iter ^ i);
}
__kernel void update_u32(__global uint* x, uint iter) {
  uint i = get_global_id(0);
  x[i] = x[i] * 3U + 1U + (iter ^ i);
}
__kernel void heads(__global float* boxes, uint nb, __global uint* scores, uint ns,
                    __global uchar* tail, uint nt, uint iter) {
  uint i = get_global_id(0);
  if (i < nb) boxes[i] = value_f32(iter, i);
  if (i < ns) scores[i] = value_u32(iter, i, 0x5C0E5U);
  if (i < nt) tail[i] = value_u8(iter, i);
}
__kernel void join_parts(__global const uint* a, uint na, __global const uchar* b, uint nb,
                         __global uint* out) {
  uint i = get_global_id(0);
  out[i] = i < na ? a[i] * 5U + 1U : (uint)b[i - na] * 7U + 1U;
}
)CLC";

std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
std::uint32_t value_u32(std::uint32_t iter, std::size_t i, std::uint32_t salt) {
  return mix32((iter * 0x9E3779B1U) ^ (static_cast<std::uint32_t>(i) * 0x85EBCA77U) ^ salt);
}
float value_f32(std::uint32_t iter, std::size_t i) {
  return static_cast<float>((iter * 4099U + static_cast<std::uint32_t>(i) * 13U) & 0xFFFFFFU);
}
std::uint8_t value_u8(std::uint32_t iter, std::size_t i) {
  return static_cast<std::uint8_t>(iter * 31U + static_cast<std::uint32_t>(i) * 7U + 1U);
}
std::uint32_t transformed(std::uint32_t in, std::uint32_t iter, std::size_t i) {
  return in * 3U + (iter ^ static_cast<std::uint32_t>(i));
}
std::uint32_t updated(std::uint32_t x, std::uint32_t iter, std::size_t i) {
  return x * 3U + 1U + (iter ^ static_cast<std::uint32_t>(i));
}

// ---------------------------------------------------------------------------
// Outcomes

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct Skip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& message) { throw Failure(message); }

void cl_check(cl_int err, const char* call) {
  if (err != CL_SUCCESS) fail(std::string(call) + " returned " + std::to_string(err));
}

template <class T>
std::string show(T v) {
  std::ostringstream s;
  if constexpr (std::is_floating_point_v<T>)
    s.precision(9), s << v;
  else
    s << +v;  // + prints uint8_t as a number
  return s.str();
}

// Compares every element of a view (anything with size() and operator[]).
template <class View, class Expected>
void expect_all(const char* what, std::uint32_t iter, const View& view, std::size_t count, Expected expected) {
  if (view.size() != count)
    fail(std::string(what) + ": iteration " + std::to_string(iter) + ": the view has " + std::to_string(view.size()) +
         " elements, expected " + std::to_string(count));
  for (std::size_t i = 0; i < count; ++i) {
    const auto want = expected(i);
    if (!(view[i] == want))
      fail(std::string(what) + ": iteration " + std::to_string(iter) + ", index " + std::to_string(i) + " of " +
           std::to_string(count) + ": expected " + show(want) + ", got " + show(view[i]));
  }
}

const char* kind_name(clzero::ErrorKind kind) {
  switch (kind) {
    case clzero::ErrorKind::opencl: return "opencl";
    case clzero::ErrorKind::invalid_argument: return "invalid_argument";
    case clzero::ErrorKind::misuse: return "misuse";
    case clzero::ErrorKind::unsupported: return "unsupported";
    case clzero::ErrorKind::unusable: return "unusable";
  }
  return "?";
}

// Runs `body` and requires it to throw clzero::Error of `kind`, with a
// message starting "clzero: " (docs/api.md).
template <class Body>
void expect_error(clzero::ErrorKind kind, const std::string& what, Body body) {
  try {
    body();
  } catch (const clzero::Error& e) {
    if (e.kind() != kind)
      fail(what + ": threw clzero::Error of kind " + kind_name(e.kind()) + ", expected " + kind_name(kind) + ": " +
           e.what());
    if (std::strncmp(e.what(), "clzero: ", 8) != 0)
      fail(what + ": the message does not start with \"clzero: \": " + e.what());
    return;
  }
  fail(what + ": no clzero::Error was thrown");
}

// ---------------------------------------------------------------------------
// OpenCL objects this program creates, each released exactly once.

template <class T, cl_int(CL_API_CALL* Release)(T)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(T handle) : handle_(handle) {}
  Owned(Owned&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Owned& operator=(Owned&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() {
    if (handle_) Release(handle_);
  }
  T get() const { return handle_; }
  operator T() const { return handle_; }  // NOLINT: passes straight to the C API

 private:
  T handle_ = nullptr;
};

using Context = Owned<cl_context, clReleaseContext>;
using Queue = Owned<cl_command_queue, clReleaseCommandQueue>;
using Program = Owned<cl_program, clReleaseProgram>;
using Kernel = Owned<cl_kernel, clReleaseKernel>;
using Buffer = Owned<cl_mem, clReleaseMemObject>;
using Event = Owned<cl_event, clReleaseEvent>;

struct Env {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  std::string platform_name, device_name;
  // Members are released in reverse order: the program before the queues,
  // the queues before the context.
  Context context;
  Queue queue;        // in-order: the tensors' queue
  Queue other_queue;  // in-order: "another queue" for kernels
  Queue ooo_queue;    // out-of-order, where the device has one
  Program program;
  clzero::DeviceCaps caps;
};

std::string platform_name(cl_platform_id p) {
  std::size_t size = 0;
  clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, nullptr, &size);
  std::string name(size, '\0');
  clGetPlatformInfo(p, CL_PLATFORM_NAME, size, name.data(), nullptr);
  name.resize(std::strlen(name.c_str()));
  return name;
}

std::string device_name(cl_device_id d) {
  std::size_t size = 0;
  clGetDeviceInfo(d, CL_DEVICE_NAME, 0, nullptr, &size);
  std::string name(size, '\0');
  clGetDeviceInfo(d, CL_DEVICE_NAME, size, name.data(), nullptr);
  name.resize(std::strlen(name.c_str()));
  return name;
}

// The first platform that has a device, or the first whose name contains
// $CLZERO_TEST_PLATFORM; its first device.
void pick_device(Env& env) {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) fail("no OpenCL platform");
  std::vector<cl_platform_id> platforms(count);
  cl_check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  const char* wanted = std::getenv("CLZERO_TEST_PLATFORM");
  for (cl_platform_id p : platforms) {
    const std::string name = platform_name(p);
    if (wanted && *wanted && name.find(wanted) == std::string::npos) continue;
    cl_device_id device = nullptr;
    cl_uint devices = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device, &devices) != CL_SUCCESS || devices == 0) {
      if (wanted && *wanted) break;  // the named platform has no device
      continue;
    }
    env.platform = p;
    env.device = device;
    env.platform_name = name;
    env.device_name = device_name(device);
    return;
  }
  fail(wanted && *wanted ? std::string("no platform with a device whose name contains \"") + wanted + "\""
                         : std::string("no platform with a device"));
}

Queue make_queue(const Env& env, bool out_of_order) {
  const cl_queue_properties props[] = {
      CL_QUEUE_PROPERTIES, out_of_order ? cl_queue_properties(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) : 0, 0};
  cl_int err = CL_SUCCESS;
  Queue q(clCreateCommandQueueWithProperties(env.context, env.device, props, &err));
  cl_check(err, "clCreateCommandQueueWithProperties");
  return q;
}

void setup(Env& env) {
  pick_device(env);
  cl_int err = CL_SUCCESS;
  env.context = Context(clCreateContext(nullptr, 1, &env.device, nullptr, nullptr, &err));
  cl_check(err, "clCreateContext");
  env.caps = clzero::DeviceCaps::query(env.device);
  env.queue = make_queue(env, false);
  env.other_queue = make_queue(env, false);
  if (env.caps.out_of_order_queue) env.ooo_queue = make_queue(env, true);
  const char* source = kKernelSource;
  env.program = Program(clCreateProgramWithSource(env.context, 1, &source, nullptr, &err));
  cl_check(err, "clCreateProgramWithSource");
  if (clBuildProgram(env.program, 1, &env.device, "", nullptr, nullptr) != CL_SUCCESS) {
    std::size_t size = 0;
    clGetProgramBuildInfo(env.program, env.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(env.program, env.device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    fail("clBuildProgram failed: " + log);
  }
}

// A fresh kernel object per scenario: one kernel is never switched between
// SVM pointers and buffers (docs/drivers.md, NVIDIA).
Kernel make_kernel(const Env& env, const char* name) {
  cl_int err = CL_SUCCESS;
  Kernel k(clCreateKernel(env.program, name, &err));
  cl_check(err, "clCreateKernel");
  return k;
}

template <class T>
void set_arg(cl_kernel k, cl_uint index, const T& value) {
  cl_check(clSetKernelArg(k, index, sizeof(T), &value), "clSetKernelArg");
}

void enqueue_1d(cl_command_queue q, cl_kernel k, std::size_t n, cl_uint wait_count, const cl_event* wait_list,
                cl_event* event) {
  cl_check(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, wait_count, wait_list, event),
           "clEnqueueNDRangeKernel");
}

Buffer make_buffer(const Env& env, std::size_t bytes) {
  cl_int err = CL_SUCCESS;
  Buffer b(clCreateBuffer(env.context, CL_MEM_READ_WRITE, bytes, nullptr, &err));
  cl_check(err, "clCreateBuffer");
  return b;
}

std::vector<std::uint32_t> read_buffer(cl_command_queue q, cl_mem buffer, std::size_t count) {
  std::vector<std::uint32_t> host(count);
  cl_check(clEnqueueReadBuffer(q, buffer, CL_TRUE, 0, count * sizeof(std::uint32_t), host.data(), 0, nullptr, nullptr),
           "clEnqueueReadBuffer");
  return host;
}

// ---------------------------------------------------------------------------
// Scenario bookkeeping

// Destructors and the end of views and accesses report failures to the
// cleanup handler (README, "Recovering from errors"); in this program none may
// happen, so every report fails the scenario it came in.
std::atomic<int> cleanup_reports{0};
std::mutex cleanup_mutex;
std::string cleanup_last;

void record_cleanup_error(const clzero::Error& e) noexcept {
  try {
    std::lock_guard<std::mutex> lock(cleanup_mutex);
    cleanup_last = e.what();
  } catch (...) {
  }
  ++cleanup_reports;
}

struct Tally {
  int passed = 0, failed = 0, skipped = 0;
};

template <class Body>
void scenario(Tally& tally, const std::string& name, Body&& body) {
  const int reports_before = cleanup_reports.load();
  try {
    body();
    if (cleanup_reports.load() != reports_before) {
      std::lock_guard<std::mutex> lock(cleanup_mutex);
      fail("the cleanup handler was called: " + cleanup_last);
    }
    std::printf("PASS %s\n", name.c_str());
    ++tally.passed;
  } catch (const Skip& e) {
    std::printf("SKIP %s: %s\n", name.c_str(), e.what());
    ++tally.skipped;
  } catch (const Failure& e) {
    std::printf("FAIL %s: %s\n", name.c_str(), e.what());
    ++tally.failed;
  } catch (const clzero::Error& e) {
    std::printf("FAIL %s: clzero::Error (%s): %s\n", name.c_str(), kind_name(e.kind()), e.what());
    ++tally.failed;
  } catch (const std::exception& e) {
    std::printf("FAIL %s: %s\n", name.c_str(), e.what());
    ++tally.failed;
  }
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------
// The policies under test. Whether a tensor's view waits on the kernels'
// events decides what event_slot(own in-order queue) returns (README, "Events
// and queues": null unless fine SVM, USM, or NVIDIA host memory in a ring).

template <class P>
bool views_wait_on_kernel_events(const clzero::MappedTensor<std::uint32_t, P>& t) {
  using namespace clzero::policy;
  if constexpr (std::is_same_v<P, Svm>) {
    return t.policy().fine_grained();
  } else if constexpr (std::is_same_v<P, UnifiedHost>) {
    return true;
  } else if constexpr (std::is_same_v<P, Auto>) {
    const Choice& c = t.policy().choice();
    return (c.kind == Choice::Kind::svm && c.svm_fine) || c.kind == Choice::Kind::unified_host;
  } else {
    return false;  // Persistent (lone tensor), MapPerInference, CopyToPinned
  }
}

template <class P>
bool uses_host_ptr(const clzero::MappedTensor<std::uint32_t, P>& t) {
  using namespace clzero::policy;
  if constexpr (std::is_same_v<P, Persistent> || std::is_same_v<P, MapPerInference>)
    return t.policy().allocation().kind() == clzero::Allocation::Kind::use_host_ptr;
  else
    return false;
}

template <class P>
bool buffer_backed(const clzero::MappedTensor<std::uint32_t, P>& t) {
  return t.buffer() != nullptr;
}

// ---------------------------------------------------------------------------
// The README's usage example, as written there (float logits, argument 0 bound
// once), with the iteration number as the kernel's argument 1.

struct ReadmeModel {
  ReadmeModel(cl_context context, cl_command_queue q, cl_kernel k, std::size_t count)
      : queue(q), kernel(k), n(count), logits(context, q, {count}, clzero::Intent::output) {
    logits.bind(kernel, 0);  // argument 0 of the kernel, set once
  }

  clzero::HostView<const float> infer(std::uint32_t iter) {
    set_arg(kernel, 1, iter);
    {
      auto dev = logits.device_access();
      enqueue_1d(queue, kernel, n, dev.wait_count(queue), dev.wait_list(queue), dev.event_slot(queue));
    }
    return logits.read_view();
  }

  cl_command_queue queue;
  cl_kernel kernel;
  std::size_t n;
  clzero::MappedTensor<float> logits;
};

void the_readme_model_reads_every_inference(const Env& env) {
  for (std::size_t n : kSizes) {
    Kernel k = make_kernel(env, "fill_f32");
    ReadmeModel model(env.context, env.queue, k, n);
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      auto view = model.infer(iter);
      expect_all("logits", iter, view, n, [&](std::size_t i) { return value_f32(iter, i); });
      // The README's own use: the maximum, which is the host's too.
      const float max = *std::max_element(view.begin(), view.end());
      float want = 0;
      for (std::size_t i = 0; i < n; ++i) want = std::max(want, value_f32(iter, i));
      if (max != want) fail("max_element over the view: expected " + show(want) + ", got " + show(max));
    }
  }
}

// ---------------------------------------------------------------------------
// Per-policy scenarios. Each takes the policy's Options.

template <class P>
using Tensor = clzero::MappedTensor<std::uint32_t, P>;

// Output written by a kernel on the tensor's in-order queue, bound once with
// MappedTensor::bind, read through read_view() after every inference.
template <class P>
void output_is_fresh_every_inference(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    Tensor<P> out(env.context, env.queue, clzero::Shape{n}, clzero::Intent::output, opts);
    // docs/api.md, the policy protocol: the allocation is "zeroed where the host reads".
    {
      auto view = out.read_view();
      expect_all("a new output before any kernel", 0, view, n, [](std::size_t) { return 0U; });
    }
    if (std::string(out.policy().describe()).empty()) fail("policy().describe() is empty");
    Kernel k = make_kernel(env, "fill_u32");
    out.bind(k, 0);
    set_arg(k, 2, 0x1234U);
    const bool wants_event = views_wait_on_kernel_events(out);
    // docs/api.md, Allocation: use_host_ptr() is page-aligned memory the
    // tensor owns, "the one kind whose mapped pointer is stable".
    const bool stable_pointer = uses_host_ptr(out);
    const void* first_pointer = nullptr;
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      set_arg(k, 1, iter);
      {
        auto dev = out.device_access();
        if (dev.wait_count(env.queue) != 0 || dev.wait_list(env.queue) != nullptr)
          fail("iteration " + std::to_string(iter) + ": wait_count(own in-order queue) is " +
               std::to_string(dev.wait_count(env.queue)) + "; README says that list is empty");
        cl_event* slot = dev.event_slot(env.queue);
        if ((slot != nullptr) != wants_event)
          fail(std::string("event_slot(own in-order queue) is ") + (slot ? "not null" : "null") +
               " for a policy whose view " + (wants_event ? "waits" : "does not wait") +
               " on the kernels' events (README, Events and queues)");
        enqueue_1d(env.queue, k, n, dev.wait_count(env.queue), dev.wait_list(env.queue), slot);
      }
      auto view = out.read_view();
      expect_all("output", iter, view, n, [&](std::size_t i) { return value_u32(iter, i, 0x1234U); });
      if (stable_pointer) {
        const auto address = reinterpret_cast<std::uintptr_t>(view.data());
        if (address % 4096 != 0) fail("a use_host_ptr view's data() is not page-aligned");
        if (iter == 0) first_pointer = view.data();
        if (view.data() != first_pointer) fail("a use_host_ptr view's data() moved between inferences");
      }
    }
  }
}

// Input written by the host through write_view(), read by a kernel that
// writes a plain buffer, which the host reads back with clEnqueueReadBuffer.
template <class P>
void input_written_by_host_is_read_by_kernel(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    Tensor<P> in(env.context, env.queue, clzero::Shape{n}, clzero::Intent::input, opts);
    Buffer out = make_buffer(env, n * sizeof(std::uint32_t));
    Kernel k = make_kernel(env, "transform_u32");
    in.bind(k, 0);
    set_arg(k, 1, out.get());
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      {
        auto view = in.write_view();
        if (view.size() != n) fail("write_view().size() is " + std::to_string(view.size()));
        for (std::size_t i = 0; i < n; ++i) view[i] = value_u32(iter, i, 0xA11CEU);
      }
      set_arg(k, 2, iter);
      {
        auto dev = in.device_access();
        enqueue_1d(env.queue, k, n, dev.wait_count(env.queue), dev.wait_list(env.queue), dev.event_slot(env.queue));
      }
      const auto host = read_buffer(env.queue, out, n);
      expect_all("kernel output of the input", iter, host, n,
                 [&](std::size_t i) { return transformed(value_u32(iter, i, 0xA11CEU), iter, i); });
    }
  }
}

// An input written once and used again by every inference without a write
// keeps its contents (docs/api.md, the policy protocol: "an input used again
// without a write keeps them").
template <class P>
void an_input_used_again_without_a_write_keeps_its_contents(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    Tensor<P> in(env.context, env.queue, clzero::Shape{n}, clzero::Intent::input, opts);
    Buffer out = make_buffer(env, n * sizeof(std::uint32_t));
    Kernel k = make_kernel(env, "transform_u32");
    in.bind(k, 0);
    set_arg(k, 1, out.get());
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      const std::uint32_t written = iter / 10 * 10;  // the host writes every tenth inference only
      if (iter == written) {
        auto view = in.write_view();
        for (std::size_t i = 0; i < n; ++i) view[i] = value_u32(written, i, 0xB0U);
      }
      set_arg(k, 2, iter);
      {
        auto dev = in.device_access();
        enqueue_1d(env.queue, k, n, dev.wait_count(env.queue), dev.wait_list(env.queue), dev.event_slot(env.queue));
      }
      const auto host = read_buffer(env.queue, out, n);
      expect_all("kernel output of the reused input", iter, host, n,
                 [&](std::size_t i) { return transformed(value_u32(written, i, 0xB0U), iter, i); });
    }
  }
}

// The host writes input i+1 before it reads the result of inference i
// (docs/policies.md, CopyToPinned: "the host may write the next input while
// the kernel runs"): write_view() must not let the host overwrite what kernel
// i still reads. Results go to two plain buffers in turn, read on another
// queue after the kernel's own event only.
template <class P>
void the_next_input_is_written_while_the_previous_inference_runs(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    Tensor<P> in(env.context, env.queue, clzero::Shape{n}, clzero::Intent::input, opts);
    Buffer results[2] = {make_buffer(env, n * sizeof(std::uint32_t)), make_buffer(env, n * sizeof(std::uint32_t))};
    Event done[2];
    Kernel k = make_kernel(env, "transform_u32");
    in.bind(k, 0);
    auto check = [&](std::uint32_t iter) {
      std::vector<std::uint32_t> host(n);
      const cl_event wait = done[iter % 2];
      cl_check(clEnqueueReadBuffer(env.other_queue, results[iter % 2], CL_TRUE, 0, n * sizeof(std::uint32_t),
                                   host.data(), 1, &wait, nullptr),
               "clEnqueueReadBuffer");
      expect_all("result of an earlier input", iter, host, n,
                 [&](std::size_t i) { return transformed(value_u32(iter, i, 0xC5U), iter, i); });
    };
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      {
        auto view = in.write_view();  // inference iter-1 may still be running
        for (std::size_t i = 0; i < n; ++i) view[i] = value_u32(iter, i, 0xC5U);
      }
      set_arg(k, 1, results[iter % 2].get());
      set_arg(k, 2, iter);
      {
        auto dev = in.device_access();
        cl_event event = nullptr;
        enqueue_1d(env.queue, k, n, dev.wait_count(env.queue), dev.wait_list(env.queue), &event);
        dev.used_by(event);
        done[iter % 2] = Event(event);  // this program's own reference
      }
      cl_check(clFlush(env.queue), "clFlush");  // the read on the other queue waits on this queue's event
      if (iter > 0) check(iter - 1);
    }
    check(kIterations - 1);
  }
}

// Inout: the host writes every element, a kernel updates it in place, the
// host reads the result.
template <class P>
void inout_written_updated_and_read(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    Tensor<P> x(env.context, env.queue, clzero::Shape{n}, clzero::Intent::inout, opts);
    Kernel k = make_kernel(env, "update_u32");
    x.bind(k, 0);
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      {
        auto view = x.write_view();
        for (std::size_t i = 0; i < n; ++i) view[i] = value_u32(iter, i, 0x10U);
      }
      set_arg(k, 1, iter);
      {
        auto dev = x.device_access();
        enqueue_1d(env.queue, k, n, dev.wait_count(env.queue), dev.wait_list(env.queue), dev.event_slot(env.queue));
      }
      auto view = x.read_view();
      expect_all("inout", iter, view, n, [&](std::size_t i) { return updated(value_u32(iter, i, 0x10U), iter, i); });
    }
  }
}

// Inout written once: each inference's kernel updates the previous result,
// the host only reads (docs/api.md: a tensor used again without a write keeps
// its contents).
template <class P>
void inout_keeps_contents_when_host_only_reads(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    Tensor<P> x(env.context, env.queue, clzero::Shape{n}, clzero::Intent::inout, opts);
    std::vector<std::uint32_t> expected(n);
    {
      auto view = x.write_view();
      for (std::size_t i = 0; i < n; ++i) view[i] = expected[i] = value_u32(0, i, 0x20U);
    }
    Kernel k = make_kernel(env, "update_u32");
    x.bind(k, 0);
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      set_arg(k, 1, iter);
      {
        auto dev = x.device_access();
        enqueue_1d(env.queue, k, n, dev.wait_count(env.queue), dev.wait_list(env.queue), dev.event_slot(env.queue));
      }
      for (std::size_t i = 0; i < n; ++i) expected[i] = updated(expected[i], iter, i);
      auto view = x.read_view();
      expect_all("inout (host reads only)", iter, view, n, [&](std::size_t i) { return expected[i]; });
    }
  }
}

// Inout read by kernels with Access::read (docs/api.md: it may stay mapped
// while kernels only read it), with a writing access every fifth inference.
template <class P>
void inout_read_only_accesses_between_writes(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    Tensor<P> x(env.context, env.queue, clzero::Shape{n}, clzero::Intent::inout, opts);
    Buffer out = make_buffer(env, n * sizeof(std::uint32_t));
    Kernel reader = make_kernel(env, "transform_u32");
    Kernel writer = make_kernel(env, "update_u32");
    x.bind(reader, 0);
    x.bind(writer, 0);
    set_arg(reader, 1, out.get());
    std::vector<std::uint32_t> expected(n);
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      if (iter % 5 == 0) {  // the host writes, then a kernel updates in place
        {
          auto view = x.write_view();
          for (std::size_t i = 0; i < n; ++i) view[i] = expected[i] = value_u32(iter, i, 0x30U);
        }
        set_arg(writer, 1, iter);
        {
          auto dev = x.device_access();
          enqueue_1d(env.queue, writer, n, dev.wait_count(env.queue), dev.wait_list(env.queue),
                     dev.event_slot(env.queue));
        }
        for (std::size_t i = 0; i < n; ++i) expected[i] = updated(expected[i], iter, i);
      }
      set_arg(reader, 2, iter);
      {
        auto dev = x.device_access(clzero::Access::read);
        enqueue_1d(env.queue, reader, n, dev.wait_count(env.queue), dev.wait_list(env.queue),
                   dev.event_slot(env.queue));
      }
      const auto host = read_buffer(env.queue, out, n);
      expect_all("kernel reading the inout", iter, host, n,
                 [&](std::size_t i) { return transformed(expected[i], iter, i); });
      auto view = x.read_view();
      expect_all("inout after a read-only access", iter, view, n, [&](std::size_t i) { return expected[i]; });
    }
  }
}

// The README's out-of-order example, nearly verbatim: the host writes the
// input, one kernel reads it and writes the output; the kernel waits on the
// union of the tensors' lists and hands its event to both.
template <class P>
void out_of_order_queue_with_waits_and_used_by(const Env& env, const typename P::Options& opts) {
  if (!env.ooo_queue) throw Skip("DeviceCaps::out_of_order_queue is false");
  for (std::size_t n : kSizes) {
    Tensor<P> input(env.context, env.ooo_queue, clzero::Shape{n}, clzero::Intent::input, opts);
    Tensor<P> output(env.context, env.ooo_queue, clzero::Shape{n}, clzero::Intent::output, opts);
    Kernel kernel = make_kernel(env, "transform_u32");
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      {
        auto in = input.write_view();
        for (std::size_t i = 0; i < n; ++i) in[i] = value_u32(iter, i, 0x40U);
      }
      set_arg(kernel, 2, iter);
      {
        auto in = input.device_access();
        auto out = output.device_access();
        in.bind(kernel, 0);
        out.bind(kernel, 1);
        clzero::EventList waits;
        waits.append(in.waits());
        waits.append(out.waits());
        cl_event done = nullptr;
        enqueue_1d(env.ooo_queue, kernel, n, static_cast<cl_uint>(waits.count()), waits.data(), &done);
        in.used_by(done);
        out.used_by(done);
        clReleaseEvent(done);
      }
      auto view = output.read_view();
      expect_all("output", iter, view, n,
                 [&](std::size_t i) { return transformed(value_u32(iter, i, 0x40U), iter, i); });
    }
  }
}

// Out-of-order queue, the kernel waits on wait_list() but hands no event back:
// the docs promise a marker orders the host after everything enqueued.
template <class P>
void out_of_order_queue_without_events_handed_back(const Env& env, const typename P::Options& opts) {
  if (!env.ooo_queue) throw Skip("DeviceCaps::out_of_order_queue is false");
  for (std::size_t n : kSizes) {
    Tensor<P> out(env.context, env.ooo_queue, clzero::Shape{n}, clzero::Intent::output, opts);
    Kernel k = make_kernel(env, "fill_u32");
    set_arg(k, 2, 0x50U);
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      set_arg(k, 1, iter);
      {
        auto dev = out.device_access();
        dev.bind(k, 0);
        enqueue_1d(env.ooo_queue, k, n, dev.wait_count(), dev.wait_list(), nullptr);
      }
      auto view = out.read_view();
      expect_all("output", iter, view, n, [&](std::size_t i) { return value_u32(iter, i, 0x50U); });
    }
  }
}

// The kernel runs on another in-order queue: wait_list(other) and
// event_slot(other), which the README says is given for any queue but the
// tensor's own in-order one. The other queue is not flushed here: the docs say
// the access's end flushes the queue of every event handed in.
template <class P>
void kernel_on_another_queue_through_event_slot(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    Tensor<P> out(env.context, env.queue, clzero::Shape{n}, clzero::Intent::output, opts);
    Kernel k = make_kernel(env, "fill_u32");
    out.bind(k, 0);
    set_arg(k, 2, 0x60U);
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      set_arg(k, 1, iter);
      {
        auto dev = out.device_access();
        cl_event* slot = dev.event_slot(env.other_queue);
        if (slot == nullptr) fail("event_slot(another queue) is null; README says it is given for any other queue");
        enqueue_1d(env.other_queue, k, n, dev.wait_count(env.other_queue), dev.wait_list(env.other_queue), slot);
      }
      auto view = out.read_view();
      expect_all("output", iter, view, n, [&](std::size_t i) { return value_u32(iter, i, 0x60U); });
    }
  }
}

// Input and output on the tensors' queue, the kernel on another queue (the
// out-of-order one where the device has it): union of waits(), used_by().
template <class P>
void kernel_on_another_queue_with_input_and_output(const Env& env, const typename P::Options& opts) {
  const cl_command_queue kq = env.ooo_queue ? env.ooo_queue.get() : env.other_queue.get();
  for (std::size_t n : kSizes) {
    Tensor<P> input(env.context, env.queue, clzero::Shape{n}, clzero::Intent::input, opts);
    Tensor<P> output(env.context, env.queue, clzero::Shape{n}, clzero::Intent::output, opts);
    Kernel k = make_kernel(env, "transform_u32");
    input.bind(k, 0);
    output.bind(k, 1);
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      {
        auto in = input.write_view();
        for (std::size_t i = 0; i < n; ++i) in[i] = value_u32(iter, i, 0x70U);
      }
      set_arg(k, 2, iter);
      {
        auto in = input.device_access();
        auto out = output.device_access();
        clzero::EventList waits;
        waits.append(in.waits());
        waits.append(out.waits());
        cl_event done = nullptr;
        enqueue_1d(kq, k, n, static_cast<cl_uint>(waits.count()), waits.data(), &done);
        in.used_by(done);
        out.used_by(done);
        clReleaseEvent(done);
      }
      auto view = output.read_view();
      expect_all("output", iter, view, n,
                 [&](std::size_t i) { return transformed(value_u32(iter, i, 0x70U), iter, i); });
    }
  }
}

// One kernel object shared by two tensors, bound per access with
// DeviceAccess::bind (README: "A kernel shared by several tensors is bound per
// access instead").
template <class P>
void one_kernel_shared_by_two_tensors_bound_per_access(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    Tensor<P> a(env.context, env.queue, clzero::Shape{n}, clzero::Intent::output, opts);
    Tensor<P> b(env.context, env.queue, clzero::Shape{n}, clzero::Intent::output, opts);
    Kernel k = make_kernel(env, "fill_u32");
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      set_arg(k, 1, iter);
      for (auto [t, salt] : {std::pair<Tensor<P>*, std::uint32_t>{&a, 0xAAU}, {&b, 0xBBU}}) {
        auto dev = t->device_access();
        dev.bind(k, 0);
        set_arg(k, 2, salt);
        enqueue_1d(env.queue, k, n, dev.wait_count(env.queue), dev.wait_list(env.queue), dev.event_slot(env.queue));
      }
      auto va = a.read_view();
      auto vb = b.read_view();
      expect_all("tensor a", iter, va, n, [&](std::size_t i) { return value_u32(iter, i, 0xAAU); });
      expect_all("tensor b", iter, vb, n, [&](std::size_t i) { return value_u32(iter, i, 0xBBU); });
    }
  }
}

// Region views as another element type (docs/api.md, MappedTensor:
// read_view_as<U>(byte_offset, region), write_view_as<U>(byte_offset, region)).
// The region is given as a Shape of U elements.
template <class P>
void region_views_read_and_write_parts(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    const std::size_t h = n / 2;  // the first h elements as uint32, the rest as bytes
    const std::size_t tail_bytes = (n - h) * sizeof(std::uint32_t);
    auto byte_of = [](std::uint32_t v, std::size_t b) { return static_cast<std::uint8_t>(v >> (8 * (b % 4))); };
    // Output, read in two regions.
    Tensor<P> out(env.context, env.queue, clzero::Shape{n}, clzero::Intent::output, opts);
    Kernel fill = make_kernel(env, "fill_u32");
    out.bind(fill, 0);
    set_arg(fill, 2, 0x80U);
    // Inout, written in two regions, updated by a kernel, read whole.
    Tensor<P> x(env.context, env.queue, clzero::Shape{n}, clzero::Intent::inout, opts);
    Kernel update = make_kernel(env, "update_u32");
    x.bind(update, 0);
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      set_arg(fill, 1, iter);
      {
        auto dev = out.device_access();
        enqueue_1d(env.queue, fill, n, dev.wait_count(env.queue), dev.wait_list(env.queue), dev.event_slot(env.queue));
      }
      if (h > 0) {
        auto head = out.template read_view_as<std::uint32_t>(0, clzero::Shape{h});
        expect_all("read_view_as<uint32_t> head", iter, head, h,
                   [&](std::size_t i) { return value_u32(iter, i, 0x80U); });
      }
      {
        auto tail = out.read_view_as(h * sizeof(std::uint32_t), clzero::Shape{tail_bytes}, clzero::as<std::uint8_t>);
        expect_all("read_view_as<uint8_t> tail", iter, tail, tail_bytes, [&](std::size_t b) {
          return byte_of(value_u32(iter, h + b / 4, 0x80U), b);  // little-endian host and device
        });
      }

      if (h > 0) {
        auto head = x.template write_view_as<std::uint32_t>(0, clzero::Shape{h});
        for (std::size_t i = 0; i < h; ++i) head[i] = value_u32(iter, i, 0x90U);
      }
      {
        auto tail = x.write_view_as(h * sizeof(std::uint32_t), clzero::Shape{tail_bytes}, clzero::as<std::uint8_t>);
        for (std::size_t b = 0; b < tail_bytes; ++b) tail[b] = byte_of(value_u32(iter, h + b / 4, 0x90U), b);
      }
      set_arg(update, 1, iter);
      {
        auto dev = x.device_access();
        enqueue_1d(env.queue, update, n, dev.wait_count(env.queue), dev.wait_list(env.queue),
                   dev.event_slot(env.queue));
      }
      auto view = x.read_view();
      expect_all("inout written through two region views", iter, view, n,
                 [&](std::size_t i) { return updated(value_u32(iter, i, 0x90U), iter, i); });
    }
  }
}

// A TensorRing: inference i+1 (and more) is enqueued before the host reads i.
// A ring of one slot is "a lone tensor with that guarantee" (docs/api.md).
// On the out-of-order queue each kernel waits on wait_list(queue) and gives
// its event through event_slot(queue).
template <class P>
void ring_reads_each_inference_while_the_next_runs(const Env& env, const typename P::Options& opts) {
  std::vector<cl_command_queue> queues{env.queue};
  if (env.ooo_queue) queues.push_back(env.ooo_queue);
  for (cl_command_queue q : queues) {
    for (std::size_t slots : {1, 2, 3}) {
      for (std::size_t n : kSizes) {
        clzero::TensorRing<std::uint32_t, P> ring(env.context, q, clzero::Shape{n}, clzero::Intent::output, slots,
                                                  opts);
        if (ring.slots() != slots) fail("slots() is " + std::to_string(ring.slots()));
        Kernel k = make_kernel(env, "fill_u32");
        set_arg(k, 2, 0xC0U);
        const std::size_t depth = slots - 1;  // inferences in flight while the host reads
        for (std::size_t step = 0; step < kIterations + depth; ++step) {
          if (step < kIterations) {
            auto& t = ring[step];
            set_arg(k, 1, static_cast<std::uint32_t>(step));
            auto dev = t.device_access();
            dev.bind(k, 0);
            if (q == env.queue.get())
              enqueue_1d(q, k, n, dev.wait_count(q), dev.wait_list(q), dev.event_slot(q));
            else if (cl_event* slot = dev.event_slot(q))  // the tensor's own queue, but out of order
              enqueue_1d(q, k, n, dev.wait_count(q), dev.wait_list(q), slot);
            else
              fail(
                  "event_slot(out-of-order queue) is null; README: it is given for any queue but the tensor's "
                  "own in-order one");
          }
          if (step >= depth) {
            const auto iter = static_cast<std::uint32_t>(step - depth);
            auto view = ring[iter].read_view();
            expect_all(("ring of " + std::to_string(slots) + (q == env.queue.get() ? "" : " (out-of-order)")).c_str(),
                       iter, view, n, [&](std::size_t i) { return value_u32(iter, i, 0xC0U); });
          }
        }
      }
    }
  }
}

// A TensorArena of three outputs of different element types, one kernel
// writing all of them, parts bound with Part{i}, read with read_view<T>(i).
template <class P>
void arena_outputs_are_fresh_every_inference(const Env& env, const typename P::Options& opts) {
  struct Dims {
    std::size_t rows, classes, tail;
  };
  std::vector<cl_command_queue> queues{env.queue};
  if (env.ooo_queue) queues.push_back(env.ooo_queue);
  for (cl_command_queue q : queues) {
    for (Dims d : {Dims{1, 3, 5}, Dims{250, 10, 1001}, Dims{4096, 80, 1001}}) {
      clzero::TensorArena<P> arena(
          env.context, q,
          {clzero::ArenaPart::of<float>({d.rows, 4}), clzero::ArenaPart::of<std::uint32_t>({d.rows, d.classes}),
           clzero::ArenaPart::of<std::uint8_t>({d.tail})},
          clzero::Intent::output, opts);
      if (arena.parts() != 3) fail("parts() is " + std::to_string(arena.parts()));
      // Parts aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN; one sub-buffer per part
      // for buffer-backed policies, none for SVM and USM (docs/api.md).
      const std::size_t align = env.caps.mem_base_addr_align_bits / 8;
      const bool has_buffer = arena.tensor().buffer() != nullptr;
      for (std::size_t i = 0; i < arena.parts(); ++i) {
        if (align && arena.offset(i) % align != 0)
          fail("part " + std::to_string(i) + " at offset " + std::to_string(arena.offset(i)) +
               " is not aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN (" + std::to_string(align) + " bytes)");
        if ((arena.sub_buffer(i) != nullptr) != has_buffer) fail("sub_buffer(" + std::to_string(i) + ") null-ness");
      }
      const auto nb = static_cast<std::uint32_t>(d.rows * 4), ns = static_cast<std::uint32_t>(d.rows * d.classes),
                 nt = static_cast<std::uint32_t>(d.tail);
      Kernel k = make_kernel(env, "heads");
      set_arg(k, 1, nb);
      set_arg(k, 3, ns);
      set_arg(k, 5, nt);
      for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
        set_arg(k, 6, iter);
        {
          auto dev = arena.device_access();
          dev.bind(k, 0, clzero::Part{0});
          dev.bind(k, 2, clzero::Part{1});
          dev.bind(k, 4, clzero::Part{2});
          if (q == env.queue.get()) {
            enqueue_1d(q, k, std::max({nb, ns, nt}), dev.wait_count(q), dev.wait_list(q), dev.event_slot(q));
          } else {  // out of order: the access's waits, the kernel's event handed back
            clzero::EventList waits;
            waits.append(dev.waits());
            cl_event done = nullptr;
            enqueue_1d(q, k, std::max({nb, ns, nt}), static_cast<cl_uint>(waits.count()), waits.data(), &done);
            dev.used_by(done);
            clReleaseEvent(done);
          }
        }
        auto boxes = arena.template read_view<float>(0);
        auto scores = arena.read_view(1, clzero::as<std::uint32_t>);
        auto tail = arena.template read_view<std::uint8_t>(2);
        expect_all("boxes", iter, boxes, nb, [&](std::size_t i) { return value_f32(iter, i); });
        expect_all("scores", iter, scores, ns, [&](std::size_t i) { return value_u32(iter, i, 0x5C0E5U); });
        expect_all("tail", iter, tail, nt, [&](std::size_t i) { return value_u8(iter, i); });
        // Multi-index access with the part's shape.
        if (scores(d.rows - 1, d.classes - 1) != value_u32(iter, ns - 1, 0x5C0E5U))
          fail("scores(rows-1, classes-1) is not the last element");
      }
    }
  }
}

// An input arena: the host writes each part through write_view<T>(i), one
// kernel reads both parts into a plain buffer.
template <class P>
void arena_inputs_written_per_part_are_read_by_kernel(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    const std::size_t nbytes = n + 13;  // an odd-sized byte part
    clzero::TensorArena<P> arena(
        env.context, env.queue,
        {clzero::ArenaPart::of<std::uint32_t>({n}), clzero::ArenaPart::of<std::uint8_t>({nbytes})},
        clzero::Intent::input, opts);
    Buffer out = make_buffer(env, (n + nbytes) * sizeof(std::uint32_t));
    Kernel k = make_kernel(env, "join_parts");
    set_arg(k, 1, static_cast<std::uint32_t>(n));
    set_arg(k, 3, static_cast<std::uint32_t>(nbytes));
    set_arg(k, 4, out.get());
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      {
        auto a = arena.template write_view<std::uint32_t>(0);
        for (std::size_t i = 0; i < n; ++i) a[i] = value_u32(iter, i, 0xD0U);
      }
      {
        auto b = arena.write_view(1, clzero::as<std::uint8_t>);
        for (std::size_t i = 0; i < nbytes; ++i) b[i] = value_u8(iter, i);
      }
      {
        auto dev = arena.device_access();
        dev.bind(k, 0, clzero::Part{0});
        dev.bind(k, 2, clzero::Part{1});
        enqueue_1d(env.queue, k, n + nbytes, dev.wait_count(env.queue), dev.wait_list(env.queue),
                   dev.event_slot(env.queue));
      }
      const auto host = read_buffer(env.queue, out, n + nbytes);
      expect_all("kernel output of the arena", iter, host, n + nbytes, [&](std::size_t i) {
        return i < n ? value_u32(iter, i, 0xD0U) * 5U + 1U : std::uint32_t{value_u8(iter, i - n)} * 7U + 1U;
      });
    }
  }
}

// A library call that takes no wait list, after dev.enqueue_barrier(its
// queue) (README, run_library): on its own in-order queue, and on the tensor's
// own out-of-order queue (docs/porting.md: "Libraries that enqueue on your
// queue but take no wait list ... need a barrier first"). Buffer-backed
// policies only: the "library" takes the cl_mem from dev.buffer().
template <class P>
void library_without_wait_list_after_enqueue_barrier(const Env& env, const typename P::Options& opts) {
  struct Placement {
    cl_command_queue tensor_queue, library_queue;
    const char* what;
  };
  std::vector<Placement> placements{{env.queue, env.other_queue, "library on its own queue"}};
  if (env.ooo_queue) placements.push_back({env.ooo_queue, env.ooo_queue, "library on the tensor's out-of-order queue"});
  for (const Placement& where : placements) {
    for (std::size_t n : kSizes) {
      Tensor<P> output(env.context, where.tensor_queue, clzero::Shape{n}, clzero::Intent::output, opts);
      if (!buffer_backed(output)) fail("the tensor has no cl_mem: not a buffer-backed policy");
      Kernel library_kernel = make_kernel(env, "fill_u32");
      set_arg(library_kernel, 2, 0xE0U);
      for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
        {
          auto out = output.device_access();
          out.enqueue_barrier(where.library_queue);
          cl_event done = nullptr;
          // What a library does inside its call: its own arguments, no wait list.
          cl_mem buffer = out.buffer();
          set_arg(library_kernel, 0, buffer);
          set_arg(library_kernel, 1, iter);
          enqueue_1d(where.library_queue, library_kernel, n, 0, nullptr, &done);
          out.used_by(done);
          clReleaseEvent(done);
        }
        auto view = output.read_view();
        expect_all(where.what, iter, view, n, [&](std::size_t i) { return value_u32(iter, i, 0xE0U); });
      }
    }
  }
}

// Two device accesses in a row with no view between, on an out-of-order queue,
// kernels waiting on wait_list() and handing no event back (docs: wait_list()
// "also holds the previous access's commands on this tensor"). The second
// kernel's values must be the ones the host sees.
template <class P>
void back_to_back_accesses_on_an_out_of_order_queue(const Env& env, const typename P::Options& opts) {
  if (!env.ooo_queue) throw Skip("DeviceCaps::out_of_order_queue is false");
  for (std::size_t n : kSizes) {
    Tensor<P> out(env.context, env.ooo_queue, clzero::Shape{n}, clzero::Intent::output, opts);
    Kernel first = make_kernel(env, "fill_u32");
    Kernel second = make_kernel(env, "fill_u32");
    set_arg(first, 2, 0x1111U);
    set_arg(second, 2, 0x2222U);
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      for (cl_kernel k : {first.get(), second.get()}) {
        set_arg(k, 1, iter);
        auto dev = out.device_access();
        dev.bind(k, 0);
        enqueue_1d(env.ooo_queue, k, n, dev.wait_count(), dev.wait_list(), nullptr);
      }
      auto view = out.read_view();
      expect_all("output of the second access", iter, view, n,
                 [&](std::size_t i) { return value_u32(iter, i, 0x2222U); });
    }
  }
}

// A view keeps the tensor's state alive, "so it never dangles, even after the
// MappedTensor is destroyed" (docs/api.md, HostView).
template <class P>
void a_view_outlives_its_destroyed_tensor(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    Kernel k = make_kernel(env, "fill_u32");
    set_arg(k, 2, 0x4444U);
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      std::optional<clzero::HostView<const std::uint32_t>> view;
      {
        Tensor<P> out(env.context, env.queue, clzero::Shape{n}, clzero::Intent::output, opts);
        set_arg(k, 1, iter);
        {
          auto dev = out.device_access();
          dev.bind(k, 0);
          enqueue_1d(env.queue, k, n, dev.wait_count(env.queue), dev.wait_list(env.queue), dev.event_slot(env.queue));
        }
        view.emplace(out.read_view());
      }  // the tensor is destroyed here; the view lives on
      expect_all("view of a destroyed tensor", iter, *view, n,
                 [&](std::size_t i) { return value_u32(iter, i, 0x4444U); });
    }
  }
}

// docs/api.md, DeviceAccess: "assigning to an open access ends it first (as
// its destructor would), then takes the other, which is left ended".
template <class P>
void a_move_assigned_device_access_ends_the_old_one(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    Tensor<P> a(env.context, env.queue, clzero::Shape{n}, clzero::Intent::output, opts);
    Tensor<P> b(env.context, env.queue, clzero::Shape{n}, clzero::Intent::output, opts);
    Kernel ka = make_kernel(env, "fill_u32");
    Kernel kb = make_kernel(env, "fill_u32");
    a.bind(ka, 0);
    b.bind(kb, 0);
    set_arg(ka, 2, 0xAU);
    set_arg(kb, 2, 0xBU);
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      set_arg(ka, 1, iter);
      set_arg(kb, 1, iter);
      auto held = a.device_access();  // an engine keeps its access in a member
      enqueue_1d(env.queue, ka, n, held.wait_count(env.queue), held.wait_list(env.queue), held.event_slot(env.queue));
      auto next = b.device_access();
      held = std::move(next);  // ends a's access, takes b's
      if (next.open()) fail("the moved-from access is still open");
      if (!held.open()) fail("the assigned access is not open");
      enqueue_1d(env.queue, kb, n, held.wait_count(env.queue), held.wait_list(env.queue), held.event_slot(env.queue));
      {
        auto va = a.read_view();  // a is host-owned again
        expect_all("tensor a", iter, va, n, [&](std::size_t i) { return value_u32(iter, i, 0xAU); });
      }
      held.end();
      auto vb = b.read_view();
      expect_all("tensor b", iter, vb, n, [&](std::size_t i) { return value_u32(iter, i, 0xBU); });
    }
  }
}

// Moving a tensor while a view (even iterations) or a device access (odd
// iterations) is alive (docs/api.md: "views and accesses survive the move";
// docs/reliability.md: "Moving a tensor with a live view is allowed by design").
template <class P>
void moving_a_tensor_keeps_live_views_and_accesses(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    Tensor<P> a(env.context, env.queue, clzero::Shape{n}, clzero::Intent::output, opts);
    Kernel k = make_kernel(env, "fill_u32");
    set_arg(k, 2, 0xF0U);
    auto check = [&](std::uint32_t iter, const auto& view, const char* what) {
      expect_all(what, iter, view, n, [&](std::size_t i) { return value_u32(iter, i, 0xF0U); });
    };
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      set_arg(k, 1, iter);
      if (iter % 2 == 0) {
        {
          auto dev = a.device_access();
          dev.bind(k, 0);
          enqueue_1d(env.queue, k, n, dev.wait_count(env.queue), dev.wait_list(env.queue), dev.event_slot(env.queue));
        }
        auto view = a.read_view();
        Tensor<P> b(std::move(a));  // the view stays valid
        check(iter, view, "view opened before the move");
        if (a) fail("a moved-from tensor converts to true");
        expect_error(clzero::ErrorKind::misuse, "read_view() of a moved-from tensor", [&] { auto v = a.read_view(); });
        view.reset();
        a = std::move(b);  // move-assign back; the loop goes on with `a`
      } else {
        auto dev = a.device_access();
        Tensor<P> b(std::move(a));  // the access stays valid
        dev.bind(k, 0);
        enqueue_1d(env.queue, k, n, dev.wait_count(env.queue), dev.wait_list(env.queue), dev.event_slot(env.queue));
        dev.end();
        auto view = b.read_view();
        check(iter, view, "view after an access that outlived a move");
        view.reset();
        a = std::move(b);
      }
    }
  }
}

// host_ready() never blocks and eventually says a view would open without
// blocking; the view then shows the fresh data.
template <class P>
void host_ready_turns_true_without_blocking(const Env& env, const typename P::Options& opts) {
  for (std::size_t n : kSizes) {
    Tensor<P> out(env.context, env.queue, clzero::Shape{n}, clzero::Intent::output, opts);
    Kernel k = make_kernel(env, "fill_u32");
    out.bind(k, 0);
    set_arg(k, 2, 0x77U);
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      set_arg(k, 1, iter);
      {
        auto dev = out.device_access();
        enqueue_1d(env.queue, k, n, dev.wait_count(env.queue), dev.wait_list(env.queue), dev.event_slot(env.queue));
      }
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!out.host_ready()) {
        if (std::chrono::steady_clock::now() > deadline)
          fail("iteration " + std::to_string(iter) + ": host_ready() still false after 20 s");
        std::this_thread::yield();
      }
      auto view = out.read_view();
      expect_all("output", iter, view, n, [&](std::size_t i) { return value_u32(iter, i, 0x77U); });
    }
  }
}

// ---------------------------------------------------------------------------
// Scenarios that are not per policy

// Misuse of the ownership rule throws ErrorKind::misuse and changes nothing
// (README, "Recovering from errors"): every inference stays fresh.
void misuse_is_refused_and_changes_nothing(const Env& env) {
  for (std::size_t n : kSizes) {
    clzero::MappedTensor<std::uint32_t> out(env.context, env.queue, clzero::Shape{n}, clzero::Intent::output);
    clzero::MappedTensor<std::uint32_t> in(env.context, env.queue, clzero::Shape{n}, clzero::Intent::input);
    Buffer copy = make_buffer(env, n * sizeof(std::uint32_t));
    Kernel fill = make_kernel(env, "fill_u32");
    Kernel transform = make_kernel(env, "transform_u32");
    out.bind(fill, 0);
    set_arg(fill, 2, 0x99U);
    in.bind(transform, 0);
    set_arg(transform, 1, copy.get());
    for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
      set_arg(fill, 1, iter);
      set_arg(transform, 2, iter);
      {
        auto w = in.write_view();
        for (std::size_t i = 0; i < n; ++i) w[i] = value_u32(iter, i, 0x98U);
        if (iter % 4 == 3)
          expect_error(clzero::ErrorKind::misuse, "device_access() while a write view lives",
                       [&] { auto d = in.device_access(); });
      }
      {
        auto dev = out.device_access();
        if (iter % 4 == 0)
          expect_error(clzero::ErrorKind::misuse, "read_view() while an access is open",
                       [&] { auto v = out.read_view(); });
        enqueue_1d(env.queue, fill, n, dev.wait_count(env.queue), dev.wait_list(env.queue), dev.event_slot(env.queue));
      }
      {
        auto dev = in.device_access();
        enqueue_1d(env.queue, transform, n, dev.wait_count(env.queue), dev.wait_list(env.queue),
                   dev.event_slot(env.queue));
      }
      if (iter % 4 == 1)
        expect_error(clzero::ErrorKind::misuse, "write_view() of an output", [&] { auto v = out.write_view(); });
      if (iter % 4 == 2)
        expect_error(clzero::ErrorKind::misuse, "read_view() of an input", [&] { auto v = in.read_view(); });
      auto view = out.read_view();
      if (iter % 4 == 3)
        expect_error(clzero::ErrorKind::misuse, "device_access() while a read view lives",
                     [&] { auto d = out.device_access(); });
      expect_all("output", iter, view, n, [&](std::size_t i) { return value_u32(iter, i, 0x99U); });
      const auto host = read_buffer(env.queue, copy, n);
      expect_all("kernel output of the input", iter, host, n,
                 [&](std::size_t i) { return transformed(value_u32(iter, i, 0x98U), iter, i); });
      if (!out.usable() || !in.usable()) fail("a misuse left a tensor unusable");
    }
  }
}

// Bad arguments are refused with clzero::Error whose message gives the remedy
// docs/reliability.md quotes verbatim ("Misuse and bad input").
void bad_arguments_are_refused_with_the_documented_remedies(const Env& env) {
  auto expect_remedy = [](const std::string& what, const std::string& remedy, auto body) {
    try {
      body();
    } catch (const clzero::Error& e) {
      if (std::string(e.what()).find(remedy) == std::string::npos)
        fail(what + ": the message lacks the documented remedy \"" + remedy + "\": " + e.what());
      if (std::strncmp(e.what(), "clzero: ", 8) != 0) fail(what + ": the message does not start with \"clzero: \"");
      return;
    }
    fail(what + ": no clzero::Error was thrown");
  };
  const std::size_t huge = std::numeric_limits<std::size_t>::max();
  if (std::string(clzero::error_name(CL_MAP_FAILURE)) != "CL_MAP_FAILURE")
    fail(std::string("error_name(-12) is ") + clzero::error_name(CL_MAP_FAILURE));
  if (std::string(CLZERO_VERSION_STRING) != std::to_string(CLZERO_VERSION_MAJOR) + "." +
                                                std::to_string(CLZERO_VERSION_MINOR) + "." +
                                                std::to_string(CLZERO_VERSION_PATCH))
    fail("CLZERO_VERSION_STRING does not match the version integers");
  expect_remedy("Shape with an extent of 0", "give every axis an extent of 1 or more", [] { clzero::Shape s{4, 0}; });
  expect_remedy("Shape with a negative extent", "extent 1 is -3", [] {
    int negative = -3;
    clzero::Shape s{2, negative};
  });
  expect_remedy("Shape of rank 0", "give at least one extent, e.g. {1}", [] {
    std::vector<int> none;
    clzero::Shape s(none.begin(), none.end());
  });
  expect_remedy("Shape of rank 9", "flatten adjacent axes into one",
                [] { clzero::Shape s{1, 1, 1, 1, 1, 1, 1, 1, 1}; });
  expect_remedy("Shape whose element count overflows", "split the tensor into smaller ones", [&] {
    clzero::Shape s{huge, 2};
  });
  expect_remedy("MappedTensor whose bytes overflow", "split the tensor into smaller ones", [&] {
    clzero::MappedTensor<std::uint32_t> t(env.context, env.queue, clzero::Shape{huge / 2}, clzero::Intent::output);
  });
  expect_remedy("DeviceCaps::query(nullptr)", "pass a device from clGetDeviceIDs or the queue's",
                [] { clzero::DeviceCaps::query(nullptr); });
  expect_remedy("TensorRing of 0 slots", "use 2 or more to overlap inferences", [&] {
    clzero::TensorRing<std::uint32_t> r(env.context, env.queue, clzero::Shape{4}, clzero::Intent::output, 0, {});
  });
  expect_remedy("TensorArena without parts", "pass one ArenaPart per tensor", [&] {
    clzero::TensorArena<> a(env.context, env.queue, std::vector<clzero::ArenaPart>{}, clzero::Intent::output);
  });

  clzero::TensorArena<> arena(env.context, env.queue,
                              {clzero::ArenaPart::of<float>({3, 4}), clzero::ArenaPart::of<std::uint8_t>({5})},
                              clzero::Intent::output);
  expect_remedy("arena read_view past the last part", "use an index below parts()",
                [&] { auto v = arena.read_view<float>(2); });
  expect_remedy("arena read_view with another element size", "use an element type of that size",
                [&] { auto v = arena.read_view<double>(0); });

  clzero::MappedTensor<std::uint32_t> t(env.context, env.queue, clzero::Shape{2, 8}, clzero::Intent::output);
  expect_remedy("DeviceAccess::bind with a null kernel", "pass a kernel from clCreateKernel", [&] {
    auto dev = t.device_access();
    dev.bind(nullptr, 0);
  });
  Kernel k = make_kernel(env, "fill_u32");
  if (t.buffer() == nullptr) {  // byte offsets are for pointer-backed tensors only
    expect_remedy("DeviceAccess::bind past the tensor", "pass an offset inside the tensor", [&] {
      auto dev = t.device_access();
      dev.bind(k, 0, t.bytes() + 4);
    });
  }
  expect_remedy("read_view_as of a misaligned region",
                "choose an offset aligned to the element type and a region inside the tensor",
                [&] { auto v = t.read_view_as<std::uint32_t>(2, clzero::Shape{1}); });
  expect_remedy("read_view_as past the end",
                "choose an offset aligned to the element type and a region inside the tensor",
                [&] { auto v = t.read_view_as<std::uint32_t>(60, clzero::Shape{2}); });
  {
    auto v = t.read_view();
    expect_remedy("HostView::at past the end", "check the index against size()", [&] { (void)v.at(16); });
    expect_remedy("HostView::operator() with one index for two axes", "pass one index per axis", [&] { (void)v(1); });
    expect_remedy("HostView::operator() out of range", "check each index against shape()", [&] { (void)v(0, 8); });
    if (v(1, 7) != 0 || v.at(15) != 0) fail("a new output does not read as zeros");
    v.reset();
    expect_remedy("HostView::at after reset()", "open a new one with read_view() or write_view()",
                  [&] { (void)v.at(0); });
  }
  // None of the above changed the tensor: an inference is still fresh.
  t.bind(k, 0);
  for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
    set_arg(k, 1, iter);
    set_arg(k, 2, 0x55U);
    {
      auto dev = t.device_access();
      enqueue_1d(env.queue, k, t.size(), dev.wait_count(env.queue), dev.wait_list(env.queue),
                 dev.event_slot(env.queue));
    }
    auto v = t.read_view();
    expect_all("output after the refused calls", iter, v, 16, [&](std::size_t i) { return value_u32(iter, i, 0x55U); });
  }
}

// docs/api.md, MappedTensor: "Every error message starts with `clzero: ` and
// what was called, as `Class::member`". Every mismatch is listed.
void error_messages_name_the_call(const Env& env) {
  std::string mismatches;
  auto expect_prefix = [&](const std::string& prefix, auto body) {
    try {
      body();
      mismatches += " [" + prefix + "... did not throw]";
    } catch (const clzero::Error& e) {
      if (std::string(e.what()).compare(0, prefix.size(), prefix) != 0)
        mismatches += " [expected \"" + prefix + "...\", got \"" + e.what() + "\"]";
    }
  };
  clzero::MappedTensor<std::uint32_t> t(env.context, env.queue, clzero::Shape{4}, clzero::Intent::output);
  clzero::policy::Persistent::Options o;
  clzero::MappedTensor<std::uint32_t, clzero::policy::Persistent> buffer_backed(
      env.context, env.queue, clzero::Shape{4}, clzero::Intent::output, o);
  clzero::TensorArena<> arena(env.context, env.queue, {clzero::ArenaPart::of<float>({4})}, clzero::Intent::output);
  Kernel k = make_kernel(env, "fill_u32");
  expect_prefix("clzero: MappedTensor::device_access: ", [&] {
    auto v = t.read_view();
    auto d = t.device_access();
  });
  expect_prefix("clzero: MappedTensor::read_view: ", [&] {
    auto d = t.device_access();
    auto v = t.read_view();
  });
  expect_prefix("clzero: MappedTensor::write_view: ", [&] { auto v = t.write_view(); });
  expect_prefix("clzero: MappedTensor::read_view_as: ",
                [&] { auto v = t.read_view_as<std::uint32_t>(2, clzero::Shape{1}); });
  expect_prefix("clzero: MappedTensor::write_view_as: ",
                [&] { auto v = t.write_view_as<std::uint32_t>(0, clzero::Shape{1}); });
  expect_prefix("clzero: MappedTensor::bind: ", [&] { t.bind(k, 0, 64); });
  expect_prefix("clzero: DeviceAccess::bind: ", [&] {
    auto d = t.device_access();
    d.bind(nullptr, 0);
  });
  expect_prefix("clzero: DeviceAccess::bind: ", [&] {
    auto d = buffer_backed.device_access();
    d.bind(k, 0, 4);  // "a byte offset only for pointer-backed tensors"
  });
  expect_prefix("clzero: MappedTensor::bind: ", [&] { buffer_backed.bind(k, 0, 4); });
  expect_prefix("clzero: DeviceAccess::wait_list: ", [&] {
    auto d = t.device_access();
    d.end();
    (void)d.wait_list();
  });
  expect_prefix("clzero: TensorArena::read_view: ", [&] { auto v = arena.read_view<float>(3); });
  expect_prefix("clzero: HostView::at: ", [&] {
    auto v = t.read_view();
    (void)v.at(4);
  });
  if (!mismatches.empty()) fail("messages that do not start with the call:" + mismatches);
}

// docs/api.md: an empty tensor's size() and bytes() are 0 and the other
// queries throw ErrorKind::misuse; so does every use.
void an_empty_tensor_answers_as_documented(const Env& env) {
  clzero::MappedTensor<std::uint32_t> empty;
  if (empty) fail("a default-constructed tensor converts to true");
  if (empty.size() != 0 || empty.bytes() != 0) fail("size() or bytes() of an empty tensor is not 0");
  using clzero::ErrorKind;
  expect_error(ErrorKind::misuse, "shape()", [&] { (void)empty.shape(); });
  expect_error(ErrorKind::misuse, "intent()", [&] { (void)empty.intent(); });
  expect_error(ErrorKind::misuse, "policy()", [&] { (void)empty.policy(); });
  expect_error(ErrorKind::misuse, "buffer()", [&] { (void)empty.buffer(); });
  expect_error(ErrorKind::misuse, "context()", [&] { (void)empty.context(); });
  expect_error(ErrorKind::misuse, "queue()", [&] { (void)empty.queue(); });
  expect_error(ErrorKind::misuse, "host_ready()", [&] { (void)empty.host_ready(); });
  expect_error(ErrorKind::misuse, "device_access()", [&] { auto d = empty.device_access(); });
  expect_error(ErrorKind::misuse, "read_view()", [&] { auto v = empty.read_view(); });
  Kernel k = make_kernel(env, "fill_u32");
  expect_error(ErrorKind::misuse, "bind()", [&] { empty.bind(k, 0); });
  // Moved into later, it works.
  empty = clzero::MappedTensor<std::uint32_t>(env.context, env.queue, clzero::Shape{7}, clzero::Intent::output);
  empty.bind(k, 0);
  set_arg(k, 2, 0x66U);
  for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
    set_arg(k, 1, iter);
    {
      auto dev = empty.device_access();
      enqueue_1d(env.queue, k, 7, dev.wait_count(env.queue), dev.wait_list(env.queue), dev.event_slot(env.queue));
    }
    auto v = empty.read_view();
    expect_all("tensor moved into an empty one", iter, v, 7, [&](std::size_t i) { return value_u32(iter, i, 0x66U); });
  }
}

// README, Threads: different tensors may be used from different threads.
// Each thread has its own queue, kernel and tensor.
void two_threads_with_their_own_tensors(const Env& env) {
  std::string errors[2];
  auto worker = [&](int t) {
    try {
      Queue q = make_queue(env, false);
      Kernel k = make_kernel(env, "fill_u32");
      const std::uint32_t salt = 0x7000U + static_cast<std::uint32_t>(t);
      for (std::size_t n : kSizes) {
        clzero::MappedTensor<std::uint32_t> out(env.context, q, clzero::Shape{n}, clzero::Intent::output);
        out.bind(k, 0);
        set_arg(k, 2, salt);
        for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
          set_arg(k, 1, iter);
          {
            auto dev = out.device_access();
            enqueue_1d(q, k, n, dev.wait_count(q), dev.wait_list(q), dev.event_slot(q));
          }
          auto v = out.read_view();
          expect_all("thread's output", iter, v, n, [&](std::size_t i) { return value_u32(iter, i, salt); });
        }
      }
    } catch (const std::exception& e) {
      errors[t] = "thread " + std::to_string(t) + ": " + e.what();
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  for (const std::string& e : errors)
    if (!e.empty()) fail(e);
}

// docs/api.md, DLPack: to_dlpack() owns the view; until its deleter runs the
// tensor stays host-owned and device_access() throws.
void a_dlpack_tensor_keeps_the_output_host_owned(const Env& env) {
#if FROM_DOCS_HAVE_DLPACK
  const std::size_t rows = 7, cols = 149;  // 4172 bytes
  clzero::MappedTensor<std::uint32_t> out(env.context, env.queue, clzero::Shape{rows, cols}, clzero::Intent::output);
  Kernel k = make_kernel(env, "fill_u32");
  out.bind(k, 0);
  set_arg(k, 2, 0xD1U);
  for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
    set_arg(k, 1, iter);
    {
      auto dev = out.device_access();
      enqueue_1d(env.queue, k, rows * cols, dev.wait_count(env.queue), dev.wait_list(env.queue),
                 dev.event_slot(env.queue));
    }
    DLManagedTensor* m = clzero::interop::to_dlpack(out.read_view());
    const DLTensor& t = m->dl_tensor;
    std::string problem;
    if (t.ndim != 2 || t.shape[0] != std::int64_t(rows) || t.shape[1] != std::int64_t(cols))
      problem = "shape is not {7, 149}";
    else if (t.strides && (t.strides[0] != std::int64_t(cols) || t.strides[1] != 1))
      problem = "strides are not row-major";
    else if (t.dtype.code != kDLUInt || t.dtype.bits != 32 || t.dtype.lanes != 1)
      problem = "dtype is not uint32";
    else if (t.device.device_type != kDLCPU || t.byte_offset != 0)
      problem = "not kDLCPU with byte_offset 0";
    try {
      auto dev = out.device_access();
      problem = "device_access() succeeded while a DLPack tensor owned a view";
    } catch (const clzero::Error& e) {
      if (e.kind() != clzero::ErrorKind::misuse) problem = std::string("device_access() threw ") + kind_name(e.kind());
    }
    const auto* data = static_cast<const std::uint32_t*>(t.data);
    for (std::size_t i = 0; problem.empty() && i < rows * cols; ++i)
      if (data[i] != value_u32(iter, i, 0xD1U))
        problem = "iteration " + std::to_string(iter) + ", index " + std::to_string(i) + ": expected " +
                  show(value_u32(iter, i, 0xD1U)) + ", got " + show(data[i]);
    m->deleter(m);  // gives the tensor back
    if (!problem.empty()) fail(problem);
  }
#else
  (void)env;
  throw Skip("dlpack/dlpack.h is not installed");
#endif
}

// README, Views wait: set_spin_wait(0ns) never polls; the views still show
// every inference. The default (100 µs) is restored afterwards.
void views_without_polling_are_fresh(const Env& env) {
  clzero::set_spin_wait(std::chrono::nanoseconds(0));
  struct Restore {
    ~Restore() { clzero::set_spin_wait(std::chrono::microseconds(100)); }
  } restore;
  output_is_fresh_every_inference<clzero::policy::Auto>(env, {});
  clzero::policy::MapPerInference::Options o;
  output_is_fresh_every_inference<clzero::policy::MapPerInference>(env, o);
}

// Auto's choice follows docs/policies.md's rules for this device, is the one
// policy::choose() gives, and explains itself.
void auto_follows_the_documented_rules(const Env& env) {
  using clzero::policy::Choice;
  const clzero::DeviceCaps& caps = env.caps;
  for (clzero::Intent intent : {clzero::Intent::output, clzero::Intent::input, clzero::Intent::inout}) {
    clzero::policy::Auto::Options options;
    options.measure = false;
    clzero::MappedTensor<std::uint32_t> t(env.context, env.queue, clzero::Shape{1000}, intent, options);
    const Choice& c = t.policy().choice();
    const std::string label = c.label();
    if (label.empty() || c.reason.empty()) fail("choice().label() or .reason is empty");
    const Choice rule = clzero::policy::choose(caps, intent);
    if (!(c == rule)) fail("Auto chose " + label + ", policy::choose() says " + rule.label());
    if (caps.host_unified_memory) {  // the first three rows of the rules table
      const bool ok = caps.svm_fine_grain_buffer ? (c.kind == Choice::Kind::svm && c.svm_fine)
                      : caps.intel_usm_host      ? c.kind == Choice::Kind::unified_host
                                                 : c.kind == Choice::Kind::persistent;
      if (!ok) fail("on a host-unified device Auto chose " + label + " for " + clzero::to_string(intent));
    }
    const auto available = clzero::policy::available(caps, intent);
    if (available.empty() || !(available.front() == rule))
      fail("policy::available() does not list the rule's choice first for " + std::string(clzero::to_string(intent)));
    std::printf("NOTE Auto for %s on %s: %s (%s)\n", clzero::to_string(intent), env.device_name.c_str(), label.c_str(),
                c.reason.c_str());
  }
}

// docs/api.md, Auto::Options::buffers_only: kernels take a cl_mem, so
// buffer() is never null; an override_choice that is not buffer-backed is an
// error.
void auto_buffers_only_gives_buffers(const Env& env) {
  for (clzero::Intent intent : {clzero::Intent::output, clzero::Intent::input, clzero::Intent::inout}) {
    clzero::policy::Auto::Options options;
    options.buffers_only = true;
    clzero::MappedTensor<std::uint32_t> t(env.context, env.queue, clzero::Shape{100}, intent, options);
    if (t.buffer() == nullptr || !t.policy().choice().buffer_backed())
      fail("buffers_only gave " + t.policy().choice().label() + " with no cl_mem");
  }
  for (const auto& choice : clzero::policy::available(env.caps, clzero::Intent::output)) {
    if (choice.buffer_backed()) continue;
    clzero::policy::Auto::Options options;
    options.buffers_only = true;
    options.override_choice = true;
    options.choice = choice;
    try {
      clzero::MappedTensor<std::uint32_t> t(env.context, env.queue, clzero::Shape{100}, clzero::Intent::output,
                                            options);
    } catch (const clzero::Error& e) {
      std::printf("NOTE buffers_only with override_choice %s: clzero::Error (%s)\n", choice.label().c_str(),
                  kind_name(e.kind()));
      continue;
    }
    fail("buffers_only with override_choice " + choice.label() + " was accepted");
  }
}

// docs/api.md, measure(): times every candidate and checks every element;
// an engine stores the result and replays it with override_choice.
void measure_finds_every_available_policy_fresh(const Env& env) {
  const auto choices = clzero::policy::available(env.caps, clzero::Intent::output);
  const auto results = clzero::measure(env.context, env.device, 4096 + 4, clzero::Intent::output, choices);
  if (results.size() != choices.size())
    fail("measure() returned " + std::to_string(results.size()) + " results for " + std::to_string(choices.size()) +
         " candidates");
  for (const auto& m : results) {
    if (!m.fresh || !std::string(m.error).empty() || !(m.us_per_inference > 0))
      fail("measure(): " + m.choice.label() + " fresh=" + std::to_string(m.fresh) + " error=\"" + std::string(m.error) +
           "\" us=" + std::to_string(m.us_per_inference));
  }
}

// Every choice policy::available() lists, replayed through Auto's
// override_choice, gives fresh outputs.
void auto_replays_every_available_choice(const Env& env) {
  const auto choices = clzero::policy::available(env.caps, clzero::Intent::output);
  if (choices.empty()) fail("policy::available() is empty");
  for (const auto& choice : choices) {
    clzero::policy::Auto::Options options;
    options.override_choice = true;
    options.choice = choice;
    for (std::size_t n : kSizes) {
      clzero::MappedTensor<std::uint32_t> out(env.context, env.queue, clzero::Shape{n}, clzero::Intent::output,
                                              options);
      if (!(out.policy().choice() == choice))
        fail("override_choice " + choice.label() + " gave " + out.policy().choice().label());
      Kernel k = make_kernel(env, "fill_u32");
      out.bind(k, 0);
      set_arg(k, 2, 0x33U);
      for (std::uint32_t iter = 0; iter < kIterations; ++iter) {
        set_arg(k, 1, iter);
        {
          auto dev = out.device_access();
          enqueue_1d(env.queue, k, n, dev.wait_count(env.queue), dev.wait_list(env.queue), dev.event_slot(env.queue));
        }
        auto view = out.read_view();
        expect_all(choice.label().c_str(), iter, view, n, [&](std::size_t i) { return value_u32(iter, i, 0x33U); });
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Running every per-policy scenario for one policy

template <class P>
void policy_suite(Tally& tally, const Env& env, const std::string& label, const typename P::Options& opts,
                  const char* missing, bool buffer_backed_policy) {
  using Scenario = void (*)(const Env&, const typename P::Options&);
  const std::pair<const char*, Scenario> scenarios[] = {
      {"output is fresh every inference", output_is_fresh_every_inference<P>},
      {"input written by the host is read by a kernel", input_written_by_host_is_read_by_kernel<P>},
      {"an input used again without a write keeps its contents",
       an_input_used_again_without_a_write_keeps_its_contents<P>},
      {"the next input is written while the previous inference runs",
       the_next_input_is_written_while_the_previous_inference_runs<P>},
      {"inout written, updated and read", inout_written_updated_and_read<P>},
      {"inout keeps its contents when the host only reads", inout_keeps_contents_when_host_only_reads<P>},
      {"inout read-only accesses between writes", inout_read_only_accesses_between_writes<P>},
      {"out-of-order queue with waits and used_by", out_of_order_queue_with_waits_and_used_by<P>},
      {"out-of-order queue without events handed back", out_of_order_queue_without_events_handed_back<P>},
      {"kernel on another queue through event_slot(queue)", kernel_on_another_queue_through_event_slot<P>},
      {"kernel on another queue with input and output", kernel_on_another_queue_with_input_and_output<P>},
      {"one kernel shared by two tensors bound per access", one_kernel_shared_by_two_tensors_bound_per_access<P>},
      {"region views read and write parts", region_views_read_and_write_parts<P>},
      {"ring reads each inference while the next runs", ring_reads_each_inference_while_the_next_runs<P>},
      {"arena outputs are fresh every inference", arena_outputs_are_fresh_every_inference<P>},
      {"arena inputs written per part are read by a kernel", arena_inputs_written_per_part_are_read_by_kernel<P>},
      {"library without wait list after enqueue_barrier", library_without_wait_list_after_enqueue_barrier<P>},
      {"back-to-back accesses on an out-of-order queue", back_to_back_accesses_on_an_out_of_order_queue<P>},
      {"moving a tensor keeps live views and accesses", moving_a_tensor_keeps_live_views_and_accesses<P>},
      {"a view outlives its destroyed tensor", a_view_outlives_its_destroyed_tensor<P>},
      {"a move-assigned device access ends the old one", a_move_assigned_device_access_ends_the_old_one<P>},
      {"host_ready turns true without blocking", host_ready_turns_true_without_blocking<P>},
  };
  if (missing) {
    scenario(tally, label + ": every scenario", [&] { throw Skip(missing); });
    return;
  }
  for (const auto& [what, run] : scenarios) {
    const bool library = std::strncmp(what, "library", 7) == 0;
    if (library && !buffer_backed_policy) continue;  // README: the library's output is buffer-backed
    scenario(tally, label + ": " + what, [&] { run(env, opts); });
  }
}

// A policy the device lacks (by DeviceCaps) must be refused in the
// constructor with ErrorKind::unsupported (docs/api.md, Policies).
template <class P>
void refused_as_unsupported(Tally& tally, const Env& env, const std::string& label, const typename P::Options& opts) {
  scenario(tally, label + ": refused as unsupported on a device without it", [&] {
    expect_error(clzero::ErrorKind::unsupported, "constructing " + label,
                 [&] { Tensor<P> t(env.context, env.queue, clzero::Shape{16}, clzero::Intent::output, opts); });
  });
}

template <class P>
void policy_suite_or_refusal(Tally& tally, const Env& env, const std::string& label, const typename P::Options& opts,
                             const char* missing, bool buffer_backed_policy) {
  policy_suite<P>(tally, env, label, opts, missing, buffer_backed_policy);
  if (missing) refused_as_unsupported<P>(tally, env, label, opts);
}

int run_all() {
  Tally tally;
  Env env;
  try {
    setup(env);
  } catch (const std::exception& e) {
    std::printf("FAIL setup: %s\n", e.what());
    std::printf("from_docs usage: 0 passed, 1 failed, 0 skipped\n");
    return 1;
  }
  clzero::set_cleanup_error_handler(record_cleanup_error);
  std::printf("NOTE platform \"%s\", device \"%s\"\n", env.platform_name.c_str(), env.device_name.c_str());

  using namespace clzero::policy;
  using clzero::Allocation;
  const clzero::DeviceCaps& caps = env.caps;

  scenario(tally, "the README model reads every inference", [&] { the_readme_model_reads_every_inference(env); });
  scenario(tally, "Auto follows the documented rules", [&] { auto_follows_the_documented_rules(env); });
  scenario(tally, "Auto replays every available choice", [&] { auto_replays_every_available_choice(env); });
  scenario(tally, "Auto with buffers_only gives buffers", [&] { auto_buffers_only_gives_buffers(env); });
  scenario(tally, "measure finds every available policy fresh",
           [&] { measure_finds_every_available_policy_fresh(env); });
  scenario(tally, "misuse is refused and changes nothing", [&] { misuse_is_refused_and_changes_nothing(env); });
  scenario(tally, "bad arguments are refused with the documented remedies",
           [&] { bad_arguments_are_refused_with_the_documented_remedies(env); });
  scenario(tally, "error messages name the call", [&] { error_messages_name_the_call(env); });
  scenario(tally, "an empty tensor answers as documented", [&] { an_empty_tensor_answers_as_documented(env); });
  scenario(tally, "two threads with their own tensors", [&] { two_threads_with_their_own_tensors(env); });
  scenario(tally, "a DLPack tensor keeps the output host-owned",
           [&] { a_dlpack_tensor_keeps_the_output_host_owned(env); });
  scenario(tally, "views without polling are fresh", [&] { views_without_polling_are_fresh(env); });

  {
    Persistent::Options o;
    policy_suite<Persistent>(tally, env, "Persistent(alloc_host_ptr)", o, nullptr, true);
    o.allocation = Allocation::use_host_ptr();
    policy_suite<Persistent>(tally, env, "Persistent(use_host_ptr)", o, nullptr, true);
    o.allocation = Allocation::nv_host_pinned();
    policy_suite_or_refusal<Persistent>(tally, env, "Persistent(nv_host_pinned)", o,
                                        caps.nv_create_buffer ? nullptr : "DeviceCaps::nv_create_buffer is false",
                                        true);
    o.allocation = Allocation::arm_import_host();
    policy_suite_or_refusal<Persistent>(tally, env, "Persistent(arm_import_host)", o,
                                        caps.arm_import_memory ? nullptr : "DeviceCaps::arm_import_memory is false",
                                        true);
  }
  {
    MapPerInference::Options o;
    policy_suite<MapPerInference>(tally, env, "MapPerInference(alloc_host_ptr)", o, nullptr, true);
    o.allocation = Allocation::use_host_ptr();
    policy_suite<MapPerInference>(tally, env, "MapPerInference(use_host_ptr)", o, nullptr, true);
  }
  policy_suite<CopyToPinned>(tally, env, "CopyToPinned", CopyToPinned::Options{}, nullptr, true);
  {
    Svm::Options o;
    o.grain = Svm::Grain::fine;
    policy_suite_or_refusal<Svm>(tally, env, "Svm(fine)", o,
                                 caps.svm_fine_grain_buffer ? nullptr : "DeviceCaps::svm_fine_grain_buffer is false",
                                 false);
    o.grain = Svm::Grain::coarse;
    policy_suite_or_refusal<Svm>(
        tally, env, "Svm(coarse)", o,
        caps.svm_coarse_grain_buffer ? nullptr : "DeviceCaps::svm_coarse_grain_buffer is false", false);
  }
  policy_suite_or_refusal<UnifiedHost>(tally, env, "UnifiedHost", UnifiedHost::Options{},
                                       caps.intel_usm_host ? nullptr : "DeviceCaps::intel_usm_host is false", false);
  {
    Auto::Options o;
    policy_suite<Auto>(tally, env, "Auto", o, nullptr, false);
    o.buffers_only = true;
    policy_suite<Auto>(tally, env, "Auto(buffers_only)", o, nullptr, true);
  }

  std::printf("from_docs usage: %d passed, %d failed, %d skipped\n", tally.passed, tally.failed, tally.skipped);
  return tally.failed == 0 ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return run_all();
  } catch (const std::exception& e) {  // never reached by design; no exception escapes
    std::printf("FAIL main: %s\n", e.what());
  } catch (...) {
    std::printf("FAIL main: unknown exception\n");
  }
  std::printf("from_docs usage: summary unavailable\n");
  return 1;
}
