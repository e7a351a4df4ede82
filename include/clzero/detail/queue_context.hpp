// SPDX-License-Identifier: Apache-2.0
// QueueContext: the engine's context and queue as one tensor keeps them
// (retained), checked to belong together, with the facts clzero needs.
#pragma once

#include <CL/cl.h>

#include <string>

#include "clzero/detail/wait_method.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/handle.hpp"

namespace clzero {
namespace detail {

/// Driver workaround. NVIDIA H200, NVIDIA OpenCL 3.0 driver 580.159.04: a
/// non-blocking map for writing only (CL_MAP_WRITE_INVALIDATE_REGION, which
/// moves no data) reports CL_COMPLETE before the kernel it follows has
/// finished, whether that kernel is in its wait list or only before it on
/// the in-order queue. On a loaded GPU (seven processes) it did so in about
/// half of 3000 iterations for ALLOC_HOST_PTR, USE_HOST_PTR and host-located
/// buffers alike, and the host's next input then reached the running kernel:
/// in 5 and 10 of 3000 iterations over ALLOC_HOST_PTR, in every early one
/// over host-located memory. A blocking map was never early (0 of 3000 in
/// every process), nor a map for reading over ALLOC_HOST_PTR or USE_HOST_PTR
/// (tools/device/nv_quirks.cpp "war" and "read", docs/drivers.md). Keyed on
/// the device's vendor ID (0x10DE, NVIDIA's PCI ID), as the driver is.
constexpr bool maps_complete_early_for_writes(cl_uint vendor_id) noexcept { return vendor_id == 0x10DE; }

/// Whether a map with `flags` writes only: the host's next input, whose map
/// need not wait for any data (see maps_complete_early_for_writes).
constexpr bool writes_only(cl_map_flags flags) noexcept { return (flags & CL_MAP_READ) == 0; }

struct QueueContext {
  ContextHandle context;
  QueueHandle queue;
  cl_device_id device = nullptr;
  cl_platform_id platform = nullptr;
  bool out_of_order = false;
  // Host views poll events before blocking (measured per device:
  // detail/wait_method.hpp), as long as the tensor's last wait took.
  HostWait host_wait;
  // Host views of mapped-at-rest tensors map (blocking) when they open rather
  // than right after the kernels (measured per device; never in a TensorRing,
  // whose views must not wait for the later inferences on the queue).
  bool map_at_view = false;
  bool svm_map_at_view = false;  // the same for coarse-grained SVM, measured on its own
  bool in_ring = false;  // a TensorRing's slot: mapped-at-rest policies map right after the kernels
  // Maps for writing only (an input's write view) are blocking: NVIDIA's
  // driver 580 completes a non-blocking one before the commands it follows
  // (maps_complete_early_for_writes).
  bool write_maps_block = false;
  cl_ulong max_alloc = 0;

  /// Retains `context` and `queue` after checking that both are valid and
  /// that the queue belongs to the context. A null context means "the
  /// queue's own".
  static QueueContext make(cl_context context, cl_command_queue queue, const char* doing) {
    if (queue == nullptr) raise_invalid(doing, "the cl_command_queue is null; pass the engine's queue");
    cl_context queue_context = nullptr;
    check(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof queue_context, &queue_context, nullptr),
          "clGetCommandQueueInfo", doing);
    if (context == nullptr) context = queue_context;
    if (context != queue_context)
      raise_invalid(doing,
                    "the command queue belongs to another cl_context than the one given; create the tensor "
                    "with the context the queue was created in");
    QueueContext q;
    q.context = ContextHandle::retain(context);
    q.queue = QueueHandle::retain(queue);
    check(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof q.device, &q.device, nullptr), "clGetCommandQueueInfo",
          doing);
    cl_command_queue_properties props = 0;
    check(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr), "clGetCommandQueueInfo",
          doing);
    q.out_of_order = (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
    check(clGetDeviceInfo(q.device, CL_DEVICE_PLATFORM, sizeof q.platform, &q.platform, nullptr), "clGetDeviceInfo",
          doing);
    check(clGetDeviceInfo(q.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof q.max_alloc, &q.max_alloc, nullptr),
          "clGetDeviceInfo", doing);
    cl_uint vendor = 0;
    check(clGetDeviceInfo(q.device, CL_DEVICE_VENDOR_ID, sizeof vendor, &vendor, nullptr), "clGetDeviceInfo", doing);
    q.write_maps_block = maps_complete_early_for_writes(vendor);
    const WaitMethod wait = wait_method(q.ctx(), q.device);
    q.host_wait.poll = wait.poll;
    q.host_wait.block_after_ns = static_cast<long long>(wait.block_after_us * 1000.0);
    q.host_wait.idle_block = wait.poll && wait.idle_block;
    q.host_wait.idle_learn = wait.poll && wait.idle_learn;
    q.map_at_view = wait.map_at_view;
    q.svm_map_at_view = wait.svm_map_at_view;
    return q;
  }

  cl_command_queue q() const noexcept { return queue.get(); }
  cl_context ctx() const noexcept { return context.get(); }
};

}  // namespace detail
}  // namespace clzero
