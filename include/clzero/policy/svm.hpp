// SPDX-License-Identifier: Apache-2.0
// policy::Svm: Shared Virtual Memory (OpenCL 2.0+, optional in 3.0).
//   fine-grained buffer SVM   the Coherent protocol: no map, visibility at
//                             event completion. Real zero copy by the spec.
//   coarse-grained buffer SVM the Persistent protocol with clEnqueueSVMMap /
//                             clEnqueueSVMUnmap: same rules as buffers.
// Kernels take the SVM pointer (clSetKernelArgSVMPointer), hidden behind bind().
#pragma once

#include <CL/cl.h>

#if defined(CL_VERSION_2_0)

#include <memory>
#include <string>

#include "clzero/detail/coherent_protocol.hpp"
#include "clzero/detail/queue_context.hpp"
#include "clzero/detail/svm_storage.hpp"
#include "clzero/device_caps.hpp"
#include "clzero/error.hpp"
#include "clzero/policy/persistent.hpp"

namespace clzero {
namespace policy {

/// Shared Virtual Memory (clSVMAlloc, OpenCL 2.0+). Fine-grained buffers need no map:
/// the host sees the data once the kernels' events complete. Coarse-grained buffers
/// keep Persistent's protocol with clEnqueueSVMMap / clEnqueueSVMUnmap.
class Svm {
 public:
  /// Which kind of buffer SVM to allocate.
  enum class Grain {
    best,    ///< fine-grained where the device has it, else coarse-grained
    fine,    ///< fine-grained buffer SVM, or an error
    coarse,  ///< coarse-grained buffer SVM, or an error
  };
  /// Svm's options, given to the tensor's constructor (policy protocol, docs/api.md).
  struct Options {
    /// Which kind of buffer SVM; an unsupported one fails with ErrorKind::unsupported.
    Grain grain = Grain::best;
  };
  /// The policy's name in messages (policy protocol, docs/api.md).
  static constexpr const char* name = "Svm";

  /// The allocate step (policy protocol, docs/api.md): picks the grain from CL_DEVICE_SVM_CAPABILITIES, allocates.
  Svm(const detail::QueueContext& q, std::size_t bytes, Intent intent, const Options& options) {
    const DeviceCaps caps = DeviceCaps::query(q.device);
    const bool fine = options.grain == Grain::fine || (options.grain == Grain::best && caps.svm_fine_grain_buffer);
    if (fine && !caps.svm_fine_grain_buffer) unsupported(caps, "fine-grained buffer SVM");
    if (!fine && !caps.svm_coarse_grain_buffer) unsupported(caps, "coarse-grained buffer SVM");
    if (fine)
      fine_.reset(new detail::Coherent<detail::SvmStorage>(q, "Svm (fine-grained)", bytes, true,
                                                           "Svm: allocating fine-grained SVM"));
    else
      coarse_.reset(new detail::MappedAtRest<detail::SvmStorage>(q, intent, "Svm (coarse-grained)", false, bytes, false,
                                                                 "Svm: allocating coarse-grained SVM"));
  }

  /// Whether the allocation is fine-grained (no map) rather than coarse-grained.
  bool fine_grained() const noexcept { return fine_ != nullptr; }

  /// To device (policy protocol, docs/api.md): no command (fine), or clEnqueueSVMUnmap (coarse).
  void to_device(Access a, bool wrote, EventList& waits) {
    fine_ ? fine_->to_device(a, wrote, waits) : coarse_->to_device(a, wrote, waits);
  }
  /// To host (policy protocol, docs/api.md): keeps the events (fine), or clEnqueueSVMMap after them (coarse).
  void to_host(Access a, EventList& used_by) { fine_ ? fine_->to_host(a, used_by) : coarse_->to_host(a, used_by); }
  /// Host view (policy protocol, docs/api.md): waits for the events (fine) or the map (coarse).
  void* host_pointer(bool overwrite_all) {
    return fine_ ? fine_->host_pointer(overwrite_all) : coarse_->host_pointer(overwrite_all);
  }
  /// View ended (policy protocol, docs/api.md): nothing to do for either grain.
  bool end_host(bool wrote) noexcept { return fine_ ? fine_->end_host(wrote) : coarse_->end_host(wrote); }
  /// Whether a view would open without blocking (policy protocol, docs/api.md).
  bool host_ready() const { return fine_ ? fine_->host_ready() : coarse_->host_ready(); }
  /// Query (policy protocol, docs/api.md): coarse grain may leave its map to the view.
  bool host_side_deferred() const noexcept { return coarse_ && coarse_->host_side_deferred(); }
  /// Query (policy protocol, docs/api.md): coarse grain's unmap on an in-order queue has no event.
  bool device_side_unrecorded() const noexcept { return coarse_ && coarse_->device_side_unrecorded(); }
  /// Starts a map left to the view without blocking (policy protocol, docs/api.md).
  void start_host() {
    if (coarse_) coarse_->start_host();
  }
  /// Query (policy protocol, docs/api.md): fine grain waits on the access's events themselves.
  bool needs_events() const noexcept { return fine_ ? fine_->needs_events() : coarse_->needs_events(); }
  /// Leave the SVM allocated at release: kernels may still use it (policy protocol, docs/api.md).
  void keep_memory() noexcept { fine_ ? fine_->keep_memory() : coarse_->keep_memory(); }
  /// Sets the SVM pointer as a kernel argument, clSetKernelArgSVMPointer (policy protocol, docs/api.md).
  void bind(cl_kernel kernel, cl_uint index, std::size_t offset, const char* doing = nullptr) const {
    fine_ ? fine_->bind(kernel, index, offset, doing) : coarse_->bind(kernel, index, offset, doing);
  }
  /// Null: SVM has no cl_mem (policy protocol, docs/api.md).
  cl_mem buffer() const noexcept { return nullptr; }
  /// The SVM pointer kernels take (policy protocol, docs/api.md).
  void* svm_pointer() const noexcept { return fine_ ? fine_->svm_pointer() : coarse_->svm_pointer(); }
  /// A one-line description, for logs (policy protocol, docs/api.md).
  std::string describe() const { return fine_ ? "Svm (fine-grained buffer)" : "Svm (coarse-grained buffer)"; }

 private:
  [[noreturn]] static void unsupported(const DeviceCaps& caps, const char* what) {
    detail::raise(Error(ErrorKind::unsupported, "Svm: choosing the kind of SVM",
                        "device \"" + caps.name + "\" (" + caps.platform_name + ", " + caps.device_version +
                            ") does not offer " + what + " (CL_DEVICE_SVM_CAPABILITIES); use policy::Auto"));
  }

  std::unique_ptr<detail::Coherent<detail::SvmStorage>> fine_;
  std::unique_ptr<detail::MappedAtRest<detail::SvmStorage>> coarse_;
};

}  // namespace policy
}  // namespace clzero

#endif  // CL_VERSION_2_0
