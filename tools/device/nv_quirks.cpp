// SPDX-License-Identifier: Apache-2.0
// Raw-OpenCL probes of driver behaviour that clzero's policies depend on.
// Each probe runs a command sequence many times on fresh buffers and counts
// the runs in which the host saw a wrong element. Used to find, and to keep
// checking, the workarounds documented in docs/drivers.md.
//
//   nv_quirks [platform-name-substring] [elements] [cross|failed|war|read|after-failed [iterations]]
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <time.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using CreateBufferNv = cl_mem(CL_API_CALL*)(cl_context, cl_mem_flags, cl_bitfield, size_t, void*, cl_int*);

cl_context ctx;
cl_command_queue q;
cl_kernel fill;
cl_platform_id platform;
CreateBufferNv create_nv = nullptr;
size_t n = 1 << 18;

void ok(cl_int rc, const char* what) {
  if (rc != CL_SUCCESS) {
    std::printf("  %s failed: %d\n", what, rc);
    throw rc;
  }
}

cl_uint value(cl_uint i, cl_uint iter) { return (i * 2654435761u) ^ (iter * 40503u + 0x9E3779B9u); }

enum class Alloc { alloc_host_ptr, nv_host_pinned, nv_host, use_host_ptr };
const char* name(Alloc a) {
  return a == Alloc::alloc_host_ptr ? "ALLOC_HOST_PTR" : a == Alloc::nv_host_pinned ? "NV host+pinned"
         : a == Alloc::nv_host                                                   ? "NV host"
                                                                                 : "USE_HOST_PTR";
}

std::vector<void*> owned;
cl_mem make(Alloc a) {
  cl_int rc = CL_SUCCESS;
  cl_mem m = nullptr;
  if (a == Alloc::alloc_host_ptr) m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n * 4, nullptr, &rc);
  if (a == Alloc::nv_host_pinned) m = create_nv(ctx, CL_MEM_READ_WRITE, 3, n * 4, nullptr, &rc);
  if (a == Alloc::nv_host) m = create_nv(ctx, CL_MEM_READ_WRITE, 1, n * 4, nullptr, &rc);
  if (a == Alloc::use_host_ptr) {
    void* p = std::aligned_alloc(4096, (n * 4 + 4095) / 4096 * 4096);
    owned.push_back(p);
    m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n * 4, p, &rc);
  }
  ok(rc, "create buffer");
  return m;
}

void run_kernel(cl_mem m, cl_uint iter, cl_uint nwait, const cl_event* wait, cl_event* done) {
  cl_uint count = static_cast<cl_uint>(n);
  ok(clSetKernelArg(fill, 0, sizeof m, &m), "arg");
  ok(clSetKernelArg(fill, 1, sizeof count, &count), "arg");
  ok(clSetKernelArg(fill, 2, sizeof iter, &iter), "arg");
  ok(clEnqueueNDRangeKernel(q, fill, 1, nullptr, &n, nullptr, nwait, wait, done), "kernel");
}

size_t wrong(const cl_uint* p, cl_uint iter) {
  size_t w = 0;
  for (size_t i = 0; i < n; ++i) w += p[i] != value(static_cast<cl_uint>(i), iter);
  return w;
}

// The clzero Persistent sequence: [init] map(non-blocking) ... per iteration:
// unmap -> kernel -> map(non-blocking, after kernel) -> wait -> read.
// wait: 0 the map's event only (what the spec promises is enough), 1 the map's
// and the kernel's events, 2 a blocking map, 3 the map's event then clFinish.
size_t persistent(Alloc a, int init, int iterations, bool flush_after_fill, std::vector<void*>* pointers = nullptr,
                  int wait = 0) {
  cl_mem m = make(a);
  cl_event ev = nullptr;
  if (init == 1) {  // device fill
    cl_uchar z = 0;
    ok(clEnqueueFillBuffer(q, m, &z, 1, 0, n * 4, 0, nullptr, &ev), "fill");
    if (flush_after_fill) clFinish(q);
  } else if (init == 2) {  // host zero through a blocking write-invalidate map
    void* p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, n * 4, 0, nullptr, nullptr, nullptr);
    std::memset(p, 0, n * 4);
    ok(clEnqueueUnmapMemObject(q, m, p, 0, nullptr, &ev), "unmap");
  }
  cl_int rc = CL_SUCCESS;
  cl_event mapped = nullptr;
  void* p = clEnqueueMapBuffer(q, m, CL_FALSE, CL_MAP_READ, 0, n * 4, ev ? 1 : 0, ev ? &ev : nullptr, &mapped, &rc);
  ok(rc, "map");
  if (ev) clReleaseEvent(ev);
  size_t bad = 0;
  for (int it = 1; it <= iterations; ++it) {
    cl_event unmapped = nullptr, done = nullptr;
    ok(clEnqueueUnmapMemObject(q, m, p, 1, &mapped, &unmapped), "unmap");
    clReleaseEvent(mapped);
    run_kernel(m, static_cast<cl_uint>(it), 1, &unmapped, &done);
    clReleaseEvent(unmapped);
    p = clEnqueueMapBuffer(q, m, wait == 2 ? CL_TRUE : CL_FALSE, CL_MAP_READ, 0, n * 4, 1, &done, &mapped, &rc);
    ok(rc, "map");
    clFlush(q);
    ok(clWaitForEvents(1, &mapped), "wait");
    if (wait == 1) ok(clWaitForEvents(1, &done), "wait kernel");
    if (wait == 3) clFinish(q);
    clReleaseEvent(done);
    if (pointers) pointers->push_back(p);
    bad += wrong(static_cast<cl_uint*>(p), static_cast<cl_uint>(it)) ? 1 : 0;
  }
  clEnqueueUnmapMemObject(q, m, p, 1, &mapped, nullptr);
  clReleaseEvent(mapped);
  clFinish(q);
  clReleaseMemObject(m);
  return bad;
}

// Fill then kernel then ReadBuffer: is the fill ordered before the kernel?
size_t fill_then_kernel(Alloc a) {
  cl_mem m = make(a);
  cl_uchar z = 0;
  ok(clEnqueueFillBuffer(q, m, &z, 1, 0, n * 4, 0, nullptr, nullptr), "fill");
  run_kernel(m, 1, 0, nullptr, nullptr);
  std::vector<cl_uint> host(n);
  ok(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * 4, host.data(), 0, nullptr, nullptr), "read");
  clReleaseMemObject(m);
  return wrong(host.data(), 1) ? 1 : 0;
}

// The producer on another queue of the context (a kernel on the engine's
// queue, the tensor's host side on clzero's): per iteration, the kernel
// writes every element on `q2`, then the host makes the data visible on `q`
// one way, and reads. way: 0 polls the kernel's event, then a blocking map
// on q; 1 clWaitForEvents on it, then a blocking map on q; 2 a blocking map
// on q whose wait list holds it; 3 polls it, then a blocking map on q2 (the
// producer's queue); 4 polls it, clWaitForEvents on it, a blocking map on q;
// 5 a non-blocking map on q after it, clWaitForEvents on the map and the
// kernel; 6 the kernel on q itself, then a blocking map on q (the same-queue
// case, for reference). Returns the iterations with a wrong element.
cl_command_queue q2;
size_t cross_queue(Alloc a, int way, int iterations) {
  cl_mem m = make(a);
  cl_uchar z = 0;
  ok(clEnqueueFillBuffer(q, m, &z, 1, 0, n * 4, 0, nullptr, nullptr), "fill");
  ok(clFinish(q), "finish");
  size_t bad = 0;
  for (int it = 1; it <= iterations; ++it) {
    cl_command_queue producer = way == 6 ? q : q2;
    cl_event done = nullptr;
    cl_uint count = static_cast<cl_uint>(n), iter = static_cast<cl_uint>(it);
    ok(clSetKernelArg(fill, 0, sizeof m, &m), "arg");
    ok(clSetKernelArg(fill, 1, sizeof count, &count), "arg");
    ok(clSetKernelArg(fill, 2, sizeof iter, &iter), "arg");
    ok(clEnqueueNDRangeKernel(producer, fill, 1, nullptr, &n, nullptr, 0, nullptr, &done), "kernel");
    ok(clFlush(producer), "flush");
    const auto poll = [&] {
      cl_int st = CL_QUEUED;
      do ok(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr), "status");
      while (st > CL_COMPLETE);
    };
    cl_int rc = CL_SUCCESS;
    cl_command_queue mapq = way == 3 ? q2 : q;
    void* p = nullptr;
    cl_event mapped = nullptr;
    if (way == 0 || way == 3 || way == 4) poll();
    if (way == 1 || way == 4) ok(clWaitForEvents(1, &done), "wait kernel");
    if (way == 5) {
      p = clEnqueueMapBuffer(q, m, CL_FALSE, CL_MAP_READ, 0, n * 4, 1, &done, &mapped, &rc);
      ok(rc, "map");
      ok(clFlush(q), "flush");
      ok(clWaitForEvents(1, &mapped), "wait map");
      ok(clWaitForEvents(1, &done), "wait kernel");
      clReleaseEvent(mapped);
    } else {
      p = clEnqueueMapBuffer(mapq, m, CL_TRUE, CL_MAP_READ, 0, n * 4, way == 2 ? 1 : 0, way == 2 ? &done : nullptr,
                             nullptr, &rc);
      ok(rc, "map");
    }
    bad += wrong(static_cast<cl_uint*>(p), iter) ? 1 : 0;
    ok(clEnqueueUnmapMemObject(way == 3 ? q2 : q, m, p, 0, nullptr, nullptr), "unmap");
    ok(clFinish(q), "finish");
    ok(clFinish(q2), "finish");
    clReleaseEvent(done);
  }
  clReleaseMemObject(m);
  return bad;
}

// A new tensor's first inference with the producer on another queue, as
// clzero's Persistent made it: a zero fill and a non-blocking map on q, the
// unmap after them, the kernel on q2 after the unmap, the host polls the
// kernel's event and maps, blocking, on q. fence: 1 maps blocking right
// after the fill instead (so the fill has landed before the tensor is
// handed out). Returns the runs, each on a fresh buffer, with a wrong
// element.
size_t first_inference(Alloc a, bool fence, int runs) {
  size_t bad = 0;
  for (int r = 0; r < runs; ++r) {
    cl_mem m = make(a);
    cl_uchar z = 0;
    cl_event filled = nullptr, mapped = nullptr, unmapped = nullptr, done = nullptr;
    cl_int rc = CL_SUCCESS;
    ok(clEnqueueFillBuffer(q, m, &z, 1, 0, n * 4, 0, nullptr, &filled), "fill");
    void* p = clEnqueueMapBuffer(q, m, fence ? CL_TRUE : CL_FALSE, CL_MAP_READ, 0, n * 4, 1, &filled, &mapped, &rc);
    ok(rc, "map");
    ok(clEnqueueUnmapMemObject(q, m, p, 1, &mapped, &unmapped), "unmap");
    ok(clFlush(q), "flush");
    cl_uint count = static_cast<cl_uint>(n), iter = 1;
    ok(clSetKernelArg(fill, 0, sizeof m, &m), "arg");
    ok(clSetKernelArg(fill, 1, sizeof count, &count), "arg");
    ok(clSetKernelArg(fill, 2, sizeof iter, &iter), "arg");
    ok(clEnqueueNDRangeKernel(q2, fill, 1, nullptr, &n, nullptr, 1, &unmapped, &done), "kernel");
    ok(clFlush(q2), "flush");
    cl_int st = CL_QUEUED;
    do ok(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr), "status");
    while (st > CL_COMPLETE);
    p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 0, n * 4, 0, nullptr, nullptr, &rc);
    ok(rc, "map");
    bad += wrong(static_cast<cl_uint*>(p), iter) ? 1 : 0;
    ok(clEnqueueUnmapMemObject(q, m, p, 0, nullptr, nullptr), "unmap");
    ok(clFinish(q), "finish");
    ok(clFinish(q2), "finish");
    for (cl_event e : {filled, mapped, unmapped, done}) clReleaseEvent(e);
    clReleaseMemObject(m);
  }
  return bad;
}


// A producer that ends in error: a kernel writes new values (no wait list),
// then a non-blocking map for reading on the same in-order queue waits on a
// user event that is set to CL_OUT_OF_RESOURCES after the map is flushed.
// way 0 polls the map's event, way 1 calls clWaitForEvents on it. Prints
// the map's final status, what clWaitForEvents said, the kernel's status
// when the map was first seen finished, and the wrong elements.
void failed_user_event(Alloc a, int way) {
  cl_mem m = make(a);
  cl_uchar z = 0;
  ok(clEnqueueFillBuffer(q, m, &z, 1, 0, n * 4, 0, nullptr, nullptr), "fill");
  ok(clFinish(q), "finish");
  cl_event done = nullptr, mapped = nullptr;
  cl_uint count = static_cast<cl_uint>(n), iter = 7;
  ok(clSetKernelArg(fill, 0, sizeof m, &m), "arg");
  ok(clSetKernelArg(fill, 1, sizeof count, &count), "arg");
  ok(clSetKernelArg(fill, 2, sizeof iter, &iter), "arg");
  ok(clEnqueueNDRangeKernel(q, fill, 1, nullptr, &n, nullptr, 0, nullptr, &done), "kernel");
  cl_int rc = CL_SUCCESS;
  cl_event user = clCreateUserEvent(ctx, &rc);
  ok(rc, "user event");
  void* p = clEnqueueMapBuffer(q, m, CL_FALSE, CL_MAP_READ, 0, n * 4, 1, &user, &mapped, &rc);
  ok(rc, "map");
  ok(clFlush(q), "flush");
  ok(clSetUserEventStatus(user, CL_OUT_OF_RESOURCES), "set user event");
  cl_int map_status = CL_QUEUED, kernel_status = CL_QUEUED, wait_rc = 0;
  if (way == 0) {
    do clGetEventInfo(mapped, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof map_status, &map_status, nullptr);
    while (map_status > CL_COMPLETE);
    clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof kernel_status, &kernel_status, nullptr);
    wait_rc = clWaitForEvents(1, &mapped);
  } else {
    wait_rc = clWaitForEvents(1, &mapped);
    clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof kernel_status, &kernel_status, nullptr);
    clGetEventInfo(mapped, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof map_status, &map_status, nullptr);
  }
  const size_t bad = p != nullptr ? wrong(static_cast<cl_uint*>(p), iter) : n;
  std::printf("%-16s failed user event, %-17s map status %d, clWaitForEvents(map) %d, kernel status then %d, "
              "wrong elements %zu/%zu\n",
              name(a), way == 0 ? "polled map:" : "clWaitForEvents:", map_status, wait_rc, kernel_status, bad, n);
  clEnqueueUnmapMemObject(q, m, p, 0, nullptr, nullptr);
  clFinish(q);
  for (cl_event e : {done, mapped, user}) clReleaseEvent(e);
  clReleaseMemObject(m);
}

// The inferences after a producer that ended in error, on the same
// in-order queue, as CopyToPinned makes them: a device buffer and a staging
// buffer mapped once; per inference a kernel writes new values, a
// non-blocking clEnqueueReadBuffer into the staging pointer waits on the
// kernel's event, clFlush, clWaitForEvents on the download. In the failing
// inference the download also waits on a user event set to
// CL_OUT_OF_RESOURCES after the flush. Then `after` inferences with no
// failed event anywhere. `pause`: 0 the next inference at once, 1 after a
// sleep of 1 ms, 2 after clFinish on the queue. A fresh queue per trial
// (as the contract test makes one per tensor). Per inference after the
// failure: how many trials ended in an error (clWaitForEvents' code or a
// negative status of the kernel or the download) and how many showed a wrong
// element without an error.
void after_failed(cl_device_id dev, Alloc staging, int pause, int trials) {
  constexpr int after = 3;
  int errors[after] = {}, wrong_data[after] = {}, first_failed = 0;
  int kernel_failed[after] = {};
  for (int t = 0; t < trials; ++t) {
    cl_int rc = CL_SUCCESS;
    cl_command_queue tq = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &rc);
    ok(rc, "queue");
    cl_mem device = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, nullptr, &rc);
    ok(rc, "device buffer");
    cl_mem host = make(staging);
    cl_uint* p = static_cast<cl_uint*>(
        clEnqueueMapBuffer(tq, host, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n * 4, 0, nullptr, nullptr, &rc));
    ok(rc, "map staging");
    cl_uint count = static_cast<cl_uint>(n);
    std::vector<cl_event> held;  // released at the trial's end
    for (int i = -1; i < after; ++i) {
      const cl_uint iter = static_cast<cl_uint>(100 * t + i + 2);
      ok(clSetKernelArg(fill, 0, sizeof device, &device), "arg");
      ok(clSetKernelArg(fill, 1, sizeof count, &count), "arg");
      ok(clSetKernelArg(fill, 2, sizeof iter, &iter), "arg");
      cl_event k = nullptr, d = nullptr, user = nullptr;
      ok(clEnqueueNDRangeKernel(tq, fill, 1, nullptr, &n, nullptr, 0, nullptr, &k), "kernel");
      cl_event waits[2] = {k, nullptr};
      if (i < 0) {
        user = clCreateUserEvent(ctx, &rc);
        ok(rc, "user event");
        waits[1] = user;
      }
      ok(clEnqueueReadBuffer(tq, device, CL_FALSE, 0, n * 4, p, i < 0 ? 2 : 1, waits, &d), "read");
      ok(clFlush(tq), "flush");
      if (user != nullptr) ok(clSetUserEventStatus(user, CL_OUT_OF_RESOURCES), "set user event");
      const cl_int wait_rc = clWaitForEvents(1, &d);
      cl_int ks = CL_QUEUED, ds = CL_QUEUED;
      clGetEventInfo(k, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof ks, &ks, nullptr);
      clGetEventInfo(d, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof ds, &ds, nullptr);
      const bool failed = wait_rc != CL_SUCCESS || ks < 0 || ds < 0;
      if (i < 0) {
        first_failed += failed ? 1 : 0;
        if (pause == 1) {
          timespec ts{0, 1000000};
          nanosleep(&ts, nullptr);
        } else if (pause == 2) {
          clFinish(tq);
        }
      } else {
        errors[i] += failed ? 1 : 0;
        kernel_failed[i] += ks < 0 ? 1 : 0;
        if (!failed && wrong(p, iter) != 0) ++wrong_data[i];
      }
      held.insert(held.end(), {k, d, user});
    }
    clEnqueueUnmapMemObject(tq, host, p, 0, nullptr, nullptr);
    clFinish(tq);
    for (cl_event e : held)
      if (e != nullptr) clReleaseEvent(e);
    clReleaseMemObject(host);
    clReleaseMemObject(device);
    clReleaseCommandQueue(tq);
  }
  const char* pauses[] = {"at once", "after 1 ms asleep", "after clFinish"};
  std::printf(
      "%-16s after-failed, next inference %-17s: %d trials, the failing one reported in %d; errors in the "
      "inferences after it: %d, %d, %d (of them the kernel's own status: %d, %d, %d); wrong without an "
      "error: %d, %d, %d\n",
      name(staging), pauses[pause], trials, first_failed, errors[0], errors[1], errors[2], kernel_failed[0],
      kernel_failed[1], kernel_failed[2], wrong_data[0], wrong_data[1], wrong_data[2]);
  std::fflush(stdout);
}

// An input written while the previous inference runs (the host's write map
// waits on the kernel that last read the input): per iteration, a
// non-blocking CL_MAP_WRITE_INVALIDATE_REGION map, the host writes the
// input, unmap (no event), a kernel reads it into one of two result
// buffers, flush; the previous result is read on q2 after its kernel.
// way 0: the map waits on the last kernel's event, the host polls the map's
// event; 1: no wait list (the queue's order), polls the map's event; 2: as
// 0, then also polls the last kernel's event; 3: blocking map, no wait
// list. Counts the iterations with a wrong result and those where the map
// was seen complete while the kernel it follows was not.
cl_kernel transform;
void write_after_read(Alloc a, int way, int iterations) {
  cl_mem in = make(a);
  cl_int rc = CL_SUCCESS;
  cl_mem results[2] = {clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, nullptr, &rc),
                       clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, nullptr, &rc)};
  ok(rc, "result buffers");
  cl_event done[2] = {nullptr, nullptr};
  std::vector<cl_uint> host(n);
  size_t bad = 0, early = 0;
  const auto status = [](cl_event e) {
    cl_int st = CL_QUEUED;
    clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
    return st;
  };
  const auto check = [&](int it) {
    ok(clEnqueueReadBuffer(q2, results[it % 2], CL_TRUE, 0, n * 4, host.data(), 1, &done[it % 2], nullptr), "read");
    size_t w = 0;
    for (size_t i = 0; i < n; ++i) w += host[i] != value(static_cast<cl_uint>(i), it) * 3u + static_cast<cl_uint>(it);
    bad += w ? 1 : 0;
  };
  for (int it = 0; it < iterations; ++it) {
    cl_event last = it > 0 ? done[(it - 1) % 2] : nullptr;
    cl_event mapped = nullptr;
    void* p = nullptr;
    if (way == 3) {
      p = clEnqueueMapBuffer(q, in, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, n * 4, 0, nullptr, nullptr, &rc);
      ok(rc, "map");
      if (last && status(last) > CL_COMPLETE) ++early;
    } else {
      const bool list = way != 1 && last != nullptr;
      p = clEnqueueMapBuffer(q, in, CL_FALSE, CL_MAP_WRITE_INVALIDATE_REGION, 0, n * 4, list ? 1 : 0,
                             list ? &last : nullptr, &mapped, &rc);
      ok(rc, "map");
      ok(clFlush(q), "flush");
      while (status(mapped) > CL_COMPLETE) {
      }
      if (last && status(last) > CL_COMPLETE) ++early;
      if (way == 2 && last)
        while (status(last) > CL_COMPLETE) {
        }
      clReleaseEvent(mapped);
    }
    cl_uint* w = static_cast<cl_uint*>(p);
    for (size_t i = 0; i < n; ++i) w[i] = value(static_cast<cl_uint>(i), static_cast<cl_uint>(it));
    ok(clEnqueueUnmapMemObject(q, in, p, 0, nullptr, nullptr), "unmap");
    cl_uint count = static_cast<cl_uint>(n), iter = static_cast<cl_uint>(it);
    ok(clSetKernelArg(transform, 0, sizeof in, &in), "arg");
    ok(clSetKernelArg(transform, 1, sizeof(cl_mem), &results[it % 2]), "arg");
    ok(clSetKernelArg(transform, 2, sizeof count, &count), "arg");
    ok(clSetKernelArg(transform, 3, sizeof iter, &iter), "arg");
    if (done[it % 2]) clReleaseEvent(done[it % 2]);
    ok(clEnqueueNDRangeKernel(q, transform, 1, nullptr, &n, nullptr, 0, nullptr, &done[it % 2]), "kernel");
    ok(clFlush(q), "flush");
    if (it > 0) check(it - 1);
  }
  check(iterations - 1);
  ok(clFinish(q), "finish");
  const char* ways[] = {"map after the kernel, poll the map", "map in queue order, poll the map",
                        "map after the kernel, poll map and kernel", "blocking map in queue order"};
  std::printf("%-16s next input written while the last inference runs, %-42s wrong %zu/%d, map seen complete "
              "before the kernel it follows %zu\n",
              name(a), ways[way], bad, iterations, early);
  for (cl_event e : done)
    if (e) clReleaseEvent(e);
  clReleaseMemObject(results[0]);
  clReleaseMemObject(results[1]);
  clReleaseMemObject(in);
}

// Mapped at rest, read after each kernel (Persistent's output and inout):
// per iteration, unmap, a kernel writes every element, a non-blocking map
// (CL_MAP_READ, or CL_MAP_READ | CL_MAP_WRITE) waits on the kernel's event,
// the host polls the map's event and reads. Counts the iterations with a
// wrong element and those where the map was seen complete before its kernel.
void read_after_write(Alloc a, cl_map_flags flags, int iterations) {
  cl_mem m = make(a);
  cl_int rc = CL_SUCCESS;
  cl_uchar z = 0;
  ok(clEnqueueFillBuffer(q, m, &z, 1, 0, n * 4, 0, nullptr, nullptr), "fill");
  void* p = clEnqueueMapBuffer(q, m, CL_TRUE, flags, 0, n * 4, 0, nullptr, nullptr, &rc);
  ok(rc, "map");
  size_t bad = 0, early = 0;
  for (int it = 1; it <= iterations; ++it) {
    ok(clEnqueueUnmapMemObject(q, m, p, 0, nullptr, nullptr), "unmap");
    cl_event done = nullptr, mapped = nullptr;
    run_kernel(m, static_cast<cl_uint>(it), 0, nullptr, &done);
    p = clEnqueueMapBuffer(q, m, CL_FALSE, flags, 0, n * 4, 1, &done, &mapped, &rc);
    ok(rc, "map");
    ok(clFlush(q), "flush");
    cl_int st = CL_QUEUED;
    do clGetEventInfo(mapped, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
    while (st > CL_COMPLETE);
    clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
    early += st > CL_COMPLETE;
    bad += wrong(static_cast<cl_uint*>(p), static_cast<cl_uint>(it)) ? 1 : 0;
    clReleaseEvent(done);
    clReleaseEvent(mapped);
  }
  ok(clEnqueueUnmapMemObject(q, m, p, 0, nullptr, nullptr), "unmap");
  ok(clFinish(q), "finish");
  clReleaseMemObject(m);
  std::printf("%-16s mapped at rest, %-22s non-blocking map after the kernel, poll the map: wrong %zu/%d, map seen "
              "complete before its kernel %zu\n",
              name(a), flags == CL_MAP_READ ? "CL_MAP_READ:" : "CL_MAP_READ|WRITE:", bad, iterations, early);
}

}  // namespace

int main(int argc, char** argv) {
  const char* want = argc > 1 ? argv[1] : "NVIDIA";
  if (argc > 2) n = std::stoul(argv[2]);
  cl_uint np = 0;
  clGetPlatformIDs(0, nullptr, &np);
  std::vector<cl_platform_id> ps(np);
  clGetPlatformIDs(np, ps.data(), nullptr);
  cl_device_id dev = nullptr;
  for (auto p : ps) {
    char nm[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof nm, nm, nullptr);
    if (std::strstr(nm, want) && clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr) == CL_SUCCESS) {
      platform = p;
      break;
    }
  }
  if (!dev) return 1;
  char dn[256] = {}, dv[256] = {};
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dn, dn, nullptr);
  clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof dv, dv, nullptr);
  std::printf("nv_quirks on %s, driver %s, %zu elements\n", dn, dv, n);
  cl_int rc = CL_SUCCESS;
  ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &rc);
  q = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &rc);
  const char* src =
      "__kernel void fill(__global uint* o, uint n, uint it) { uint i = get_global_id(0);"
      " if (i < n) o[i] = (i * 2654435761u) ^ (it * 40503u + 0x9E3779B9u); }";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, nullptr, &rc);
  clBuildProgram(prog, 1, &dev, "", nullptr, nullptr);
  fill = clCreateKernel(prog, "fill", &rc);
  create_nv = reinterpret_cast<CreateBufferNv>(clGetExtensionFunctionAddressForPlatform(platform, "clCreateBufferNV"));
  if (argc > 3 && std::string(argv[3]) == "after-failed") {
    const int trials = argc > 4 ? std::stoi(argv[4]) : 100;
    std::vector<Alloc> kinds = {Alloc::alloc_host_ptr};
    if (create_nv) kinds.push_back(Alloc::nv_host_pinned);
    try {
      for (Alloc a : kinds)
        for (int pause = 0; pause < 3; ++pause) after_failed(dev, a, pause, trials);
    } catch (cl_int) {
      return 1;
    }
    return 0;
  }
  if (argc > 3 && (std::string(argv[3]) == "failed" || std::string(argv[3]) == "war" ||
                    std::string(argv[3]) == "read")) {
    q2 = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &rc);
    std::vector<Alloc> kinds = {Alloc::alloc_host_ptr, Alloc::use_host_ptr};
    if (create_nv) kinds.push_back(Alloc::nv_host_pinned);
    try {
      if (std::string(argv[3]) == "read") {
        const int iterations = argc > 4 ? std::stoi(argv[4]) : 500;
        for (Alloc a : kinds)
          for (cl_map_flags flags : {cl_map_flags{CL_MAP_READ}, cl_map_flags{CL_MAP_READ | CL_MAP_WRITE}})
            read_after_write(a, flags, iterations);
        return 0;
      }
      if (std::string(argv[3]) == "failed") {
        for (Alloc a : kinds)
          for (int way = 0; way < 2; ++way) failed_user_event(a, way);
        return 0;
      }
      const char* tsrc =
          "__kernel void transform(__global const uint* in, __global uint* out, uint n, uint it) {"
          " uint i = get_global_id(0); if (i < n) out[i] = in[i] * 3u + it; }";
      cl_program tp = clCreateProgramWithSource(ctx, 1, &tsrc, nullptr, &rc);
      ok(clBuildProgram(tp, 1, &dev, "", nullptr, nullptr), "build");
      transform = clCreateKernel(tp, "transform", &rc);
      const int iterations = argc > 4 ? std::stoi(argv[4]) : 500;
      for (Alloc a : kinds)
        for (int way = 0; way < 4; ++way) write_after_read(a, way, iterations);
    } catch (cl_int) {
      return 1;
    }
    return 0;
  }
  if (argc > 3 && std::string(argv[3]) == "cross") {  // only the producer on another queue
    q2 = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &rc);
    const int iterations = argc > 4 ? std::stoi(argv[4]) : 60;
    std::vector<Alloc> kinds = {Alloc::alloc_host_ptr};
    if (create_nv) kinds.push_back(Alloc::nv_host_pinned);
    const char* ways[] = {"poll, blocking map",
                          "clWaitForEvents, blocking map",
                          "blocking map waiting on the kernel",
                          "poll, blocking map on the producer's queue",
                          "poll, clWaitForEvents, blocking map",
                          "map after the kernel, wait for map and kernel",
                          "same queue: blocking map"};
    for (Alloc a : kinds)
      for (bool fence : {false, true})
        std::printf("%-16s a new tensor's first inference, producer on another queue, %-30s wrong runs %zu/%d\n",
                    name(a), fence ? "fill fenced by a blocking map:" : "fill, non-blocking map:",
                    first_inference(a, fence, iterations), iterations);
    for (Alloc a : kinds)
      for (int way = 0; way < 7; ++way)
        std::printf("%-16s producer on another queue: %-46s wrong iterations %zu/%d\n", name(a), ways[way],
                    cross_queue(a, way, iterations), iterations);
    return 0;
  }

  std::vector<Alloc> allocs = {Alloc::alloc_host_ptr, Alloc::use_host_ptr};
  if (create_nv) {
    allocs.push_back(Alloc::nv_host_pinned);
    allocs.push_back(Alloc::nv_host);
  }
  {  // The dense kernel of examples/dense_softmax.cpp, with plain buffers.
    const char* dsrc =
        "\n"
        "// One work-item per (sample, class): logits = x W + b, then a numerically\n"
        "// stable softmax per sample by the first work-item of each row.\n"
        "__kernel void dense(__global const float* x, __global const float* w, __global const float* b,\n"
        "                    __global float* y, uint n_in, uint n_out) {\n"
        "  uint s = get_global_id(1), c = get_global_id(0);\n"
        "  float acc = b[c];\n"
        "  for (uint k = 0; k < n_in; ++k) acc += x[s * n_in + k] * w[k * n_out + c];\n"
        "  y[s * n_out + c] = acc;\n"
        "}\n"
        "__kernel void softmax(__global float* y, uint n_out) {\n"
        "  uint s = get_global_id(0);\n"
        "  __global float* row = y + s * n_out;\n"
        "  float m = row[0];\n"
        "  for (uint c = 1; c < n_out; ++c) m = fmax(m, row[c]);\n"
        "  float sum = 0.0f;\n"
        "  for (uint c = 0; c < n_out; ++c) { row[c] = exp(row[c] - m); sum += row[c]; }\n"
        "  for (uint c = 0; c < n_out; ++c) row[c] /= sum;\n"
        "}\n"
        "";
    cl_program dp = clCreateProgramWithSource(ctx, 1, &dsrc, nullptr, &rc);
    cl_int brc = clBuildProgram(dp, 1, &dev, "-cl-kernel-arg-info", nullptr, nullptr);
    char log[4096] = {};
    clGetProgramBuildInfo(dp, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, nullptr);
    cl_kernel dk = clCreateKernel(dp, "dense", &rc);
    cl_uint nargs = 0;
    clGetKernelInfo(dk, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, nullptr);
    std::printf("dense: build %d, kernel %d, %u args, log: %s\n", brc, rc, nargs, log);
    cl_mem bufs[4];
    for (int i = 0; i < 4; ++i) bufs[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 16, nullptr, &rc);
    for (cl_uint i = 0; i < 4; ++i) std::printf("  arg %u: %d\n", i, clSetKernelArg(dk, i, sizeof(cl_mem), &bufs[i]));
    const cl_uint nin = 256, nout = 16;
    std::printf("  arg 4: %d\n", clSetKernelArg(dk, 4, sizeof nin, &nin));
    std::printf("  arg 5: %d\n", clSetKernelArg(dk, 5, sizeof nout, &nout));
    const size_t g2[2] = {16, 32};
    std::printf("  2D enqueue: %d\n", clEnqueueNDRangeKernel(q, dk, 2, nullptr, g2, nullptr, 0, nullptr, nullptr));
    const size_t l2[2] = {16, 1};
    std::printf("  2D enqueue with local 16x1: %d\n", clEnqueueNDRangeKernel(q, dk, 2, nullptr, g2, l2, 0, nullptr, nullptr));
    for (cl_uint i = 0; i < nargs; ++i) {
      char an[64] = {};
      clGetKernelArgInfo(dk, i, CL_KERNEL_ARG_NAME, sizeof an, an, nullptr);
      std::printf("  arg %u is named %s\n", i, an);
    }
    clFinish(q);
    // The same kernel after its buffer arguments were once SVM pointers.
    void* svm = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 1 << 16, 0);
    if (svm != nullptr) {
      std::printf("  arg 3 as SVM pointer: %d, enqueue: %d\n", clSetKernelArgSVMPointer(dk, 3, svm),
                  clEnqueueNDRangeKernel(q, dk, 2, nullptr, g2, nullptr, 0, nullptr, nullptr));
      clFinish(q);
      std::printf("  arg 3 as cl_mem again: %d, enqueue: %d\n", clSetKernelArg(dk, 3, sizeof(cl_mem), &bufs[3]),
                  clEnqueueNDRangeKernel(q, dk, 2, nullptr, g2, nullptr, 0, nullptr, nullptr));
      cl_kernel fresh = clCreateKernel(dp, "dense", &rc);
      for (cl_uint i = 0; i < 4; ++i) clSetKernelArg(fresh, i, sizeof(cl_mem), &bufs[i]);
      clSetKernelArg(fresh, 4, sizeof nin, &nin);
      clSetKernelArg(fresh, 5, sizeof nout, &nout);
      std::printf("  a fresh kernel object with cl_mem arguments: enqueue %d\n",
                  clEnqueueNDRangeKernel(q, fresh, 2, nullptr, g2, nullptr, 0, nullptr, nullptr));
      clFinish(q);
      // Another program built in the same context after the arguments were set
      // (what policy::Auto's measurement does).
      const char* other = "__kernel void other(__global uint* o, uint n, uint it) { o[get_global_id(0)] = n + it; }";
      cl_program op = clCreateProgramWithSource(ctx, 1, &other, nullptr, &rc);
      clBuildProgram(op, 1, &dev, "", nullptr, nullptr);
      cl_kernel ok2 = clCreateKernel(op, "other", &rc);
      std::printf("  after building another program: enqueue %d\n",
                  clEnqueueNDRangeKernel(q, fresh, 2, nullptr, g2, nullptr, 0, nullptr, nullptr));
      clFinish(q);
      clReleaseKernel(ok2);
      clReleaseProgram(op);
      std::printf("  after releasing that program: enqueue %d\n",
                  clEnqueueNDRangeKernel(q, fresh, 2, nullptr, g2, nullptr, 0, nullptr, nullptr));
      cl_mem host_nv = create_nv ? create_nv(ctx, CL_MEM_READ_WRITE, 3, 1 << 16, nullptr, &rc) : nullptr;
      if (host_nv != nullptr) {
        clSetKernelArg(fresh, 3, sizeof host_nv, &host_nv);
        std::printf("  arg 3 a host-located buffer: enqueue %d\n",
                    clEnqueueNDRangeKernel(q, fresh, 2, nullptr, g2, nullptr, 0, nullptr, nullptr));
        cl_event me = nullptr;
        void* hp = clEnqueueMapBuffer(q, host_nv, CL_TRUE, CL_MAP_READ, 0, 1 << 16, 0, nullptr, &me, &rc);
        std::printf("  ... while it is mapped: enqueue %d\n",
                    clEnqueueNDRangeKernel(q, fresh, 2, nullptr, g2, nullptr, 0, nullptr, nullptr));
        clEnqueueUnmapMemObject(q, host_nv, hp, 0, nullptr, nullptr);
        clFinish(q);
        clReleaseEvent(me);
        clReleaseMemObject(host_nv);
      }
      clReleaseKernel(fresh);
      clSVMFree(ctx, svm);
      // A kernel whose argument was an SVM pointer, then a cl_mem, after that
      // SVM allocation is freed.
      void* svm2 = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 1 << 16, 0);
      cl_kernel k3 = clCreateKernel(dp, "dense", &rc);
      for (cl_uint i = 0; i < 4; ++i) clSetKernelArg(k3, i, sizeof(cl_mem), &bufs[i]);
      clSetKernelArg(k3, 4, sizeof nin, &nin);
      clSetKernelArg(k3, 5, sizeof nout, &nout);
      clSetKernelArgSVMPointer(k3, 3, svm2);
      std::printf("  svm arg: enqueue %d\n", clEnqueueNDRangeKernel(q, k3, 2, nullptr, g2, nullptr, 0, nullptr, nullptr));
      clFinish(q);
      clSetKernelArg(k3, 3, sizeof(cl_mem), &bufs[3]);
      std::printf("  back to cl_mem: enqueue %d\n",
                  clEnqueueNDRangeKernel(q, k3, 2, nullptr, g2, nullptr, 0, nullptr, nullptr));
      clFinish(q);
      clSVMFree(ctx, svm2);
      std::printf("  after the SVM allocation it once held is freed: enqueue %d\n",
                  clEnqueueNDRangeKernel(q, k3, 2, nullptr, g2, nullptr, 0, nullptr, nullptr));
      clFinish(q);
      clReleaseKernel(k3);
    }
  }
  const int runs = 20;
  for (Alloc a : allocs) {
    size_t f = 0, pf = 0, ph = 0, pn = 0, pff = 0;
    try {
      for (int r = 0; r < runs; ++r) {
        f += fill_then_kernel(a);
        pf += persistent(a, 1, 3, false);
        pff += persistent(a, 1, 3, true);
        ph += persistent(a, 2, 3, false);
        pn += persistent(a, 0, 3, false);
      }
    } catch (cl_int) {
      std::printf("%-16s: error\n", name(a));
      continue;
    }
    std::printf("%-16s: fill+kernel+read bad runs %zu/%d | persistent iterations with a wrong element: "
                "after device fill %zu/%d, after device fill + clFinish %zu/%d, after host zero %zu/%d, "
                "no init %zu/%d\n",
                name(a), f, runs, pf, runs * 3, pff, runs * 3, ph, runs * 3, pn, runs * 3);
    size_t w1 = 0, w2 = 0, w3 = 0;
    for (int r = 0; r < runs; ++r) {
      w1 += persistent(a, 1, 3, false, nullptr, 1);
      w2 += persistent(a, 1, 3, false, nullptr, 2);
      w3 += persistent(a, 1, 3, false, nullptr, 3);
    }
    std::printf("%-16s: wrong iterations when the host also waits for the kernel's event %zu/%d, with a blocking map "
                "%zu/%d, with clFinish %zu/%d\n", name(a), w1, runs * 3, w2, runs * 3, w3, runs * 3);
    std::vector<void*> ptrs;
    persistent(a, 0, 8, false, &ptrs);
    size_t distinct = 0;
    for (size_t i = 0; i < ptrs.size(); ++i) distinct += (i == 0 || ptrs[i] != ptrs[i - 1]);
    std::printf("%-16s: map pointer changed %zu times in %zu re-maps\n", name(a), distinct - 1, ptrs.size());
  }
  return 0;
}
