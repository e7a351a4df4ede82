// SPDX-License-Identifier: Apache-2.0
// Allocation: which kind of cl_mem stands behind a buffer-backed policy
// (Persistent, MapPerInference), from plain CL_MEM_ALLOC_HOST_PTR to vendor
// host memory.
#pragma once

namespace clzero {

/// How a buffer-backed tensor allocates its one cl_mem. Every kind obeys the
/// same map/unmap rules; they differ in where the memory lives and so in what
/// a map costs (docs/policies.md has the measurements).
class Allocation {
 public:
  /// Which cl_mem stands behind the tensor; the factories below make each.
  enum class Kind {
    /// clCreateBuffer(CL_MEM_ALLOC_HOST_PTR): the driver allocates host-
    /// accessible memory. Zero copy on integrated GPUs and CPUs; on discrete
    /// GPUs a map is a DMA copy.
    alloc_host_ptr,
    /// clCreateBuffer(CL_MEM_USE_HOST_PTR) over page-aligned memory the tensor
    /// owns (size rounded up to 64 bytes). The only kind whose mapped pointer
    /// the spec promises to be stable (it is the host pointer).
    use_host_ptr,
    /// NVIDIA cl_nv_create_buffer with CL_MEM_LOCATION_HOST_NV |
    /// CL_MEM_PINNED_NV: pinned host memory the GPU reads and writes over the
    /// bus, the OpenCL counterpart of cudaHostAllocMapped.
    nv_host_pinned,
    /// Arm cl_arm_import_memory (CL_IMPORT_TYPE_HOST_ARM) over page-aligned
    /// memory the tensor owns: Mali maps it into the GPU's page tables.
    arm_import_host,
    /// Qualcomm cl_qcom_ext_host_ptr: CL_MEM_USE_HOST_PTR |
    /// CL_MEM_EXT_HOST_PTR_QCOM over a descriptor the engine provides
    /// (cl_mem_ion_host_ptr, cl_mem_dmabuf_host_ptr, ...), which must outlive
    /// the tensor and cover its size plus CL_DEVICE_EXT_MEM_PADDING_IN_BYTES_QCOM.
    qcom_ext_host_ptr,
  };

  /// Allocation::alloc_host_ptr(), the one kind every device offers.
  constexpr Allocation() noexcept = default;
  /// Kind::alloc_host_ptr: clCreateBuffer with CL_MEM_ALLOC_HOST_PTR.
  static constexpr Allocation alloc_host_ptr() noexcept { return Allocation(Kind::alloc_host_ptr); }
  /// Kind::use_host_ptr: clCreateBuffer with CL_MEM_USE_HOST_PTR over memory the tensor owns.
  static constexpr Allocation use_host_ptr() noexcept { return Allocation(Kind::use_host_ptr); }
  /// Kind::nv_host_pinned: pinned host memory through cl_nv_create_buffer (NVIDIA).
  static constexpr Allocation nv_host_pinned() noexcept { return Allocation(Kind::nv_host_pinned); }
  /// Kind::arm_import_host: host memory imported with cl_arm_import_memory (Arm Mali).
  static constexpr Allocation arm_import_host() noexcept { return Allocation(Kind::arm_import_host); }
  /// `descriptor` points at the engine's cl_mem_ext_host_ptr-derived struct.
  static constexpr Allocation qcom_ext_host_ptr(void* descriptor) noexcept {
    Allocation a(Kind::qcom_ext_host_ptr);
    a.qcom_descriptor_ = descriptor;
    return a;
  }

  /// Which kind this is.
  constexpr Kind kind() const noexcept { return kind_; }
  /// The descriptor given to qcom_ext_host_ptr(), or null for every other kind.
  constexpr void* qcom_descriptor() const noexcept { return qcom_descriptor_; }

  /// The kind's name ("alloc_host_ptr", ...), for messages and Choice::label().
  constexpr const char* name() const noexcept {
    switch (kind_) {
      case Kind::alloc_host_ptr: return "alloc_host_ptr";
      case Kind::use_host_ptr: return "use_host_ptr";
      case Kind::nv_host_pinned: return "nv_host_pinned";
      case Kind::arm_import_host: return "arm_import_host";
      case Kind::qcom_ext_host_ptr: return "qcom_ext_host_ptr";
    }
    return "unknown";
  }

 private:
  constexpr explicit Allocation(Kind k) noexcept : kind_(k) {}
  Kind kind_ = Kind::alloc_host_ptr;
  void* qcom_descriptor_ = nullptr;
};

}  // namespace clzero
