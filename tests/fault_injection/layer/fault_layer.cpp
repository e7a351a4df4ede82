// SPDX-License-Identifier: Apache-2.0
// A test-only OpenCL layer (CL/cl_layer.h: clGetLayerInfo, clInitLayer) that
// the ICD loader puts between the application and the implementation when
// OPENCL_LAYERS names it (ocl-icd 2.3 and the Khronos loader both do). It
//  - fails chosen calls on demand, with the codes drivers return, either at
//    once or as a command that ends with an error status (fault_plan.hpp);
//  - counts the cl_mem, cl_event and SVM allocations the application holds;
//  - checks the map protocol: an unmap names a pointer that is mapped now, a
//    command never uses a buffer mapped for writing, an object is released
//    only after its unmaps completed (OpenCL 3.0 section 5.5.4), with
//    sub-buffers and SVM pointers as ranges of the memory they name;
//  - on request answers every map with a fresh pointer (shadow_memory.hpp);
//  - on request (CLZERO_FAULT_HAZARDS=1) checks that every two conflicting
//    memory accesses are ordered by the execution model (hazard.hpp).
// Calls that wait or submit (clWaitForEvents, clFlush) fail after the real
// call, so a failure never makes the application free memory a command uses.
//
// A command that "ends in error" is a user event the layer fails with the
// code once the commands it would have waited for have completed, handed
// back in place of the command (its queue then reads as none). Failures travel the way the spec's execution model says: a command
// whose wait list holds a failed event does not run, and a blocking call
// then returns CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST. The layer applies
// that rule itself for every failure visible at enqueue time, because PoCL
// 3.1 (Debian 12) never completes a kernel, nor returns from a blocking map,
// that waits on a failed event (docs/drivers.md, "PoCL 3.1: a command waiting
// on a failed event never completes").
#include <CL/cl_layer.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fault_control.h"
#include "fault_plan.hpp"
#include "hazard.hpp"
#include "object_counts.hpp"
#include "shadow_memory.hpp"

#define CLZERO_FAULT_EXPORT extern "C" __attribute__((visibility("default")))

namespace clzero_fault {
namespace {

struct Mapping {
  enum class State { pending, visible, failed };
  cl_mem mem = nullptr;  // null for SVM
  void* user = nullptr;  // what the application got
  void* real = nullptr;  // what the implementation returned
  std::size_t offset = 0;  // into the buffer (0 for SVM, whose pointer says where)
  std::size_t size = 0;
  cl_map_flags flags = 0;
  cl_event event = nullptr;  // the layer's reference to the map command, until settled
  const void* command = nullptr;  // the map command's identity, kept after settling
  cl_command_queue queue = nullptr;
  State state = State::pending;
  bool made_up = false;  // a failure the layer made: the implementation never saw this map
  ShadowMemory shadow;

  bool writable() const { return (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0; }
};

// A free the layer holds back because a kernel may still use the memory:
// recorded as a violation, done once the kernels complete, so that the test
// process survives to report it.
struct DeferredFree {
  cl_context context;
  void* ptr;
  std::vector<cl_event> users;
};

struct Layer {
  std::mutex mutex;
  const cl_icd_dispatch* next = nullptr;
  cl_icd_dispatch table{};
  FaultPlan plan;
  ObjectCounts mems, events;
  std::unordered_set<const void*> svm;
  std::vector<Mapping> maps;
  std::unordered_map<const void*, std::vector<cl_event>> unmaps;  // per cl_mem or SVM pointer
  std::deque<std::pair<const void*, const void*>> recently_unmapped;
  std::unordered_map<cl_kernel, std::map<cl_uint, const void*>> kernel_args;
  std::unordered_map<const void*, std::vector<cl_event>> svm_users;  // kernels that may still use SVM memory
  std::vector<DeferredFree> deferred_frees;
  Quarantine quarantine;
  std::deque<std::string> violations;
  long total_violations = 0;
  long shadow_maps = 0;
  bool shadow = false;
  // NVIDIA's driver 580 (H200): a non-blocking command whose wait list holds
  // an event that ended in error runs anyway and completes with CL_COMPLETE.
  bool run_after_failed = false;
  // Answered for CL_DEVICE_VENDOR_ID when not 0 (clzero_fault_vendor_id).
  cl_uint vendor_id = 0;
  // The happens-before checker (hazard.hpp), on with CLZERO_FAULT_HAZARDS=1.
  bool hazards_on = false;
  HazardChecker hazards;
  std::map<std::uintptr_t, std::size_t> svm_sizes;  // base -> bytes
  std::unordered_map<const void*, Range> mem_ranges;  // cl_mem -> its bytes of the root buffer
  struct KernelInfo {
    std::string name;
    std::vector<bool> read_only;  // per argument: __global const or __constant
  };
  std::unordered_map<cl_kernel, KernelInfo> kernel_info;
  // The commands the layer failed, each a user event set to the error: what
  // the application asks of it (its queue, its command type) is answered as
  // the command it stands for, as a driver's failed command answers.
  std::unordered_map<cl_event, std::pair<cl_command_queue, cl_command_type>> failed_commands;
};

Layer& layer() {
  static Layer* l = new Layer;  // never destroyed: calls may still come during exit
  return *l;
}
const cl_icd_dispatch& next() { return *layer().next; }

using Lock = std::lock_guard<std::mutex>;

void violation(Layer& l, std::string what) {
  ++l.total_violations;
  if (l.violations.size() < 1000) l.violations.push_back(std::move(what));
}

FaultPlan::Decision decide(const char* api) {
  Layer& l = layer();
  Lock lock(l.mutex);
  return l.plan.hit(api);
}

cl_int event_status(cl_event e) {
  cl_int status = CL_QUEUED;
  if (next().clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) != CL_SUCCESS)
    return CL_QUEUED;
  return status;
}

// The map's completion was observed: the data is the host's now.
void make_visible(Mapping& m) {
  if (m.shadow) {
    m.shadow.protect(PROT_READ | PROT_WRITE);
    // CL_MAP_WRITE_INVALIDATE_REGION leaves the contents undefined (OpenCL
    // 1.2 section 5.4.2): poison them, as a driver that skips the copy would.
    if ((m.flags & CL_MAP_WRITE_INVALIDATE_REGION) != 0) std::memset(m.user, 0xA5, m.size);
    else std::memcpy(m.user, m.real, m.size);
    if (!m.writable()) m.shadow.protect(PROT_READ);
  }
  m.state = Mapping::State::visible;
}

void drop_event(Mapping& m) {
  if (m.event != nullptr) next().clReleaseEvent(std::exchange(m.event, nullptr));
}

// Settles every pending map whose command has ended. Called after each call
// through which the application can learn that a command completed, so a
// shadow holds the data before the application may look at it.
void finish_deferred_frees(Layer& l);

void settle(Layer& l) {
  if (!l.deferred_frees.empty()) finish_deferred_frees(l);
  for (Mapping& m : l.maps) {
    if (m.state != Mapping::State::pending) continue;
    const cl_int status = event_status(m.event);
    if (status == CL_COMPLETE) {
      make_visible(m);
      drop_event(m);
    } else if (status < 0) {
      m.state = Mapping::State::failed;
      drop_event(m);
      if (l.hazards_on) l.hazards.drop_window(m.mem != nullptr ? static_cast<const void*>(m.mem) : nullptr, m.user);
    }
  }
}

void settle_all() {
  Layer& l = layer();
  Lock lock(l.mutex);
  settle(l);
}

void count_new_event(cl_event* event) {
  if (event == nullptr || *event == nullptr) return;
  Layer& l = layer();
  Lock lock(l.mutex);
  l.events.created(*event);
}

// Bytes [offset, offset + size) of a buffer as bytes of its root buffer: a
// sub-buffer is a region of its parent (OpenCL 3.0 section 5.2.2), so a map of
// one and a command on the other touch the same memory. size 0: to the end.
bool mem_range(Layer& l, cl_mem mem, std::size_t offset, std::size_t size, Range& out) {
  auto it = l.mem_ranges.find(mem);
  if (it == l.mem_ranges.end()) {
    Range whole;
    cl_mem parent = nullptr;
    std::size_t origin = 0, bytes = 0;
    if (next().clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof bytes, &bytes, nullptr) != CL_SUCCESS) return false;
    next().clGetMemObjectInfo(mem, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, nullptr);
    if (parent != nullptr) next().clGetMemObjectInfo(mem, CL_MEM_OFFSET, sizeof origin, &origin, nullptr);
    whole.object = parent != nullptr ? static_cast<const void*>(parent) : static_cast<const void*>(mem);
    whole.lo = origin;
    whole.hi = origin + bytes;
    it = l.mem_ranges.emplace(mem, whole).first;
  }
  out = it->second;
  out.lo += offset;
  if (size != 0) out.hi = std::min<std::uint64_t>(out.hi, out.lo + size);
  return out.lo < out.hi;
}

// An SVM pointer as bytes of its allocation, from the pointer on for `size`
// bytes, or to the allocation's end (size 0: what a kernel given the pointer
// may reach by pointer arithmetic).
bool svm_range(Layer& l, const void* ptr, std::size_t size, Range& out) {
  const auto p = reinterpret_cast<std::uintptr_t>(ptr);
  auto it = l.svm_sizes.upper_bound(p);
  if (it == l.svm_sizes.begin()) return false;
  --it;
  if (p >= it->first + it->second) return false;
  out.object = reinterpret_cast<const void*>(it->first);
  out.svm = true;
  out.lo = p - it->first;
  out.hi = size != 0 ? std::min<std::uint64_t>(it->second, out.lo + size) : it->second;
  return out.lo < out.hi;
}

// A kernel argument, a buffer or an SVM pointer, as a range.
bool arg_range(Layer& l, const void* arg, Range& out) {
  if (l.mems.known(arg)) return mem_range(l, static_cast<cl_mem>(const_cast<void*>(arg)), 0, 0, out);
  return svm_range(l, arg, 0, out);
}

bool mapping_range(Layer& l, const Mapping& m, Range& out) {
  return m.mem != nullptr ? mem_range(l, m.mem, m.offset, m.size, out) : svm_range(l, m.user, m.size, out);
}

// A command that names `mem` must not start while it is mapped for writing;
// one that writes it, not while it is mapped at all (OpenCL 3.0 section 5.5.4).
// Sub-buffers and SVM pointers into an allocation count for the memory they
// name: a kernel on a sub-buffer of a mapped parent breaks the rule.
void check_unmapped(Layer& l, const void* mem, bool writes, const char* api) {
  Range used;
  if (mem == nullptr || !arg_range(l, mem, used)) return;
  for (const Mapping& m : l.maps) {
    Range mapped;
    if (m.state == Mapping::State::failed || !mapping_range(l, m, mapped)) continue;
    if (mapped.object != used.object || mapped.hi <= used.lo || used.hi <= mapped.lo) continue;
    if (m.writable() || writes)
      violation(l, std::string(api) + ": a command uses memory that is mapped" +
                       (m.writable() ? " for writing" : "") + (mem != mapped.object ? " (through a sub-buffer or its parent)" : "") +
                       " (OpenCL 3.0 section 5.5.4)");
  }
}

// ---- the hazard checker's view of each enqueue ------------------------------

// What the checker records of one enqueue.
struct Traced {
  bool on = false;
  std::string call;
  CommandKind kind = CommandKind::plain;
  std::vector<Access> accesses;
};

Traced traced(const char* call, CommandKind kind = CommandKind::plain) {
  Traced t;
  t.on = layer().hazards_on;
  if (t.on) {
    t.call = call;
    t.kind = kind;
  }
  return t;
}

void add_mem(Layer& l, Traced& t, cl_mem mem, std::size_t offset, std::size_t size, bool write) {
  Access a;
  a.write = write;
  if (t.on && mem != nullptr && mem_range(l, mem, offset, size, a.range)) t.accesses.push_back(a);
}

void add_svm(Layer& l, Traced& t, const void* ptr, std::size_t size, bool write) {
  Access a;
  a.write = write;
  if (t.on && ptr != nullptr && svm_range(l, ptr, size, a.range)) t.accesses.push_back(a);
}

void ensure_queue(Layer& l, cl_command_queue queue) {
  if (l.hazards.knows_queue(queue)) return;
  cl_command_queue_properties props = 0;
  next().clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr);
  l.hazards.queue_created(queue, (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0);
}

// Records an enqueue the implementation accepted (under the layer's lock).
CommandRef trace_locked(Layer& l, cl_command_queue queue, const Traced& t, cl_uint n, const cl_event* waits,
                        cl_event event, bool blocking, const Access* window = nullptr) {
  ensure_queue(l, queue);
  CommandRef cmd = l.hazards.enqueue(queue, t.kind, n, reinterpret_cast<const void* const*>(waits), t.call, t.accesses,
                                     window, event);
  if (blocking) {  // a blocking call returns once its command has ended, and flushes (section 5.13)
    l.hazards.host_completed_last();
    l.hazards.flushed(queue);
  }
  return cmd;
}

void trace(cl_command_queue queue, const Traced& t, cl_uint n, const cl_event* waits, cl_event* event,
           bool blocking) {
  if (!t.on) return;
  Layer& l = layer();
  Lock lock(l.mutex);
  trace_locked(l, queue, t, n, waits, event != nullptr ? *event : nullptr, blocking);
}

// The host saw these events end (a wait returned, or a status query).
void host_saw(cl_uint n, const cl_event* list, bool all) {
  Layer& l = layer();
  if (!l.hazards_on || list == nullptr) return;
  Lock lock(l.mutex);
  for (cl_uint i = 0; i < n; ++i)
    if (all || event_status(list[i]) <= CL_COMPLETE) l.hazards.host_completed(list[i]);
}

void check_command(const void* mem, bool writes, const char* api) {
  Layer& l = layer();
  Lock lock(l.mutex);
  settle(l);
  check_unmapped(l, mem, writes, api);
}

// A command that ends in error: a user event failed with `code` once the
// commands it would have waited for have completed (its wait list, and on an
// in-order queue everything before it), so that waiting for it still means
// what waiting for the real command would. The call blocks until then:
// PoCL 3.1 cannot pass a failure on to a kernel that waits for it, so the
// event must be failed before anything can wait on it. Returns CL_SUCCESS,
// as the enqueue of a command that fails later does.
// The command type of an enqueue call the layer may fail (null: a kernel,
// failed because its wait list held a failed event). The OpenCL 2.0 types by
// value, as clzero names them.
cl_command_type command_type_of(const char* api) {
  if (api == nullptr) return CL_COMMAND_NDRANGE_KERNEL;
  const std::string a = api;
  if (a == "clEnqueueFillBuffer") return CL_COMMAND_FILL_BUFFER;
  if (a == "clEnqueueSVMMemFill") return 0x120B;
  if (a == "clEnqueueReadBuffer") return CL_COMMAND_READ_BUFFER;
  if (a == "clEnqueueWriteBuffer") return CL_COMMAND_WRITE_BUFFER;
  if (a == "clEnqueueCopyBuffer") return CL_COMMAND_COPY_BUFFER;
  if (a == "clEnqueueMarkerWithWaitList") return CL_COMMAND_MARKER;
  if (a == "clEnqueueBarrierWithWaitList") return CL_COMMAND_BARRIER;
  return CL_COMMAND_USER;
}

cl_int fail_later(cl_command_queue queue, cl_int code, cl_event* event, cl_uint n, const cl_event* waits,
                  cl_command_type type) {
  std::vector<cl_event> before;
  for (cl_uint i = 0; i < n; ++i)
    if (event_status(waits[i]) >= 0) before.push_back(waits[i]);  // failed ones have ended
  cl_event marker = nullptr;
  cl_int rc = next().clEnqueueMarkerWithWaitList(queue, static_cast<cl_uint>(before.size()),
                                                 before.empty() ? nullptr : before.data(), &marker);
  if (rc != CL_SUCCESS) return rc;
  next().clFlush(queue);
  next().clWaitForEvents(1, &marker);
  next().clReleaseEvent(marker);
  cl_context context = nullptr;
  rc = next().clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr);
  if (rc != CL_SUCCESS) return rc;
  cl_event failed = next().clCreateUserEvent(context, &rc);
  if (rc != CL_SUCCESS) return rc;
  next().clSetUserEventStatus(failed, code < 0 ? code : CL_OUT_OF_RESOURCES);
  if (event != nullptr) {
    *event = failed;
    count_new_event(event);
    Layer& l = layer();
    Lock lock(l.mutex);
    l.failed_commands[failed] = {queue, type};
  } else {
    next().clReleaseEvent(failed);
  }
  return CL_SUCCESS;
}

bool any_failed(cl_uint n, const cl_event* waits) {
  for (cl_uint i = 0; i < n; ++i)
    if (event_status(waits[i]) < 0) return true;
  return false;
}

// For a blocking enqueue: whether an event it must wait for has failed.
bool wait_list_failed(cl_uint n, const cl_event* waits) {
  return n > 0 && next().clWaitForEvents(n, waits) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
}

// With run_after_failed on, a non-blocking enqueue whose wait list holds a
// failed event is passed on without it: the command runs after the others
// and completes, as on NVIDIA's driver 580 (docs/drivers.md). `kept` holds
// the wait list then, and `n` and `waits` name it.
void run_after_failed(cl_bool blocking, cl_uint& n, const cl_event*& waits, std::vector<cl_event>& kept) {
  bool on = false;
  {
    Layer& l = layer();
    Lock lock(l.mutex);
    on = l.run_after_failed;
  }
  if (!on || blocking || !any_failed(n, waits)) return;
  for (cl_uint i = 0; i < n; ++i)
    if (event_status(waits[i]) >= 0) kept.push_back(waits[i]);
  n = static_cast<cl_uint>(kept.size());
  waits = kept.empty() ? nullptr : kept.data();
}

// How an enqueue goes: as asked, failed at once (`code` returned), or as a
// command that ends in error (`later`).
struct Course {
  bool run = true;
  bool later = false;
  cl_int code = CL_SUCCESS;
};

Course course(const char* api, cl_bool blocking, cl_uint n, const cl_event* waits) {
  const FaultPlan::Decision d = api != nullptr ? decide(api) : FaultPlan::Decision{};
  if (d.fail) return {false, d.mode == CLZERO_FAULT_ASYNC && !blocking, d.code};
  if (blocking ? wait_list_failed(n, waits) : any_failed(n, waits))
    return {false, !blocking, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST};
  return {};
}

// The common shape of an enqueue that a fault may fail.
template <class Enqueue>
cl_int faultable_enqueue(const char* api, cl_command_queue queue, cl_bool blocking, cl_uint n, const cl_event* waits,
                         cl_event* event, const Traced& t, Enqueue&& enqueue) {
  const Course c = course(api, blocking, n, waits);
  if (!c.run) {
    if (!c.later) return c.code;
    // The command "ran" and failed: it is recorded as the application sees it.
    const cl_int rc = fail_later(queue, c.code, event, n, waits, command_type_of(api));
    if (rc == CL_SUCCESS) trace(queue, t, n, waits, event, false);
    return rc;
  }
  const cl_int rc = enqueue();
  if (rc == CL_SUCCESS) {
    count_new_event(event);
    trace(queue, t, n, waits, event, blocking);
  }
  if (blocking) settle_all();
  return rc;
}

bool wants_shadow(Layer& l, cl_mem mem) {
  if (!l.shadow || mem == nullptr) return false;
  // CL_MEM_USE_HOST_PTR maps must return host_ptr + offset (OpenCL 3.0
  // section 5.5.4): the one kind whose pointer is stable by the spec.
  for (cl_mem m = mem; m != nullptr;) {
    cl_mem_flags flags = 0;
    next().clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof flags, &flags, nullptr);
    if ((flags & CL_MEM_USE_HOST_PTR) != 0) return false;
    cl_mem parent = nullptr;
    next().clGetMemObjectInfo(m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, nullptr);
    m = parent;
  }
  return true;
}

// Records a map the implementation accepted; returns the application's pointer.
void* record_map(cl_command_queue queue, cl_mem mem, void* real, std::size_t offset, std::size_t size,
                 cl_map_flags flags, cl_bool blocking, cl_event command, cl_event* event) {
  Layer& l = layer();
  Lock lock(l.mutex);
  Mapping m;
  m.queue = queue;
  m.command = command;
  m.mem = mem;
  m.offset = offset;
  m.real = m.user = real;
  m.size = size;
  m.flags = flags;
  if (wants_shadow(l, mem)) {
    m.shadow = ShadowMemory(size);
    if (m.shadow) {
      m.user = m.shadow.data();
      ++l.shadow_maps;
    }
  }
  if (event != nullptr) {
    *event = command;
    l.events.created(command);
    next().clRetainEvent(command);  // the layer's own reference
  }
  m.event = command;
  if (blocking) {
    make_visible(m);
    drop_event(m);
  }
  l.maps.push_back(std::move(m));
  settle(l);
  return l.maps.back().user;
}

// Finds the mapping an unmap names and copies a shadow back. Returns the
// implementation's pointer to unmap; `made_up` tells the caller that the
// implementation never mapped it (the layer made the map's failure), so the
// unmap is the layer's to answer.
void* begin_unmap(const void* key, void* user, const char* api, bool& made_up) {
  made_up = false;
  Layer& l = layer();
  Lock lock(l.mutex);
  settle(l);
  auto it = std::find_if(l.maps.rbegin(), l.maps.rend(), [&](const Mapping& m) {
    const void* k = m.mem != nullptr ? static_cast<const void*>(m.mem) : nullptr;
    return k == key && m.user == user;
  });
  if (it == l.maps.rend()) {
    const bool twice = std::find(l.recently_unmapped.begin(), l.recently_unmapped.end(), std::make_pair(key, static_cast<const void*>(user))) !=
                       l.recently_unmapped.end();
    violation(l, std::string(api) + (twice ? ": the same pointer is unmapped twice" : ": unmap of a pointer that is not mapped"));
    return user;
  }
  Mapping& m = *it;
  // A map whose command ended in error may be unmapped: the spec's unmap
  // takes any pointer a map call returned, and PoCL 3.1 keeps such a map
  // (in CL_MEM_MAP_COUNT, with its buffer) until it is. Its contents were
  // never visible, so nothing is copied back.
  made_up = m.made_up;
  if (m.shadow && m.state == Mapping::State::visible && m.writable()) std::memcpy(m.real, m.user, m.size);
  return m.real;
}

void end_unmap(const void* key, void* user, cl_event command, cl_event* event, bool counted) {
  Layer& l = layer();
  Lock lock(l.mutex);
  auto it = std::find_if(l.maps.rbegin(), l.maps.rend(), [&](const Mapping& m) {
    const void* k = m.mem != nullptr ? static_cast<const void*>(m.mem) : nullptr;
    return k == key && m.user == user;
  });
  if (it != l.maps.rend()) {
    drop_event(*it);
    if (it->shadow) l.quarantine.add(std::move(it->shadow));
    l.maps.erase(std::next(it).base());
  }
  l.recently_unmapped.emplace_back(key, user);
  if (l.recently_unmapped.size() > 4096) l.recently_unmapped.pop_front();
  const void* owner = key != nullptr ? key : user;
  auto& pending = l.unmaps[owner];
  pending.erase(std::remove_if(pending.begin(), pending.end(),
                               [](cl_event e) {
                                 if (event_status(e) > CL_COMPLETE) return false;
                                 next().clReleaseEvent(e);
                                 return true;
                               }),
                pending.end());
  pending.push_back(command);  // the layer's reference
  if (event != nullptr) {
    *event = command;
    next().clRetainEvent(command);
    if (!counted) l.events.created(command);
  } else if (counted) {
    l.events.released(command);
  }
}

// Before the application's last reference to memory goes: nothing may still
// be mapped, and every unmap must have completed (OpenCL 3.0 section 5.5.4:
// releasing a mapped object is unspecified).
void check_release(Layer& l, const void* key, bool svm, const char* api) {
  settle(l);
  for (auto it = l.maps.begin(); it != l.maps.end();) {
    const void* k = it->mem != nullptr ? static_cast<const void*>(it->mem) : it->user;
    if (k != key || (svm != (it->mem == nullptr))) {
      ++it;
      continue;
    }
    if (it->state != Mapping::State::failed) violation(l, std::string(api) + ": memory released while mapped");
    drop_event(*it);
    if (it->shadow) l.quarantine.add(std::move(it->shadow));
    it = l.maps.erase(it);
  }
  auto pending = l.unmaps.find(key);
  if (pending == l.unmaps.end()) return;
  for (cl_event e : pending->second) {
    if (event_status(e) > CL_COMPLETE) violation(l, std::string(api) + ": memory released before its unmap completed");
    next().clReleaseEvent(e);
  }
  l.unmaps.erase(pending);
}

// ---- memory objects --------------------------------------------------------

// A handle or address that comes back names new memory: nothing the checker
// knew of the old one applies.
void forget_memory(Layer& l, const void* handle) {
  if (handle == nullptr) return;
  l.mem_ranges.erase(handle);
  l.hazards.forget_object(handle);
}

cl_mem CL_API_CALL CreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host_ptr, cl_int* errcode_ret) {
  const FaultPlan::Decision d = decide("clCreateBuffer");
  if (d.fail) {
    if (errcode_ret != nullptr) *errcode_ret = d.code;
    return nullptr;
  }
  cl_mem m = next().clCreateBuffer(context, flags, size, host_ptr, errcode_ret);
  Layer& l = layer();
  Lock lock(l.mutex);
  l.mems.created(m);
  forget_memory(l, m);
  return m;
}

cl_mem CL_API_CALL CreateBufferWithProperties(cl_context context, const cl_mem_properties* properties,
                                              cl_mem_flags flags, size_t size, void* host_ptr, cl_int* errcode_ret) {
  const FaultPlan::Decision d = decide("clCreateBufferWithProperties");
  if (d.fail) {
    if (errcode_ret != nullptr) *errcode_ret = d.code;
    return nullptr;
  }
  cl_mem m = next().clCreateBufferWithProperties(context, properties, flags, size, host_ptr, errcode_ret);
  Layer& l = layer();
  Lock lock(l.mutex);
  l.mems.created(m);
  forget_memory(l, m);
  return m;
}

cl_mem CL_API_CALL CreateSubBuffer(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type type, const void* info,
                                   cl_int* errcode_ret) {
  cl_mem m = next().clCreateSubBuffer(buffer, flags, type, info, errcode_ret);
  Layer& l = layer();
  Lock lock(l.mutex);
  l.mems.created(m);
  forget_memory(l, m);
  return m;
}

cl_int CL_API_CALL RetainMemObject(cl_mem mem) {
  const cl_int rc = next().clRetainMemObject(mem);
  Layer& l = layer();
  Lock lock(l.mutex);
  if (rc == CL_SUCCESS) l.mems.retained(mem);
  return rc;
}

cl_int CL_API_CALL ReleaseMemObject(cl_mem mem) {
  Layer& l = layer();
  {
    Lock lock(l.mutex);
    if (l.mems.last_reference(mem)) {
      check_release(l, mem, false, "clReleaseMemObject");
      forget_memory(l, mem);
    }
  }
  const cl_int rc = next().clReleaseMemObject(mem);
  Lock lock(l.mutex);
  if (rc == CL_SUCCESS) l.mems.released(mem);
  return rc;
}

void* CL_API_CALL SVMAlloc(cl_context context, cl_svm_mem_flags flags, size_t size, cl_uint alignment) {
  if (decide("clSVMAlloc").fail) return nullptr;  // clSVMAlloc has no error code: NULL is the failure
  void* p = next().clSVMAlloc(context, flags, size, alignment);
  Layer& l = layer();
  Lock lock(l.mutex);
  if (p != nullptr) {
    l.svm.insert(p);
    l.svm_sizes[reinterpret_cast<std::uintptr_t>(p)] = size;
    forget_memory(l, p);
  }
  return p;
}

void CL_API_CALL SVMFree(cl_context context, void* ptr) {
  {
    Layer& l = layer();
    Lock lock(l.mutex);
    if (l.svm.erase(ptr) != 0) {
      check_release(l, ptr, true, "clSVMFree");
      l.svm_sizes.erase(reinterpret_cast<std::uintptr_t>(ptr));
      forget_memory(l, ptr);
      auto users = l.svm_users.find(ptr);
      if (users != l.svm_users.end()) {
        std::vector<cl_event> running;
        for (cl_event e : users->second) {
          if (event_status(e) > CL_COMPLETE) running.push_back(e);
          else next().clReleaseEvent(e);
        }
        l.svm_users.erase(users);
        if (!running.empty()) {
          violation(l, "clSVMFree: SVM memory freed while a kernel that uses it has not completed "
                       "(clSVMFree does not wait: OpenCL 3.0 section 5.6.1)");
          next().clRetainContext(context);
          l.deferred_frees.push_back({context, ptr, std::move(running)});
          return;
        }
      }
    }
  }
  next().clSVMFree(context, ptr);
}

// Frees held-back SVM memory whose kernels have completed.
void finish_deferred_frees(Layer& l) {
  for (auto it = l.deferred_frees.begin(); it != l.deferred_frees.end();) {
    const bool done = std::all_of(it->users.begin(), it->users.end(),
                                  [](cl_event e) { return event_status(e) <= CL_COMPLETE; });
    if (!done) {
      ++it;
      continue;
    }
    for (cl_event e : it->users) next().clReleaseEvent(e);
    next().clSVMFree(it->context, it->ptr);
    next().clReleaseContext(it->context);
    it = l.deferred_frees.erase(it);
  }
}

// ---- events ----------------------------------------------------------------

cl_event CL_API_CALL CreateUserEvent(cl_context context, cl_int* errcode_ret) {
  cl_event e = next().clCreateUserEvent(context, errcode_ret);
  count_new_event(&e);
  Layer& l = layer();
  Lock lock(l.mutex);
  if (e != nullptr && l.hazards_on) l.hazards.user_event(e);
  return e;
}

cl_int CL_API_CALL RetainEvent(cl_event event) {
  const FaultPlan::Decision d = decide("clRetainEvent");
  if (d.fail) return d.code;
  const cl_int rc = next().clRetainEvent(event);
  Layer& l = layer();
  Lock lock(l.mutex);
  if (rc == CL_SUCCESS) l.events.retained(event);
  return rc;
}

cl_int CL_API_CALL ReleaseEvent(cl_event event) {
  Layer& l = layer();
  {
    Lock lock(l.mutex);
    if (l.events.last_reference(event)) {
      l.hazards.forget_event(event);
      l.failed_commands.erase(event);
    }
  }
  const cl_int rc = next().clReleaseEvent(event);
  Lock lock(l.mutex);
  if (rc == CL_SUCCESS) l.events.released(event);
  return rc;
}

cl_int CL_API_CALL WaitForEvents(cl_uint n, const cl_event* list) {
  const FaultPlan::Decision d = decide("clWaitForEvents");
  const cl_int rc = next().clWaitForEvents(n, list);
  settle_all();
  host_saw(n, list, rc == CL_SUCCESS);
  return d.fail ? d.code : rc;
}

cl_int CL_API_CALL GetEventInfo(cl_event event, cl_event_info name, size_t size, void* value, size_t* size_ret) {
  const FaultPlan::Decision d = decide("clGetEventInfo");
  if (d.fail) return d.code;
  if (name == CL_EVENT_COMMAND_TYPE || name == CL_EVENT_COMMAND_QUEUE) {
    Layer& l = layer();
    std::unique_lock<std::mutex> lock(l.mutex);
    auto it = l.failed_commands.find(event);
    if (it != l.failed_commands.end()) {
      const auto answer = it->second;
      lock.unlock();
      const std::size_t need = name == CL_EVENT_COMMAND_TYPE ? sizeof(cl_command_type) : sizeof(cl_command_queue);
      if (size_ret != nullptr) *size_ret = need;
      if (value == nullptr) return CL_SUCCESS;
      if (size < need) return CL_INVALID_VALUE;
      if (name == CL_EVENT_COMMAND_TYPE)
        *static_cast<cl_command_type*>(value) = answer.second;
      else
        *static_cast<cl_command_queue*>(value) = answer.first;
      return CL_SUCCESS;
    }
  }
  const cl_int rc = next().clGetEventInfo(event, name, size, value, size_ret);
  settle_all();
  // Polling that saw the command end orders it before what comes next.
  if (rc == CL_SUCCESS && name == CL_EVENT_COMMAND_EXECUTION_STATUS && value != nullptr && size >= sizeof(cl_int) &&
      *static_cast<const cl_int*>(value) == CL_COMPLETE)
    host_saw(1, &event, true);
  return rc;
}

cl_int CL_API_CALL Flush(cl_command_queue queue) {
  const FaultPlan::Decision d = decide("clFlush");
  const cl_int rc = next().clFlush(queue);
  Layer& l = layer();
  if (l.hazards_on && rc == CL_SUCCESS) {
    Lock lock(l.mutex);
    l.hazards.flushed(queue);
  }
  return d.fail ? d.code : rc;
}

cl_int CL_API_CALL Finish(cl_command_queue queue) {
  const cl_int rc = next().clFinish(queue);
  settle_all();
  Layer& l = layer();
  if (l.hazards_on && rc == CL_SUCCESS) {
    Lock lock(l.mutex);
    l.hazards.host_finished(queue);
  }
  return rc;
}

// clReleaseCommandQueue flushes the queue (OpenCL 3.0 section 5.13); the last
// release frees the handle for a new queue.
cl_int CL_API_CALL ReleaseCommandQueue(cl_command_queue queue) {
  Layer& l = layer();
  cl_uint refs = 0;
  if (l.hazards_on) next().clGetCommandQueueInfo(queue, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, nullptr);
  const cl_int rc = next().clReleaseCommandQueue(queue);
  if (l.hazards_on && rc == CL_SUCCESS) {
    Lock lock(l.mutex);
    l.hazards.queue_released(queue, refs == 1);
  }
  return rc;
}

// With the checker on, every program keeps its kernels' argument qualifiers
// (CL_KERNEL_ARG_TYPE_QUALIFIER needs -cl-kernel-arg-info, OpenCL 3.0
// section 5.9.4), so that a __global const argument counts as a read.
cl_int CL_API_CALL BuildProgram(cl_program program, cl_uint n, const cl_device_id* devices, const char* options,
                                void(CL_CALLBACK* notify)(cl_program, void*), void* data) {
  // Failable like the other calls: e.g. CL_COMPILER_NOT_AVAILABLE for Auto's measurement program.
  const FaultPlan::Decision d = decide("clBuildProgram");
  if (d.fail) return d.code;
  if (!layer().hazards_on) return next().clBuildProgram(program, n, devices, options, notify, data);
  std::string with = options != nullptr ? options : "";
  if (with.find("-cl-kernel-arg-info") == std::string::npos) with += " -cl-kernel-arg-info";
  return next().clBuildProgram(program, n, devices, with.c_str(), notify, data);
}

// ---- queries (construction) ------------------------------------------------

cl_int CL_API_CALL GetDeviceInfo(cl_device_id device, cl_device_info name, size_t size, void* value, size_t* size_ret) {
  const FaultPlan::Decision d = decide("clGetDeviceInfo");
  if (d.fail) return d.code;
  cl_uint vendor = 0;
  {
    Layer& l = layer();
    Lock lock(l.mutex);
    vendor = l.vendor_id;
  }
  if (name == CL_DEVICE_VENDOR_ID && vendor != 0) {  // another vendor's device, for its workarounds
    if (value != nullptr && size < sizeof vendor) return CL_INVALID_VALUE;
    if (value != nullptr) std::memcpy(value, &vendor, sizeof vendor);
    if (size_ret != nullptr) *size_ret = sizeof vendor;
    return CL_SUCCESS;
  }
  return next().clGetDeviceInfo(device, name, size, value, size_ret);
}

cl_int CL_API_CALL GetPlatformInfo(cl_platform_id platform, cl_platform_info name, size_t size, void* value,
                                   size_t* size_ret) {
  const FaultPlan::Decision d = decide("clGetPlatformInfo");
  if (d.fail) return d.code;
  return next().clGetPlatformInfo(platform, name, size, value, size_ret);
}

cl_int CL_API_CALL GetCommandQueueInfo(cl_command_queue queue, cl_command_queue_info name, size_t size, void* value,
                                       size_t* size_ret) {
  const FaultPlan::Decision d = decide("clGetCommandQueueInfo");
  if (d.fail) return d.code;
  return next().clGetCommandQueueInfo(queue, name, size, value, size_ret);
}

// ---- kernels ---------------------------------------------------------------

cl_kernel CL_API_CALL CreateKernel(cl_program program, const char* name, cl_int* errcode_ret) {
  cl_kernel k = next().clCreateKernel(program, name, errcode_ret);
  Layer& l = layer();
  Lock lock(l.mutex);
  l.kernel_args.erase(k);
  l.kernel_info.erase(k);
  return k;
}

cl_int CL_API_CALL SetKernelArg(cl_kernel kernel, cl_uint index, size_t size, const void* value) {
  const FaultPlan::Decision d = decide("clSetKernelArg");
  if (d.fail) return d.code;
  const cl_int rc = next().clSetKernelArg(kernel, index, size, value);
  Layer& l = layer();
  Lock lock(l.mutex);
  cl_mem mem = nullptr;
  if (size == sizeof mem && value != nullptr) std::memcpy(&mem, value, sizeof mem);
  if (rc == CL_SUCCESS && mem != nullptr && l.mems.known(mem)) l.kernel_args[kernel][index] = mem;
  else l.kernel_args[kernel].erase(index);
  return rc;
}

cl_int CL_API_CALL SetKernelArgSVMPointer(cl_kernel kernel, cl_uint index, const void* value) {
  const FaultPlan::Decision d = decide("clSetKernelArgSVMPointer");
  if (d.fail) return d.code;
  const cl_int rc = next().clSetKernelArgSVMPointer(kernel, index, value);
  Layer& l = layer();
  Lock lock(l.mutex);
  if (rc == CL_SUCCESS) l.kernel_args[kernel][index] = value;
  return rc;
}

// A kernel's name and which arguments it only reads: __global const or
// __constant (without -cl-kernel-arg-info the query fails: read and write).
const Layer::KernelInfo& kernel_info(Layer& l, cl_kernel kernel) {
  auto it = l.kernel_info.find(kernel);
  if (it != l.kernel_info.end()) return it->second;
  Layer::KernelInfo info;
  char name[256] = {};
  if (next().clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, nullptr) == CL_SUCCESS)
    info.name = name;
  cl_uint args = 0;
  next().clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr);
  for (cl_uint i = 0; i < args; ++i) {
    cl_kernel_arg_type_qualifier type = 0;
    cl_kernel_arg_address_qualifier address = 0;
    const bool known =
        next().clGetKernelArgInfo(kernel, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof type, &type, nullptr) == CL_SUCCESS &&
        next().clGetKernelArgInfo(kernel, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof address, &address, nullptr) ==
            CL_SUCCESS;
    info.read_only.push_back(known &&
                             ((type & CL_KERNEL_ARG_TYPE_CONST) != 0 || address == CL_KERNEL_ARG_ADDRESS_CONSTANT));
  }
  return l.kernel_info.emplace(kernel, std::move(info)).first->second;
}

// Checks a kernel's buffer arguments against the mappings; returns its SVM
// arguments, whose memory must outlive the kernel. Fills `t` with the
// kernel's accesses for the checker.
std::vector<const void*> check_kernel(cl_kernel kernel, const char* api, Traced& t) {
  Layer& l = layer();
  Lock lock(l.mutex);
  settle(l);
  std::vector<const void*> svm;
  const Layer::KernelInfo* info = t.on ? &kernel_info(l, kernel) : nullptr;
  if (info != nullptr) t.call = std::string(api) + "(" + info->name + ")";
  auto args = l.kernel_args.find(kernel);
  if (args == l.kernel_args.end()) return svm;
  for (const auto& arg : args->second) {
    check_unmapped(l, arg.second, false, api);
    if (l.svm.count(arg.second) != 0) svm.push_back(arg.second);
    if (info != nullptr) {
      Access a;
      a.write = arg.first >= info->read_only.size() || !info->read_only[arg.first];
      if (arg_range(l, arg.second, a.range)) t.accesses.push_back(a);
    }
  }
  return svm;
}

// clSVMFree does not wait for the commands that use the memory (OpenCL 3.0
// section 5.6.1): the layer remembers each kernel's SVM arguments until the
// kernel completes, and a free before that is a violation.
void record_svm_users(const std::vector<const void*>& svm, cl_event command) {
  Layer& l = layer();
  Lock lock(l.mutex);
  for (const void* p : svm) {
    auto& users = l.svm_users[p];
    users.erase(std::remove_if(users.begin(), users.end(),
                               [](cl_event e) {
                                 if (event_status(e) > CL_COMPLETE) return false;
                                 next().clReleaseEvent(e);
                                 return true;
                               }),
                users.end());
    next().clRetainEvent(command);
    users.push_back(command);
  }
}

// A kernel launch: checked against mappings; its event is kept while it may
// still use SVM memory.
template <class Enqueue>
cl_int enqueue_kernel(cl_kernel kernel, const char* api, cl_command_queue queue, cl_uint n, const cl_event* waits,
                      cl_event* event, Enqueue&& enqueue) {
  Traced t = traced(api);
  const std::vector<const void*> svm = check_kernel(kernel, api, t);
  cl_event own = nullptr;
  cl_event* slot = event != nullptr ? event : &own;
  const cl_int rc = faultable_enqueue(nullptr, queue, CL_FALSE, n, waits, slot, t, [&] { return enqueue(slot); });
  if (rc == CL_SUCCESS && *slot != nullptr && !svm.empty()) record_svm_users(svm, *slot);
  if (own != nullptr) ReleaseEvent(own);
  return rc;
}

cl_int CL_API_CALL EnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t* offset,
                                        const size_t* global, const size_t* local, cl_uint n, const cl_event* waits,
                                        cl_event* event) {
  return enqueue_kernel(kernel, "clEnqueueNDRangeKernel", queue, n, waits, event, [&](cl_event* slot) {
    return next().clEnqueueNDRangeKernel(queue, kernel, dims, offset, global, local, n, waits, slot);
  });
}

cl_int CL_API_CALL EnqueueTask(cl_command_queue queue, cl_kernel kernel, cl_uint n, const cl_event* waits,
                               cl_event* event) {
  return enqueue_kernel(kernel, "clEnqueueTask", queue, n, waits, event,
                        [&](cl_event* slot) { return next().clEnqueueTask(queue, kernel, n, waits, slot); });
}

// ---- map and unmap ---------------------------------------------------------

// A map whose command ends in error: its pointer must never be used, so it
// points at inaccessible pages.
void* record_failed_map(cl_command_queue queue, cl_mem mem, void* svm, std::size_t offset, std::size_t size,
                        cl_map_flags flags, cl_int code, cl_event* event, cl_uint n, const cl_event* waits) {
  cl_event failed = nullptr;
  const cl_int rc = fail_later(queue, code, &failed, n, waits, mem != nullptr ? CL_COMMAND_MAP_BUFFER : 0x120C);
  if (rc != CL_SUCCESS) return nullptr;
  Layer& l = layer();
  Lock lock(l.mutex);
  Mapping m;
  m.queue = queue;
  m.command = failed;
  m.mem = mem;
  m.offset = offset;
  m.size = size;
  m.flags = flags;
  m.state = Mapping::State::failed;
  m.made_up = true;
  if (svm == nullptr) m.shadow = ShadowMemory(size);
  m.real = m.user = svm != nullptr ? svm : m.shadow.data();
  if (event != nullptr) *event = failed;
  else {
    l.events.released(failed);
    next().clReleaseEvent(failed);
  }
  l.maps.push_back(std::move(m));
  return l.maps.back().user;
}

// A map opens the host's window over the range: checked now against what
// came before (the window starts when the map completes), recorded at the
// unmap (it ends when the unmap is enqueued).
void trace_map(const char* api, cl_command_queue queue, cl_mem mem, const void* ptr, std::size_t offset,
               std::size_t size, cl_map_flags flags, cl_uint n, const cl_event* waits, cl_event event,
               const void* user, bool blocking, bool failed = false) {
  Layer& l = layer();
  if (!l.hazards_on) return;
  Lock lock(l.mutex);
  Access window;
  window.write = (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0;
  const bool known = mem != nullptr ? mem_range(l, mem, offset, size, window.range) : svm_range(l, ptr, size, window.range);
  Traced t;
  t.call = std::string(api) + "(" + ((flags & CL_MAP_WRITE_INVALIDATE_REGION) != 0 ? "CL_MAP_WRITE_INVALIDATE_REGION"
                                     : (flags & CL_MAP_WRITE) != 0 && (flags & CL_MAP_READ) != 0
                                         ? "CL_MAP_READ | CL_MAP_WRITE"
                                     : (flags & CL_MAP_WRITE) != 0 ? "CL_MAP_WRITE"
                                                                   : "CL_MAP_READ") + ")";
  CommandRef map = trace_locked(l, queue, t, n, waits, event, blocking, known ? &window : nullptr);
  // A map that ends in error maps nothing (its window never opens).
  if (known && !failed)
    l.hazards.open_window(map, mem != nullptr ? static_cast<const void*>(mem) : nullptr, user, window);
}

void trace_unmap(const char* api, cl_command_queue queue, const void* key, const void* user, cl_uint n,
                 const cl_event* waits, cl_event event) {
  Layer& l = layer();
  if (!l.hazards_on) return;
  Lock lock(l.mutex);
  Traced t;
  t.call = api;
  CommandRef unmap = trace_locked(l, queue, t, n, waits, event, false);
  l.hazards.close_window(unmap, key, user);
}

void* CL_API_CALL EnqueueMapBuffer(cl_command_queue queue, cl_mem mem, cl_bool blocking, cl_map_flags flags,
                                   size_t offset, size_t size, cl_uint n, const cl_event* waits, cl_event* event,
                                   cl_int* errcode_ret) {
  std::vector<cl_event> kept;
  run_after_failed(blocking, n, waits, kept);
  const Course c = course("clEnqueueMapBuffer", blocking, n, waits);
  if (!c.run) {
    if (errcode_ret != nullptr) *errcode_ret = c.later ? CL_SUCCESS : c.code;
    if (!c.later) return nullptr;
    void* p = record_failed_map(queue, mem, nullptr, offset, size, flags, c.code, event, n, waits);
    trace_map("clEnqueueMapBuffer", queue, mem, nullptr, offset, size, flags, n, waits,
              event != nullptr ? *event : nullptr, p, false, true);
    return p;
  }
  cl_event command = nullptr;
  cl_int rc = CL_SUCCESS;
  void* real = next().clEnqueueMapBuffer(queue, mem, blocking, flags, offset, size, n, waits, &command, &rc);
  if (errcode_ret != nullptr) *errcode_ret = rc;
  if (rc != CL_SUCCESS) return real;
  void* user = record_map(queue, mem, real, offset, size, flags, blocking, command, event);
  trace_map("clEnqueueMapBuffer", queue, mem, nullptr, offset, size, flags, n, waits,
            event != nullptr ? command : nullptr, user, blocking);
  return user;
}

cl_int CL_API_CALL EnqueueUnmapMemObject(cl_command_queue queue, cl_mem mem, void* mapped, cl_uint n,
                                         const cl_event* waits, cl_event* event) {
  const Course c = course("clEnqueueUnmapMemObject", CL_FALSE, n, waits);
  if (!c.run && !c.later) return c.code;
  bool made_up = false;
  void* real = begin_unmap(mem, mapped, "clEnqueueUnmapMemObject", made_up);
  cl_event command = nullptr;
  // An unmap that does not run leaves the implementation's mapping in place;
  // the application did its part, so the layer counts the mapping as ended.
  // The unmap of a map the layer failed stands in for one, ordered as it.
  const cl_int rc = !c.run    ? fail_later(queue, c.code, &command, n, waits, CL_COMMAND_UNMAP_MEM_OBJECT)
                    : made_up ? next().clEnqueueMarkerWithWaitList(queue, n, waits, &command)
                              : next().clEnqueueUnmapMemObject(queue, mem, real, n, waits, &command);
  if (rc == CL_SUCCESS) {
    trace_unmap("clEnqueueUnmapMemObject", queue, mem, mapped, n, waits, event != nullptr ? command : nullptr);
    end_unmap(mem, mapped, command, event, !c.run);
  }
  return rc;
}

cl_int CL_API_CALL EnqueueSVMMap(cl_command_queue queue, cl_bool blocking, cl_map_flags flags, void* ptr, size_t size,
                                 cl_uint n, const cl_event* waits, cl_event* event) {
  std::vector<cl_event> kept;
  run_after_failed(blocking, n, waits, kept);
  const Course c = course("clEnqueueSVMMap", blocking, n, waits);
  if (!c.run) {
    if (c.later) {
      record_failed_map(queue, nullptr, ptr, 0, size, flags, c.code, event, n, waits);
      trace_map("clEnqueueSVMMap", queue, nullptr, ptr, 0, size, flags, n, waits, event != nullptr ? *event : nullptr,
                ptr, false, true);
    }
    return c.later ? CL_SUCCESS : c.code;
  }
  cl_event command = nullptr;
  const cl_int rc = next().clEnqueueSVMMap(queue, blocking, flags, ptr, size, n, waits, &command);
  if (rc == CL_SUCCESS) {
    record_map(queue, nullptr, ptr, 0, size, flags, blocking, command, event);
    trace_map("clEnqueueSVMMap", queue, nullptr, ptr, 0, size, flags, n, waits, event != nullptr ? command : nullptr,
              ptr, blocking);
  }
  return rc;
}

cl_int CL_API_CALL EnqueueSVMUnmap(cl_command_queue queue, void* ptr, cl_uint n, const cl_event* waits,
                                   cl_event* event) {
  const Course c = course("clEnqueueSVMUnmap", CL_FALSE, n, waits);
  if (!c.run && !c.later) return c.code;
  bool made_up = false;
  begin_unmap(nullptr, ptr, "clEnqueueSVMUnmap", made_up);
  cl_event command = nullptr;
  const cl_int rc = !c.run    ? fail_later(queue, c.code, &command, n, waits, 0x120D /* CL_COMMAND_SVM_UNMAP */)
                    : made_up ? next().clEnqueueMarkerWithWaitList(queue, n, waits, &command)
                              : next().clEnqueueSVMUnmap(queue, ptr, n, waits, &command);
  if (rc == CL_SUCCESS) {
    trace_unmap("clEnqueueSVMUnmap", queue, nullptr, ptr, n, waits, event != nullptr ? command : nullptr);
    end_unmap(nullptr, ptr, command, event, !c.run);
  }
  return rc;
}

// ---- other commands --------------------------------------------------------

// An enqueue's accesses, found under the layer's lock.
template <class Add>
Traced traced_with(const char* call, Add&& add) {
  Traced t = traced(call);
  if (t.on) {
    Layer& l = layer();
    Lock lock(l.mutex);
    add(l, t);
  }
  return t;
}

cl_int CL_API_CALL EnqueueFillBuffer(cl_command_queue queue, cl_mem mem, const void* pattern, size_t pattern_size,
                                     size_t offset, size_t size, cl_uint n, const cl_event* waits, cl_event* event) {
  check_command(mem, true, "clEnqueueFillBuffer");
  const Traced t =
      traced_with("clEnqueueFillBuffer", [&](Layer& l, Traced& tr) { add_mem(l, tr, mem, offset, size, true); });
  return faultable_enqueue("clEnqueueFillBuffer", queue, CL_FALSE, n, waits, event, t, [&] {
    return next().clEnqueueFillBuffer(queue, mem, pattern, pattern_size, offset, size, n, waits, event);
  });
}

cl_int CL_API_CALL EnqueueSVMMemFill(cl_command_queue queue, void* ptr, const void* pattern, size_t pattern_size,
                                     size_t size, cl_uint n, const cl_event* waits, cl_event* event) {
  check_command(ptr, true, "clEnqueueSVMMemFill");
  const Traced t = traced_with("clEnqueueSVMMemFill", [&](Layer& l, Traced& tr) { add_svm(l, tr, ptr, size, true); });
  return faultable_enqueue("clEnqueueSVMMemFill", queue, CL_FALSE, n, waits, event, t, [&] {
    return next().clEnqueueSVMMemFill(queue, ptr, pattern, pattern_size, size, n, waits, event);
  });
}

cl_int CL_API_CALL EnqueueReadBuffer(cl_command_queue queue, cl_mem mem, cl_bool blocking, size_t offset, size_t size,
                                     void* dst, cl_uint n, const cl_event* waits, cl_event* event) {
  std::vector<cl_event> kept;
  run_after_failed(blocking, n, waits, kept);
  check_command(mem, false, "clEnqueueReadBuffer");
  const Traced t =
      traced_with("clEnqueueReadBuffer", [&](Layer& l, Traced& tr) { add_mem(l, tr, mem, offset, size, false); });
  return faultable_enqueue("clEnqueueReadBuffer", queue, blocking, n, waits, event, t, [&] {
    return next().clEnqueueReadBuffer(queue, mem, blocking, offset, size, dst, n, waits, event);
  });
}

cl_int CL_API_CALL EnqueueWriteBuffer(cl_command_queue queue, cl_mem mem, cl_bool blocking, size_t offset,
                                      size_t size, const void* src, cl_uint n, const cl_event* waits, cl_event* event) {
  check_command(mem, true, "clEnqueueWriteBuffer");
  const Traced t =
      traced_with("clEnqueueWriteBuffer", [&](Layer& l, Traced& tr) { add_mem(l, tr, mem, offset, size, true); });
  return faultable_enqueue("clEnqueueWriteBuffer", queue, blocking, n, waits, event, t, [&] {
    return next().clEnqueueWriteBuffer(queue, mem, blocking, offset, size, src, n, waits, event);
  });
}

cl_int CL_API_CALL EnqueueCopyBuffer(cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_offset,
                                     size_t dst_offset, size_t size, cl_uint n, const cl_event* waits,
                                     cl_event* event) {
  check_command(src, false, "clEnqueueCopyBuffer");
  check_command(dst, true, "clEnqueueCopyBuffer");
  const Traced t = traced_with("clEnqueueCopyBuffer", [&](Layer& l, Traced& tr) {
    add_mem(l, tr, src, src_offset, size, false);
    add_mem(l, tr, dst, dst_offset, size, true);
  });
  return faultable_enqueue("clEnqueueCopyBuffer", queue, CL_FALSE, n, waits, event, t, [&] {
    return next().clEnqueueCopyBuffer(queue, src, dst, src_offset, dst_offset, size, n, waits, event);
  });
}

cl_int CL_API_CALL EnqueueMarkerWithWaitList(cl_command_queue queue, cl_uint n, const cl_event* waits,
                                             cl_event* event) {
  return faultable_enqueue("clEnqueueMarkerWithWaitList", queue, CL_FALSE, n, waits, event,
                           traced("clEnqueueMarkerWithWaitList", CommandKind::marker),
                           [&] { return next().clEnqueueMarkerWithWaitList(queue, n, waits, event); });
}

cl_int CL_API_CALL EnqueueBarrierWithWaitList(cl_command_queue queue, cl_uint n, const cl_event* waits,
                                              cl_event* event) {
  return faultable_enqueue("clEnqueueBarrierWithWaitList", queue, CL_FALSE, n, waits, event,
                           traced("clEnqueueBarrierWithWaitList", CommandKind::barrier),
                           [&] { return next().clEnqueueBarrierWithWaitList(queue, n, waits, event); });
}

cl_int CL_API_CALL EnqueueSVMMemcpy(cl_command_queue queue, cl_bool blocking, void* dst, const void* src, size_t size,
                                    cl_uint n, const cl_event* waits, cl_event* event) {
  // Either side may be host memory the checker does not track.
  const Traced t = traced_with("clEnqueueSVMMemcpy", [&](Layer& l, Traced& tr) {
    add_svm(l, tr, src, size, false);
    add_svm(l, tr, dst, size, true);
  });
  return faultable_enqueue(nullptr, queue, blocking, n, waits, event, t,
                           [&] { return next().clEnqueueSVMMemcpy(queue, blocking, dst, src, size, n, waits, event); });
}

cl_int CL_API_CALL EnqueueMigrateMemObjects(cl_command_queue queue, cl_uint count, const cl_mem* mems,
                                            cl_mem_migration_flags flags, cl_uint n, const cl_event* waits,
                                            cl_event* event) {
  // Migration keeps the contents unless told they are undefined, which
  // makes it a write (OpenCL 3.0 section 5.4.4).
  const Traced t = traced_with("clEnqueueMigrateMemObjects", [&](Layer& l, Traced& tr) {
    if ((flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) != 0)
      for (cl_uint i = 0; i < count; ++i) add_mem(l, tr, mems[i], 0, 0, true);
  });
  return faultable_enqueue(nullptr, queue, CL_FALSE, n, waits, event, t, [&] {
    return next().clEnqueueMigrateMemObjects(queue, count, mems, flags, n, waits, event);
  });
}

void install(const cl_icd_dispatch* target) {
  Layer& l = layer();
  l.next = target;
  l.table = *target;
  cl_icd_dispatch& t = l.table;
  t.clCreateBuffer = &CreateBuffer;
  t.clCreateBufferWithProperties = &CreateBufferWithProperties;
  t.clCreateSubBuffer = &CreateSubBuffer;
  t.clRetainMemObject = &RetainMemObject;
  t.clReleaseMemObject = &ReleaseMemObject;
  t.clSVMAlloc = &SVMAlloc;
  t.clSVMFree = &SVMFree;
  t.clCreateUserEvent = &CreateUserEvent;
  t.clRetainEvent = &RetainEvent;
  t.clReleaseEvent = &ReleaseEvent;
  t.clWaitForEvents = &WaitForEvents;
  t.clGetEventInfo = &GetEventInfo;
  t.clFlush = &Flush;
  t.clFinish = &Finish;
  t.clReleaseCommandQueue = &ReleaseCommandQueue;
  t.clBuildProgram = &BuildProgram;
  t.clGetDeviceInfo = &GetDeviceInfo;
  t.clGetPlatformInfo = &GetPlatformInfo;
  t.clGetCommandQueueInfo = &GetCommandQueueInfo;
  t.clCreateKernel = &CreateKernel;
  t.clSetKernelArg = &SetKernelArg;
  t.clSetKernelArgSVMPointer = &SetKernelArgSVMPointer;
  t.clEnqueueNDRangeKernel = &EnqueueNDRangeKernel;
  t.clEnqueueTask = &EnqueueTask;
  t.clEnqueueMapBuffer = &EnqueueMapBuffer;
  t.clEnqueueUnmapMemObject = &EnqueueUnmapMemObject;
  t.clEnqueueSVMMap = &EnqueueSVMMap;
  t.clEnqueueSVMUnmap = &EnqueueSVMUnmap;
  t.clEnqueueFillBuffer = &EnqueueFillBuffer;
  t.clEnqueueSVMMemFill = &EnqueueSVMMemFill;
  t.clEnqueueReadBuffer = &EnqueueReadBuffer;
  t.clEnqueueWriteBuffer = &EnqueueWriteBuffer;
  t.clEnqueueCopyBuffer = &EnqueueCopyBuffer;
  t.clEnqueueMarkerWithWaitList = &EnqueueMarkerWithWaitList;
  t.clEnqueueBarrierWithWaitList = &EnqueueBarrierWithWaitList;
  t.clEnqueueSVMMemcpy = &EnqueueSVMMemcpy;
  t.clEnqueueMigrateMemObjects = &EnqueueMigrateMemObjects;

  if (const char* spec = std::getenv("CLZERO_FAULT"); spec != nullptr && *spec != '\0') {
    if (!l.plan.parse(spec)) std::fprintf(stderr, "clzero fault layer: cannot parse CLZERO_FAULT=%s\n", spec);
  }
  if (const char* shadow = std::getenv("CLZERO_FAULT_SHADOW_MAPS"); shadow != nullptr && *shadow == '1')
    l.shadow = true;
  if (const char* hazards = std::getenv("CLZERO_FAULT_HAZARDS"); hazards != nullptr && *hazards == '1')
    l.hazards_on = true;
  if (const char* run = std::getenv("CLZERO_FAULT_RUN_AFTER_FAILED"); run != nullptr && *run == '1')
    l.run_after_failed = true;
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v == '1';
}

__attribute__((destructor)) void report_at_exit() {
  Layer& l = layer();
  if (l.next == nullptr) return;
  std::lock_guard<std::mutex> lock(l.mutex);
  if (env_flag("CLZERO_FAULT_REPORT") || (env_flag("CLZERO_FAULT_STRICT") && l.total_violations > 0)) {
    std::fprintf(stderr,
                 "clzero fault layer: %ld calls intercepted, %ld faults injected, %ld shadow maps, %ld violations; "
                 "at exit %ld cl_mem, %ld cl_event, %ld SVM allocations still held\n",
                 l.plan.calls(), l.plan.faults(), l.shadow_maps, l.total_violations, l.mems.live(), l.events.live(),
                 static_cast<long>(l.svm.size()));
    for (const std::string& v : l.violations) std::fprintf(stderr, "clzero fault layer: violation: %s\n", v.c_str());
  }
  if (env_flag("CLZERO_FAULT_STRICT") && l.total_violations > 0) _exit(86);
  if (l.hazards_on) {
    const HazardChecker::Figures& f = l.hazards.figures();
    char summary[512];
    std::snprintf(summary, sizeof summary,
                  "commands: %ld\naccesses: %ld\npairs: %ld\nhazards: %ld\nunflushed_waits: %ld\ndropped: %ld\n",
                  f.commands, f.accesses, f.pairs, f.hazards, f.unflushed, f.dropped);
    std::fprintf(stderr,
                 "clzero hazard checker: %ld commands checked, %ld accesses, %ld pairs checked, %ld hazards, %ld "
                 "unflushed cross-queue waits\n",
                 f.commands, f.accesses, f.pairs, f.hazards, f.unflushed);
    for (const std::string& r : l.hazards.reports()) std::fprintf(stderr, "clzero hazard checker: %s\n", r.c_str());
    if (const char* path = std::getenv("CLZERO_HAZARD_REPORT"); path != nullptr && *path != '\0') {
      if (std::FILE* out = std::fopen(path, "w")) {
        std::fputs(summary, out);
        for (const std::string& r : l.hazards.reports()) std::fprintf(out, "%s\n", r.c_str());
        std::fclose(out);
      }
    }
    if (f.hazards > 0 || f.unflushed > 0) _exit(87);
  }
}

}  // namespace
}  // namespace clzero_fault

using clzero_fault::layer;
using clzero_fault::Lock;

CLZERO_FAULT_EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info name, size_t size, void* value, size_t* size_ret) {
  if (name == CL_LAYER_API_VERSION) {
    const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
    if (size_ret != nullptr) *size_ret = sizeof version;
    if (value != nullptr) {
      if (size < sizeof version) return CL_INVALID_VALUE;
      std::memcpy(value, &version, sizeof version);
    }
    return CL_SUCCESS;
  }
  if (name == CL_LAYER_NAME) {
    static const char kName[] = "clzero fault injection layer";
    if (size_ret != nullptr) *size_ret = sizeof kName;
    if (value != nullptr) {
      if (size < sizeof kName) return CL_INVALID_VALUE;
      std::memcpy(value, kName, sizeof kName);
    }
    return CL_SUCCESS;
  }
  return CL_INVALID_VALUE;
}

CLZERO_FAULT_EXPORT cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch* target_dispatch,
                                                   cl_uint* num_entries_ret, const cl_icd_dispatch** layer_dispatch_ret) {
  constexpr cl_uint kEntries = sizeof(cl_icd_dispatch) / sizeof(void*);
  if (target_dispatch == nullptr || num_entries_ret == nullptr || layer_dispatch_ret == nullptr ||
      num_entries < kEntries)
    return CL_INVALID_VALUE;
  clzero_fault::install(target_dispatch);
  *num_entries_ret = kEntries;
  *layer_dispatch_ret = &layer().table;
  return CL_SUCCESS;
}

CLZERO_FAULT_EXPORT void clzero_fault_reset(void) {
  auto& l = layer();
  Lock lock(l.mutex);
  l.plan.reset();
  l.violations.clear();
  l.total_violations = 0;
}

CLZERO_FAULT_EXPORT void clzero_fault_arm(const char* call, long nth, int code, int mode) {
  auto& l = layer();
  Lock lock(l.mutex);
  l.plan.arm(call, nth, code, mode);
}

CLZERO_FAULT_EXPORT void clzero_fault_disarm(void) {
  auto& l = layer();
  Lock lock(l.mutex);
  l.plan.disarm();
}

CLZERO_FAULT_EXPORT void clzero_fault_pause(int paused) {
  auto& l = layer();
  Lock lock(l.mutex);
  l.plan.pause(paused != 0);
}

CLZERO_FAULT_EXPORT void clzero_fault_shadow_maps(int on) {
  auto& l = layer();
  Lock lock(l.mutex);
  l.shadow = on != 0;
}

CLZERO_FAULT_EXPORT void clzero_fault_vendor_id(unsigned id) {
  auto& l = layer();
  Lock lock(l.mutex);
  l.vendor_id = id;
}

CLZERO_FAULT_EXPORT void clzero_fault_run_after_failed(int on) {
  auto& l = layer();
  Lock lock(l.mutex);
  l.run_after_failed = on != 0;
}

CLZERO_FAULT_EXPORT void clzero_fault_get_counts(clzero_fault_counts* out) {
  auto& l = layer();
  Lock lock(l.mutex);
  clzero_fault::settle(l);
  out->live_mem = l.mems.live();
  out->live_events = l.events.live();
  out->live_svm = static_cast<long>(l.svm.size());
  out->active_maps = static_cast<long>(std::count_if(l.maps.begin(), l.maps.end(), [](const clzero_fault::Mapping& m) {
    return m.state != clzero_fault::Mapping::State::failed;
  }));
  out->calls = l.plan.calls();
  out->faults = l.plan.faults();
  out->violations = l.total_violations;
  out->shadow_maps = l.shadow_maps;
}

CLZERO_FAULT_EXPORT const char* clzero_fault_call(long i) {
  auto& l = layer();
  Lock lock(l.mutex);
  return l.plan.logged(i);
}

CLZERO_FAULT_EXPORT const char* clzero_fault_fired(void) {
  auto& l = layer();
  Lock lock(l.mutex);
  return l.plan.fired();
}

CLZERO_FAULT_EXPORT const char* clzero_fault_violation(long i) {
  auto& l = layer();
  Lock lock(l.mutex);
  return i >= 0 && static_cast<std::size_t>(i) < l.violations.size() ? l.violations[static_cast<std::size_t>(i)].c_str()
                                                                     : nullptr;
}

CLZERO_FAULT_EXPORT void clzero_fault_hazard_counts(clzero_hazard_counts* out) {
  auto& l = layer();
  Lock lock(l.mutex);
  const clzero_fault::HazardChecker::Figures& f = l.hazards.figures();
  out->on = l.hazards_on ? 1 : 0;
  out->commands = f.commands;
  out->accesses = f.accesses;
  out->pairs = f.pairs;
  out->hazards = f.hazards;
  out->unflushed = f.unflushed;
}

CLZERO_FAULT_EXPORT const char* clzero_fault_hazard_report(long i) {
  auto& l = layer();
  Lock lock(l.mutex);
  const auto& reports = l.hazards.reports();
  return i >= 0 && static_cast<std::size_t>(i) < reports.size() ? reports[static_cast<std::size_t>(i)].c_str() : nullptr;
}

CLZERO_FAULT_EXPORT void clzero_fault_hazard_clear(void) {
  auto& l = layer();
  Lock lock(l.mutex);
  l.hazards.clear_reports();
}
