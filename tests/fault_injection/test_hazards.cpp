// SPDX-License-Identifier: Apache-2.0
// The happens-before checker (layer/hazard.hpp) shown to fire: each program
// below breaks an ordering rule of the OpenCL 3.0 execution model with raw
// OpenCL calls, and the checker's report must name the two commands. Each
// has a twin with the missing edge added, which must report nothing. Run
// with CLZERO_FAULT_HAZARDS=1 (ctest's hazard.must_fire); each test clears
// what it provoked, so the run's exit status speaks of anything else.
#include <CL/cl.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "harness/fault_layer.hpp"
#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero_test;

namespace {

constexpr std::size_t kElements = 4096;
constexpr std::size_t kBytes = kElements * sizeof(std::uint32_t);

// The checker's reports made inside one test; requires the checker on.
class Reports {
 public:
  Reports() {
    REQUIRE(FaultLayer::get().hazard_counts().on == 1);  // run through ctest: CLZERO_FAULT_HAZARDS=1
    FaultLayer::get().hazard_clear();
  }
  ~Reports() { FaultLayer::get().hazard_clear(); }
  Reports(const Reports&) = delete;
  Reports& operator=(const Reports&) = delete;

  std::vector<std::string> all() const { return FaultLayer::get().hazard_reports(); }
  // Whether one report holds every one of `parts`.
  bool named(std::initializer_list<const char*> parts) const {
    for (const std::string& r : all()) {
      bool every = true;
      for (const char* p : parts) every = every && r.find(p) != std::string::npos;
      if (every) return true;
    }
    return false;
  }
};

struct Queue {
  explicit Queue(cl_command_queue_properties props) : q(Env::get().make_queue(props)) {}
  ~Queue() { clReleaseCommandQueue(q); }
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;
  cl_command_queue q;
};

struct Buffer {
  Buffer() {
    cl_int rc = CL_SUCCESS;
    m = clCreateBuffer(Env::get().context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, kBytes, nullptr, &rc);
    ok(rc, "clCreateBuffer");
  }
  ~Buffer() { clReleaseMemObject(m); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  cl_mem m = nullptr;
};

// fill_u32 writes `out`; copy_u32 reads `in` (__global const) and writes `out`.
struct Kernels {
  Kernels(cl_mem written, cl_mem read, cl_mem copy_out) : fill("fill_u32"), copy("copy_u32") {
    fill.arg(0, written);
    fill.arg(1, cl_uint{kElements});
    fill.arg(2, cl_uint{7});
    copy.arg(0, read);
    copy.arg(1, copy_out);
    copy.arg(2, cl_uint{kElements});
  }
  Kernel fill, copy;
};

void enqueue(cl_command_queue q, cl_kernel k, cl_uint n, const cl_event* waits, cl_event* event) {
  const std::size_t global = kElements;
  ok(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, n, waits, event), "clEnqueueNDRangeKernel");
}

void release(std::initializer_list<cl_event> events) {
  for (cl_event e : events)
    if (e != nullptr) clReleaseEvent(e);
}

// The command graph of MappedAtRest::to_device at commit 928b045 for an output
// tensor (mapped at rest for reading): a read-only access keeps the mapping
// and its kernel waits on the map; the next write access unmaps waiting on
// the map only (`unmap_waits_for_reader` false), so on an out-of-order queue
// its writing kernel may overtake the reading one.
void persistent_read_then_write(bool unmap_waits_for_reader) {
  Queue ooo(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Buffer tensor, out;
  Kernels k(tensor.m, tensor.m, out.m);
  cl_event mapped = nullptr, read = nullptr, unmapped = nullptr, written = nullptr;
  cl_int rc = CL_SUCCESS;
  void* p = clEnqueueMapBuffer(ooo.q, tensor.m, CL_FALSE, CL_MAP_READ, 0, kBytes, 0, nullptr, &mapped, &rc);
  ok(rc, "clEnqueueMapBuffer");
  ok(clWaitForEvents(1, &mapped), "clWaitForEvents");  // a host view
  enqueue(ooo.q, k.copy.k, 1, &mapped, &read);         // Access::read: the mapping stays
  const cl_event before_unmap[] = {mapped, read};
  ok(clEnqueueUnmapMemObject(ooo.q, tensor.m, p, unmap_waits_for_reader ? 2 : 1, before_unmap, &unmapped),
     "clEnqueueUnmapMemObject");
  enqueue(ooo.q, k.fill.k, 1, &unmapped, &written);  // Access::write
  ok(clFinish(ooo.q), "clFinish");
  release({mapped, read, unmapped, written});
}

}  // namespace

TEST_CASE("the checker reports the old Persistent read-then-write graph, whose writer may overtake the reader",
          "[hazard_must_fire]") {
  CLZERO_NEEDS(Env::get().caps.out_of_order_queue, "out-of-order queue");
  Reports reports;
  persistent_read_then_write(false);
  INFO(reports.all().size() << " reports; first: " << (reports.all().empty() ? "" : reports.all()[0]));
  CHECK(reports.named(
      {"read by #", "clEnqueueNDRangeKernel(copy_u32)", "write by #", "clEnqueueNDRangeKernel(fill_u32)"}));
}

TEST_CASE("the checker reports nothing once the write access's unmap also waits for the read kernel",
          "[hazard_must_fire]") {
  CLZERO_NEEDS(Env::get().caps.out_of_order_queue, "out-of-order queue");
  Reports reports;
  persistent_read_then_write(true);
  INFO(reports.all().size() << " reports; first: " << (reports.all().empty() ? "" : reports.all()[0]));
  CHECK(reports.all().empty());
}

TEST_CASE("the checker reports a writer on one queue and a reader on another with no event between them",
          "[hazard_must_fire]") {
  Reports reports;
  Queue a(0), b(0);
  Buffer shared, out;
  Kernels k(shared.m, shared.m, out.m);
  enqueue(a.q, k.fill.k, 0, nullptr, nullptr);
  enqueue(b.q, k.copy.k, 0, nullptr, nullptr);  // nothing orders it after the writer
  ok(clFinish(a.q), "clFinish");
  ok(clFinish(b.q), "clFinish");
  INFO(reports.all().size() << " reports; first: " << (reports.all().empty() ? "" : reports.all()[0]));
  CHECK(reports.named({"write by #", "clEnqueueNDRangeKernel(fill_u32)", "read by #",
                       "clEnqueueNDRangeKernel(copy_u32)", "no order between them"}));
}

TEST_CASE("the checker reports nothing when the reader waits for the writer's flushed event, or the host waited",
          "[hazard_must_fire]") {
  Reports reports;
  Queue a(0), b(0);
  Buffer shared, out;
  Kernels k(shared.m, shared.m, out.m);
  cl_event written = nullptr, read = nullptr;
  enqueue(a.q, k.fill.k, 0, nullptr, &written);
  ok(clFlush(a.q), "clFlush");
  enqueue(b.q, k.copy.k, 1, &written, &read);  // an event edge
  // The host saw the reader end (polling): the next writer on queue a
  // needs no event.
  ok(clFlush(b.q), "clFlush");
  for (cl_int status = CL_QUEUED; status != CL_COMPLETE;)
    ok(clGetEventInfo(read, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr), "clGetEventInfo");
  enqueue(a.q, k.fill.k, 0, nullptr, nullptr);
  ok(clFinish(a.q), "clFinish");  // a host wait: queue b may now read again
  enqueue(b.q, k.copy.k, 0, nullptr, nullptr);
  ok(clFinish(b.q), "clFinish");
  release({written, read});
  INFO(reports.all().size() << " reports; first: " << (reports.all().empty() ? "" : reports.all()[0]));
  CHECK(reports.all().empty());
}

TEST_CASE("the checker reports a wait on an event whose queue was never flushed after it (section 5.13)",
          "[hazard_must_fire]") {
  Reports reports;
  Queue a(0), b(0);
  Buffer shared, out;
  Kernels k(shared.m, shared.m, out.m);
  cl_event written = nullptr;
  enqueue(a.q, k.fill.k, 0, nullptr, &written);
  enqueue(b.q, k.copy.k, 1, &written, nullptr);  // queue a not flushed
  ok(clFlush(a.q), "clFlush");                   // too late for the rule; lets the reader run
  ok(clFinish(b.q), "clFinish");
  ok(clFinish(a.q), "clFinish");
  release({written});
  INFO(reports.all().size() << " reports; first: " << (reports.all().empty() ? "" : reports.all()[0]));
  CHECK(reports.named(
      {"unflushed wait", "clEnqueueNDRangeKernel(copy_u32)", "clEnqueueNDRangeKernel(fill_u32)", "section 5.13"}));
  CHECK(FaultLayer::get().hazard_counts().hazards == 0);  // ordered by the event all the same
}

TEST_CASE("the checker reports the host's writing mapping against a kernel that reads before the unmap",
          "[hazard_must_fire]") {
  Reports reports;
  Buffer shared, out;
  Kernels k(shared.m, shared.m, out.m);
  cl_command_queue q = Env::get().queue;
  cl_int rc = CL_SUCCESS;
  void* p =
      clEnqueueMapBuffer(q, shared.m, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, kBytes, 0, nullptr, nullptr, &rc);
  ok(rc, "clEnqueueMapBuffer");
  enqueue(q, k.copy.k, 0, nullptr, nullptr);  // still mapped
  ok(clEnqueueUnmapMemObject(q, shared.m, p, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
  ok(clFinish(q), "clFinish");
  INFO(reports.all().size() << " reports; first: " << (reports.all().empty() ? "" : reports.all()[0]));
  CHECK(reports.named({"the host's writing mapping", "clEnqueueMapBuffer(CL_MAP_WRITE_INVALIDATE_REGION)", "read by #",
                       "clEnqueueNDRangeKernel(copy_u32)"}));
}

TEST_CASE("the checker sees a sub-buffer as a range of its parent", "[hazard_must_fire]") {
  Reports reports;
  Queue a(0), b(0);
  Buffer parent, out;
  const cl_buffer_region second_half{kBytes / 2, kBytes / 2};
  cl_int rc = CL_SUCCESS;
  cl_mem half = clCreateSubBuffer(parent.m, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &second_half, &rc);
  ok(rc, "clCreateSubBuffer");
  Kernel fill("fill_u32");
  fill.arg(0, half);
  fill.arg(1, cl_uint{kElements / 2});
  fill.arg(2, cl_uint{3});
  const std::size_t n = kElements / 2;
  std::vector<char> first_half(kBytes / 2), whole(kBytes);
  // The first half, unordered with the writer of the second half: no conflict.
  ok(clEnqueueReadBuffer(a.q, parent.m, CL_FALSE, 0, kBytes / 2, first_half.data(), 0, nullptr, nullptr),
     "clEnqueueReadBuffer");
  ok(clEnqueueNDRangeKernel(b.q, fill.k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
  // The whole parent, unordered with it: the second half conflicts.
  ok(clEnqueueReadBuffer(a.q, parent.m, CL_FALSE, 0, kBytes, whole.data(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
  ok(clFinish(a.q), "clFinish");
  ok(clFinish(b.q), "clFinish");
  clReleaseMemObject(half);
  INFO(reports.all().size() << " reports; first: " << (reports.all().empty() ? "" : reports.all()[0]));
  REQUIRE(reports.all().size() == 1);
  CHECK(reports.named({"write by #", "clEnqueueNDRangeKernel(fill_u32)", "read by #", "clEnqueueReadBuffer",
                       std::to_string(kBytes / 2).c_str()}));
}

namespace {

// On an out-of-order queue only wait lists, markers and barriers order
// commands (OpenCL 3.0 section 5.11): a writer then a reader of one buffer,
// with `ordered` the edges that make it safe.
void out_of_order_writer_then_reader(bool ordered) {
  Queue ooo(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Buffer shared, out;
  Kernels k(shared.m, shared.m, out.m);
  enqueue(ooo.q, k.fill.k, 0, nullptr, nullptr);
  // A barrier with an empty wait list: everything after waits for the writer.
  if (ordered) ok(clEnqueueBarrierWithWaitList(ooo.q, 0, nullptr, nullptr), "clEnqueueBarrierWithWaitList");
  enqueue(ooo.q, k.copy.k, 0, nullptr, nullptr);
  if (ordered) {
    // A marker with an empty wait list: it waits for the reader, and a second
    // writer that waits on the marker comes after it.
    cl_event marker = nullptr;
    ok(clEnqueueMarkerWithWaitList(ooo.q, 0, nullptr, &marker), "clEnqueueMarkerWithWaitList");
    enqueue(ooo.q, k.fill.k, 1, &marker, nullptr);
    release({marker});
  }
  ok(clFinish(ooo.q), "clFinish");
}

}  // namespace

TEST_CASE("the checker reports a writer and a reader on an out-of-order queue with nothing between them",
          "[hazard_must_fire]") {
  CLZERO_NEEDS(Env::get().caps.out_of_order_queue, "out-of-order queue");
  Reports reports;
  out_of_order_writer_then_reader(false);
  INFO(reports.all().size() << " reports; first: " << (reports.all().empty() ? "" : reports.all()[0]));
  CHECK(reports.named(
      {"write by #", "clEnqueueNDRangeKernel(fill_u32)", "read by #", "clEnqueueNDRangeKernel(copy_u32)"}));
}

TEST_CASE("the checker takes an empty-list barrier and marker on an out-of-order queue as waiting for all before",
          "[hazard_must_fire]") {
  CLZERO_NEEDS(Env::get().caps.out_of_order_queue, "out-of-order queue");
  Reports reports;
  out_of_order_writer_then_reader(true);
  INFO(reports.all().size() << " reports; first: " << (reports.all().empty() ? "" : reports.all()[0]));
  CHECK(reports.all().empty());
}

#if defined(CL_VERSION_2_0)
TEST_CASE("the checker sees an SVM pointer plus an offset as a range of its allocation", "[hazard_must_fire]") {
  Env& env = Env::get();
  CLZERO_NEEDS(env.caps.svm_coarse_grain_buffer, "coarse-grained buffer SVM");
  Reports reports;
  Queue a(0), b(0);
  auto* svm = static_cast<std::uint32_t*>(clSVMAlloc(env.context, CL_MEM_READ_WRITE, kBytes, 0));
  REQUIRE(svm != nullptr);
  Kernel fill("fill_u32");  // writes the second half, from its pointer on
  ok(clSetKernelArgSVMPointer(fill.k, 0, svm + kElements / 2), "clSetKernelArgSVMPointer");
  fill.arg(1, cl_uint{kElements / 2});
  fill.arg(2, cl_uint{9});
  const std::size_t n = kElements / 2;
  std::vector<std::uint32_t> first_half(kElements / 2), straddling(kElements / 2);
  ok(clEnqueueNDRangeKernel(a.q, fill.k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
  // Unordered with the writer: the first half does not conflict, a copy
  // from the middle of the first half into the second does.
  ok(clEnqueueSVMMemcpy(b.q, CL_FALSE, first_half.data(), svm, kBytes / 2, 0, nullptr, nullptr), "clEnqueueSVMMemcpy");
  ok(clEnqueueSVMMemcpy(b.q, CL_FALSE, straddling.data(), svm + kElements / 4, kBytes / 2, 0, nullptr, nullptr),
     "clEnqueueSVMMemcpy");
  ok(clFinish(a.q), "clFinish");
  ok(clFinish(b.q), "clFinish");
  clSVMFree(env.context, svm);
  INFO(reports.all().size() << " reports; first: " << (reports.all().empty() ? "" : reports.all()[0]));
  REQUIRE(reports.all().size() == 1);
  CHECK(reports.named({"write by #", "clEnqueueNDRangeKernel(fill_u32)", "read by #", "clEnqueueSVMMemcpy",
                       "SVM allocation",
                       ("[" + std::to_string(kBytes / 2) + ", " + std::to_string(3 * kBytes / 4) + ")").c_str()}));
}
#endif
