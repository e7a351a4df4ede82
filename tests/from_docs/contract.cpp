// The documented contract of clzero on misuse, bad input and failure, checked
// against the library. Every expectation here comes from README.md and
// docs/*.md (the sentence is quoted or named next to the check), not from the
// headers: where the two disagree, the check fails.
//
//   g++ -std=c++17 -O2 -Wall -Wextra -Iinclude tests/from_docs/contract.cpp -lOpenCL
//
// Runs on the first OpenCL platform that has a device, or on the first whose
// name contains $CLZERO_TEST_PLATFORM. Prints PASS / FAIL / SKIP per check and
// a summary; exits 0 only if no check failed.

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <clzero/clzero.hpp>

// DLPack's header comes from libdlpack-dev (Debian 12); where it is missing,
// the DLPack check is skipped.
#if __has_include(<dlpack/dlpack.h>)
#include <clzero/interop/dlpack.hpp>
#define FROM_DOCS_HAVE_DLPACK 1
#else
#define FROM_DOCS_HAVE_DLPACK 0
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

using Elem = cl_uint;
using Kind = clzero::ErrorKind;

// ---------------------------------------------------------------------------
// Reporting

int g_passed = 0;
int g_failed = 0;
int g_skipped = 0;

void pass(const std::string& check) {
  std::printf("PASS %s\n", check.c_str());
  std::fflush(stdout);
  ++g_passed;
}

void fail(const std::string& check, const std::string& why) {
  std::printf("FAIL %s: %s\n", check.c_str(), why.c_str());
  std::fflush(stdout);
  ++g_failed;
}

void skip(const std::string& check, const std::string& why) {
  std::printf("SKIP %s: %s\n", check.c_str(), why.c_str());
  std::fflush(stdout);
  ++g_skipped;
}

// PASS when `problem` is empty, FAIL with it otherwise.
bool verdict(const std::string& check, const std::string& problem) {
  if (problem.empty()) {
    pass(check);
    return true;
  }
  fail(check, problem);
  return false;
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::opencl: return "opencl";
    case Kind::invalid_argument: return "invalid_argument";
    case Kind::misuse: return "misuse";
    case Kind::unsupported: return "unsupported";
    case Kind::unusable: return "unusable";
  }
  return "(unknown kind)";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// ---------------------------------------------------------------------------
// Expected errors

// What the documentation promises about one error.
struct Expected {
  // README "Recovering from errors": kind() is misuse, invalid_argument,
  // opencl, unsupported or unusable. A bad argument is taken to be
  // invalid_argument, a broken ownership rule misuse (api.md).
  std::vector<Kind> kinds;
  // api.md: "Every error message starts with `clzero: ` and what was called,
  // as `Class::member` ... or, for constructors and steps clzero takes
  // itself, `Class: doing`".
  std::string prefix;
  // What the documentation says the message names (a remedy quoted in
  // reliability.md, an extension, the intent).
  std::vector<std::string> mentions = {};
  // reliability.md: every misuse message gives "a remedy (an instruction
  // after `;` or `:`)"; README: what() "says what happened and how to fix it".
  bool remedy = true;
};

// What is wrong with `error` against `expected`; empty when nothing is.
std::string mismatch(const clzero::Error& error, const Expected& expected) {
  const std::string what = error.what();
  std::string problems;
  auto add = [&](const std::string& problem) { problems += (problems.empty() ? "" : "; ") + problem; };

  if (std::find(expected.kinds.begin(), expected.kinds.end(), error.kind()) == expected.kinds.end()) {
    std::string wanted;
    for (Kind kind : expected.kinds) wanted += (wanted.empty() ? "" : " or ") + std::string(kind_name(kind));
    add(std::string("kind() is ") + kind_name(error.kind()) + ", the docs say " + wanted);
  }
  if (what.rfind(expected.prefix, 0) != 0) add("the message does not start with \"" + expected.prefix + "\"");
  for (const std::string& part : expected.mentions)
    if (!contains(what, part)) add("the message does not name \"" + part + "\"");
  if (expected.remedy && error.kind() != Kind::opencl) {
    const std::string rest = what.substr(std::min(expected.prefix.size(), what.size()));
    if (rest.find_first_of(";:") == std::string::npos) add("the message gives no remedy after ';' or ':'");
  }
  // api.md: api() is "the failed OpenCL call, or \"\""; README: for a failed
  // OpenCL call, api() and code_name() name the call and the code, and the
  // message names them too.
  const std::string api = error.api() != nullptr ? error.api() : "";
  const std::string code_name = error.code_name() != nullptr ? error.code_name() : "";
  const std::string doing = error.doing();
  if (error.kind() == Kind::opencl) {
    if (api.empty()) add("api() is empty for an OpenCL error");
    // README: a failed call's error names "what clzero was doing".
    if (doing.empty()) add("doing() is empty: the message does not say what clzero was doing");
    if (code_name.rfind("CL_", 0) != 0) add("code_name() is \"" + code_name + "\"");
    if (!api.empty() && !contains(what, api)) add("the message does not name api()");
    if (!contains(what, code_name)) add("the message does not name code_name()");
  } else if (!api.empty()) {
    add("api() is \"" + api + "\" for an error that is no failed OpenCL call");
  }
  if (!problems.empty()) problems += " (message: \"" + what + "\")";
  return problems;
}

// Runs `action`, which must throw clzero::Error as `expected` says.
template <class Action>
bool expect_error(const std::string& check, const Expected& expected, Action&& action) {
  std::string problem;
  try {
    action();
    problem = "no exception was thrown";
  } catch (const clzero::Error& error) {
    problem = mismatch(error, expected);
  } catch (const std::exception& error) {
    problem = std::string("threw a std::exception that is not clzero::Error: ") + error.what();
  } catch (...) {
    problem = "threw something that is not a std::exception";
  }
  return verdict(check, problem);
}

// Runs `action` and hands back the clzero::Error it threw, if any; any other
// exception becomes `other`.
template <class Action>
std::optional<clzero::Error> catch_error(Action&& action, std::string& other) {
  try {
    action();
  } catch (const clzero::Error& error) {
    return error;
  } catch (const std::exception& error) {
    other = error.what();
  } catch (...) {
    other = "an exception that is not a std::exception";
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// OpenCL objects of the program's own, released by their owners

template <class H, cl_int(CL_API_CALL* Release)(H)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(H handle) : handle_(handle) {}
  Owned(Owned&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }

  void reset() {
    if (handle_ != nullptr) Release(handle_);
    handle_ = nullptr;
  }
  H get() const { return handle_; }

 private:
  H handle_ = nullptr;
};

using Context = Owned<cl_context, clReleaseContext>;
using Queue = Owned<cl_command_queue, clReleaseCommandQueue>;
using Program = Owned<cl_program, clReleaseProgram>;
using Kernel = Owned<cl_kernel, clReleaseKernel>;
using Event = Owned<cl_event, clReleaseEvent>;
using Mem = Owned<cl_mem, clReleaseMemObject>;

// out[i] = 3 i + seed: every inference writes other values, never zeros.
// in/out: out[i] = 2 in[i] + 1 (odd, so never zero either).
const char* const kKernels = R"CLC(
__kernel void fill(__global uint* out, uint seed) {
  size_t i = get_global_id(0);
  out[i] = (uint)i * 3u + seed;
}
__kernel void twice_plus_one(__global const uint* in, __global uint* out) {
  size_t i = get_global_id(0);
  out[i] = in[i] * 2u + 1u;
}
)CLC";

struct Cl {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  std::string platform_name;
  std::string platform_version;
  Context context;
  Queue queue;  // in-order
  Program program;
  Context other_context;  // the same device, another context
  Queue other_queue;

  Kernel kernel(const char* name) const {
    cl_int rc = CL_SUCCESS;
    Kernel kernel(clCreateKernel(program.get(), name, &rc));
    if (rc != CL_SUCCESS) throw std::runtime_error(std::string("clCreateKernel ") + name + " failed");
    return kernel;
  }

  // A queue of its own for a scenario that may leave failed commands behind.
  Queue new_queue() const {
    cl_int rc = CL_SUCCESS;
    Queue made(clCreateCommandQueueWithProperties(context.get(), device, nullptr, &rc));
    if (rc != CL_SUCCESS) throw std::runtime_error("clCreateCommandQueueWithProperties failed");
    return made;
  }

  Event user_event(cl_context in) const {
    cl_int rc = CL_SUCCESS;
    Event event(clCreateUserEvent(in, &rc));
    if (rc != CL_SUCCESS) throw std::runtime_error("clCreateUserEvent failed");
    return event;
  }
};

std::string platform_info(cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  clGetPlatformInfo(platform, what, 0, nullptr, &size);
  std::string name(size, '\0');
  clGetPlatformInfo(platform, what, size, name.data(), nullptr);
  while (!name.empty() && name.back() == '\0') name.pop_back();
  return name;
}

// The first platform with a device, or the first whose name contains
// $CLZERO_TEST_PLATFORM; null with `why` when there is none.
std::unique_ptr<Cl> open_cl(std::string& why) {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
    why = "no OpenCL platform";
    return nullptr;
  }
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  const char* wanted = std::getenv("CLZERO_TEST_PLATFORM");

  auto cl = std::make_unique<Cl>();
  for (cl_platform_id platform : platforms) {
    const std::string name = platform_info(platform, CL_PLATFORM_NAME);
    if (wanted != nullptr && !contains(name, wanted)) continue;
    cl_device_id device = nullptr;
    cl_uint devices = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, &devices) != CL_SUCCESS || devices == 0) continue;
    cl->platform = platform;
    cl->device = device;
    cl->platform_name = name;
    cl->platform_version = platform_info(platform, CL_PLATFORM_VERSION);
    break;
  }
  if (cl->device == nullptr) {
    why = wanted != nullptr ? std::string("no platform with a device has a name containing ") + wanted
                            : "no platform has a device";
    return nullptr;
  }

  cl_int rc = CL_SUCCESS;
  cl->context = Context(clCreateContext(nullptr, 1, &cl->device, nullptr, nullptr, &rc));
  if (rc == CL_SUCCESS)
    cl->queue = Queue(clCreateCommandQueueWithProperties(cl->context.get(), cl->device, nullptr, &rc));
  const char* source = kKernels;
  if (rc == CL_SUCCESS) cl->program = Program(clCreateProgramWithSource(cl->context.get(), 1, &source, nullptr, &rc));
  if (rc == CL_SUCCESS) rc = clBuildProgram(cl->program.get(), 1, &cl->device, nullptr, nullptr, nullptr);
  if (rc == CL_SUCCESS) cl->other_context = Context(clCreateContext(nullptr, 1, &cl->device, nullptr, nullptr, &rc));
  if (rc == CL_SUCCESS)
    cl->other_queue = Queue(clCreateCommandQueueWithProperties(cl->other_context.get(), cl->device, nullptr, &rc));
  if (rc != CL_SUCCESS) {
    why = "setting up OpenCL failed with " + std::string(clzero::error_name(rc));
    return nullptr;
  }
  return cl;
}

cl_uint context_references(cl_context context) {
  cl_uint count = 0;
  clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof count, &count, nullptr);
  return count;
}

cl_uint queue_references(cl_command_queue queue) {
  cl_uint count = 0;
  clGetCommandQueueInfo(queue, CL_QUEUE_REFERENCE_COUNT, sizeof count, &count, nullptr);
  return count;
}

// Buffers and SVM allocations hold their context, events their queue; OpenCL
// may drop them a little after their commands end, so the count is polled.
std::string references_back_to(const Cl& cl, cl_uint context_count, cl_uint queue_count) {
  cl_uint context_now = 0;
  cl_uint queue_now = 0;
  for (int attempt = 0; attempt < 200; ++attempt) {
    context_now = context_references(cl.context.get());
    queue_now = queue_references(cl.queue.get());
    if (context_now == context_count && queue_now == queue_count) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "the context holds " + std::to_string(context_now) + " references (expected " + std::to_string(context_count) +
         "), the queue " + std::to_string(queue_now) + " (expected " + std::to_string(queue_count) + ")";
}

// api.md, Interop: "Reference counting is OpenCL's: retain the cl_mem to keep
// it past the tensor". A buffer retained so is watched after its tensor dies.
Mem watch_buffer(cl_mem buffer) {
  if (buffer != nullptr) clRetainMemObject(buffer);
  return Mem(buffer);
}

// Once the tensor is gone, its buffer must be unmapped and hold only the
// program's reference.
std::string released_cleanly(const Mem& buffer) {
  cl_uint references = 0;
  cl_uint maps = 0;
  for (int attempt = 0; attempt < 200; ++attempt) {
    clGetMemObjectInfo(buffer.get(), CL_MEM_REFERENCE_COUNT, sizeof references, &references, nullptr);
    clGetMemObjectInfo(buffer.get(), CL_MEM_MAP_COUNT, sizeof maps, &maps, nullptr);
    if (references == 1 && maps == 0) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "the buffer still has CL_MEM_MAP_COUNT " + std::to_string(maps) + " and " + std::to_string(references - 1) +
         " references besides the program's";
}

std::string context_back_to(const Cl& cl, cl_uint count) {
  cl_uint now = 0;
  for (int attempt = 0; attempt < 200; ++attempt) {
    now = context_references(cl.context.get());
    if (now == count) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "the context holds " + std::to_string(now) + " references, " + std::to_string(now - count) +
         " more than before (each buffer, SVM allocation and queue holds one)";
}

// ---------------------------------------------------------------------------
// Inferences whose every element is checked

cl_uint next_seed() {
  static cl_uint seed = 0x51u;
  seed += 0x1001u;
  return seed;
}

Elem fill_value(std::size_t i, cl_uint seed) { return static_cast<Elem>(i) * 3u + seed; }
Elem input_value(std::size_t i, cl_uint seed) { return static_cast<Elem>(i) * 7u + seed; }

// Empty when view[i] == value(i) for every i.
template <class View, class Value>
std::string check_elements(const View& view, std::size_t expected_size, Value value) {
  if (view.size() != expected_size)
    return "the view has " + std::to_string(view.size()) + " elements, expected " + std::to_string(expected_size);
  std::size_t wrong = 0;
  std::string first;
  for (std::size_t i = 0; i < view.size(); ++i) {
    if (view[i] == value(i)) continue;
    if (wrong++ == 0)
      first =
          "element " + std::to_string(i) + " is " + std::to_string(view[i]) + ", expected " + std::to_string(value(i));
  }
  return wrong == 0 ? "" : std::to_string(wrong) + " of " + std::to_string(view.size()) + " elements wrong, " + first;
}

// Enqueues `fill` over an open access the README's way (on the tensor's own
// queue, with its wait list and event slot for that queue).
template <class Access>
std::string enqueue_fill(const Cl& cl, Access& dev, cl_command_queue queue, std::size_t n, cl_uint seed,
                         Kernel& kernel) {
  kernel = cl.kernel("fill");
  dev.bind(kernel.get(), 0);
  cl_int rc = clSetKernelArg(kernel.get(), 1, sizeof seed, &seed);
  if (rc == CL_SUCCESS)
    rc = clEnqueueNDRangeKernel(queue, kernel.get(), 1, nullptr, &n, nullptr, dev.wait_count(queue),
                                dev.wait_list(queue), dev.event_slot(queue));
  return rc == CL_SUCCESS ? "" : "enqueueing the kernel returned " + std::string(clzero::error_name(rc));
}

// One inference of an output tensor; empty when every element is right.
template <class Tensor>
std::string infer(const Cl& cl, Tensor& tensor) {
  const cl_uint seed = next_seed();
  try {
    Kernel kernel;
    {
      auto dev = tensor.device_access();
      const std::string enqueued = enqueue_fill(cl, dev, tensor.queue(), tensor.size(), seed, kernel);
      if (!enqueued.empty()) return enqueued;
    }
    auto view = tensor.read_view();
    return check_elements(view, tensor.size(), [&](std::size_t i) { return fill_value(i, seed); });
  } catch (const std::exception& error) {
    return std::string("the inference threw: ") + error.what();
  }
}

// One inference through an input tensor into an output tensor, with the
// README's out-of-order form (union of the wait lists, used_by).
template <class In, class Out>
std::string infer_input(const Cl& cl, In& in, Out& out) {
  const cl_uint seed = next_seed();
  try {
    {
      auto write = in.write_view();
      for (std::size_t i = 0; i < write.size(); ++i) write[i] = input_value(i, seed);
    }
    Kernel kernel = cl.kernel("twice_plus_one");
    {
      auto a = in.device_access();
      auto b = out.device_access();
      a.bind(kernel.get(), 0);
      b.bind(kernel.get(), 1);
      clzero::EventList waits;
      waits.append(a.waits());
      waits.append(b.waits());
      cl_event done = nullptr;
      std::size_t n = out.size();
      const cl_int rc =
          clEnqueueNDRangeKernel(in.queue(), kernel.get(), 1, nullptr, &n, nullptr, waits.count(), waits.data(), &done);
      if (rc != CL_SUCCESS) return "enqueueing the kernel returned " + std::string(clzero::error_name(rc));
      a.used_by(done);
      b.used_by(done);
      clReleaseEvent(done);
    }
    auto view = out.read_view();
    return check_elements(view, out.size(), [&](std::size_t i) { return input_value(i, seed) * 2u + 1u; });
  } catch (const std::exception& error) {
    return std::string("the inference threw: ") + error.what();
  }
}

// Three inferences; README: after a misuse "the tensor stays as it was", so
// each must be right, element by element.
template <class Tensor>
bool still_works(const Cl& cl, Tensor& tensor, const std::string& check) {
  for (int i = 0; i < 3; ++i) {
    const std::string problem = infer(cl, tensor);
    if (!problem.empty()) return verdict(check, "inference " + std::to_string(i + 1) + ": " + problem);
  }
  return verdict(check, "");
}

template <class In, class Out>
bool input_still_works(const Cl& cl, In& in, Out& out, const std::string& check) {
  for (int i = 0; i < 3; ++i) {
    const std::string problem = infer_input(cl, in, out);
    if (!problem.empty()) return verdict(check, "inference " + std::to_string(i + 1) + ": " + problem);
  }
  return verdict(check, "");
}

// Errors that reached clzero's cleanup handler.
std::vector<std::string> g_cleanup_reports;

void record_cleanup_error(const clzero::Error& error) noexcept {
  try {
    g_cleanup_reports.push_back(std::string(kind_name(error.kind())) + ": " + error.what());
  } catch (...) {
  }
}

// After an OpenCL failure, README "Recovering from errors": "Either the tensor
// still works (the next inference is right ...) or `tensor.usable()` is false:
// then `device_access()` and every view throw `ErrorKind::unusable` (the
// queries still answer)".
template <class Tensor>
void check_works_or_unusable(const Cl& cl, Tensor& tensor, const std::string& check) {
  if (tensor.usable()) {
    still_works(cl, tensor, check + " / usable() is true and every element of 3 inferences is right");
    return;
  }
  const Expected unusable{{Kind::unusable}, "clzero: MappedTensor::device_access: "};
  expect_error(check + " / usable() is false: device_access() throws unusable", unusable,
               [&] { auto dev = tensor.device_access(); });
  const Expected unusable_view{{Kind::unusable}, "clzero: MappedTensor::read_view: "};
  expect_error(check + " / usable() is false: read_view() throws unusable", unusable_view,
               [&] { auto view = tensor.read_view(); });
  std::string problem;
  try {
    if (tensor.size() == 0 || tensor.bytes() != tensor.size() * sizeof(Elem)) problem = "size()/bytes() wrong";
    (void)tensor.shape();
    (void)tensor.intent();
    (void)tensor.buffer();
    (void)tensor.policy();
    (void)tensor.queue();
  } catch (const std::exception& error) {
    problem = std::string("a query threw: ") + error.what();
  }
  verdict(check + " / usable() is false: the queries still answer", problem);
}

}  // namespace

namespace {

constexpr std::size_t kRows = 37;
constexpr std::size_t kColumns = 111;  // 4107 elements: no power of two

// ---------------------------------------------------------------------------
// The ownership rule on an output tensor (api.md, "Ownership in one paragraph")

template <class Tensor>
void output_ownership(const Cl& cl, Tensor& t, const std::string& at) {
  // README: "Handing it to the device while a view lives ... throws
  // clzero::Error"; api.md: with ErrorKind::misuse.
  {
    auto view = t.read_view();
    const std::vector<Elem> before(view.begin(), view.end());
    expect_error(at + "device_access() while a read view lives",
                 {{Kind::misuse}, "clzero: MappedTensor::device_access: "}, [&] { auto dev = t.device_access(); });
    // "A misuse or a bad argument changes nothing": the view is still open.
    verdict(at + "the view outlives the refused device_access() with the same data",
            view && std::equal(view.begin(), view.end(), before.begin(), before.end()) ? "" : "the view changed");
  }
  still_works(cl, t, at + "after device_access() during a view, every element of 3 inferences is right");

  // "opening a view while a device access is open" throws misuse.
  {
    const cl_uint seed = next_seed();
    Kernel kernel;
    std::string problem;
    {
      auto dev = t.device_access();
      expect_error(at + "read_view() while a device access is open",
                   {{Kind::misuse}, "clzero: MappedTensor::read_view: "}, [&] { auto view = t.read_view(); });
      expect_error(at + "read_view_as() while a device access is open",
                   {{Kind::misuse}, "clzero: MappedTensor::read_view"},
                   [&] { auto view = t.read_view_as(0, clzero::Shape{1}, clzero::as<Elem>); });
      if (!dev.open()) problem = "the access was closed by the refused view";
      if (problem.empty()) problem = enqueue_fill(cl, dev, t.queue(), t.size(), seed, kernel);
    }
    if (problem.empty()) {
      try {
        auto view = t.read_view();
        problem = check_elements(view, t.size(), [&](std::size_t i) { return fill_value(i, seed); });
      } catch (const std::exception& error) {
        problem = std::string("the view threw: ") + error.what();
      }
    }
    verdict(at + "the access survives the refused view and its kernel's output is right", problem);
  }

  // "writing an output ... on the host" throws misuse.
  expect_error(at + "write_view() of an output", {{Kind::misuse}, "clzero: MappedTensor::write_view: ", {"output"}},
               [&] { auto view = t.write_view(); });
  expect_error(at + "write_view_as() of an output", {{Kind::misuse}, "clzero: MappedTensor::write_view", {"output"}},
               [&] { auto view = t.write_view_as(0, clzero::Shape{1}, clzero::as<Elem>); });

  // api.md: device-owned means "one DeviceAccess is open".
  {
    auto dev = t.device_access();
    expect_error(at + "a second device_access() while one is open",
                 {{Kind::misuse}, "clzero: MappedTensor::device_access: "}, [&] { auto again = t.device_access(); });
    verdict(at + "the first access stays open after the refused second one", dev.open() ? "" : "open() is false");
  }
  still_works(cl, t, at + "after the refused views and accesses, every element of 3 inferences is right");
}

// "using ... an ended access" (reliability.md, "Misuse and bad input").
template <class Tensor>
void ended_access(const Cl& cl, Tensor& t, const std::string& at) {
  Kernel kernel = cl.kernel("fill");
  Event done = cl.user_event(cl.context.get());
  clSetUserEventStatus(done.get(), CL_COMPLETE);
  cl_command_queue queue = t.queue();
  auto dev = t.device_access();
  dev.end();
  verdict(at + "end() closes the access", dev.open() ? "open() is still true" : "");
  std::string problem;
  try {
    dev.end();  // api.md: "end() ... idempotent"
  } catch (const std::exception& error) {
    problem = std::string("threw: ") + error.what();
  }
  verdict(at + "end() a second time does nothing", problem);

  auto ended = [&](const char* member) {
    return Expected{{Kind::misuse}, std::string("clzero: DeviceAccess::") + member + ": "};
  };
  const std::string use = at + "an ended access refuses ";
  expect_error(use + "bind()", ended("bind"), [&] { dev.bind(kernel.get(), 0); });
  expect_error(use + "wait_count()", ended("wait_count"), [&] { (void)dev.wait_count(); });
  expect_error(use + "wait_list()", ended("wait_list"), [&] { (void)dev.wait_list(); });
  expect_error(use + "wait_list(queue)", ended("wait_list"), [&] { (void)dev.wait_list(queue); });
  expect_error(use + "waits()", ended("waits"), [&] { (void)dev.waits(); });
  expect_error(use + "event_slot()", ended("event_slot"), [&] { (void)dev.event_slot(); });
  expect_error(use + "used_by()", ended("used_by"), [&] { dev.used_by(done.get()); });
  expect_error(use + "enqueue_barrier()", ended("enqueue_barrier"), [&] { dev.enqueue_barrier(queue); });
  still_works(cl, t, at + "after the ended access was used, every element of 3 inferences is right");
}

// api.md, MappedTensor::bind: "Throws for an empty or unusable tensor, a null
// kernel or an offset outside the tensor"; reliability.md gives the remedies.
template <class Tensor>
void bad_binds(const Cl& cl, Tensor& t, const std::string& at) {
  Kernel kernel = cl.kernel("fill");
  const Expected null_tensor_bind{
      {Kind::invalid_argument}, "clzero: MappedTensor::bind: ", {"pass a kernel from clCreateKernel"}};
  const Expected outside_tensor_bind{
      {Kind::invalid_argument}, "clzero: MappedTensor::bind: ", {"pass an offset inside the tensor"}};
  expect_error(at + "MappedTensor::bind(null kernel)", null_tensor_bind, [&] { t.bind(nullptr, 0); });
  expect_error(at + "MappedTensor::bind(offset past the tensor)", outside_tensor_bind,
               [&] { t.bind(kernel.get(), 0, t.bytes() + sizeof(Elem)); });
  {
    auto dev = t.device_access();
    expect_error(at + "DeviceAccess::bind(null kernel)",
                 {{Kind::invalid_argument}, "clzero: DeviceAccess::bind: ", {"pass a kernel from clCreateKernel"}},
                 [&] { dev.bind(nullptr, 0); });
    expect_error(at + "DeviceAccess::bind(offset past the tensor)",
                 {{Kind::invalid_argument}, "clzero: DeviceAccess::bind: ", {"pass an offset inside the tensor"}},
                 [&] { dev.bind(kernel.get(), 0, t.bytes() + sizeof(Elem)); });
    // api.md, DeviceAccess::bind: "a byte offset only for pointer-backed
    // tensors"; a buffer cannot be bound at an offset.
    if (dev.buffer() != nullptr) {
      expect_error(at + "DeviceAccess::bind(buffer-backed tensor, byte offset 4)",
                   {{Kind::invalid_argument}, "clzero: "}, [&] { dev.bind(kernel.get(), 0, sizeof(Elem)); });
      expect_error(at + "MappedTensor::bind(buffer-backed tensor, byte offset 4)",
                   {{Kind::invalid_argument}, "clzero: "}, [&] { t.bind(kernel.get(), 0, sizeof(Elem)); });
    }
    verdict(at + "the access stays open after the refused binds", dev.open() ? "" : "open() is false");
  }
  still_works(cl, t, at + "after the refused binds, every element of 3 inferences is right");
}

// api.md, read_view_as/write_view_as; reliability.md: "a region misaligned or
// outside the tensor" -> "choose an offset aligned to the element type and a
// region inside the tensor".
template <class Tensor>
void bad_regions(const Cl& cl, Tensor& t, const std::string& at) {
  const cl_uint seed = next_seed();
  Kernel kernel;
  std::string problem;
  try {
    {
      auto dev = t.device_access();
      problem = enqueue_fill(cl, dev, t.queue(), t.size(), seed, kernel);
    }
    if (problem.empty()) {
      // A region of two elements from element 1 shows the kernel's values.
      auto view = t.read_view_as(sizeof(Elem), clzero::Shape{2}, clzero::as<Elem>);
      problem = check_elements(view, 2, [&](std::size_t i) { return fill_value(i + 1, seed); });
    }
  } catch (const std::exception& error) {
    problem = std::string("threw: ") + error.what();
  }
  verdict(at + "read_view_as() of a region inside the tensor shows its elements", problem);

  // (Whether the message names read_view_as is checked once, in call_names().)
  const Expected region{{Kind::invalid_argument},
                        "clzero: MappedTensor::read_view",
                        {"choose an offset aligned to the element type and a region inside the tensor"}};
  expect_error(at + "read_view_as() at a misaligned offset", region,
               [&] { auto view = t.read_view_as(1, clzero::Shape{1}, clzero::as<Elem>); });
  expect_error(at + "read_view_as() starting past the end", region,
               [&] { auto view = t.read_view_as(t.bytes(), clzero::Shape{1}, clzero::as<Elem>); });
  expect_error(at + "read_view_as() running past the end", region,
               [&] { auto view = t.read_view_as(sizeof(Elem), clzero::Shape{t.size()}, clzero::as<Elem>); });
  expect_error(at + "read_view_as() of a larger element type than the offset allows", region,
               [&] { auto view = t.read_view_as(sizeof(Elem), clzero::Shape{1}, clzero::as<double>); });
  still_works(cl, t, at + "after the refused regions, every element of 3 inferences is right");
}

// api.md, HostView: at(i) "checked, throws", operator() "rank and extents
// checked"; reliability.md gives the remedies, and an ended view is misuse.
template <class Tensor>
void bad_view_indices(const Cl& cl, Tensor& t, const std::string& at) {
  std::string problem = infer(cl, t);
  if (!problem.empty()) {
    fail(at + "an inference before the view checks", problem);
    return;
  }
  auto view = t.read_view();
  const auto index = [&](const char* remedy) {
    return Expected{{Kind::invalid_argument}, "clzero: HostView::", {remedy}};
  };
  expect_error(at + "view.at(size())", index("check the index against size()"), [&] { (void)view.at(view.size()); });
  expect_error(at + "view(i) on a rank-2 view", index("pass one index per axis"), [&] { (void)view(0); });
  expect_error(at + "view(i, j, k) on a rank-2 view", index("pass one index per axis"), [&] { (void)view(0, 0, 0); });
  expect_error(at + "view(rows, 0)", index("check each index against shape()"), [&] { (void)view(kRows, 0); });
  expect_error(at + "view(0, columns)", index("check each index against shape()"), [&] { (void)view(0, kColumns); });
  problem.clear();
  try {
    if (view(2, 5) != view[2 * kColumns + 5] || view.at(7) != view[7]) problem = "view(2, 5) or at(7) is not row-major";
  } catch (const std::exception& error) {
    problem = std::string("threw: ") + error.what();
  }
  verdict(at + "after the refused indices the view still answers, row-major", problem);
  view.reset();
  verdict(at + "reset() ends the view", view ? "operator bool is still true" : "");
  // (Its kind, misuse by reliability.md, is checked once, in call_names().)
  expect_error(at + "at() on an ended view",
               {{Kind::misuse, Kind::invalid_argument},
                "clzero: HostView::at: ",
                {"open a new one with read_view() or write_view()"}},
               [&] { (void)view.at(0); });
  still_works(cl, t, at + "after the refused indices, every element of 3 inferences is right");
}

// README: "using a moved-from tensor throws clzero::Error"; api.md: "views and
// accesses survive the move: they hold the tensor's state".
// api.md: for an empty tensor "size() and bytes() are 0, the other queries
// (shape(), intent(), policy(), buffer(), context(), queue(), host_ready())
// throw ErrorKind::misuse"; "using an empty tensor" throws misuse; bind()
// "Throws for an empty or unusable tensor".
template <class Tensor>
void refuses_as_empty(Tensor& t, cl_kernel kernel, const std::string& use) {
  const auto empty = [](const char* member) {
    return Expected{{Kind::misuse}, std::string("clzero: MappedTensor::") + member + ": "};
  };
  expect_error(use + "device_access()", empty("device_access"), [&] { auto dev = t.device_access(); });
  expect_error(use + "read_view()", empty("read_view"), [&] { auto view = t.read_view(); });
  expect_error(use + "write_view()", empty("write_view"), [&] { auto view = t.write_view(); });
  expect_error(use + "read_view_as()", empty("read_view_as"),
               [&] { auto view = t.read_view_as(0, clzero::Shape{1}, clzero::as<Elem>); });
  expect_error(use + "bind()", empty("bind"), [&] { t.bind(kernel, 0); });
  expect_error(use + "shape()", empty("shape"), [&] { (void)t.shape(); });
  expect_error(use + "intent()", empty("intent"), [&] { (void)t.intent(); });
  expect_error(use + "policy()", empty("policy"), [&] { (void)t.policy(); });
  expect_error(use + "buffer()", empty("buffer"), [&] { (void)t.buffer(); });
  expect_error(use + "context()", empty("context"), [&] { (void)t.context(); });
  expect_error(use + "queue()", empty("queue"), [&] { (void)t.queue(); });
  expect_error(use + "host_ready()", empty("host_ready"), [&] { (void)t.host_ready(); });
}

// README: "using a moved-from tensor throws clzero::Error"; api.md: "views and
// accesses survive the move: they hold the tensor's state".
template <class Tensor>
void moved_from(const Cl& cl, Tensor& t, const std::string& at) {
  Kernel kernel = cl.kernel("fill");
  Tensor moved(std::move(t));
  refuses_as_empty(t, kernel.get(), at + "a moved-from tensor refuses ");
  verdict(at + "a moved-from tensor is false with size() and bytes() 0",
          (!t && t.size() == 0 && t.bytes() == 0) ? "" : "operator bool, size() or bytes() says otherwise");
  still_works(cl, moved, at + "the moved-to tensor gives every element of 3 inferences right");

  // A view opened before a move keeps the state, and still refuses the device.
  {
    const cl_uint seed = next_seed();
    std::string problem;
    {
      auto dev = moved.device_access();
      problem = enqueue_fill(cl, dev, moved.queue(), moved.size(), seed, kernel);
    }
    auto view = moved.read_view();
    Tensor again(std::move(moved));
    if (problem.empty())
      problem = check_elements(view, again.size(), [&](std::size_t i) { return fill_value(i, seed); });
    verdict(at + "a view survives its tensor's move with every element right", problem);
    expect_error(at + "the moved-to tensor refuses device_access() while the old view lives",
                 {{Kind::misuse}, "clzero: MappedTensor::device_access: "}, [&] { auto dev = again.device_access(); });
    view.reset();
    t = std::move(again);
  }
  still_works(cl, t, at + "moved back by assignment, every element of 3 inferences is right");
}

// api.md, DeviceAccess: "assigning to an open access ends it first (as its
// destructor would: never a throw), then takes the other, which is left ended".
template <class Policy>
void access_move_assignment(const Cl& cl, const std::string& at, const typename Policy::Options& options) {
  using Tensor = clzero::MappedTensor<Elem, Policy>;
  Tensor a(cl.context.get(), cl.queue.get(), clzero::Shape{kRows, kColumns}, clzero::Intent::output, options);
  Tensor b(cl.context.get(), cl.queue.get(), clzero::Shape{kRows, kColumns}, clzero::Intent::output, options);
  const cl_uint seed_a = next_seed();
  const cl_uint seed_b = next_seed();
  Kernel kernel_a;
  Kernel kernel_b;
  std::string problem;
  auto access_a = a.device_access();
  auto access_b = b.device_access();
  problem = enqueue_fill(cl, access_a, a.queue(), a.size(), seed_a, kernel_a);
  if (problem.empty()) problem = enqueue_fill(cl, access_b, b.queue(), b.size(), seed_b, kernel_b);
  try {
    access_a = std::move(access_b);
  } catch (const std::exception& error) {
    problem = std::string("the assignment threw: ") + error.what();
  }
  if (problem.empty() && (!access_a.open() || access_b.open()))
    problem = "afterwards the assigned access is " + std::string(access_a.open() ? "open" : "ended") +
              " and the moved-from one " + (access_b.open() ? "open" : "ended");
  if (problem.empty()) {
    try {
      auto view = a.read_view();
      problem = check_elements(view, a.size(), [&](std::size_t i) { return fill_value(i, seed_a); });
    } catch (const std::exception& error) {
      problem = std::string("a.read_view() threw: ") + error.what();
    }
  }
  verdict(at + "move-assigning an access ends the old one: its tensor's view is right", problem);
  expect_error(at + "b still device-owned after the move-assignment: read_view() throws",
               {{Kind::misuse}, "clzero: MappedTensor::read_view: "}, [&] { auto view = b.read_view(); });
  expect_error(at + "the moved-from access is ended: bind() throws", {{Kind::misuse}, "clzero: DeviceAccess::bind: "},
               [&] { access_b.bind(kernel_b.get(), 0); });
  access_a.end();
  problem.clear();
  try {
    auto view = b.read_view();
    problem = check_elements(view, b.size(), [&](std::size_t i) { return fill_value(i, seed_b); });
  } catch (const std::exception& error) {
    problem = std::string("b.read_view() threw: ") + error.what();
  }
  verdict(at + "the taken-over access ends b's access: its view is right", problem);
}

// README, "Events and queues": enqueue_barrier(queue) is "a barrier that makes
// what follows on that queue wait for dev.waits()". On a queue of another
// context that barrier cannot be made: a failed OpenCL call (or a refused
// argument), after which the tensor works or says it does not.
template <class Tensor>
void barrier_on_foreign_queue(const Cl& cl, Tensor& t, const std::string& at) {
  const std::string check = at + "enqueue_barrier() on a queue of another context";
  const cl_uint seed = next_seed();
  Kernel kernel;
  std::string other;
  std::size_t waits = 0;
  std::optional<clzero::Error> error;
  std::string problem;
  {
    auto dev = t.device_access();
    waits = dev.waits().size();
    error = catch_error([&] { dev.enqueue_barrier(cl.other_queue.get()); }, other);
    if (!other.empty()) problem = "threw something other than clzero::Error: " + other;
    if (dev.open() && problem.empty()) problem = enqueue_fill(cl, dev, t.queue(), t.size(), seed, kernel);
  }
  if (!problem.empty()) {
    fail(check, problem);
  } else if (!error) {
    // Nothing to wait for: a barrier without events is legal anywhere.
    verdict(
        check + " (no events to wait for)",
        waits == 0 ? "" : "no error, with " + std::to_string(waits) + " events from another context in its wait list");
  } else if (error->kind() == Kind::opencl) {
    verdict(check + " throws an OpenCL error naming the call and code",
            mismatch(*error, {{Kind::opencl},
                              "clzero: DeviceAccess::enqueue_barrier: ",
                              {"clEnqueueBarrierWithWaitList", "CL_INVALID_CONTEXT"}}));
  } else {
    verdict(check + " is refused",
            mismatch(*error, {{Kind::invalid_argument}, "clzero: DeviceAccess::enqueue_barrier: "}));
  }
  check_works_or_unusable(cl, t, check);
}

template <class Policy>
void output_suite(const Cl& cl, const std::string& label, const typename Policy::Options& options) {
  using Tensor = clzero::MappedTensor<Elem, Policy>;
  const std::string at = label + ": ";
  std::optional<Tensor> made;
  try {
    made.emplace(cl.context.get(), cl.queue.get(), clzero::Shape{kRows, kColumns}, clzero::Intent::output, options);
  } catch (const std::exception& error) {
    fail(at + "an output tensor is made", error.what());
    return;
  }
  Tensor& t = *made;
  if (!still_works(cl, t, at + "an output tensor gives every element of 3 inferences right")) return;
  output_ownership(cl, t, at);
  ended_access(cl, t, at);
  bad_binds(cl, t, at);
  bad_regions(cl, t, at);
  bad_view_indices(cl, t, at);
  moved_from(cl, t, at);
  access_move_assignment<Policy>(cl, at, options);
  barrier_on_foreign_queue(cl, t, at);
}

// ---------------------------------------------------------------------------
// The ownership rule on an input tensor

template <class Policy>
void input_suite(const Cl& cl, const std::string& label, const typename Policy::Options& options) {
  using Tensor = clzero::MappedTensor<Elem, Policy>;
  const std::string at = label + ": ";
  std::optional<Tensor> in;
  std::optional<Tensor> out;
  try {
    in.emplace(cl.context.get(), cl.queue.get(), clzero::Shape{kRows * kColumns}, clzero::Intent::input, options);
    out.emplace(cl.context.get(), cl.queue.get(), clzero::Shape{kRows * kColumns}, clzero::Intent::output, options);
  } catch (const std::exception& error) {
    fail(at + "an input and an output tensor are made", error.what());
    return;
  }
  if (!input_still_works(cl, *in, *out, at + "input to output: every element of 3 inferences is right")) return;

  // README: "reading an input on the host ... throws clzero::Error".
  expect_error(at + "read_view() of an input", {{Kind::misuse}, "clzero: MappedTensor::read_view: ", {"input"}},
               [&] { auto view = in->read_view(); });
  expect_error(at + "read_view_as() of an input", {{Kind::misuse}, "clzero: MappedTensor::read_view", {"input"}},
               [&] { auto view = in->read_view_as(0, clzero::Shape{1}, clzero::as<Elem>); });
  {
    auto write = in->write_view();
    expect_error(at + "device_access() of an input while its write view lives",
                 {{Kind::misuse}, "clzero: MappedTensor::device_access: "}, [&] { auto dev = in->device_access(); });
    std::string problem;
    try {
      write[0] = 1u;  // the view is still the host's
      if (!write) problem = "the write view was closed";
    } catch (const std::exception& error) {
      problem = std::string("threw: ") + error.what();
    }
    verdict(at + "the write view outlives the refused device_access()", problem);
  }
  {
    auto dev = in->device_access();
    expect_error(at + "write_view() of an input while a device access is open",
                 {{Kind::misuse}, "clzero: MappedTensor::write_view: "}, [&] { auto view = in->write_view(); });
  }
  input_still_works(cl, *in, *out, at + "after the refused input views, every element of 3 inferences is right");
}

}  // namespace

namespace {

// ---------------------------------------------------------------------------
// Failed OpenCL commands, provoked with real OpenCL objects

// Whether the platform itself runs a command that waits on a user event set
// to an error and reports success for it (a marker, clWaitForEvents): then
// reliability.md allows a view that waits only for clzero's own command to
// show the data instead of the error.
bool runs_after_failed_events(const Cl& cl) {
  cl_int rc = CL_SUCCESS;
  Queue queue = cl.new_queue();
  Event user = cl.user_event(cl.context.get());
  cl_event marker = nullptr;
  cl_event wait = user.get();
  if (clEnqueueMarkerWithWaitList(queue.get(), 1, &wait, &marker) != CL_SUCCESS) return false;
  clFlush(queue.get());
  clSetUserEventStatus(user.get(), CL_OUT_OF_RESOURCES);
  rc = clWaitForEvents(1, &marker);
  cl_int status = CL_QUEUED;
  clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  clReleaseEvent(marker);
  clFinish(queue.get());
  return rc == CL_SUCCESS && status == CL_COMPLETE;
}

// README, "Events and queues": used_by(event) records a command that used the
// tensor and the host's side waits for it. reliability.md: a failure reaches
// the program "as a clzero::Error of kind opencl naming the call and the code
// (or, for a command that ended in error, whoever waited for it)"; README:
// afterwards the tensor works or usable() is false.
template <class Policy>
void failed_producer(const Cl& cl, const std::string& label, const typename Policy::Options& options) {
  using Tensor = clzero::MappedTensor<Elem, Policy>;
  const std::string check = label + ": a producer ending in error (user event set to CL_OUT_OF_RESOURCES)";
  Queue queue = cl.new_queue();  // failed commands stay off the shared queue
  std::optional<Tensor> made;
  try {
    made.emplace(cl.context.get(), queue.get(), clzero::Shape{kRows, kColumns}, clzero::Intent::output, options);
  } catch (const std::exception& error) {
    fail(check, std::string("making the tensor threw: ") + error.what());
    return;
  }
  Tensor& t = *made;
  const Mem buffer = watch_buffer(t.buffer());
  if (!verdict(check + " / an inference before it is right", infer(cl, t))) return;

  Event producer = cl.user_event(cl.context.get());
  const cl_uint seed = next_seed();
  Kernel kernel;
  std::string problem;
  std::string other;
  std::optional<clzero::Error> error = catch_error(
      [&] {
        auto dev = t.device_access();
        problem = enqueue_fill(cl, dev, t.queue(), t.size(), seed, kernel);
        dev.used_by(producer.get());
      },
      other);
  if (error || !other.empty() || !problem.empty()) {
    fail(check, "the access itself failed: " + (error ? std::string(error->what()) : other + problem));
    clSetUserEventStatus(producer.get(), CL_COMPLETE);
    return;
  }
  clSetUserEventStatus(producer.get(), CL_OUT_OF_RESOURCES);
  error = catch_error(
      [&] {
        auto view = t.read_view();
        problem = check_elements(view, t.size(), [&](std::size_t i) { return fill_value(i, seed); });
      },
      other);
  if (!other.empty()) {
    fail(check + " reaches the view as clzero::Error", "threw something else: " + other);
  } else if (!error && problem.empty() && runs_after_failed_events(cl)) {
    pass(check + ": the platform runs commands after a failed event and reports success, and the view showed "
                 "the kernel's data (reliability.md allows it there)");
  } else if (!error) {
    fail(check + " reaches the view as clzero::Error",
         "the view opened without an error" + (problem.empty() ? std::string(" (the kernel's data)") : ": " + problem));
  } else {
    verdict(check + " reaches the view as an OpenCL error naming the call and code",
            mismatch(*error, {{Kind::opencl}, "clzero: "}));
    // api() is "the failed OpenCL call" and code() its code: a code that call
    // cannot return (an event's execution status) misnames the failure.
    if (error->api() != nullptr && std::string(error->api()) == "clWaitForEvents") {
      const cl_int code = error->code();
      const bool possible = code == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST || code == CL_INVALID_VALUE ||
                            code == CL_INVALID_CONTEXT || code == CL_INVALID_EVENT || code == CL_OUT_OF_RESOURCES ||
                            code == CL_OUT_OF_HOST_MEMORY;
      verdict(check + " / the code is one clWaitForEvents returns",
              possible
                  ? ""
                  : std::string("code() is ") + std::to_string(code) + " (" + error->code_name() +
                        "), which clWaitForEvents does not return (OpenCL 3.0); message: \"" + error->what() + "\"");
    }
  }
  check_works_or_unusable(cl, t, check);
  made.reset();
  if (buffer.get() != nullptr)
    verdict(check + " / once the tensor is destroyed, its buffer is unmapped and released", released_cleanly(buffer));
}

// An event of another context would make every OpenCL call that waits on it
// fail with CL_INVALID_CONTEXT; api.md says used_by() refuses one.
template <class Policy>
void foreign_event(const Cl& cl, const std::string& label, const typename Policy::Options& options) {
  using Tensor = clzero::MappedTensor<Elem, Policy>;
  const std::string check = label + ": used_by() with an event of another context";
  Queue queue = cl.new_queue();
  std::optional<Tensor> made;
  try {
    made.emplace(cl.context.get(), queue.get(), clzero::Shape{kRows, kColumns}, clzero::Intent::output, options);
  } catch (const std::exception& error) {
    fail(check, std::string("making the tensor threw: ") + error.what());
    return;
  }
  Tensor& t = *made;
  const Mem buffer = watch_buffer(t.buffer());
  if (!verdict(check + " / an inference before it is right", infer(cl, t))) return;

  Event foreign = cl.user_event(cl.other_context.get());
  clSetUserEventStatus(foreign.get(), CL_COMPLETE);
  g_cleanup_reports.clear();
  const clzero::ErrorHandler previous = clzero::set_cleanup_error_handler(record_cleanup_error);
  const cl_uint seed = next_seed();
  Kernel kernel;
  std::string problem;
  std::string other;
  std::optional<clzero::Error> at_used_by;
  std::optional<clzero::Error> at_end;
  {
    auto dev = t.device_access();
    problem = enqueue_fill(cl, dev, t.queue(), t.size(), seed, kernel);
    at_used_by = catch_error([&] { dev.used_by(foreign.get()); }, other);
    at_end = catch_error([&] { dev.end(); }, other);
  }
  std::string view_problem;
  std::optional<clzero::Error> at_view = catch_error(
      [&] {
        auto view = t.read_view();
        view_problem = check_elements(view, t.size(), [&](std::size_t i) { return fill_value(i, seed); });
      },
      other);
  clzero::set_cleanup_error_handler(previous);

  if (!problem.empty() || !other.empty()) {
    fail(check, problem + other);
    return;
  }
  // api.md, DeviceAccess::used_by: an event of another context is refused
  // there (invalid_argument), and the access goes on as if it was never
  // handed in.
  verdict(check + " is refused by used_by() as invalid_argument naming the call",
          at_used_by ? mismatch(*at_used_by, {{Kind::invalid_argument}, "clzero: DeviceAccess::used_by: "})
                     : "used_by() accepted it");
  verdict(check + " / end() does not throw", at_end ? std::string("end() threw: ") + at_end->what() : "");
  std::string reported;
  for (const std::string& report : g_cleanup_reports) reported += " the cleanup handler got " + report + ";";
  verdict(check + " / nothing goes to the cleanup handler", reported);
  verdict(check + " / the view shows every element right",
          at_view ? std::string("read_view() threw: ") + at_view->what() : view_problem);
  check_works_or_unusable(cl, t, check);
  made.reset();
  if (buffer.get() != nullptr)
    verdict(check + " / once the tensor is destroyed, its buffer is unmapped and released", released_cleanly(buffer));
}

// ---------------------------------------------------------------------------
// Construction and arguments

// Every policy, on a shape one element larger than the device's
// CL_DEVICE_MAX_MEM_ALLOC_SIZE: the docs do not say which kind; any
// clzero::Error with the constructor's prefix, the call and code where it is
// an OpenCL error, and nothing left allocated.
template <class Policy>
void too_large(const Cl& cl, const clzero::DeviceCaps& caps, const std::string& label,
               const typename Policy::Options& options) {
  const std::size_t elements = static_cast<std::size_t>(caps.max_mem_alloc_size / sizeof(Elem)) + 1;
  expect_error(label + ": a tensor above CL_DEVICE_MAX_MEM_ALLOC_SIZE (" + std::to_string(elements) + " uint32)",
               {{Kind::invalid_argument, Kind::opencl, Kind::unsupported}, "clzero: MappedTensor: constructing"}, [&] {
                 clzero::MappedTensor<Elem, Policy> t(cl.context.get(), cl.queue.get(), clzero::Shape{elements},
                                                      clzero::Intent::output, options);
               });
}

void construction(const Cl& cl, const clzero::DeviceCaps& caps) {
  using clzero::Intent;
  using clzero::Shape;
  using Auto = clzero::MappedTensor<Elem>;
  using Persistent = clzero::MappedTensor<Elem, clzero::policy::Persistent>;
  const cl_uint context_count = context_references(cl.context.get());
  const cl_uint queue_count = queue_references(cl.queue.get());
  const std::string constructing = "clzero: MappedTensor: constructing";

  // reliability.md: "every construction and argument error" has a remedy,
  // "such as \"…; pass the engine's queue\"".
  expect_error("a null queue (context and queue)", {{Kind::invalid_argument}, constructing},
               [&] { Auto t(cl.context.get(), nullptr, Shape{16}, Intent::output); });
  expect_error("a null queue (queue only)", {{Kind::invalid_argument}, constructing},
               [&] { Auto t(static_cast<cl_command_queue>(nullptr), Shape{16}, Intent::output); });
  // api.md: "the context must be the queue's (or null)".
  expect_error("a context that is not the queue's", {{Kind::invalid_argument}, constructing, {"context"}},
               [&] { Auto t(cl.other_context.get(), cl.queue.get(), Shape{16}, Intent::output); });
  expect_error("a context that is not the queue's (Persistent)", {{Kind::invalid_argument}, constructing, {"context"}},
               [&] { Persistent t(cl.context.get(), cl.other_queue.get(), Shape{16}, Intent::output); });
  {
    std::string problem;
    try {
      Auto t(nullptr, cl.queue.get(), Shape{kRows, kColumns}, Intent::output);
      if (t.context() != cl.context.get()) problem = "context() is not the queue's context";
      if (problem.empty()) problem = infer(cl, t);
    } catch (const std::exception& error) {
      problem = std::string("threw: ") + error.what();
    }
    verdict("a null context takes the queue's, and an inference is right", problem);
  }

  // reliability.md: "the bytes overflow std::size_t" -> "split the tensor into
  // smaller ones".
  const std::size_t too_many_doubles = std::numeric_limits<std::size_t>::max() / sizeof(double) + 1;
  expect_error("a shape whose bytes overflow std::size_t",
               {{Kind::invalid_argument}, constructing, {"split the tensor into smaller ones"}}, [&] {
                 clzero::MappedTensor<double> t(cl.context.get(), cl.queue.get(), Shape{too_many_doubles},
                                                Intent::output);
               });
  too_large<clzero::policy::Auto>(cl, caps, "Auto", {});
  too_large<clzero::policy::Persistent>(cl, caps, "Persistent", {});
  clzero::policy::Persistent::Options use_host;
  use_host.allocation = clzero::Allocation::use_host_ptr();
  too_large<clzero::policy::Persistent>(cl, caps, "Persistent (use_host_ptr)", use_host);
  too_large<clzero::policy::MapPerInference>(cl, caps, "MapPerInference", {});
  too_large<clzero::policy::CopyToPinned>(cl, caps, "CopyToPinned", {});
  if (caps.svm_coarse_grain_buffer) {
    clzero::policy::Svm::Options coarse;
    coarse.grain = clzero::policy::Svm::Grain::coarse;
    too_large<clzero::policy::Svm>(cl, caps, "Svm (coarse)", coarse);
  }
  if (caps.svm_fine_grain_buffer) {
    clzero::policy::Svm::Options fine;
    fine.grain = clzero::policy::Svm::Grain::fine;
    too_large<clzero::policy::Svm>(cl, caps, "Svm (fine)", fine);
  }

  // reliability.md: DeviceCaps::query with a null device.
  expect_error(
      "DeviceCaps::query(nullptr)",
      {{Kind::invalid_argument}, "clzero: DeviceCaps::query: ", {"pass a device from clGetDeviceIDs or the queue's"}},
      [&] { (void)clzero::DeviceCaps::query(nullptr); });

  // README: "Failed OpenCL calls throw clzero::Error ... and the reliability
  // matrix's "construction throws": "nothing stayed allocated".
  verdict("the refused constructions left no buffer, SVM allocation or reference behind",
          references_back_to(cl, context_count, queue_count));
}

// api.md, Shape: rank 1 to 8, every extent at least 1, element count checked;
// reliability.md gives each remedy.
void shapes() {
  using clzero::Shape;
  const auto shape_error = [](std::vector<std::string> mentions) {
    return Expected{{Kind::invalid_argument}, "clzero: Shape", std::move(mentions)};
  };
  const std::vector<std::size_t> none;
  expect_error("Shape of rank 0", shape_error({"give at least one extent, e.g. {1}"}),
               [&] { Shape s(none.begin(), none.end()); });
  expect_error("Shape of rank 9", shape_error({"flatten adjacent axes into one"}),
               [&] { Shape s{1, 1, 1, 1, 1, 1, 1, 1, 1}; });
  expect_error("Shape with an extent of 0", shape_error({"give every axis an extent of 1 or more"}), [&] {
    Shape s{4, 0};
  });
  // api.md: "a negative one is an error naming the extent and its value
  // (`extent 1 is -3; ... give every axis an extent of 1 or more`)".
  expect_error("Shape{4, -3}", shape_error({"extent 1 is -3", "give every axis an extent of 1 or more"}), [&] {
    Shape s{4, -3};
  });
  const std::vector<long long> negative{2, -3};
  expect_error("Shape(first, last) with -3 at axis 1",
               shape_error({"extent 1 is -3", "give every axis an extent of 1 or more"}),
               [&] { Shape s(negative.begin(), negative.end()); });
  const std::size_t half = std::numeric_limits<std::size_t>::max() / 2 + 1;
  expect_error("Shape whose element count overflows std::size_t", shape_error({"split the tensor into smaller ones"}),
               [&] {
                 Shape s{half, std::size_t{2}};
               });
  std::string problem;
  try {
    const std::int64_t batch = 3;
    const Shape eight{1, 2, 1, 2, 1, 2, 1, batch};
    if (eight.rank() != 8 || eight.elements() != 24) problem = "rank or elements() wrong: " + eight.to_string();
  } catch (const std::exception& error) {
    problem = std::string("threw: ") + error.what();
  }
  verdict("Shape of rank 8 with mixed integer types is accepted", problem);
}

// api.md: "A policy the device cannot run fails in the constructor with
// ErrorKind::unsupported and a message naming what is missing".
void unsupported(const Cl& cl, const clzero::DeviceCaps& caps) {
  using clzero::Intent;
  using clzero::Shape;
  const cl_uint context_count = context_references(cl.context.get());
  const cl_uint queue_count = queue_references(cl.queue.get());
  const auto missing = [](const char* what) { return Expected{{Kind::unsupported}, "clzero: ", {what}, false}; };

  if (caps.intel_usm_host) {
    skip("UnifiedHost without cl_intel_unified_shared_memory", "the device has the extension");
  } else {
    expect_error("UnifiedHost without cl_intel_unified_shared_memory", missing("cl_intel_unified_shared_memory"), [&] {
      clzero::MappedTensor<Elem, clzero::policy::UnifiedHost> t(cl.context.get(), cl.queue.get(), Shape{16},
                                                                Intent::output);
    });
    clzero::policy::Auto::Options options;
    options.override_choice = true;
    options.choice.kind = clzero::policy::Choice::Kind::unified_host;
    expect_error(
        "Auto replaying a UnifiedHost choice without the extension", missing("cl_intel_unified_shared_memory"),
        [&] { clzero::MappedTensor<Elem> t(cl.context.get(), cl.queue.get(), Shape{16}, Intent::output, options); });
  }
  const auto with = [&](clzero::Allocation allocation) {
    clzero::policy::Persistent::Options options;
    options.allocation = allocation;
    return options;
  };
  if (caps.nv_create_buffer) {
    skip("Allocation::nv_host_pinned() without cl_nv_create_buffer", "the device has the extension");
  } else {
    expect_error("Persistent over Allocation::nv_host_pinned() without cl_nv_create_buffer",
                 missing("cl_nv_create_buffer"), [&] {
                   clzero::MappedTensor<Elem, clzero::policy::Persistent> t(cl.context.get(), cl.queue.get(), Shape{16},
                                                                            Intent::output,
                                                                            with(clzero::Allocation::nv_host_pinned()));
                 });
  }
  if (caps.arm_import_memory) {
    skip("Allocation::arm_import_host() without cl_arm_import_memory", "the device has the extension");
  } else {
    expect_error("Persistent over Allocation::arm_import_host() without cl_arm_import_memory",
                 missing("cl_arm_import_memory"), [&] {
                   clzero::MappedTensor<Elem, clzero::policy::Persistent> t(
                       cl.context.get(), cl.queue.get(), Shape{16}, Intent::output,
                       with(clzero::Allocation::arm_import_host()));
                 });
  }
  static int descriptor = 0;  // stands for an engine's ION or dma-buf descriptor
  if (caps.qcom_ext_host_ptr) {
    skip("Allocation::qcom_ext_host_ptr() without cl_qcom_ext_host_ptr", "the device has the extension");
  } else {
    expect_error("Persistent over Allocation::qcom_ext_host_ptr() without cl_qcom_ext_host_ptr",
                 missing("cl_qcom_ext_host_ptr"), [&] {
                   clzero::MappedTensor<Elem, clzero::policy::Persistent> t(
                       cl.context.get(), cl.queue.get(), Shape{16}, Intent::output,
                       with(clzero::Allocation::qcom_ext_host_ptr(&descriptor)));
                 });
  }
  for (const bool fine : {true, false}) {
    const bool has = fine ? caps.svm_fine_grain_buffer : caps.svm_coarse_grain_buffer;
    const std::string check = std::string("Svm (") + (fine ? "fine" : "coarse") + ") on a device without it";
    if (has) {
      skip(check, "the device has it");
      continue;
    }
    clzero::policy::Svm::Options options;
    options.grain = fine ? clzero::policy::Svm::Grain::fine : clzero::policy::Svm::Grain::coarse;
    expect_error(check, {{Kind::unsupported}, "clzero: ", {}, false}, [&] {
      clzero::MappedTensor<Elem, clzero::policy::Svm> t(cl.context.get(), cl.queue.get(), Shape{16}, Intent::output,
                                                        options);
    });
  }
  // api.md, Auto::Options::buffers_only: "an override_choice that is not
  // buffer-backed is then an error".
  {
    clzero::policy::Auto::Options options;
    options.buffers_only = true;
    options.override_choice = true;
    options.choice.kind = clzero::policy::Choice::Kind::svm;
    options.choice.svm_fine = true;
    expect_error("Auto with buffers_only replaying an Svm choice", {{Kind::invalid_argument}, "clzero: "}, [&] {
      clzero::MappedTensor<Elem> t(cl.context.get(), cl.queue.get(), Shape{16}, Intent::output, options);
    });
  }
  verdict("the refused policies left no buffer, SVM allocation or reference behind",
          references_back_to(cl, context_count, queue_count));
}

// api.md: "MappedTensor(): empty (no allocation), to be moved into later".
void empty_tensor(const Cl& cl) {
  Kernel kernel = cl.kernel("fill");
  clzero::MappedTensor<Elem> t;
  verdict("an empty tensor is false with size() and bytes() 0",
          (!t && t.size() == 0 && t.bytes() == 0) ? "" : "operator bool, size() or bytes() says otherwise");
  refuses_as_empty(t, kernel.get(), "an empty tensor refuses ");
  std::string problem;
  try {
    t = clzero::MappedTensor<Elem>(cl.context.get(), cl.queue.get(), clzero::Shape{kRows, kColumns},
                                   clzero::Intent::output);
  } catch (const std::exception& error) {
    problem = std::string("threw: ") + error.what();
  }
  if (problem.empty())
    still_works(cl, t, "an empty tensor moved into gives every element of 3 inferences right");
  else
    fail("an empty tensor can be moved into", problem);
}

// ---------------------------------------------------------------------------
// Arenas, rings, DLPack

void arena(const Cl& cl) {
  using clzero::ArenaPart;
  using clzero::Part;
  expect_error("TensorArena without parts",
               {{Kind::invalid_argument}, "clzero: TensorArena", {"pass one ArenaPart per tensor"}},
               [&] { clzero::TensorArena<> none(cl.context.get(), cl.queue.get(), {}, clzero::Intent::output); });
  std::optional<clzero::TensorArena<>> made;
  try {
    made.emplace(cl.context.get(), cl.queue.get(),
                 std::vector<ArenaPart>{ArenaPart::of<Elem>({16, 4}), ArenaPart::of<Elem>({16, 80})},
                 clzero::Intent::output);
  } catch (const std::exception& error) {
    fail("a TensorArena of two parts is made", error.what());
    return;
  }
  clzero::TensorArena<>& heads = *made;
  cl_command_queue queue = heads.tensor().queue();

  // One inference: a kernel per part, each with its seed; every element checked.
  const auto infer_arena = [&]() -> std::string {
    const cl_uint seeds[2] = {next_seed(), next_seed()};
    try {
      Kernel kernels[2] = {cl.kernel("fill"), cl.kernel("fill")};
      {
        auto dev = heads.device_access();
        for (std::size_t part = 0; part < 2; ++part) {
          dev.bind(kernels[part].get(), 0, Part{part});
          clSetKernelArg(kernels[part].get(), 1, sizeof(cl_uint), &seeds[part]);
          std::size_t n = heads.part(part).shape.elements();
          // In order: the last kernel's event stands for both.
          const cl_int rc =
              clEnqueueNDRangeKernel(queue, kernels[part].get(), 1, nullptr, &n, nullptr, dev.wait_count(queue),
                                     dev.wait_list(queue), part == 1 ? dev.event_slot(queue) : nullptr);
          if (rc != CL_SUCCESS) return "enqueueing returned " + std::string(clzero::error_name(rc));
        }
      }
      for (std::size_t part = 0; part < 2; ++part) {
        auto view = heads.read_view(part, clzero::as<Elem>);
        const std::string problem = check_elements(view, heads.part(part).shape.elements(),
                                                   [&](std::size_t i) { return fill_value(i, seeds[part]); });
        if (!problem.empty()) return "part " + std::to_string(part) + ": " + problem;
      }
      return "";
    } catch (const std::exception& error) {
      return std::string("threw: ") + error.what();
    }
  };
  const auto arena_still_works = [&](const std::string& check) {
    std::string problem;
    for (int i = 0; i < 3 && problem.empty(); ++i) problem = infer_arena();
    verdict(check, problem);
  };
  arena_still_works("TensorArena: every element of both parts is right in 3 inferences");

  expect_error("TensorArena::read_view(part past the last)",
               {{Kind::invalid_argument}, "clzero: TensorArena::read_view: ", {"use an index below parts()"}},
               [&] { auto view = heads.read_view(2, clzero::as<Elem>); });
  expect_error("TensorArena::read_view(element type of another size)",
               {{Kind::invalid_argument}, "clzero: TensorArena::read_view: ", {"use an element type of that size"}},
               [&] { auto view = heads.read_view(0, clzero::as<double>); });
  expect_error("TensorArena::write_view() of an output arena", {{Kind::misuse}, "clzero: TensorArena::write_view: "},
               [&] { auto view = heads.write_view(0, clzero::as<Elem>); });
  {
    auto view = heads.read_view(0, clzero::as<Elem>);
    expect_error("TensorArena::device_access() while a part's view lives",
                 {{Kind::misuse}, "clzero: TensorArena::device_access: "}, [&] { auto dev = heads.device_access(); });
  }
  {
    Kernel kernel = cl.kernel("fill");
    auto dev = heads.device_access();
    expect_error("TensorArena::read_view() while the arena's access is open",
                 {{Kind::misuse}, "clzero: TensorArena::read_view: "},
                 [&] { auto view = heads.read_view(0, clzero::as<Elem>); });
    expect_error("ArenaAccess::bind(Part{2}) of a two-part arena",
                 {{Kind::invalid_argument}, "clzero: ArenaAccess::bind: "},
                 [&] { dev.bind(kernel.get(), 0, Part{2}); });
    expect_error("ArenaAccess::bind(null kernel)",
                 {{Kind::invalid_argument}, "clzero: ArenaAccess::bind: ", {"pass a kernel from clCreateKernel"}},
                 [&] { dev.bind(nullptr, 0, Part{0}); });
    dev.end();
    // api.md names this very message: `clzero: ArenaAccess::waits: ...`.
    expect_error("an ended ArenaAccess refuses waits()", {{Kind::misuse}, "clzero: ArenaAccess::waits: "},
                 [&] { (void)dev.waits(); });
  }
  arena_still_works("TensorArena: after the refused calls, every element of both parts is right in 3 inferences");
}

void ring(const Cl& cl) {
  // reliability.md: a TensorRing with no slot -> "use 2 or more to overlap
  // inferences".
  expect_error("TensorRing of 0 slots",
               {{Kind::invalid_argument}, "clzero: TensorRing", {"use 2 or more to overlap inferences"}}, [&] {
                 clzero::TensorRing<Elem> none(cl.context.get(), cl.queue.get(), clzero::Shape{16},
                                               clzero::Intent::output, 0);
               });
  std::string problem;
  try {
    clzero::TensorRing<Elem> ring(cl.context.get(), cl.queue.get(), clzero::Shape{kRows, kColumns},
                                  clzero::Intent::output, 2);
    auto view = ring[0].read_view();
    expect_error("a ring slot refuses device_access() while its view lives",
                 {{Kind::misuse}, "clzero: MappedTensor::device_access: "},
                 [&] { auto dev = ring[2].device_access(); });
    view.reset();
    for (int i = 0; i < 4 && problem.empty(); ++i) problem = infer(cl, ring[static_cast<std::size_t>(i)]);
  } catch (const std::exception& error) {
    problem = std::string("threw: ") + error.what();
  }
  verdict("TensorRing: every element of 4 inferences over its slots is right", problem);
}

#if FROM_DOCS_HAVE_DLPACK
// api.md, DLPack: the DLManagedTensor "owns the view ... Until its deleter
// runs the tensor stays host-owned (a device_access() throws)".
void dlpack(const Cl& cl) {
  std::string problem;
  try {
    clzero::MappedTensor<Elem> t(cl.context.get(), cl.queue.get(), clzero::Shape{kRows, kColumns},
                                 clzero::Intent::output);
    const cl_uint seed = next_seed();
    Kernel kernel;
    {
      auto dev = t.device_access();
      problem = enqueue_fill(cl, dev, t.queue(), t.size(), seed, kernel);
    }
    DLManagedTensor* managed = clzero::interop::to_dlpack(t.read_view());
    const auto* data = static_cast<const Elem*>(managed->dl_tensor.data);
    if (problem.empty() &&
        (managed->dl_tensor.ndim != 2 || managed->dl_tensor.shape[0] != static_cast<std::int64_t>(kRows)))
      problem = "the DLPack tensor's shape is not the tensor's";
    for (std::size_t i = 0; problem.empty() && i < t.size(); ++i)
      if (data[i] != fill_value(i, seed)) problem = "element " + std::to_string(i) + " is wrong";
    expect_error("DLPack: device_access() while the DLManagedTensor lives",
                 {{Kind::misuse}, "clzero: MappedTensor::device_access: "}, [&] { auto dev = t.device_access(); });
    managed->deleter(managed);
    if (problem.empty()) {
      still_works(cl, t, "DLPack: after the deleter, every element of 3 inferences is right");
      return;
    }
  } catch (const std::exception& error) {
    problem = std::string("threw: ") + error.what();
  }
  fail("DLPack: a read view handed over as a DLManagedTensor", problem);
}
#endif

// ---------------------------------------------------------------------------
// Errors and events

void errors_and_events(const Cl& cl) {
  // README: "the error (CL_MAP_FAILURE, not -12)"; api.md: error_name.
  verdict("error_name(-12) is CL_MAP_FAILURE", std::string(clzero::error_name(-12)) == "CL_MAP_FAILURE"
                                                   ? ""
                                                   : std::string("it is ") + clzero::error_name(-12));
  verdict("error_name(CL_INVALID_CONTEXT) is CL_INVALID_CONTEXT",
          std::string(clzero::error_name(CL_INVALID_CONTEXT)) == "CL_INVALID_CONTEXT" ? "" : "it is not");

  // api.md, set_cleanup_error_handler: "Returns the previous handler; null
  // restores the default."
  const clzero::ErrorHandler original = clzero::set_cleanup_error_handler(record_cleanup_error);
  const clzero::ErrorHandler mine = clzero::set_cleanup_error_handler(nullptr);
  const clzero::ErrorHandler restored = clzero::set_cleanup_error_handler(original);
  verdict("set_cleanup_error_handler returns the previous handler", mine == record_cleanup_error ? "" : "it did not");
  verdict("set_cleanup_error_handler(nullptr) restores the default",
          restored == original ? "" : "another handler came back");

  // api.md, EventList: "data() is null when the list is empty";
  // drop_finished() "releases the events whose commands have finished and
  // returns the first error status among them (CL_COMPLETE if none)".
  std::string problem;
  try {
    clzero::EventList list;
    if (list.data() != nullptr || list.count() != 0 || !list.empty()) problem = "an empty list has data() or a count";
    Event producer = cl.user_event(cl.context.get());
    list.retain(producer.get());
    if (problem.empty() && (list.count() != 1 || list.data() == nullptr)) problem = "retain() did not add the event";
    if (problem.empty() && list.drop_finished() != CL_COMPLETE)
      problem = "drop_finished() on a pending event is no CL_COMPLETE";
    if (problem.empty() && list.size() != 1) problem = "drop_finished() dropped a pending event";
    clSetUserEventStatus(producer.get(), CL_OUT_OF_RESOURCES);
    if (problem.empty()) {
      const cl_int status = list.drop_finished();
      if (status != CL_OUT_OF_RESOURCES)
        problem = "drop_finished() returned " + std::string(clzero::error_name(status)) + " for a failed event";
      else if (!list.empty())
        problem = "drop_finished() kept the failed event";
    }
  } catch (const std::exception& error) {
    problem = std::string("threw: ") + error.what();
  }
  verdict("EventList: empty data() is null; drop_finished() reports a failed event and drops it", problem);
}

// api.md: "Every error message starts with `clzero: ` and what was called,
// as `Class::member`"; reliability.md counts "using ... an ended ... view"
// among the misuses (ErrorKind::misuse). Checked once, on an Auto tensor and
// a Persistent one (buffer-backed).
void call_names(const Cl& cl) {
  std::string problem;
  try {
    clzero::MappedTensor<Elem> t(cl.context.get(), cl.queue.get(), clzero::Shape{kRows, kColumns},
                                 clzero::Intent::output);
    problem = infer(cl, t);
    expect_error("read_view_as()'s error names MappedTensor::read_view_as",
                 {{Kind::invalid_argument}, "clzero: MappedTensor::read_view_as: "},
                 [&] { auto view = t.read_view_as(1, clzero::Shape{1}, clzero::as<Elem>); });
    expect_error("write_view_as()'s error names MappedTensor::write_view_as",
                 {{Kind::misuse}, "clzero: MappedTensor::write_view_as: "},
                 [&] { auto view = t.write_view_as(0, clzero::Shape{1}, clzero::as<Elem>); });
    auto view = t.read_view();
    view.reset();
    expect_error("at() on an ended view is ErrorKind::misuse", {{Kind::misuse}, "clzero: HostView::at: "},
                 [&] { (void)view.at(0); });

    clzero::MappedTensor<Elem, clzero::policy::Persistent> buffer(cl.context.get(), cl.queue.get(), clzero::Shape{16},
                                                                  clzero::Intent::output);
    Kernel kernel = cl.kernel("fill");
    expect_error("MappedTensor::bind(buffer, byte offset 4)'s error names MappedTensor::bind",
                 {{Kind::invalid_argument}, "clzero: MappedTensor::bind: "},
                 [&] { buffer.bind(kernel.get(), 0, sizeof(Elem)); });
    auto dev = buffer.device_access();
    expect_error("DeviceAccess::bind(buffer, byte offset 4)'s error names DeviceAccess::bind",
                 {{Kind::invalid_argument}, "clzero: DeviceAccess::bind: "},
                 [&] { dev.bind(kernel.get(), 0, sizeof(Elem)); });
  } catch (const std::exception& error) {
    problem = std::string("threw: ") + error.what();
  }
  verdict("the tensors for the message checks work", problem);
}

// ---------------------------------------------------------------------------
// Every policy

// The failure scenarios of one policy. They can crash the process (a heap
// corruption has been seen), so each policy's run in a process of its own.
template <class Policy>
void failure_checks(const Cl& cl, const std::string& label, const typename Policy::Options& options) {
  // Each scenario runs on a queue of its own; once the tensor and that queue
  // are gone, nothing of either may stay (reliability.md: after the tensor
  // dies, "the counts of cl_mem, cl_event, SVM allocations and mappings are
  // back where they were").
  cl_uint before = context_references(cl.context.get());
  failed_producer<Policy>(cl, label, options);
  verdict(label + ": a producer ending in error / afterwards nothing stays allocated", context_back_to(cl, before));
  before = context_references(cl.context.get());
  foreign_event<Policy>(cl, label, options);
  verdict(label + ": used_by() with an event of another context / afterwards nothing stays allocated",
          context_back_to(cl, before));
}

template <class P>
struct Tag {
  using type = P;
};

// Calls visit(key, label, Tag<Policy>, options) for every policy the device runs.
template <class Visit>
void for_each_policy(const clzero::DeviceCaps& caps, Visit&& visit) {
  using namespace clzero::policy;
  Persistent::Options use_host;
  use_host.allocation = clzero::Allocation::use_host_ptr();
  MapPerInference::Options map_use_host;
  map_use_host.allocation = clzero::Allocation::use_host_ptr();
  visit("map-per-inference", "MapPerInference", Tag<MapPerInference>{}, MapPerInference::Options{});
  visit("map-per-inference-use-host-ptr", "MapPerInference (use_host_ptr)", Tag<MapPerInference>{}, map_use_host);
  visit("persistent", "Persistent", Tag<Persistent>{}, Persistent::Options{});
  visit("persistent-use-host-ptr", "Persistent (use_host_ptr)", Tag<Persistent>{}, use_host);
  visit("copy-to-pinned", "CopyToPinned", Tag<CopyToPinned>{}, CopyToPinned::Options{});
  if (caps.svm_fine_grain_buffer) {
    Svm::Options fine;
    fine.grain = Svm::Grain::fine;
    visit("svm-fine", "Svm (fine)", Tag<Svm>{}, fine);
  }
  if (caps.svm_coarse_grain_buffer) {
    Svm::Options coarse;
    coarse.grain = Svm::Grain::coarse;
    visit("svm-coarse", "Svm (coarse)", Tag<Svm>{}, coarse);
  }
  if (caps.intel_usm_host) visit("unified-host", "UnifiedHost", Tag<UnifiedHost>{}, UnifiedHost::Options{});
  visit("auto", "Auto", Tag<Auto>{}, Auto::Options{});
}

// Runs this program again with --failure-checks KEY and passes its check
// lines on, counting them; a child that dies is a failed check.
void run_isolated(const std::string& self, const std::string& key, const std::string& label) {
  const std::string command = "'" + self + "' --failure-checks " + key;
  FILE* child = popen(command.c_str(), "r");
  if (child == nullptr) {
    fail(label + ": the failure scenarios run", "popen failed");
    return;
  }
  char line[4096];
  while (std::fgets(line, sizeof line, child) != nullptr) {
    std::fputs(line, stdout);
    std::fflush(stdout);
    if (std::strncmp(line, "PASS ", 5) == 0) ++g_passed;
    if (std::strncmp(line, "FAIL ", 5) == 0) ++g_failed;
    if (std::strncmp(line, "SKIP ", 5) == 0) ++g_skipped;
  }
  const int status = pclose(child);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code >= 128)
    fail(label + ": the failure scenarios run to the end",
         "the process died with signal " + std::to_string(code - 128) + " (" + strsignal(code - 128) +
             ") after the lines above; stderr says why");
}

void run(const Cl& cl, const std::string& self) {
  const clzero::DeviceCaps caps = clzero::DeviceCaps::query(cl.device);
  std::fprintf(stderr, "platform: %s; device: %s\n", cl.platform_name.c_str(), caps.name.c_str());
  // What the program holds itself: its queue, program and the OpenCL objects
  // they keep; at the end clzero must hold nothing more.
  const cl_uint context_count = context_references(cl.context.get());
  const cl_uint queue_count = queue_references(cl.queue.get());

  shapes();
  construction(cl, caps);
  unsupported(cl, caps);
  empty_tensor(cl);
  errors_and_events(cl);
  call_names(cl);

  for_each_policy(caps, [&](const char* key, const std::string& label, auto tag, const auto& options) {
    using Policy = typename decltype(tag)::type;
    output_suite<Policy>(cl, label, options);
    input_suite<Policy>(cl, label, options);
    run_isolated(self, key, label);
  });

  arena(cl);
  ring(cl);
#if FROM_DOCS_HAVE_DLPACK
  dlpack(cl);
#else
  skip("DLPack", "dlpack/dlpack.h is not installed");
#endif

  verdict("every tensor released: the context and queue hold no reference of clzero's",
          references_back_to(cl, context_count, queue_count));
}

// This program's path, for running it again.
std::string own_path() {
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  return length > 0 ? std::string(path, static_cast<std::size_t>(length)) : "/proc/self/exe";
}

// The child's part: the failure scenarios of the policy named `key`.
void run_failure_checks(const Cl& cl, const std::string& key) {
  const clzero::DeviceCaps caps = clzero::DeviceCaps::query(cl.device);
  for_each_policy(caps, [&](const char* name, const std::string& label, auto tag, const auto& options) {
    if (key == name) failure_checks<typename decltype(tag)::type>(cl, label, options);
  });
}

}  // namespace

int main(int argc, char** argv) {
  const bool child = argc == 3 && std::string(argv[1]) == "--failure-checks";
  try {
    std::string why;
    std::unique_ptr<Cl> cl = open_cl(why);
    if (!cl)  // no OpenCL to check against is a failure, never a quiet pass (CTest reads FAIL)
      fail("setting up OpenCL for the checks", why);
    else if (child)
      run_failure_checks(*cl, argv[2]);
    else
      run(*cl, own_path());
  } catch (const std::exception& error) {
    fail("the checks ran to the end", std::string("an exception escaped: ") + error.what());
  } catch (...) {
    fail("the checks ran to the end", "an exception that is not a std::exception escaped");
  }
  if (child) return g_failed == 0 ? 0 : 1;
  std::printf("from_docs contract: %d passed, %d failed, %d skipped\n", g_passed, g_failed, g_skipped);
  return g_failed == 0 ? 0 : 1;
}
