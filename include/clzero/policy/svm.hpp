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

class Svm {
 public:
  enum class Grain {
    best,    ///< fine-grained where the device has it, else coarse-grained
    fine,    ///< fine-grained buffer SVM, or an error
    coarse,  ///< coarse-grained buffer SVM, or an error
  };
  struct Options {
    Grain grain = Grain::best;
  };
  static constexpr const char* name = "Svm";

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

  bool fine_grained() const noexcept { return fine_ != nullptr; }

  void to_device(Access a, bool wrote, EventList& waits) {
    fine_ ? fine_->to_device(a, wrote, waits) : coarse_->to_device(a, wrote, waits);
  }
  void to_host(Access a, EventList& used_by) { fine_ ? fine_->to_host(a, used_by) : coarse_->to_host(a, used_by); }
  void* host_pointer() { return fine_ ? fine_->host_pointer() : coarse_->host_pointer(); }
  bool end_host(bool wrote) noexcept { return fine_ ? fine_->end_host(wrote) : coarse_->end_host(wrote); }
  bool host_ready() const { return fine_ ? fine_->host_ready() : coarse_->host_ready(); }
  bool needs_events() const noexcept { return fine_ ? fine_->needs_events() : coarse_->needs_events(); }
  void keep_memory() noexcept { fine_ ? fine_->keep_memory() : coarse_->keep_memory(); }
  void bind(cl_kernel kernel, cl_uint index, std::size_t offset) const {
    fine_ ? fine_->bind(kernel, index, offset) : coarse_->bind(kernel, index, offset);
  }
  cl_mem buffer() const noexcept { return nullptr; }
  void* svm_pointer() const noexcept { return fine_ ? fine_->svm_pointer() : coarse_->svm_pointer(); }
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
